// cloth_twist: the reference's cloth_twist (scenes_spec §2, Newton 1.8.0 example_cloth_twist.py).
// A 1.5 m × 1.0 m sheet hangs in the YZ plane with no gravity; its two short edges are held and
// turned about the y axis in opposite senses at π/3 rad/s each, so the sheet winds up into a
// rope. An extreme self-contact test: the sheet must stay free of self-intersections while it
// does.
//
// Mesh: the reference's own, Warp's square_cloth.usd, shipped as assets/square_cloth.obj
// (assets/README.md) and compiled in: 50 × 50 vertices (vertex i·50 + j, column j along local x
// from −75 to 75 cm, row i along local z from −50 to 50 cm), 4802 triangles whose diagonals
// alternate, placed as the reference places it (scale 0.01, R_z(π/2)), so column j runs along
// world +y and row i along +z. Counts: 2500 particles (2400 free, 100 driven), 4802 triangles,
// 7301 bending edges, no shapes. Units m, kg, s; gravity 0.
// Settings, all the reference's: 60 fps, 10 substeps (dt = 1/600 s), 4 iterations; density
// 0.2 kg/m² area-lumped (0.3 kg in all; a vertex gets a third of each of its triangles' mass, so
// interior vertices, touching 4 or 8 triangles, 0.83e-4 or 1.67e-4 kg), tri ke/ka 1e3, kd 2e-4,
// edge ke 1e-3, kd 1e-2; coloring without bending; model soft contact ke 1e3, kd 0.1, mu 0.2
// (self-contact only); self-contact radius 2 mm and detection margin 3.5 mm (1.8.0 names them
// particle_self_contact_margin = 0.002, the interaction distance, and particle_self_contact_gap =
// 0.0015, added for detection), detection interval 0, topological filter 2. The columns j = 49 (y =
// +0.75, axis +y) and j = 0 (y = −0.75, axis −y) turn about axes through the origin and stop at t =
// 10 s (≈10.47 rad each). The default 100 frames are the reference's test length: each end has then
// turned 100°, a relative twist of 200°.
//
// Differences from the reference:
//   * The trees are rebuilt every 10 frames (the reference's bvh_rebuild_frames = 10, which its
//     code never reads: it rebuilds every frame) and refit in between.
//   * Drivers are evaluated at the substep's end time; the reference sets the held vertices from
//     a device-side time that it advances after using it, so substep k (from 1) sees
//     θ = ω·(k−1)·dt. startTime = dt (and stopTime = 10 s + dt) reproduce that exactly.
//   * Self-contact candidate lists grow on demand instead of the fixed 64/128 buffers (which,
//     the reference notes, a tight twist can overflow, silently dropping pairs).
//   * Candidate lists are kept between detections while no particle moved more than 3.5 mm since
//     they were found (reuseSlack; queries then reach 3.5 + 2 × 3.5 mm): they still hold every
//     pair within the margin, and most of the 20 detections of a frame build nothing.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>

#include "kernels/runtime/errors.h"
#include "scenes/obj_loader.h"
#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kClothSize = 50;           // vertices per row and per column of the asset
constexpr float kMetresPerUnit = 0.01f;  // reference scale (the asset is in cm)
constexpr float kDensity = 0.2f;         // [kg/m²]
constexpr double kFps = 60.0;
constexpr int kSubsteps = 10;
constexpr float kSubstepSeconds = float(1.0 / (kFps * kSubsteps));  // [s] 1/600
constexpr float kAngularSpeed = std::numbers::pi_v<float> / 3.0f;   // [rad/s] per end
constexpr float kStopSeconds = 10.0f;                               // [s]

ModelDesc buildClothTwist(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any --scene-option: this scene has none
  // The reference's mesh (assets/square_cloth.obj, compiled in): vertex i·50 + j at local
  // (x_j, 0, z_i) cm, x from −75 to 75 along a row, z from −50 to 50 across the rows.
  const MeshData mesh = loadShippedObjMesh("square_cloth.obj");
  if (mesh.vertices.size() != size_t(kClothSize * kClothSize))
    throw Error("cloth_twist: square_cloth.obj has " + std::to_string(mesh.vertices.size()) +
                " vertices; the scene holds columns 0 and 49 of its 50 x 50 grid");
  ClothMeshParams cloth;
  cloth.vertices = mesh.vertices;
  cloth.triangles = mesh.triangles;
  cloth.rotation = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, 0.5f * std::numbers::pi_v<float>);
  cloth.scale = kMetresPerUnit;
  cloth.density = kDensity;
  cloth.triangleMaterial = {1.0e3f, 1.0e3f, 2.0e-4f};
  cloth.edgeMaterial = {1.0e-3f, 1.0e-2f};
  cloth.particleRadius = 0.1f;  // the reference default; unused (no shapes)

  ClothBuilder builder;
  const int first = builder.addClothMesh(cloth);

  // Column j = 49 (y = +0.75) turns about +y, column j = 0 (y = −0.75) about −y.
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
      "a 1.5 x 1.0 m sheet (the reference's mesh) whose two short edges are turned in opposite "
      "senses at pi/3 rad/s winds up on itself (heavy self-contact)";
  scene.fps = kFps;
  scene.substeps = kSubsteps;
  scene.defaultFrames = 100;  // the reference's test length
  scene.cloth.checksSelfIntersections = true;
  SolverOptions& o = scene.cloth.solver;
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
  o.selfContact.reuseSlack = 0.0035f;  // docs/PERFORMANCE.md: the slack sweep
  scene.cloth.build = buildClothTwist;
  scene.cloth.checks = checkClothTwist;
  return scene;
}

}  // namespace weft
