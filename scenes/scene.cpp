#include "scenes/scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "kernels/runtime/errors.h"
#include "scenes/worlds.h"

namespace weft {

const std::vector<Scene>& allScenes() {
  static const std::vector<Scene> scenes = [] {
    std::vector<Scene> list;
    list.push_back(makeClothHangingScene());
    list.push_back(makeClothFoldScene());
    list.push_back(makePokerCardsScene());
    list.push_back(makeClothTwistScene());
    list.push_back(makeClothFrankaScene());
    list.push_back(makeClothRollersScene());
    list.push_back(makeCableTwistScene());
    list.push_back(makeCablePileScene());
    list.push_back(makeCableBundleHysteresisScene());
    list.push_back(makeCableYJunctionScene());
    list.push_back(makeCableDahlLoopScene());
    list.push_back(makeCableCantileverScene());
    return list;
  }();
  return scenes;
}

namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GB", bytes / 1e9);
  return text;
}

}  // namespace

void checkElementsFit(const std::string& what, long long elements, bool cable, size_t hostBytes,
                      size_t deviceBytes) {
  const char* unit = cable ? "bodies" : "particles";
  // Contact and candidate lists are indexed per element with 32-bit integers, up to 64 entries.
  constexpr long long kMaxElements = (1LL << 31) / 64;
  if (elements > kMaxElements)
    throw Error(what + " would have " + std::to_string(elements) + " " + unit +
                "; Weft's 32-bit contact lists address at most " + std::to_string(kMaxElements) +
                ": choose a smaller size");
  const double need = double(elements) * (cable ? kBytesPerCableBody : kBytesPerClothParticle);
  const auto refuse = [&](const std::string& where, size_t have) {
    throw Error(what + " would have " + std::to_string(elements) + " " + unit + " and need about " +
                gigabytes(need) + " of memory (at least), but " + where + " " +
                gigabytes(double(have)) + ": choose a smaller size");
  };
  if (hostBytes > 0 && need > double(hostBytes)) refuse("this machine has", hostBytes);
  if (deviceBytes > 0 && need > double(deviceBytes)) refuse("the GPU has", deviceBytes);
}

void checkWorldCount(long long worlds) {
  if (worlds < 1 || worlds > kMaxWorlds)
    throw Error("--worlds must be a whole number from 1 to " + std::to_string(kMaxWorlds) +
                ", not " + std::to_string(worlds));
}

std::vector<std::string> commaItems(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma == std::string::npos ? comma : comma - begin));
    if (items.back().empty()) throw Error(what + ": an item of the list is empty (give A,B,C)");
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

void checkSceneFits(const Scene& scene, const SceneOptions& options, size_t hostBytes,
                    size_t deviceBytes) {
  checkWorldCount(options.worlds);
  checkWorldCount(options.totalWorlds());
  if (!scene.elementsFor) return;
  std::string given;
  for (const auto& [key, value] : options.values) given += " " + key + "=" + value;
  if (options.worlds > 1)
    given += (given.empty() ? " " : ", ") + std::to_string(options.worlds) + " worlds";
  long long elements = 0;
  for (int k = 0; k < std::max(options.worlds, 1); ++k)
    elements +=
        scene.elementsFor(worldOptions(options, options.firstWorld + k, options.totalWorlds()));
  checkElementsFit(scene.name + (given.empty() ? "" : " with" + given), elements, scene.isCable(),
                   hostBytes, deviceBytes);
}

size_t availableHostMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit)
    if (key == "MemAvailable:") return kilobytes * 1024;
  return 0;
}

double sceneOption(const SceneOptions& options, const std::string& key, double defaultValue,
                   const std::vector<std::string>& known) {
  for (const auto& [k, v] : options.values) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string list;
    for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
    throw Error("unknown scene option '" + k +
                "' (this scene knows: " + (list.empty() ? "none" : list) + ")");
  }
  const auto it = options.values.find(key);
  if (it == options.values.end()) return defaultValue;
  char* end = nullptr;
  const double value = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !std::isfinite(value))
    throw Error("scene option " + key + "=" + it->second + " is not a number");
  return value;
}

Quat meshRotation(const SceneOptions& options) {
  constexpr float kDegrees = 3.14159265358979f / 180.0f;
  const Vec3& r = options.meshRotationDegrees;
  const Quat qx = quatFromAxisAngle({1.0f, 0.0f, 0.0f}, r.x * kDegrees);
  const Quat qy = quatFromAxisAngle({0.0f, 1.0f, 0.0f}, r.y * kDegrees);
  const Quat qz = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, r.z * kDegrees);
  return qz * qy * qx;
}

std::string sceneNames() {
  std::string names;
  for (const Scene& s : allScenes()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

const Scene& findScene(const std::string& name) {
  for (const Scene& s : allScenes()) {
    if (s.name == name) return s;
    for (const std::string& alias : s.aliases)
      if (alias == name) return s;
  }
  throw Error("unknown scene '" + name + "' (valid: " + sceneNames() +
              "; `weft scenes` describes them)");
}

}  // namespace weft
