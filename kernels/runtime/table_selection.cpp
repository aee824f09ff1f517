#include "kernels/runtime/table_selection.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"

namespace weft {

namespace {

TableSelection fromExplicitFile(const std::string& path, const std::string& origin,
                                const GpuIdentity* gpu) {
  TableSelection s;
  s.origin = origin;
  s.path = path;
  // Malformed or missing: an error, not a fallback, saying where the path came from.
  LaunchTable table;
  try {
    table = LaunchTable::load(path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (the table named by " + origin + ")");
  }
  if (!gpu) {
    s.reason = "the CPU backend has no block sizes; the table " + path + " is not used";
    return s;
  }
  const TableMatch match = matchTable(table, *gpu);
  if (!match.applies) {
    s.warning = true;
    s.reason = "table " + path + " (from " + origin + ") is not applied: it was " + match.reason;
    return s;
  }
  s.reason = "table " + path + " (from " + origin + "), " + match.reason;
  s.table = std::move(table);
  return s;
}

std::string& packagedTablesDir() {
  static std::string path;
  return path;
}

}  // namespace

void setPackagedTablesDir(const std::string& path) {
  packagedTablesDir() = path;
}

std::string defaultTablesDir() {
  std::error_code ec;
#if defined(WEFT_SOURCE_DIR)
  // The source tree's tables, which the tuner writes, while that tree exists.
  const std::string source = std::string(WEFT_SOURCE_DIR) + "/kernels/runtime/tables";
  if (std::filesystem::is_directory(source, ec)) return source;
#endif
#if defined(WEFT_INSTALLED_TABLES_DIR)
  if (std::filesystem::is_directory(WEFT_INSTALLED_TABLES_DIR, ec))
    return WEFT_INSTALLED_TABLES_DIR;
#endif
  if (const std::string& packaged = packagedTablesDir();
      !packaged.empty() && std::filesystem::is_directory(packaged, ec))
    return packaged;
  return "";
}

TableSelection selectLaunchTable(const std::string& cliPath, const GpuIdentity* gpu,
                                 const std::string& tablesDir) {
  if (!cliPath.empty()) return fromExplicitFile(cliPath, "--launch-table", gpu);
  if (const char* env = std::getenv("WEFT_LAUNCH_TABLE"); env && *env)
    return fromExplicitFile(env, "WEFT_LAUNCH_TABLE", gpu);

  TableSelection s;
  if (!gpu) {
    s.reason = "the CPU backend has no block sizes; launch tables do not apply";
    return s;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!tablesDir.empty() && fs::is_directory(tablesDir, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(tablesDir, ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::optional<LaunchTable> best;
    for (const auto& file : files) {
      LaunchTable table = LaunchTable::load(file.string());
      if (!matchTable(table, *gpu).applies) continue;
      // Newest by date (ISO 8601 sorts as text), then by file name for a stable choice.
      if (!best || table.provenance.date > best->provenance.date ||
          (table.provenance.date == best->provenance.date && table.sourcePath > best->sourcePath))
        best = std::move(table);
    }
    if (best) {
      s.origin = "kernels/runtime/tables";
      s.path = best->sourcePath;
      s.reason = "newest table in " + tablesDir + " measured on this GPU model (" +
                 gpu->describe() + "), dated " + best->provenance.date;
      s.table = std::move(best);
      return s;
    }
  }
  s.reason = "no launch table for " + gpu->describe() +
             " (none given, none in kernels/runtime/tables); using the built-in defaults, which "
             "can be several times slower for batches of worlds: `weft tune-launch` measures "
             "this GPU's table (docs/TUNING.md)";
  return s;
}

TableSelection applyLaunchTable(Device& device, const std::string& path, const std::string& scene,
                                int worlds) {
  TableSelection selection = selectLaunchTable(path, device.gpuIdentity(), defaultTablesDir());
  if (const GpuIdentity* gpu = device.gpuIdentity())
    device.setLaunchPolicy(LaunchPolicy::resolve(selection.table ? &*selection.table : nullptr,
                                                 scene, gpu->ccMajor, gpu->ccMinor, worlds));
  return selection;
}

}  // namespace weft
