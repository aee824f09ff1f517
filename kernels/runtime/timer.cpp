#include "kernels/runtime/timer.h"

#include "kernels/runtime/errors.h"

#if defined(WEFT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace weft {

DeviceTimer::DeviceTimer(const Device& device) : device_(&device) {
#if defined(WEFT_WITH_CUDA)
  if (device.isCuda()) {
    cudaEvent_t a = nullptr, b = nullptr;
    WEFT_CUDA_CHECK(cudaEventCreate(&a));
    WEFT_CUDA_CHECK(cudaEventCreate(&b));
    startEvent_ = a;
    stopEvent_ = b;
  }
#endif
}

DeviceTimer::~DeviceTimer() {
#if defined(WEFT_WITH_CUDA)
  if (startEvent_) cudaEventDestroy(static_cast<cudaEvent_t>(startEvent_));
  if (stopEvent_) cudaEventDestroy(static_cast<cudaEvent_t>(stopEvent_));
#endif
}

void DeviceTimer::start() {
#if defined(WEFT_WITH_CUDA)
  if (device_->isCuda()) {
    WEFT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(startEvent_),
                                    static_cast<cudaStream_t>(device_->stream())));
    return;
  }
#endif
  hostStart_ = std::chrono::steady_clock::now();
}

void DeviceTimer::stop() {
#if defined(WEFT_WITH_CUDA)
  if (device_->isCuda()) {
    WEFT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stopEvent_),
                                    static_cast<cudaStream_t>(device_->stream())));
    return;
  }
#endif
  hostStop_ = std::chrono::steady_clock::now();
}

double DeviceTimer::elapsedMs() const {
#if defined(WEFT_WITH_CUDA)
  if (device_->isCuda()) {
    WEFT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stopEvent_)));
    float ms = 0.0f;
    WEFT_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(startEvent_),
                                         static_cast<cudaEvent_t>(stopEvent_)));
    return ms;
  }
#endif
  return std::chrono::duration<double, std::milli>(hostStop_ - hostStart_).count();
}

}  // namespace weft
