// Many worlds in one model (replicateWorlds, docs/ARCHITECTURE.md): world k of a batch is bit for
// bit the same scene run alone, on the CPU and on CUDA. The copies sit in the same place (zero
// spacing), so a contact between worlds, or any dependence of one world on another, would show.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"
#include "solver/rigid_simulation.h"
#include "test_support.h"

namespace weft {
namespace {

struct Run {
  std::vector<Transform> poses;
  std::vector<Vec3> linear, angular;
};

Run simulate(const Device& device, const Scene& scene, const RigidDesc& desc, int frames) {
  RigidSimulation sim(device, desc, scene.rigidSolver, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  return {sim.poses(), sim.linearVelocities(), sim.angularVelocities()};
}

template <class T>
bool sameBits(const std::vector<T>& batch, size_t first, const std::vector<T>& alone) {
  return batch.size() >= first + alone.size() &&
         std::memcmp(batch.data() + first, alone.data(), alone.size() * sizeof(T)) == 0;
}

void expectWorldsRunAsAlone(const Device& device, const std::string& name, int worlds, int frames,
                            const SceneOptions& options = {}) {
  SCOPED_TRACE(name + ", " + std::to_string(worlds) + " worlds");
  const Scene& scene = findScene(name);
  const RigidDesc desc = scene.buildRigid(options);
  const RigidDesc batch = replicateWorlds(desc, worlds);
  ASSERT_EQ(batch.numBodies(), worlds * desc.numBodies());
  const Run alone = simulate(device, scene, desc, frames);
  const Run together = simulate(device, scene, batch, frames);
  const size_t B = size_t(desc.numBodies());
  for (int k = 0; k < worlds; ++k) {
    EXPECT_TRUE(sameBits(together.poses, size_t(k) * B, alone.poses)) << "world " << k;
    EXPECT_TRUE(sameBits(together.linear, size_t(k) * B, alone.linear)) << "world " << k;
    EXPECT_TRUE(sameBits(together.angular, size_t(k) * B, alone.angular)) << "world " << k;
  }
}

TEST(CableWorlds, EachWorldOfABatchMatchesTheSceneAlone) {
  auto cpu = test::openCpu();
  expectWorldsRunAsAlone(*cpu, "cable_y_junction", 3, 6);
  expectWorldsRunAsAlone(*cpu, "cable_twist", 3, 4);
  expectWorldsRunAsAlone(*cpu, "cable_bundle_hysteresis", 2, 4);
  SceneOptions smallPile;  // 400 shapes: the all-pairs broad phase
  smallPile.values["layers"] = "1";
  expectWorldsRunAsAlone(*cpu, "cable_pile", 2, 4, smallPile);
  SceneOptions treePile;  // 800 shapes: the tree, with kept partner lists
  treePile.values["layers"] = "2";
  expectWorldsRunAsAlone(*cpu, "cable_pile", 2, 4, treePile);
}

TEST(CableWorlds, CudaEachWorldOfABatchMatchesTheSceneAlone) {
  WEFT_REQUIRE_CUDA(gpu);
  expectWorldsRunAsAlone(*gpu, "cable_y_junction", 16, 10);
  expectWorldsRunAsAlone(*gpu, "cable_twist", 8, 10);
  expectWorldsRunAsAlone(*gpu, "cable_bundle_hysteresis", 4, 10);
  SceneOptions smallPile;
  smallPile.values["layers"] = "1";
  expectWorldsRunAsAlone(*gpu, "cable_pile", 4, 10, smallPile);
  expectWorldsRunAsAlone(*gpu, "cable_pile", 2, 30);  // the default pile: tree, kept lists
}

TEST(CableWorlds, ReplicationLaysOutWorldsOneAfterAnother) {
  const RigidDesc desc = findScene("cable_y_junction").buildRigid({});
  const RigidDesc batch = replicateWorlds(desc, 3, {2.0f, 0.0f, 0.0f});
  const int B = desc.numBodies(), S = desc.numShapes(), J = desc.numJoints();
  ASSERT_EQ(batch.numShapes(), 3 * S);
  ASSERT_EQ(batch.numJoints(), 3 * J);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(batch.shapes[size_t(k * S)].world, k);
    EXPECT_EQ(batch.joints[size_t(k * J)].child, desc.joints[0].child + k * B);
    EXPECT_FLOAT_EQ(batch.bodies[size_t(k * B)].pose.p.x, desc.bodies[0].pose.p.x + 2.0f * k);
  }
  // Every color holds that color's bodies of every world, and no two jointed bodies share one.
  ASSERT_EQ(batch.bodyColorOffsets.size(), desc.bodyColorOffsets.size());
  EXPECT_EQ(batch.bodyColorOffsets.back(), 3 * B);
  std::vector<int> color(size_t(3 * B), -1);
  for (size_t c = 0; c + 1 < batch.bodyColorOffsets.size(); ++c)
    for (int i = batch.bodyColorOffsets[c]; i < batch.bodyColorOffsets[c + 1]; ++i)
      color[size_t(batch.bodiesByColor[size_t(i)])] = int(c);
  for (const JointDesc& j : batch.joints)
    if (j.parent >= 0) EXPECT_NE(color[size_t(j.parent)], color[size_t(j.child)]);
  EXPECT_THROW(replicateWorlds(desc, 0), Error);
  EXPECT_THROW(replicateWorlds(batch, 2), Error);
}

}  // namespace
}  // namespace weft
