// The scene library: every scene Weft can run, shared by the CLI, the tests and the benchmarks
// (STYLE.md §10). A Scene is data: a name, a one-line description, its units and timing
// (fps, substeps, iterations via the solver options), a builder that makes the ModelDesc
// procedurally, the default frame count (the reference's test length), and its final checks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scenes/checks.h"
#include "solver/model.h"
#include "solver/model_desc.h"

namespace weft {

/// Options a user may pass to any scene (those a scene does not use are ignored, and the scene's
/// description says which it uses).
struct SceneOptions {
  std::string meshPath;             // replace the scene's cloth with this OBJ (if it has one)
  float meshScale = 1.0f;           // applied to the OBJ's vertices first
  Vec3 meshRotationDegrees;         // then rotations about x, y, z (in that order) [deg]
  Vec3 meshTranslation;             // then this translation (scene units)
  bool meshTransformGiven = false;  // any of the three was given: the scene's own placement of
                                    // its garment is replaced by this transform
};

struct Scene {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;  // one line
  std::string units = "m, kg, s";
  double fps = 60.0;
  int substeps = 10;
  int defaultFrames = 100;
  SolverOptions solver;
  bool checksSelfIntersections = false;  // count mesh self-intersections at the end (must be 0)
  bool benchmark = false;                // one of the reference's eight benchmark scenes
  bool cable = false;                    // a rigid-cable scene (else cloth)
  int tuneWindowFrames = 30;  // weft tune-launch measures the densest self-contact frame of the
                              // first tuneWindowFrames frames (the last one without self-contact)
  std::function<ModelDesc(const SceneOptions&)> build;
  std::function<std::vector<CheckResult>(const CheckInput&)> checks;
};

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

/// The rotation of SceneOptions::meshRotationDegrees (x, then y, then z).
Quat meshRotation(const SceneOptions& options);

}  // namespace weft
