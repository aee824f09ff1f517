// Many worlds of one scene (`--worlds N`; docs/ARCHITECTURE.md, "State, frames and worlds"): N
// copies of a scene in one model, solved by the same launches, that never touch each other. The
// copies may differ: a scene option given as a list or a range is spread over the worlds (a
// parameter sweep). Each world's checks are judged on its own bodies or particles, as if it had
// run alone, and reported as counts ("16/16 worlds pass").
//
// Cable scenes and cloth scenes alike; the solvers keep the worlds apart (forests for every tree,
// each particle touching only its own world's shapes, per-world kept lists).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "scenes/checks.h"
#include "scenes/scene.h"

namespace weft {

/// World k's scene options: a value written as a list "a,b,c" gives world k its (k mod 3)-th item;
/// a range "a:b" gives a + (b − a)·k/(N − 1) (world 0 gets a, world N − 1 gets b; one world gets
/// a), written with 6 significant digits; every other value is every world's. Throws weft::Error
/// for an empty list item or a range whose ends are not numbers.
SceneOptions worldOptions(const SceneOptions& options, int world, int worlds);
/// True when some value of `options` is a list or a range (the worlds differ).
bool optionsVaryOverWorlds(const SceneOptions& options);
/// "layers=1,2 over 4 worlds; shear=1e4:1e5 (linear over 4 worlds)": what varies, for summaries.
std::string describeWorldVariation(const SceneOptions& options);

/// A scene's worlds, built: RigidWorlds (cable scenes, elements are bodies) or ClothWorlds
/// (cloth scenes, elements are particles).
template <class Desc>
struct SceneWorlds {
  Desc desc;                         // every world in one model (combineWorlds)
  std::vector<Desc> models;          // the distinct worlds, each as built alone
  std::vector<int> modelOf;          // world → its entry of `models`
  std::vector<int> begin;            // (worlds + 1): world k's elements are [begin[k], [k + 1])
  std::vector<SceneOptions> values;  // world → its options (worldOptions)
  Vec3 spacing;                      // world k is moved by (first + k) · spacing
  int first = 0;  // world k is world first + k of the batch (SceneOptions::firstWorld)

  int count() const { return int(modelOf.size()); }
  /// One world, the first of its batch: `desc` is that world's model itself, where it would be
  /// alone.
  bool wholeModel() const { return count() == 1 && first == 0; }
  const Desc& model(int world) const { return models[size_t(modelOf[size_t(world)])]; }
  int size(int world) const { return begin[size_t(world) + 1] - begin[size_t(world)]; }
  /// World k's part of `all` (one entry per element of the combined model).
  template <class T>
  std::vector<T> part(const std::vector<T>& all, int world) const {
    return {all.begin() + begin[size_t(world)], all.begin() + begin[size_t(world) + 1]};
  }
  /// World k's poses or positions, moved back by (first + k) · spacing: where it would be alone,
  /// for its checks.
  std::vector<Transform> placedAlone(std::span<const Transform> all, int world) const;
  std::vector<Vec3> placedAlone(std::span<const Vec3> all, int world) const;
  /// The world whose elements include `element`.
  int worldOf(int element) const;
};
using RigidWorlds = SceneWorlds<RigidDesc>;
using ClothWorlds = SceneWorlds<ModelDesc>;

/// Builds `options.worlds` worlds of cable scene `scene` (one when options.worlds is 1, the scene's
/// own model then) placed options.worldSpacing apart (worlds options.firstWorld… of a batch of
/// options.totalWorlds(): their options and places in that batch); worlds with the same options
/// share one build. Checks first that the whole batch fits the host (and `deviceBytes`, when not
/// 0). Throws weft::Error for fewer than one world, a cloth scene, or a model that does not fit.
RigidWorlds buildRigidWorlds(const Scene& scene, const SceneOptions& options,
                             size_t deviceBytes = 0);
/// The same for a cloth scene (combineWorlds of solver/cloth_builder.h).
ClothWorlds buildClothWorlds(const Scene& scene, const SceneOptions& options,
                             size_t deviceBytes = 0);

/// One check over every world: how many pass, which fail (ascending), and the detail of the first
/// failing world (or of world 0 when all pass).
struct WorldCheckSummary {
  std::string name;
  bool informational = false;
  int worlds = 0;
  int passing = 0;
  std::vector<int> failing;
  std::string detail;  // "world 3: ..." or "world 0: ..."
  bool pass() const { return informational || passing == worlds; }
};
/// Folds each world's checks (perWorld[k], the same names in the same order for every world) into
/// one summary per check name, in the order of world 0's checks.
std::vector<WorldCheckSummary> summarizeWorldChecks(
    const std::vector<std::vector<CheckResult>>& perWorld);
/// The summaries as CheckResults ("16/16 worlds pass; world 0: ..."), for printing and JSON.
std::vector<CheckResult> worldCheckResults(const std::vector<WorldCheckSummary>& summaries);

}  // namespace weft
