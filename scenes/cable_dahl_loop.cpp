// cable_dahl_loop: Dahl hysteresis measured as a moment–curvature loop of full solves (not a scene
// of the reference). Two capsules stand on end, joined by one ROD joint with Dahl friction on its
// bend: the lower one (A, kinematic) tilts about the world x axis through the joint by
// α(t) = α₀ sin(2πt/T), and the upper one (B, free, steel-dense) leans with it. Gravity on B loads
// the joint, so the moment the joint carries is read from B's motion alone: B turns about the
// fixed joint, so M = −m g (c − p).y − I_p·θ̈ (c: B's centre of mass, p: the joint, I_p: B's
// moment of inertia about the joint's x axis, θ̈: its tilt's second difference over frames), and
// the curvature is the rod's bend κ = 2 tan(θ/2) for B's tilt θ relative to A (the DER binormal
// that the joint and its Dahl law act on). Neither reads the solver's Dahl state, so the area of
// the loop M(κ) over the last driven period is a measurement; the check compares it with the Dahl
// law's steady loop for the measured curvature amplitude κa (kernels/dahl.h):
//   σ_max = K·ε_max, E = e^(−2κa/τ), σ_s = σ_max(1 − E)/(1 + E),
//   area = 2·[2κa·σ_max − (σ_max + σ_s)·τ·(1 − E)]
// (the elastic part K·κ encloses no area). With dahl=0 the loop must vanish.
//
// Scene options: dahl (1 = on, default; 0 = off), eps_max (default 0.03), tau (default 0.01 rad).
// Bodies: two capsules of radius 0.01 m and half height 0.05 m along z (segments 0–0.1 and
// 0.1–0.2 m), density 7800 (B: 0.278 kg); A kinematic, tilted by a sampled motion about the x
// axis through the joint (0, 0, 0.1) with α₀ = 1 rad and T = 4 s for three periods, then held.
// The joint: bend = twist = 1 N·m/rad (more than B's largest gravity moment, 0.14 N·m, so B
// stands), stretch = shear = 1e5 N/m, no damping. 60 fps, 10 substeps, 5 iterations (accelerated,
// ρ 0.7), gravity (0, 0, −9.81); 721 frames (three periods and one frame for the last difference),
// the loop measured over the last period (frames 481–720). The two capsules are joined, so no
// contact pair is ever tested.
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

constexpr double kFps = 60.0;
constexpr int kSubsteps = 10;
constexpr double kPeriod = 4.0;         // [s] of the base's tilt
constexpr double kTiltAmplitude = 1.0;  // [rad]
constexpr int kPeriods = 3;
constexpr int kFramesPerPeriod = int(kPeriod * kFps);
constexpr float kRadius = 0.01f;         // [m]
constexpr float kSegment = 0.1f;         // [m]
constexpr float kDensity = 7800.0f;      // [kg/m³]
constexpr float kBendStiffness = 1.0f;   // [N·m/rad]
constexpr float kGravity = 9.81f;        // [m/s²]
constexpr double kAreaTolerance = 0.03;  // the measured area within 3% of Dahl's
constexpr double kVanishing = 0.05;      // without Dahl, under 5% of the area Dahl would give
const std::vector<std::string> kOptions = {"dahl", "eps_max", "tau"};

struct LoopOptions {
  bool dahl = true;
  float epsMax = 0.03f, tau = 0.01f;
};

LoopOptions readOptions(const SceneOptions& options) {
  LoopOptions out;
  const double dahl = sceneOption(options, "dahl", 1, kOptions);
  if (dahl != 0.0 && dahl != 1.0) throw Error("scene option dahl must be 0 (off) or 1 (on)");
  const double epsMax = sceneOption(options, "eps_max", 0.03, kOptions);
  const double tau = sceneOption(options, "tau", 0.01, kOptions);
  if (!(epsMax > 0.0)) throw Error("scene option eps_max must be > 0 (dahl=0 turns Dahl off)");
  if (!(tau > 0.0)) throw Error("scene option tau must be > 0 (dahl=0 turns Dahl off)");
  out.dahl = dahl == 1.0;
  out.epsMax = float(epsMax);
  out.tau = float(tau);
  return out;
}

/// The joint's place, which stays put: A tilts about the world x axis through it.
constexpr Vec3 kPivot{0.0f, 0.0f, kSegment};

/// A's pose at time t: its rest pose rotated about the x axis through the pivot.
Transform basePose(const Transform& rest, double t) {
  const float tilt = float(kTiltAmplitude * std::sin(2.0 * std::numbers::pi * t / kPeriod));
  const Quat r = quatFromAxisAngle({1.0f, 0.0f, 0.0f}, tilt);
  return {kPivot + rotate(r, rest.p - kPivot), r * rest.q};
}

/// B's tilt about x in the world [rad] (B is only ever rotated about x).
double tiltAboutX(const Quat& q) {
  return 2.0 * std::atan2(double(q.x), double(q.w));
}

RigidDesc buildLoop(const SceneOptions& options) {
  const LoopOptions settings = readOptions(options);
  CableBuilder builder;
  RodParams rod;
  rod.name = "dahl loop";
  rod.radius = kRadius;
  rod.density = kDensity;
  rod.stiffness.bendStiffness = kBendStiffness;
  rod.dahlEpsMax = settings.dahl ? settings.epsMax : 0.0f;
  rod.dahlTau = settings.dahl ? settings.tau : 0.0f;
  const Vec3 points[] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, kSegment}, {0.0f, 0.0f, 2.0f * kSegment}};
  const RodIds ids = builder.addRod(points, {}, rod);
  RigidDesc desc = builder.finalize();

  BodyDesc& base = desc.bodies[size_t(ids.bodies[0])];
  base.kinematic = true;
  base.mass = 0.0f;
  base.inertia = Mat33{};
  base.motion.type = MotionType::Sampled;
  base.motion.pose0 = base.pose;
  const double dt = 1.0 / (kFps * kSubsteps);
  base.motion.sampleInterval = float(dt);
  base.motion.sampleCount = kPeriods * kFramesPerPeriod * kSubsteps + 2;
  for (int k = 0; k < base.motion.sampleCount; ++k)
    base.motionSamples.push_back(basePose(base.pose, k * dt));
  return desc;
}

/// The loop over the last full period of `in.history`: curvature and moment per frame, its area
/// (trapezoids, closed) and Dahl's steady loop for the same amplitude.
struct Loop {
  std::vector<double> curvature, moment;
  double area = 0.0, predicted = 0.0, amplitude = 0.0;
  long long firstFrame = 0, lastFrame = 0;
};

Loop measureLoop(const RigidCheckInput& in, const LoopOptions& settings) {
  Loop loop;
  const size_t driven = std::min(in.history.size(), size_t(kPeriods * kFramesPerPeriod));
  const size_t first = driven - size_t(kFramesPerPeriod);
  loop.firstFrame = (long long)first + 1;
  loop.lastFrame = (long long)driven;
  const JointDesc& joint = in.desc.joints[0];
  const BodyDesc& upper = in.desc.bodies[size_t(joint.child)];
  // B turns about the fixed pivot: its moment of inertia there, for the part of the gravity
  // moment that accelerates B rather than bending the joint (B's tilt differenced over frames).
  const double lever = double(length(upper.com - joint.childAnchor.p));
  const double inertia = double(upper.inertia(0, 0)) + double(upper.mass) * lever * lever;
  const double frameSeconds = 1.0 / kFps;
  const auto tilt = [&](size_t f) { return tiltAboutX(in.history[f][size_t(joint.child)].q); };
  for (size_t f = first; f < driven; ++f) {
    const Transform& a = in.history[f][size_t(joint.parent)];
    const Transform& b = in.history[f][size_t(joint.child)];
    const Quat relative = conjugate(a.q) * b.q;  // a rotation about x only
    const double theta = 2.0 * std::atan2(double(relative.x), double(relative.w));
    const Vec3 com = transformPoint(b, upper.com);
    const Vec3 pivot = transformPoint(b, joint.childAnchor.p);
    const double gravity = -double(upper.mass) * kGravity * double(com.y - pivot.y);
    const double acceleration =
        (tilt(f + 1) - 2.0 * tilt(f) + tilt(f - 1)) / (frameSeconds * frameSeconds);
    loop.curvature.push_back(2.0 * std::tan(0.5 * theta));
    loop.moment.push_back(gravity - inertia * acceleration);
  }
  const size_t n = loop.curvature.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t j = (i + 1) % n;
    loop.area += 0.5 * (loop.moment[i] + loop.moment[j]) * (loop.curvature[j] - loop.curvature[i]);
  }
  loop.area = std::fabs(loop.area);
  const auto [low, high] = std::minmax_element(loop.curvature.begin(), loop.curvature.end());
  loop.amplitude = 0.5 * (*high - *low);
  const double sigmaMax = double(kBendStiffness) * settings.epsMax, tau = settings.tau;
  const double e = std::exp(-2.0 * loop.amplitude / tau);
  const double sigmaSteady = sigmaMax * (1.0 - e) / (1.0 + e);
  loop.predicted =
      2.0 * (2.0 * loop.amplitude * sigmaMax - (sigmaMax + sigmaSteady) * tau * (1.0 - e));
  return loop;
}

std::vector<CheckResult> checkLoop(const RigidCheckInput& in, const LoopOptions& settings) {
  std::vector<CheckResult> checks = {checkBodiesFinite(in)};
  for (CheckResult& c : cableIntegrityChecks(in)) checks.push_back(std::move(c));
  if (in.history.size() < size_t(kPeriods * kFramesPerPeriod) + 1) {
    checks.push_back({"dahl_loop", true,
                      "not measured: it needs the poses of the driven " +
                          std::to_string(kPeriods * kFramesPerPeriod) + " frames and one more",
                      true});
    return checks;
  }
  const Loop loop = measureLoop(in, settings);
  char detail[320];
  if (settings.dahl) {
    const double error = std::fabs(loop.area - loop.predicted) / loop.predicted;
    std::snprintf(detail, sizeof(detail),
                  "loop area %.4g N·m over frames %lld-%lld (curvature amplitude %.4g), Dahl's "
                  "steady loop %.4g N·m: %.1f%% apart (limit %.0f%%)",
                  loop.area, loop.firstFrame, loop.lastFrame, loop.amplitude, loop.predicted,
                  100.0 * error, 100.0 * kAreaTolerance);
    checks.push_back({"dahl_loop", error <= kAreaTolerance, detail});
  } else {
    std::snprintf(detail, sizeof(detail),
                  "without Dahl: loop area %.4g N·m over frames %lld-%lld (curvature amplitude "
                  "%.4g), %.2f%% of the %.4g N·m Dahl at its default eps_max and tau would give "
                  "(limit %.0f%%)",
                  loop.area, loop.firstFrame, loop.lastFrame, loop.amplitude,
                  100.0 * loop.area / loop.predicted, loop.predicted, 100.0 * kVanishing);
    checks.push_back({"dahl_loop", loop.area <= kVanishing * loop.predicted, detail});
  }
  return checks;
}

}  // namespace

Scene makeCableDahlLoopScene() {
  Scene scene;
  scene.name = "cable_dahl_loop";
  scene.description =
      "one ROD joint with Dahl friction bent back and forth by gravity on a tilting base: the "
      "moment-curvature loop of full solves against the Dahl law's";
  scene.options = {{"dahl", "1", "0: no Dahl friction"},
                   {"eps_max", "0.03", "Dahl's saturation curvature, > 0"},
                   {"tau", "0.01", "Dahl's memory length, > 0"}};
  scene.fps = kFps;
  scene.substeps = kSubsteps;
  scene.defaultFrames = kPeriods * kFramesPerPeriod + 1;
  RigidSolverOptions& o = scene.rigid.solver;
  o.iterations = 5;
  o.chebyshevRho = kCableSceneChebyshevRho;
  o.gravity = {0.0f, 0.0f, -kGravity};
  scene.rigid.build = buildLoop;
  scene.rigid.checks = [](const RigidCheckInput& in) {
    // The options are not part of the check input: read them back from the joint.
    LoopOptions settings;
    settings.dahl = in.desc.joints[0].dahlEpsMax > 0.0f;
    if (settings.dahl) {
      settings.epsMax = in.desc.joints[0].dahlEpsMax;
      settings.tau = in.desc.joints[0].dahlTau;
    }
    return checkLoop(in, settings);
  };
  scene.rigid.checksUseHistory = true;
  return scene;
}

}  // namespace weft
