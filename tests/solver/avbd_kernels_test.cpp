// The fused launches of the rigid substep (kernels/avbd.cuh) against the plain algorithm they
// replace: solve_rigid_body_tile over the colors equals a host Gauss–Seidel over colors in which a
// body's contact partners of its own color are seen at their poses from before the color (the
// reference's separate accumulation launch) and everything else at its latest pose; and the
// contact warm start after a detection restores the matched row's multiplier as warmStartLambda
// says (normal part only for sticky contacts); the dual step folded into the next iteration's
// first color launch gives the very bits of the separate dual launch.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/avbd.cuh"
#include "kernels/runtime/launch.h"
#include "math_test_support.h"
#include "solver/cable_builder.h"
#include "solver/rigid_model.h"
#include "test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

constexpr float kH = 1.0f / 600.0f;

/// A straight cable of `segments` capsules of 0.1 m along +x, bending and twisting stiffness on.
RigidDesc chain(int segments) {
  CableBuilder b;
  std::vector<Vec3> points;
  for (int i = 0; i <= segments; ++i) points.push_back({0.1f * float(i), 0.0f, 1.0f});
  RodParams params;
  params.radius = 0.02f;
  params.stiffness.stretchStiffness = 1e4f;
  params.stiffness.bendStiffness = 5.0f;
  params.stiffness.bendDamping = 0.01f;
  b.addRod(points, {}, params);
  return b.finalize();
}

Transform perturbed(const Transform& t, Random& rng, double translation, double angle) {
  const Vec3d axis = rng.unit();
  const float a = float(rng.uniform(-angle, angle));
  const Quat dq{float(axis.x()) * std::sin(0.5f * a), float(axis.y()) * std::sin(0.5f * a),
                float(axis.z()) * std::sin(0.5f * a), std::cos(0.5f * a)};
  return {t.p + toFloat(rng.vec(-translation, translation)), normalize(dq * t.q)};
}

/// A penetrating row between bodies a and b at their start poses (skeleton points at the body
/// origins, normal from a to b), with a pushing multiplier.
RigidContact row(const std::vector<Transform>& start, int a, int b) {
  RigidContact c;
  c.shape0 = a;
  c.shape1 = b;
  c.body0 = a;
  c.body1 = b;
  const Vec3 d = start[size_t(b)].p - start[size_t(a)].p;
  c.normal = d * (1.0f / length(d));
  c.margin0 = c.margin1 = 0.6f * length(d);  // 20 % of the distance deep
  c.offset0 = rotateInverse(start[size_t(a)].q, c.normal * c.margin0);
  c.offset1 = rotateInverse(start[size_t(b)].q, c.normal * -c.margin1);
  return c;
}

/// Host arrays stored word-major, as the kernels read the joints' arrays
/// (kernels/runtime/word_major.h).
template <class T>
struct HostWordMajor {
  explicit HostWordMajor(const std::vector<T>& elements)
      : words(WordMajorBuffer<T>::toWords(elements)), count(elements.size()) {}
  explicit HostWordMajor(int n) : words(wordMajorFloats<T>(size_t(n))), count(size_t(n)) {}
  WordMajorIn<T> in() const { return {words.data()}; }
  WordMajorOut<T> out() { return {words.data()}; }
  std::vector<T> elements() const { return WordMajorBuffer<T>::fromWords(words, count); }

  std::vector<float> words;
  size_t count;
};

/// A chain of six capsules at perturbed poses, its joints' step terms with random multipliers, and
/// two penetrating contact rows, one between two bodies of one color (`sameB` and body 0, or
/// sameB −1 if there is none) and one between bodies 1 and 2, with the per-body row lists the
/// detector would give. Not copyable: `contacts` points into it.
struct ChainWithContacts {
  ChainWithContacts(const Device& cpu, Random& rng)
      : desc(chain(6)), model(cpu, desc), n(model.numBodies), J(model.numJoints), termWords(J) {
    color = model.bodyColor.download();
    const size_t N = size_t(n);
    start.resize(N);
    previous.resize(N);
    inertial.resize(N);
    for (int b = 0; b < n; ++b) {
      start[size_t(b)] = desc.bodies[size_t(b)].pose;
      previous[size_t(b)] = perturbed(start[size_t(b)], rng, 2e-3, 0.05);
      inertial[size_t(b)] = perturbed(start[size_t(b)], rng, 1e-3, 0.02);
    }
    inertialWords = HostWordMajor<Transform>(inertial);
    bodies = model.bodiesView();
    joints = model.jointsView();
    lambda.resize(size_t(J));
    for (int j = 0; j < J; ++j)
      lambda[size_t(j)] = {toFloat(rng.vec(-1, 1)), toFloat(rng.vec(-0.01, 0.01))};
    HostWordMajor<RodMultipliers> lambdaWords(lambda);
    for (int j = 0; j < J; ++j)
      StepJointC0LambdaRho{bodies, joints, start.data(), termWords.out(), lambdaWords.out(),
                           kH,     0.999f, 0.0f}(j);
    terms = termWords.elements();
    lambda = lambdaWords.elements();
    for (int b = 2; b < n && sameB < 0; ++b)
      if (color[size_t(b)] == color[0]) sameB = b;
    if (sameB < 0) return;
    rows = {row(start, 0, sameB), row(start, 1, 2)};
    states.resize(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      states[r].ke = 1e4f;
      states[r].mu = 0.5f;
      states[r].normalRho = 1e4f;
      states[r].tangentRho = 1e3f;
      states[r].lambda = rows[r].normal * 2.0f;
    }
    lists.assign(N, {});
    for (size_t r = 0; r < rows.size(); ++r) {
      lists[size_t(rows[r].body0)].push_back(int(r));
      lists[size_t(rows[r].body1)].push_back(int(r));
    }
    offsets = {0};
    for (const auto& l : lists) {
      entries.insert(entries.end(), l.begin(), l.end());
      offsets.push_back(int(entries.size()));
    }
    count = int(rows.size());
    contacts = {count, rows.data(), &count, offsets.data(), entries.data()};
    // The entries as the begin step gathers them: the rows' values and whether each partner's
    // color comes first.
    ends.resize(entries.size());
    const GatherContactEnds gather{contacts, ends.data(), model.bodyColor.data()};
    for (int b = 0; b < n; ++b) gather(b);
  }
  ChainWithContacts(const ChainWithContacts&) = delete;
  ChainWithContacts& operator=(const ChainWithContacts&) = delete;

  /// The body solve of color c (kernel type K) from `from` into `to`, with these states and
  /// multipliers; its contact runs read `ends`.
  template <class K>
  K solveKernel(int c, const Transform* from, Transform* to, const RigidContactState* states,
                WordMajorIn<RodMultipliers> lambdaIn, const FoldedDuals& duals) const {
    const int first = model.colorOffsets[size_t(c)];
    K kernel{bodies,
             joints,
             contacts,
             states,
             model.colorBodies.data() + first,
             IteratePoses{from, to, model.bodyColor.data(), c},
             inertialWords.in(),
             termWords.in(),
             lambdaIn,
             model.maxJointsPerBody,
             kH,
             1e-2f,
             0.0f,
             model.colorOffsets[size_t(c) + 1] - first,
             duals};
    kernel.contactEnds = ends.data();
    return kernel;
  }

  RigidDesc desc;
  RigidModel model;
  int n, J, sameB = -1, count = 0;
  std::vector<int> color;
  std::vector<Transform> start, previous, inertial;
  HostWordMajor<Transform> inertialWords = HostWordMajor<Transform>(0);  // what the kernels read
  RigidBodiesDevice bodies{};
  RigidJointsDevice joints{};
  HostWordMajor<RodStepTerms> termWords;  // what the kernels read
  std::vector<RodStepTerms> terms;
  std::vector<RodMultipliers> lambda;
  std::vector<RigidContact> rows;
  std::vector<RigidContactState> states;
  std::vector<std::vector<int>> lists;
  std::vector<int> offsets, entries;
  std::vector<RigidContactEnd> ends;  // the entries as the body solve reads them
  RigidContactsView contacts{};
};

/// Both vectors of poses bit for bit the same.
bool samePoses(const std::vector<Transform>& a, const std::vector<Transform>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
}

/// Each row's λ in `a` bit for bit `b`'s (the first `rows` of them).
void expectSameRowLambdas(const std::vector<RigidContactState>& a,
                          const std::vector<RigidContactState>& b, size_t rows) {
  for (size_t r = 0; r < rows; ++r)
    EXPECT_TRUE(bitIdentical(std::vector<Vec3>{a[r].lambda}, std::vector<Vec3>{b[r].lambda}))
        << "row " << r;
}

/// Each joint's multipliers in `a` bit for bit `b`'s.
void expectSameJointLambdas(const std::vector<RodMultipliers>& a,
                            const std::vector<RodMultipliers>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j)
    EXPECT_TRUE(
        bitIdentical(std::vector<Vec3>{a[j].lin, a[j].ang}, std::vector<Vec3>{b[j].lin, b[j].ang}))
        << "joint " << j;
}

TEST(AvbdKernels, TileSolveIsGaussSeidelOverColorsWithJacobiContactsInside) {
  auto cpu = openCpu();
  Random rng;
  TRACE_SEED(rng);
  ChainWithContacts s(*cpu, rng);
  ASSERT_GE(s.model.numColors, 2);
  ASSERT_GE(s.sameB, 0);
  ASSERT_NE(s.color[1], s.color[2]);

  // The fused tile launches, one per color.
  std::vector<Transform> updated(size_t(s.n));
  const HostWordMajor<RodMultipliers> lambdaWords(s.lambda);
  for (int c = 0; c < s.model.numColors; ++c) {
    const auto kernel = s.solveKernel<SolveRigidBodyTile>(
        c, s.previous.data(), updated.data(), s.states.data(), lambdaWords.in(), FoldedDuals{});
    launchTile(*cpu, kernel.items(), kernel);
  }

  // The plain algorithm: colors in order; a color sees the poses from before it.
  const std::vector<int> byColor = s.model.colorBodies.download();
  const std::vector<float> mass = s.model.mass.download();
  const std::vector<RodJoint> rods = s.model.joints.download();
  std::vector<Transform> latest = s.previous;
  for (int c = 0; c < s.model.numColors; ++c) {
    const std::vector<Transform> before = latest;
    const PoseArray poseOf{before.data()};
    for (int k = s.model.colorOffsets[size_t(c)]; k < s.model.colorOffsets[size_t(c) + 1]; ++k) {
      const int b = byColor[size_t(k)];
      if (!(mass[size_t(b)] > 0.0f)) continue;
      const Vec3 com = s.desc.bodies[size_t(b)].com;
      BodyBlock block = inertialBlock(before[size_t(b)], s.inertial[size_t(b)], com,
                                      mass[size_t(b)], s.desc.bodies[size_t(b)].inertia, kH);
      for (int r : s.lists[size_t(b)])
        block += rigidContactBlock(
            s.rows[size_t(r)].body1 == b ? 1 : 0, s.rows[size_t(r)], s.states[size_t(r)],
            contactFrames(s.rows[size_t(r)], s.bodies.com, poseOf), kH, 1e-2f, 0.0f);
      for (int e = s.desc.jointOffsets[size_t(b)]; e < s.desc.jointOffsets[size_t(b) + 1]; ++e) {
        const int j = s.desc.bodyJoints[size_t(e)];
        const JointDesc& jd = s.desc.joints[size_t(j)];
        block += rodJointBlock(jd.parent == b, jointEnd(poseOf, s.bodies, jd.parent),
                               jointEnd(poseOf, s.bodies, jd.child), rods[size_t(j)],
                               s.terms[size_t(j)], s.lambda[size_t(j)], kH);
      }
      Vec3 dx, dtheta;
      solveBodyBlock(block, dx, dtheta);
      latest[size_t(b)] = applyIncrement(before[size_t(b)], com, dx, dtheta);
    }
  }

  double moved = 0.0;
  for (int b = 0; b < s.n; ++b) {
    const Transform& got = updated[size_t(b)];
    const Transform& want = latest[size_t(b)];
    EXPECT_LT(length(got.p - want.p), 1e-6f) << "body " << b;
    const float qdot =
        got.q.x * want.q.x + got.q.y * want.q.y + got.q.z * want.q.z + got.q.w * want.q.w;
    EXPECT_GT(std::abs(qdot), 1.0f - 1e-6f) << "body " << b;
    moved = std::max(moved, double(length(want.p - s.previous[size_t(b)].p)));
  }
  EXPECT_GT(moved, 1e-4) << "the step must move the bodies for the comparison to mean anything";
}

// Two iterations with the dual step between them as its own launch (update_rigid_duals, in
// place) and with it folded into the second iteration's first color launch (FoldedDuals: extra
// items write the new λ to another buffer, the color's own bodies compute theirs): the same
// poses and the same multipliers, bit for bit (contacts of one color and of two colors,
// joints).
TEST(AvbdKernels, FoldedDualStepEqualsTheSeparateLaunchBitForBit) {
  auto cpu = openCpu();
  Random rng;
  TRACE_SEED(rng);
  ChainWithContacts s(*cpu, rng);
  ASSERT_GE(s.sameB, 0);
  const size_t N = size_t(s.n);
  const int J = s.J, slots = s.count;
  const std::vector<Transform>& first = s.previous;
  const std::vector<RodMultipliers> lambda0 = s.lambda;
  const std::vector<RigidContactState> states0 = s.states;

  // One iteration over the colors, from `from` into `to`; folding (duals.jointOut given), the
  // first color's launch takes the dual step and the later ones solve with what it wrote.
  auto iterate = [&](const std::vector<Transform>& from, std::vector<Transform>& to,
                     std::vector<RigidContactState>& states,
                     const std::vector<RodMultipliers>& lambda, FoldedDuals duals) {
    const bool folding = duals.jointOut.words != nullptr;
    const HostWordMajor<RodMultipliers> lambdaWords(lambda);
    for (int c = 0; c < s.model.numColors; ++c) {
      const auto solve = [&](auto type) {
        const auto kernel = s.solveKernel<decltype(type)>(c, from.data(), to.data(), states.data(),
                                                          lambdaWords.in(), duals);
        launchTile(*cpu, kernel.items(), kernel);
      };
      if (folding && c == 0) {
        solve(SolveRigidBodyTileFoldingDuals{});
        duals = FoldedDuals{duals.contactOut, nullptr, duals.jointOut, {}, 0, 0};
      } else {
        solve(SolveRigidBodyTile{});
      }
    }
  };
  auto dualLaunch = [&](const std::vector<Transform>& at, std::vector<RigidContactState>& states,
                        std::vector<RodMultipliers>& lambda, const Vec3* contactIn,
                        const HostWordMajor<RodMultipliers>* jointIn) {
    HostWordMajor<RodMultipliers> lambdaWords(lambda);
    UpdateRigidDuals k{};
    k.contacts = UpdateDualsBodyBodyContacts{s.bodies,      s.contacts, at.data(),
                                             states.data(), 0.0f,       contactIn};
    k.rowSlots = slots;
    k.joints = UpdateDualsJoint{s.joints, at.data(), s.termWords.in(), lambdaWords.out(),
                                jointIn ? jointIn->in() : WordMajorIn<RodMultipliers>{}};
    k.numJoints = J;
    k.rowStride = rowSlotStride(slots, J, 1);
    launch(*cpu, std::max(k.rowStride, J), StridedRowSlots<UpdateRigidDuals>{k});
    lambda = lambdaWords.elements();
  };

  // Separate: iteration 0, the dual step in place, iteration 1, the dual step in place.
  std::vector<RigidContactState> statesA = states0;
  std::vector<RodMultipliers> lambdaA = lambda0;
  std::vector<Transform> midA(N), endA(N);
  iterate(first, midA, statesA, lambdaA, FoldedDuals{});
  dualLaunch(midA, statesA, lambdaA, nullptr, nullptr);
  const std::vector<RigidContactState> statesAfterFirst = statesA;
  const std::vector<RodMultipliers> lambdaAfterFirst = lambdaA;
  iterate(midA, endA, statesA, lambdaA, FoldedDuals{});
  dualLaunch(endA, statesA, lambdaA, nullptr, nullptr);

  // Folded: iteration 1 takes the first dual step into other buffers; the last one reads them.
  std::vector<RigidContactState> statesB = states0;
  std::vector<RodMultipliers> lambdaB = lambda0;
  HostWordMajor<RodMultipliers> jointOutWords(J);
  std::vector<Vec3> contactOut(s.rows.size());
  std::vector<Transform> midB(N), endB(N);
  iterate(first, midB, statesB, lambdaB, FoldedDuals{});
  FoldedDuals duals;
  duals.contactOut = contactOut.data();
  duals.jointOut = jointOutWords.out();
  duals.rowSlots = slots;
  duals.numJoints = J;
  iterate(midB, endB, statesB, lambdaB, duals);
  const std::vector<RodMultipliers> jointOut = jointOutWords.elements();
  for (size_t r = 0; r < s.rows.size(); ++r)
    EXPECT_TRUE(bitIdentical(std::vector<Vec3>{contactOut[r]},
                             std::vector<Vec3>{statesAfterFirst[r].lambda}))
        << "row " << r;
  expectSameJointLambdas(jointOut, lambdaAfterFirst);
  dualLaunch(endB, statesB, lambdaB, contactOut.data(), &jointOutWords);
  EXPECT_TRUE(samePoses(midA, midB));
  EXPECT_TRUE(samePoses(endA, endB));
  expectSameRowLambdas(statesA, statesB, s.rows.size());
  expectSameJointLambdas(lambdaA, lambdaB);
  double changed = 0.0;
  for (int j = 0; j < J; ++j)
    changed += double(length(lambdaAfterFirst[size_t(j)].lin - lambda0[size_t(j)].lin));
  EXPECT_GT(changed, 0.0) << "the dual step must change the multipliers";
}

// Two iterations with the dual step between them as its own launch (update_rigid_duals, in
// place, rows and joints) and with the joints' taken in the second iteration's blocks
// (SolveRigidBodyTileJointDuals: each joint's end of the earlier color, marked ~j in
// RigidModel::bodyJointsTakingDuals, in place) and the rows' folded into its first color launch:
// the same poses and the same multipliers, bit for bit, and after the second iteration's blocks
// every joint carries the first dual step's λ.
TEST(AvbdKernels, JointDualStepInTheBlocksEqualsTheSeparateLaunchBitForBit) {
  auto cpu = openCpu();
  Random rng;
  TRACE_SEED(rng);
  ChainWithContacts s(*cpu, rng);
  ASSERT_GE(s.sameB, 0);
  ASSERT_TRUE(s.model.jointDualsCanBeInBlocks);
  const size_t N = size_t(s.n);
  const int J = s.J, slots = s.count;
  const std::vector<int> taking = s.model.bodyJointsTakingDuals.download();
  int marked = 0;
  for (const int e : taking) marked += e < 0 ? 1 : 0;
  EXPECT_EQ(marked, J) << "each joint has exactly one end that takes its dual step";

  auto dualLaunch = [&](const std::vector<Transform>& at, std::vector<RigidContactState>& states,
                        HostWordMajor<RodMultipliers>& lambda, const Vec3* contactIn) {
    UpdateRigidDuals k{};
    k.contacts = UpdateDualsBodyBodyContacts{s.bodies,      s.contacts, at.data(),
                                             states.data(), 0.0f,       contactIn};
    k.rowSlots = slots;
    k.joints = UpdateDualsJoint{s.joints, at.data(), s.termWords.in(), lambda.out(),
                                WordMajorIn<RodMultipliers>{}};
    k.numJoints = J;
    k.rowStride = rowSlotStride(slots, J, 1);
    launch(*cpu, std::max(k.rowStride, J), StridedRowSlots<UpdateRigidDuals>{k});
  };
  // One iteration over the colors with the kernels of the models that take the joints' dual
  // step in their blocks; `inBlocks`: they take it (in place), and the first color's launch
  // folds the rows' into `contactOut`, which the later colors read.
  auto iterate = [&](const std::vector<Transform>& from, std::vector<Transform>& to,
                     std::vector<RigidContactState>& states, HostWordMajor<RodMultipliers>& lambda,
                     bool inBlocks, std::vector<Vec3>* contactOut) {
    FoldedDuals duals;
    if (inBlocks) {
      duals.contactOut = contactOut->data();
      duals.rowSlots = slots;
    }
    for (int c = 0; c < s.model.numColors; ++c) {
      const auto solve = [&](auto type) {
        auto kernel = s.solveKernel<decltype(type)>(c, from.data(), to.data(), states.data(),
                                                    lambda.in(), duals);
        kernel.joints.bodyJoints = taking.data();
        kernel.lambdaOut = lambda.out();
        kernel.jointDualsInBlocks = inBlocks;
        launchTile(*cpu, kernel.items(), kernel);
      };
      if (inBlocks && c == 0) {
        solve(SolveRigidBodyTileFoldingDualsJointDuals{});
        duals = FoldedDuals{duals.contactOut, nullptr, {}, {}, 0, 0};
      } else {
        solve(SolveRigidBodyTileJointDuals{});
      }
    }
  };

  // Separate (the base kernels): iteration 0, the dual step, iteration 1, the dual step.
  std::vector<RigidContactState> statesA = s.states;
  HostWordMajor<RodMultipliers> lambdaA(s.lambda);
  std::vector<Transform> midA(N), endA(N);
  auto baseIteration = [&](const std::vector<Transform>& from, std::vector<Transform>& to) {
    for (int c = 0; c < s.model.numColors; ++c) {
      const auto kernel = s.solveKernel<SolveRigidBodyTile>(c, from.data(), to.data(),
                                                            statesA.data(), lambdaA.in(), {});
      launchTile(*cpu, kernel.items(), kernel);
    }
  };
  baseIteration(s.previous, midA);
  dualLaunch(midA, statesA, lambdaA, nullptr);
  const std::vector<RigidContactState> statesAfterFirst = statesA;
  const std::vector<RodMultipliers> lambdaAfterFirst = lambdaA.elements();
  baseIteration(midA, endA);
  dualLaunch(endA, statesA, lambdaA, nullptr);

  // In the blocks: iteration 0 takes none; iteration 1's blocks take the joints' first dual step
  // and its first color launch the rows'; the last dual launch reads the rows' from there.
  std::vector<RigidContactState> statesB = s.states;
  HostWordMajor<RodMultipliers> lambdaB(s.lambda);
  std::vector<Vec3> contactOut(s.rows.size());
  std::vector<Transform> midB(N), endB(N);
  iterate(s.previous, midB, statesB, lambdaB, false, nullptr);
  iterate(midB, endB, statesB, lambdaB, true, &contactOut);
  expectSameJointLambdas(lambdaB.elements(), lambdaAfterFirst);
  for (size_t r = 0; r < s.rows.size(); ++r)
    EXPECT_TRUE(bitIdentical(std::vector<Vec3>{contactOut[r]},
                             std::vector<Vec3>{statesAfterFirst[r].lambda}))
        << "row " << r;
  dualLaunch(endB, statesB, lambdaB, contactOut.data());
  EXPECT_TRUE(samePoses(midA, midB));
  EXPECT_TRUE(samePoses(endA, endB));
  expectSameRowLambdas(statesA, statesB, s.rows.size());
  expectSameJointLambdas(lambdaA.elements(), lambdaB.elements());
  double changed = 0.0;
  for (int j = 0; j < J; ++j)
    changed += double(length(lambdaAfterFirst[size_t(j)].lin - s.lambda[size_t(j)].lin));
  EXPECT_GT(changed, 0.0) << "the dual step must change the multipliers";
}

TEST(AvbdKernels, WarmStartAfterADetectionRestoresTheMatchedRowsMultiplier) {
  auto cpu = openCpu();
  const RigidDesc desc = chain(2);
  const RigidModel model(*cpu, desc);
  std::vector<Transform> start = {desc.bodies[0].pose, desc.bodies[1].pose};
  const RigidContact current = row(start, 0, 1);
  RigidContact old = current;  // the previous detection's row: its normal turned by ~11°
  old.normal = normalizeOrZero(current.normal + Vec3{0.0f, 0.2f, 0.0f});
  const std::vector<ContactMaterial> materials(size_t(model.numShapes),
                                               ContactMaterial{1e4f, 0.0f, 0.5f});
  const std::vector<RigidContact> rows = {current}, history = {old};
  RigidContactState previousState;
  previousState.lambda = old.normal * 3.0f + Vec3{0.0f, 0.0f, 0.8f};  // normal and tangent parts
  const std::vector<RigidContactState> historyStates = {previousState};
  const int count = 1;
  const std::vector<int> offsets(size_t(model.numBodies) + 1, 0), entries = {0};
  const RigidContactsView view{1, rows.data(), &count, offsets.data(), entries.data()};
  const float gamma = 0.99f;
  for (bool sticky : {true, false}) {
    for (int match : {0, -1}) {
      RigidContactState out;
      const int matchIndex = match;
      StepBodyBodyContactC0Lambda{
          model.bodiesView(), view,           materials.data(),     start.data(), &out, true,
          &matchIndex,        history.data(), historyStates.data(), !sticky,      kH,   gamma}(0);
      const Vec3 want = match < 0 ? Vec3{}
                                  : warmStartLambda(previousState.lambda, old.normal,
                                                    current.normal, 0.5f, !sticky) *
                                        gamma;
      EXPECT_LT(length(out.lambda - want), 1e-5f) << "sticky " << sticky << " match " << match;
      if (match >= 0 && sticky) {
        // Only the normal part: parallel to the new normal, λ·n_old long.
        EXPECT_NEAR(dot(out.lambda, current.normal), gamma * dot(previousState.lambda, old.normal),
                    1e-5f);
        EXPECT_LT(length(out.lambda - current.normal * dot(out.lambda, current.normal)), 1e-6f);
      }
      if (match >= 0 && !sticky)  // latest matching keeps a tangent part here (inside the cone)
        EXPECT_GT(length(out.lambda - current.normal * dot(out.lambda, current.normal)), 0.1f);
    }
  }
  // Not fresh (no detection this substep): the row's own λ, retained by γ.
  RigidContactState own;
  own.lambda = current.normal * 2.0f;
  StepBodyBodyContactC0Lambda{model.bodiesView(),
                              view,
                              materials.data(),
                              start.data(),
                              &own,
                              false,
                              nullptr,
                              nullptr,
                              nullptr,
                              false,
                              kH,
                              gamma}(0);
  EXPECT_LT(length(own.lambda - current.normal * (2.0f * gamma)), 1e-6f);
}

}  // namespace
}  // namespace weft
