#include "scenes/worlds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "kernels/runtime/errors.h"
#include "solver/cable_builder.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

bool isList(const std::string& value) {
  return value.find(',') != std::string::npos;
}
bool isRange(const std::string& value) {
  // A colon between two numbers; a leading sign or exponent never contains one.
  return value.find(':') != std::string::npos;
}

/// The FIRST (`which` "start") or LAST ("end") of a range FIRST:LAST.
double rangeEnd(const std::string& key, const std::string& text, const char* which) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(value))
    throw Error("scene option " + key + ": range " + which + " '" + text +
                "' is not a number (a range is FIRST:LAST, e.g. shear=1e4:1e5)");
  return value;
}

/// FIRST and LAST of the range `value`.
std::pair<double, double> rangeEnds(const std::string& key, const std::string& value) {
  const size_t colon = value.find(':');
  if (value.find(':', colon + 1) != std::string::npos)
    throw Error("scene option " + key + "=" + value +
                ": a range has one ':' (a range is FIRST:LAST, e.g. shear=1e4:1e5)");
  return {rangeEnd(key, value.substr(0, colon), "start"),
          rangeEnd(key, value.substr(colon + 1), "end")};
}

std::vector<std::string> listItems(const std::string& key, const std::string& value) {
  return commaItems(value, "scene option " + key + "=" + value);
}

std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

}  // namespace

SceneOptions worldOptions(const SceneOptions& options, int world, int worlds) {
  SceneOptions out = options;
  out.worlds = 1;
  out.worldSpacing = {};
  for (auto& [key, value] : out.values) {
    if (isList(value)) {
      const std::vector<std::string> items = listItems(key, value);
      value = items[size_t(world) % items.size()];
    } else if (isRange(value)) {
      const auto [first, last] = rangeEnds(key, value);
      const double t = worlds > 1 ? double(world) / double(worlds - 1) : 0.0;
      value = shortNumber(first + (last - first) * t);
    }
  }
  return out;
}

bool optionsVaryOverWorlds(const SceneOptions& options) {
  return std::any_of(options.values.begin(), options.values.end(),
                     [](const auto& kv) { return isList(kv.second) || isRange(kv.second); });
}

std::string describeWorldVariation(const SceneOptions& options) {
  std::string text;
  for (const auto& [key, value] : options.values) {
    if (!isList(value) && !isRange(value)) continue;
    text +=
        (text.empty() ? "" : "; ") + key + "=" + value +
        (isList(value)
             ? " (item k mod " + std::to_string(listItems(key, value).size()) + " for world k)"
             : " (linear from world 0 to world " + std::to_string(options.totalWorlds() - 1) + ")");
  }
  return text;
}

template <class Desc>
std::vector<Transform> SceneWorlds<Desc>::placedAlone(std::span<const Transform> all,
                                                      int world) const {
  std::vector<Transform> out(all.begin() + begin[size_t(world)],
                             all.begin() + begin[size_t(world) + 1]);
  const Vec3 offset = spacing * float(first + world);
  if (offset.x != 0.0f || offset.y != 0.0f || offset.z != 0.0f)
    for (Transform& t : out) t.p = t.p - offset;
  return out;
}

template <class Desc>
std::vector<Vec3> SceneWorlds<Desc>::placedAlone(std::span<const Vec3> all, int world) const {
  std::vector<Vec3> out(all.begin() + begin[size_t(world)], all.begin() + begin[size_t(world) + 1]);
  const Vec3 offset = spacing * float(first + world);
  if (offset.x != 0.0f || offset.y != 0.0f || offset.z != 0.0f)
    for (Vec3& x : out) x = x - offset;
  return out;
}

template <class Desc>
int SceneWorlds<Desc>::worldOf(int element) const {
  const auto it = std::upper_bound(begin.begin(), begin.end(), element);
  return int(it - begin.begin()) - 1;
}

template struct SceneWorlds<RigidDesc>;
template struct SceneWorlds<ModelDesc>;

namespace {

int elementsOf(const RigidDesc& desc) {
  return desc.numBodies();
}
int elementsOf(const ModelDesc& desc) {
  return desc.numParticles();
}

/// The worlds of `scene` built by `build` (each distinct option set once) and combined.
template <class Desc, class Build>
SceneWorlds<Desc> buildWorlds(const Scene& scene, const SceneOptions& options, size_t deviceBytes,
                              Build&& build) {
  const int n = options.worlds, first = options.firstWorld, total = options.totalWorlds();
  checkWorldCount(n);
  checkWorldCount(total);
  if (first < 0 || first + n > total)
    throw Error("worlds " + std::to_string(first) + "-" + std::to_string(first + n - 1) +
                " are not part of a batch of " + std::to_string(total));
  if (total == 1 && optionsVaryOverWorlds(options))
    throw Error("a scene option given as a list or a range (" + describeWorldVariation(options) +
                ") spreads values over worlds: give --worlds N as well");
  for (const auto& [key, value] : options.values) {
    if (isList(value)) {
      const size_t items = listItems(key, value).size();
      if (items > size_t(total)) {
        const std::string n = std::to_string(items), unused = std::to_string(items - total);
        std::string message = "scene option " + key + "=" + value;
        message += " lists " + n + " values for " + std::to_string(total) + " worlds: world k ";
        message += "takes item k mod " + n + ", so the last " + unused + " would never be used; ";
        message += "give --worlds " + n + " or fewer values";
        throw Error(message);
      }
    } else if (isRange(value)) {
      rangeEnds(key, value);  // both ends numbers, before anything is built
    }
  }
  SceneWorlds<Desc> w;
  w.spacing = options.worldSpacing;
  w.first = first;
  w.modelOf.resize(size_t(n));
  w.values.reserve(size_t(n));
  std::vector<std::map<std::string, std::string>> distinct;  // the options of each built model
  long long elements = 0;
  for (int k = 0; k < n; ++k) {
    w.values.push_back(worldOptions(options, first + k, total));
    const auto& values = w.values.back().values;
    auto found = std::find(distinct.begin(), distinct.end(), values);
    if (found == distinct.end()) {
      // Before building another world: the batch so far, at this world's size, must fit.
      Desc model = build(w.values.back());
      checkElementsFit(scene.name + " x " + std::to_string(n) + " worlds",
                       elements + static_cast<long long>(elementsOf(model)) * (n - k),
                       std::is_same_v<Desc, RigidDesc>, availableHostMemory(), deviceBytes);
      w.models.push_back(std::move(model));
      distinct.push_back(values);
      found = distinct.end() - 1;
    }
    w.modelOf[size_t(k)] = int(found - distinct.begin());
    elements += elementsOf(w.model(k));
  }
  w.begin.assign(size_t(n) + 1, 0);
  for (int k = 0; k < n; ++k) w.begin[size_t(k) + 1] = w.begin[size_t(k)] + elementsOf(w.model(k));
  const bool moved =
      first > 0 && (w.spacing.x != 0.0f || w.spacing.y != 0.0f || w.spacing.z != 0.0f);
  if (n == 1 && !moved) {
    w.desc = w.models.front();
  } else {
    std::vector<const Desc*> each(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) each[size_t(k)] = &w.model(k);
    w.desc = combineWorlds(each, w.spacing, first);
  }
  return w;
}

}  // namespace

RigidWorlds buildRigidWorlds(const Scene& scene, const SceneOptions& options, size_t deviceBytes) {
  if (!scene.hasRigid()) throw Error("buildRigidWorlds: " + scene.name + " has no rigid model");
  return buildWorlds<RigidDesc>(scene, options, deviceBytes,
                                [&](const SceneOptions& o) { return scene.rigid.build(o); });
}

ClothWorlds buildClothWorlds(const Scene& scene, const SceneOptions& options, size_t deviceBytes) {
  if (!scene.hasCloth()) throw Error("buildClothWorlds: " + scene.name + " has no cloth");
  return buildWorlds<ModelDesc>(scene, options, deviceBytes,
                                [&](const SceneOptions& o) { return scene.cloth.build(o); });
}

std::vector<WorldCheckSummary> summarizeWorldChecks(
    const std::vector<std::vector<CheckResult>>& perWorld) {
  std::vector<WorldCheckSummary> out;
  if (perWorld.empty()) return out;
  for (const CheckResult& c : perWorld.front()) {
    WorldCheckSummary s;
    s.name = c.name;
    s.informational = c.informational;
    out.push_back(s);
  }
  for (size_t k = 0; k < perWorld.size(); ++k)
    for (const CheckResult& c : perWorld[k]) {
      auto s = std::find_if(out.begin(), out.end(),
                            [&](const WorldCheckSummary& x) { return x.name == c.name; });
      if (s == out.end()) {  // a check only some worlds make (their options differ)
        WorldCheckSummary added;
        added.name = c.name;
        added.informational = c.informational;
        out.push_back(added);
        s = out.end() - 1;
      }
      ++s->worlds;
      if (c.pass || c.informational) {
        ++s->passing;
        if (s->detail.empty()) s->detail = "world " + std::to_string(k) + ": " + c.detail;
      } else {
        if (s->failing.empty()) s->detail = "world " + std::to_string(k) + ": " + c.detail;
        s->failing.push_back(int(k));
      }
    }
  return out;
}

std::vector<CheckResult> worldCheckResults(const std::vector<WorldCheckSummary>& summaries) {
  std::vector<CheckResult> out;
  for (const WorldCheckSummary& s : summaries) {
    std::string text = std::to_string(s.passing) + "/" + std::to_string(s.worlds) +
                       (s.informational ? " worlds" : " worlds pass");
    if (!s.failing.empty()) {
      text += " (failing:";
      for (size_t i = 0; i < s.failing.size() && i < 8; ++i)
        text += " " + std::to_string(s.failing[i]);
      if (s.failing.size() > 8) text += " ...";
      text += ")";
    }
    out.push_back({s.name, s.pass(), text + "; " + s.detail, s.informational});
  }
  return out;
}

}  // namespace weft
