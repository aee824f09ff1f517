#include "solver/solver_avbd.h"

#include <algorithm>

#include "kernels/avbd.cuh"
#include "kernels/rigid_contact_matching.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

namespace {

/// Launches begin_rigid_step or update_rigid_duals over n items: the strided kernel where the
/// items serve several row slots each (kernels/avbd.cuh rowSlotStride), else a thread per slot.
template <class K>
void launchServingRowSlots(const Device& device, int n, const K& k) {
  if (k.rowStride < k.rowSlots)
    launch(device, n, StridedRowSlots<K>{k});
  else
    launch(device, n, k);
}

/// The Chebyshev weight of iteration `iteration` (0-based) for the spectral-radius estimate rho
/// (Wang 2015, as the VBD paper uses it): 1 for the first, 2/(2 − ρ²) for the second, then
/// ω_k = 4/(4 − ρ²·ω_(k−1)); 1 throughout when rho is 0.
float chebyshevOmega(float rho, int iteration) {
  if (!(rho > 0.0f) || iteration < 1) return 1.0f;
  float omega = 2.0f / (2.0f - rho * rho);
  for (int k = 2; k <= iteration; ++k) omega = 4.0f / (4.0f - rho * rho * omega);
  return omega;
}

}  // namespace

SolverAVBD::SolverAVBD(const Device& device, const RigidModel& model,
                       const RigidSolverOptions& options, double dtSeconds)
    : device_(device), model_(model), options_(options), dt_(dtSeconds) {
  options_.validate();
  if (!(dtSeconds > 0.0)) throw Error("the substep length must be positive");
  perWorld_ = choosesWorldLaunch();
  jointDualsInBlocks_ = takesJointDualsInBlocks();
  if (perWorld_) {
    worlds_ = model_.worldsView();
    std::vector<float> omegas(size_t(options_.iterations));
    for (int it = 0; it < options_.iterations; ++it)
      omegas[size_t(it)] = chebyshevOmega(options_.chebyshevRho, it);
    omegas_ = DeviceBuffer<float>(device_, omegas);
    // The deep tree levels of every lane of the widest groups (32 lanes a world).
    const size_t words = oneLaneSpillWords(
        1 + model_.maxJointsPerBody + SolveRigidBodyTile::kContactParts, model_.worldRanges * 32,
        TreeWords<BodyBlock>::kWords, SolveRigidWorldIterations::kSharedLevels);
    if (device_.isCuda() && words > 0) worldSpill_ = DeviceBuffer<unsigned>(device_, words);
    if (device_.isCuda())
      worldTiles_ = DeviceBuffer<unsigned>(
          device_, 2 * size_t(model_.worldRanges) *
                       std::max(sizeof(SolveRigidBodyTile), sizeof(SolveRigidBodyTileJointDuals)) /
                       sizeof(unsigned));
  }
}

bool SolverAVBD::choosesWorldLaunch() const {
  switch (options_.iterationLaunches) {
    case IterationLaunches::PerColor:
      return false;
    case IterationLaunches::PerWorld:
      return true;
    case IterationLaunches::Auto:
      break;
  }
  // A world's colors must fit a warp's lanes (a body a lane; larger worlds leave most lanes of
  // the per-color tiles' work to one lane each) and the batch must be large enough that the GPU
  // has more worlds than a per-color launch has waves to hide. From there on the H100 measured
  // the launch per world at least as fast at every size up to 8192 worlds (docs/PERFORMANCE.md,
  // "A substep's iterations per world" and "The world's tile in one slot").
  if (!device_.isCuda() || model_.worldRanges == 0 || model_.largestWorldColor > 32) return false;
  return model_.worldRanges >= kWorldLaunchLeastWorlds;
}

bool SolverAVBD::takesJointDualsInBlocks() const {
  // Decided by the model alone (its worlds' size, not their count) so that every launch path
  // decides alike and a world of a batch is still bit for bit the world run alone on CUDA. Not
  // for models without contacts, whose one-lane tiles run with two shared levels, held to 128
  // registers (OneLaneLevels::Auto). Where it is taken, the launches per color keep three levels
  // whatever OneLaneLevels says (RigidPart::endFrame), so that the mode still changes no bits.
  const bool detects = model_.numShapes >= 2;  // RigidScratch builds a detector
  return model_.jointDualsCanBeInBlocks && model_.worldRanges > 0 &&
         model_.largestWorldColor <= options_.jointDualsInBlocksUpToWorldColor && detects;
}

void SolverAVBD::step(RigidState& state, RigidScratch& scratch, int substepInFrame) const {
  const bool fresh = scratch.detector && substepInFrame % options_.collideInterval == 0;
  if (fresh && model_.numBodies <= options_.beginBesideDetectionUpToBodies) {
    // Small models: the step's beginning for the bodies and joints, which reads none of the
    // detection (nor does the detection read what it writes: the first iterate goes to the other
    // pose buffer), beside the detection; the rows and list entries after it (docs/PERFORMANCE.md,
    // "The step's beginning beside the detection").
    device_.issueOnSide([&] { beginStep(state, scratch, fresh, BeginParts::BodiesAndJoints); });
    detect(state, scratch, substepInFrame == 0);
    beginStep(state, scratch, fresh, BeginParts::Rows);
    device_.joinSide();
  } else {
    if (fresh) detect(state, scratch, substepInFrame == 0);
    beginStep(state, scratch, fresh, BeginParts::All);
  }
  if (perWorld_)
    iterateWorlds(state, scratch, substepInFrame);
  else
    for (int it = 0; it < options_.iterations; ++it) iterate(state, scratch, it, substepInFrame);
  finishStep(state, scratch);
  if (scratch.detector && matching() && (substepInFrame + 1) % options_.collideInterval == 0)
    saveDetection(state, scratch);
}

void SolverAVBD::detect(const RigidState& state, RigidScratch& scratch, bool firstOfFrame) const {
  RigidContactDetector& detector = *scratch.detector;
  // The tree is rebuilt once per frame and refit at the frame's other detections: the same rows
  // (the detector's lists do not depend on the tree), without a sort and a hierarchy build for
  // every substep of the scenes that detect every substep.
  detector.detect(state.poses.data(), firstOfFrame ? RigidContactDetector::TreeUpdate::Rebuild
                                                   : RigidContactDetector::TreeUpdate::Refit);
  if (!matching()) return;
  const PreviousContactsView previous{state.history.rows.data(), state.history.count.data(),
                                      state.history.shapeOffsets.data(),
                                      state.history.midpoints.data()};
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

void SolverAVBD::beginStep(RigidState& state, RigidScratch& scratch, bool fresh,
                           BeginParts parts) const {
  const float h = float(dt_);
  const RigidBodiesDevice bodies = model_.bodiesView();
  const bool history = options_.contactHistory;
  const RigidContactDetector* detector = scratch.detector.get();
  BeginRigidStep k{};
  if (parts != BeginParts::Rows) {
    k.bodies = ForwardStepRigidBodies{bodies,
                                      options_.gravity,
                                      h,
                                      dt_,
                                      state.substep.data(),
                                      state.poses.data(),
                                      iterateInput(state, scratch, 0),
                                      state.linearVelocities.data(),
                                      state.angularVelocities.data(),
                                      scratch.inertialPoses.out()};
    k.stepBodies = model_.numBodies;
    k.joints = StepJointC0LambdaRho{bodies,
                                    model_.jointsView(),
                                    state.startPoses.data(),
                                    scratch.jointTerms.out(),
                                    state.jointLambda.out(),
                                    h,
                                    options_.gamma,
                                    options_.jointAlpha};
    k.dahl = ComputeRodDahlParameters{model_.jointsView(), state.startPoses.data(),
                                      state.dahl.data(), scratch.jointTerms.out()};
    k.numJoints = model_.numJoints;
    k.hasDahl = model_.hasDahl;
  }
  if (!detector || parts == BeginParts::BodiesAndJoints) {
    launch(device_, std::max(k.stepBodies, k.numJoints), k);
    return;
  }
  k.contacts = StepBodyBodyContactC0Lambda{bodies,
                                           detector->view(),
                                           model_.shapeMaterial.data(),
                                           state.startPoses.data(),
                                           scratch.contactState.data(),
                                           fresh,
                                           history ? scratch.matchIndex.data() : nullptr,
                                           history ? state.history.rows.data() : nullptr,
                                           history ? state.history.state.data() : nullptr,
                                           !options_.stickyContacts,
                                           h,
                                           options_.gamma};
  k.rowSlots = scratch.rowCapacity;
  k.ends = GatherContactEnds{detector->view(), scratch.contactEnds.data(), model_.bodyColor.data()};
  k.gatherBodies = fresh ? model_.numBodies : 0;
  const int others = std::max({k.stepBodies, k.gatherBodies, k.numJoints});
  k.rowStride = rowSlotStride(k.rowSlots, others, options_.rowSlotItems);
  launchServingRowSlots(device_, std::max(k.rowStride, others), k);
}

template <class K>
K SolverAVBD::bodySolve(RigidState& state, RigidScratch& scratch, const int* colorBodies,
                        const IteratePoses& poses, int count, const FoldedDuals& duals,
                        float* largestStep) const {
  const RigidContactDetector* detector = scratch.detector.get();
  K kernel{model_.bodiesView(),
           model_.jointsView(),
           detector ? detector->view() : RigidContactsView{},
           detector ? scratch.contactState.data() : nullptr,
           colorBodies,
           poses,
           scratch.inertialPoses.in(),
           scratch.jointTerms.in(),
           state.jointLambda.in(),
           model_.maxJointsPerBody,
           float(dt_),
           options_.frictionEpsilon,
           options_.contactAlpha,
           count,
           duals,
           largestStep};
  if (detector) kernel.contactEnds = scratch.contactEnds.data();
  if (jointDualsInBlocks_) {
    kernel.joints.bodyJoints = model_.bodyJointsTakingDuals.data();
    kernel.lambdaOut = state.jointLambda.out();
  }
  if constexpr (K::kOneLaneSharedLevels > 0)
    kernel.oneLaneSpill = {scratch.oneLaneSpill.data(), scratch.oneLaneSpill.size()};
  return kernel;
}

UpdateDualsBodyBodyContacts SolverAVBD::contactDuals(RigidScratch& scratch, const Transform* poses,
                                                     const Vec3* in) const {
  return {model_.bodiesView(),         scratch.detector->view(), poses,
          scratch.contactState.data(), options_.contactAlpha,    in};
}

UpdateDualsJoint SolverAVBD::jointDuals(RigidState& state, RigidScratch& scratch,
                                        const Transform* poses,
                                        WordMajorIn<RodMultipliers> in) const {
  return {model_.jointsView(), poses, scratch.jointTerms.in(), state.jointLambda.out(), in};
}

Transform* SolverAVBD::iterateInput(RigidState& state, RigidScratch& scratch, int iteration) {
  return iteration % 2 == 0 ? scratch.iteratePoses.data() : state.poses.data();
}

void SolverAVBD::iterate(RigidState& state, RigidScratch& scratch, int iteration,
                         int substepInFrame) const {
  const RigidContactDetector* detector = scratch.detector.get();
  // Iteration k reads one pose buffer and writes the other (kernels/avbd.cuh, IteratePoses).
  const Transform* previous = iterateInput(state, scratch, iteration);
  Transform* updated = iterateInput(state, scratch, iteration + 1);
  // From the second iteration on, the dual step of the iteration before rides in this
  // iteration's first color launch (kernels/avbd.cuh, FoldedDuals) in small models: there the
  // launch it saves is worth more than the work it adds to the color (docs/PERFORMANCE.md).
  // Decided by the whole model's size: a batch of small worlds has the work of a large model.
  // Either path gives the same bits on both backends (the dual step is one compiled function,
  // kernels/avbd.cuh), so a world of a batch is still bit for bit the world run alone.
  // In models of small worlds (jointDualsInBlocks_) the blocks take the joints' dual step
  // instead, from the second iteration on (kernels/avbd.cuh, jointPart), in place: the folding
  // launch then folds only the rows', and the dual launch takes the joints' after the last
  // iteration only.
  const bool fold = model_.numBodies <= options_.foldDualsUpToBodies;
  const bool folding = fold && iteration > 0;
  const bool last = iteration + 1 == options_.iterations;
  FoldedDuals duals;  // iteration 0 and unfolded: the multipliers where they are
  if (folding && !jointDualsInBlocks_) {
    if (iteration > 1) duals.jointIn = scratch.jointLambdaIterates[(iteration - 1) % 2].in();
    duals.jointOut = scratch.jointLambdaIterates[iteration % 2].out();
    duals.numJoints = model_.numJoints;
  }
  if (folding && detector) {
    duals.contactIn =
        iteration == 1 ? nullptr : scratch.contactLambdaIterates[(iteration - 1) % 2].data();
    duals.contactOut = scratch.contactLambdaIterates[iteration % 2].data();
    duals.rowSlots = scratch.rowCapacity;
  }
  // Convergence (recordConvergence): this iteration's slot of the frame's record.
  float* largestStep = nullptr;
  const size_t slot =
      2 * (size_t(substepInFrame) * size_t(options_.iterations) + size_t(iteration));
  if (slot + 2 <= scratch.iterationSteps.size()) largestStep = scratch.iterationSteps.data() + slot;
  for (int c = 0; c < model_.numColors; ++c) {
    const int first = model_.colorOffsets[size_t(c)];
    const int count = model_.colorOffsets[size_t(c) + 1] - first;
    const auto solve = [&](auto kernel) {
      kernel = bodySolve<decltype(kernel)>(
          state, scratch, model_.colorBodies.data() + first,
          IteratePoses{previous, updated, model_.bodyColor.data(), c}, count, duals, largestStep);
      kernel.chebyshevOmega = chebyshevOmega(options_.chebyshevRho, iteration);
      kernel.jointDualsInBlocks = jointDualsInBlocks_ && iteration > 0;
      launchTile(device_, kernel.items(), kernel);
    };
    if (folding && c == 0) {
      if (jointDualsInBlocks_)
        solve(SolveRigidBodyTileFoldingDualsJointDuals{});
      else
        solve(SolveRigidBodyTileFoldingDuals{});
      // The later colors solve with the new multipliers the first one wrote.
      duals = FoldedDuals{duals.contactOut, nullptr, duals.jointOut, {}, 0, 0};
    } else if (jointDualsInBlocks_) {
      solve(SolveRigidBodyTileJointDuals{});
    } else if (scratch.twoSharedLevels) {
      solve(SolveRigidBodyTileTwoSharedLevels{});
    } else {
      solve(SolveRigidBodyTile{});
    }
  }
  if (fold && !last) return;
  // Unfolded, every iteration's dual step is a launch of its own (in place); folded, only the
  // last one, which writes the multipliers back where the next substep finds them.
  const bool fromIterates = fold && iteration > 0;
  UpdateRigidDuals k{};
  if (detector) {
    k.contacts =
        contactDuals(scratch, updated,
                     fromIterates ? scratch.contactLambdaIterates[iteration % 2].data() : nullptr);
    k.rowSlots = scratch.rowCapacity;
  }
  k.joints = jointDuals(state, scratch, updated,
                        fromIterates && !jointDualsInBlocks_
                            ? scratch.jointLambdaIterates[iteration % 2].in()
                            : WordMajorIn<RodMultipliers>{});
  k.numJoints = jointDualsInBlocks_ && !last ? 0 : model_.numJoints;
  k.rowStride = rowSlotStride(k.rowSlots, k.numJoints, options_.rowSlotItems);
  const int n = std::max(k.rowStride, k.numJoints);
  if (n > 0) launchServingRowSlots(device_, n, k);
}

void SolverAVBD::iterateWorlds(RigidState& state, RigidScratch& scratch, int substepInFrame) const {
  // The tile type of the launches per color (the same bits only with the same one).
  if (jointDualsInBlocks_)
    iterateWorldsWith<SolveRigidWorldIterationsJointDuals>(state, scratch, substepInFrame);
  else
    iterateWorldsWith<SolveRigidWorldIterations>(state, scratch, substepInFrame);
}

template <class K>
void SolverAVBD::iterateWorldsWith(RigidState& state, RigidScratch& scratch,
                                   int substepInFrame) const {
  const RigidContactDetector* detector = scratch.detector.get();
  K k{};
  // The multipliers are updated in place after every iteration (update_rigid_duals' path); the
  // joints' in the blocks from the second iteration on, where the model takes them there
  // (jointDualsInBlocks_), and in the pass after the last.
  using Tile = decltype(k.solve);
  k.solve = bodySolve<Tile>(state, scratch, model_.colorBodies.data(),
                            IteratePoses{nullptr, nullptr, model_.bodyColor.data(), 0}, 0,
                            FoldedDuals{}, nullptr);
  k.worlds = worlds_;
  k.iterates[0] = iterateInput(state, scratch, 0);
  k.iterates[1] = iterateInput(state, scratch, 1);
  k.omegas = omegas_.data();
  k.iterations = options_.iterations;
  const size_t slot = 2 * size_t(substepInFrame) * size_t(options_.iterations);
  if (slot + 2 * size_t(options_.iterations) <= scratch.iterationSteps.size())
    k.largestSteps = scratch.iterationSteps.data() + slot;
  if (detector) {
    k.contactDuals = contactDuals(scratch, nullptr, nullptr);  // poses: per iteration
    k.shapeRowOffsets = detector->shapeRowOffsets();
  }
  k.jointDuals = jointDuals(state, scratch, nullptr, WordMajorIn<RodMultipliers>{});
  k.takesJointDuals = jointDualsInBlocks_;
  k.spill = worldSpill_.empty() ? nullptr : worldSpill_.data();
  k.tiles = worldTiles_.empty() ? nullptr : reinterpret_cast<Tile*>(worldTiles_.data());
  launchGroup(device_, worlds_.numWorlds, k);
}

void SolverAVBD::finishStep(RigidState& state, RigidScratch& scratch) const {
  // The last iteration wrote the buffer the next one would read.
  const Transform* final = iterateInput(state, scratch, options_.iterations);
  const bool inState = final == state.poses.data();
  FinishRigidStep k{};
  k.bodies = UpdateBodyVelocity{model_.com.in(),
                                final,
                                inState ? nullptr : state.poses.data(),
                                state.startPoses.data(),
                                state.linearVelocities.data(),
                                state.angularVelocities.data(),
                                state.substep.data(),
                                float(dt_)};
  k.numBodies = model_.numBodies;
  k.dahl = UpdateCableDahlState{model_.jointsView(), final, state.dahl.data()};
  k.dahlJoints = model_.hasDahl ? model_.numJoints : 0;
  launch(device_, std::max(k.numBodies, k.dahlJoints), k);
}

void SolverAVBD::saveDetection(RigidState& state, const RigidScratch& scratch) const {
  const RigidContactDetector& detector = *scratch.detector;
  const size_t rows = size_t(scratch.rowCapacity);
  detail::copyBytesAsync(device_, state.history.rows.data(), detector.rows(),
                         rows * sizeof(RigidContact));
  detail::copyBytesAsync(device_, state.history.count.data(), detector.rowCount(), sizeof(int));
  detail::copyBytesAsync(device_, state.history.shapeOffsets.data(), detector.shapeRowOffsets(),
                         state.history.shapeOffsets.bytes());
  state.history.midpoints.copyFrom(scratch.midpoints);
  state.history.state.copyFrom(scratch.contactState);
}

}  // namespace weft
