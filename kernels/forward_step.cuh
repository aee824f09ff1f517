// forward_step: the inertial target y and the initial guess of a substep (VBD, Chen et al. 2024,
// §3: y = x_n + dt·v_n + dt²·g; reference forward_step, cloth_vbd_spec §5.1).
//
// Reads:  positions x_n, velocities v_n, inverse masses, gravity.
// Writes: stepStart := x_n (damping/friction anchor and base of the velocity update),
//         inertia := y, displacements Δ := v'·dt (the initial guess is y; truncation writes x).
// Held particles (inverse mass 0) get y = x_n and Δ = 0. No external forces, no adaptive
// initialization, no velocity clamp (as the reference).
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct ForwardStep {
  static constexpr KernelId kId = KernelId::forward_step;

  float dtSeconds;
  Vec3 gravity;                         // [m/s²]
  const Vec3* __restrict__ positions;   // (numParticles) x_n [m]
  const Vec3* __restrict__ velocities;  // (numParticles) v_n [m/s]
  const float* __restrict__ invMasses;  // (numParticles) [1/kg]
  Vec3* __restrict__ stepStart;         // (numParticles) out: x_n
  Vec3* __restrict__ inertia;           // (numParticles) out: y
  Vec3* __restrict__ displacements;     // (numParticles) out: Δ

  WEFT_HD void operator()(int i) const {
    const Vec3 x = positions[i];
    stepStart[i] = x;
    if (invMasses[i] == 0.0f) {
      inertia[i] = x;
      displacements[i] = Vec3{};
      return;
    }
    const Vec3 v = velocities[i] + gravity * dtSeconds;
    inertia[i] = x + v * dtSeconds;
    displacements[i] = v * dtSeconds;
  }
};

}  // namespace weft
