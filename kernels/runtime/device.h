// Device: the execution context every buffer and launch belongs to.
//
// A Device is either the CPU backend (kernels run as OpenMP loops on the host) or one CUDA GPU
// with its own non-blocking stream (kernels run as CUDA grids; memory operations and launches are
// asynchronous on that stream and can be captured into a CUDA graph). It also carries what
// launch() needs to know: the resolved launch policy (block sizes from the launch table), the
// debug-launch switch (synchronize and log every launch) and an optional launch observer (the
// tuner's recorder). `--device auto` picks CUDA when a GPU is visible, else the CPU.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>

#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/launch_table.h"

namespace weft {

enum class Backend { Cpu, Cuda };
enum class DeviceRequest { Auto, Cuda, Cpu };

std::string_view backendName(Backend backend);
/// "auto", "cuda" or "cpu"; anything else throws weft::Error listing the valid names.
DeviceRequest parseDeviceRequest(std::string_view text);

/// Number of CUDA GPUs this process can use (0 without a driver, without a GPU, or in a
/// CPU-only build). Never throws.
int visibleCudaDevices();
/// Why no GPU can be used, as a sentence ("" if one can).
std::string cudaUnavailableReason();

struct GpuProperties {
  GpuIdentity identity;
  std::string driverVersion;   // e.g. "13.0" (CUDA driver API version)
  std::string runtimeVersion;  // CUDA runtime this binary was built against
  size_t totalMemoryBytes = 0;
  size_t sharedMemoryPerBlockOptin = 0;
  int maxThreadsPerBlock = 0;
};

/// One launch as seen by a LaunchObserver (the tuner's recorder). `replay` relaunches the same
/// kernel with the same arguments on `stream` with another block (or tile) size.
/// What the compiler gave a kernel instantiation (cudaFuncGetAttributes: the -Xptxas -v numbers).
struct KernelResources {
  int registers = 0;           // per thread
  int localBytes = 0;          // stack frame / spills per thread
  int staticSharedBytes = 0;   // per block
  int dynamicSharedBytes = 0;  // per block at the queried size
  int maxThreadsPerBlock = 0;
};

struct LaunchRecord {
  KernelId id;
  int count = 0;  // items (threads for elementwise kernels, tiles for tile kernels)
  int size = 0;   // block size, or tile size
  int grid = 0;
  std::function<void(void* stream, int size)> replay;
  std::function<KernelResources(int size)> resources;  // of the instantiation used at `size`
};

class LaunchObserver {
 public:
  virtual ~LaunchObserver() = default;
  virtual void onLaunch(const LaunchRecord& record) = 0;
};

struct DeviceOptions {
  bool debugLaunches = false;  // synchronize and log every launch (also WEFT_DEBUG_LAUNCHES=1)
  int cudaOrdinal = 0;
};

class Device {
 public:
  /// Opens the requested backend. Throws weft::Error when `Cuda` is requested and no GPU can be
  /// used, saying why and how to fall back (--device cpu).
  static std::unique_ptr<Device> open(DeviceRequest request, const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Backend backend() const { return backend_; }
  bool isCuda() const { return backend_ == Backend::Cuda; }
  /// GPU properties; only valid on the CUDA backend.
  const GpuProperties& gpu() const { return gpu_; }
  /// The GPU's identity for table matching, or null on the CPU backend.
  const GpuIdentity* gpuIdentity() const { return isCuda() ? &gpu_.identity : nullptr; }
  /// The cudaStream_t work is issued on now (null on the CPU backend): the device's own stream,
  /// or its side stream while issueOnSide() runs.
  void* stream() const { return current_; }
  /// Issues the work `issue` launches on a second stream that starts after everything issued so
  /// far and runs beside what is issued after it, until joinSide() makes the device's stream wait
  /// for it. For phases that touch disjoint data, so the bits are those of the order issued (on
  /// the CPU backend `issue` simply runs there). Inside a graph capture the two streams become
  /// two branches of the graph. Every issueOnSide() must be followed by a joinSide() before the
  /// device is synchronized or a capture ends.
  template <class F>
  void issueOnSide(F&& issue) const {
    forkSide();
    try {
      issue();
    } catch (...) {
      current_ = stream_;
      throw;
    }
    current_ = stream_;
  }
  /// The device's stream waits for the work issued on the side since the last fork.
  void joinSide() const;
  /// Waits for all work issued so far; checks for asynchronous errors.
  void synchronize() const;
  /// True while a CUDA graph capture is recording this device's stream.
  bool isCapturing() const;
  /// "cuda (NVIDIA H100 80GB HBM3, sm_90, 132 SMs)" or "cpu (16 OpenMP threads)".
  std::string describe() const;

  const LaunchPolicy& launchPolicy() const { return policy_; }
  void setLaunchPolicy(const LaunchPolicy& policy) { policy_ = policy; }
  bool debugLaunches() const { return debugLaunches_; }
  void setDebugLaunches(bool on) { debugLaunches_ = on; }
  LaunchObserver* observer() const { return observer_; }
  void setObserver(LaunchObserver* observer) { observer_ = observer; }

  /// Every live DeviceBuffer allocation (pointer → bytes), kept by the buffers themselves. The
  /// tuner snapshots all of them so that replaying kernels leaves no trace (DeviceSnapshot).
  const std::map<void*, size_t>& allocations() const { return allocations_; }
  void noteAllocation(void* ptr, size_t bytes) const;
  void noteRelease(void* ptr) const;

  /// Called by launch() after issuing a kernel: checks the launch (throws CudaError naming the
  /// kernel, its shape and the call site) and, in debug mode, synchronizes and logs it.
  void checkLaunch(KernelId id, int count, int grid, int size,
                   const std::source_location& where) const;

 private:
  Device() = default;
  void forkSide() const;

  Backend backend_ = Backend::Cpu;
  GpuProperties gpu_;
  void* stream_ = nullptr;
  mutable void* current_ = nullptr;  // stream_, or sideStream_ inside issueOnSide()
  void* sideStream_ = nullptr;       // issueOnSide's stream and its fork and join events
  void* forkEvent_ = nullptr;
  void* joinEvent_ = nullptr;
  int cudaOrdinal_ = 0;
  LaunchPolicy policy_;
  bool debugLaunches_ = false;
  LaunchObserver* observer_ = nullptr;
  mutable std::mutex allocationsMutex_;
  mutable std::map<void*, size_t> allocations_;
};

}  // namespace weft
