// The scene library: every scene builds with its expected counts and a valid coloring, names
// resolve (aliases too), and cloth_hanging runs to its default length on the CPU passing its
// checks.
#include "scenes/scene.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/runtime/errors.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

TEST(Scenes, EveryClothSceneBuildsAValidModel) {
  for (const Scene& scene : allScenes()) {
    SCOPED_TRACE(scene.name);
    if (scene.cable) continue;  // rigid models: tests/scenes/cable_scenes_test.cpp
    const ModelDesc desc = scene.build({});
    EXPECT_GT(desc.numParticles(), 0);
    EXPECT_FALSE(scene.description.empty());
    EXPECT_GT(scene.defaultFrames, 0);
    EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges,
                                   desc.coloring.includesBending),
              "");
  }
}

TEST(Scenes, ClothHangingHasTheGridCounts) {
  const ModelDesc desc = findScene("cloth_hanging").build({});
  EXPECT_EQ(desc.numParticles(), 33 * 33);
  EXPECT_EQ(desc.numTriangles(), 2 * 32 * 32);
  EXPECT_EQ(desc.numEdges(), 33 * 32 + 33 * 32 + 32 * 32);
  EXPECT_EQ(desc.shapes.size(), 1u);
  int held = 0;
  for (float m : desc.masses) held += m == 0.0f;
  EXPECT_EQ(held, 2);
}

TEST(Scenes, NamesAndAliasesResolve) {
  EXPECT_EQ(findScene("hanging").name, "cloth_hanging");
  try {
    findScene("pokr");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cloth_hanging"));
  }
}

TEST(Scenes, ClothHangingRunsToItsDefaultLengthAndPassesItsChecks) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.build({});
  Simulation sim(*cpu, desc, scene.solver, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < scene.defaultFrames; ++f) sim.advanceFrame();
  const auto x = sim.positions(), v = sim.velocities();
  for (const CheckResult& c : scene.checks({desc, x, v, scene.defaultFrames}))
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
}

}  // namespace
}  // namespace weft
