#include "apps/common.h"

#include <fcntl.h>   // open()
#include <unistd.h>  // access(), close(), unlink()

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "apps/ranks.h"
#include "kernels/runtime/errors.h"
#include "scenes/scene.h"

namespace weft {

namespace {

/// The nearest folder at or above `path` that exists ("." for a relative path whose folders are
/// all still to be made); throws when what exists there is not a folder or a file cannot be
/// created in it. Permissions alone do not say (root may write anywhere, but not into /proc or a
/// read-only file system), so it creates and removes a file there.
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
  const fs::path probe = dir / (".weft-write-check-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno != EEXIST)
    throw Error(what + " cannot be written: no file can be created in " + dir.string() + " (" +
                std::strerror(errno) + ")");
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
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

std::vector<std::string> splitList(const std::string& text, const std::string& option) {
  if (text.empty()) return {};
  return commaItems(text, option + " '" + text + "'");
}

std::vector<std::string> resolveSceneList(const std::string& spec, const std::string& purpose) {
  std::vector<std::string> names;
  for (const std::string& item : splitList(spec, "--scenes")) {
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
