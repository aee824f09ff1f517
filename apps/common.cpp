#include "apps/common.h"

#include <unistd.h>  // access()

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "apps/ranks.h"
#include "kernels/runtime/errors.h"
#include "scenes/scene.h"

namespace weft {

/// The nearest folder at or above `path` that exists ("." for a relative path whose folders are
/// all still to be made); throws when what exists there is not a folder or is not writable.
namespace {

std::filesystem::path writableAncestor(const std::filesystem::path& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = path;
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec))
    throw Error(what + " cannot be written: " + dir.string() + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(what + " cannot be written: the folder " + dir.string() + " is not writable");
  return dir;
}

}  // namespace

void checkOutputFile(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error(option + " " + path + " is a folder; give the path of a file");
  writableAncestor(fs::path(path).parent_path(), option + " " + path);
}

void checkOutputFolder(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw Error(option + " " + path + " is a file; give a folder for the frames");
  writableAncestor(fs::path(path), option + " " + path);
}

std::unique_ptr<Device> openDevice(const std::string& deviceName, bool debugLaunches) {
  DeviceOptions options;
  options.debugLaunches = debugLaunches;
  const DeviceRequest request = parseDeviceRequest(deviceName);
  // One of several ranks (mpirun): the GPU of its local rank, modulo the GPUs it sees.
  if (ranks().several() && request != DeviceRequest::Cpu)
    options.cudaOrdinal = cudaOrdinalOfRank(ranks(), visibleCudaDevices());
  return Device::open(request, options);
}

TableSelection applyLaunchTable(Device& device, const std::string& tablePath,
                                const std::string& scene, std::ostream& err, int worlds) {
  TableSelection selection = weft::applyLaunchTable(device, tablePath, scene, worlds);
  if (selection.warning) err << "weft: warning: " << selection.reason << "\n";
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
        if (s.benchmark && (item == "all" || (item == "cable") == s.isCable()))
          names.push_back(s.name);
      continue;
    }
    names.push_back(findScene(item).name);  // throws, listing the valid names
  }
  if (names.empty())
    throw Error("no scenes to " + purpose + " in '" + spec +
                "' (valid: cloth, cable, all, or names: " + sceneNames() + ")");
  return names;
}

std::string formatFixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

std::string describeTableInUse(const TableSelection& selection) {
  return selection.table ? selection.table->sourcePath : "built-in defaults";
}

}  // namespace weft
