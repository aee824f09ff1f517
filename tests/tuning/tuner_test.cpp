// The tuner: its report and table on synthetic results (CPU), and on the GPU that the recorder
// sees every launch of a step once with the launch sizes in effect, and that a sweep leaves every
// device buffer bit-identical.
#include "tuning/tuner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "kernels/runtime/snapshot.h"
#include "scenes/scene.h"
#include "scenes/scene_runner.h"
#include "test_support.h"
#include "tuning/tuning_report.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TuneResult syntheticResult() {
  TuneResult r;
  r.seconds = 12.0;
  r.table.gpu = {"NVIDIA H100 80GB HBM3", 9, 0, 132};
  r.table.provenance = {"580", "13.0", "2026-11-21", "abc", {"poker_cards", "cloth_twist"}, "t"};
  for (const char* name : {"poker_cards", "cloth_twist"}) {
    SceneTuning s;
    s.scene = name;
    s.measurementFrame = 12;
    s.contactPairs = 3456;
    KernelTuning& k = s.kernels[KernelId::vertex_triangle_collision_detection];
    k.costs = {{8, 50.0}, {16, 70.0}, {256, 120.0}};
    k.optimum = pickSize(k.costs, 16);
    k.skipped[512] = "kernel x: a block of 512 threads needs 67584 B of shared memory (x:1)";
    k.resourcesAtDefault = {70, 0, 0, 2112, 1024};
    s.stepUsDefault = 1000.0;
    s.stepUsOverall = 800.0;
    s.stepUsPerScene = 790.0;
    r.scenes.push_back(s);
  }
  r.overall[KernelId::vertex_triangle_collision_detection] =
      pickOverallSize({{"poker_cards", r.scenes[0].kernels.begin()->second.costs},
                       {"cloth_twist", r.scenes[1].kernels.begin()->second.costs}},
                      16, Objective::GeometricMeanSpeedup);
  r.table.kernels[KernelId::vertex_triangle_collision_detection] = {8, 16, 1.4};
  return r;
}

TEST(TuningReport, MarkdownHasPerKernelAndEndToEndTables) {
  const std::string md =
      tuningReportMarkdown(syntheticResult(), "kernels/runtime/tables/h100.json");
  EXPECT_THAT(md, HasSubstr("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"));
  EXPECT_THAT(md, HasSubstr("| vertex_triangle_collision_detection | 16 |"));
  EXPECT_THAT(md, HasSubstr("8: 50.0 µs (1.40×)"));
  EXPECT_THAT(md, HasSubstr("**8**"));
  EXPECT_THAT(md, HasSubstr("70 regs, 2112 B shared/block"));
  EXPECT_THAT(md, HasSubstr("at 512: kernel x: a block of 512 threads needs 67584 B"));
  EXPECT_THAT(md, HasSubstr("| poker_cards | 1000.0 | 800.0 (1.25×) | 790.0 (1.27×)"));
}

TEST(TuningReport, WritesMarkdownPlotsAndAValidTable) {
  const fs::path dir =
      fs::temp_directory_path() / ("weft_report_" + std::to_string(std::random_device{}()));
  const TuneResult r = syntheticResult();
  const auto files = writeTuningReport(r, dir.string(), (dir / "t.json").string());
  ASSERT_EQ(files.size(), 3u);
  for (const auto& f : files) EXPECT_TRUE(fs::exists(f)) << f;
  std::ifstream svg(dir / "tuning_per_kernel.svg");
  std::stringstream text;
  text << svg.rdbuf();
  EXPECT_EQ(text.str().rfind("<svg", 0), 0u);
  EXPECT_THAT(text.str(), HasSubstr("vertex_triangle_collision_detection"));
  EXPECT_THAT(text.str(), HasSubstr("</svg>"));
  r.table.save((dir / "t.json").string());
  const LaunchTable back = LaunchTable::load((dir / "t.json").string());
  EXPECT_EQ(back.kernels.at(KernelId::vertex_triangle_collision_detection).size, 8);
  fs::remove_all(dir);
}

// What a tuning writes over the table it replaces: the entries it measured as it chose them
// (a measured kernel it chose no entry for loses the old one), every other entry as it was.
TEST(Tuner, ATuningKeepsTheEntriesItDidNotMeasure) {
  using K = KernelId;
  const std::map<K, TableEntry> incumbent = {{K::begin_rigid_step, {64, 256, 1.2}},
                                             {K::finish_rigid_step, {128, 256, 1.1}},
                                             {K::compute_shape_aabbs, {32, 256, 1.3}}};
  const std::map<K, TableEntry> chosen = {{K::begin_rigid_step, {16, 256, 1.5}},
                                          {K::update_rigid_duals, {8, 256, 2.0}}};
  const std::map<K, TableEntry> out =
      tunedEntries(&incumbent, {K::begin_rigid_step, K::finish_rigid_step}, chosen);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out.at(K::begin_rigid_step).size, 16);     // measured and chosen
  EXPECT_EQ(out.at(K::compute_shape_aabbs).size, 32);  // not measured: kept
  EXPECT_FALSE(out.count(K::finish_rigid_step));       // measured, no entry chosen
  EXPECT_FALSE(out.count(K::update_rigid_duals));      // chosen but not measured by this run
  const std::map<K, TableEntry> fresh = tunedEntries(nullptr, {K::begin_rigid_step}, chosen);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh.at(K::begin_rigid_step).size, 16);
}

// `weft tune-launch --kernels K` over an existing table: only K's entries change; the other
// kernels' sizes, the other scenes' entries and the batch entries stay as they were, for a
// one-world tuning and for a batch tuning alike.
TEST(Tuner, CudaTuningAKernelKeepsEveryOtherEntryOfTheTable) {
  WEFT_REQUIRE_CUDA(gpu);
  using K = KernelId;
  LaunchTable before;
  before.gpu = gpu->gpu().identity;
  before.provenance = {"", "", "2026-11-28", "test", {"cloth_fold", "cable_y_junction@4"}, "test"};
  before.kernels = {{K::begin_rigid_step, {32, 256, 1.1}},
                    {K::vertex_triangle_collision_detection, {128, 256, 1.2}},
                    {K::finish_rigid_step, {256, 256, 1.0}}};
  before.scenes["cloth_fold"] = {{K::solve_elasticity_self_contact_tile, {16, 64, 1.3}}};
  before.scenes["cable_y_junction@4"] = {{K::begin_rigid_step, {16, 256, 1.4}},
                                         {K::solve_rigid_body_tile, {1, 32, 2.0}}};
  TunerOptions options;
  options.scenes = {"cable_y_junction"};
  options.kernels = {K::finish_rigid_step};
  options.blockSizes = {64, 128};
  options.budgetMsPerPoint = 2.0;
  options.endToEndFrames = 2;
  options.incumbent = before;
  for (int worlds : {1, 4}) {
    SCOPED_TRACE(std::to_string(worlds) + " worlds");
    options.worlds = worlds;
    const LaunchTable after = tuneLaunches(*gpu, options).table;
    EXPECT_EQ(after.kernels.at(K::begin_rigid_step).size, 32);
    EXPECT_EQ(after.kernels.at(K::vertex_triangle_collision_detection).size, 128);
    ASSERT_TRUE(after.kernels.count(K::finish_rigid_step));
    if (worlds == 1)
      EXPECT_THAT(after.kernels.at(K::finish_rigid_step).size, testing::AnyOf(64, 128));
    ASSERT_TRUE(after.scenes.count("cloth_fold"));
    EXPECT_EQ(after.scenes.at("cloth_fold").at(K::solve_elasticity_self_contact_tile).size, 16);
    ASSERT_TRUE(after.scenes.count("cable_y_junction@4"));
    const std::map<K, TableEntry>& batch = after.scenes.at("cable_y_junction@4");
    EXPECT_EQ(batch.at(K::begin_rigid_step).size, 16);
    EXPECT_EQ(batch.at(K::solve_rigid_body_tile).size, 1);
    if (worlds == 4 && batch.count(K::finish_rigid_step))
      EXPECT_THAT(batch.at(K::finish_rigid_step).size, testing::AnyOf(64, 128));
    for (const char* key : {"cloth_fold", "cable_y_junction@4"})
      EXPECT_THAT(after.provenance.scenes, testing::Contains(std::string(key)));
  }
}

// A batch tuned without an entry of its own runs the largest smaller batch's entries; when a
// tuning changes those (or removes them), the larger batches that inherit them are named.
TEST(Tuner, StaleBatchesAreTheTunedLargerBatchesWhoseInheritedSizesChanged) {
  using K = KernelId;
  LaunchTable before;
  before.provenance.scenes = {"cable_twist",      "cable_twist@64",   "cable_twist@256",
                              "cable_twist@1024", "cable_twist@2048", "cable_twist@4096",
                              "cable_twist@8192", "cable_pile@1024"};
  before.scenes["cable_twist@64"] = {{K::begin_rigid_step, {32, 64, 1.1}}};
  before.scenes["cable_twist@256"] = {{K::begin_rigid_step, {8, 64, 1.2}}};
  before.scenes["cable_twist@4096"] = {{K::begin_rigid_step, {16, 64, 1.3}}};
  LaunchTable after = before;
  // Unchanged sizes (a new speed-up figure only): nothing to tune again.
  after.scenes["cable_twist@256"][K::begin_rigid_step].speedup = 1.25;
  EXPECT_TRUE(staleBatches(before, after, "cable_twist", 256).empty());
  // @256 changed: @1024 and @2048 inherit it; @4096 has its own entry, @8192 inherits @4096's,
  // @64 is smaller, the pile is another scene.
  after.scenes["cable_twist@256"] = {{K::begin_rigid_step, {16, 64, 1.3}}};
  EXPECT_EQ(staleBatches(before, after, "cable_twist", 256),
            (std::vector<std::string>{"cable_twist@1024", "cable_twist@2048"}));
  // @256 lost its entry: those two now inherit @64's instead.
  after.scenes.erase("cable_twist@256");
  EXPECT_EQ(staleBatches(before, after, "cable_twist", 256),
            (std::vector<std::string>{"cable_twist@1024", "cable_twist@2048"}));
  // A batch the tuner never measured is not named (nothing was verified there).
  after.provenance.scenes = {"cable_twist@64", "cable_twist@256", "cable_twist@4096"};
  EXPECT_TRUE(staleBatches(before, after, "cable_twist", 256).empty());
}

TEST(Tuner, RecorderSeesEveryLaunchOfAStepOnceWithTheSizesInEffect) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& scene = findScene("cloth_hanging");
  LaunchPolicy policy;
  policy.setOverride(KernelId::forward_step, 64);
  policy.setOverride(KernelId::solve_elasticity_tile, 32);
  gpu->setLaunchPolicy(policy);
  const ModelDesc desc = scene.cloth.build({});
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(*gpu, scene);
  const std::vector<RecordedLaunch> launches = recordStep(*gpu, *sim);
  std::map<KernelId, int> perStep;
  int total = 0;
  for (const RecordedLaunch& l : launches) {
    perStep[l.record.id] += l.timesPerStep;
    total += l.timesPerStep;
    EXPECT_EQ(l.record.size, policy.size(l.record.id)) << kernelName(l.record.id);
  }
  const int colors = int(desc.coloring.colorOffsets.size()) - 1;
  const int iterations = scene.cloth.solver.iterations;
  EXPECT_EQ(perStep[KernelId::update_kinematics], 1);
  EXPECT_EQ(perStep[KernelId::generate_particle_shape_contacts], 1);
  EXPECT_EQ(perStep[KernelId::forward_step], 1);
  EXPECT_EQ(perStep[KernelId::solve_elasticity_tile], iterations * colors);
  EXPECT_EQ(perStep[KernelId::apply_truncation_ts], 1 + iterations * colors);
  EXPECT_EQ(perStep[KernelId::update_velocity], 1);
  EXPECT_EQ(total, 4 + 2 * iterations * colors + 1);
  // Tile launches with the same item count (colors of equal size) are one group.
  for (const RecordedLaunch& l : launches)
    if (l.record.id == KernelId::solve_elasticity_tile) EXPECT_GT(l.record.count, 0);
  gpu->setLaunchPolicy(LaunchPolicy{});
}

TEST(Tuner, RecorderSeesEveryLaunchOfACableSubstep) {
  WEFT_REQUIRE_CUDA(gpu);
  gpu->setLaunchPolicy(LaunchPolicy{});
  const Scene& scene = findScene("cable_pile");
  SceneOptions small;
  small.values["layers"] = "2";
  small.values["lanes"] = "2";
  const RigidDesc desc = scene.rigid.build(small);
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(*gpu, scene, small);
  const std::vector<RecordedLaunch> launches = recordStep(*gpu, *sim);
  std::map<KernelId, int> perStep;
  for (const RecordedLaunch& l : launches) perStep[l.record.id] += l.timesPerStep;
  const int colors = int(desc.bodyColorOffsets.size()) - 1;
  const int iterations = scene.rigid.solver.iterations;
  // Substep 0 detects contacts (pile: every substep) and matches them to the previous detection;
  // this small pile's few shapes take the all-pairs broad phase (no tree).
  EXPECT_EQ(perStep[KernelId::rigid_broad_phase_cooperative], 0);
  EXPECT_EQ(perStep[KernelId::lbvh_build_hierarchy], 0);
  for (KernelId id :
       {KernelId::compute_shape_aabbs, KernelId::rigid_broad_phase_all_pairs,
        KernelId::rigid_narrow_phase_count, KernelId::rigid_narrow_phase,
        KernelId::fill_body_body_contact_lists, KernelId::sort_body_body_contact_lists,
        KernelId::match_rigid_contacts, KernelId::replay_sticky_contacts,
        KernelId::begin_rigid_step, KernelId::finish_rigid_step})
    EXPECT_EQ(perStep[id], 1) << kernelName(id);
  EXPECT_EQ(perStep[KernelId::solve_rigid_body_tile], iterations * colors);
  // In small models the duals between iterations ride in the next iteration's first color
  // launch; only the last iteration's have a launch of their own.
  const bool folded = desc.numBodies() <= scene.rigid.solver.foldDualsUpToBodies;
  EXPECT_EQ(perStep[KernelId::update_rigid_duals], folded ? 1 : iterations);
}

/// Sweeps every launch of a step of `scene` (replaying each on its own output, at every size) and
/// checks that the sweep leaves every device buffer as it was (and that no replay faults).
void checkSweepLeavesEveryBufferBitIdentical(Device* gpu, const Scene& scene,
                                             const SceneOptions& sceneOptions) {
  gpu->setLaunchPolicy(LaunchPolicy{});
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(*gpu, scene, sceneOptions);
  for (int f = 0; f < 15; ++f) sim->advanceFrame();
  const std::vector<RecordedLaunch> launches = recordStep(*gpu, *sim);
  auto contents = [&] {
    std::map<void*, std::vector<unsigned char>> bytes;
    for (const auto& [ptr, n] : gpu->allocations()) {
      std::vector<unsigned char> host(n);
      detail::downloadBytes(*gpu, host.data(), ptr, n);
      bytes[ptr] = std::move(host);
    }
    return bytes;
  };
  const DeviceSnapshot untouched(*gpu);  // the tuner's measurement snapshot
  const auto before = contents();
  TunerOptions options;
  options.budgetMsPerPoint = 0.5;
  options.blockSizes = {32, 1024};
  options.tileSizes = {8, 256};
  const std::vector<LaunchTiming> timings = sweepLaunches(*gpu, launches, untouched, options);
  EXPECT_EQ(timings.size(), launches.size());
  for (const LaunchTiming& t : timings)
    for (const SizeTiming& s : t.sizes) EXPECT_TRUE(s.skipped || s.microsecondsPerLaunch > 0.0);
  const auto after = contents();
  ASSERT_EQ(before.size(), after.size());
  for (const auto& [ptr, bytes] : before) EXPECT_EQ(bytes, after.at(ptr)) << "buffer " << ptr;
}

TEST(Tuner, SweepLeavesEveryDeviceBufferBitIdentical) {
  WEFT_REQUIRE_CUDA(gpu);
  checkSweepLeavesEveryBufferBitIdentical(gpu.get(), findScene("cloth_fold"), SceneOptions{});
}

TEST(Tuner, SweepOfACableSubstepLeavesEveryDeviceBufferBitIdentical) {
  WEFT_REQUIRE_CUDA(gpu);
  // Contact lists are filled through atomic slots: a replay on its own output must stay in
  // bounds (it once wrote before a body's list and faulted). 640 shapes: the shape tree, the
  // kept partner lists and their device-side flag are swept too.
  SceneOptions small;
  small.values["layers"] = "2";
  small.values["lanes"] = "8";
  checkSweepLeavesEveryBufferBitIdentical(gpu.get(), findScene("cable_pile"), small);
}

}  // namespace
}  // namespace weft
