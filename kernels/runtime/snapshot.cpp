#include "kernels/runtime/snapshot.h"

#include "kernels/runtime/errors.h"

namespace weft {

DeviceSnapshot::DeviceSnapshot(const Device& device) : device_(device) {
  const std::map<void*, size_t> live = device.allocations();  // a copy: we allocate below
  for (const auto& [ptr, bytes] : live) {
    Entry e{ptr, bytes, DeviceBuffer<unsigned char>(device, bytes)};
    detail::copyBytesAsync(device, e.copy.data(), ptr, bytes);
    entries_.push_back(std::move(e));
  }
  device.synchronize();
}

void DeviceSnapshot::restore() const {
  for (const Entry& e : entries_) {
    const auto it = device_.allocations().find(e.ptr);
    if (it == device_.allocations().end() || it->second != e.bytes)
      throw Error("internal error: a snapshotted device buffer was freed before restore()");
    detail::copyBytesAsync(device_, e.ptr, e.copy.data(), e.bytes);
  }
  device_.synchronize();
}

size_t DeviceSnapshot::bytes() const {
  size_t total = 0;
  for (const Entry& e : entries_) total += e.bytes;
  return total;
}

}  // namespace weft
