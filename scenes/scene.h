// The scene library: every scene Weft can run, shared by the CLI, the tests and the benchmarks
// (docs/ARCHITECTURE.md). A Scene is data: a name, a one-line description, its units and timing
// (fps, substeps), its parts — a cloth (ClothScenePart: solver options, a builder that makes the
// ModelDesc procedurally, final checks), a rigid model (RigidScenePart, the same for cables), or
// both — and the default frame count (the reference's test length).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "scenes/checks.h"
#include "solver/model.h"
#include "solver/model_desc.h"
#include "solver/rigid_desc.h"
#include "solver/rigid_model.h"

namespace weft {

/// The most worlds of one batch (--worlds; the world index and the per-world lists are ints).
inline constexpr int kMaxWorlds = 1000000;
/// Throws weft::Error unless 1 <= worlds <= kMaxWorlds (every caller's --worlds, the CLI's and
/// Python's alike).
void checkWorldCount(long long worlds);
/// The comma-separated items of `text`; an empty one is an error that names `what`.
std::vector<std::string> commaItems(const std::string& text, const std::string& what);

/// Options a user may pass to any scene (those a scene does not use are ignored, and the scene's
/// description says which it uses).
struct SceneOptions {
  /// Scene-specific settings from `--scene-option KEY=VALUE` (e.g. cable_pile's layers=4 for the
  /// reference's benchmark size). A scene rejects keys it does not know (sceneOption()).
  std::map<std::string, std::string> values;
  std::string meshPath;             // replace the scene's cloth with this OBJ (if it has one)
  float meshScale = 1.0f;           // applied to the OBJ's vertices first
  Vec3 meshRotationDegrees;         // then rotations about x, y, z (in that order) [deg]
  Vec3 meshTranslation;             // then this translation (scene units)
  bool meshTransformGiven = false;  // any of the three was given: the scene's own placement of
                                    // its garment is replaced by this transform
  // Copies of the scene in one model (scenes/worlds.h; cable scenes): world k is moved by
  // k · worldSpacing (zero: every world where the scene puts it, each bit-identical to the scene
  // run alone). A value of `values` may be a list or a range spread over the worlds.
  int worlds = 1;
  Vec3 worldSpacing;
  // A part of a larger batch (one rank of an mpirun; docs/SCALING.md): these `worlds` are worlds
  // firstWorld … firstWorld + worlds − 1 of a batch of batchWorlds, so that lists and ranges give
  // them, and the spacing places them, what they get in the whole batch. 0: the whole batch.
  int firstWorld = 0;
  int batchWorlds = 0;
  /// Worlds of the whole batch.
  int totalWorlds() const { return batchWorlds > 0 ? batchWorlds : worlds; }
};

struct CableIntegrityRecord;  // scenes/cable_checks.h

/// What a cable scene's final checks look at.
struct RigidCheckInput {
  const RigidDesc& desc;
  std::span<const Transform> poses;         // (numBodies) body origin poses
  std::span<const Vec3> linearVelocities;   // (numBodies) COM velocities
  std::span<const Vec3> angularVelocities;  // (numBodies)
  long long frames = 0;
  double seconds = 0.0;  // simulated time
  // Every frame's joint gaps and capsule overlaps (weft run and the scene tests record one): the
  // integrity checks then judge the worst frame of the run; null, the final state only.
  const CableIntegrityRecord* everyFrame = nullptr;
  // The body poses after every frame 1…frames, for scenes whose checks judge the motion
  // (RigidScenePart::checksUseHistory); empty otherwise.
  std::span<const std::vector<Transform>> history;
};

/// A scene's cloth: how it is built (the model of one world), solved and checked. Present when
/// `build` is set.
struct ClothScenePart {
  SolverOptions solver;
  std::function<ModelDesc(const SceneOptions&)> build;
  std::function<std::vector<CheckResult>(const CheckInput&)> checks;
  bool checksSelfIntersections = false;  // count mesh self-intersections at the end (must be 0)
  // The cloth may be replaced by an OBJ (SceneOptions::meshPath and its transform); a scene that
  // builds its own cloth refuses --mesh instead of ignoring it.
  bool takesMesh = false;
};

/// A scene's rigid model (cables and the bodies they touch): built, solved and checked. Present
/// when `build` is set.
struct RigidScenePart {
  RigidSolverOptions solver;
  std::function<RigidDesc(const SceneOptions&)> build;
  std::function<std::vector<CheckResult>(const RigidCheckInput&)> checks;
  bool checksUseHistory = false;  // the checks read RigidCheckInput::history
};

/// A `--scene-option KEY=VALUE` a scene takes: `weft scenes` and the Python module list them; the
/// scene's builder refuses every other key (sceneOption()).
struct SceneOptionInfo {
  std::string key;
  std::string defaultValue;
  std::string meaning;  // what it sets, and the values it takes
};

/// One scene description: its name and timing, a cloth part, a rigid part (either or both), and
/// what the tools measure it on. The world count is the caller's (SceneOptions::worlds).
struct Scene {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;               // one line
  std::vector<SceneOptionInfo> options;  // the --scene-option keys it takes
  std::string units = "m, kg, s";
  double fps = 60.0;
  int substeps = 10;
  int defaultFrames = 100;
  ClothScenePart cloth;
  RigidScenePart rigid;
  bool hasCloth() const { return bool(cloth.build); }
  bool hasRigid() const { return bool(rigid.build); }
  /// A scene of cables alone (the cable scenes; weft bench's "cable" group, bodies as elements).
  bool isCable() const { return hasRigid() && !hasCloth(); }
  bool benchmark = false;     // one of the reference's eight benchmark scenes
  int tuneWindowFrames = 30;  // weft tune-launch measures the densest self-contact frame of the
                              // first tuneWindowFrames frames (the last one without self-contact)
  // weft bench's user-visible cost: median frame time over frames [benchWindowFirst,
  // benchWindowEnd) of a fresh run, divided by substeps (the windows the reference is timed on;
  // docs/BENCHMARKS.md). End 0: no window.
  int benchWindowFirst = 0;
  int benchWindowEnd = 0;
  // A variant weft bench also times over the window (e.g. cloth_rollers' welded=0, the
  // reference's own mesh), as "scene (KEY=VALUE)". Empty: none.
  std::map<std::string, std::string> benchVariant;
  // Particles (cloth) or bodies (cable) that `options` would build, computed without building:
  // for scenes whose size is an option (cloth_fold cells, cable_pile layers/lanes, the bundle's
  // segments); null for scenes of fixed size. checkSceneFits() turns it into a memory estimate.
  std::function<long long(const SceneOptions&)> elementsFor;
};

/// The Chebyshev acceleration of the cable scenes' sweeps (RigidSolverOptions::chebyshevRho;
/// `weft run --chebyshev-rho 0` gives the reference's plain sweeps). Chosen by measurement
/// (docs/CONVERGENCE.md): at the same iterations it costs under 1% per substep and gets closer to
/// converged than twice the plain sweeps (cable_y_junction's sag, cable_cantilever's tip, the
/// pile's drop), every cable scene's checks pass with it for 300 frames, and 0.75 already
/// diverges on cable_y_junction. cable_bundle_hysteresis takes kBundleChebyshevRho instead.
inline constexpr float kCableSceneChebyshevRho = 0.7f;
/// The bundle's: at 0.7 its loaded joints open further than with plain sweeps (10.1% against 9.0%
/// of a segment; converged 7.8%), at 0.5 they are within 0.2 points of converged (CPU, 300 frames).
inline constexpr float kBundleChebyshevRho = 0.5f;

/// Memory per element measured on the CPU backend: the growth of peak RSS between two sizes of a
/// 1-frame run. cloth_fold cells=100 → 200 (10,201 → 40,401 particles, 64.3 → 237.7 MB): 5.7 KB
/// per particle with self-contact; cable_pile default → layers=40 (4,000 → 16,000 bodies, 21.5 →
/// 66.3 MB): 3.7 KB per body. Candidate lists grow with contact, so a dense scene needs more: the
/// estimate is a lower bound.
inline constexpr double kBytesPerClothParticle = 5.7e3;
inline constexpr double kBytesPerCableBody = 3.7e3;

/// Throws weft::Error when `elements` particles (or bodies, `cable`) would need more memory than
/// the host has available (`hostBytes`) or the GPU has (`deviceBytes`; 0: not checked), or more
/// than 32-bit contact lists address; `what` names the model ("cloth_franka with --mesh x.obj").
void checkElementsFit(const std::string& what, long long elements, bool cable, size_t hostBytes,
                      size_t deviceBytes);
/// The same before anything is built, for a scene whose options set its size (elementsFor): a
/// mistyped `layers=10000` fails in a second with a sentence instead of std::bad_alloc.
void checkSceneFits(const Scene& scene, const SceneOptions& options, size_t hostBytes,
                    size_t deviceBytes);
/// The memory the host can still give (MemAvailable from /proc/meminfo; 0 when unknown).
size_t availableHostMemory();

/// All scenes, in a stable order.
const std::vector<Scene>& allScenes();
/// The scene called `name` (or one of its aliases). Throws weft::Error listing the valid names.
const Scene& findScene(const std::string& name);
/// "cloth_hanging, ..." for messages.
std::string sceneNames();

// Scene definitions (one file each).
Scene makeClothHangingScene();
Scene makeClothFoldScene();
Scene makePokerCardsScene();
Scene makeClothTwistScene();
Scene makeClothFrankaScene();
Scene makeClothRollersScene();
Scene makeCableTwistScene();
Scene makeCablePileScene();
Scene makeCableBundleHysteresisScene();
Scene makeCableYJunctionScene();
Scene makeCableDahlLoopScene();
Scene makeCableCantileverScene();

/// Reads scene option `key` as a number (the default when absent). Throws weft::Error when the
/// value is not a number, or when `options` holds a key not in `known` (naming the valid keys).
double sceneOption(const SceneOptions& options, const std::string& key, double defaultValue,
                   const std::vector<std::string>& known);

/// The rotation of SceneOptions::meshRotationDegrees (x, then y, then z).
Quat meshRotation(const SceneOptions& options);

}  // namespace weft
