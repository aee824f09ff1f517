// FrameDriver, the frame loop of Simulation (for either solver part or both): a frame whose
// contacts did not fit runs again from its saved start (carried ranges restored, so nothing is
// applied twice), graph variants are captured once and replayed, and growth of a carried buffer
// is followed. On the CPU and on CUDA.
#include "solver/frame_driver.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "kernels/runtime/launch.h"
#include "test_support.h"

namespace weft {
namespace {

// Adds `amount` to every counter (a stand-in for a frame's work on the carried state).
struct AddToCounters {
  static constexpr KernelId kId = KernelId::forward_step;
  int* counters;
  int amount;
  WEFT_HD void operator()(int i) const { counters[i] += amount; }
};

void expectFramesRunAgainFromTheirStart(const Device& device) {
  DeviceBuffer<int> counters(device, 4);
  counters.zero();
  FrameDriver frames(device, 2, true);
  frames.carry(rangeOf(counters));
  int runs = 0, overflowsLeft = 2;
  const auto body = [&](int amount) {
    return [&, amount] {
      ++runs;
      launch(device, 4, AddToCounters{counters.data(), amount});
    };
  };
  const auto overflow = [&]() -> std::optional<std::string> {
    if (overflowsLeft == 0) return std::nullopt;
    --overflowsLeft;
    return "rows 4 -> 8";
  };
  // Frame 1 overflows twice: it runs three times, and the counters hold one frame's work.
  frames.advance(0, body(1), overflow);
  EXPECT_EQ(counters.download(), std::vector<int>(4, 1));
  EXPECT_EQ(frames.framesDone(), 1);
  ASSERT_EQ(frames.regrowths().size(), 2u);
  EXPECT_EQ(frames.regrowths()[0], "frame 1: rows 4 -> 8 (frame run again)");
  // Each run after a growth captures the graph again (CUDA) or runs the body (CPU).
  EXPECT_EQ(runs, 3);
  // Frames 2 and 3: variant 1 captured once, variant 0 replayed from its capture in frame 1.
  frames.advance(1, body(10), [] { return std::nullopt; });
  frames.advance(0, body(1), [] { return std::nullopt; });
  EXPECT_EQ(counters.download(), std::vector<int>(4, 12));
  EXPECT_EQ(frames.framesDone(), 3);
  // On CUDA a captured variant is replayed without running the body again; on the CPU every frame
  // runs it.
  EXPECT_EQ(runs, device.isCuda() ? 4 : 5);
  // New work for variant 0: its graph is forgotten first. A carried buffer that grows is restored
  // as far as the saved copy reaches, and saved whole from then on.
  frames.resetGraphs();
  overflowsLeft = 1;
  frames.advance(
      0,
      [&] {
        launch(device, 4, AddToCounters{counters.data(), 100});
      },
      [&]() -> std::optional<std::string> {
        if (overflowsLeft == 0) return std::nullopt;
        --overflowsLeft;
        std::vector<int> grown = counters.download();
        grown.resize(8, 7);
        counters = DeviceBuffer<int>(device, grown);
        return "counters 4 -> 8";
      });
  // Restored to the frame's start (12 each; the new slots keep what growth put there), then the
  // frame ran again, re-captured on CUDA (it launches on the grown buffer).
  const std::vector<int> after = counters.download();
  ASSERT_EQ(after.size(), 8u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(after[size_t(i)], 112) << i;
  for (int i = 4; i < 8; ++i) EXPECT_EQ(after[size_t(i)], 7) << i;
}

TEST(FrameDriver, FramesThatOverflowRunAgainFromTheirStart) {
  auto cpu = test::openCpu();
  expectFramesRunAgainFromTheirStart(*cpu);
}

TEST(FrameDriver, CudaFramesThatOverflowRunAgainFromTheirStart) {
  WEFT_REQUIRE_CUDA(gpu);
  expectFramesRunAgainFromTheirStart(*gpu);
}

TEST(FrameDriver, RefusesNoGraphs) {
  auto cpu = test::openCpu();
  EXPECT_THROW(FrameDriver(*cpu, 0, true), Error);
}

}  // namespace
}  // namespace weft
