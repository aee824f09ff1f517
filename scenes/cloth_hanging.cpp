// cloth_hanging: a small version of the reference's hanging-cloth example. A square sheet, held
// at the two corners of one edge, starts horizontal and swings down under gravity; it is longer
// than the corners are high, so its free end comes to rest draped on the ground plane.
// Exercises membrane, bending, damping and particle–ground contact; no self-contact.
// With --mesh FILE.obj the grid is replaced by that mesh (in metres, as is or placed by
// --mesh-scale, --mesh-rotate and --mesh-translate), held at its two vertices of smallest and
// largest x where it is placed.
#include <algorithm>
#include <cmath>

#include "scenes/obj_loader.h"
#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kCells = 32;                // 33 × 33 particles
constexpr float kCellSize = 0.05f;        // [m]: a 1.6 m square
constexpr float kHeight = 1.2f;           // [m]: the held edge's height
constexpr float kParticleMass = 0.01f;    // [kg]
constexpr float kParticleRadius = 0.01f;  // [m]

constexpr TriangleMaterial kMembrane{1.0e3f, 1.0e3f, 1.0e2f};  // reference example values
constexpr EdgeMaterial kBending{1.0e1f, 0.0f};                 // reference: edge_ke = 10

/// The --mesh variant: the OBJ as the cloth (placed by the --mesh-* flags, if given), held at its
/// extreme-x vertices.
void addMeshCloth(ClothBuilder& builder, const SceneOptions& options) {
  MeshData mesh = loadObjMesh(options.meshPath);
  ClothMeshParams params;
  if (options.meshTransformGiven) {
    params.position = options.meshTranslation;
    params.rotation = meshRotation(options);
    params.scale = options.meshScale;
  }
  params.vertices = std::move(mesh.vertices);
  params.triangles = std::move(mesh.triangles);
  params.triangleLines = std::move(mesh.triangleLines);
  params.density = kParticleMass / (kCellSize * kCellSize);
  params.triangleMaterial = kMembrane;
  params.edgeMaterial = kBending;
  params.particleRadius = kParticleRadius;
  const auto byX = [&](const Vec3& a, const Vec3& b) {
    return rotate(params.rotation, params.scale * a).x <
           rotate(params.rotation, params.scale * b).x;
  };
  const int lowest = int(std::min_element(params.vertices.begin(), params.vertices.end(), byX) -
                         params.vertices.begin());
  const int highest = int(std::max_element(params.vertices.begin(), params.vertices.end(), byX) -
                          params.vertices.begin());
  const int first = builder.addClothMesh(params);
  builder.fixParticle(first + lowest);
  builder.fixParticle(first + highest);
}

/// The default cloth: a grid held at the two corners of its y = 0 edge.
void addGridCloth(ClothBuilder& builder) {
  ClothGridParams grid;
  grid.position = {-0.5f * kCells * kCellSize, 0.0f, kHeight};
  grid.dimX = kCells;
  grid.dimY = kCells;
  grid.cellX = kCellSize;
  grid.cellY = kCellSize;
  grid.mass = kParticleMass;
  grid.triangleMaterial = kMembrane;
  grid.edgeMaterial = kBending;
  grid.particleRadius = kParticleRadius;
  const int first = builder.addClothGrid(grid);
  builder.fixParticle(first);
  builder.fixParticle(first + kCells);
}

ModelDesc buildClothHanging(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any --scene-option: this scene has none
  ClothBuilder builder;
  if (options.meshPath.empty())
    addGridCloth(builder);
  else
    addMeshCloth(builder, options);
  ShapeDesc ground;
  ground.name = "ground";
  ground.geometry.type = ShapeType::Plane;  // z = 0, default material (ke 2.5e3, kd 100, mu 1)
  builder.addShape(ground);
  return builder.finalize();
}

std::vector<CheckResult> checkClothHanging(const CheckInput& in) {
  const float half = 0.5f * kCells * kCellSize;
  return {checkFinite(in),
          checkBounded(in, {-2.0f * half, -2.0f * half, -0.1f}, {2.0f * half, 3.0f * half, 2.0f}),
          checkAboveGround(in, 0.0f, kParticleRadius), checkSettled(in, 0.5f)};
}

}  // namespace

Scene makeClothHangingScene() {
  Scene scene;
  scene.name = "cloth_hanging";
  scene.aliases = {"hanging"};
  scene.description =
      "a 33x33 cloth held at two corners swings down and drapes onto the ground (no self-contact)";
  scene.fps = 60.0;
  scene.substeps = 10;
  scene.defaultFrames = 240;  // 4 s: long enough for the swing to settle
  // Not a benchmark scene; a short window so that weft bench's window is exercised on the CPU.
  scene.benchWindowFirst = 2;
  scene.benchWindowEnd = 5;
  scene.cloth.solver.iterations = 10;
  scene.cloth.solver.particleContact = {1.0e2f, 1.0e2f, 1.0f};  // reference example soft contact
  scene.cloth.build = buildClothHanging;
  scene.cloth.takesMesh = true;
  scene.cloth.checks = checkClothHanging;
  return scene;
}

}  // namespace weft
