// Shared helpers for the test suites: opening backends and skipping without a GPU.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace weft::test

/// Declares `std::unique_ptr<Device> var` on CUDA, or skips the test with the reason.
#define WEFT_REQUIRE_CUDA(var)                  \
  auto var = ::weft::test::openCudaIfVisible(); \
  if (!var) GTEST_SKIP() << "no CUDA GPU: " << ::weft::cudaUnavailableReason()
