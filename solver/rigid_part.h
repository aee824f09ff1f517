// RigidPart: a rigid (cable) model, its state and SolverAVBD, as one part of a Simulation
// (solver/simulation.h, solver/solver_part.h).
//
// Nothing is dropped: a frame starts (inside its graph) by zeroing the contact status; after it
// the simulation asks growIfOverflowed(), which reads the status (a few bytes) and, if the
// broad-phase partner lists or the contact rows overflowed, grows them (and the per-row buffers
// and the contact history with them); the frame then runs again from its saved start (everything
// that carries over between substeps: RigidState). With recordConvergence the frame also zeroes
// its record of each iteration's largest body step, read after the frame
// (convergenceReport()). Every frame begins with a detection (collideInterval must divide the
// substeps), so the current rows never need to carry over.
#pragma once

#include <string>
#include <vector>

#include "solver/rigid_model.h"
#include "solver/solver_avbd.h"
#include "solver/solver_part.h"

namespace weft {

class RigidPart final : public SolverPart {
 public:
  RigidPart(const Device& device, const RigidDesc& desc, const RigidSolverOptions& options,
            double substepSeconds, int substepsPerFrame);

  std::vector<Transform> poses() const { return state_.poses.download(); }
  std::vector<Vec3> linearVelocities() const { return state_.linearVelocities.download(); }
  std::vector<Vec3> angularVelocities() const { return state_.angularVelocities.download(); }
  /// Substeps completed according to the device-side counter.
  long long substepCounter() const { return state_.substep.download()[0]; }

  /// What contact detection needed over the run.
  struct ContactReport {
    int largestRows = 0;      // most rows of one detection in any frame
    int lastFrameRows = 0;    // most rows of one detection in the last frame
    int largestPartners = 0;  // most broad-phase partners of one shape
    int rowCapacity = 0;      // capacities at the end of the run
    int pairCapacity = 0;
    long long detections = 0;      // contact detections run (frames × substeps / collideInterval)
    long long pairListBuilds = 0;  // of which built new partner lists (the rest kept them)
    long long framesTwoSharedLevels = 0;  // frames whose body solve kept two of its one-lane
                                          // tiles' tree levels in shared memory, not three
                                          // (OneLaneLevels)
  };
  const ContactReport& contactReport() const { return contactReport_; }

  /// Convergence over the run (RigidSolverOptions::recordConvergence): for every substep of every
  /// frame kept and every iteration, the largest block-Newton step of any body, i.e. how far the
  /// iteration still moved the poses (zero at a converged solve).
  struct ConvergenceReport {
    int iterations = 0;
    std::vector<float> translation;  // (frames × substeps × iterations) largest |Δx| [m]
    std::vector<float> rotation;     // (frames × substeps × iterations) largest |Δθ| [rad]
  };
  const ConvergenceReport& convergenceReport() const { return convergence_; }

  const RigidModel& model() const { return model_; }
  RigidState& state() { return state_; }
  RigidScratch& scratch() { return scratch_; }
  const SolverAVBD& solver() const { return solver_; }

  // SolverPart
  std::vector<BufferRange> carried() override;
  void beginFrame(int kind) override;
  void substep(int substepInFrame) override { solver_.step(state_, scratch_, substepInFrame); }
  std::optional<std::string> growIfOverflowed() override;
  bool endFrame() override;

 private:
  RigidModel model_;
  RigidState state_;
  RigidScratch scratch_;
  SolverAVBD solver_;
  int substeps_;
  ContactReport contactReport_;
  ConvergenceReport convergence_;
};

}  // namespace weft
