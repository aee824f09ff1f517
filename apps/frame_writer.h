// Writing simulated frames to disk: USD ASCII (one .usda file, time-sampled points; opens in
// usdview, Blender and Omniverse) or one OBJ per frame. Shapes are written too (USD only), with
// time-sampled poses when they move.
//
// Every file is written under "<name>.tmp" and renamed when complete (kernels/runtime/files.h): the
// .usda when finish() closes its time samples, each OBJ when its frame is written. A run stopped by
// a signal calls finish() after its last frame, so the file holds the frames done; a run killed
// outright leaves at most a .tmp, never a truncated file under the final name.
#pragma once

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/model_desc.h"
#include "solver/rigid_desc.h"

namespace weft {

enum class FrameFormat { Usda, Obj, None };
/// "usda", "obj" or "none"; anything else throws weft::Error.
FrameFormat parseFrameFormat(const std::string& text);

class FrameWriter {
 public:
  virtual ~FrameWriter() = default;
  /// Writes the state at time `seconds` as frame `frame` (frame 0 is the initial state).
  virtual void writeFrame(int frame, double seconds, std::span<const Vec3> positions) = 0;
  /// Completes the output (e.g. closes the USD time samples); safe to call once.
  virtual void finish() = 0;
  /// Files written so far.
  virtual std::vector<std::string> files() const = 0;
};

/// A writer for `format` into `directory` (created if needed), or null for FrameFormat::None.
/// `plannedFrames` is the last frame number the run intends to write. Throws weft::Error if the
/// directory cannot be created or the file cannot be opened.
std::unique_ptr<FrameWriter> makeFrameWriter(FrameFormat format, const std::string& directory,
                                             const std::string& sceneName, const ModelDesc& desc,
                                             double framesPerSecond, int plannedFrames);

/// Rigid scenes: each body is an Xform with time-sampled translate/orient holding its shapes, and
/// static shapes sit at the top level. USD wants every attribute's samples together, so the poses
/// are kept in memory and the file is written by finish(). Only usda (or none) is supported.
class RigidFrameWriter {
 public:
  virtual ~RigidFrameWriter() = default;
  virtual void writeFrame(int frame, std::span<const Transform> poses) = 0;
  virtual void finish() = 0;
  virtual std::vector<std::string> files() const = 0;
};

/// A writer for a rigid scene, or null for FrameFormat::None. Throws weft::Error for obj.
std::unique_ptr<RigidFrameWriter> makeRigidFrameWriter(FrameFormat format,
                                                       const std::string& directory,
                                                       const std::string& sceneName,
                                                       const RigidDesc& desc,
                                                       double framesPerSecond);

}  // namespace weft
