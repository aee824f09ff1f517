// Shared helpers for the test suites: opening backends, skipping without a GPU, and the seed of
// every randomized test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "kernels/runtime/device.h"

namespace weft::test {

inline std::unique_ptr<Device> openCpu() {
  return Device::open(DeviceRequest::Cpu);
}

/// Opens the CUDA backend, or returns null when no GPU is visible (use WEFT_REQUIRE_CUDA).
inline std::unique_ptr<Device> openCudaIfVisible() {
  if (visibleCudaDevices() == 0) return nullptr;
  return Device::open(DeviceRequest::Cuda);
}

/// The seed of every randomized test: fixed, so a run is reproducible, unless WEFT_TEST_SEED sets
/// another (to explore, or to replay a failure). Tests trace it (SCOPED_TRACE), so a failure
/// prints the seed it ran with.
inline constexpr unsigned kDefaultTestSeed = 20261124u;
inline unsigned testSeed() {
  if (const char* s = std::getenv("WEFT_TEST_SEED")) return unsigned(std::strtoul(s, nullptr, 10));
  return kDefaultTestSeed;
}

}  // namespace weft::test

/// Declares `std::unique_ptr<Device> var` on CUDA, or skips the test with the reason.
#define WEFT_REQUIRE_CUDA(var)                  \
  auto var = ::weft::test::openCudaIfVisible(); \
  if (!var) GTEST_SKIP() << "no CUDA GPU: " << ::weft::cudaUnavailableReason()
