// ExclusiveSum against std::exclusive_scan on both backends, on both sides of the one-block limit.

#include "collision/exclusive_sum.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/runtime/buffer.h"
#include "kernels/runtime/errors.h"
#include "test_support.h"

namespace weft {
namespace {

void checkSums(const Device& device) {
  const int largest = 100000;
  const ExclusiveSum sum(device, largest);
  std::mt19937 rng(test::testSeed());
  std::uniform_int_distribution<int> count(0, 40);
  for (int n : {1, 7, 1000, ExclusiveSum::kOneBlockItems - 1, ExclusiveSum::kOneBlockItems,
                ExclusiveSum::kOneBlockItems + 1, largest}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<int> counts(static_cast<size_t>(n));
    for (int& c : counts) c = count(rng);
    std::vector<int> expected(static_cast<size_t>(n));
    std::exclusive_scan(counts.begin(), counts.end(), expected.begin(), 0);
    const DeviceBuffer<int> in(device, counts);
    DeviceBuffer<int> out(device, size_t(n) + 1);
    out.upload(std::vector<int>(size_t(n) + 1, -7));
    sum(in.data(), out.data(), n);
    std::vector<int> got = out.download();
    EXPECT_EQ(got.back(), -7);  // nothing written past n
    got.pop_back();
    EXPECT_EQ(got, expected);
  }
  EXPECT_THROW(sum(nullptr, nullptr, largest + 1), Error);
}

TEST(ExclusiveSum, MatchesTheStandardScanOnCpu) {
  auto cpu = test::openCpu();
  checkSums(*cpu);
}

TEST(ExclusiveSum, MatchesTheStandardScanOnCudaInOneBlockAndAbove) {
  WEFT_REQUIRE_CUDA(gpu);
  checkSums(*gpu);
}

TEST(ExclusiveSum, RejectsANegativeSize) {
  auto cpu = test::openCpu();
  EXPECT_THROW(ExclusiveSum(*cpu, -1), Error);
}

}  // namespace
}  // namespace weft
