// ExclusiveSum: out[i] = counts[0] + … + counts[i − 1] for ints on the device, asynchronous and
// graph-capturable (the detectors place each shape's rows and each body's list with it).
//
// On CUDA, up to kOneBlockItems items are summed by one block (cub::BlockScan, one launch); more
// go to cub::DeviceScan (two launches: an initialization and the look-back scan), whose
// temporary storage is allocated here for up to `maxItems`. On the CPU, std::exclusive_scan.
#pragma once

#include "kernels/runtime/buffer.h"
#include "kernels/runtime/device.h"

namespace weft {

class ExclusiveSum {
 public:
  /// Items one CUDA block sums (1024 threads × 8); above this, CUB's device scan.
  static constexpr int kOneBlockItems = 8192;

  /// Ready to sum up to `maxItems` ints; throws weft::Error for a negative count.
  ExclusiveSum(const Device& device, int maxItems);

  /// out[0, n) = exclusive sums of counts[0, n); n ≤ maxItems. `counts` and `out` may not overlap.
  void operator()(const int* counts, int* out, int n) const;

 private:
  const Device* device_;
  int maxItems_ = 0;
  mutable DeviceBuffer<unsigned char> storage_;  // CUB temporary storage (CUDA, > kOneBlockItems)
};

}  // namespace weft
