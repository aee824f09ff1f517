#include "apps/common.h"

#include <sstream>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"

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

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<std::string> resolveSceneList(const std::string& spec, const std::string& purpose) {
  std::vector<std::string> names;
  for (const std::string& item : splitList(spec)) {
    if (item == "all" || item == "cloth" || item == "cable") {
      for (const Scene& s : allScenes())
        if (s.benchmark && (item == "all" || (item == "cable") == s.cable)) names.push_back(s.name);
      continue;
    }
    names.push_back(findScene(item).name);  // throws, listing the valid names
  }
  if (names.empty())
    throw Error("no scenes to " + purpose + " in '" + spec +
                "' (valid: cloth, cable, all, or names: " + sceneNames() + ")");
  return names;
}

std::string describeTableInUse(const TableSelection& selection) {
  return selection.table ? selection.table->sourcePath : "built-in defaults";
}

}  // namespace weft
