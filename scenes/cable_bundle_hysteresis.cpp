// cable_bundle_hysteresis: the reference's cable_bundle_hysteresis (scenes_spec §7, Newton
// example_cable_bundle_hysteresis.py). A bundle of 7 cables is pushed into a zigzag by four
// moving vertical obstacles (load, 1 s), held there (1 s) and released (the obstacles jump 10 m
// up at t = 2 s). Dahl friction on the rods' bend and twist gives the bundle plastic memory: with
// it the released bundle stays bent, without it it springs back straight.
//
// Scene options: segments (per cable, default 40), eps_max (Dahl envelope strain, default 2.0),
// tau (Dahl reversal length [rad], default 0.1), dahl (1 = on, default; 0 = the reference's
// --no-dahl), materials (held, the default, or reference: the contact stiffness below). Dahl is on
// when dahl = 1 and eps_max > 0 and tau > 0, as in the reference. The reference's test runs 20
// frames (this scene's default, before the release: only the generic checks apply); its two
// 150-frame variants are `--frames 150` and `--frames 150
// --scene-option dahl=0`, after which (t ≥ 2.4 s) the bundle's shape is checked too.
// Counts: 7·segments + 4 bodies (284 by default: 280 capsules, then the 4 kinematic obstacles),
// 7·(segments − 1) ROD joints (273), 7·segments + 5 shapes (285: capsules, obstacles, ground).
// The reference also gives each obstacle a free joint; here an unjointed body is free, so the
// obstacles have no joints. Units m, kg, s; gravity (0, 0, −9.81).
// Settings, all the reference's: 60 fps, 10 substeps (dt = 1/600 s), 5 iterations, contacts
// generated on substep 0 of each frame only (update_step_interval 10).
// Cables: 4.0 m along +x from x = −0.5 (segments of 4.0/segments m; q = (0, 0.7071, 0, 0.7071)
// on every segment), radius 0.02, density 1000 (0.159174 kg per 0.1 m capsule), the centre one
// at (y, z) = (0, 0.3) and six around it at radius 0.044 (= 2·0.02·1.1) and angles 0°, 60°, …,
// 300° (offset (0.044 cos θ, 0.044 sin θ) in (y, z)). ROD joints: stretch = shear = 1e5 N/m
// (the reference default), undamped; bend = twist = 1e2 N·m/rad with damping 5; Dahl eps_max and
// tau on every ROD joint when on. Cable shapes: ke 3e5 (the reference's 1e5 with
// materials=reference), kd 10, mu 1.
// Obstacles: body i = 0…3 at (0.5 + 2i/3, ±0.3 (+ for even i), 0.3), identity orientation, one
// vertical capsule of radius 0.05 and half height 0.35 (z ∈ [−0.1, 0.7]); kinematic (mass and
// inertia 0); ke 1e7 (the reference's 2.5e3, the ShapeConfig class default, with
// materials=reference), kd 100, mu 0. Ground plane z = 0: ke
// 2.5e3, kd 100, mu 1. Gap 0.05 m on every shape (rigid_gap), so 0.1 m per pair. Coloring by
// joints with balancing.
// Obstacle motion (y₀ = ±0.3, period 2 s): load, t < 1: y = y₀·tri(t), tri(t) = 2(1 − |2·frac(t/2
// + 0.5) − 1|) − 1, which runs linearly from y₀ to −y₀; hold, 1 ≤ t < 2: y = −y₀; release, t ≥ 2:
// z = 10.3 (y stays −y₀). Sampled motion: a pose every dt = 1/600 s for t ∈ [0, 2 + 2·dt]
// (1203 samples, sample k at t = k/600 exactly), the last held for ever. The solver evaluates it
// at substep boundaries, which are sample times, so the sweep is exact there and the release is
// one jump within one substep (samples 1199 → 1200), as in the reference.
//
// Final checks: finite (the reference's NaN scan), joints not torn and no deep capsule
// interpenetration (cable_checks.h) always; the reference's test_final only when t ≥ 2.4 s (the
// release + 0.4 s), per cable: arc length (the sum of distances between consecutive body
// centres) within [0.8, 1.2] of the rest value, and straightness (end-to-end / arc length) in
// [0.5, 0.9] with Dahl, ≥ 0.9 without.
//
// Differences from the reference:
//   * The obstacles' poses are evaluated by the solver at the END of each substep (t = k·dt for
//     substep k from 1). The reference sets them from a device-side time that it advances after
//     using it, i.e. at the substep's START (t = (k − 1)·dt): our obstacles run one substep
//     (1/600 s, 1 mm of their 0.6 m/s sweep) ahead, and are released one substep earlier.
//   * No free joints on the obstacles (see above); contact rows are one pool (at first max(256,
//     4 per shape)) that grows on demand instead of a fixed buffer of 64 per body.
//   * Stiffer contacts by default (cables 3e5, obstacles 1e7; materials=reference restores 1e5
//     and 2.5e3), so that no capsule pair sinks deeper than a quarter radius in any frame; the
//     joint-gap check allows 12% of a segment (see kJointGapLimit).
//   * The sweeps are Chebyshev-accelerated (kBundleChebyshevRho, ρ 0.5, where the other cable
//     scenes take 0.7; `--chebyshev-rho 0` gives the reference's plain sweeps;
//     docs/CONVERGENCE.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/errors.h"
#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"

namespace weft {
namespace {

constexpr int kCables = 7;
constexpr float kCableLength = 4.0f;                       // [m]
constexpr float kCableRadius = 0.02f;                      // [m]
constexpr float kRingRadius = 2.0f * kCableRadius * 1.1f;  // [m] centre distance to the ring
constexpr Vec3 kBundleStart{-0.5f, 0.0f, 0.3f};            // [m] centre cable's first point
// Contact stiffness: the reference's cables (ke 1e5) and its obstacles, which it makes with a
// fresh ShapeConfig and so the class default ke 2.5e3 (materials=reference), let the bent bundle
// sink into the obstacles and into itself by up to 3.5 cm, 1.8 capsule radii: the contacts are
// compliant (the ALM fixed point is F = k·C), and bending seven cables of 100 N·m/rad per joint
// around a 5 cm obstacle takes kN forces. The default (materials=held) stiffens the cables to 3e5
// and the obstacles, rigid pushers, to 1e7, which keeps every pair within a quarter radius
// (docs/CABLES.md, "Contacts that hold").
constexpr ContactMaterial kCableMaterial{3.0e5f, 10.0f, 1.0f};
constexpr ContactMaterial kReferenceCableMaterial{1.0e5f, 10.0f, 1.0f};
constexpr int kObstacles = 4;
constexpr float kObstacleRadius = 0.05f;      // [m]
constexpr float kObstacleHalfHeight = 0.35f;  // [m] 0.8 m overall − the caps
constexpr float kObstacleAmplitude = 0.3f;    // [m] y₀ = ±0.3
constexpr float kObstacleHeight = 0.3f;       // [m] z of the obstacle centres
constexpr ContactMaterial kObstacleMaterial{1.0e7f, 100.0f, 0.0f};
constexpr ContactMaterial kReferenceObstacleMaterial{2.5e3f, 100.0f, 0.0f};
// The rods' joints keep the reference's stretch/shear stiffness 1e5 N/m; the same kN loads open
// their anchors by up to 9% of a segment while the obstacles press (a segment is 0.1 m), so the
// joint-gap limit here is 12% instead of the other cable scenes' 2%.
constexpr float kJointGapLimit = 0.12f;
constexpr ContactMaterial kGroundMaterial{2.5e3f, 100.0f, 1.0f};
constexpr float kGap = 0.05f;                 // [m] per shape (rigid_gap)
constexpr double kPeriod = 2.0;               // [s] triangle wave
constexpr double kStopSeconds = 1.0;          // [s] load → hold
constexpr double kReleaseSeconds = 2.0;       // [s] hold → release
constexpr float kReleaseLift = 10.0f;         // [m]
constexpr double kSubstepsPerSecond = 600.0;  // 60 fps × 10 substeps
constexpr double kSubstepSeconds = 1.0 / kSubstepsPerSecond;
constexpr double kShapeCheckSeconds = kReleaseSeconds + 0.4;  // test_final's threshold
const std::vector<std::string> kOptions = {"segments", "eps_max", "tau", "dahl", "materials"};

/// Where obstacle `start` (its t = 0 pose) is at time t [s] (the reference's move_obstacles_
/// triwave, in closed form).
Transform obstaclePose(const Transform& start, double t) {
  const double y0 = start.p.y;
  const auto triangle = [](double time) {
    double phase = time / kPeriod + 0.5;
    phase -= std::floor(phase);
    return 2.0 * (1.0 - std::fabs(2.0 * phase - 1.0)) - 1.0;
  };
  Transform pose = start;
  pose.p.y = float(y0 * triangle(std::min(t, kStopSeconds)));
  if (t >= kReleaseSeconds) pose.p.z = start.p.z + kReleaseLift;
  return pose;
}

struct BundleOptions {
  int segments = 40;
  float epsMax = 2.0f, tau = 0.1f;
  bool dahl = true;
  bool referenceMaterials = false;  // materials=reference: the reference's contact stiffness
};

BundleOptions readOptions(const SceneOptions& options) {
  BundleOptions out;
  const double segments = sceneOption(options, "segments", 40, kOptions);
  if (!(segments >= 2.0) || segments != std::floor(segments) || segments > 1.0e5)
    throw Error("scene option segments=" + options.values.at("segments") +
                " must be a whole number from 2 to 100000");
  out.segments = int(segments);
  const double epsMax = sceneOption(options, "eps_max", 2.0, kOptions);
  const double tau = sceneOption(options, "tau", 0.1, kOptions);
  if (epsMax < 0.0) throw Error("scene option eps_max must be >= 0 (0 turns Dahl off)");
  if (tau < 0.0) throw Error("scene option tau must be >= 0 (0 turns Dahl off)");
  const double dahl = sceneOption(options, "dahl", 1, kOptions);
  if (dahl != 0.0 && dahl != 1.0) throw Error("scene option dahl must be 0 (off) or 1 (on)");
  out.epsMax = float(epsMax);
  out.tau = float(tau);
  out.dahl = dahl == 1.0 && epsMax > 0.0 && tau > 0.0;
  if (const auto it = options.values.find("materials"); it != options.values.end()) {
    if (it->second != "held" && it->second != "reference")
      throw Error("scene option materials=" + it->second +
                  " must be held (the default) or reference (the reference's contact stiffness)");
    out.referenceMaterials = it->second == "reference";
  }
  return out;
}

RigidDesc buildBundle(const SceneOptions& options) {
  const BundleOptions settings = readOptions(options);
  CableBuilder builder;

  // Cables: the centre one, then the ring at angles 0°, 60°, …, 300° in the (y, z) plane.
  const Quat alongX = quatFromAxisAngle({0.0f, 1.0f, 0.0f}, 0.5f * std::numbers::pi_v<float>);
  for (int c = 0; c < kCables; ++c) {
    Vec3 start = kBundleStart;
    if (c > 0) {
      const double angle = 2.0 * std::numbers::pi * (c - 1) / (kCables - 1);
      start.y += float(kRingRadius * std::cos(angle));
      start.z += float(kRingRadius * std::sin(angle));
    }
    std::vector<Vec3> points;
    for (int i = 0; i <= settings.segments; ++i)
      points.push_back(start +
                       Vec3{float(double(kCableLength) * i / settings.segments), 0.0f, 0.0f});
    const std::vector<Quat> frames(size_t(settings.segments), alongX);
    RodParams rod;
    rod.name = "bundle cable " + std::to_string(c);
    rod.radius = kCableRadius;
    rod.density = 1000.0f;
    rod.material = settings.referenceMaterials ? kReferenceCableMaterial : kCableMaterial;
    rod.gap = kGap;
    rod.stiffness.stretchStiffness = 1.0e5f;
    rod.stiffness.bendStiffness = 1.0e2f;
    rod.stiffness.bendDamping = 5.0f;
    if (settings.dahl) {
      rod.dahlEpsMax = settings.epsMax;
      rod.dahlTau = settings.tau;
    }
    builder.addRod(points, frames, rod);
  }

  // Obstacles: kinematic bodies with one vertical capsule each, moved by a sampled table.
  // Sample k at t = k/600 s (exact for the release at k = 1200), up to 2 s + 2 substeps.
  const int numSamples = int(std::lround(kReleaseSeconds * kSubstepsPerSecond)) + 3;
  for (int i = 0; i < kObstacles; ++i) {
    BodyDesc body;
    body.name = "obstacle " + std::to_string(i);
    body.pose.p = {0.5f + 2.0f * float(i) / 3.0f,
                   i % 2 == 0 ? kObstacleAmplitude : -kObstacleAmplitude, kObstacleHeight};
    body.kinematic = true;  // mass and inertia 0
    body.motion.type = MotionType::Sampled;
    body.motion.pose0 = body.pose;
    body.motion.sampleInterval = float(kSubstepSeconds);
    body.motion.sampleCount = numSamples;
    for (int k = 0; k < numSamples; ++k)
      body.motionSamples.push_back(obstaclePose(body.pose, k / kSubstepsPerSecond));
    const int id = builder.addBody(body);

    RigidShapeDesc capsule;
    capsule.name = "obstacle " + std::to_string(i) + " capsule";
    capsule.body = id;
    capsule.geometry.type = ShapeType::Capsule;  // axis = body z = world z
    capsule.geometry.radius = kObstacleRadius;
    capsule.geometry.halfHeight = kObstacleHalfHeight;
    capsule.material = settings.referenceMaterials ? kReferenceObstacleMaterial : kObstacleMaterial;
    capsule.gap = kGap;
    builder.addShape(capsule);
  }

  RigidShapeDesc ground;
  ground.name = "ground";
  ground.body = -1;
  ground.geometry.type = ShapeType::Plane;  // z = 0, normal +z
  ground.material = kGroundMaterial;
  ground.gap = kGap;
  builder.addShape(ground);
  return builder.finalize();  // coloring by joints, balanced (the reference's color())
}

/// The reference's test_final after the release: per cable, the arc length through the body
/// centres against its rest value, and the straightness end-to-end / arc length.
std::vector<CheckResult> checkBundleShape(const RigidCheckInput& in) {
  bool dahl = false;
  for (const JointDesc& j : in.desc.joints)
    dahl = dahl || (j.dahlEpsMax > 0.0f && j.dahlTau > 0.0f);
  double minRatio = INFINITY, maxRatio = -INFINITY, minStraight = INFINITY, maxStraight = -INFINITY;
  bool finite = true;
  for (const std::vector<int>& cable : cableBodies(in.desc)) {
    double arc = 0.0, restArc = 0.0;
    for (size_t k = 1; k < cable.size(); ++k) {
      arc += length(in.poses[size_t(cable[k])].p - in.poses[size_t(cable[k - 1])].p);
      restArc += length(in.desc.bodies[size_t(cable[k])].pose.p -
                        in.desc.bodies[size_t(cable[k - 1])].pose.p);
    }
    const double endToEnd =
        length(in.poses[size_t(cable.back())].p - in.poses[size_t(cable.front())].p);
    const double ratio = arc / restArc, straightness = endToEnd / std::max(arc, 1.0e-8);
    finite = finite && std::isfinite(ratio) && std::isfinite(straightness);
    minRatio = std::min(minRatio, ratio);
    maxRatio = std::max(maxRatio, ratio);
    minStraight = std::min(minStraight, straightness);
    maxStraight = std::max(maxStraight, straightness);
  }
  char lengthDetail[160], shapeDetail[160];
  std::snprintf(lengthDetail, sizeof(lengthDetail),
                "arc-length ratios %.4g to %.4g (limits [0.8, 1.2])", minRatio, maxRatio);
  const bool lengthPass = finite && minRatio >= 0.8 && maxRatio <= 1.2;
  bool shapePass = finite;
  if (dahl) {
    shapePass = shapePass && minStraight >= 0.5 && maxStraight <= 0.9;
    std::snprintf(shapeDetail, sizeof(shapeDetail),
                  "straightness %.4g to %.4g (with Dahl: limits [0.5, 0.9], the bundle keeps a "
                  "bend)",
                  minStraight, maxStraight);
  } else {
    shapePass = shapePass && minStraight >= 0.9;
    std::snprintf(shapeDetail, sizeof(shapeDetail),
                  "straightness %.4g to %.4g (without Dahl: limit >= 0.9, the bundle recovers)",
                  minStraight, maxStraight);
  }
  return {{"arc_length", lengthPass, lengthDetail},
          {dahl ? "keeps_bend" : "recovers", shapePass, shapeDetail}};
}

std::vector<CheckResult> checkBundle(const RigidCheckInput& in) {
  std::vector<CheckResult> checks = {checkBodiesFinite(in)};
  for (CheckResult& c : cableIntegrityChecks(in, {.jointGap = kJointGapLimit}))
    checks.push_back(std::move(c));
  if (in.seconds >= kShapeCheckSeconds - 1e-9)
    for (CheckResult& c : checkBundleShape(in)) checks.push_back(std::move(c));
  return checks;
}

}  // namespace

Scene makeCableBundleHysteresisScene() {
  Scene scene;
  scene.name = "cable_bundle_hysteresis";
  scene.aliases = {"bundle"};
  scene.description =
      "a bundle of 7 cables is bent by moving obstacles, held and released; Dahl friction keeps "
      "a bend (shape checked after 2.4 s, e.g. --frames 150)";
  scene.options = {
      {"segments", "40", "capsules per cable, 2 to 100000"},
      {"eps_max", "2.0", "Dahl's saturation curvature, >= 0 (0: no Dahl)"},
      {"tau", "0.1", "Dahl's memory length, >= 0 (0: no Dahl)"},
      {"dahl", "1", "0: no Dahl friction (with --frames 150, the reference's no-Dahl variant)"},
      {"materials", "held", "reference: the reference's softer contacts (docs/CABLES.md)"}};
  scene.benchmark = true;       // one of the reference's eight benchmark scenes
  scene.benchWindowFirst = 20;  // weft bench's window, frames [20, 80)
  scene.benchWindowEnd = 80;
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 20;  // the reference's test length (its 150-frame variants: --frames 150)
  scene.tuneWindowFrames = 20;
  RigidSolverOptions& o = scene.rigid.solver;
  o.iterations = 5;
  o.chebyshevRho = kBundleChebyshevRho;
  o.gravity = {0.0f, 0.0f, -9.81f};
  o.collideInterval = 10;  // contacts on substep 0 of each frame only
  scene.rigid.build = buildBundle;
  scene.rigid.checks = checkBundle;
  scene.elementsFor = [](const SceneOptions& options) {
    return (long long)kCables * readOptions(options).segments + kObstacles;
  };
  return scene;
}

}  // namespace weft
