// launch(), launchTile() and launchGroup() on both backends: coverage, sizes, tile determinism,
// group ballots/shuffles/shared memory, errors.
#include "kernels/runtime/launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/runtime/buffer.h"
#include "kernels/runtime/graph.h"
#include "kernels/runtime/one_lane_tree.h"
#include "test_support.h"

namespace weft {
namespace {

struct CountVisits {
  static constexpr KernelId kId = KernelId::forward_step;
  int* visits;  // (n) int
  WEFT_HD void operator()(int i) const { visits[i] += 1; }
};

// Uses its per-thread shared scratch as a tiny stack.
struct ScratchUser {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection;
  static constexpr int kSharedBytesPerThread = 132;
  int* out;  // (n) int
  WEFT_HD void operator()(int i, unsigned char* scratch) const {
    int* stack = reinterpret_cast<int*>(scratch);
    for (int k = 0; k < 33; ++k) stack[k] = i + k;
    int sum = 0;
    for (int k = 0; k < 33; ++k) sum += stack[k];
    out[i] = sum;
  }
};

void expectScratchWorks(const Device& device, int n) {
  DeviceBuffer<int> out(device, size_t(n));
  launch(device, n, ScratchUser{out.data()});
  const std::vector<int> host = out.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 33 * i + 528) << "index " << i;
}

TEST(Launch, PerThreadSharedScratchOnCpu) {
  auto cpu = test::openCpu();
  expectScratchWorks(*cpu, 1000);
}

// 132 B per thread, as the reference's BVH stack: blocks up to 256 fit the default 48 KB of
// shared memory; 512 and 1024 do not, and the launch fails with an error naming the kernel.
TEST(Launch, PerThreadSharedScratchOnCudaFailsCleanlyWhenTooLarge) {
  WEFT_REQUIRE_CUDA(gpu);
  for (int block : kBlockSizes) {
    LaunchPolicy policy;
    policy.setOverride(KernelId::vertex_triangle_collision_detection, block);
    gpu->setLaunchPolicy(policy);
    if (block * 132 <= 48 * 1024) {
      expectScratchWorks(*gpu, 1000);
    } else {
      DeviceBuffer<int> out(*gpu, 1000);
      EXPECT_THROW(launch(*gpu, 1000, ScratchUser{out.data()}), CudaError) << block;
      gpu->setLaunchPolicy(LaunchPolicy{});  // the device stays usable after a failed launch
      expectScratchWorks(*gpu, 10);
    }
  }
}

struct Part {
  float value = 0.0f;
  WEFT_HD Part& operator+=(const Part& o) {
    value += o.value;
    return *this;
  }
};

// Item i has parts values[offsets[i] .. offsets[i+1]); finish writes the sum.
struct SumParts {
  static constexpr KernelId kId = KernelId::solve_elasticity_tile;
  using Part = weft::Part;
  const int* offsets;   // (n + 1) int
  const float* values;  // (offsets[n]) float
  float* sums;          // (n) float
  int maxPartCount;
  int maxParts() const { return maxPartCount; }
  WEFT_HD int partCount(int item) const { return offsets[item + 1] - offsets[item]; }
  WEFT_HD Part part(int item, int k) const { return {values[offsets[item] + k]}; }
  WEFT_HD void finish(int item, const Part& sum) const { sums[item] = sum.value; }
};

void expectEveryIndexVisitedOnce(const Device& device, int n) {
  DeviceBuffer<int> visits(device, size_t(n));
  launch(device, n, CountVisits{visits.data()});
  const std::vector<int> host = visits.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 1) << "index " << i << " of " << n;
}

TEST(Launch, CpuVisitsEveryIndexOnce) {
  auto cpu = test::openCpu();
  for (int n : {0, 1, 255, 256, 257, 100000}) expectEveryIndexVisitedOnce(*cpu, n);
}

TEST(Launch, CudaVisitsEveryIndexOnceForEveryBlockSize) {
  WEFT_REQUIRE_CUDA(gpu);
  for (int block : kBlockSizes) {
    LaunchPolicy policy;
    policy.setOverride(KernelId::forward_step, block);
    gpu->setLaunchPolicy(policy);
    for (int n : {1, block - 1, block, block + 1, 100000})
      if (n > 0) expectEveryIndexVisitedOnce(*gpu, n);
  }
}

struct RaggedInput {
  std::vector<int> offsets;
  std::vector<float> values;
  int maxCount = 0;
};

RaggedInput randomRagged(int items, int maxCount, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> count(0, maxCount);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  RaggedInput in;
  in.offsets.push_back(0);
  for (int i = 0; i < items; ++i) {
    const int c = count(rng);
    in.maxCount = std::max(in.maxCount, c);
    for (int k = 0; k < c; ++k) in.values.push_back(value(rng) * std::pow(10.0f, float(k % 7)));
    in.offsets.push_back(int(in.values.size()));
  }
  if (in.values.empty()) in.values.push_back(0.0f);
  return in;
}

// SumParts lending its one-lane tiles global memory for the tree levels beyond its first
// kSharedLevels (kernel_ids.h OneLaneSpill).
template <int kSharedLevels>
struct SumPartsSpilling : SumParts {
  static constexpr int kOneLaneSharedLevels = kSharedLevels;
  OneLaneSpill oneLaneSpill;
};

template <int kSharedLevels>
void launchLending(const Device& device, int n, const SumParts& kernel, OneLaneSpill spill) {
  SumPartsSpilling<kSharedLevels> lending;
  static_cast<SumParts&>(lending) = kernel;
  lending.oneLaneSpill = spill;
  launchTile(device, n, lending);
}

/// The items' sums by launchTile; with `spill`, by SumPartsSpilling<sharedLevels> (2 or 3)
/// lending it.
std::vector<float> sumOnDevice(const Device& device, const RaggedInput& in,
                               const OneLaneSpill* spill = nullptr, int sharedLevels = 2) {
  const int n = int(in.offsets.size()) - 1;
  DeviceBuffer<int> offsets(device, in.offsets);
  DeviceBuffer<float> values(device, in.values);
  DeviceBuffer<float> sums(device, size_t(n));
  const SumParts kernel{offsets.data(), values.data(), sums.data(), in.maxCount};
  if (spill && sharedLevels == 3) {
    launchLending<3>(device, n, kernel, *spill);
  } else if (spill) {
    launchLending<2>(device, n, kernel, *spill);
  } else {
    launchTile(device, n, kernel);
  }
  return sums.download();
}

TEST(LaunchTile, CpuTreeSumMatchesDoubleReference) {
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const RaggedInput in = randomRagged(500, 70, seed);
  const std::vector<float> sums = sumOnDevice(*cpu, in);
  for (size_t i = 0; i + 1 < in.offsets.size(); ++i) {
    double ref = 0.0, mag = 0.0;
    for (int k = in.offsets[i]; k < in.offsets[i + 1]; ++k) {
      ref += in.values[k];
      mag += std::abs(in.values[k]);
    }
    EXPECT_NEAR(sums[i], ref, 1e-6 * (mag + 1.0)) << "item " << i;
  }
}

// The one-lane walk (sumPartsOneLane) at a depth deeper than an item's own tree, as the CUDA
// one-lane tiles walk the deepest tree of their warp: the same sum bit for bit, each part taken
// once and in the same order as at the item's own depth; and the step that takes leaf k at the
// deeper depth has leaf k's own slot as its slot, so that items of different part counts walked at
// one depth take the same slot at any step where both take one.
struct LoggedParts {
  using Part = weft::Part;
  int parts = 0;
  std::vector<int>* taken = nullptr;  // the slots, in the order the walk took them
  int partCount(int) const { return parts; }
  Part part(int, int s) const {
    taken->push_back(s);
    return {(s % 2 ? -1.0f : 1.0f) * std::pow(7.3f, float(s % 9)) + 0.37f * float(s)};
  }
};

struct FixedDepth {
  int depth;
  int operator()(int bits) const { return std::max(bits, depth); }
};

float walk(int parts, int depth, std::vector<int>& taken) {
  std::vector<Part> levels(12);
  return sumPartsOneLane(
             LoggedParts{parts, &taken}, 0,
             [&](int level, const Part& p) { levels[size_t(level)] = p; },
             [&](int level) { return levels[size_t(level)]; }, FixedDepth{depth})
      .value;
}

TEST(LaunchTile, OneLaneWalkDeeperThanTheItemGivesItsSumAndAlignsSlotsAcrossItems) {
  for (int parts = 0; parts <= 40; ++parts) {
    int bits = 0;
    while ((1 << bits) < parts) ++bits;
    std::vector<int> ownOrder;
    const float own = walk(parts, bits, ownOrder);
    std::vector<int> every(static_cast<size_t>(parts));  // padding slots are never asked for
    for (size_t s = 0; s < every.size(); ++s) every[s] = int(s);
    std::vector<int> sorted = ownOrder;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, every) << parts << " parts: each part once";
    for (int depth = bits + 1; depth <= bits + 3; ++depth) {
      SCOPED_TRACE(std::to_string(parts) + " parts at depth " + std::to_string(depth));
      std::vector<int> order;
      const float deeper = walk(parts, depth, order);
      EXPECT_EQ(std::bit_cast<unsigned>(deeper), std::bit_cast<unsigned>(own));
      EXPECT_EQ(order, ownOrder);
    }
  }
  // The step i = k · 2^(depth − bits) that takes leaf k: its slot at `depth` is leaf k's slot at
  // `bits`, the slot the item's own walk takes for leaf k.
  for (int depth = 0; depth <= 8; ++depth)
    for (int bits = 0; bits <= depth; ++bits)
      for (int k = 0; k < (1 << bits); ++k)
        ASSERT_EQ(oneLaneSlot(k << (depth - bits), depth), oneLaneSlot(k, bits))
            << "leaf " << k << " of " << bits << " bits at depth " << depth;
  EXPECT_EQ(oneLaneSlot(1, 3), 4);
  EXPECT_EQ(oneLaneSlot(6, 3), 3);
}

TEST(LaunchTile, CudaIsBitIdenticalToCpuForEveryTileSize) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const RaggedInput in = randomRagged(700, 200, seed);
  const std::vector<float> expected = sumOnDevice(*cpu, in);
  for (int tile : kTileSizes) {
    LaunchPolicy policy;
    policy.setOverride(KernelId::solve_elasticity_tile, tile);
    gpu->setLaunchPolicy(policy);
    const std::vector<float> got = sumOnDevice(*gpu, in);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_EQ(got[i], expected[i]) << "tile " << tile << ", item " << i;
  }
}

TEST(LaunchTile, CudaOneLaneTileWithDeepLevelsInGlobalMemoryIsBitIdenticalToCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  // Up to 200 parts: 8 levels, 5 or 6 of them beyond the shared ones; most items reach some.
  const RaggedInput in = randomRagged(700, 200, seed);
  const int n = int(in.offsets.size()) - 1;
  const std::vector<float> expected = sumOnDevice(*cpu, in);
  LaunchPolicy policy;
  policy.setOverride(KernelId::solve_elasticity_tile, 1);
  gpu->setLaunchPolicy(policy);
  ASSERT_GT(oneLaneLevels(in.maxCount), 3);
  constexpr unsigned kUntouched = 0x7fc00123u;
  // Enough memory: the deep levels go there; one word short: every level stays in shared
  // memory. The sums are the CPU's either way, with two shared levels or three.
  for (const int levels : {2, 3}) {
    const size_t needed = oneLaneSpillWords(in.maxCount, n, 1, levels);  // one word a part
    for (const size_t capacity : {needed, needed - 1}) {
      SCOPED_TRACE(std::to_string(levels) + " shared levels, spill capacity " +
                   std::to_string(capacity) + " of " + std::to_string(needed));
      DeviceBuffer<unsigned> spill(*gpu, std::vector<unsigned>(needed, kUntouched));
      const OneLaneSpill lent{spill.data(), capacity};
      const std::vector<float> got = sumOnDevice(*gpu, in, &lent, levels);
      for (int i = 0; i < n; ++i) ASSERT_EQ(got[size_t(i)], expected[size_t(i)]) << "item " << i;
      const std::vector<unsigned> words = spill.download();
      const size_t written = size_t(
          std::count_if(words.begin(), words.end(), [](unsigned w) { return w != kUntouched; }));
      if (capacity == needed)
        EXPECT_GT(written, size_t(n)) << "the deep levels should have been stored in the spill";
      else
        EXPECT_EQ(written, size_t(0)) << "too small a spill must not be used";
    }
  }
}

// A group per item: counts the item's positive values with ballots, sums them through the
// group's shared memory and hands rank 0's sum to the last rank with a shuffle. Integer sums
// are exact, so every group size must give the host's result.
struct GroupCountAndSum {
  static constexpr KernelId kId = KernelId::edge_colliding_edges_detection_cooperative;
  static constexpr int kSharedIntsPerLane = 1;
  const int* offsets;  // (n + 1)
  const int* values;
  int* positives;  // (n) out
  int* sums;       // (n) out

  template <class Group>
  WEFT_HD void operator()(const Group& g, int item) const {
    int count = 0, sum = 0;
    for (int base = offsets[item]; base < offsets[item + 1]; base += g.size()) {
      const int k = base + g.rank();
      const int value = k < offsets[item + 1] ? values[k] : 0;
      unsigned bits = g.ballot(value > 0);
      for (; bits != 0; bits &= bits - 1) ++count;
      g.shared()[g.rank()] = value;
      g.sync();
      if (g.rank() == 0)
        for (int j = 0; j < g.size(); ++j) sum += g.shared()[j];
      g.sync();
    }
    sum = g.shuffle(sum, 0);
    if (g.rank() == g.size() - 1) {
      positives[item] = count;
      sums[item] = sum;
    }
  }
};

/// Items of 0 … maxValues − 1 random values each.
void expectGroupResults(const Device& device, int items, unsigned seed, int maxValues = 70) {
  std::mt19937 rng(seed);
  std::vector<int> offsets{0}, values;
  for (int i = 0; i < items; ++i) {
    const int n = int(rng() % unsigned(maxValues));
    for (int k = 0; k < n; ++k) values.push_back(int(rng() % 201) - 100);
    offsets.push_back(int(values.size()));
  }
  values.push_back(0);  // never empty
  DeviceBuffer<int> dOffsets(device, offsets), dValues(device, values);
  DeviceBuffer<int> positives(device, std::vector<int>(size_t(items), -1)),
      sums(device, std::vector<int>(size_t(items), -1));
  launchGroup(device, items,
              GroupCountAndSum{dOffsets.data(), dValues.data(), positives.data(), sums.data()});
  const std::vector<int> p = positives.download(), s = sums.download();
  for (int i = 0; i < items; ++i) {
    int count = 0, sum = 0;
    for (int k = offsets[i]; k < offsets[i + 1]; ++k) {
      count += values[k] > 0 ? 1 : 0;
      sum += values[k];
    }
    ASSERT_EQ(p[i], count) << "item " << i;
    ASSERT_EQ(s[i], sum) << "item " << i;
  }
}

TEST(LaunchGroup, BallotsSharedMemoryAndShufflesOnCpu) {
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  expectGroupResults(*cpu, 1000, seed);
}

TEST(LaunchGroup, BallotsSharedMemoryAndShufflesOnCudaForEveryGroupSize) {
  WEFT_REQUIRE_CUDA(gpu);
  const unsigned seed = test::testSeed();
  for (int lanes : kGroupSizes) {
    SCOPED_TRACE("lanes " + std::to_string(lanes) + ", seed " + std::to_string(seed));
    LaunchPolicy policy;
    policy.setOverride(KernelId::edge_colliding_edges_detection_cooperative, lanes);
    gpu->setLaunchPolicy(policy);
    for (int items : {1, 7, 1000, 5001}) expectGroupResults(*gpu, items, seed + unsigned(items));
    // More items than kMaxGroupBlocks blocks hold: every group serves two or three in turn.
    const int beyond = 2 * kMaxGroupBlocks * (kGroupBlockThreads / lanes) + 4099;
    expectGroupResults(*gpu, beyond, seed + unsigned(beyond), 4);
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

TEST(LaunchTile, RejectsItemsWithTooManyParts) {
  auto cpu = test::openCpu();
  DeviceBuffer<float> sums(*cpu, 1);
  EXPECT_THROW(launchTile(*cpu, 1, SumParts{nullptr, nullptr, sums.data(), kMaxTileParts + 1}),
               Error);
}

TEST(LaunchPolicy, RejectsInvalidOverride) {
  LaunchPolicy policy;
  EXPECT_THROW(policy.setOverride(KernelId::forward_step, 48), Error);
  EXPECT_THROW(policy.setOverride(KernelId::solve_elasticity_tile, 512), Error);
  EXPECT_NO_THROW(policy.setOverride(KernelId::solve_elasticity_tile, 256));
  EXPECT_THROW(policy.setOverride(KernelId::edge_colliding_edges_detection_cooperative, 64), Error);
  EXPECT_NO_THROW(policy.setOverride(KernelId::edge_colliding_edges_detection_cooperative, 1));
}

TEST(Launch, DebugModeLogsAndChecksEveryLaunch) {
  auto cpu = Device::open(DeviceRequest::Cpu, {.debugLaunches = true});
  testing::internal::CaptureStderr();
  expectEveryIndexVisitedOnce(*cpu, 10);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("forward_step"), std::string::npos) << log;
}

// Device::issueOnSide / joinSide: the side branch starts after the work issued before it, the
// work issued after it on the device's stream runs beside it, and what follows joinSide() sees
// both. The side's kernel is slow (a long dependent chain per index), so a missing join would
// let the last kernel read b before the side wrote it.
struct FillIndex {
  static constexpr KernelId kId = KernelId::forward_step;
  float* out;
  float offset;
  WEFT_HD void operator()(int i) const { out[i] = float(i % 1000) + offset; }
};
struct SlowDouble {
  static constexpr KernelId kId = KernelId::forward_step;
  const float* in;
  float* out;
  WEFT_HD void operator()(int i) const {
    float x = in[i], y = 0.0f;
    for (int k = 0; k < 2000; ++k) y = y * 0.5f + x;  // converges to 2x exactly (x < 2^13)
    out[i] = y;
  }
};
struct AddInto {
  static constexpr KernelId kId = KernelId::forward_step;
  const float *a, *b;
  float* out;
  WEFT_HD void operator()(int i) const { out[i] = a[i] + b[i]; }
};

void expectSideBranchOrdered(const Device& device, bool captured) {
  const int n = device.isCuda() ? 1 << 18 : 1 << 13;
  DeviceBuffer<float> a(device, size_t(n)), b(device, size_t(n)), c(device, size_t(n)),
      d(device, size_t(n));
  b.zero();
  const auto issue = [&] {
    launch(device, n, FillIndex{a.data(), 1.0f});
    const void* mainStream = device.stream();
    device.issueOnSide([&] {
      EXPECT_EQ(device.stream() != mainStream, device.isCuda());
      launch(device, n, SlowDouble{a.data(), b.data()});
    });
    EXPECT_EQ(device.stream(), mainStream);
    launch(device, n, FillIndex{c.data(), 3.0f});
    device.joinSide();
    launch(device, n, AddInto{b.data(), c.data(), d.data()});
  };
  FrameGraph graph(device);
  if (captured) {
    graph.capture(issue);
    if (device.isCuda()) EXPECT_EQ(graph.nodeCount(), 4);
    graph.replay();
  } else {
    issue();
  }
  device.synchronize();
  const std::vector<float> out = d.download();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[size_t(i)], 2.0f * float(i % 1000 + 1) + float(i % 1000) + 3.0f) << "index " << i;
}

TEST(Device, SideBranchRunsAfterWhatCameBeforeAndIsJoinedOnCpu) {
  auto cpu = test::openCpu();
  expectSideBranchOrdered(*cpu, false);
  expectSideBranchOrdered(*cpu, true);
}

TEST(Device, SideBranchRunsAfterWhatCameBeforeAndIsJoinedOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  for (int round = 0; round < 3; ++round) {
    expectSideBranchOrdered(*gpu, false);
    expectSideBranchOrdered(*gpu, true);
  }
}

TEST(Device, CudaRequestWithoutGpuIsAClearError) {
  if (visibleCudaDevices() > 0) GTEST_SKIP() << "a GPU is visible; the error path cannot run";
  try {
    Device::open(DeviceRequest::Cuda);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device cpu"), std::string::npos) << e.what();
  }
}

TEST(Device, ParsesDeviceNames) {
  EXPECT_EQ(parseDeviceRequest("auto"), DeviceRequest::Auto);
  EXPECT_EQ(parseDeviceRequest("cpu"), DeviceRequest::Cpu);
  EXPECT_EQ(parseDeviceRequest("cuda"), DeviceRequest::Cuda);
  EXPECT_THROW(parseDeviceRequest("gpu"), Error);
}

}  // namespace
}  // namespace weft
