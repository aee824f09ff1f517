// update_kinematics: poses of kinematic shapes and positions of driven particles at this
// substep, computed from simulation time on the device (no host round-trip per substep).
//
// Reads:  substep counter (time = substep·dt at the substep's start), shape motions, drivers,
//         driven particles' initial positions.
// Writes: shapePoses (end and start of the substep), positions of driven particles.
// One item per shape, then one per driven particle: item i < numShapes is shape i, the rest are
// driven particles. Deterministic (pure function of time).
#pragma once

#include "kernels/kinematics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct UpdateKinematics {
  static constexpr KernelId kId = KernelId::update_kinematics;

  const long long* __restrict__ substep;  // (1) substeps completed so far
  double dtSeconds;                       // substep length [s]
  int numShapes;
  const ShapeMotion* __restrict__ shapeMotions;  // (numShapes)
  const Transform* __restrict__ motionSamples;   // (numSamples) poses of Sampled motions
  Transform* __restrict__ shapePoses;            // (2 x numShapes): [s] end, [numShapes + s] start
  const int* __restrict__ drivenParticles;       // (numDriven) particle ids
  const int* __restrict__ drivenDriver;          // (numDriven) index into drivers
  const Vec3* __restrict__ drivenInitial;        // (numDriven) positions at t = 0 [m]
  const ParticleDriver* __restrict__ drivers;    // (numDrivers)
  Vec3* __restrict__ positions;                  // (numParticles) [m]

  WEFT_HD void operator()(int i) const {
    const long long k = *substep;
    const float tStart = float(double(k) * dtSeconds);
    const float tEnd = float(double(k + 1) * dtSeconds);
    if (i < numShapes) {
      shapePoses[i] = poseAt(shapeMotions[i], tEnd, motionSamples);
      shapePoses[numShapes + i] = poseAt(shapeMotions[i], tStart, motionSamples);
      return;
    }
    const int j = i - numShapes;
    positions[drivenParticles[j]] =
        drivenPosition(drivers[drivenDriver[j]], drivenInitial[j], tEnd);
  }
};

}  // namespace weft
