// The processes of one run (docs/SCALING.md): one process normally, or the ranks of an `mpirun`
// (one per GPU), each simulating a contiguous range of a batch's worlds. The commands see them
// only through this interface, so the library, the tests and the Python module need no MPI; the
// weft executable installs an MPI implementation (apps/mpi_ranks.cpp) when it was built with
// MPI and started by a launcher.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace weft {

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  /// This rank's index among the ranks of its machine (which GPU it takes).
  virtual int localRank() const { return 0; }
  /// The machine this rank runs on.
  virtual std::string host() const;
  /// Every rank's `mine`, in rank order, on rank 0 (an empty list on the others). Collective:
  /// every rank must call it.
  virtual std::vector<std::string> gather(const std::string& mine) { return {mine}; }
  /// Rank `root`'s `value` on every rank. Collective.
  virtual std::string broadcast(const std::string& value, int /*root*/) { return value; }
  /// Every rank's `mine`, in rank order, on every rank. Collective.
  std::vector<std::string> allGather(const std::string& mine);
  /// Waits for every rank. Collective.
  virtual void barrier() {}
  bool several() const { return size() > 1; }
  /// "rank 1 of 4 (host)".
  std::string describe() const;
};

/// The process's ranks: one process unless installRanks() replaced it.
Ranks& ranks();
/// Makes `r` the process's ranks (the executable's main(), under mpirun).
void installRanks(std::unique_ptr<Ranks> r);

/// The contiguous range of a batch's `worlds` that rank `rank` of `size` simulates: the first
/// world and how many (worlds · rank / size up to worlds · (rank + 1) / size).
struct WorldSlice {
  int first = 0;
  int count = 0;
  int total = 0;  // worlds of the whole batch
};
WorldSlice worldSliceOf(int worlds, int rank, int size);

/// The CUDA device a rank opens: its local rank modulo the GPUs it sees (0 for one process).
int cudaOrdinalOfRank(const Ranks& r, int visibleGpus);

/// What a launcher (mpirun, srun) tells a process in its environment: the world size (1 when
/// none started it), its rank and its local rank. For executables without MPI, which must refuse
/// to run as one of several ranks.
struct LauncherEnvironment {
  int size = 1, rank = 0, localRank = 0;
};
LauncherEnvironment launcherEnvironment();

}  // namespace weft
