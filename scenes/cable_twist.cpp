// cable_twist: the reference's cable_twist (scenes_spec §5, Newton example_cable_twist.py). Three
// zigzag cables lie on the ground; the first capsule of each spins about its own axis at
// 0.5 rad/s for ever, and the twist propagates along the cable through three 90° turns. The
// cables differ only in their bend and twist stiffness (1e2, 1e3, 1e4 N·m/rad), so the same twist
// travels differently far.
//
// Counts: 192 bodies (3 kinematic), 189 ROD joints, 193 shapes (192 capsules + the ground).
// Units m, kg, s; gravity (0, 0, −9.81).
// Settings, all the reference's: 60 fps, 10 substeps (dt = 1/600 s), 5 iterations, contacts
// generated on substep 0 of each frame only (update_step_interval 10). Cable i = 0, 1, 2 starts at
// (−1.6, 3(i − 1), 0.02) and runs 16 segments of 0.1 m along +y, +x, −y, +x (64 in all, 6.4 m),
// radius 0.02, density 1000 (capsule mass 0.159174 kg), parallel-transport frames (segment 0:
// q = (−0.7071, 0, 0, 0.7071)). ROD joints: stretch = shear = 1e6 N/m, undamped; bend = twist =
// k = 1e2, 1e3, 1e4 N·m/rad, bend and twist damping 0.01·k. Every shape (capsules and the ground
// plane z = 0) has ke 1e6, kd 0, mu 0.5 and gap 0.1 m, so pairs within 0.2 m get speculative
// contacts. Coloring by joints with balancing (the reference's color()).
// Body 0 of each cable is kinematic (mass and inertia 0) and turns about its world capsule axis
// a = R(q₀)·ẑ through its centre: Linear motion with angular velocity 0.5·a, i.e.
// q(t) = R(a, 0.5t)·q₀ = q₀·R_z(0.5t). The reference rotates it by 0.5·dt before each substep's
// solve, so at the end of substep k it has turned 0.5·k·dt, which is what the solver's end-of-
// substep evaluation gives: the same motion exactly.
//
// Final checks: the reference's test_final (finite; |position| < 1e3 and |velocity| < 5e2
// component-wise; jointed body centres < 0.11 m apart; lowest body z > −0.5 m), plus joints not
// torn and no deep capsule interpenetration (cable_checks.h).
//
// Differences from the reference: none in the model. Its contact buffers are fixed (64 per body);
// ours are one pool of contact rows (at first max(256, 4 per shape)) that grows on demand. And
// the sweeps are Chebyshev-accelerated (kCableSceneChebyshevRho, ρ 0.7;
// `--chebyshev-rho 0` gives the reference's plain sweeps; docs/CONVERGENCE.md).
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"

namespace weft {
namespace {

constexpr int kCables = 3;
constexpr int kSegments = 64;
constexpr int kSegmentsPerLeg = 16;
constexpr float kSegmentLength = 0.1f;                               // [m]
constexpr float kRadius = 0.02f;                                     // [m]
constexpr float kCableSpacing = 3.0f;                                // [m] in y
constexpr float kStretchStiffness = 1.0e6f;                          // [N/m] (shear copies it)
constexpr float kBendStiffness[kCables] = {1.0e2f, 1.0e3f, 1.0e4f};  // [N·m/rad]
constexpr float kDampingRatio = 0.01f;  // bend/twist damping = 0.01·k [s]
constexpr float kSpinRate = 0.5f;       // [rad/s]
constexpr ContactMaterial kMaterial{1.0e6f, 0.0f, 0.5f};
constexpr float kGap = 0.1f;                 // [m] per shape (the reference's rigid_gap)
constexpr float kMaxCentreDistance = 0.11f;  // [m] segment length + 10%

/// The zigzag polyline of one cable (65 points, z = start.z): +y, +x, −y, +x legs of 16 segments.
std::vector<Vec3> zigzagPoints(const Vec3& start) {
  std::vector<Vec3> points;
  const float leg = kSegmentsPerLeg * kSegmentLength;
  for (int i = 0; i <= kSegments; ++i) {
    float x = 0.0f, y = 0.0f;
    if (i <= kSegmentsPerLeg) {
      y = float(i) * kSegmentLength;
    } else if (i <= 2 * kSegmentsPerLeg) {
      x = float(i - kSegmentsPerLeg) * kSegmentLength;
      y = leg;
    } else if (i <= 3 * kSegmentsPerLeg) {
      x = leg;
      y = leg - float(i - 2 * kSegmentsPerLeg) * kSegmentLength;
    } else {
      x = leg + float(i - 3 * kSegmentsPerLeg) * kSegmentLength;
    }
    points.push_back(start + Vec3{x, y, 0.0f});
  }
  return points;
}

RigidDesc buildCableTwist(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any option: this scene has none

  CableBuilder builder;
  std::vector<int> spinning;  // (kCables) the first body of each cable
  for (int i = 0; i < kCables; ++i) {
    const float y = float(i - 1) * kCableSpacing;
    const std::vector<Vec3> points =
        zigzagPoints({-0.25f * kSegments * kSegmentLength, y, kRadius});
    RodParams rod;
    rod.name = "cable " + std::to_string(i);
    rod.radius = kRadius;
    rod.density = 1000.0f;
    rod.material = kMaterial;
    rod.gap = kGap;
    rod.stiffness.stretchStiffness = kStretchStiffness;
    rod.stiffness.bendStiffness = kBendStiffness[i];
    rod.stiffness.bendDamping = kDampingRatio * kBendStiffness[i];
    spinning.push_back(builder.addRod(points, {}, rod).bodies.front());
  }

  RigidShapeDesc ground;
  ground.name = "ground";
  ground.body = -1;
  ground.geometry.type = ShapeType::Plane;  // z = 0, normal +z
  ground.material = kMaterial;
  ground.gap = kGap;
  builder.addShape(ground);

  RigidDesc desc = builder.finalize();  // coloring by joints, balanced (the reference's color())

  // The first capsule of each cable: kinematic, spinning about its own world axis.
  for (int b : spinning) {
    BodyDesc& body = desc.bodies[size_t(b)];
    body.mass = 0.0f;
    body.inertia = Mat33{};
    body.kinematic = true;
    body.motion.type = MotionType::Linear;
    body.motion.pose0 = body.pose;
    body.motion.angularVelocity = kSpinRate * rotate(body.pose.q, {0.0f, 0.0f, 1.0f});
  }
  validateRigidDesc(desc);
  return desc;
}

/// Jointed body centres closer than kMaxCentreDistance (the reference's connectivity test, which
/// looks at consecutive bodies of each cable: the two bodies of each ROD joint).
CheckResult checkJointedCentres(const RigidCheckInput& in) {
  float farthest = 0.0f;
  int worst = -1;
  for (int j = 0; j < in.desc.numJoints(); ++j) {
    const JointDesc& joint = in.desc.joints[size_t(j)];
    if (joint.parent < 0) continue;
    const float d = length(in.poses[size_t(joint.child)].p - in.poses[size_t(joint.parent)].p);
    if (!(d <= farthest)) {
      farthest = isFinite(d) ? d : INFINITY;
      worst = j;
    }
  }
  char detail[128];
  std::snprintf(detail, sizeof(detail),
                "largest jointed centre distance %.4g m (joint %d; limit < %.3g m)", farthest,
                worst, kMaxCentreDistance);
  return {"connected", farthest < kMaxCentreDistance, detail};
}

std::vector<CheckResult> checkCableTwist(const RigidCheckInput& in) {
  std::vector<CheckResult> checks = {checkBodiesFinite(in), checkBodiesBounded(in, 1.0e3f, 5.0e2f),
                                     checkJointedCentres(in), checkLowestBody(in, -0.5f)};
  for (CheckResult& c : cableIntegrityChecks(in)) checks.push_back(std::move(c));
  return checks;
}

}  // namespace

Scene makeCableTwistScene() {
  Scene scene;
  scene.name = "cable_twist";
  scene.aliases = {};  // "twist" is cloth_twist's
  scene.description =
      "three zigzag cables on the ground whose first capsules spin at 0.5 rad/s; the twist "
      "propagates through the turns (bend/twist stiffness 1e2, 1e3, 1e4)";
  scene.benchmark = true;       // one of the reference's eight benchmark scenes
  scene.benchWindowFirst = 20;  // weft bench's window, frames [20, 80)
  scene.benchWindowEnd = 80;
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 20;  // the reference's test length
  scene.tuneWindowFrames = 20;
  RigidSolverOptions& o = scene.rigid.solver;
  o.iterations = 5;
  o.chebyshevRho = kCableSceneChebyshevRho;
  o.gravity = {0.0f, 0.0f, -9.81f};
  o.collideInterval = 10;  // contacts on substep 0 of each frame only
  scene.rigid.build = buildCableTwist;
  scene.rigid.checks = checkCableTwist;
  return scene;
}

}  // namespace weft
