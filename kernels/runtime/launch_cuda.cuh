// The CUDA side of launch() (launch.h): the two generic __global__ wrappers and their launch.
// Included only when nvcc compiles the translation unit.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "tuning/kernel_ids.h"

namespace weft::detail {

/// One thread per item: i = global thread index.
template <class K>
__global__ void elementsKernel(const K kernel, int count) {
  const int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (i < count) kernel(i);
}

/// One tile (= one block of kTile threads) per item. Lanes fill shared-memory slots with the
/// item's parts (zero past the count, up to the next power of two), then a pairwise tree sums
/// the slots in an order that depends only on the part count, and lane 0 finishes the item.
template <int kTile, class K>
__global__ void __launch_bounds__(kTile) tilesKernel(const K kernel, int count) {
  using Part = typename K::Part;
  extern __shared__ __align__(16) unsigned char sharedBytes[];
  Part* slots = reinterpret_cast<Part*>(sharedBytes);
  const int item = int(blockIdx.x);
  const int lane = int(threadIdx.x);
  const int parts = kernel.partCount(item);
  int width = 1;
  while (width < parts) width *= 2;
  for (int s = lane; s < width; s += kTile) slots[s] = s < parts ? kernel.part(item, s) : Part{};
  __syncthreads();
  for (int stride = width / 2; stride > 0; stride /= 2) {
    for (int s = lane; s < stride; s += kTile) slots[s] += slots[s + stride];
    __syncthreads();
  }
  if (lane == 0) kernel.finish(item, parts > 0 ? slots[0] : Part{});
}

/// One thread per item, with a per-thread slice of dynamic shared memory.
template <class K>
__global__ void elementsKernelWithScratch(const K kernel, int count) {
  extern __shared__ __align__(16) unsigned char sharedScratch[];
  const int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
  if (i < count) kernel(i, sharedScratch + threadIdx.x * K::kSharedBytesPerThread);
}

/// Shared memory a block may use without opting in to more (cudaFuncSetAttribute), as the
/// reference's kernels do: 48 KB on every GPU since Volta.
inline constexpr size_t kDefaultSharedBytesPerBlock = 48 * 1024;

/// The most threads a block of `function` can have (fewer than 1024 when it uses many registers).
template <class F>
int maxThreadsPerBlock(F* function) {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, function) != cudaSuccess) {
    cudaGetLastError();
    return 1024;
  }
  return attributes.maxThreadsPerBlock;
}

/// Throws CudaError when `block` threads (and `sharedBytes`) cannot launch `function`. Checked on
/// the host before launching, because inside a graph capture a launch that is too large is only
/// reported when the graph is instantiated, far from the cause.
template <auto Function>
void checkLaunchFits(KernelId id, int block, size_t sharedBytes) {
  static const int limit = maxThreadsPerBlock(Function);  // once per kernel instantiation
  if (block > limit)
    throw CudaError("kernel " + std::string(kernelName(id)) + ": a block of " +
                        std::to_string(block) + " threads exceeds its limit of " +
                        std::to_string(limit) + " (registers per thread)",
                    int(cudaErrorLaunchOutOfResources));
  if (sharedBytes > kDefaultSharedBytesPerBlock)
    throw CudaError("kernel " + std::string(kernelName(id)) + ": a block of " +
                        std::to_string(block) + " threads needs " + std::to_string(sharedBytes) +
                        " B of shared memory, more than the 48 KB limit",
                    int(cudaErrorInvalidValue));
}

/// The compiler's resource usage of a kernel instantiation.
template <class F>
KernelResources resourcesOf(F* function, int dynamicSharedBytes) {
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, function) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return {a.numRegs, int(a.localSizeBytes), int(a.sharedSizeBytes), dynamicSharedBytes,
          a.maxThreadsPerBlock};
}

template <class K>
KernelResources elementsKernelResources(const K&, int block) {
  if constexpr (requires { K::kSharedBytesPerThread; })
    return resourcesOf(elementsKernelWithScratch<K>, block * K::kSharedBytesPerThread);
  else
    return resourcesOf(elementsKernel<K>, 0);
}

template <class K>
KernelResources tilesKernelResources(const K& kernel, int tile) {
  int width = 1;
  while (width < kernel.maxParts()) width *= 2;
  const int shared = width * int(sizeof(typename K::Part));
  switch (tile) {
    case 8:
      return resourcesOf(tilesKernel<8, K>, shared);
    case 16:
      return resourcesOf(tilesKernel<16, K>, shared);
    case 32:
      return resourcesOf(tilesKernel<32, K>, shared);
    case 64:
      return resourcesOf(tilesKernel<64, K>, shared);
    case 128:
      return resourcesOf(tilesKernel<128, K>, shared);
    default:
      return resourcesOf(tilesKernel<256, K>, shared);
  }
}

template <class K>
int launchElementsOnCuda(void* stream, int count, int block, const K& kernel) {
  const int grid = (count + block - 1) / block;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if constexpr (requires { K::kSharedBytesPerThread; }) {
    const size_t bytes = size_t(block) * K::kSharedBytesPerThread;
    checkLaunchFits<elementsKernelWithScratch<K>>(K::kId, block, bytes);
    elementsKernelWithScratch<K><<<grid, block, bytes, s>>>(kernel, count);
  } else {
    checkLaunchFits<elementsKernel<K>>(K::kId, block, 0);
    elementsKernel<K><<<grid, block, 0, s>>>(kernel, count);
  }
  return grid;
}

template <class K>
int launchTilesOnCuda(void* stream, int count, int tile, const K& kernel) {
  int width = 1;
  while (width < kernel.maxParts()) width *= 2;
  const size_t sharedBytes = size_t(width) * sizeof(typename K::Part);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (tile) {
    case 8:
      tilesKernel<8, K><<<count, 8, sharedBytes, s>>>(kernel, count);
      break;
    case 16:
      tilesKernel<16, K><<<count, 16, sharedBytes, s>>>(kernel, count);
      break;
    case 32:
      tilesKernel<32, K><<<count, 32, sharedBytes, s>>>(kernel, count);
      break;
    case 64:
      tilesKernel<64, K><<<count, 64, sharedBytes, s>>>(kernel, count);
      break;
    case 128:
      tilesKernel<128, K><<<count, 128, sharedBytes, s>>>(kernel, count);
      break;
    case 256:
      tilesKernel<256, K><<<count, 256, sharedBytes, s>>>(kernel, count);
      break;
    default:
      throw Error("tile size " + std::to_string(tile) +
                  " is not instantiated (valid: 8, 16, 32, 64, 128, 256)");
  }
  return count;
}

}  // namespace weft::detail
