#include <iostream>

#include "apps/commands.h"
#include "apps/ranks.h"
#if defined(WEFT_WITH_MPI)
#include "apps/mpi_ranks.h"
#endif

int main(int argc, char** argv) {
#if defined(WEFT_WITH_MPI)
  const weft::MpiSession mpi(argc, argv);
#else
  // Started as one of several ranks by mpirun, but built without MPI: every rank would run the
  // whole batch on its own. Refuse (rank 0 says why).
  if (const weft::LauncherEnvironment e = weft::launcherEnvironment(); e.size > 1) {
    if (e.rank == 0)
      std::cerr << "weft: started as one of " << e.size
                << " ranks, but this weft was built without MPI (install Open MPI, e.g. "
                   "`apt-get install libopenmpi-dev openmpi-bin`, and configure again; "
                   "docs/SCALING.md)\n";
    return weft::kExitError;
  }
#endif
  return weft::runCli(argc, argv, std::cout, std::cerr);
}
