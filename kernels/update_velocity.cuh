// update_velocity: v_{n+1} = (x_{n+1} − x_n)/dt (implicit Euler; cloth_vbd_spec §5.2), and the
// end of the substep: item 0 advances the substep counter that update_kinematics reads. This is
// the last launch of a substep and nothing in it reads the counter, so no other item races it.
//
// Reads:  positions x_{n+1}, stepStart x_n.   Writes: velocities, substep counter.
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct UpdateVelocity {
  static constexpr KernelId kId = KernelId::update_velocity;

  float invDtSeconds;                  // 1/dt [1/s]
  const Vec3* __restrict__ positions;  // (numParticles) x_{n+1} [m]
  const Vec3* __restrict__ stepStart;  // (numParticles) x_n [m]
  Vec3* __restrict__ velocities;       // (numParticles) out [m/s]
  long long* __restrict__ substep;     // (1) substeps completed

  WEFT_HD void operator()(int i) const {
    velocities[i] = (positions[i] - stepStart[i]) * invDtSeconds;
    if (i == 0) *substep += 1;
  }
};

}  // namespace weft
