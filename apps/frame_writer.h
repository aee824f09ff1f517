// Writing simulated frames to disk, one writer for whatever the simulation holds: USD ASCII (one
// .usda file: the cloth's time-sampled points, the rigid bodies' time-sampled poses; opens in
// usdview, Blender and Omniverse), one OBJ per frame (cloth only), or one self-contained HTML page
// that plays the run in a browser (apps/html_writer.h). Shapes are written too (USD
// only), with time-sampled poses when they move.
//
// Every file is written under "<name>.tmp" and renamed when complete (kernels/runtime/files.h): the
// .usda when finish() closes its time samples, each OBJ when its frame is written. A run stopped by
// a signal calls finish() after its last frame, so the file holds the frames done; a run killed
// outright leaves at most a .tmp, never a truncated file under the final name.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/model_desc.h"
#include "solver/rigid_desc.h"

namespace weft {

enum class FrameFormat { Usda, Obj, Html, None };
/// "usda", "obj", "html" or "none"; anything else (or html in a build without the viewer) throws
/// weft::Error.
FrameFormat parseFrameFormat(const std::string& text);

/// One frame of a simulation: the cloth's particle positions and the rigid bodies' poses (empty
/// for a part the simulation does not have).
struct FrameState {
  std::span<const Vec3> particles;
  std::span<const Transform> bodies;
};

/// What a run reports, for writers that show it beside the frames (the HTML page's overlay).
struct RunReport {
  std::string text;             // the run's summary lines (checks and outcome)
  std::string device;           // "cuda (NVIDIA H100 ...)"
  std::string checks;           // one line: "5 of 5 checks pass" or "FAIL: settled (4 of 5 pass)"
  std::vector<double> frameMs;  // each frame's time [ms], frame 1 first
  std::vector<int> intersections;  // self-intersections after each frame, if they were counted
  // frame → (mesh edge, triangle) pairs that intersect there (frames where they were looked for)
  std::map<int, std::vector<std::pair<int, int>>> intersectingPairs;
};

class FrameWriter {
 public:
  virtual ~FrameWriter() = default;
  /// The run's report, given before finish() (writers that do not show it ignore it).
  virtual void setRunReport(const RunReport&) {}
  /// Writes `state` as frame `frame` (frame 0 is the initial state).
  virtual void writeFrame(int frame, const FrameState& state) = 0;
  /// Completes the output (e.g. closes the USD time samples); safe to call once.
  virtual void finish() = 0;
  /// Files written so far.
  virtual std::vector<std::string> files() const = 0;
  /// What the writer did to the folder besides writing (e.g. removed an earlier run's frames), to
  /// tell the user; empty if nothing.
  virtual std::string notice() const { return {}; }
};

/// A writer of `cloth`, `rigid` or both (null: absent) for `format` into `directory` (created if
/// needed), or null for FrameFormat::None. `plannedFrames` is the last frame number the run
/// intends to write. Throws weft::Error if the directory cannot be created or the file cannot be
/// opened, and for obj with a rigid model (obj holds meshes only).
std::unique_ptr<FrameWriter> makeFrameWriter(FrameFormat format, const std::string& directory,
                                             const std::string& sceneName, const ModelDesc* cloth,
                                             const RigidDesc* rigid, double framesPerSecond,
                                             int plannedFrames);

}  // namespace weft
