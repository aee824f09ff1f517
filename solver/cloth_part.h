// ClothPart: a cloth model, its state and SolverVBD, as one part of a Simulation
// (solver/simulation.h, solver/solver_part.h).
//
// With self-contact, nothing is ever dropped: a frame starts (inside its graph) by zeroing the
// contact status; after it, the simulation asks growIfOverflowed(), which reads the status (a few
// bytes) and grows every candidate list that overflowed, and the frame runs again from its saved
// start. The trees are rebuilt from scratch at the start of every `bvhRebuildInterval`-th frame;
// such frames are a second kind of frame (a second graph that begins with the rebuild), so every
// frame is still a single graph replay. Without self-contact nothing can overflow and nothing is
// carried.
#pragma once

#include <string>
#include <vector>

#include "solver/model.h"
#include "solver/solver_part.h"
#include "solver/solver_vbd.h"

namespace weft {

class ClothPart final : public SolverPart {
 public:
  ClothPart(const Device& device, const ModelDesc& desc, const SolverOptions& options,
            double substepSeconds, int substepsPerFrame);

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
    long long detections = 0;  // self-contact detections in the frames kept (not those run again)
    long long listBuilds = 0;  // of which built the lists (the others kept them: reuseSlack)
  };
  const ContactReport& contactReport() const { return contactReport_; }
  /// Self-contact detections per frame (before the forward step and per the interval).
  int detectionsPerFrame() const { return detectionsPerFrame_; }

  const Model& model() const { return model_; }
  State& state() { return state_; }
  Scratch& scratch() { return scratch_; }
  SolverVBD& solver() { return solver_; }

  // SolverPart
  std::vector<BufferRange> carried() override;
  int frameKinds() const override { return 2; }
  int frameKind(long long frame) const override;
  void beginFrame(int kind) override;
  void substep(int substepInFrame) override { solver_.step(state_, scratch_, substepInFrame); }
  std::optional<std::string> growIfOverflowed() override;
  bool endFrame() override;

 private:
  Model model_;
  State state_;
  Scratch scratch_;
  SolverVBD solver_;
  bool selfContact_ = false;
  int rebuildInterval_ = 0;
  int detectionsPerFrame_ = 0;
  ContactReport contactReport_;
};

}  // namespace weft
