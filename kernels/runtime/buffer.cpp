#include "kernels/runtime/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/runtime/errors.h"

#if defined(WEFT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace weft {
namespace detail {

namespace {
#if defined(WEFT_WITH_CUDA)
cudaStream_t streamOf(const Device& d) {
  return static_cast<cudaStream_t>(d.stream());
}
#endif
constexpr size_t kHostAlignment = 64;  // one cache line
}  // namespace

void* allocateBytes(const Device& device, size_t bytes) {
  if (bytes == 0) return nullptr;
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    if (device.isCapturing())
      throw Error(
          "internal error: a device buffer was allocated while a CUDA graph was being "
          "captured (nothing may allocate inside step())");
    void* ptr = nullptr;
    WEFT_CUDA_CHECK(cudaMalloc(&ptr, bytes));
    device.noteAllocation(ptr, bytes);
    return ptr;
  }
#endif
  (void)device;
  void* ptr = std::aligned_alloc(kHostAlignment,
                                 (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
  if (!ptr) throw std::bad_alloc();
  device.noteAllocation(ptr, bytes);
  return ptr;
}

void freeBytes(const Device& device, void* ptr) {
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    device.noteRelease(ptr);
    cudaFree(ptr);  // never throws from a destructor; errors surface at the next checked call
    return;
  }
#endif
  device.noteRelease(ptr);
  std::free(ptr);
}

void uploadBytes(const Device& device, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    WEFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, streamOf(device)));
    WEFT_CUDA_CHECK(cudaStreamSynchronize(streamOf(device)));
    return;
  }
#endif
  (void)device;
  std::memcpy(dst, src, bytes);
}

void downloadBytes(const Device& device, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    WEFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, streamOf(device)));
    WEFT_CUDA_CHECK(cudaStreamSynchronize(streamOf(device)));
    return;
  }
#endif
  (void)device;
  std::memcpy(dst, src, bytes);
}

void copyBytesAsync(const Device& device, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    WEFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, streamOf(device)));
    return;
  }
#endif
  (void)device;
  std::memcpy(dst, src, bytes);
}

void zeroBytesAsync(const Device& device, void* dst, size_t bytes) {
  if (bytes == 0) return;
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    WEFT_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, streamOf(device)));
    return;
  }
#endif
  (void)device;
  std::memset(dst, 0, bytes);
}

}  // namespace detail

void throwBufferSizeMismatch(size_t expected, size_t got) {
  throw Error("internal error: buffer holds " + std::to_string(expected) +
              " elements but the copy has " + std::to_string(got));
}

}  // namespace weft
