// MPI for the weft executable (built when CMake finds MPI; docs/SCALING.md).
#pragma once

#include "apps/ranks.h"

namespace weft {

/// MPI for the life of main(): when a launcher started this process as one of several ranks,
/// initializes MPI and installs the MPI ranks (apps/ranks.h); finalizes at the end. Started
/// without a launcher (or as its only rank), it does nothing and weft runs as one process.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool active_ = false;
};

}  // namespace weft
