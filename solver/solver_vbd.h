// SolverVBD: Vertex Block Descent for cloth (Chen et al., SIGGRAPH 2024), following the reference
// solver (Newton SolverVBD, cloth_vbd_spec.md) stage by stage. One call of step() is one substep:
//
//   updateKinematics        shape poses and driven particles at this substep (device time)
//   generateShapeContacts   which shapes each particle touches (frozen for the substep)
//   detectSelfContact       anchor p_cd := x, refit the trees, find candidate pairs (with a reuse
//                           slack, kept unless a particle moved farther since they were found;
//                           the first detection of a frame always builds them)
//   forwardStep             inertial target y and initial guess Δ = dt·v'
//   applyTruncation         x = p_cd + trunc(Δ)
//   for each iteration:
//     detectSelfContact     at iteration 0 by default (the detection interval decides)
//     for each color:
//       accumulateSelfContact  contact force and Hessian of the color's particles (gather); with
//                              the tile solve this runs inside solveColor's kernel instead
//                              (solve_elasticity_self_contact_tile)
//       solveColor             3×3 Newton step per particle of the color: Δ += H⁻¹f
//       applyTruncation        planar truncation of every pair, clamp, x = p_cd + Δ
//   updateVelocity          v = (x − x_n)/dt; advance the substep counter
// Without self-contact the detection and accumulation stages are skipped, the anchor is x_n and
// the truncation is the plain rewrite x = x_n + Δ.
//
// Nothing here allocates or reads back to the host, so a frame of substeps can be captured as
// one CUDA graph (Simulation does). Every launch goes through launch()/launchTile() with the
// kernel's KernelId, so its block size comes from the launch table.
#pragma once

#include <array>
#include <string_view>

#include "kernels/accumulate_self_contact_force_and_hessian.cuh"
#include "kernels/runtime/device.h"
#include "kernels/runtime/timer.h"
#include "solver/model.h"

namespace weft {

/// Where substeps spend their time, per stage. Filled only while profiling is on (it
/// synchronizes after every stage, so it is for breakdowns, not for the headline µs/substep).
struct StepProfile {
  enum Stage {
    Kinematics,
    ShapeContacts,
    Detection,
    ForwardStep,
    SelfContact,
    Solve,
    Truncation,
    Velocity,
    kNumStages
  };
  std::array<double, kNumStages> milliseconds{};
  std::array<int, kNumStages> calls{};
  int substeps = 0;
  static std::string_view stageName(int stage);
};

/// Whether self-contact detection runs before iteration `iteration` (0-based) of a substep, for
/// SelfContactOptions::detectionInterval `interval` (every substep also detects before its
/// forward step when self-contact is on). The schedule of the reference's current release
/// (Newton 1.8.0's collision_frequency_type): < 0, PRE_INIT: never; 0, PRE_POST_INIT: before
/// iteration 0 (after the forward step); n >= 1, ITERATIONS every n: before iterations n − 1,
/// 2n − 1, … (12 iterations at n = 5: before iterations 4 and 9, three detections a substep).
bool selfContactDetectionDue(int interval, int iteration);

class SolverVBD {
 public:
  SolverVBD(const Device& device, const Model& model, const SolverOptions& options,
            double dtSeconds);

  /// Advances `state` by one substep of dtSeconds; `substepInFrame` is its index in the frame
  /// (substep 0's first detection always builds the candidate lists, so that positions set
  /// between frames, or a frame run again, never meet lists kept from before).
  void step(State& state, Scratch& scratch, int substepInFrame = 0);

  /// Whether detections may keep the candidate lists (with a reuse slack; on by default). Off,
  /// every detection builds them: the tuner records substeps so, to time each launch's full work.
  /// Takes effect for substeps launched (or captured) after the call.
  void setListReuse(bool enabled) { listReuse_ = enabled; }
  /// Start (non-null) or stop (null) accumulating per-stage times into `profile`.
  void setProfile(StepProfile* profile) { profile_ = profile; }
  double dtSeconds() const { return dt_; }
  const SolverOptions& options() const { return options_; }

 private:
  void updateKinematics(State& state, Scratch& scratch) const;
  void generateShapeContacts(const State& state, Scratch& scratch) const;
  /// `mayKeepLists`: the lists found last may stand if no particle moved past the reuse slack.
  void detectSelfContact(const State& state, Scratch& scratch, bool mayKeepLists) const;
  void forwardStep(const State& state, Scratch& scratch) const;
  void accumulateSelfContact(int color, const State& state, Scratch& scratch) const;
  /// What the self-contact gather of the current lists reads.
  SelfContactGather selfContactGather(const State& state, Scratch& scratch) const;
  /// Self-contact gathered inside the tile solve (one kernel per color) rather than apart: with
  /// the tile solve, when the elements and contact runs of a particle fit one tile.
  bool fusesSelfContact() const;
  void solveColor(int color, const State& state, Scratch& scratch) const;
  void applyTruncation(State& state, Scratch& scratch) const;
  void updateVelocity(State& state, Scratch& scratch) const;

  /// Whether self-contact detection runs at the start of this iteration (selfContactDetectionDue).
  bool detectsAtIteration(int iteration) const;
  /// Runs one stage, timing it when profiling.
  template <class F>
  void stage(StepProfile::Stage s, F&& run);

  const Device& device_;
  const Model& model_;
  SolverOptions options_;
  double dt_;
  StepProfile* profile_ = nullptr;
  bool listReuse_ = true;
  DeviceTimer stageTimer_;
};

}  // namespace weft
