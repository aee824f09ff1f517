// SolverAVBD: Augmented Vertex Block Descent for rigid bodies joined by rod joints (cables),
// with the compliant augmented-Lagrangian rows of the reference (Newton SolverVBD with
// rigid_compliant_alm=True; rigid_avbd_spec.md §4). One call of step() is one substep:
//
//   [detect]                          contact rows at the start-of-step poses, every
//                                     collideInterval-th substep (+ matching to the previous
//                                     detection when history or sticky contacts are on)
//   step_body_body_contact_C0_lambda  contact rows: material, C0, ρ, λ retention
//   forward_step_rigid_bodies         inertial prediction; kinematic bodies to their pose
//   step_joint_C0_lambda_rho          joints: ρ, C0, λ retention
//   compute_rod_dahl_parameters       (Dahl on) lagged stress and tangent term
//   for each iteration:
//     for each body color:
//       accumulate_body_body_contacts_per_body   contact blocks of the color's bodies
//       solve_rigid_body                         6×6 Newton step per body
//     update_duals_body_body_contacts, update_duals_joint
//   update_body_velocity              BDF1 velocities, start pose of the next step, counter
//   update_cable_dahl_state           (Dahl on) Dahl state at the final poses
//   [save the detection]              rows, midpoints and λ for the next detection's matching
//
// Nothing here allocates or reads back, so a frame of substeps can be captured as one CUDA graph
// (RigidSimulation does). Every launch takes its block size from the launch table.
#pragma once

#include "kernels/runtime/device.h"
#include "solver/rigid_model.h"

namespace weft {

class SolverAVBD {
 public:
  SolverAVBD(const Device& device, const RigidModel& model, const RigidSolverOptions& options,
             double dtSeconds);

  /// Advances `state` by one substep; `substepInFrame` decides whether contacts are detected
  /// (every collideInterval-th substep of a frame, starting with the first).
  void step(RigidState& state, RigidScratch& scratch, int substepInFrame) const;

  double dtSeconds() const { return dt_; }
  const RigidSolverOptions& options() const { return options_; }

 private:
  void detect(const RigidState& state, RigidScratch& scratch) const;
  void beginStep(RigidState& state, RigidScratch& scratch, bool fresh) const;
  void iterate(RigidState& state, RigidScratch& scratch) const;
  void finishStep(RigidState& state, RigidScratch& scratch) const;
  void saveDetection(RigidScratch& scratch) const;
  bool matching() const { return options_.contactHistory || options_.stickyContacts; }

  const Device& device_;
  const RigidModel& model_;
  RigidSolverOptions options_;
  double dt_;
};

}  // namespace weft
