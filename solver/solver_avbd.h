// SolverAVBD: Augmented Vertex Block Descent for rigid bodies joined by rod joints (cables),
// with the compliant augmented-Lagrangian rows of the reference (Newton SolverVBD with
// rigid_compliant_alm=True; rigid_avbd_spec.md §4). One call of step() is one substep:
//
//   [detect]                 contact rows at the start-of-step poses, every collideInterval-th
//                            substep (+ matching to the previous detection when history or
//                            sticky contacts are on); the shape tree is rebuilt at the first
//                            substep of a frame and refit at the others
//   begin_rigid_step         contact rows (material, C0, ρ, λ retention or warm start), inertial
//                            prediction (the first iterate, into the scratch's pose buffer),
//                            joint ρ/C0/λ retention, Dahl parameters: one launch; in small
//                            models (beginBesideDetectionUpToBodies), after a detection, two:
//                            the bodies' and joints' part on the device's side stream beside the
//                            detection (it reads none of it), the rows' part after it
//   for each iteration:
//     for each body color:
//       solve_rigid_body_tile  a tile per body: inertia + adjacent joints + its contact rows,
//                              6×6 Newton step, new pose into the other pose buffer; in small
//                              models (foldDualsUpToBodies), from the second iteration on, the
//                              first color's launch also takes the dual step of the iteration
//                              before (FoldedDuals). In models of small worlds
//                              (jointDualsInBlocksUpToWorldColor) a variant of both, under their
//                              names: from the second iteration on, each joint's end of the
//                              earlier color takes its dual step in its block (in place)
//     update_rigid_duals     contact and joint duals (Jacobi, after all colors; the joints' only
//                            after the last iteration where the blocks take them); folded: only
//                            after the last iteration
//     (recordConvergence: every body's step raises the iteration's largest |Δx| and |Δθ|)
//   or, for batches of small worlds (IterationLaunches; Auto decides at construction):
//   solve_rigid_world_iterations  all iterations in one launch, a warp's lanes per world: its
//                            bodies of each color, a lane each, then its duals (the joints'
//                            as in the launches per color), with a barrier
//                            of the world's lanes between (the same bits)
//   finish_rigid_step        BDF1 velocities, start pose of the next step, counter, Dahl state
//   [save the detection]     rows, midpoints and λ for the next detection's matching
//
// The launches are the reference's kernels fused where they touch disjoint data (kernels/avbd.cuh
// says which and why that is race-free); 2 + iterations·(colors + 1) launches per substep plus
// detection, 3 + iterations·colors with the duals folded, 3 with the iterations per world (one
// more at a substep that detects in small models). Nothing
// here allocates or reads back, so a frame of substeps can be captured as one CUDA graph
// (Simulation does). Every launch takes its block size from the launch table.
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
  /// Whether the iterations run as one launch per world (RigidSolverOptions::iterationLaunches,
  /// Auto decided here at construction).
  bool iteratesPerWorld() const { return perWorld_; }
  /// Auto takes the launch per world from this many worlds on (docs/PERFORMANCE.md).
  static constexpr int kWorldLaunchLeastWorlds = 128;
  const RigidSolverOptions& options() const { return options_; }
  /// Whether the blocks take the joints' dual step (jointDualsInBlocksUpToWorldColor); the
  /// launches per color then ignore RigidScratch::twoSharedLevels.
  bool jointDualsInBlocks() const { return jointDualsInBlocks_; }

 private:
  void detect(const RigidState& state, RigidScratch& scratch, bool firstOfFrame) const;
  /// What a begin_rigid_step launch serves: everything, or (small models, beside a detection)
  /// the bodies and joints, then the rows and list entries.
  enum class BeginParts { All, BodiesAndJoints, Rows };
  /// begin_rigid_step's `parts`; `fresh`: after a detection this substep.
  void beginStep(RigidState& state, RigidScratch& scratch, bool fresh, BeginParts parts) const;
  void iterate(RigidState& state, RigidScratch& scratch, int iteration, int substepInFrame) const;
  /// All iterations in one launch, a group of lanes per world
  /// (IterationLaunches::PerWorld).
  void iterateWorlds(RigidState& state, RigidScratch& scratch, int substepInFrame) const;
  template <class K>
  void iterateWorldsWith(RigidState& state, RigidScratch& scratch, int substepInFrame) const;
  /// The body solve's arguments shared by its launches (K: a SolveRigidBodyTileT).
  template <class K>
  K bodySolve(RigidState& state, RigidScratch& scratch, const int* colorBodies,
              const IteratePoses& poses, int count, const FoldedDuals& duals,
              float* largestStep) const;
  /// The dual steps of the rows (the detector's) and of the joints at `poses`, from `in` (null:
  /// the multipliers in place), as update_rigid_duals and solve_rigid_world_iterations run them.
  UpdateDualsBodyBodyContacts contactDuals(RigidScratch& scratch, const Transform* poses,
                                           const Vec3* in) const;
  UpdateDualsJoint jointDuals(RigidState& state, RigidScratch& scratch, const Transform* poses,
                              WordMajorIn<RodMultipliers> in) const;
  void finishStep(RigidState& state, RigidScratch& scratch) const;
  void saveDetection(RigidState& state, const RigidScratch& scratch) const;
  /// The pose buffer iteration `iteration` starts from: the scratch's for even ones (the first
  /// iterate, begin_rigid_step's prediction, leaves the state's start-of-step poses to the
  /// detection that may run beside it), the state's for odd ones.
  static Transform* iterateInput(RigidState& state, RigidScratch& scratch, int iteration);
  bool matching() const { return options_.contactHistory || options_.stickyContacts; }

  const Device& device_;
  const RigidModel& model_;
  RigidSolverOptions options_;
  double dt_;
  bool choosesWorldLaunch() const;
  bool takesJointDualsInBlocks() const;

  bool perWorld_ = false;  // iterateWorlds instead of iterate
  // The blocks take the joints' dual step (RigidSolverOptions::jointDualsInBlocksUpToWorldColor)
  bool jointDualsInBlocks_ = false;
  RigidWorldsDevice worlds_{};  // perWorld_: the model's worlds as ranges
  DeviceBuffer<float> omegas_;  // perWorld_: (iterations) each iteration's Chebyshev weight
  // perWorld_ on CUDA: the deep tree levels of every lane (the launches write it: scratch)
  mutable DeviceBuffer<unsigned> worldSpill_;
  // perWorld_ on CUDA: each world's body-solve tile of two steps (scratch)
  mutable DeviceBuffer<unsigned> worldTiles_;
};

}  // namespace weft
