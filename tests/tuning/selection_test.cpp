// The tuner's decisions on synthetic timings: per-step costs, per-scene and overall picks, the
// noise band's tie-break, skipped sizes, which of a batch's optima are kept end to end.
#include "tuning/selection.h"

#include <gtest/gtest.h>

#include <functional>

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

LaunchTiming launchOf(KernelId id, int timesPerStep, std::vector<SizeTiming> sizes) {
  LaunchTiming l;
  l.id = id;
  l.count = 1000;
  l.timesPerStep = timesPerStep;
  l.sizes = std::move(sizes);
  return l;
}

SizeTiming at(int size, double us) {
  return {size, false, "", us};
}
SizeTiming skipped(int size) {
  return {size, true, "too many resources requested", 0.0};
}

TEST(Selection, PerStepCostSumsLaunchesTimesTheirRepeats) {
  SceneTimings t{"s",
                 {launchOf(KernelId::forward_step, 1, {at(64, 2.0), at(256, 3.0)}),
                  launchOf(KernelId::solve_elasticity_tile, 40, {at(16, 5.0), at(32, 4.0)}),
                  launchOf(KernelId::solve_elasticity_tile, 40, {at(16, 6.0), at(32, 7.0)})}};
  const auto cost = perStepCost(t);
  EXPECT_DOUBLE_EQ(cost.at(KernelId::forward_step).at(64), 2.0);
  EXPECT_DOUBLE_EQ(cost.at(KernelId::solve_elasticity_tile).at(16), 40 * 11.0);
  EXPECT_DOUBLE_EQ(cost.at(KernelId::solve_elasticity_tile).at(32), 40 * 11.0);
}

TEST(Selection, SizeSkippedByAnyLaunchIsNoCandidate) {
  SceneTimings t{
      "s",
      {launchOf(KernelId::vertex_triangle_collision_detection, 1,
                {at(8, 10.0), at(256, 5.0), skipped(512)}),
       launchOf(KernelId::vertex_triangle_collision_detection, 1,
                {at(8, 10.0), skipped(256), skipped(512)}),
       // 64 was timed for one launch only: not comparable, so not a candidate.
       launchOf(KernelId::vertex_triangle_collision_detection, 1, {at(8, 1.0), at(64, 0.1)})}};
  const auto cost = perStepCost(t).at(KernelId::vertex_triangle_collision_detection);
  ASSERT_EQ(cost.size(), 1u);
  EXPECT_DOUBLE_EQ(cost.at(8), 21.0);
}

TEST(Selection, PicksTheCheapestSize) {
  const SizeChoice c = pickSize({{8, 10.0}, {16, 7.0}, {32, 9.0}, {256, 14.0}}, 256);
  EXPECT_EQ(c.size, 16);
  EXPECT_DOUBLE_EQ(c.microseconds, 7.0);
  EXPECT_DOUBLE_EQ(c.speedup, 2.0);
}

TEST(Selection, WithinTheNoiseBandTheDefaultWins) {
  // 256 is 1.5% slower than 128: noise; keep the default.
  EXPECT_EQ(pickSize({{128, 10.0}, {256, 10.15}}, 256).size, 256);
  // 3% slower: a real difference.
  EXPECT_EQ(pickSize({{128, 10.0}, {256, 10.3}}, 256).size, 128);
}

TEST(Selection, WithinTheNoiseBandWithoutTheDefaultTheLargerSizeWins) {
  EXPECT_EQ(pickSize({{32, 10.0}, {64, 10.1}, {128, 10.19}, {512, 13.0}}, 256).size, 128);
  // Deterministic: the same input gives the same answer.
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(pickSize({{64, 5.0}, {32, 5.0}, {16, 5.0}}, 1024).size, 64);
}

// Hysteresis: within the band the replaced table's size (the incumbent) wins, before the default
// and the larger sizes; beyond the band the faster size wins whatever the incumbent was.
TEST(Selection, WithinTheNoiseBandTheIncumbentWinsBeforeTheDefault) {
  const std::map<int, double> costs = {{32, 10.0}, {64, 10.1}, {128, 10.19}, {256, 10.15}};
  EXPECT_EQ(pickSize(costs, 256).size, 256);
  EXPECT_EQ(pickSize(costs, 256, 0.02, 0.0, 64).size, 64);
  EXPECT_EQ(pickSize(costs, 256, 0.02, 0.0, 32).size, 32);
  // An incumbent outside the band, or one that could not be timed, does not win.
  EXPECT_EQ(pickSize({{32, 10.0}, {64, 10.5}, {256, 10.15}}, 256, 0.02, 0.0, 64).size, 256);
  EXPECT_EQ(pickSize(costs, 256, 0.02, 0.0, 512).size, 256);
  // The same for the overall pick.
  const std::map<std::string, std::map<int, double>> perScene = {{"a", {{64, 10.0}, {256, 10.1}}},
                                                                 {"b", {{64, 5.05}, {256, 5.0}}}};
  EXPECT_EQ(pickOverallSize(perScene, 256, Objective::SummedTime).size, 256);
  EXPECT_EQ(pickOverallSize(perScene, 256, Objective::SummedTime, 0.02, 0.0, 64).size, 64);
}

TEST(Selection, DefaultThatCouldNotRunHasNoSpeedup) {
  const SizeChoice c = pickSize({{8, 4.0}, {16, 3.0}}, 256);
  EXPECT_EQ(c.size, 16);
  EXPECT_EQ(c.speedup, 0.0);
  EXPECT_THROW(pickSize({}, 256), Error);
}

TEST(Selection, OverallPickUsesOnlySizesEveryScenePermits) {
  const std::map<std::string, std::map<int, double>> perScene = {
      {"a", {{8, 5.0}, {256, 9.0}, {512, 1.0}}},  // 512 would win here...
      {"b", {{8, 5.0}, {256, 9.0}}}};             // ...but b could not run it
  const SizeChoice c = pickOverallSize(perScene, 256, Objective::SummedTime);
  EXPECT_EQ(c.size, 8);
  EXPECT_DOUBLE_EQ(c.microseconds, 10.0);
  EXPECT_DOUBLE_EQ(c.speedup, 1.8);
}

TEST(Selection, GeometricMeanWeighsScenesEquallySummedTimeDoesNot) {
  // Scene "long" dominates the sum and prefers 64; both short scenes prefer 256 strongly.
  const std::map<std::string, std::map<int, double>> perScene = {
      {"long", {{64, 1000.0}, {256, 1100.0}}},
      {"short1", {{64, 2.0}, {256, 1.0}}},
      {"short2", {{64, 2.0}, {256, 1.0}}}};
  EXPECT_EQ(pickOverallSize(perScene, 256, Objective::SummedTime).size, 64);
  const SizeChoice g = pickOverallSize(perScene, 256, Objective::GeometricMeanSpeedup);
  EXPECT_EQ(g.size, 256);
  EXPECT_DOUBLE_EQ(g.speedup, 1.0);
}

TEST(Selection, NoCommonSizeIsAnError) {
  EXPECT_THROW(pickOverallSize({{"a", {{8, 1.0}}}, {"b", {{16, 1.0}}}}, 256, Objective::SummedTime),
               Error);
}

// An absolute tie: sizes within `absoluteTie` of the best tie as well, so tiny kernels whose
// costs differ by a fraction of a microsecond pick the default (or the larger size), not the
// noise's favourite.
TEST(Selection, AbsoluteTieMakesSubMicrosecondDifferencesTies) {
  const std::map<int, double> costs = {{8, 2.1}, {64, 2.3}, {256, 4.0}};
  EXPECT_EQ(pickSize(costs, 256, 0.05).size, 8);
  EXPECT_EQ(pickSize(costs, 256, 0.05, 0.5).size, 64);
  EXPECT_EQ(pickSize({{8, 2.1}, {64, 2.3}, {256, 2.5}}, 256, 0.05, 0.5).size, 256);
  // Overall: a tie of 0.5 µs against ~4 µs kernels is a relative tie of about 12%.
  const std::map<std::string, std::map<int, double>> perScene = {
      {"a", {{8, 2.1}, {64, 2.3}, {256, 4.0}}}, {"b", {{8, 2.0}, {64, 2.2}, {256, 4.2}}}};
  EXPECT_EQ(pickOverallSize(perScene, 256, Objective::GeometricMeanSpeedup, 0.05).size, 8);
  EXPECT_EQ(pickOverallSize(perScene, 256, Objective::GeometricMeanSpeedup, 0.05, 0.5).size, 64);
}

// A batch end to end, on a synthetic batch whose time is 100 µs plus each kept size's effect
// (negative: faster), `together` more when several kernels are timed at once (interference).
struct SyntheticBatch {
  std::map<std::pair<KernelId, int>, double> effect;
  double together = 0.0;
  int timings = 0;
  double operator()(const std::map<KernelId, int>& kept) {
    ++timings;
    double us = 100.0 + (kept.size() > 1 ? together : 0.0);
    for (const auto& [id, size] : kept) us += effect.at({id, size});
    return us;
  }
};
constexpr KernelId kA = KernelId::solve_elasticity_self_contact_tile;
constexpr KernelId kB = KernelId::lbvh_refit_nodes;
constexpr KernelId kC = KernelId::lbvh_refit_leaves;
constexpr KernelId kD = KernelId::edge_colliding_edges_detection_cooperative;

// The cloth_twist@512 case on the H200: all optima together 3% slower (inside the 5% band), one of
// them alone far faster. Keeping the set because it is "not slower beyond the noise" lost the
// one that wins; now it is found alone and kept alone.
TEST(Selection, BatchOptimaInsideTheNoiseBandAreNotAWinTheOneThatWinsAloneIsKept) {
  SyntheticBatch batch{
      .effect = {{{kA, 16}, -30.0}, {{kB, 1}, 15.0}, {{kC, 1}, 10.0}, {{kD, 1}, 6.0}}};
  const auto choice = chooseBatchEntries({{kA, {16}}, {kB, {1}}, {kC, {1}}, {kD, {1}}}, 100.0,
                                         103.0, 0.05, std::ref(batch));
  EXPECT_FALSE(choice.all);
  EXPECT_EQ(choice.sizes, (std::map<KernelId, int>{{kA, 16}}));
  EXPECT_DOUBLE_EQ(choice.microseconds, 70.0);
  EXPECT_EQ(batch.timings, 4);  // each alone; one winner, nothing to time together
}

// cable_y_junction@4096 on the H200 (2026-11-28): its optima 907.6 µs against 918.0 before,
// 1.13% faster in both of two tunings whose same-size timings agreed to 0.08%. At the sweep's 5%
// band they were dropped (and what was timed alone did not win either); at the end-to-end band of
// 1% (TunerOptions::endToEndBand) they are kept. Here scaled to a 100 µs step.
TEST(Selection, ABatchGainOfOnePercentIsKeptAtTheEndToEndBandNotAtTheSweepBand) {
  SyntheticBatch batch{.effect = {{{kA, 1}, -1.13}}};
  const auto atFive = chooseBatchEntries({{kA, {1}}}, 100.0, 98.87, 0.05, std::ref(batch));
  EXPECT_FALSE(atFive.all);
  EXPECT_TRUE(atFive.sizes.empty());
  EXPECT_EQ(batch.timings, 1);
  const auto atOne = chooseBatchEntries({{kA, {1}}}, 100.0, 98.87, 0.01, std::ref(batch));
  EXPECT_TRUE(atOne.all);
  EXPECT_DOUBLE_EQ(atOne.microseconds, 98.87);
  EXPECT_EQ(batch.timings, 1);  // kept whole, nothing timed alone
}

TEST(Selection, BatchOptimaThatWinTogetherAreAllKeptWithoutFurtherTimings) {
  SyntheticBatch batch;
  const auto choice =
      chooseBatchEntries({{kA, {16}}, {kB, {1}}}, 100.0, 85.0, 0.05, std::ref(batch));
  EXPECT_TRUE(choice.all);
  EXPECT_DOUBLE_EQ(choice.microseconds, 85.0);
  EXPECT_EQ(batch.timings, 0);
}

TEST(Selection, BatchWinnersAreKeptTogetherOnlyWhenTogetherTheyBeatTheFastestAlone) {
  const std::map<std::pair<KernelId, int>, double> effect = {
      {{kA, 16}, -30.0}, {{kB, 1}, -8.0}, {{kC, 1}, 20.0}};
  SyntheticBatch apart{.effect = effect};
  const std::vector<BatchCandidate> candidates = {{kA, {16}}, {kB, {1}}, {kC, {1}}};
  auto choice = chooseBatchEntries(candidates, 100.0, 100.0, 0.05, std::ref(apart));
  EXPECT_EQ(choice.sizes, (std::map<KernelId, int>{{kA, 16}, {kB, 1}}));
  EXPECT_DOUBLE_EQ(choice.microseconds, 62.0);
  EXPECT_EQ(apart.timings, 4);  // three alone, the two winners together
  // Together they interfere (+12 µs): 74 against 70 for A alone.
  SyntheticBatch interfering{.effect = effect, .together = 12.0};
  choice = chooseBatchEntries(candidates, 100.0, 100.0, 0.05, std::ref(interfering));
  EXPECT_EQ(choice.sizes, (std::map<KernelId, int>{{kA, 16}}));
  EXPECT_DOUBLE_EQ(choice.microseconds, 70.0);
}

// A kernel's sweep optimum may lose in the frame where another of its sizes wins (the twist batch
// on the H200: the sweep's one lane per edge-edge query lost with the rest of its optima; on the
// H100 four lanes had been the best of the sizes tried by hand): a kernel's sizes are tried in
// order until one wins, and the first that wins is kept.
TEST(Selection, ABatchKernelWhoseOptimumLosesAloneKeepsItsFirstRunnerUpThatWins) {
  SyntheticBatch batch{.effect = {{{kD, 1}, 2.0}, {{kD, 4}, -12.0}, {{kD, 8}, -20.0}}};
  const auto choice = chooseBatchEntries({{kD, {1, 4, 8}}}, 100.0, 102.0, 0.05, std::ref(batch));
  EXPECT_EQ(choice.sizes, (std::map<KernelId, int>{{kD, 4}}));
  EXPECT_DOUBLE_EQ(choice.microseconds, 88.0);
  EXPECT_EQ(batch.timings, 2);  // 1, then 4; 8 is not timed
}

TEST(Selection, NoBatchSizeThatWinsAloneKeepsNone) {
  // B alone is 3% faster: inside the band, no win.
  SyntheticBatch batch{.effect = {{{kA, 16}, 4.0}, {{kB, 1}, -3.0}, {{kB, 4}, -1.0}}};
  const auto choice =
      chooseBatchEntries({{kA, {16}}, {kB, {1, 4}}}, 100.0, 99.0, 0.05, std::ref(batch));
  EXPECT_FALSE(choice.all);
  EXPECT_TRUE(choice.sizes.empty());
  EXPECT_DOUBLE_EQ(choice.microseconds, 99.0);
  EXPECT_EQ(batch.timings, 3);
  EXPECT_TRUE(chooseBatchEntries({}, 100.0, 100.0, 0.05, std::ref(batch)).sizes.empty());
}

TEST(Selection, BatchCandidateSizesAreTheOptimumThenRunnerUpsThatBeatTheSizeBefore) {
  // Sweep costs per step; the size before is 16 (10 µs of a 100 µs step).
  const std::map<int, double> costs = {{1, 6.0}, {2, 7.5},   {4, 5.0},
                                       {8, 9.8}, {16, 10.0}, {32, 8.0}};
  // Optimum 1 (say, by the incumbent's hysteresis), then 4, 2 (by cost), not 32: the sizes
  // beyond `most`; 8 is inside the band of 16, and 16 is the size before.
  EXPECT_EQ(batchCandidateSizes(costs, 1, 16, 100.0, 0.05, 0.05), (std::vector<int>{1, 4, 2}));
  EXPECT_EQ(batchCandidateSizes(costs, 1, 16, 100.0, 0.05, 0.05, 5),
            (std::vector<int>{1, 4, 2, 32}));
  EXPECT_EQ(batchCandidateSizes(costs, 1, 16, 100.0, 0.05, 0.05, 1), (std::vector<int>{1}));
  // A kernel of 10 µs in a 500 µs step: under half a 5% step band (12.5 µs), no size can win
  // alone; half a 1% band is 2.5 µs, so it is timed. The runner-ups still need the sweep's band
  // (8 is inside 5% of 16 whatever the step band).
  EXPECT_TRUE(batchCandidateSizes(costs, 1, 16, 500.0, 0.05, 0.05).empty());
  EXPECT_EQ(batchCandidateSizes(costs, 1, 16, 500.0, 0.05, 0.01), (std::vector<int>{1, 4, 2}));
  // Without a sweep cost at the size before (it could not launch): every other size, by cost.
  EXPECT_EQ(batchCandidateSizes({{1, 6.0}, {4, 5.0}}, 4, 16, 100.0, 0.05, 0.05),
            (std::vector<int>{4, 1}));
}

}  // namespace
}  // namespace weft
