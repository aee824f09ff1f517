// cloth_fold: a square sheet dropped diagonally over a thin static bar. Each half hangs down one
// side of the bar, is longer than the bar is high, and folds onto itself on the ground; the two
// halves also close in on each other under the bar. Exercises self-contact (vertex–triangle and
// edge–edge pairs, planar truncation) together with capsule and ground contact. Small enough to
// run a few frames on the CPU in seconds; its final checks include zero self-intersections.
//
// Scene option `cells=N` (default 24) builds an N × N-cell sheet of the same 2.5 cm cells and
// scales the rest of the scene with it (drop height, bar height and length, check box: the
// default's times N/24), so that each half still hangs past the bar and folds onto itself on
// the ground, now many times: `--scene-option cells=200 --frames 300` is the self-contact stress
// case, a 5 m sheet (40,401 particles, 80,000 triangles) dropped from 2.5 m over a bar 1.25 m
// high, its halves piling up in folds on the ground, with the candidate lists grown as the layers
// build up (CUDA; `weft run ... --intersections-every-frame` counts self-intersections after
// every frame). Larger scenes take longer to fall: time scales with √(N/24).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kDefaultCells = 24;          // 25 × 25 particles
constexpr int kMaxCells = 1000;            // a million particles
constexpr float kCellSize = 0.025f;        // [m]: a 0.6 m square at the default size
constexpr float kDropHeight = 0.3f;        // [m] at the default size (scales with the sheet)
constexpr float kBarHeight = 0.15f;        // [m] bar axis above the ground (scales likewise)
constexpr float kBarRadius = 0.01f;        // [m]
constexpr float kParticleRadius = 0.005f;  // [m] against the bar and the ground

/// The sheet's cells per side (scene option `cells`, 2 to kMaxCells).
int foldCells(const SceneOptions& options) {
  const double cells = sceneOption(options, "cells", kDefaultCells, {"cells"});
  if (!(cells >= 2 && cells <= kMaxCells) || cells != double(int(cells))) {
    char given[32];
    std::snprintf(given, sizeof(given), "%g", cells);
    throw Error(std::string("cloth_fold: cells=") + given + " must be a whole number from 2 to " +
                std::to_string(kMaxCells));
  }
  return int(cells);
}

/// Half the sheet's side [m].
float halfSide(int cells) {
  return 0.5f * float(cells) * kCellSize;
}
/// The scene's scale against the default sheet: heights, the bar's length and the check box grow
/// with it (exactly 1 at the default size, whose numbers are unchanged).
float sceneScale(int cells) {
  return float(cells) / float(kDefaultCells);
}

ModelDesc buildClothFold(const SceneOptions& options) {
  const int cells = foldCells(options);
  ClothBuilder builder;
  ClothGridParams grid;
  // Centre the sheet over the bar and turn it 45° about z, so a diagonal lies across the bar.
  const float half = halfSide(cells);
  const Quat turn = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, 0.25f * std::numbers::pi_v<float>);
  grid.rotation = turn;
  const float scale = sceneScale(cells);
  grid.position = Vec3{0.0f, 0.0f, kDropHeight * scale} - rotate(turn, Vec3{half, half, 0.0f});
  grid.dimX = cells;
  grid.dimY = cells;
  grid.cellX = grid.cellY = kCellSize;
  grid.mass = 0.002f;  // [kg] per particle: 1.25 kg in all
  grid.triangleMaterial = {1.0e3f, 1.0e3f, 1.0e1f};
  grid.edgeMaterial = {1.0e-1f, 0.0f};
  grid.particleRadius = kParticleRadius;
  builder.addClothGrid(grid);

  ShapeDesc bar;
  bar.name = "bar";
  bar.geometry.type = ShapeType::Capsule;  // axis local z, turned onto world x
  bar.geometry.radius = kBarRadius;
  bar.geometry.halfHeight = 0.5f * std::max(1.0f, scale);  // longer than the sheet's diagonal
  bar.motion.pose0 = {{0.0f, 0.0f, kBarHeight * scale},
                      quatFromAxisAngle({0.0f, 1.0f, 0.0f}, 0.5f * std::numbers::pi_v<float>)};
  builder.addShape(bar);

  ShapeDesc ground;
  ground.name = "ground";
  ground.geometry.type = ShapeType::Plane;
  builder.addShape(ground);
  return builder.finalize();
}

std::vector<CheckResult> checkClothFold(const CheckInput& in) {
  // (cells + 1)² particles.
  const int cells = int(std::lround(std::sqrt(double(in.desc.numParticles())))) - 1;
  const float reach = std::max(1.0f, sceneScale(cells));  // the default size: ±1 m
  return {checkFinite(in), checkBounded(in, {-reach, -reach, -0.05f}, {reach, reach, reach}),
          checkAboveGround(in, 0.0f, kParticleRadius)};
}

}  // namespace

Scene makeClothFoldScene() {
  Scene scene;
  scene.name = "cloth_fold";
  scene.aliases = {"fold"};
  scene.description =
      "a 25x25 sheet dropped diagonally over a thin bar folds onto itself on the ground "
      "(self-contact)";
  scene.options = {
      {"cells", "24", "the sheet's cells per side, 2 or more (e.g. 200 for a stress test)"}};
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 120;
  scene.cloth.checksSelfIntersections = true;
  SolverOptions& o = scene.cloth.solver;
  o.iterations = 10;
  o.particleContact = {1.0e3f, 1.0f, 0.5f};  // self-contact stiffness, damping, friction
  o.selfContact.enabled = true;
  o.selfContact.radius = 0.006f;
  o.selfContact.margin = 0.01f;
  scene.cloth.build = buildClothFold;
  scene.cloth.checks = checkClothFold;
  scene.elementsFor = [](const SceneOptions& options) {
    const long long side = foldCells(options) + 1;
    return side * side;
  };
  return scene;
}

}  // namespace weft
