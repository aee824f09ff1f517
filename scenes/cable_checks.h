// Final checks shared by the cable scenes (scenes_spec §5–§8): each looks at the bodies of a run's
// final state (RigidCheckInput) and says, as every CheckResult does, what it measured and against
// which limit. The reference's test_final checks are per scene (the scene files combine these with
// their own); every cable scene also adds the two integrity checks at the bottom, which the
// reference does not make but which catch a solver that tears a rod apart or lets capsules sink
// into each other while staying finite and in bounds: in every frame when the run records them
// (CableIntegrityRecord), else in the final state.
// A body's position here is its ORIGIN (pose.p), as the reference's body_q; for the rod capsules
// (body_frame_origin "com") that is also the centre of mass.
#pragma once

#include <span>
#include <vector>

#include "scenes/scene.h"
#include "solver/cable_builder.h"

namespace weft {

/// The integrity limits of the cable scenes, held in every frame of a run: no capsule pair deeper
/// than kOverlapFraction of the smaller radius, and each joint's anchor gap below
/// kJointGapFraction of its reference length (a scene whose load stretches its joints further
/// states its own limit; docs/CABLES.md says how they were chosen).
inline constexpr float kOverlapFraction = 0.25f;
inline constexpr float kJointGapFraction = 0.02f;

/// Every frame's largest joint gap and deepest capsule overlap of a run: record() after each frame
/// (weft run and the scene tests do), and the integrity checks judge every frame.
struct CableIntegrityRecord {
  std::vector<JointGap> gaps;            // per recorded frame (frame firstFrame + index)
  std::vector<CapsuleOverlap> overlaps;  // per recorded frame, allowance kOverlapFraction
  long long firstFrame = -1;             // the frame of gaps[0] (frames are recorded in order)

  void record(const RigidDesc& desc, std::span<const Transform> poses, long long frame);
  /// Per frame: the largest gap over its joint's reference length (NaN: non-finite anchors), and
  /// the deepest pair's overlap over its smaller radius (negative: apart; NaN: no pair close
  /// enough to measure, or non-finite capsules).
  std::vector<float> gapFractions() const;
  std::vector<float> overlapFractions() const;
};

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
/// reference length (for a ROD joint, the mean length of its two segments), in the final state or,
/// with in.everyFrame, in every recorded frame from `fromFrame` on. Joints whose anchors are not
/// finite fail the check.
CheckResult checkJointsNotTorn(const RigidCheckInput& in, float fraction, long long fromFrame = 0);

/// No deep interpenetration: no unfiltered capsule pair overlaps by more than
/// toleranceFraction · (the smaller radius) (deepestCapsuleOverlap), in the final state or, with
/// in.everyFrame, in every recorded frame from `fromFrame` on.
CheckResult checkNoDeepInterpenetration(const RigidCheckInput& in, float toleranceFraction,
                                        long long fromFrame = 0);

/// The two integrity checks every cable scene adds: joints within `jointGapFraction` of their
/// reference length, capsule pairs within `overlapFraction` of the smaller radius. With a
/// per-frame record, `fromFrame` > 0 judges only the frames from it on (the other frames are the
/// scene's own business: cable_pile's drop).
struct IntegrityLimits {
  float jointGap = kJointGapFraction;
  float overlap = kOverlapFraction;
  long long fromFrame = 0;
};
std::vector<CheckResult> cableIntegrityChecks(const RigidCheckInput& in,
                                              const IntegrityLimits& limits = {});

/// The bodies of each cable: the groups of jointedBodyGroups with at least two bodies (so a lone
/// body, such as a kinematic obstacle, is no cable), each ascending by id, which for a rod built
/// by addRod is the order along the rod.
std::vector<std::vector<int>> cableBodies(const RigidDesc& desc);

}  // namespace weft
