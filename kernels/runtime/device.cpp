#include "kernels/runtime/device.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include <omp.h>

#include "kernels/runtime/errors.h"

#if defined(WEFT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace weft {

std::string_view backendName(Backend backend) {
  return backend == Backend::Cuda ? "cuda" : "cpu";
}

DeviceRequest parseDeviceRequest(std::string_view text) {
  if (text == "auto") return DeviceRequest::Auto;
  if (text == "cuda") return DeviceRequest::Cuda;
  if (text == "cpu") return DeviceRequest::Cpu;
  throw Error("unknown device '" + std::string(text) + "': expected auto, cuda or cpu");
}

int visibleCudaDevices() {
#if defined(WEFT_WITH_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls are not poisoned
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

std::string cudaUnavailableReason() {
#if defined(WEFT_WITH_CUDA)
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    // The runtime says "driver version is insufficient" also when there is no driver at all.
    if (status == cudaErrorInsufficientDriver) {
      if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
        dlclose(driver);
        return "no usable CUDA GPU: the NVIDIA driver is older than this build's CUDA runtime "
               "needs; update the driver";
      }
      return "no usable CUDA GPU: no NVIDIA driver is installed (libcuda.so.1 not found)";
    }
    if (status == cudaErrorNoDevice) return "no CUDA GPU is visible";
    return std::string("no usable CUDA GPU (") + cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "no CUDA GPU is visible";
  return "";
#else
  return "this build of Weft has no CUDA backend (configured without CUDA: nvcc was not found, or "
         "WEFT_ENABLE_CUDA=OFF)";
#endif
}

std::unique_ptr<Device> Device::open(DeviceRequest request, const DeviceOptions& options) {
  std::unique_ptr<Device> device(new Device());
  const char* debugEnv = std::getenv("WEFT_DEBUG_LAUNCHES");
  device->debugLaunches_ = options.debugLaunches || (debugEnv && std::string(debugEnv) == "1");

  const bool wantCuda = request == DeviceRequest::Cuda ||
                        (request == DeviceRequest::Auto && visibleCudaDevices() > 0);
  if (!wantCuda) return device;

  if (visibleCudaDevices() == 0)
    throw Error("--device cuda was requested but " + cudaUnavailableReason() +
                "; use --device cpu (or auto) to run on the CPU backend");
#if defined(WEFT_WITH_CUDA)
  if (options.cudaOrdinal < 0 || options.cudaOrdinal >= visibleCudaDevices())
    throw Error("CUDA device " + std::to_string(options.cudaOrdinal) + " does not exist (" +
                std::to_string(visibleCudaDevices()) + " visible)");
  device->backend_ = Backend::Cuda;
  device->cudaOrdinal_ = options.cudaOrdinal;
  WEFT_CUDA_CHECK(cudaSetDevice(options.cudaOrdinal));
  cudaDeviceProp prop{};
  WEFT_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.cudaOrdinal));
  GpuProperties& g = device->gpu_;
  g.identity.name = prop.name;
  g.identity.ccMajor = prop.major;
  g.identity.ccMinor = prop.minor;
  g.identity.smCount = prop.multiProcessorCount;
  g.totalMemoryBytes = prop.totalGlobalMem;
  g.sharedMemoryPerBlockOptin = prop.sharedMemPerBlockOptin;
  g.maxThreadsPerBlock = prop.maxThreadsPerBlock;
  int driver = 0, runtime = 0;
  WEFT_CUDA_CHECK(cudaDriverGetVersion(&driver));
  WEFT_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  g.driverVersion = version(driver);
  g.runtimeVersion = version(runtime);
  cudaStream_t stream = nullptr, side = nullptr;
  WEFT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  device->stream_ = device->current_ = stream;
  WEFT_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  device->sideStream_ = side;
  cudaEvent_t fork = nullptr, join = nullptr;
  WEFT_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  WEFT_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  device->forkEvent_ = fork;
  device->joinEvent_ = join;
  device->policy_ = LaunchPolicy::resolve(nullptr, "", prop.major, prop.minor);
#endif
  return device;
}

Device::~Device() {
#if defined(WEFT_WITH_CUDA)
  if (stream_) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  }
  if (sideStream_) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(sideStream_));
    cudaStreamDestroy(static_cast<cudaStream_t>(sideStream_));
  }
  if (forkEvent_) cudaEventDestroy(static_cast<cudaEvent_t>(forkEvent_));
  if (joinEvent_) cudaEventDestroy(static_cast<cudaEvent_t>(joinEvent_));
#endif
}

void Device::forkSide() const {
#if defined(WEFT_WITH_CUDA)
  if (!isCuda()) return;
  const auto fork = static_cast<cudaEvent_t>(forkEvent_);
  WEFT_CUDA_CHECK(cudaEventRecord(fork, static_cast<cudaStream_t>(stream_)));
  WEFT_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(sideStream_), fork, 0));
  current_ = sideStream_;
#endif
}

void Device::joinSide() const {
#if defined(WEFT_WITH_CUDA)
  if (!isCuda()) return;
  const auto join = static_cast<cudaEvent_t>(joinEvent_);
  WEFT_CUDA_CHECK(cudaEventRecord(join, static_cast<cudaStream_t>(sideStream_)));
  WEFT_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream_), join, 0));
#endif
}

void Device::synchronize() const {
#if defined(WEFT_WITH_CUDA)
  if (!isCuda()) return;
  WEFT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
  WEFT_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(sideStream_)));
#endif
}

bool Device::isCapturing() const {
#if defined(WEFT_WITH_CUDA)
  if (!isCuda()) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  WEFT_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream_), &status));
  return status == cudaStreamCaptureStatusActive;
#else
  return false;
#endif
}

void Device::noteAllocation(void* ptr, size_t bytes) const {
  std::lock_guard<std::mutex> lock(allocationsMutex_);
  allocations_[ptr] = bytes;
}

void Device::noteRelease(void* ptr) const {
  std::lock_guard<std::mutex> lock(allocationsMutex_);
  allocations_.erase(ptr);
}

std::string Device::describe() const {
  if (isCuda()) return "cuda (" + gpu_.identity.describe() + ")";
  return "cpu (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
}

void Device::checkLaunch(KernelId id, int count, int grid, int size,
                         const std::source_location& where) const {
  const std::string site = std::string(where.file_name()) + ":" + std::to_string(where.line());
#if defined(WEFT_WITH_CUDA)
  if (isCuda()) {
    // cudaGetLastError (not Peek) clears a failed configuration, so a caller such as the tuner
    // can catch the error and go on with another block size.
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess)
      throw CudaError("kernel " + std::string(kernelName(id)) + " (n=" + std::to_string(count) +
                          ", grid=" + std::to_string(grid) + ", block=" + std::to_string(size) +
                          ") failed to launch: " + cudaGetErrorString(status) + " (" + site + ")",
                      status);
  }
#endif
  if (!debugLaunches_) return;
  const bool capturing = isCapturing();
  if (isCuda() && !capturing) synchronize();
  // A tile launch of an untuned batch may run at half the policy's size
  // (LaunchPolicy::narrowsToOneWave): say so beside where the size came from.
  std::string source = isCuda() ? std::string(launchSourceName(policy_.choice(id).source)) : "cpu";
  if (isCuda() && size != policy_.size(id))
    source += ", narrowed from " + std::to_string(policy_.size(id)) + " to one wave";
  std::fprintf(stderr, "weft: launch %-40s n=%-8d grid=%-6d block=%-5d [%s]%s %s\n",
               std::string(kernelName(id)).c_str(), count, grid, size, source.c_str(),
               capturing ? " (captured)" : "", site.c_str());
}

}  // namespace weft
