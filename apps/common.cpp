#include "apps/common.h"

namespace weft {

std::unique_ptr<Device> openDevice(const std::string& deviceName, bool debugLaunches) {
  DeviceOptions options;
  options.debugLaunches = debugLaunches;
  return Device::open(parseDeviceRequest(deviceName), options);
}

TableSelection applyLaunchTable(Device& device, const std::string& tablePath,
                                const std::string& scene, std::ostream& err) {
  TableSelection selection = selectLaunchTable(tablePath, device.gpuIdentity(), defaultTablesDir());
  if (selection.warning) err << "weft: warning: " << selection.reason << "\n";
  if (device.isCuda()) {
    const GpuIdentity& gpu = device.gpu().identity;
    device.setLaunchPolicy(LaunchPolicy::resolve(selection.table ? &*selection.table : nullptr,
                                                 scene, gpu.ccMajor, gpu.ccMinor));
  }
  return selection;
}

std::string describeTableInUse(const TableSelection& selection) {
  return selection.table ? selection.table->sourcePath : "built-in defaults";
}

}  // namespace weft
