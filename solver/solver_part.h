// SolverPart: one solver's share of a Simulation (solver/simulation.h). A simulation holds a cloth
// part (ClothPart: Model, State, Scratch, SolverVBD), a rigid part (RigidPart: RigidModel,
// RigidState, RigidScratch, SolverAVBD), or both; it owns the frame loop (FrameDriver: graphs,
// timing, save and restore, regrowth) and asks each part, through this interface, for what the
// loop needs. The parts never interact: each advances its own state by the same substep length.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/runtime/buffer.h"

namespace weft {

class SolverPart {
 public:
  virtual ~SolverPart() = default;

  /// The device ranges that carry over from one frame to the next (the part's State): saved at
  /// the start of every frame, restored before a frame runs again. Empty when no frame can run
  /// again (nothing can overflow).
  virtual std::vector<BufferRange> carried() = 0;

  /// How many kinds of frame the part launches (one CUDA graph each; cloth: frames with and
  /// without a tree rebuild), and which kind frame `frame` (0-based) is.
  virtual int frameKinds() const { return 1; }
  virtual int frameKind(long long /*frame*/) const { return 0; }

  /// The start of a frame of kind `kind`, before its substeps (graph-capturable): zero the
  /// contact status, rebuild trees.
  virtual void beginFrame(int kind) = 0;
  /// Launches substep `substepInFrame` of a frame (graph-capturable; no host reads).
  virtual void substep(int substepInFrame) = 0;
  /// After a frame, on the host: reads the contact status and, when something did not fit, grows
  /// it and says what grew ("contact rows 256 -> 640"); nothing when everything fit.
  virtual std::optional<std::string> growIfOverflowed() = 0;
  /// After a frame that is kept (it fit): updates the part's reports. True when the part's
  /// launches change from the next frame on (a kernel variant chosen from what this frame
  /// needed), so that the simulation captures its graphs again.
  virtual bool endFrame() = 0;
};

}  // namespace weft
