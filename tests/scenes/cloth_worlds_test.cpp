// Many worlds of a cloth scene in one model (combineWorlds in solver/cloth_builder.h): world k of a
// batch is bit for bit the same scene run alone, on the CPU and on CUDA. The copies sit in the same
// place (zero spacing), so a self-contact between worlds, a particle touching another world's
// shape, or any dependence of one world on another would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "scenes/worlds.h"
#include "solver/cloth_builder.h"
#include "solver/model_desc.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

struct WorldRun {
  std::vector<Vec3> positions, velocities;
  ClothPart::ContactReport contacts;
};

WorldRun simulate(const Device& device, const Scene& scene, const ModelDesc& desc,
                  const SolverOptions& options, int frames) {
  Simulation sim(device, desc, options, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  return {sim.cloth().positions(), sim.cloth().velocities(), sim.cloth().contactReport()};
}

bool sameBits(const std::vector<Vec3>& batch, size_t first, const std::vector<Vec3>& alone) {
  return batch.size() >= first + alone.size() &&
         std::memcmp(batch.data() + first, alone.data(), alone.size() * sizeof(Vec3)) == 0;
}

/// Scene `name` as `options.worlds` worlds (a sweep when its values are lists or ranges): every
/// world of the batch, bit for bit, is that world's options run alone. `reuseSlack` > 0 turns on
/// kept lists (each world then decides on its own when to build them again).
void expectWorldsRunAsAlone(const Device& device, const Scene& scene, const SceneOptions& options,
                            int frames, float reuseSlack = -1.0f) {
  SCOPED_TRACE(scene.name + ", " + std::to_string(options.worlds) + " worlds on " +
               device.describe());
  SolverOptions solver = scene.cloth.solver;
  if (reuseSlack >= 0.0f) solver.selfContact.reuseSlack = reuseSlack;
  const ClothWorlds worlds = buildClothWorlds(scene, options);
  ASSERT_EQ(worlds.desc.worldRanges.count(), options.worlds);
  const WorldRun together = simulate(device, scene, worlds.desc, solver, frames);
  long long pairsAlone = 0;  // candidate pairs of the last frame's list builds, over the worlds
  for (int k = 0; k < worlds.count(); ++k) {
    const ModelDesc alone = scene.cloth.build(worldOptions(options, k, options.worlds));
    ASSERT_EQ(alone.numParticles(), worlds.size(k)) << "world " << k;
    const WorldRun single = simulate(device, scene, alone, solver, frames);
    if (reuseSlack > 0.0f)
      std::printf("[ info     ] world %d alone built its lists in %lld of %lld detections\n", k,
                  single.contacts.listBuilds, single.contacts.detections);
    pairsAlone += single.contacts.lastFrame.totalPairs;
    const size_t first = size_t(worlds.begin[size_t(k)]);
    EXPECT_TRUE(sameBits(together.positions, first, single.positions)) << "world " << k;
    EXPECT_TRUE(sameBits(together.velocities, first, single.velocities)) << "world " << k;
  }
  if (solver.selfContact.enabled) {
    EXPECT_GT(together.contacts.largest.maxVertexTriangle, 0) << "no self-contact was exercised";
    // Each world found its pairs, and built its lists, exactly when it did alone (with kept lists
    // the results would not show it: a kept list holds the same pairs within reach).
    EXPECT_EQ(together.contacts.lastFrame.totalPairs, pairsAlone);
  }
  if (reuseSlack > 0.0f) {
    EXPECT_LT(together.contacts.listBuilds, together.contacts.detections) << "no list was kept";
  }
}
void expectWorldsRunAsAlone(const Device& device, const std::string& name,
                            const SceneOptions& options, int frames, float reuseSlack = -1.0f) {
  expectWorldsRunAsAlone(device, findScene(name), options, frames, reuseSlack);
}

/// Two small sheets, the lower one `height` [m] above the ground, the other `gap` [m] above it and
/// falling `speed` [m/s] faster: self-contact from the first substep, small enough for the CPU.
Scene stackedSheets() {
  Scene scene;
  scene.name = "stacked_sheets";
  scene.fps = 60.0;
  scene.substeps = 5;
  scene.cloth.solver =
      findScene("cloth_fold").cloth.solver;  // self-contact radius 6 mm, margin 10 mm
  scene.cloth.build = [](const SceneOptions& options) {
    const std::vector<std::string> known = {"gap", "speed", "height"};
    const float gap = float(sceneOption(options, "gap", 0.008, known));
    const float speed = float(sceneOption(options, "speed", 0.0, known));
    const float height = float(sceneOption(options, "height", 0.05, known));
    ClothBuilder builder;
    for (int sheet = 0; sheet < 2; ++sheet) {
      ClothGridParams grid;
      grid.position = {0.0f, 0.003f * float(sheet), height + gap * float(sheet)};
      grid.velocity = {0.0f, 0.0f, -speed * float(sheet)};
      grid.dimX = grid.dimY = 6;
      grid.cellX = grid.cellY = 0.025f;
      grid.mass = 0.002f;
      grid.triangleMaterial = {1.0e3f, 1.0e3f, 1.0e1f};
      grid.edgeMaterial = {1.0e-1f, 0.0f};
      grid.particleRadius = 0.005f;
      builder.addClothGrid(grid);
    }
    ShapeDesc ground;
    ground.name = "ground";
    ground.geometry.type = ShapeType::Plane;
    builder.addShape(ground);
    return builder.finalize();
  };
  return scene;
}

SceneOptions worldsOf(int n, std::map<std::string, std::string> values = {}) {
  SceneOptions o;
  o.worlds = n;
  o.values = std::move(values);
  return o;
}

TEST(ClothWorlds, EachWorldOfABatchMatchesTheSceneAlone) {
  auto cpu = test::openCpu();
  expectWorldsRunAsAlone(*cpu, "cloth_hanging", worldsOf(3), 3);  // held corners, no contact
  // Self-contact and the ground, a sweep: the worlds' lists and contacts differ.
  const Scene sheets = stackedSheets();
  expectWorldsRunAsAlone(*cpu, sheets, worldsOf(3, {{"gap", "0.004,0.008,0.006"}}), 8);
  // Kept lists decided per world: one world's sheets lie on the ground, the other's fall, so the
  // first keeps its lists where the second builds them again.
  expectWorldsRunAsAlone(*cpu, sheets, worldsOf(2, {{"height", "0.0051,0.2"}}), 8, 0.002f);
}

TEST(ClothWorlds, CudaEachWorldOfABatchMatchesTheSceneAlone) {
  WEFT_REQUIRE_CUDA(gpu);
  expectWorldsRunAsAlone(*gpu, "cloth_hanging", worldsOf(16), 10);
  const Scene sheets = stackedSheets();
  expectWorldsRunAsAlone(*gpu, sheets, worldsOf(5, {{"gap", "0.004:0.009"}}), 20);
  expectWorldsRunAsAlone(*gpu, sheets, worldsOf(4, {{"height", "0.0051,0.3"}, {"speed", "0,0.4"}}),
                         20, 0.002f);
  expectWorldsRunAsAlone(*gpu, "cloth_fold", worldsOf(6, {{"cells", "6:16"}}), 30);
  expectWorldsRunAsAlone(*gpu, "cloth_fold", worldsOf(3, {{"cells", "8,12,24"}}), 30, 0.004f);
  expectWorldsRunAsAlone(*gpu, "cloth_rollers", worldsOf(3), 10);  // drivers
  expectWorldsRunAsAlone(*gpu, "cloth_twist", worldsOf(2), 100);   // winds onto itself late
  expectWorldsRunAsAlone(*gpu, "poker_cards", worldsOf(4), 10);
  expectWorldsRunAsAlone(*gpu, "cloth_franka", worldsOf(2), 5);  // sampled shape motion
}

TEST(ClothWorlds, CudaBatchMatchesTheCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_fold");
  const ClothWorlds worlds = buildClothWorlds(scene, worldsOf(3, {{"cells", "6,8,10"}}));
  const WorldRun onCpu = simulate(*cpu, scene, worlds.desc, scene.cloth.solver, 10);
  const WorldRun onGpu = simulate(*gpu, scene, worlds.desc, scene.cloth.solver, 10);
  ASSERT_EQ(onCpu.positions.size(), onGpu.positions.size());
  float worst = 0.0f;
  for (size_t i = 0; i < onCpu.positions.size(); ++i)
    worst = std::max(worst, length(onCpu.positions[i] - onGpu.positions[i]));
  EXPECT_LT(worst, 1e-4f) << "largest CPU/CUDA difference of a particle [m]";
}

TEST(ClothWorlds, CombiningLaysOutWorldsOneAfterAnother) {
  const Scene& scene = findScene("cloth_rollers");
  const ModelDesc desc = scene.cloth.build({});
  const ModelDesc* three[] = {&desc, &desc, &desc};
  const ModelDesc batch = combineWorlds(three, {3.0f, 0.0f, 0.0f});
  const int P = desc.numParticles(), T = desc.numTriangles(), E = desc.numEdges(),
            S = int(desc.shapes.size());
  ASSERT_EQ(batch.numParticles(), 3 * P);
  ASSERT_EQ(batch.worldRanges.count(), 3);
  EXPECT_EQ(batch.worldRanges.particles, (std::vector<int>{0, P, 2 * P, 3 * P}));
  EXPECT_EQ(batch.worldRanges.shapes, (std::vector<int>{0, S, 2 * S, 3 * S}));
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(batch.worlds[size_t(k * P)], k);
    EXPECT_FLOAT_EQ(batch.positions[size_t(k * P)].x, desc.positions[0].x + 3.0f * k);
    EXPECT_EQ(batch.triangles[size_t(k * T)].x, desc.triangles[0].x + k * P);
    EXPECT_EQ(batch.edges[size_t(k * E)].z, desc.edges[0].z + k * P);
    if (S > 0)
      EXPECT_FLOAT_EQ(batch.shapes[size_t(k * S)].motion.pose0.p.x,
                      desc.shapes[0].motion.pose0.p.x + 3.0f * k);
  }
  // Every color holds that color's particles of every world, and no triangle has two corners of
  // one color.
  EXPECT_EQ(batch.coloring.numColors(), desc.coloring.numColors());
  EXPECT_EQ(batch.coloring.colorOffsets.back(), 3 * P);
  std::vector<int> color(size_t(3 * P), -1);
  for (int c = 0; c < batch.coloring.numColors(); ++c)
    for (int i = batch.coloring.colorOffsets[size_t(c)];
         i < batch.coloring.colorOffsets[size_t(c) + 1]; ++i)
      color[size_t(batch.coloring.particlesByColor[size_t(i)])] = c;
  for (const Int3& t : batch.triangles) {
    EXPECT_NE(color[size_t(t.x)], color[size_t(t.y)]);
    EXPECT_NE(color[size_t(t.y)], color[size_t(t.z)]);
  }
  // Adjacency rows of world 2 name world 2's elements.
  const int v = 2 * P;
  for (int i = batch.adjacency.triangleOffsets[size_t(v)];
       i < batch.adjacency.triangleOffsets[size_t(v) + 1]; i += 2) {
    const Int3 t = batch.triangles[size_t(batch.adjacency.triangleEntries[size_t(i)])];
    EXPECT_TRUE(t.x == v || t.y == v || t.z == v);
  }
  const ModelDesc* none[] = {&batch};
  EXPECT_THROW(combineWorlds(none), Error);  // a model with worlds already
  EXPECT_THROW(combineWorlds(std::span<const ModelDesc* const>{}), Error);
}

}  // namespace
}  // namespace weft
