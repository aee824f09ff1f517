// cable_cantilever: a clamped cable bending under its own weight, against exact discrete statics
// (not a scene of the reference). It measures how far the rigid solver's sweeps get towards a
// static answer that is known in closed form: stiff stretch and shear rows against soft bending
// are what block Gauss–Seidel converges slowest on (docs/CONVERGENCE.md), so the tip's deflection
// after the cable has settled shows what an iteration count (and Chebyshev acceleration) buys.
//
// Bodies: n = 20 capsule segments of length l = 0.05 m and radius 0.005 m along +x at z = 1 m,
// density 1000 (3.5e-3 kg each), joined by 19 ROD joints; segment 0 is kinematic (the clamp).
// Joints: bend = twist = 160 N·m/rad with bend damping 0.5 N·m·s/rad; stretch = shear = `shear`
// N/m (default 1e4, a softened shear; the reference's cables use 1e5 to 1e7), undamped. No contact
// (consecutive segments are filtered, and nothing else is near). 60 fps, 10 substeps, 5 iterations
// accelerated at ρ 0.7 as in every cable scene (kCableSceneChebyshevRho; `--iterations` and
// `--chebyshev-rho` vary the solve), gravity (0, 0, −9.81); 150 frames (2.5 s: the bend damping
// settles the cable).
//
// The answer (small angles): joint i at x_i = i·l carries the moment of the segments beyond it,
// M_i = Σ_{j≥i} m g (x_j + l/2 − x_i), and their weight V_i = Σ_{j≥i} m g; it bends by M_i/k_b,
// which lowers the tip (at n·l) by θ_i·(n·l − x_i), and shears by V_i/k_s. Euler–Bernoulli beam
// theory (δ = wL⁴/(8EI), w = m g/l, L = (n − 1)·l, EI = k_b·l) differs from the 19-hinge chain by
// O(1/n) (11%) and is reported beside it.
//
// Checks: finite; settled (every body slower than 5 mm/s at the end); tip_deflection within 3% of
// the discrete statics; the integrity checks of every cable scene. Five plain sweeps
// (`--chebyshev-rho 0`) leave the cable 71% too low and still moving, and the checks fail: that
// is the measurement, and docs/CONVERGENCE.md tabulates the deflection against iterations, ρ,
// the shear stiffness and time.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/errors.h"
#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"

namespace weft {
namespace {

constexpr int kSegments = 20;
constexpr float kSegmentLength = 0.05f;   // [m]
constexpr float kRadius = 0.005f;         // [m]
constexpr float kDensity = 1000.0f;       // [kg/m³]
constexpr float kBendStiffness = 160.0f;  // [N·m/rad]
constexpr float kHeight = 1.0f;           // [m]
constexpr float kGravity = 9.81f;         // [m/s²]
constexpr double kTolerance = 0.03;       // tip deflection within 3% of the discrete statics
constexpr float kSettledSpeed = 5.0e-3f;  // [m/s]
const std::vector<std::string> kOptions = {"shear"};

float shearStiffness(const SceneOptions& options) {
  const double shear = sceneOption(options, "shear", 1.0e4, kOptions);
  if (!(shear > 0.0) || !std::isfinite(shear))
    throw Error("scene option shear (the joints' stretch and shear stiffness [N/m]) must be > 0");
  return float(shear);
}

RigidDesc buildCantilever(const SceneOptions& options) {
  CableBuilder builder;
  RodParams rod;
  rod.name = "cantilever";
  rod.radius = kRadius;
  rod.density = kDensity;
  rod.gap = 0.0f;
  rod.stiffness.stretchStiffness = shearStiffness(options);
  rod.stiffness.bendStiffness = kBendStiffness;
  rod.stiffness.bendDamping = 0.5f;
  std::vector<Vec3> points;
  for (int i = 0; i <= kSegments; ++i) points.push_back({float(i) * kSegmentLength, 0.0f, kHeight});
  const RodIds ids = builder.addRod(points, {}, rod);
  RigidDesc desc = builder.finalize();
  BodyDesc& clamp = desc.bodies[size_t(ids.bodies[0])];
  clamp.kinematic = true;
  clamp.mass = 0.0f;
  clamp.inertia = Mat33{};
  clamp.motion.type = MotionType::Static;
  clamp.motion.pose0 = clamp.pose;
  validateRigidDesc(desc);
  return desc;
}

struct Statics {
  double bending = 0.0, shear = 0.0, beam = 0.0;
  double discrete() const { return bending + shear; }
};

/// The discrete statics and the beam theory of the header, for segment mass m.
Statics statics(double m, double ks) {
  Statics s;
  const int n = kSegments;
  const double l = kSegmentLength, kb = kBendStiffness;
  for (int i = 1; i < n; ++i) {
    double moment = 0.0;
    for (int j = i; j < n; ++j) moment += m * kGravity * ((j + 0.5) * l - i * l);
    s.bending += moment / kb * (n * l - i * l);
    s.shear += (n - i) * m * kGravity / ks;
  }
  const double L = (n - 1) * l, w = m * kGravity / l, EI = kb * l;
  s.beam = w * L * L * L * L / (8.0 * EI);
  return s;
}

CheckResult checkSettled(const RigidCheckInput& in) {
  float fastest = 0.0f;
  for (const Vec3& v : in.linearVelocities) fastest = std::max(fastest, length(v));
  char detail[128];
  std::snprintf(detail, sizeof(detail), "fastest body %.3g m/s (limit %.3g)", fastest,
                kSettledSpeed);
  return {"settled", fastest < kSettledSpeed, detail};
}

CheckResult checkTip(const RigidCheckInput& in) {
  const int tipBody = kSegments - 1;
  const Vec3 tip = transformPoint(in.poses[size_t(tipBody)], {0.0f, 0.0f, kSegmentLength / 2});
  const double deflection = double(kHeight) - double(tip.z);
  const JointDesc& joint = in.desc.joints[0];
  const Statics s = statics(double(in.desc.bodies[1].mass), double(joint.shearStiffness));
  const double error = std::fabs(deflection - s.discrete()) / s.discrete();
  char detail[320];
  std::snprintf(
      detail, sizeof(detail),
      "tip deflection %.5g m, discrete statics %.5g m (bending %.5g + shear %.5g): %.2f%% "
      "apart (limit %.0f%%); Euler-Bernoulli %.5g m + shear",
      deflection, s.discrete(), s.bending, s.shear, 100.0 * error, 100.0 * kTolerance, s.beam);
  return {"tip_deflection", std::isfinite(deflection) && error <= kTolerance, detail};
}

std::vector<CheckResult> checkCantilever(const RigidCheckInput& in) {
  std::vector<CheckResult> checks = {checkBodiesFinite(in), checkSettled(in), checkTip(in)};
  for (CheckResult& c : cableIntegrityChecks(in)) checks.push_back(std::move(c));
  return checks;
}

}  // namespace

Scene makeCableCantileverScene() {
  Scene scene;
  scene.name = "cable_cantilever";
  scene.description =
      "a clamped 1 m cable of 20 segments bends under its own weight: its settled tip deflection "
      "against exact discrete statics (how far the sweeps converge)";
  scene.options = {
      {"shear", "1e4", "the joints' stretch and shear stiffness [N/m], > 0 (a sweep: 1e4:1e5)"}};
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 150;
  RigidSolverOptions& o = scene.rigid.solver;
  o.iterations = 5;
  o.chebyshevRho = kCableSceneChebyshevRho;
  o.gravity = {0.0f, 0.0f, -kGravity};
  scene.rigid.build = buildCantilever;
  scene.rigid.checks = checkCantilever;
  return scene;
}

}  // namespace weft
