// DeviceSnapshot: a copy of every live DeviceBuffer of a device, to put everything back exactly
// as it was. The tuner takes one before replaying a step's kernels thousands of times (kernels
// such as update_velocity or the transpose write their own inputs) and restores it afterwards,
// so tuning leaves the simulation bit-for-bit where it found it.
#pragma once

#include <vector>

#include "kernels/runtime/buffer.h"

namespace weft {

class DeviceSnapshot {
 public:
  /// Copies every allocation live on `device` now (synchronizes).
  explicit DeviceSnapshot(const Device& device);
  /// Copies them back (synchronizes). Allocations made since are left alone; throws if one of
  /// the snapshot's allocations was freed meanwhile.
  void restore() const;
  size_t bytes() const;

 private:
  struct Entry {
    void* ptr;
    size_t bytes;
    DeviceBuffer<unsigned char> copy;
  };
  const Device& device_;
  std::vector<Entry> entries_;
};

}  // namespace weft
