// cloth_twist: the reference's cloth_twist (scenes_spec §2, Newton example_cloth_twist.py). A
// square sheet hangs in the YZ plane with no gravity; its two vertical edges are held and turned
// about the y axis in opposite senses at π/3 rad/s each, so the sheet winds up into a rope. An
// extreme self-contact test: the sheet must stay free of self-intersections while it does.
//
// Counts: 50×50 = 2500 particles (2400 free, 100 driven), 4802 triangles, 7301 bending edges,
// no shapes. Units m, kg, s; gravity 0.
// Settings, all the reference's: 60 fps, 10 substeps (dt = 1/600 s), 4 iterations; density
// 0.2 kg/m² lumped (0.05 kg in all), tri ke/ka 1e3, kd 2e-4, edge ke 1e-3, kd 1e-2; coloring
// without bending; model soft contact ke 1e3, kd 0.1, mu 0.2 (self-contact only); self-contact
// radius 2 mm, margin 3.5 mm, detection interval 0, topological filter 2. The edge columns
// j = 49 (y = +0.25, axis +y) and j = 0 (y = −0.25, axis −y) turn about axes through the origin
// and stop at t = 10 s (≈10.47 rad each). The default 100 frames are the reference's test
// length: each end has then turned 100°, a relative twist of 200°.
//
// Differences from the reference:
//   * The cloth is procedural. The reference loads Warp's square_cloth.usd (a Git-LFS asset we
//     do not have); scenes_spec §2 infers it is a regular 50×50 grid of 0.5 m, authored in cm in
//     its local XZ plane, with vertex i·50 + j and j along local x. We build exactly that (two
//     triangles per cell) and place it as the reference does (R_z(π/2), scale 0.01), so column j
//     runs along world +y and row i along +z. Unknown, and chosen here: rows go up (+z) and each
//     cell is split along its (i−1, j)–(i, j−1) diagonal, as the grid builder does.
//   * It is built with ClothBuilder::addClothMesh and density 0.2, as the reference's
//     add_cloth_mesh: area-lumped masses (interior 2.08e-5 kg, boundary rows half that), not the
//     grid builder's uniform per-particle mass.
//   * The trees are rebuilt every 10 frames (the reference's bvh_rebuild_frames = 10, which its
//     code never reads: it actually rebuilds every frame) and refit in between.
//   * Drivers are evaluated at the substep's end time; the reference sets the held vertices from
//     a device-side time that it advances after using it, so substep k (from 1) sees
//     θ = ω·(k−1)·dt. startTime = dt (and stopTime = 10 s + dt) reproduce that exactly.
//   * Self-contact candidate lists grow on demand instead of the fixed 32/64 buffers.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>

#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kClothSize = 50;             // vertices per side
constexpr float kSideCentimetres = 50.0f;  // [cm] the asset's units
constexpr float kMetresPerUnit = 0.01f;    // reference scale
constexpr float kDensity = 0.2f;           // [kg/m²]
constexpr double kFps = 60.0;
constexpr int kSubsteps = 10;
constexpr float kSubstepSeconds = float(1.0 / (kFps * kSubsteps));  // [s] 1/600
constexpr float kAngularSpeed = std::numbers::pi_v<float> / 3.0f;   // [rad/s] per end
constexpr float kStopSeconds = 10.0f;                               // [s]

ModelDesc buildClothTwist(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any --scene-option: this scene has none
  // The asset's layout: vertex i·50 + j at local (j·s − 25, 0, i·s − 25) cm.
  ClothMeshParams cloth;
  const float spacing = kSideCentimetres / float(kClothSize - 1);
  const float half = 0.5f * kSideCentimetres;
  for (int i = 0; i < kClothSize; ++i)
    for (int j = 0; j < kClothSize; ++j)
      cloth.vertices.push_back({float(j) * spacing - half, 0.0f, float(i) * spacing - half});
  // Cell (i, j), i, j >= 1: corners v0 = (i−1, j−1), v1 = (i−1, j), v2 = (i, j), v3 = (i, j−1),
  // triangles (v0, v1, v3) and (v1, v2, v3), the grid builder's split.
  for (int i = 1; i < kClothSize; ++i)
    for (int j = 1; j < kClothSize; ++j) {
      const int v0 = (i - 1) * kClothSize + j - 1, v1 = (i - 1) * kClothSize + j;
      const int v2 = i * kClothSize + j, v3 = i * kClothSize + j - 1;
      cloth.triangles.push_back({v0, v1, v3});
      cloth.triangles.push_back({v1, v2, v3});
    }
  cloth.rotation = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, 0.5f * std::numbers::pi_v<float>);
  cloth.scale = kMetresPerUnit;
  cloth.density = kDensity;
  cloth.triangleMaterial = {1.0e3f, 1.0e3f, 2.0e-4f};
  cloth.edgeMaterial = {1.0e-3f, 1.0e-2f};
  cloth.particleRadius = 0.1f;  // the reference default; unused (no shapes)

  ClothBuilder builder;
  const int first = builder.addClothMesh(cloth);

  // Column j = 49 (y = +0.25) turns about +y, column j = 0 (y = −0.25) about −y.
  for (const auto& [column, axisSign] : {std::pair{kClothSize - 1, 1.0f}, std::pair{0, -1.0f}}) {
    DriverDesc held;
    held.driver.axisPoint = {0.0f, 0.0f, 0.0f};
    held.driver.axisDirection = {0.0f, axisSign, 0.0f};
    held.driver.angularSpeed = kAngularSpeed;
    held.driver.startTime = kSubstepSeconds;
    held.driver.stopTime = kStopSeconds + kSubstepSeconds;
    for (int i = 0; i < kClothSize; ++i) {
      const int particle = first + i * kClothSize + column;
      builder.fixParticle(particle);
      held.particles.push_back(particle);
    }
    builder.addDriver(held);
  }

  ColoringOptions coloring;
  coloring.includeBending = false;
  return builder.finalize(coloring);
}

/// Every velocity component |v_i| < 1.5 m/s (the reference's test_final, strict).
CheckResult checkVelocityComponents(const CheckInput& in) {
  constexpr float kLimit = 1.5f;  // [m/s]
  float largest = 0.0f;
  for (const Vec3& v : in.velocities)
    largest =
        std::fmax(largest, std::fmax(std::fabs(v.x), std::fmax(std::fabs(v.y), std::fabs(v.z))));
  char detail[96];
  std::snprintf(detail, sizeof(detail), "largest |velocity component| %.4g m/s (limit < 1.5)",
                largest);
  return {"velocity_components", largest < kLimit, detail};
}

std::vector<CheckResult> checkClothTwist(const CheckInput& in) {
  // The reference's volume test is inclusive (vec_inside_limits), as checkBounded is.
  return {checkFinite(in), checkBounded(in, {-0.6f, -0.9f, -0.6f}, {0.6f, 0.9f, 0.6f}),
          checkVelocityComponents(in)};
}

}  // namespace

Scene makeClothTwistScene() {
  Scene scene;
  scene.name = "cloth_twist";
  scene.benchmark = true;       // one of the reference's eight benchmark scenes
  scene.benchWindowFirst = 20;  // weft bench's window, frames [20, 50)
  scene.benchWindowEnd = 50;
  scene.tuneWindowFrames = 100;  // the sheet only winds onto itself late in the twist
  scene.aliases = {"twist"};
  scene.description =
      "a 50x50 square sheet whose two side edges are turned in opposite senses at pi/3 rad/s "
      "winds up on itself (heavy self-contact)";
  scene.fps = kFps;
  scene.substeps = kSubsteps;
  scene.defaultFrames = 100;  // the reference's test length
  scene.checksSelfIntersections = true;
  SolverOptions& o = scene.solver;
  o.iterations = 4;
  o.gravity = {0.0f, 0.0f, 0.0f};
  o.particleContact = {1.0e3f, 1.0e-1f, 0.2f};  // model soft_contact_ke / kd / mu
  o.selfContact.enabled = true;
  o.selfContact.radius = 0.002f;
  o.selfContact.margin = 0.0035f;
  o.selfContact.detectionInterval = 0;
  o.selfContact.topologicalFilter = 2;
  o.selfContact.restExclusion = 0.0f;
  o.selfContact.bvhRebuildInterval = 10;
  scene.build = buildClothTwist;
  scene.checks = checkClothTwist;
  return scene;
}

}  // namespace weft
