#include "collision/exclusive_sum.h"

#include <numeric>
#include <string>

#include "kernels/runtime/errors.h"

#if defined(__CUDACC__)
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#endif

namespace weft {

#if defined(__CUDACC__)
namespace {

// The block's shape is the algorithm's (a blocked arrangement for cub::BlockScan), not a tuning
// choice, so it is not in the launch table.
constexpr int kThreads = 1024;
constexpr int kItemsPerThread = ExclusiveSum::kOneBlockItems / kThreads;

__global__ void __launch_bounds__(kThreads)
    exclusiveSumInOneBlock(const int* __restrict__ counts, int* __restrict__ out, int n) {
  using BlockScan = cub::BlockScan<int, kThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  int items[kItemsPerThread];
  const int first = int(threadIdx.x) * kItemsPerThread;
  for (int i = 0; i < kItemsPerThread; ++i) items[i] = first + i < n ? counts[first + i] : 0;
  BlockScan(temp).ExclusiveSum(items, items);
  for (int i = 0; i < kItemsPerThread; ++i)
    if (first + i < n) out[first + i] = items[i];
}

}  // namespace
#endif

ExclusiveSum::ExclusiveSum(const Device& device, int maxItems)
    : device_(&device), maxItems_(maxItems) {
  if (maxItems < 0) throw Error("an exclusive sum over " + std::to_string(maxItems) + " items");
  if (device.isCuda() && maxItems > kOneBlockItems) {
#if defined(__CUDACC__)
    size_t bytes = 0;
    WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int*>(nullptr),
                                                  static_cast<int*>(nullptr), maxItems,
                                                  static_cast<cudaStream_t>(device.stream())));
    storage_ = DeviceBuffer<unsigned char>(device, bytes);
#else
    throw Error("internal error: collision/exclusive_sum.cpp was not compiled as CUDA");
#endif
  }
}

void ExclusiveSum::operator()(const int* counts, int* out, int n) const {
  if (n > maxItems_)
    throw Error("internal error: an exclusive sum over " + std::to_string(n) +
                " items, prepared for " + std::to_string(maxItems_));
  if (n <= 0) return;
  if (!device_->isCuda()) {
    std::exclusive_scan(counts, counts + n, out, 0);
    return;
  }
#if defined(__CUDACC__)
  const auto stream = static_cast<cudaStream_t>(device_->stream());
  if (n <= kOneBlockItems) {
    exclusiveSumInOneBlock<<<1, kThreads, 0, stream>>>(counts, out, n);
    WEFT_CUDA_CHECK(cudaGetLastError());
    return;
  }
  size_t bytes = storage_.size();
  WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(storage_.data(), bytes, counts, out, n, stream));
#endif
}

}  // namespace weft
