// The scene library: every scene builds with its expected counts and a valid coloring, names
// resolve (aliases too), cloth_hanging runs to its default length on the CPU passing its checks,
// cloth_fold's size option scales the sheet, and its 200 × 200 stress case runs on CUDA free of
// self-intersections in every frame; a run's grown contact capacities carried into the scene let a
// second run over the same frames grow nothing (what the tuner's verification relies on).
#include "scenes/scene.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/runtime/errors.h"
#include "scene_test_support.h"
#include "scenes/scene_runner.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

TEST(Scenes, EveryClothSceneBuildsAValidModel) {
  for (const Scene& scene : allScenes()) {
    SCOPED_TRACE(scene.name);
    if (!scene.hasCloth()) continue;  // rigid models: tests/scenes/cable_scenes_test.cpp
    const ModelDesc desc = scene.cloth.build({});
    EXPECT_GT(desc.numParticles(), 0);
    EXPECT_FALSE(scene.description.empty());
    EXPECT_GT(scene.defaultFrames, 0);
    EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges,
                                   desc.coloring.includesBending),
              "");
  }
}

// What `weft scenes` lists is what the builders take: the keys a builder names when it refuses an
// unknown one, and each listed default builds the scene's default model.
TEST(Scenes, EverySceneListsTheOptionsItsBuilderTakes) {
  const auto build = [](const Scene& scene, const SceneOptions& options) {
    return scene.hasCloth() ? scene.cloth.build(options).numParticles()
                            : scene.rigid.build(options).numBodies();
  };
  for (const Scene& scene : allScenes()) {
    SCOPED_TRACE(scene.name);
    std::string listed;
    for (const SceneOptionInfo& o : scene.options) {
      listed += (listed.empty() ? "" : ", ") + o.key;
      EXPECT_FALSE(o.meaning.empty());
    }
    SceneOptions unknown;
    unknown.values["no_such_option"] = "1";
    try {
      build(scene, unknown);
      ADD_FAILURE() << "an unknown scene option was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(
          e.what(),
          HasSubstr("(this scene knows: " + (listed.empty() ? std::string("none") : listed) + ")"));
    }
    const int plain = build(scene, {});
    for (const SceneOptionInfo& o : scene.options) {
      SceneOptions given;
      given.values[o.key] = o.defaultValue;
      EXPECT_EQ(build(scene, given), plain) << o.key << "=" << o.defaultValue;
    }
  }
}

TEST(Scenes, ClothHangingHasTheGridCounts) {
  const ModelDesc desc = findScene("cloth_hanging").cloth.build({});
  EXPECT_EQ(desc.numParticles(), 33 * 33);
  EXPECT_EQ(desc.numTriangles(), 2 * 32 * 32);
  EXPECT_EQ(desc.numEdges(), 33 * 32 + 33 * 32 + 32 * 32);
  EXPECT_EQ(desc.shapes.size(), 1u);
  int held = 0;
  for (float m : desc.masses) held += m == 0.0f;
  EXPECT_EQ(held, 2);
}

// cloth_fold's size option: (N + 1)² particles of the same 2.5 cm cells; bad values are errors.
TEST(Scenes, ClothFoldCellsOptionSizesTheSheet) {
  const Scene& fold = findScene("cloth_fold");
  EXPECT_EQ(fold.cloth.build({}).numParticles(), 25 * 25);
  SceneOptions big;
  big.values["cells"] = "200";
  const ModelDesc desc = fold.cloth.build(big);
  EXPECT_EQ(desc.numParticles(), 201 * 201);
  EXPECT_EQ(desc.numTriangles(), 2 * 200 * 200);
  float lo = 1e9f, hi = -1e9f;
  for (const Vec3& x : desc.positions) {
    lo = std::min(lo, x.x);
    hi = std::max(hi, x.x);
  }
  EXPECT_NEAR(hi - lo, 200 * 0.025 * std::sqrt(2.0), 1e-3);  // the diagonal lies along x
  for (const char* bad : {"1", "2.5", "-3", "1001", "many"}) {
    SceneOptions o;
    o.values["cells"] = bad;
    EXPECT_THROW(fold.cloth.build(o), Error) << bad;
  }
  SceneOptions unknown;
  unknown.values["size"] = "3";
  EXPECT_THROW(fold.cloth.build(unknown), Error);
}

// The self-contact stress case: a 200 × 200-cell sheet (40,401 particles) dropped over the
// scaled bar piles up in folds on the ground; 300 frames on CUDA with no self-intersection in any
// frame, every check passing and every candidate list complete (they grow on the way).
TEST(Scenes, LargeClothFoldOnCudaStaysFreeOfSelfIntersections) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& fold = findScene("cloth_fold");
  SceneOptions big;
  big.values["cells"] = "200";
  test::expectRunPassesChecks(*gpu, fold, fold.cloth.build(big), fold.cloth.solver, 300);
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
  const ModelDesc desc = scene.cloth.build({});
  Simulation sim(*cpu, desc, scene.cloth.solver, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < scene.defaultFrames; ++f) sim.advanceFrame();
  const auto x = sim.cloth().positions(), v = sim.cloth().velocities();
  for (const CheckResult& c : scene.cloth.checks({desc, x, v, scene.defaultFrames}))
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
}

/// Runs `scene` for `frames` frames from tiny contact capacities, carries what it grew into a
/// copy, and runs that copy over the same frames: it must grow nothing.
void expectCarriedCapacitiesGrowNothing(Scene tiny, const SceneOptions& options, int frames) {
  auto cpu = test::openCpu();
  Scene sized = tiny;
  std::unique_ptr<SceneRunner> first = makeSceneRunner(*cpu, tiny, options);
  for (int f = 0; f < frames; ++f) first->advanceFrame();
  ASSERT_FALSE(first->regrowths().empty()) << "the first run should have grown something";
  first->carryCapacitiesInto(sized);
  std::unique_ptr<SceneRunner> second = makeSceneRunner(*cpu, sized, options);
  for (int f = 0; f < frames; ++f) second->advanceFrame();
  const std::vector<std::string> grew = second->regrowths();
  EXPECT_TRUE(grew.empty()) << tiny.name << ": " << (grew.empty() ? "" : grew.front());
}

TEST(SceneRunner, CarriedCapacitiesLetASecondRunGrowNothing) {
  Scene fold = findScene("cloth_fold");
  fold.cloth.solver.selfContact.vertexTriangleCapacity = 1;
  fold.cloth.solver.selfContact.edgeEdgeCapacity = 1;
  fold.cloth.solver.selfContact.triangleVertexCapacity = 1;
  expectCarriedCapacitiesGrowNothing(fold, {}, 25);
  Scene pile = findScene("cable_pile");
  pile.rigid.solver.contactCapacity = 1;
  pile.rigid.solver.pairCapacity = 1;
  SceneOptions small;
  small.values["layers"] = "2";
  small.values["lanes"] = "2";
  expectCarriedCapacitiesGrowNothing(pile, small, 20);
}

}  // namespace
}  // namespace weft
