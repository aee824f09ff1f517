// RigidSimulation: a rigid (cable) model, its state and SolverAVBD, advanced a frame (several
// substeps) at a time — the rigid counterpart of Simulation (solver/simulation.h).
//
// On CUDA the first advanceFrame() captures all substeps of a frame into one CUDA graph and every
// later frame is one replay (kinematic motion reads the substep counter on the device). Each
// frame's device time is measured with CUDA events around the replay (host clock on the CPU).
//
// Nothing is dropped: a frame starts by saving everything that carries over between substeps
// (poses, velocities, counter, start poses, joint multipliers, Dahl state, the previous
// detection) and zeroing the contact status; after it the host reads the status (a few bytes),
// and if the broad-phase partner lists or the contact rows overflowed, the buffers grow, the
// saved state comes back, the graph is captured again and the frame runs again (the frame loop is
// FrameDriver's, shared with Simulation). With
// recordConvergence the frame also zeroes its record of each iteration's largest body step and
// the host reads it after the frame (convergenceReport()). Every frame
// begins with a detection (collideInterval must divide the substeps), so the current rows never
// need to carry over.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "solver/frame_driver.h"
#include "solver/rigid_model.h"
#include "solver/solver_avbd.h"

namespace weft {

class RigidSimulation {
 public:
  RigidSimulation(const Device& device, const RigidDesc& desc, const RigidSolverOptions& options,
                  double frameSeconds, int substepsPerFrame, bool useGraphs = true);

  /// Runs one frame (all its substeps) and waits for it.
  void advanceFrame();
  /// Launches one substep (index `substepInFrame` within a frame) directly, without waiting
  /// (benchmarks capture it; tuning records it).
  void launchSubstep(int substepInFrame) { solver_.step(state_, scratch_, substepInFrame); }
  /// Forgets the captured frame graph (after the launch policy changed, for example).
  void resetGraphs() { frames_.resetGraphs(); }
  /// Device time of the last frame [ms].
  double lastFrameMs() const { return frames_.lastFrameMs(); }

  int substepsPerFrame() const { return substeps_; }
  double substepSeconds() const { return solver_.dtSeconds(); }
  long long framesDone() const { return frames_.framesDone(); }
  bool usesGraphs() const { return frames_.usesGraphs(); }

  std::vector<Transform> poses() const { return state_.poses.download(); }
  std::vector<Vec3> linearVelocities() const { return state_.linearVelocities.download(); }
  std::vector<Vec3> angularVelocities() const { return state_.angularVelocities.download(); }
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
    std::vector<std::string> regrowths;  // "frame 3: contact rows 256 -> 640 (frame run again)"
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

  const Device& device() const { return device_; }
  const RigidModel& model() const { return model_; }
  RigidState& state() { return state_; }
  RigidScratch& scratch() { return scratch_; }
  const SolverAVBD& solver() const { return solver_; }

 private:
  void runFrameBody();

  const Device& device_;
  RigidModel model_;
  RigidState state_;
  RigidScratch scratch_;
  SolverAVBD solver_;
  int substeps_;
  FrameDriver frames_;
  ContactReport contactReport_;
  ConvergenceReport convergence_;
};

}  // namespace weft
