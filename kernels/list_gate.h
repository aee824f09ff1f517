// ListGate: which self-contact lists a detection builds again, decided on the device (kept lists,
// SelfContactDetectorSettings::reuseSlack; kernels/self_contact_detection.cuh).
//
// measure_list_drift raises world w's flag when one of w's particles moved farther than the slack
// since w's lists were found; every detection kernel then works only on the primitives of worlds
// whose flag is raised, and returns at once for the others. One flag without worlds; one per
// world in a batch (ModelDesc::worldRanges), so that each world keeps or rebuilds its lists
// exactly when it would alone. A default gate (no flags) builds everything.
#pragma once

#include "kernels/runtime/platform.h"

namespace weft {

struct ListGate {
  const int* __restrict__ stale = nullptr;   // (worlds) 1: build world w's lists again; or null
  const int* __restrict__ worlds = nullptr;  // (numParticles) world of each particle, or null
                                             // (every primitive reads flag 0)

  /// Whether the lists of the primitive that has `particle` as a vertex are built again.
  WEFT_HD bool builds(int particle) const {
    return !stale || stale[worlds ? worlds[particle] : 0] != 0;
  }
};

}  // namespace weft
