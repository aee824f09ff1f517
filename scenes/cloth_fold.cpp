// cloth_fold: a square sheet dropped diagonally over a thin static bar. Each half hangs down one
// side of the bar, is longer than the bar is high, and folds onto itself on the ground; the two
// halves also close in on each other under the bar. Exercises self-contact (vertex–triangle and
// edge–edge pairs, planar truncation) together with capsule and ground contact. Small enough to
// run a few frames on the CPU in seconds; its final checks include zero self-intersections.
#include <numbers>

#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kCells = 24;                 // 25 × 25 particles
constexpr float kCellSize = 0.025f;        // [m]: a 0.6 m square
constexpr float kDropHeight = 0.3f;        // [m]
constexpr float kBarHeight = 0.15f;        // [m] bar axis above the ground
constexpr float kBarRadius = 0.01f;        // [m]
constexpr float kParticleRadius = 0.005f;  // [m] against the bar and the ground

ModelDesc buildClothFold(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any --scene-option: this scene has none
  ClothBuilder builder;
  ClothGridParams grid;
  // Centre the sheet over the bar and turn it 45° about z, so a diagonal lies across the bar.
  const float half = 0.5f * kCells * kCellSize;
  const Quat turn = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, 0.25f * std::numbers::pi_v<float>);
  grid.rotation = turn;
  grid.position = Vec3{0.0f, 0.0f, kDropHeight} - rotate(turn, Vec3{half, half, 0.0f});
  grid.dimX = kCells;
  grid.dimY = kCells;
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
  bar.geometry.halfHeight = 0.5f;
  bar.motion.pose0 = {{0.0f, 0.0f, kBarHeight},
                      quatFromAxisAngle({0.0f, 1.0f, 0.0f}, 0.5f * std::numbers::pi_v<float>)};
  builder.addShape(bar);

  ShapeDesc ground;
  ground.name = "ground";
  ground.geometry.type = ShapeType::Plane;
  builder.addShape(ground);
  return builder.finalize();
}

std::vector<CheckResult> checkClothFold(const CheckInput& in) {
  return {checkFinite(in), checkBounded(in, {-1.0f, -1.0f, -0.05f}, {1.0f, 1.0f, 1.0f}),
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
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 120;
  scene.checksSelfIntersections = true;
  SolverOptions& o = scene.solver;
  o.iterations = 10;
  o.particleContact = {1.0e3f, 1.0f, 0.5f};  // self-contact stiffness, damping, friction
  o.selfContact.enabled = true;
  o.selfContact.radius = 0.006f;
  o.selfContact.margin = 0.01f;
  scene.build = buildClothFold;
  scene.checks = checkClothFold;
  return scene;
}

}  // namespace weft
