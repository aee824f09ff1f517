// Simulation: a model, its state and the solver, advanced a frame (several substeps) at a time.
//
// On CUDA the first advanceFrame() captures all substeps of a frame into one CUDA graph
// (FrameGraph); every frame after that is a single graph replay, with no host work per substep
// (kinematic motion reads the substep counter on the device). On the CPU, and when graphs are
// switched off, the substeps are launched directly. Each frame's device time is measured with
// CUDA events around the replay (host clock on the CPU).
//
// With self-contact, nothing is ever dropped: a frame starts by saving the state (in the graph)
// and zeroing the contact status; after it, the host reads the status (a few bytes), and if any
// candidate list overflowed its capacity the lists grow to fit, the state is restored, the graph
// is captured again and the frame runs again (the frame loop is FrameDriver's, shared with
// RigidSimulation). The trees are rebuilt from scratch at the start of every
// `bvhRebuildInterval`-th frame; such frames replay a second graph that begins with the rebuild,
// so every frame is still a single graph replay.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solver/frame_driver.h"
#include "solver/model.h"
#include "solver/solver_vbd.h"

namespace weft {

class Simulation {
 public:
  Simulation(const Device& device, const ModelDesc& desc, const SolverOptions& options,
             double frameSeconds, int substepsPerFrame, bool useGraphs = true);

  /// Runs one frame (all its substeps) and waits for it.
  void advanceFrame();
  /// Forgets the captured frame graphs, so that the next frame captures them again (after the
  /// launch policy changed, for example).
  void resetGraphs() { frames_.resetGraphs(); }
  /// Device time of the last frame [ms].
  double lastFrameMs() const { return frames_.lastFrameMs(); }

  int substepsPerFrame() const { return substeps_; }
  double substepSeconds() const { return solver_.dtSeconds(); }
  long long framesDone() const { return frames_.framesDone(); }
  bool usesGraphs() const { return frames_.usesGraphs(); }

  std::vector<Vec3> positions() const { return state_.positions.download(); }
  std::vector<Vec3> velocities() const { return state_.velocities.download(); }
  /// Substeps completed according to the device-side counter.
  long long substepCounter() const { return state_.substep.download()[0]; }

  /// What self-contact detection needed over the run (zeros without self-contact).
  struct ContactReport {
    ContactStatus largest;           // largest candidate counts seen in any frame
    ContactStatus lastFrame;         // candidate counts of the last frame
    int vertexTriangleCapacity = 0;  // capacities at the end of the run
    int edgeEdgeCapacity = 0;
    int triangleVertexCapacity = 0;
    std::vector<std::string> regrowths;  // "frame 12: vertex-triangle 16 -> 40 (frame re-run)"
    long long detections = 0;  // self-contact detections in the frames kept (not those run again)
    long long listBuilds = 0;  // of which built the lists (the others kept them: reuseSlack)
  };
  const ContactReport& contactReport() const { return contactReport_; }
  /// Self-contact detections per frame (before the forward step and per the interval).
  int detectionsPerFrame() const { return detectionsPerFrame_; }

  const Device& device() const { return device_; }
  const Model& model() const { return model_; }
  State& state() { return state_; }
  Scratch& scratch() { return scratch_; }
  SolverVBD& solver() { return solver_; }

 private:
  void runFrameBody(bool rebuild);

  const Device& device_;
  Model model_;
  State state_;
  Scratch scratch_;
  SolverVBD solver_;
  int substeps_;
  bool selfContact_ = false;
  int rebuildInterval_ = 0;
  int detectionsPerFrame_ = 0;
  // Graph 0: a frame; graph 1: a frame that starts with a BVH rebuild. With self-contact the state
  // carries over (saved at each frame's start, to run a frame again after growing).
  FrameDriver frames_;
  ContactReport contactReport_;
};

}  // namespace weft
