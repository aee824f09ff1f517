// Timing device work: CUDA events on the device's stream (CUDA), a steady host clock (CPU).
// start()/stop() bracket asynchronous work; elapsedMs() waits for stop() to complete.
#pragma once

#include <chrono>

#include "kernels/runtime/device.h"

namespace weft {

class DeviceTimer {
 public:
  explicit DeviceTimer(const Device& device);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void start();
  void stop();
  /// Milliseconds between start() and stop(); synchronizes with stop() on CUDA.
  double elapsedMs() const;

 private:
  const Device* device_;
  void* startEvent_ = nullptr;  // cudaEvent_t
  void* stopEvent_ = nullptr;
  std::chrono::steady_clock::time_point hostStart_, hostStop_;
};

}  // namespace weft
