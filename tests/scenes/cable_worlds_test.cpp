// Many worlds in one model (replicateWorlds, docs/ARCHITECTURE.md): world k of a batch is bit for
// bit the same scene run alone, on the CPU and on CUDA. The copies sit in the same place (zero
// spacing), so a contact between worlds, or any dependence of one world on another, would show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch_table.h"
#include "scenes/scene.h"
#include "scenes/worlds.h"
#include "solver/cable_builder.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

struct Run {
  std::vector<Transform> poses;
  std::vector<Vec3> linear, angular;
};

Run simulate(const Device& device, const Scene& scene, const RigidDesc& desc, int frames,
             const RigidSolverOptions* options = nullptr) {
  Simulation sim(device, desc, options ? *options : scene.rigid.solver, 1.0 / scene.fps,
                 scene.substeps);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  return {sim.rigid().poses(), sim.rigid().linearVelocities(), sim.rigid().angularVelocities()};
}

template <class T>
bool sameBits(const std::vector<T>& batch, size_t first, const std::vector<T>& alone) {
  return batch.size() >= first + alone.size() &&
         std::memcmp(batch.data() + first, alone.data(), alone.size() * sizeof(T)) == 0;
}

/// World k of `together` (bodies k·B … k·B + B − 1) is `alone`, bit for bit.
void expectEveryWorldIsAlone(const Run& together, const Run& alone, int worlds) {
  const size_t B = alone.poses.size();
  for (int k = 0; k < worlds; ++k) {
    EXPECT_TRUE(sameBits(together.poses, size_t(k) * B, alone.poses)) << "world " << k;
    EXPECT_TRUE(sameBits(together.linear, size_t(k) * B, alone.linear)) << "world " << k;
    EXPECT_TRUE(sameBits(together.angular, size_t(k) * B, alone.angular)) << "world " << k;
  }
}

/// `allPairsRuns`: the batch's all-pairs broad phase by runs of a world's shapes
/// (rigid_broad_phase_all_pairs_runs, which the defaults take from 1024 worlds on), the scene
/// alone's per shape.
void expectWorldsRunAsAlone(const Device& device, const std::string& name, int worlds, int frames,
                            const SceneOptions& options = {}, bool allPairsRuns = false) {
  SCOPED_TRACE(name + ", " + std::to_string(worlds) + " worlds" +
               (allPairsRuns ? ", all pairs by runs" : ""));
  const Scene& scene = findScene(name);
  const RigidDesc desc = scene.rigid.build(options);
  const RigidDesc batch = replicateWorlds(desc, worlds);
  ASSERT_EQ(batch.numBodies(), worlds * desc.numBodies());
  RigidSolverOptions batchOptions = scene.rigid.solver;
  if (allPairsRuns) batchOptions.allPairsRunsFromWorlds = 1;
  const Run alone = simulate(device, scene, desc, frames);
  const Run together = simulate(device, scene, batch, frames, &batchOptions);
  expectEveryWorldIsAlone(together, alone, worlds);
}

TEST(CableWorlds, EachWorldOfABatchMatchesTheSceneAlone) {
  auto cpu = test::openCpu();
  expectWorldsRunAsAlone(*cpu, "cable_y_junction", 3, 6);
  expectWorldsRunAsAlone(*cpu, "cable_twist", 3, 4);
  expectWorldsRunAsAlone(*cpu, "cable_y_junction", 3, 6, {}, true);
  expectWorldsRunAsAlone(*cpu, "cable_twist", 3, 4, {}, true);
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
  expectWorldsRunAsAlone(*gpu, "cable_y_junction", 16, 10, {}, true);
  expectWorldsRunAsAlone(*gpu, "cable_twist", 8, 10, {}, true);
  expectWorldsRunAsAlone(*gpu, "cable_bundle_hysteresis", 4, 10);
  SceneOptions smallPile;
  smallPile.values["layers"] = "1";
  expectWorldsRunAsAlone(*gpu, "cable_pile", 4, 10, smallPile);
  expectWorldsRunAsAlone(*gpu, "cable_pile", 2, 30);  // the default pile: tree, kept lists
}

// The launch table gives large batches the one-lane body solve (cable_twist@1024, cable_pile@64)
// and the scene alone wide tiles, so world k of such a batch matches the scene alone only if the
// one-lane tile gives the wide tiles' bits, row for row, for as long as the rows keep changing.
// (solver_avbd_test's six frames of a small pile did not catch a one-lane tile that left the wide
// tiles' bits on the twist's 20th frame: docs/PERFORMANCE.md, "Each part's first load one part
// ahead".)
void expectOneLaneBatchRunsAsWideAlone(Device& gpu, const std::string& name, int worlds,
                                       int frames) {
  SCOPED_TRACE(name + ", " + std::to_string(worlds) + " worlds on one lane");
  const Scene& scene = findScene(name);
  const RigidDesc desc = scene.rigid.build({});
  LaunchPolicy wide, oneLane;
  for (KernelId id :
       {KernelId::solve_rigid_body_tile, KernelId::solve_rigid_body_tile_folding_duals}) {
    wide.setOverride(id, 32);
    oneLane.setOverride(id, 1);
  }
  gpu.setLaunchPolicy(wide);
  const Run alone = simulate(gpu, scene, desc, frames);
  gpu.setLaunchPolicy(oneLane);
  const Run together = simulate(gpu, scene, replicateWorlds(desc, worlds), frames);
  gpu.setLaunchPolicy(LaunchPolicy{});
  expectEveryWorldIsAlone(together, alone, worlds);
}

TEST(CableWorlds, CudaBatchOnOneLaneTilesMatchesTheSceneAloneOnWideTiles) {
  WEFT_REQUIRE_CUDA(gpu);
  expectOneLaneBatchRunsAsWideAlone(*gpu, "cable_twist", 4, 24);
  expectOneLaneBatchRunsAsWideAlone(*gpu, "cable_pile", 2, 30);
  expectOneLaneBatchRunsAsWideAlone(*gpu, "cable_y_junction", 4, 20);
}

// A batch that no tuned batch covers runs its tile launches at half the table's size where that
// takes one wave instead of two (LaunchPolicy::narrowsToOneWave): 64 y_junction worlds, whose
// colors' body solves at the 32 lanes of a one-world entry take two waves of an H100 or H200
// (docs/TUNING.md), give the bits of the same batch held at 32 lanes.
TEST(CableWorlds, CudaTilesNarrowedToOneWaveChangeNoBit) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& scene = findScene("cable_y_junction");
  const int worlds = 64;
  const RigidDesc batch = replicateWorlds(scene.rigid.build({}), worlds);
  RigidSolverOptions perColor = scene.rigid.solver;
  perColor.iterationLaunches = IterationLaunches::PerColor;
  LaunchTable table;
  table.gpu = *gpu->gpuIdentity();
  table.kernels[KernelId::solve_rigid_body_tile] = {32, 32, 1.0};
  const LaunchPolicy narrowing = LaunchPolicy::resolve(
      &table, "cable_y_junction", table.gpu.ccMajor, table.gpu.ccMinor, worlds);
  ASSERT_TRUE(narrowing.narrowsToOneWave(KernelId::solve_rigid_body_tile));
  struct Sizes final : LaunchObserver {
    void onLaunch(const LaunchRecord& record) override {
      if (record.id == KernelId::solve_rigid_body_tile) sizes.push_back(record.size);
    }
    std::vector<int> sizes;
  } sizes;
  gpu->setLaunchPolicy(narrowing);
  gpu->setObserver(&sizes);
  struct Detach {  // the observer and the policy leave the device even if a run throws
    Device& device;
    ~Detach() {
      device.setObserver(nullptr);
      device.setLaunchPolicy(LaunchPolicy{});
    }
  } detach{*gpu};
  const weft::Run narrowed = simulate(*gpu, scene, batch, 6, &perColor);
  gpu->setObserver(nullptr);
  LaunchPolicy held = narrowing;
  held.setOverride(KernelId::solve_rigid_body_tile, 32);
  gpu->setLaunchPolicy(held);
  const weft::Run wide = simulate(*gpu, scene, batch, 6, &perColor);
  expectEveryWorldIsAlone(narrowed, wide, 1);
  ASSERT_FALSE(sizes.sizes.empty());
  const long narrowedLaunches = std::count(sizes.sizes.begin(), sizes.sizes.end(), 16);
  for (int size : sizes.sizes) EXPECT_TRUE(size == 16 || size == 32) << size;
  RecordProperty("launches_narrowed_to_16_lanes", int(narrowedLaunches));
  RecordProperty("launches", int(sizes.sizes.size()));
}

// A substep's iterations per world (IterationLaunches::PerWorld: one launch, a group of lanes
// per world) against the launches per color and iteration: world k of a batch solved per
// world is the scene alone solved per color, bit for bit, for `lanes` lanes a world (0: the
// table's). The per-world kernel inlines the one-lane tile's own tree and calls the same body
// solve and dual step, so it must agree by construction; this checks that it does.
void expectWorldIterationsRunAsColors(Device& device, const std::string& name, int worlds,
                                      int frames, int lanes = 0, const SceneOptions& options = {}) {
  SCOPED_TRACE(name + ", " + std::to_string(worlds) + " worlds, iterations per world on " +
               std::to_string(lanes) + " lanes");
  const Scene& scene = findScene(name);
  const RigidDesc desc = scene.rigid.build(options);
  RigidSolverOptions colors = scene.rigid.solver, perWorld = scene.rigid.solver;
  colors.iterationLaunches = IterationLaunches::PerColor;
  perWorld.iterationLaunches = IterationLaunches::PerWorld;
  const Run alone = simulate(device, scene, desc, frames, &colors);
  LaunchPolicy policy;
  if (lanes > 0) policy.setOverride(KernelId::solve_rigid_world_iterations, lanes);
  device.setLaunchPolicy(policy);
  const Run together = simulate(device, scene, replicateWorlds(desc, worlds), frames, &perWorld);
  device.setLaunchPolicy(LaunchPolicy{});
  expectEveryWorldIsAlone(together, alone, worlds);
}

TEST(CableWorlds, IterationsPerWorldAreTheLaunchesPerColor) {
  auto cpu = test::openCpu();
  expectWorldIterationsRunAsColors(*cpu, "cable_y_junction", 3, 6);
  expectWorldIterationsRunAsColors(*cpu, "cable_twist", 2, 4);
  expectWorldIterationsRunAsColors(*cpu, "cable_bundle_hysteresis", 2, 4);
  SceneOptions smallPile;
  smallPile.values["layers"] = "1";
  expectWorldIterationsRunAsColors(*cpu, "cable_pile", 2, 4, 0, smallPile);
}

TEST(CableWorlds, CudaIterationsPerWorldAreTheLaunchesPerColorForEveryGroupSize) {
  WEFT_REQUIRE_CUDA(gpu);
  for (int lanes : kGroupSizes)
    expectWorldIterationsRunAsColors(*gpu, "cable_y_junction", 3, 6, lanes);
  expectWorldIterationsRunAsColors(*gpu, "cable_twist", 4, 24);
  expectWorldIterationsRunAsColors(*gpu, "cable_twist", 2, 6, 8);
  expectWorldIterationsRunAsColors(*gpu, "cable_y_junction", 4, 20);
  expectWorldIterationsRunAsColors(*gpu, "cable_bundle_hysteresis", 2, 10);
  expectWorldIterationsRunAsColors(*gpu, "cable_pile", 2, 30);  // the default pile
}

/// The joints' dual step in the blocks (RigidSolverOptions::jointDualsInBlocksUpToWorldColor,
/// here forced on for every model) against the dual step's own launch or pass after every
/// iteration, for `worlds` copies of the scene with the given iteration launches: the same poses,
/// velocities and joint multipliers, bit for bit.
void expectJointDualsInBlocksChangeNothing(const Device& device, const std::string& name,
                                           int worlds, int frames, IterationLaunches launches,
                                           const SceneOptions& sceneOptions = {}) {
  SCOPED_TRACE(name + ", " + std::to_string(worlds) + " worlds" +
               (launches == IterationLaunches::PerWorld ? ", iterations per world" : ""));
  const Scene& scene = findScene(name);
  const RigidDesc desc = replicateWorlds(scene.rigid.build(sceneOptions), worlds);
  const auto run = [&](bool inBlocks, std::vector<RodMultipliers>& lambda) {
    RigidSolverOptions o = scene.rigid.solver;
    o.iterationLaunches = launches;
    o.jointDualsInBlocksUpToWorldColor = inBlocks ? 1 << 30 : 0;
    Simulation sim(device, desc, o, 1.0 / scene.fps, scene.substeps);
    EXPECT_EQ(sim.rigid().solver().jointDualsInBlocks(), inBlocks);
    for (int f = 0; f < frames; ++f) sim.advanceFrame();
    lambda = sim.rigid().state().jointLambda.download();
    return Run{sim.rigid().poses(), sim.rigid().linearVelocities(),
               sim.rigid().angularVelocities()};
  };
  std::vector<RodMultipliers> inBlocks, separate;
  expectEveryWorldIsAlone(run(true, inBlocks), run(false, separate), 1);
  ASSERT_EQ(inBlocks.size(), separate.size());
  EXPECT_EQ(std::memcmp(inBlocks.data(), separate.data(), inBlocks.size() * sizeof(RodMultipliers)),
            0);
}

// On the CPU the same arithmetic in the same order, so the same bits: the single y_junction
// (the rows' duals folded), the twist (kinematic ends, whose dynamic neighbour takes the dual
// step; a launch per iteration), the bundle (Dahl friction), a pile (contacts) and a y_junction
// batch whose iterations run per world. On CUDA the block and the dual step's own function are
// compiled apart and may contract their products differently, so the two settings may differ in
// the last bits there; what must hold on CUDA is that every launch path of one setting agrees
// bit for bit (the tests above, which run the default: in the blocks for the y_junction, not for
// the others).
TEST(CableWorlds, JointDualsInBlocksChangeNothing) {
  auto cpu = test::openCpu();
  expectJointDualsInBlocksChangeNothing(*cpu, "cable_y_junction", 1, 6, IterationLaunches::Auto);
  expectJointDualsInBlocksChangeNothing(*cpu, "cable_twist", 1, 3, IterationLaunches::Auto);
  expectJointDualsInBlocksChangeNothing(*cpu, "cable_bundle_hysteresis", 1, 3,
                                        IterationLaunches::Auto);
  SceneOptions smallPile;
  smallPile.values["layers"] = "1";
  expectJointDualsInBlocksChangeNothing(*cpu, "cable_pile", 1, 3, IterationLaunches::Auto,
                                        smallPile);
  expectJointDualsInBlocksChangeNothing(*cpu, "cable_y_junction", 3, 6,
                                        IterationLaunches::PerWorld);
}

// Which scenes take the joints' dual step in their blocks by default: those whose worlds have at
// most 32 bodies of a color (the y_junction, 30), not the twist (96), the bundle or the pile;
// the same for one world and a batch, so that every launch path of a scene decides alike.
TEST(CableWorlds, SmallWorldsTakeTheJointDualsInTheirBlocks) {
  auto cpu = test::openCpu();
  for (const auto& [name, expected] :
       std::vector<std::pair<std::string, bool>>{{"cable_y_junction", true},
                                                 {"cable_twist", false},
                                                 {"cable_bundle_hysteresis", false},
                                                 {"cable_pile", false}})
    for (int worlds : {1, 2}) {
      const Scene& scene = findScene(name);
      Simulation sim(*cpu, replicateWorlds(scene.rigid.build({}), worlds), scene.rigid.solver,
                     1.0 / scene.fps, scene.substeps);
      EXPECT_EQ(sim.rigid().solver().jointDualsInBlocks(), expected)
          << name << ", " << worlds << " worlds";
    }
}

bool autoLaunchesPerWorld(const Device& device, const std::string& name, int worlds) {
  const Scene& scene = findScene(name);
  RigidSolverOptions options = scene.rigid.solver;
  options.iterationLaunches = IterationLaunches::Auto;
  const Simulation sim(device, replicateWorlds(scene.rigid.build({}), worlds), options,
                       1.0 / scene.fps, scene.substeps);
  return sim.rigid().solver().iteratesPerWorld();
}

// Auto takes the launch per world only where the H100 measured it faster (docs/PERFORMANCE.md,
// "A substep's iterations per world"): on CUDA, batches of worlds with at most 32 bodies of a
// color from 128 worlds on; never on the CPU.
TEST(CableWorlds, AutoLaunchesIterationsPerWorldOnlyWhereItWins) {
  auto cpu = test::openCpu();
  EXPECT_FALSE(autoLaunchesPerWorld(*cpu, "cable_y_junction", 256));
}

TEST(CableWorlds, CudaAutoLaunchesIterationsPerWorldOnlyWhereItWins) {
  WEFT_REQUIRE_CUDA(gpu);
  EXPECT_TRUE(autoLaunchesPerWorld(*gpu, "cable_y_junction", 256));  // 30 bodies a color
  EXPECT_TRUE(autoLaunchesPerWorld(*gpu, "cable_y_junction", 1024));
  EXPECT_FALSE(autoLaunchesPerWorld(*gpu, "cable_y_junction", 16));   // too few worlds
  EXPECT_TRUE(autoLaunchesPerWorld(*gpu, "cable_y_junction", 8192));  // eight waves
  EXPECT_FALSE(autoLaunchesPerWorld(*gpu, "cable_twist", 256));       // 96 bodies a color
}

// The per-world launch needs each world's bodies as ranges; a model of several worlds that does
// not say where they are is refused with a reason, not solved wrongly.
TEST(CableWorlds, IterationsPerWorldNeedTheWorldRanges) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cable_y_junction");
  RigidDesc batch = replicateWorlds(scene.rigid.build({}), 2);
  RigidSolverOptions perWorld = scene.rigid.solver;
  perWorld.iterationLaunches = IterationLaunches::PerWorld;
  batch.worldBodyOffsets.clear();
  batch.worldJointOffsets.clear();
  EXPECT_THROW(
      {
        try {
          Simulation sim(*cpu, batch, perWorld, 1.0 / scene.fps, scene.substeps);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("cannot run per world"), std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  RigidDesc shifted = replicateWorlds(scene.rigid.build({}), 2);
  shifted.worldBodyOffsets[1] += 1;  // world 1 would start at its second body
  EXPECT_THROW(validateRigidDesc(shifted), Error);
}

// begin_rigid_step and update_rigid_duals serve the contact-row slots with a stride where the
// capacity is large (RigidSolverOptions::rowSlotItems, kernels/avbd.cuh rowSlotStride): the same
// bits as a thread per slot. rowSlotItems = 1 strides a twisted cable (about four rows a body) by
// a quarter of its slots, so most items serve several slots that hold rows.
void expectStridedRowSlotsChangeNoBit(const Device& device, int worlds) {
  SCOPED_TRACE(std::to_string(worlds) + " worlds");
  const Scene& scene = findScene("cable_twist");
  const RigidDesc desc = replicateWorlds(scene.rigid.build({}), worlds);
  RigidSolverOptions strided = scene.rigid.solver;
  strided.rowSlotItems = 1;
  Simulation perSlot(device, desc, scene.rigid.solver, 1.0 / scene.fps, scene.substeps);
  Simulation sim(device, desc, strided, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < 4; ++f) {
    perSlot.advanceFrame();
    sim.advanceFrame();
  }
  const RigidPart::ContactReport& report = sim.rigid().contactReport();
  const int slots = report.rowCapacity;
  ASSERT_LT(slots, scene.rigid.solver.rowSlotItems) << "the default must keep a thread per slot";
  const int stride = rowSlotStride(slots, std::max(desc.numBodies(), desc.numJoints()), 1);
  EXPECT_GT(report.lastFrameRows, 2 * stride) << "too few rows for the strided slots to hold any";
  EXPECT_TRUE(sameBits(sim.rigid().poses(), 0, perSlot.rigid().poses()));
  EXPECT_TRUE(sameBits(sim.rigid().linearVelocities(), 0, perSlot.rigid().linearVelocities()));
  EXPECT_TRUE(sameBits(sim.rigid().angularVelocities(), 0, perSlot.rigid().angularVelocities()));
}

TEST(CableWorlds, StridedRowSlotsChangeNoBit) {
  expectStridedRowSlotsChangeNoBit(*test::openCpu(), 1);
  RigidSolverOptions none;
  none.rowSlotItems = 0;
  EXPECT_THROW(none.validate(), Error);
}

TEST(CableWorlds, AllPairsRunsFromWorldsMustBePositive) {
  RigidSolverOptions none;
  none.allPairsRunsFromWorlds = 0;
  EXPECT_THROW(none.validate(), Error);
}

TEST(CableWorlds, CudaStridedRowSlotsChangeNoBit) {
  WEFT_REQUIRE_CUDA(gpu);
  expectStridedRowSlotsChangeNoBit(*gpu, 8);
}

TEST(CableWorlds, ReplicationLaysOutWorldsOneAfterAnother) {
  const RigidDesc desc = findScene("cable_y_junction").rigid.build({});
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

/// A sweep (scenes/worlds.h): each world is built with its own options, and world k of the batch is
/// bit for bit that world run alone, also when the worlds differ in size and in colors.
void expectSweepWorldsRunAsAlone(const Device& device, const std::string& name,
                                 const SceneOptions& options, int frames) {
  SCOPED_TRACE(name + ", " + std::to_string(options.worlds) + " worlds");
  const Scene& scene = findScene(name);
  const RigidWorlds worlds = buildRigidWorlds(scene, options);
  const Run together = simulate(device, scene, worlds.desc, frames);
  for (int k = 0; k < worlds.count(); ++k) {
    const RigidDesc alone = scene.rigid.build(worldOptions(options, k, options.worlds));
    ASSERT_EQ(alone.numBodies(), worlds.size(k)) << "world " << k;
    const Run single = simulate(device, scene, alone, frames);
    const size_t first = size_t(worlds.begin[size_t(k)]);
    EXPECT_TRUE(sameBits(together.poses, first, single.poses)) << "world " << k;
    EXPECT_TRUE(sameBits(together.linear, first, single.linear)) << "world " << k;
    EXPECT_TRUE(sameBits(together.angular, first, single.angular)) << "world " << k;
  }
}

TEST(CableWorlds, EachWorldOfASweepMatchesItsOptionsAlone) {
  auto cpu = test::openCpu();
  SceneOptions shear;  // same size, different stiffness: a list over three worlds
  shear.worlds = 3;
  shear.values["shear"] = "1e4,3e4,1e5";
  expectSweepWorldsRunAsAlone(*cpu, "cable_cantilever", shear, 5);
  SceneOptions layers;  // different sizes (400 and 800 bodies): a range over two worlds
  layers.worlds = 2;
  layers.values["layers"] = "1:2";
  expectSweepWorldsRunAsAlone(*cpu, "cable_pile", layers, 3);
}

TEST(CableWorlds, CudaEachWorldOfASweepMatchesItsOptionsAlone) {
  WEFT_REQUIRE_CUDA(gpu);
  SceneOptions shear;
  shear.worlds = 8;
  shear.values["shear"] = "1e4:1e5";
  expectSweepWorldsRunAsAlone(*gpu, "cable_cantilever", shear, 10);
  SceneOptions layers;
  layers.worlds = 3;
  layers.values["layers"] = "1,2";
  expectSweepWorldsRunAsAlone(*gpu, "cable_pile", layers, 10);
}

TEST(CableWorlds, ListsAndRangesAreSpreadOverTheWorlds) {
  SceneOptions o;
  o.worlds = 5;
  o.values = {{"a", "1,2"}, {"b", "10:20"}, {"c", "7"}};
  EXPECT_TRUE(optionsVaryOverWorlds(o));
  const std::vector<std::string> a = {"1", "2", "1", "2", "1"};
  const std::vector<std::string> b = {"10", "12.5", "15", "17.5", "20"};
  for (int k = 0; k < 5; ++k) {
    const SceneOptions w = worldOptions(o, k, 5);
    EXPECT_EQ(w.values.at("a"), a[size_t(k)]) << k;
    EXPECT_EQ(w.values.at("b"), b[size_t(k)]) << k;
    EXPECT_EQ(w.values.at("c"), "7");
    EXPECT_EQ(w.worlds, 1);
  }
  SceneOptions plain;
  plain.values["c"] = "7";
  EXPECT_FALSE(optionsVaryOverWorlds(plain));
  SceneOptions bad;
  bad.values["b"] = "1:x";
  EXPECT_THROW(worldOptions(bad, 0, 2), Error);
  bad.values["b"] = "1,,2";
  EXPECT_THROW(worldOptions(bad, 0, 2), Error);
  // A list or range without worlds to spread over is refused; so is a scene without a rigid part.
  SceneOptions single;
  single.values["shear"] = "1e4,1e5";
  EXPECT_THROW(buildRigidWorlds(findScene("cable_cantilever"), single), Error);
  EXPECT_THROW(buildRigidWorlds(findScene("cloth_hanging"), {}), Error);
}

TEST(CableWorlds, ChecksAreCountedOverTheWorlds) {
  const std::vector<std::vector<CheckResult>> perWorld = {
      {{"finite", true, "ok 0"}, {"tip", true, "1%"}, {"connected", true, "1 group", true}},
      {{"finite", true, "ok 1"}, {"tip", false, "40%"}, {"connected", true, "1 group", true}},
      {{"finite", true, "ok 2"}, {"tip", false, "50%"}, {"connected", true, "1 group", true}}};
  const std::vector<WorldCheckSummary> s = summarizeWorldChecks(perWorld);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].passing, 3);
  EXPECT_TRUE(s[0].pass());
  EXPECT_EQ(s[0].detail, "world 0: ok 0");
  EXPECT_EQ(s[1].passing, 1);
  EXPECT_EQ(s[1].failing, (std::vector<int>{1, 2}));
  EXPECT_FALSE(s[1].pass());
  EXPECT_EQ(s[1].detail, "world 1: 40%");
  EXPECT_TRUE(s[2].pass());
  const std::vector<CheckResult> r = worldCheckResults(s);
  EXPECT_EQ(r[1].detail, "1/3 worlds pass (failing: 1 2); world 1: 40%");
  EXPECT_FALSE(r[1].pass);
  EXPECT_TRUE(r[2].informational);
}

}  // namespace
}  // namespace weft
