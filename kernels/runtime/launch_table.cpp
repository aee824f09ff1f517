#include "kernels/runtime/launch_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"

namespace weft {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "weft-launch-table";
constexpr int kVersion = 1;

// A parse error: "<file>: field '<path>': <what>".
[[noreturn]] void fail(const std::string& source, const std::string& field,
                       const std::string& what) {
  throw Error("launch table " + source + ": field '" + field + "': " + what);
}

/// Levenshtein distance (insertions, deletions, substitutions).
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

void rejectUnknownFields(const json& object, const std::set<std::string>& allowed,
                         const std::string& source, const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(source, path.empty() ? key : path + "." + key,
           "unknown field (expected one of: " + list + ")");
    }
  }
}

const json& require(const json& object, const std::string& key, const std::string& source,
                    const std::string& path) {
  const std::string field = path.empty() ? key : path + "." + key;
  if (!object.is_object() || !object.contains(key)) fail(source, field, "missing");
  return object.at(key);
}

int requireInt(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_number_integer()) fail(source, field, "expected an integer");
  // Read at 64 bits and range-checked: get<int>() would wrap 4294967360 to 64.
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    if (v > std::uint64_t(std::numeric_limits<int>::max()))
      fail(source, field, std::to_string(v) + " is out of range");
    return int(v);
  }
  const std::int64_t v = value.get<std::int64_t>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail(source, field, std::to_string(v) + " is out of range");
  return int(v);
}

std::string requireString(const json& value, const std::string& source, const std::string& field) {
  if (!value.is_string()) fail(source, field, "expected a string");
  return value.get<std::string>();
}

std::map<KernelId, TableEntry> parseKernelMap(const json& object, const std::string& source,
                                              const std::string& path) {
  if (!object.is_object()) fail(source, path, "expected an object of kernel entries");
  std::map<KernelId, TableEntry> entries;
  for (const auto& [name, value] : object.items()) {
    const std::string field = path + "." + name;
    const auto id = kernelFromName(name);
    if (!id) fail(source, field, unknownKernelMessage(name));
    if (!value.is_object()) fail(source, field, "expected an object with block_size");
    rejectUnknownFields(value, {"block_size", "default", "speedup"}, source, field);
    TableEntry entry;
    entry.size =
        requireInt(require(value, "block_size", source, field), source, field + ".block_size");
    if (!isValidLaunchSize(*id, entry.size)) {
      fail(source, field + ".block_size",
           std::to_string(entry.size) + " is not a valid " + validLaunchSizesText(*id));
    }
    if (value.contains("default")) {
      entry.defaultSize = requireInt(value.at("default"), source, field + ".default");
      if (!isValidLaunchSize(*id, entry.defaultSize))
        fail(source, field + ".default", "not a valid launch size for this kernel");
    }
    if (value.contains("speedup")) {
      if (!value.at("speedup").is_number()) fail(source, field + ".speedup", "expected a number");
      entry.speedup = value.at("speedup").get<double>();
      if (!(entry.speedup > 0.0) || !std::isfinite(entry.speedup))
        fail(source, field + ".speedup", "must be a positive finite number");
    }
    entries[*id] = entry;
  }
  return entries;
}

json entryToJson(const TableEntry& e) {
  json j = {{"block_size", e.size}};
  if (e.defaultSize > 0) j["default"] = e.defaultSize;
  if (e.speedup > 0.0) j["speedup"] = std::round(e.speedup * 1000.0) / 1000.0;
  return j;
}

json kernelMapToJson(const std::map<KernelId, TableEntry>& entries) {
  json j = json::object();
  for (const auto& [id, e] : entries) j[std::string(kernelName(id))] = entryToJson(e);
  return j;
}

}  // namespace

std::string GpuIdentity::describe() const {
  return name + " (sm_" + std::to_string(ccMajor) + std::to_string(ccMinor) + ", " +
         std::to_string(smCount) + " SMs)";
}

LaunchTable LaunchTable::parse(std::string_view jsonText, const std::string& sourceName) {
  json root;
  try {
    root = json::parse(jsonText);
  } catch (const json::parse_error& e) {
    throw Error("launch table " + sourceName + " is not valid JSON: " + e.what());
  }
  if (!root.is_object()) fail(sourceName, "(root)", "expected a JSON object");
  rejectUnknownFields(root, {"format", "version", "gpu", "provenance", "kernels", "scenes"},
                      sourceName, "");

  const std::string format =
      requireString(require(root, "format", sourceName, ""), sourceName, "format");
  if (format != kFormat) fail(sourceName, "format", "expected \"weft-launch-table\"");
  const int version = requireInt(require(root, "version", sourceName, ""), sourceName, "version");
  if (version != kVersion)
    fail(sourceName, "version", "unsupported version " + std::to_string(version) + " (expected 1)");

  LaunchTable table;
  table.sourcePath = sourceName;

  const json& gpu = require(root, "gpu", sourceName, "");
  rejectUnknownFields(gpu, {"name", "compute_capability", "sm_count"}, sourceName, "gpu");
  table.gpu.name = requireString(require(gpu, "name", sourceName, "gpu"), sourceName, "gpu.name");
  const std::string cc = requireString(require(gpu, "compute_capability", sourceName, "gpu"),
                                       sourceName, "gpu.compute_capability");
  if (std::sscanf(cc.c_str(), "%d.%d", &table.gpu.ccMajor, &table.gpu.ccMinor) != 2)
    fail(sourceName, "gpu.compute_capability", "expected \"major.minor\", e.g. \"9.0\"");
  table.gpu.smCount =
      requireInt(require(gpu, "sm_count", sourceName, "gpu"), sourceName, "gpu.sm_count");
  if (table.gpu.smCount <= 0) fail(sourceName, "gpu.sm_count", "must be positive");

  if (root.contains("provenance")) {
    const json& p = root.at("provenance");
    rejectUnknownFields(p, {"driver", "cuda_runtime", "date", "commit", "scenes", "generator"},
                        sourceName, "provenance");
    auto optString = [&](const char* key, std::string& out) {
      if (p.contains(key))
        out = requireString(p.at(key), sourceName, std::string("provenance.") + key);
    };
    optString("driver", table.provenance.driver);
    optString("cuda_runtime", table.provenance.cudaRuntime);
    optString("date", table.provenance.date);
    optString("commit", table.provenance.commit);
    optString("generator", table.provenance.generator);
    if (p.contains("scenes")) {
      if (!p.at("scenes").is_array()) fail(sourceName, "provenance.scenes", "expected an array");
      for (const auto& s : p.at("scenes"))
        table.provenance.scenes.push_back(requireString(s, sourceName, "provenance.scenes[]"));
    }
  }

  table.kernels = parseKernelMap(require(root, "kernels", sourceName, ""), sourceName, "kernels");
  if (root.contains("scenes")) {
    const json& scenes = root.at("scenes");
    if (!scenes.is_object()) fail(sourceName, "scenes", "expected an object of scene names");
    for (const auto& [scene, entries] : scenes.items())
      table.scenes[scene] = parseKernelMap(entries, sourceName, "scenes." + scene);
  }
  return table;
}

LaunchTable LaunchTable::load(const std::string& path) {
  // A table is a few kilobytes (one entry per kernel and scene); anything far larger is not one,
  // and is refused before it is read.
  constexpr std::uintmax_t kMaxTableBytes = 16u << 20;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("launch table " + path + " is a folder; give the table's .json file");
  if (const std::uintmax_t size = std::filesystem::file_size(path, ec);
      !ec && size > kMaxTableBytes)
    throw Error(
        "launch table " + path + " is " + std::to_string(size >> 20) +
        " MB; a launch table is a few kilobytes (at most 16 MB are read), so this is not one");
  std::ifstream in(path);
  if (!in) throw Error("launch table " + path + " cannot be opened (does the file exist?)");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

std::string LaunchTable::toJsonText() const {
  json root;
  root["format"] = kFormat;
  root["version"] = kVersion;
  root["gpu"] = {
      {"name", gpu.name},
      {"compute_capability", std::to_string(gpu.ccMajor) + "." + std::to_string(gpu.ccMinor)},
      {"sm_count", gpu.smCount}};
  root["provenance"] = {{"driver", provenance.driver}, {"cuda_runtime", provenance.cudaRuntime},
                        {"date", provenance.date},     {"commit", provenance.commit},
                        {"scenes", provenance.scenes}, {"generator", provenance.generator}};
  root["kernels"] = kernelMapToJson(kernels);
  if (!scenes.empty()) {
    json s = json::object();
    for (const auto& [scene, entries] : scenes) s[scene] = kernelMapToJson(entries);
    root["scenes"] = s;
  }
  return root.dump(2) + "\n";
}

void LaunchTable::save(const std::string& path) const {
  // The folder may not exist yet (git does not keep empty folders such as kernels/runtime/tables/).
  writeFileAtomically(path, toJsonText(), "launch table");
}

std::string unknownKernelMessage(std::string_view name) {
  // Names within a few edits, or that contain what was typed (a prefix such as "lbvh_refit").
  const size_t allowed = std::max<size_t>(2, name.size() / 4);
  std::vector<std::pair<size_t, std::string_view>> close;
  for (KernelId id : allKernels()) {
    const std::string_view candidate = kernelName(id);
    const size_t d = editDistance(name, candidate);
    if (d <= allowed || (name.size() >= 4 && candidate.find(name) != std::string_view::npos))
      close.push_back({d, candidate});
  }
  std::sort(close.begin(), close.end());
  std::string message = "unknown kernel '" + std::string(name) + "' (";
  if (!close.empty()) {
    message += "did you mean ";
    for (size_t i = 0; i < close.size() && i < 3; ++i)
      message += (i ? i + 1 == std::min<size_t>(close.size(), 3) ? " or " : ", " : "") +
                 std::string(close[i].second);
    message += "? ";
  }
  return message + "kernels/runtime/kernel_ids.h lists all " + std::to_string(kNumKernels) +
         " kernels)";
}

TableMatch matchTable(const LaunchTable& table, const GpuIdentity& current) {
  TableMatch m;
  if (table.gpu.name == current.name && table.gpu.ccMajor == current.ccMajor &&
      table.gpu.ccMinor == current.ccMinor && table.gpu.smCount == current.smCount) {
    m.applies = true;
    m.reason = "measured on this GPU model (" + current.describe() + ")";
  } else {
    m.reason = "measured on " + table.gpu.describe() + ", but this GPU is " + current.describe() +
               "; using the built-in defaults instead (run `weft tune-launch` to measure a table "
               "for this GPU)";
  }
  return m;
}

int builtInLaunchSize(KernelId id, int ccMajor, int /*ccMinor*/) {
  // The reference's own launch sizes (Warp's default block of 256; the tile solve's
  // TILE_SIZE_TRI_MESH_ELASTICITY_SOLVE = 16; 16 for BVH detection), the same on every
  // architecture it supports.
  // Tuned values live in tables, never here.
  (void)ccMajor;
  switch (id) {
    case KernelId::vertex_triangle_collision_detection:
    case KernelId::vertex_triangle_collision_detection_stackless:
    case KernelId::edge_colliding_edges_detection:
    case KernelId::edge_colliding_edges_detection_stackless:
      return 16;  // the reference's collision_detection_block_size
    // New kernels without a reference counterpart: what their structure suggests, until a table
    // says otherwise.
    case KernelId::solve_elasticity_self_contact_tile:
      return 64;  // a particle's 64 contact runs, one per lane (the separate accumulation's width)
    case KernelId::vertex_triangle_collision_detection_cooperative:
    case KernelId::edge_colliding_edges_detection_cooperative:
      return 32;  // a warp per query: groups sharing a warp would diverge from each other
    case KernelId::solve_rigid_body_tile:
    case KernelId::solve_rigid_body_tile_folding_duals:
      return 32;  // one round for a body's parts (inertia, joints, up to 16 contact runs)
    default:
      break;
  }
  switch (launchKind(id)) {
    case LaunchKind::Tile:
      return 16;  // the reference's tile solve
    case LaunchKind::Group:
      return 32;  // a warp per item
    case LaunchKind::Elementwise:
      break;
  }
  return 256;
}

std::string_view launchSourceName(LaunchSource source) {
  switch (source) {
    case LaunchSource::BatchEntry:
      return "table, batch entry";
    case LaunchSource::SceneEntry:
      return "table, per-scene entry";
    case LaunchSource::TableEntry:
      return "table";
    case LaunchSource::BuiltInDefault:
      return "built-in default";
    case LaunchSource::Override:
      return "override";
  }
  return "?";
}

LaunchPolicy::LaunchPolicy() {
  for (KernelId id : allKernels())
    choices_[int(id)] = {builtInLaunchSize(id, 9, 0), LaunchSource::BuiltInDefault};
}

std::string tableFileStem(std::string_view gpuName) {
  std::string stem;
  for (char c : gpuName)
    stem += std::isalnum(static_cast<unsigned char>(c))
                ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                : '_';
  return stem;
}

std::string batchSceneKey(std::string_view scene, int worlds) {
  return std::string(scene) + "@" + std::to_string(worlds);
}

int batchKeyWorlds(std::string_view key, std::string_view scene) {
  if (scene.empty() || key.size() <= scene.size() + 1 || !key.starts_with(scene) ||
      key[scene.size()] != '@')
    return 0;
  const std::string_view count = key.substr(scene.size() + 1);
  if (count.size() > 9 || count.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  return std::stoi(std::string(count));
}

const std::map<KernelId, TableEntry>* batchEntries(const LaunchTable& table, std::string_view scene,
                                                   int worlds, int* tunedWorlds) {
  const std::map<KernelId, TableEntry>* best = nullptr;
  int bestWorlds = 1;
  for (const auto& [key, entries] : table.scenes) {
    const int w = batchKeyWorlds(key, scene);
    if (w > bestWorlds && w <= worlds) {
      best = &entries;
      bestWorlds = w;
    }
  }
  if (tunedWorlds) *tunedWorlds = best ? bestWorlds : 0;
  return best;
}

LaunchPolicy LaunchPolicy::resolve(const LaunchTable* table, std::string_view scene, int ccMajor,
                                   int ccMinor, int worlds) {
  LaunchPolicy policy;
  const std::map<KernelId, TableEntry>* sceneEntries = nullptr;
  const std::map<KernelId, TableEntry>* batch = nullptr;
  if (table) {
    auto it = table->scenes.find(std::string(scene));
    if (it != table->scenes.end()) sceneEntries = &it->second;
    if (worlds > 1) batch = batchEntries(*table, scene, worlds);
  }
  // A batch the tuner measured (entries of its own, or listed as tuned without any that won)
  // keeps the sizes it chose; any other batch lets its tile launches narrow to one wave.
  bool tuned = batch != nullptr;
  if (table)
    for (const std::string& key : table->provenance.scenes) {
      const int w = batchKeyWorlds(key, scene);
      tuned = tuned || (w > 1 && w <= worlds);
    }
  policy.untunedBatch_ = worlds > 1 && !tuned;
  for (KernelId id : allKernels()) {
    LaunchChoice& c = policy.choices_[int(id)];
    if (batch && batch->count(id)) {
      c = {batch->at(id).size, LaunchSource::BatchEntry};
    } else if (sceneEntries && sceneEntries->count(id)) {
      c = {sceneEntries->at(id).size, LaunchSource::SceneEntry};
    } else if (table && table->kernels.count(id)) {
      c = {table->kernels.at(id).size, LaunchSource::TableEntry};
    } else {
      c = {builtInLaunchSize(id, ccMajor, ccMinor), LaunchSource::BuiltInDefault};
    }
  }
  return policy;
}

void LaunchPolicy::setOverride(KernelId id, int size) {
  if (!isValidLaunchSize(id, size))
    throw Error("launch size " + std::to_string(size) + " is not valid for kernel " +
                std::string(kernelName(id)));
  choices_[int(id)] = {size, LaunchSource::Override};
}

}  // namespace weft
