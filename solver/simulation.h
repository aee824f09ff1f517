// Simulation: one or two solver parts (a cloth, ClothPart; a rigid model, RigidPart) advanced a
// frame (several substeps) at a time. It owns the frame loop of both solvers, in one place:
//
//   advanceFrame()
//     save what carries over       every part's State (FrameDriver::carry), inside the graph
//     each part: beginFrame        zero the contact status; cloth: the tree rebuild, every
//                                  bvhRebuildInterval-th frame (a second kind of frame)
//     for each substep
//       each part: substep         SolverVBD::step / SolverAVBD::step (the solvers' stages)
//     each part: growIfOverflowed  on the host: the contact status (a few bytes); if any storage
//                                  overflowed it grows, the saved start comes back, the graphs
//                                  are captured again and the frame runs again
//     each part: endFrame          reports (contact counts, convergence); a part whose launches
//                                  change from the next frame on (the rigid solve's one-lane
//                                  tiles, OneLaneLevels::Auto) has the graphs captured again
//
// On CUDA the first frame of each kind is captured into a CUDA graph (FrameGraph) and every later
// frame is a single replay, with no host work per substep (kinematic motion reads the substep
// counter on the device). On the CPU, and with graphs switched off, the work is launched directly.
// Each frame's device time is measured with CUDA events around the replay (host clock on the CPU).
// The parts never interact: each advances its own state by the same substep length, so a scene's
// cloth and its cables share frames, graphs and timing but not contacts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solver/cloth_part.h"
#include "solver/frame_driver.h"
#include "solver/rigid_part.h"

namespace weft {

class Simulation {
 public:
  /// A cloth, a rigid model, or both (null: that part is absent; at least one is needed).
  Simulation(const Device& device, const ModelDesc* cloth, const SolverOptions& clothOptions,
             const RigidDesc* rigid, const RigidSolverOptions& rigidOptions, double frameSeconds,
             int substepsPerFrame, bool useGraphs = true);
  /// A cloth alone.
  Simulation(const Device& device, const ModelDesc& cloth, const SolverOptions& options,
             double frameSeconds, int substepsPerFrame, bool useGraphs = true)
      : Simulation(device, &cloth, options, nullptr, {}, frameSeconds, substepsPerFrame,
                   useGraphs) {}
  /// A rigid model alone.
  Simulation(const Device& device, const RigidDesc& rigid, const RigidSolverOptions& options,
             double frameSeconds, int substepsPerFrame, bool useGraphs = true)
      : Simulation(device, nullptr, {}, &rigid, options, frameSeconds, substepsPerFrame,
                   useGraphs) {}

  /// Runs one frame (all its substeps) and waits for it.
  void advanceFrame();
  /// Launches substep `substepInFrame` of a frame directly, every part's, without waiting
  /// (benchmarks capture it; tuning records it).
  void launchSubstep(int substepInFrame);
  /// Forgets the captured frame graphs, so that the next frame captures them again (after the
  /// launch policy changed, for example).
  void resetGraphs() { frames_.resetGraphs(); }
  /// Device time of the last frame [ms].
  double lastFrameMs() const { return frames_.lastFrameMs(); }

  int substepsPerFrame() const { return substeps_; }
  double substepSeconds() const { return substepSeconds_; }
  long long framesDone() const { return frames_.framesDone(); }
  bool usesGraphs() const { return frames_.usesGraphs(); }
  /// What grew so far ("frame 12: vertex-triangle 16 -> 40 (frame run again)"), oldest first.
  const std::vector<std::string>& regrowths() const { return frames_.regrowths(); }

  bool hasCloth() const { return cloth_ != nullptr; }
  bool hasRigid() const { return rigid_ != nullptr; }
  /// The parts; weft::Error when absent.
  ClothPart& cloth();
  const ClothPart& cloth() const;
  RigidPart& rigid();
  const RigidPart& rigid() const;

  const Device& device() const { return device_; }

 private:
  /// The frame kind of every part for frame `frame`, as one graph index.
  int frameKind(long long frame) const;
  void runFrameBody(int kind);

  const Device& device_;
  int substeps_;
  double substepSeconds_;
  std::unique_ptr<ClothPart> cloth_;
  std::unique_ptr<RigidPart> rigid_;
  std::vector<SolverPart*> parts_;  // cloth first, then rigid
  FrameDriver frames_;
};

}  // namespace weft
