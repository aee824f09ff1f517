#include "solver/rigid_model.h"

#include <algorithm>
#include <cmath>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"  // kMaxTileParts
#include "solver/cable_builder.h"

namespace weft {

namespace {

void requireFiniteNonNegative(float v, const char* name, bool allowZero) {
  if (!std::isfinite(v) || v < 0.0f || (!allowZero && v == 0.0f))
    throw Error(std::string("rigid solver option ") + name + " = " + std::to_string(v) +
                " is invalid: it must be finite and " + (allowZero ? "non-negative" : "positive"));
}

/// Copies the first min(old, new) elements of `old` into a fresh buffer of `count` elements.
template <class T>
DeviceBuffer<T> grown(const Device& device, const DeviceBuffer<T>& old, size_t count) {
  DeviceBuffer<T> fresh(device, count);
  const size_t keep = std::min(old.size(), count);
  if (keep) detail::copyBytesAsync(device, fresh.data(), old.data(), keep * sizeof(T));
  return fresh;
}

bool effectivelyKinematic(const BodyDesc& b) {
  return b.kinematic || !(b.mass > 0.0f);
}

}  // namespace

void RigidSolverOptions::validate() const {
  if (iterations < 1)
    throw Error("rigid solver option iterations = " + std::to_string(iterations) +
                " is invalid: at least one iteration is needed");
  if (!(std::isfinite(gravity.x) && std::isfinite(gravity.y) && std::isfinite(gravity.z)))
    throw Error("rigid solver option gravity is not finite");
  requireFiniteNonNegative(frictionEpsilon, "frictionEpsilon", false);
  if (!(gamma >= 0.0f && gamma <= 1.0f)) throw Error("rigid solver option gamma must be in [0, 1]");
  if (!(jointAlpha >= 0.0f && jointAlpha <= 1.0f) ||
      !(contactAlpha >= 0.0f && contactAlpha <= 1.0f))
    throw Error("rigid solver options jointAlpha and contactAlpha must be in [0, 1]");
  if (collideInterval < 1) throw Error("rigid solver option collideInterval must be at least 1");
  if (contactCapacity < 1 || pairCapacity < 1)
    throw Error("rigid solver options contactCapacity and pairCapacity must be at least 1");
  requireFiniteNonNegative(matchDistance, "matchDistance", true);
  requireFiniteNonNegative(pairReuseMargin, "pairReuseMargin", true);
  if (allPairsShapes < 0) throw Error("rigid solver option allPairsShapes must be at least 0");
  if (allPairsRunsFromWorlds < 1)
    throw Error("rigid solver option allPairsRunsFromWorlds must be at least 1");
  if (foldDualsUpToBodies < 0)
    throw Error("rigid solver option foldDualsUpToBodies must be at least 0");
  if (jointDualsInBlocksUpToWorldColor < 0)
    throw Error("rigid solver option jointDualsInBlocksUpToWorldColor must be at least 0");
  if (beginBesideDetectionUpToBodies < 0)
    throw Error("rigid solver option beginBesideDetectionUpToBodies must be at least 0");
  if (rowSlotItems < 1) throw Error("rigid solver option rowSlotItems must be at least 1");
  if (!(matchNormalDot >= -1.0f && matchNormalDot <= 1.0f))
    throw Error("rigid solver option matchNormalDot must be in [-1, 1]");
  if (!(chebyshevRho >= 0.0f && chebyshevRho < 1.0f))
    throw Error("rigid solver option chebyshevRho = " + std::to_string(chebyshevRho) +
                " must be in [0, 1) (0: no acceleration)");
}

RigidModel::RigidModel(const Device& device, const RigidDesc& desc)
    : numBodies(desc.numBodies()), numShapes(desc.numShapes()), numJoints(desc.numJoints()) {
  validateRigidDesc(desc);
  if (numBodies == 0) throw Error("the rigid model has no bodies");
  if (int(desc.bodyColorOffsets.size()) < 2 || int(desc.bodiesByColor.size()) != numBodies ||
      int(desc.jointOffsets.size()) != numBodies + 1)
    throw Error("the rigid model has no coloring: build it with CableBuilder::finalize()");

  const size_t B = size_t(numBodies);
  std::vector<Vec3> hCom(B);
  std::vector<float> hMass(B), hInvMass(B), hStructuralK(B, 0.0f);
  std::vector<Mat33> hInertia(B), hInvInertia(B);
  std::vector<ShapeMotion> hMotion(B);
  std::vector<Transform> hSamples;
  for (size_t b = 0; b < B; ++b) {
    const BodyDesc& body = desc.bodies[b];
    hCom[b] = body.com;
    hInertia[b] = body.inertia;
    ShapeMotion m = body.motion;
    if (effectivelyKinematic(body)) {
      hMass[b] = 0.0f;
      hInvMass[b] = 0.0f;
      hInvInertia[b] = Mat33{};
      if (m.type == MotionType::Static) m.pose0 = body.pose;
      if (m.type == MotionType::Sampled) {
        m.sampleOffset = int(hSamples.size());
        m.sampleCount = int(body.motionSamples.size());
        hSamples.insert(hSamples.end(), body.motionSamples.begin(), body.motionSamples.end());
      }
    } else {
      hMass[b] = body.mass;
      hInvMass[b] = 1.0f / body.mass;
      hInvInertia[b] = inverse(body.inertia, determinant(body.inertia));
      m = ShapeMotion{};
      m.pose0 = body.pose;
    }
    hMotion[b] = m;
  }
  if (hSamples.empty()) hSamples.push_back(Transform{});  // keep the pointer valid

  const size_t J = size_t(numJoints);
  std::vector<int> hType(J), hParent(J), hChild(J);
  std::vector<RodJoint> hJoints(J);
  std::vector<float> hEps(J), hTau(J);
  for (size_t j = 0; j < J; ++j) {
    const JointDesc& d = desc.joints[j];
    hType[j] = int(d.type);
    hParent[j] = d.parent;
    hChild[j] = d.child;
    RodJoint& r = hJoints[j];
    r.parentAnchor = d.parentAnchor;
    r.childAnchor = d.childAnchor;
    r.material = {d.stretchStiffness, d.shearStiffness, d.bendStiffness, d.twistStiffness,
                  d.stretchDamping,   d.shearDamping,   d.bendDamping,   d.twistDamping};
    const Transform parentRest = d.parent >= 0 ? desc.bodies[size_t(d.parent)].pose : Transform{};
    if (d.type == JointType::Rod)
      r.rest =
          rodRest(parentRest, desc.bodies[size_t(d.child)].pose, d.parentAnchor, d.childAnchor);
    hEps[j] = d.dahlEpsMax;
    hTau[j] = d.dahlTau;
    const float k = d.type == JointType::Rod ? std::max(d.stretchStiffness, d.shearStiffness)
                                             : d.stretchStiffness;
    for (int body : {d.parent, d.child})
      if (body >= 0) hStructuralK[size_t(body)] = std::max(hStructuralK[size_t(body)], k);
    if (d.type == JointType::Rod && d.dahlEpsMax > 0.0f && d.dahlTau > 0.0f &&
        (d.bendStiffness > 0.0f || d.twistStiffness > 0.0f))
      hasDahl = true;
  }

  const size_t S = size_t(numShapes);
  std::vector<int> hShapeBody(S);
  std::vector<ShapeGeometry> hGeometry(S);
  std::vector<Transform> hLocal(S);
  std::vector<float> hMargin(S), hGap(S);
  std::vector<ContactMaterial> hMaterial(S);
  std::vector<int> hWorld(S);
  for (size_t s = 0; s < S; ++s) {
    const RigidShapeDesc& d = desc.shapes[s];
    hShapeBody[s] = d.body;
    hGeometry[s] = d.geometry;
    hLocal[s] = d.localPose;
    hMargin[s] = d.margin;
    hGap[s] = d.gap;
    hMaterial[s] = d.material;
    hWorld[s] = d.world;
    numWorlds = std::max(numWorlds, d.world + 1);
  }
  std::vector<std::uint64_t> hFilter = shapePairFilterKeys(desc.filteredShapePairs);
  if (hFilter.empty()) hFilter.push_back(~std::uint64_t(0));  // a key no pair has

  com = WordMajorBuffer<Vec3>(device, hCom);
  mass = DeviceBuffer<float>(device, hMass);
  invMass = DeviceBuffer<float>(device, hInvMass);
  inertia = WordMajorBuffer<Mat33>(device, hInertia);
  invInertia = DeviceBuffer<Mat33>(device, hInvInertia);
  structuralK = DeviceBuffer<float>(device, hStructuralK);
  motion = DeviceBuffer<ShapeMotion>(device, hMotion);
  motionSamples = DeviceBuffer<Transform>(device, hSamples);
  shapeBody = DeviceBuffer<int>(device, hShapeBody);
  shapeGeometry = DeviceBuffer<ShapeGeometry>(device, hGeometry);
  shapeLocalPose = DeviceBuffer<Transform>(device, hLocal);
  shapeMargin = DeviceBuffer<float>(device, hMargin);
  shapeGap = DeviceBuffer<float>(device, hGap);
  if (numWorlds > 1) shapeWorld = DeviceBuffer<int>(device, hWorld);
  shapeMaterial = DeviceBuffer<ContactMaterial>(device, hMaterial);
  filterKeys = DeviceBuffer<std::uint64_t>(device, hFilter);
  filterStarts = DeviceBuffer<int>(device, shapePairFilterStarts(hFilter, numShapes));
  jointType = DeviceBuffer<int>(device, hType);
  jointParent = DeviceBuffer<int>(device, hParent);
  jointChild = DeviceBuffer<int>(device, hChild);
  joints = WordMajorBuffer<RodJoint>(device, hJoints);
  dahlEpsMax = DeviceBuffer<float>(device, hEps);
  dahlTau = DeviceBuffer<float>(device, hTau);
  jointOffsets = DeviceBuffer<int>(device, desc.jointOffsets);
  std::vector<int> hBodyJoints = desc.bodyJoints;
  if (hBodyJoints.empty()) hBodyJoints.push_back(0);
  bodyJoints = DeviceBuffer<int>(device, hBodyJoints);
  colorBodies = DeviceBuffer<int>(device, desc.bodiesByColor);
  colorOffsets = desc.bodyColorOffsets;
  numColors = int(colorOffsets.size()) - 1;
  std::vector<int> hColor(size_t(numBodies), -1);
  for (int c = 0; c < numColors; ++c)
    for (int k = colorOffsets[size_t(c)]; k < colorOffsets[size_t(c) + 1]; ++k)
      hColor[size_t(desc.bodiesByColor[size_t(k)])] = c;
  for (int b = 0; b < numBodies; ++b) {
    if (hColor[size_t(b)] < 0)
      throw Error("rigid body " + std::to_string(b) +
                  " has no color: the coloring must cover "
                  "every body (CableBuilder::finalize)");
    maxJointsPerBody =
        std::max(maxJointsPerBody, desc.jointOffsets[size_t(b) + 1] - desc.jointOffsets[size_t(b)]);
  }
  // The joint lists again, each joint whose dual step the body takes in its block as ~j
  // (RigidSolverOptions::jointDualsInBlocksUpToWorldColor): the joint's end of the earlier color,
  // or its only dynamic end (a kinematic body solves nothing). Possible where every joint has a
  // dynamic end and no joint joins two dynamic bodies of one color.
  const auto dynamic = [&](int b) { return b >= 0 && hMass[size_t(b)] > 0.0f; };
  std::vector<int> hTakingDuals = desc.bodyJoints;
  for (int b = 0; b < numBodies; ++b)
    for (int e = desc.jointOffsets[size_t(b)]; e < desc.jointOffsets[size_t(b) + 1]; ++e) {
      const int j = desc.bodyJoints[size_t(e)];
      const int other = hParent[size_t(j)] == b ? hChild[size_t(j)] : hParent[size_t(j)];
      if (!dynamic(b)) continue;
      if (!dynamic(other) || hColor[size_t(other)] > hColor[size_t(b)])
        hTakingDuals[size_t(e)] = ~j;
      if (dynamic(other) && hColor[size_t(other)] == hColor[size_t(b)])
        jointDualsCanBeInBlocks = false;
    }
  for (size_t j = 0; j < size_t(numJoints); ++j)
    if (!dynamic(hParent[j]) && !dynamic(hChild[j])) jointDualsCanBeInBlocks = false;
  if (hTakingDuals.empty()) hTakingDuals.push_back(0);
  bodyJointsTakingDuals = DeviceBuffer<int>(device, hTakingDuals);
  if (1 + maxJointsPerBody + SolveRigidBodyTile::kContactParts > kMaxTileParts)
    throw Error("a rigid body has " + std::to_string(maxJointsPerBody) +
                " joints; the body solve takes at most " +
                std::to_string(kMaxTileParts - 1 - SolveRigidBodyTile::kContactParts));
  if (hColor.empty()) hColor.push_back(0);
  bodyColor = DeviceBuffer<int>(device, hColor);
  uploadWorldRanges(device, desc);
}

void RigidModel::uploadWorldRanges(const Device& device, const RigidDesc& desc) {
  std::vector<int> bodyBegin = desc.worldBodyOffsets, jointBegin = desc.worldJointOffsets;
  if (bodyBegin.empty()) {
    if (numWorlds > 1) return;  // several worlds, but not where their bodies are
    bodyBegin = {0, numBodies};
    jointBegin = {0, numJoints};
  }
  const int worlds = int(bodyBegin.size()) - 1;
  std::vector<int> shapeBegin(size_t(worlds) + 1);
  for (int k = 0, shape = 0; k <= worlds; ++k) {  // the shapes come in ascending order of world
    while (shape < numShapes && desc.shapes[size_t(shape)].world < k) ++shape;
    shapeBegin[size_t(k)] = shape;
  }
  const auto worldOf = [&](int body) {
    return int(std::upper_bound(bodyBegin.begin(), bodyBegin.end(), body) - bodyBegin.begin()) - 1;
  };
  // Color c must list its bodies world by world; world k's slice starts at its first body of a
  // world k or later.
  std::vector<int> colorBegin;
  for (int c = 0; c < numColors; ++c) {
    const auto first = desc.bodiesByColor.begin() + colorOffsets[size_t(c)];
    const auto last = desc.bodiesByColor.begin() + colorOffsets[size_t(c) + 1];
    if (!std::is_sorted(first, last, [&](int a, int b) { return worldOf(a) < worldOf(b); })) return;
    for (int k = 0; k <= worlds; ++k) {
      colorBegin.push_back(
          int(std::partition_point(first, last, [&](int body) { return worldOf(body) < k; }) -
              desc.bodiesByColor.begin()));
      if (k > 0)
        largestWorldColor =
            std::max(largestWorldColor, colorBegin.end()[-1] - colorBegin.end()[-2]);
    }
  }
  if (colorBegin.empty()) colorBegin.push_back(0);
  worldColorOffsets = DeviceBuffer<int>(device, colorBegin);
  worldJointBegin = DeviceBuffer<int>(device, jointBegin);
  worldShapeBegin = DeviceBuffer<int>(device, shapeBegin);
  worldRanges = worlds;
}

RigidBodiesDevice RigidModel::bodiesView() const {
  return {com.in(),          mass.data(),        invMass.data(), inertia.in(),
          invInertia.data(), structuralK.data(), motion.data(),  motionSamples.data()};
}

RigidJointsDevice RigidModel::jointsView() const {
  return {jointType.data(),  jointParent.data(), jointChild.data(),   joints.in(),
          dahlEpsMax.data(), dahlTau.data(),     jointOffsets.data(), bodyJoints.data()};
}

RigidShapesView RigidModel::shapesView() const {
  return {numShapes,
          shapeBody.data(),
          shapeGeometry.data(),
          shapeLocalPose.data(),
          shapeMargin.data(),
          shapeGap.data(),
          shapeWorld.empty() ? nullptr : shapeWorld.data()};
}

RigidWorldsDevice RigidModel::worldsView() const {
  if (worldRanges == 0)
    throw Error(
        "this model's worlds are not ranges of bodies (a batch built without combineWorlds, "
        "or a color that does not list its bodies world by world): its iterations cannot run "
        "per world");
  return {worldColorOffsets.data(), worldJointBegin.data(), worldShapeBegin.data(), worldRanges,
          numColors};
}

RigidState::RigidState(const Device& device, const RigidDesc& desc) {
  std::vector<Transform> p;
  std::vector<Vec3> v, w;
  for (const BodyDesc& b : desc.bodies) {
    p.push_back(b.pose);
    v.push_back(b.linearVelocity);
    w.push_back(b.angularVelocity);
  }
  poses = DeviceBuffer<Transform>(device, p);
  linearVelocities = DeviceBuffer<Vec3>(device, v);
  angularVelocities = DeviceBuffer<Vec3>(device, w);
  substep = DeviceBuffer<long long>(device, size_t(1));
  startPoses = DeviceBuffer<Transform>(device, p);
  const size_t J = std::max<size_t>(size_t(desc.numJoints()), 1);
  jointLambda = WordMajorBuffer<RodMultipliers>(device, J);
  dahl = DeviceBuffer<DahlState>(device, J);
}

std::vector<BufferRange> RigidState::carried() {
  return {rangeOf(poses),
          rangeOf(linearVelocities),
          rangeOf(angularVelocities),
          rangeOf(substep),
          rangeOf(startPoses),
          rangeOf(jointLambda.words()),
          rangeOf(dahl),
          rangeOf(history.rows),
          rangeOf(history.count),
          rangeOf(history.shapeOffsets),
          rangeOf(history.midpoints),
          rangeOf(history.state)};
}

RigidScratch::RigidScratch(const Device& dev, const RigidModel& model, RigidState& state,
                           const RigidSolverOptions& options)
    : device(dev) {
  const size_t B = size_t(model.numBodies), J = size_t(model.numJoints);
  inertialPoses = WordMajorBuffer<Transform>(device, B);
  iteratePoses = DeviceBuffer<Transform>(device, B);
  jointTerms = WordMajorBuffer<RodStepTerms>(device, std::max<size_t>(J, 1));
  for (auto& b : jointLambdaIterates)
    b = WordMajorBuffer<RodMultipliers>(device, std::max<size_t>(J, 1));
  if (model.numShapes >= 2) {
    RigidContactDetectorSettings settings;
    settings.pairCapacity = options.pairCapacity;
    settings.pairReuseMargin = options.pairReuseMargin;
    settings.allPairsShapes = options.allPairsShapes;
    settings.allPairsRunsFromWorlds = options.allPairsRunsFromWorlds;
    settings.rowCapacity = std::max(256, options.contactCapacity * model.numShapes);
    detector = std::make_unique<RigidContactDetector>(
        device, model.shapesView(), RigidBodiesView{model.numBodies, model.invMass.data()},
        ShapePairFilterView{int(model.filterKeys.size()), model.filterKeys.data(),
                            model.filterStarts.data()},
        settings, state.poses.data());
    state.history.shapeOffsets = DeviceBuffer<int>(device, size_t(model.numShapes) + 1);
    state.history.count = DeviceBuffer<int>(device, size_t(1));
    resizeRows(state);
  }
  twoSharedLevels = options.oneLaneLevels == OneLaneLevels::Two ||
                    (options.oneLaneLevels == OneLaneLevels::Auto && !detector);
  if (device.backend() == Backend::Cuda) {
    // The deep levels of the widest one-lane launch, the largest color's bodies, with the fewer
    // shared levels of the two modes.
    int largestColor = 0;
    for (int c = 0; c < model.numColors; ++c)
      largestColor =
          std::max(largestColor, model.colorOffsets[size_t(c) + 1] - model.colorOffsets[size_t(c)]);
    const size_t words = oneLaneSpillWords(
        1 + model.maxJointsPerBody + SolveRigidBodyTile::kContactParts, largestColor,
        TreeWords<BodyBlock>::kWords, SolveRigidBodyTileTwoSharedLevels::kOneLaneSharedLevels);
    if (words > 0) {
      oneLaneSpill = DeviceBuffer<unsigned>(device, words);
      oneLaneSpill.zero();
    }
  }
  device.synchronize();
}

void RigidScratch::resizeRows(RigidState& state) {
  const size_t n = size_t(detector->rowCapacity());
  contactState = grown(device, contactState, n);
  contactEnds = DeviceBuffer<RigidContactEnd>(device, 2 * n);
  matchIndex = grown(device, matchIndex, n);
  matchCandidate = grown(device, matchCandidate, n);
  matchDistance = grown(device, matchDistance, n);
  midpoints = grown(device, midpoints, n);
  state.history.rows = grown(device, state.history.rows, n);
  state.history.midpoints = grown(device, state.history.midpoints, n);
  state.history.state = grown(device, state.history.state, n);
  claims = grown(device, claims, n);
  for (auto& b : contactLambdaIterates) b = DeviceBuffer<Vec3>(device, n);
  rowCapacity = int(n);
}

}  // namespace weft
