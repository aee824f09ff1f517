// The ranks of an mpirun (apps/ranks.h) over MPI, for the weft executable built with MPI.
// Only strings cross ranks: each command serializes what it gathers (JSON), so a collective is a
// length exchange and one variable-size transfer.
#include "apps/mpi_ranks.h"

#include <mpi.h>

#include <stdexcept>

namespace weft {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string("MPI ") + what + " failed: " + text);
}

class MpiRanks final : public Ranks {
 public:
  MpiRanks() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "Comm_size");
    // The ranks that share this machine's memory, in rank order: the local rank picks the GPU.
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "Comm_split_type");
    check(MPI_Comm_rank(local, &localRank_), "Comm_rank");
    MPI_Comm_free(&local);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  std::string host() const override {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    return std::string(name, size_t(length));
  }
  std::vector<std::string> gather(const std::string& mine) override {
    int length = int(mine.size());
    std::vector<int> lengths(rank_ == 0 ? size_t(size_) : 0), offsets;
    check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "Gather");
    std::string all;
    if (rank_ == 0) {
      offsets.assign(size_t(size_), 0);
      for (int r = 1; r < size_; ++r)
        offsets[size_t(r)] = offsets[size_t(r) - 1] + lengths[size_t(r) - 1];
      all.resize(size_t(offsets.back() + lengths.back()));
    }
    check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                      MPI_CHAR, 0, MPI_COMM_WORLD),
          "Gatherv");
    std::vector<std::string> out;
    for (int r = 0; rank_ == 0 && r < size_; ++r)
      out.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(lengths[size_t(r)])));
    return out;
  }
  std::string broadcast(const std::string& value, int root) override {
    long long length = static_cast<long long>(value.size());
    check(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), "Bcast");
    std::string out = rank_ == root ? value : std::string(size_t(length), '\0');
    check(MPI_Bcast(out.data(), int(length), MPI_CHAR, root, MPI_COMM_WORLD), "Bcast");
    return out;
  }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "Barrier"); }

 private:
  int rank_ = 0, size_ = 1, localRank_ = 0;
};

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  if (launcherEnvironment().size <= 1) return;  // not started by a launcher: one process, no MPI
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "Init");
  active_ = true;
  installRanks(std::make_unique<MpiRanks>());
}

MpiSession::~MpiSession() {
  if (!active_) return;
  installRanks(nullptr);
  MPI_Finalize();
}

}  // namespace weft
