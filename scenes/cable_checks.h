// Final checks shared by the cable scenes (scenes_spec §5–§8): each looks at the bodies of a run's
// final state (RigidCheckInput) and says, as every CheckResult does, what it measured and against
// which limit. The reference's test_final checks are per scene (the scene files combine these with
// their own); every cable scene also adds the two integrity checks at the bottom, which the
// reference does not make but which catch a solver that tears a rod apart or lets capsules sink
// into each other while staying finite and in bounds.
// A body's position here is its ORIGIN (pose.p), as the reference's body_q; for the rod capsules
// (body_frame_origin "com") that is also the centre of mass.
#pragma once

#include <vector>

#include "scenes/scene.h"

namespace weft {

/// Every body pose (position and quaternion) and velocity (linear and angular) is finite: the
/// reference's NaN scan of the state after a test run.
CheckResult checkBodiesFinite(const RigidCheckInput& in);

/// Every position component |x_i| < maxPosition [m] and every linear and angular velocity
/// component < maxVelocity [m/s, rad/s] (the reference's `(np.abs(body_qd) < 5e2).all()`, whose
/// six components are linear and angular). Strict, as the reference.
CheckResult checkBodiesBounded(const RigidCheckInput& in, float maxPosition, float maxVelocity);

/// Every body velocity component (linear and angular) below maxVelocity, with no position bound
/// (cable_pile's test_final).
CheckResult checkBodyVelocities(const RigidCheckInput& in, float maxVelocity);

/// The lowest body origin is above minZ [m] (strict: the reference's `min_z > -tolerance`).
CheckResult checkLowestBody(const RigidCheckInput& in, float minZ);

/// Joints not torn: the largest anchor gap (largestJointGap) is below `fraction` of that joint's
/// reference length (for a ROD joint, the mean length of its two segments). Joints whose anchors
/// are not finite fail the check.
CheckResult checkJointsNotTorn(const RigidCheckInput& in, float fraction);

/// No deep interpenetration: no unfiltered capsule pair overlaps by more than
/// toleranceFraction · (the smaller radius) (deepestCapsuleOverlap).
CheckResult checkNoDeepInterpenetration(const RigidCheckInput& in, float toleranceFraction);

/// The two integrity checks every cable scene adds: joints not torn (gap < 10% of the reference
/// length) and no capsule pair deeper than half the smaller radius.
std::vector<CheckResult> cableIntegrityChecks(const RigidCheckInput& in);

/// The bodies of each cable: the groups of jointedBodyGroups with at least two bodies (so a lone
/// body, such as a kinematic obstacle, is no cable), each ascending by id, which for a rod built
/// by addRod is the order along the rod.
std::vector<std::vector<int>> cableBodies(const RigidDesc& desc);

}  // namespace weft
