#include "apps/ranks.h"

#include <unistd.h>

#include <cstdlib>

namespace weft {
namespace {

std::unique_ptr<Ranks>& installed() {
  static std::unique_ptr<Ranks> r = std::make_unique<Ranks>();
  return r;
}

/// The first of `names` set in the environment, as a number (`fallback` when none is).
int environmentNumber(std::initializer_list<const char*> names, int fallback) {
  for (const char* name : names)
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return fallback;
}

}  // namespace

std::string Ranks::host() const {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown host";
  return name;
}

std::vector<std::string> Ranks::allGather(const std::string& mine) {
  // Rank 0 gathers, then broadcasts the list as one string of length-prefixed items.
  std::string packed;
  if (rank() == 0 || size() == 1)
    for (const std::string& s : gather(mine)) packed += std::to_string(s.size()) + ":" + s;
  else
    gather(mine);
  packed = broadcast(packed, 0);
  std::vector<std::string> out;
  for (size_t at = 0; at < packed.size();) {
    const size_t colon = packed.find(':', at);
    const size_t length = std::stoul(packed.substr(at, colon - at));
    out.push_back(packed.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  return out;
}

std::string Ranks::describe() const {
  return "rank " + std::to_string(rank()) + " of " + std::to_string(size()) + " (" + host() + ")";
}

Ranks& ranks() {
  return *installed();
}

void installRanks(std::unique_ptr<Ranks> r) {
  installed() = r ? std::move(r) : std::make_unique<Ranks>();
}

WorldSlice worldSliceOf(int worlds, int rank, int size) {
  const long long begin = static_cast<long long>(worlds) * rank / size;
  const long long end = static_cast<long long>(worlds) * (rank + 1) / size;
  return {int(begin), int(end - begin), worlds};
}

int cudaOrdinalOfRank(const Ranks& r, int visibleGpus) {
  return visibleGpus > 0 ? r.localRank() % visibleGpus : 0;
}

LauncherEnvironment launcherEnvironment() {
  LauncherEnvironment e;
  // Open MPI, MPICH/Hydra and PMIx, then Slurm.
  e.size = environmentNumber({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}, 1);
  e.rank = environmentNumber({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}, 0);
  e.localRank = environmentNumber(
      {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK", "SLURM_LOCALID"}, 0);
  return e;
}

}  // namespace weft
