#include "solver/solver_avbd.h"

#include "kernels/avbd.cuh"
#include "kernels/rigid_contact_matching.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

SolverAVBD::SolverAVBD(const Device& device, const RigidModel& model,
                       const RigidSolverOptions& options, double dtSeconds)
    : device_(device), model_(model), options_(options), dt_(dtSeconds) {
  options_.validate();
  if (!(dtSeconds > 0.0)) throw Error("the substep length must be positive");
}

void SolverAVBD::step(RigidState& state, RigidScratch& scratch, int substepInFrame) const {
  const bool fresh = scratch.detector && substepInFrame % options_.collideInterval == 0;
  if (fresh) detect(state, scratch);
  beginStep(state, scratch, fresh);
  for (int it = 0; it < options_.iterations; ++it) iterate(state, scratch);
  finishStep(state, scratch);
  if (scratch.detector && matching() && (substepInFrame + 1) % options_.collideInterval == 0)
    saveDetection(scratch);
}

void SolverAVBD::detect(const RigidState& state, RigidScratch& scratch) const {
  RigidContactDetector& detector = *scratch.detector;
  detector.detect(state.poses.data());
  if (!matching()) return;
  const PreviousContactsView previous{scratch.previousRows.data(), scratch.previousCount.data(),
                                      scratch.previousShapeOffsets.data(),
                                      scratch.previousMidpoints.data()};
  scratch.claims.zero();
  const int rows = scratch.rowCapacity;
  launch(
      device_, rows,
      MatchRigidContacts{detector.view(), previous, model_.shapeGeometry.data(), state.poses.data(),
                         scratch.matchCandidate.data(), scratch.matchDistance.data(),
                         scratch.claims.data(), options_.matchDistance, options_.matchNormalDot});
  // The rows are the detector's; the sticky replay rewrites some of them in place.
  launch(device_, rows,
         ReplayStickyContacts{detector.rows(), detector.rowCount(), previous, state.poses.data(),
                              scratch.matchCandidate.data(), scratch.matchDistance.data(),
                              scratch.claims.data(), scratch.matchIndex.data(),
                              scratch.midpoints.data(), options_.stickyContacts});
}

void SolverAVBD::beginStep(RigidState& state, RigidScratch& scratch, bool fresh) const {
  const float h = float(dt_);
  const RigidBodiesDevice bodies = model_.bodiesView();
  if (scratch.detector) {
    const bool history = options_.contactHistory;
    launch(device_, scratch.rowCapacity,
           StepBodyBodyContactC0Lambda{
               bodies, scratch.detector->view(), model_.shapeMaterial.data(),
               scratch.startPoses.data(), scratch.contactState.data(), fresh,
               history ? scratch.matchIndex.data() : nullptr,
               history ? scratch.previousState.data() : nullptr, h, options_.gamma});
  }
  launch(device_, model_.numBodies,
         ForwardStepRigidBodies{bodies, options_.gravity, h, dt_, state.substep.data(),
                                state.poses.data(), state.linearVelocities.data(),
                                state.angularVelocities.data(), scratch.inertialPoses.data()});
  if (model_.numJoints > 0) {
    launch(device_, model_.numJoints,
           StepJointC0LambdaRho{bodies, model_.jointsView(), scratch.startPoses.data(),
                                scratch.jointTerms.data(), scratch.jointLambda.data(), h,
                                options_.gamma, options_.jointAlpha});
    if (model_.hasDahl)
      launch(device_, model_.numJoints,
             ComputeRodDahlParameters{model_.jointsView(), scratch.startPoses.data(),
                                      scratch.dahl.data(), scratch.jointTerms.data()});
  }
}

void SolverAVBD::iterate(RigidState& state, RigidScratch& scratch) const {
  const float h = float(dt_);
  const RigidBodiesDevice bodies = model_.bodiesView();
  const RigidJointsDevice joints = model_.jointsView();
  for (int c = 0; c < model_.numColors; ++c) {
    const int first = model_.colorOffsets[size_t(c)];
    const int count = model_.colorOffsets[size_t(c) + 1] - first;
    const int* colorBodies = model_.colorBodies.data() + first;
    if (scratch.detector)
      launchTile(device_, count,
                 AccumulateBodyBodyContactsPerBody{
                     bodies, scratch.detector->view(), scratch.contactState.data(), colorBodies,
                     state.poses.data(), scratch.startPoses.data(), scratch.contactBlocks.data(), h,
                     options_.frictionEpsilon, options_.contactAlpha});
    launch(device_, count,
           SolveRigidBody{bodies, joints, colorBodies, scratch.inertialPoses.data(),
                          scratch.detector ? scratch.contactBlocks.data() : nullptr,
                          scratch.jointTerms.data(), scratch.jointLambda.data(), state.poses.data(),
                          h});
  }
  if (scratch.detector)
    launch(device_, scratch.rowCapacity,
           UpdateDualsBodyBodyContacts{bodies, scratch.detector->view(), state.poses.data(),
                                       scratch.startPoses.data(), scratch.contactState.data(),
                                       options_.contactAlpha});
  if (model_.numJoints > 0)
    launch(device_, model_.numJoints,
           UpdateDualsJoint{joints, state.poses.data(), scratch.jointTerms.data(),
                            scratch.jointLambda.data()});
}

void SolverAVBD::finishStep(RigidState& state, RigidScratch& scratch) const {
  launch(device_, model_.numBodies,
         UpdateBodyVelocity{model_.com.data(), state.poses.data(), scratch.startPoses.data(),
                            state.linearVelocities.data(), state.angularVelocities.data(),
                            state.substep.data(), float(dt_)});
  if (model_.hasDahl)
    launch(device_, model_.numJoints,
           UpdateCableDahlState{model_.jointsView(), state.poses.data(), scratch.dahl.data()});
}

void SolverAVBD::saveDetection(RigidScratch& scratch) const {
  const RigidContactDetector& detector = *scratch.detector;
  const size_t rows = size_t(scratch.rowCapacity);
  detail::copyBytesAsync(device_, scratch.previousRows.data(), detector.rows(),
                         rows * sizeof(RigidContact));
  detail::copyBytesAsync(device_, scratch.previousCount.data(), detector.rowCount(), sizeof(int));
  detail::copyBytesAsync(device_, scratch.previousShapeOffsets.data(), detector.shapeRowOffsets(),
                         scratch.previousShapeOffsets.bytes());
  scratch.previousMidpoints.copyFrom(scratch.midpoints);
  scratch.previousState.copyFrom(scratch.contactState);
}

}  // namespace weft
