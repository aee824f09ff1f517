#include "solver/solver_vbd.h"

#include <algorithm>
#include <limits>

#include "kernels/accumulate_self_contact_force_and_hessian.cuh"
#include "kernels/apply_planar_truncation.cuh"
#include "kernels/apply_truncation_ts.cuh"
#include "kernels/forward_step.cuh"
#include "kernels/generate_particle_shape_contacts.cuh"
#include "kernels/runtime/launch.h"
#include "kernels/solve_elasticity.cuh"
#include "kernels/update_kinematics.cuh"
#include "kernels/update_velocity.cuh"

namespace weft {

namespace {

/// Threads of the per-pair truncation, per particle: they stride over the pairs, whose count
/// only the device knows. Measured on the H100 (docs/PERFORMANCE.md, "The truncation, one thread
/// per pair"): 64 was the fastest of 8 ... 1024 on all four cloth scenes (then over the records,
/// ~100 per particle in the contact-heavy scenes); one thread per record slot of the buffer was
/// slower, idle threads cost as much as a second pass.
constexpr int kTruncationThreadsPerParticle = 64;
/// ... and at most this many in all: eight waves of a full H100 (132 SMs × 2048 threads). A batch
/// of millions of particles otherwise starts 64 threads for each, most of which only read the
/// pair count and leave (docs/PERFORMANCE.md, "The truncation's pairs").
constexpr long long kMaxTruncationThreads = 1 << 21;

}  // namespace

std::string_view StepProfile::stageName(int stage) {
  static constexpr std::string_view kNames[kNumStages] = {"kinematics",
                                                          "shape contacts",
                                                          "self-contact detection",
                                                          "forward step",
                                                          "self-contact forces",
                                                          "solve",
                                                          "truncation",
                                                          "velocity"};
  return kNames[stage];
}

SolverVBD::SolverVBD(const Device& device, const Model& model, const SolverOptions& options,
                     double dtSeconds)
    : device_(device), model_(model), options_(options), dt_(dtSeconds), stageTimer_(device) {
  options_.validate();
  if (!(dtSeconds > 0.0)) throw Error("the substep length must be positive");
}

template <class F>
void SolverVBD::stage(StepProfile::Stage s, F&& run) {
  if (!profile_ || device_.isCapturing()) {
    run();
    return;
  }
  stageTimer_.start();
  run();
  stageTimer_.stop();
  profile_->milliseconds[s] += stageTimer_.elapsedMs();
  profile_->calls[s] += 1;
}

bool selfContactDetectionDue(int interval, int iteration) {
  if (interval < 0) return false;
  return interval == 0 ? iteration == 0 : (iteration + 1) % interval == 0;
}

bool SolverVBD::detectsAtIteration(int iteration) const {
  return options_.selfContact.enabled &&
         selfContactDetectionDue(options_.selfContact.detectionInterval, iteration);
}

void SolverVBD::step(State& state, Scratch& scratch, int substepInFrame) {
  const bool selfContact = options_.selfContact.enabled;
  stage(StepProfile::Kinematics, [&] { updateKinematics(state, scratch); });
  stage(StepProfile::ShapeContacts, [&] { generateShapeContacts(state, scratch); });
  if (selfContact)
    stage(StepProfile::Detection,
          [&] { detectSelfContact(state, scratch, /*mayKeepLists=*/substepInFrame > 0); });
  stage(StepProfile::ForwardStep, [&] { forwardStep(state, scratch); });
  stage(StepProfile::Truncation, [&] { applyTruncation(state, scratch); });
  for (int iteration = 0; iteration < options_.iterations; ++iteration) {
    if (detectsAtIteration(iteration))
      stage(StepProfile::Detection,
            [&] { detectSelfContact(state, scratch, /*mayKeepLists=*/true); });
    for (int color = 0; color < model_.numColors(); ++color) {
      if (selfContact && !fusesSelfContact())
        stage(StepProfile::SelfContact, [&] { accumulateSelfContact(color, state, scratch); });
      stage(StepProfile::Solve, [&] { solveColor(color, state, scratch); });
      stage(StepProfile::Truncation, [&] { applyTruncation(state, scratch); });
    }
  }
  stage(StepProfile::Velocity, [&] { updateVelocity(state, scratch); });
  if (profile_ && !device_.isCapturing()) profile_->substeps += 1;
}

void SolverVBD::updateKinematics(State& state, Scratch& scratch) const {
  launch(
      device_, model_.numShapes + model_.numDriven,
      UpdateKinematics{state.substep.data(), dt_, model_.numShapes, model_.shapeMotions.data(),
                       model_.motionSamples.data(), scratch.shapePoses.data(),
                       model_.drivenParticles.data(), model_.drivenDriver.data(),
                       model_.drivenInitial.data(), model_.drivers.data(), state.positions.data()});
}

void SolverVBD::generateShapeContacts(const State& state, Scratch& scratch) const {
  if (model_.numShapes == 0) return;
  launch(device_, model_.numParticles,
         GenerateParticleShapeContacts{
             model_.numShapes, model_.shapeSlots,
             model_.numWorlds > 1 ? model_.worlds.data() : nullptr,
             model_.numWorlds > 1 ? model_.shapeWorldBegin.data() : nullptr,
             options_.shapeContactMargin, state.positions.data(), model_.invMasses.data(),
             model_.radii.data(), model_.shapeGeometry.data(), model_.shapeMargins.data(),
             scratch.shapePoses.data(), scratch.shapeContacts.data()});
}

void SolverVBD::detectSelfContact(const State& state, Scratch& scratch, bool mayKeepLists) const {
  // A new detection window: displacements restart from the current positions, whether or not
  // the lists are built again (kept lists hold every pair within the margin of these positions).
  scratch.anchors.copyFrom(state.positions);
  scratch.displacements.zero();
  scratch.selfContact->detect(state.positions.data(), mayKeepLists && listReuse_);
}

bool SolverVBD::fusesSelfContact() const {
  const int lead =
      std::max(SolveElasticitySelfContactTile::kLeadSlots, model_.maxElementsPerParticle);
  return options_.selfContact.enabled && options_.tileSolve &&
         lead + SelfContactGather::kParts <= kMaxTileParts;
}

SelfContactGather SolverVBD::selfContactGather(const State& state, Scratch& scratch) const {
  const SelfContactOptions& sc = options_.selfContact;
  const SelfContactParams params{sc.radius,
                                 options_.particleContact.ke,
                                 options_.particleContact.kd,
                                 options_.particleContact.mu,
                                 options_.frictionEpsilon * float(dt_),
                                 float(dt_)};
  SelfContactDetector& detector = *scratch.selfContact;
  return {state.positions.data(),
          scratch.stepStart.data(),
          model_.invMasses.data(),
          model_.triangles.data(),
          model_.edges.data(),
          detector.particleRecordOffsets(),
          detector.particleRecords(),
          detector.particleRecordSlots(),
          params};
}

void SolverVBD::accumulateSelfContact(int color, const State& state, Scratch& scratch) const {
  const int begin = model_.colorOffsets[color];
  const int count = model_.colorOffsets[color + 1] - begin;
  launchTile(device_, count,
             AccumulateSelfContactForceAndHessian{
                 model_.particlesByColor.data() + begin, selfContactGather(state, scratch),
                 scratch.contactForces.data(), scratch.contactHessians.data()});
}

void SolverVBD::forwardStep(const State& state, Scratch& scratch) const {
  launch(device_, model_.numParticles,
         ForwardStep{float(dt_), options_.gravity, state.positions.data(), state.velocities.data(),
                     model_.invMasses.data(), scratch.stepStart.data(), scratch.inertia.data(),
                     scratch.displacements.data()});
}

void SolverVBD::solveColor(int color, const State& state, Scratch& scratch) const {
  const bool separateContact = !scratch.contactForces.empty() && !fusesSelfContact();
  const VertexSolve solve{float(dt_),
                          options_.frictionEpsilon,
                          state.positions.data(),
                          scratch.stepStart.data(),
                          scratch.inertia.data(),
                          model_.masses.data(),
                          model_.invMasses.data(),
                          model_.radii.data(),
                          model_.triangles.data(),
                          model_.triangleRestInverse.data(),
                          model_.triangleRestAreas.data(),
                          model_.triangleMaterials.data(),
                          model_.edges.data(),
                          model_.edgeRestAngles.data(),
                          model_.edgeRestLengths.data(),
                          model_.edgeMaterials.data(),
                          model_.solveTriangleOffsets.data(),
                          model_.solveTriangleEntries.data(),
                          model_.solveHingeOffsets.data(),
                          model_.solveHingeEntries.data(),
                          model_.numShapes,
                          model_.shapeSlots,
                          scratch.shapeContacts.data(),
                          scratch.shapePoses.data(),
                          model_.shapeMaterials.data(),
                          model_.shapeMargins.data(),
                          separateContact ? scratch.contactForces.data() : nullptr,
                          separateContact ? scratch.contactHessians.data() : nullptr,
                          scratch.displacements.data()};
  const int begin = model_.colorOffsets[color];
  const int count = model_.colorOffsets[color + 1] - begin;
  const int* particles = model_.particlesByColor.data() + begin;
  if (fusesSelfContact())
    launchTile(device_, count,
               SolveElasticitySelfContactTile{particles, model_.maxElementsPerParticle, solve,
                                              selfContactGather(state, scratch)});
  else if (options_.tileSolve)
    launchTile(device_, count,
               SolveElasticityTile{particles, model_.maxElementsPerParticle, solve});
  else
    launch(device_, count, SolveElasticity{particles, solve});
}

void SolverVBD::applyTruncation(State& state, Scratch& scratch) const {
  const SelfContactOptions& sc = options_.selfContact;
  if (!sc.enabled) {
    // Without self-contact the anchor is x_n and nothing truncates: x = x_n + Δ.
    launch(device_, model_.numParticles,
           ApplyTruncationTs{std::numeric_limits<float>::infinity(), scratch.stepStart.data(),
                             nullptr, scratch.displacements.data(), state.positions.data()});
    return;
  }
  // One thread per pair, over the truncation pairs of the last detection (the solver's detector
  // always writes them: the model carries the vertex adjacency).
  const SelfContactDetector& detector = *scratch.selfContact;
  const int threads = int(std::min<long long>(
      static_cast<long long>(kTruncationThreadsPerParticle) * model_.numParticles,
      kMaxTruncationThreads));
  launch(device_, threads,
         ApplyPlanarTruncationByRecord{
             threads, sc.relaxation, sc.edgeParallelEpsilon, scratch.anchors.data(),
             scratch.displacements.data(), model_.triangles.data(), model_.edges.data(),
             detector.particleContactOffsets(), detector.truncationPairs(),
             detector.truncationPairSlots(), scratch.truncation.data()});
  // The isotropic clamp keeps pairs that were farther apart than the margin (so undetected)
  // from closing that gap within one detection window.
  launch(device_, model_.numParticles,
         ApplyTruncationTs{0.5f * sc.margin * sc.relaxation, scratch.anchors.data(),
                           scratch.truncation.data(), scratch.displacements.data(),
                           state.positions.data()});
}

void SolverVBD::updateVelocity(State& state, Scratch& scratch) const {
  launch(device_, model_.numParticles,
         UpdateVelocity{float(1.0 / dt_), state.positions.data(), scratch.stepStart.data(),
                        state.velocities.data(), state.substep.data()});
}

}  // namespace weft
