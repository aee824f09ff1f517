// SolverAVBD / Simulation against analytic answers: free fall, a capsule pendulum's period,
// a cantilever cable's tip deflection (exact discrete statics and Euler–Bernoulli beam theory),
// the torque of a twisted cable, a capsule resting on the ground and one sliding to a stop, and
// the solver's own invariants: nothing lost when contact buffers start tiny, deterministic bits,
// CUDA == CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "kernels/rigid_contact.h"
#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch_table.h"
#include "solver/cable_builder.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

constexpr float kG = 9.81f;

/// A capsule body (axis = local z) at `pose`, with its shape; returns the body id.
int addCapsule(CableBuilder& b, const Transform& pose, float radius, float halfHeight,
               float density, const ContactMaterial& material = {}, float gap = 0.0f,
               bool kinematic = false) {
  BodyDesc body;
  body.pose = pose;
  const CapsuleMassProperties props = capsuleMassProperties(radius, halfHeight, density);
  body.mass = kinematic ? 0.0f : props.mass;
  body.inertia = props.inertia;
  body.kinematic = kinematic;
  body.motion.pose0 = pose;
  const int id = b.addBody(body);
  RigidShapeDesc shape;
  shape.body = id;
  shape.geometry.type = ShapeType::Capsule;
  shape.geometry.radius = radius;
  shape.geometry.halfHeight = halfHeight;
  shape.material = material;
  shape.gap = gap;
  b.addShape(shape);
  return id;
}

void addGround(CableBuilder& b, const ContactMaterial& material, float gap = 0.0f) {
  RigidShapeDesc ground;
  ground.body = -1;
  ground.geometry.type = ShapeType::Plane;
  ground.material = material;
  ground.gap = gap;
  b.addShape(ground);
}

Quat quatFromTo(const Vec3& from, const Vec3& to) {
  return shortestArc(from, to);
}

// A straight cable of n capsule segments of length l along +x at height z, joined by ROD joints.
RodIds addStraightCable(CableBuilder& b, int n, float l, float radius, float z,
                        const RodStiffness& k, float density = 1000.0f) {
  std::vector<Vec3> points;
  for (int i = 0; i <= n; ++i) points.push_back({float(i) * l, 0.0f, z});
  RodParams params;
  params.radius = radius;
  params.density = density;
  params.stiffness = k;
  params.gap = 0.0f;
  return b.addRod(points, {}, params);
}

TEST(SolverAvbd, FreeFallIsTheSemiImplicitEulerTrajectory) {
  auto cpu = test::openCpu();
  CableBuilder b;
  const int body = addCapsule(b, {{0.0f, 0.0f, 1.0f}, {}}, 0.05f, 0.1f, 1000.0f);
  const RigidDesc desc = b.finalize();
  RigidSolverOptions o;
  const int substeps = 10;
  const double h = 1.0 / 600.0;
  Simulation sim(*cpu, desc, o, h * substeps, substeps);
  for (int f = 0; f < 6; ++f) sim.advanceFrame();
  // v_k = −g·k·h, z_k = z_0 − g·h²·k(k+1)/2.
  const int k = 6 * substeps;
  const Vec3 p = sim.rigid().poses()[size_t(body)].p;
  EXPECT_NEAR(p.z, 1.0 - kG * h * h * k * (k + 1) / 2.0, 2e-5);
  // The velocity is the BDF1 difference of float positions near 1 m: each rounding of x is worth
  // ulp(1 m)/h ≈ 7e-5 m/s.
  EXPECT_NEAR(sim.rigid().linearVelocities()[size_t(body)].z, -kG * h * k, 1e-3);
  EXPECT_EQ(sim.rigid().substepCounter(), k);
}

// The analytic tests run plain (ρ = 0, the reference's sweeps) and with the Chebyshev acceleration
// the cable scenes use (kSceneRho): the acceleration must not change the physics they check.
constexpr float kSceneRho = 0.7f;

void expectPhysicalPendulumPeriod(float rho) {
  SCOPED_TRACE("chebyshevRho " + std::to_string(rho));
  auto cpu = test::openCpu();
  // A capsule hanging from a ball joint at its upper end, released at θ0 = 0.1 rad.
  const float radius = 0.02f, halfHeight = 0.2f, theta0 = 0.1f;
  const Vec3 dir{std::sin(theta0), 0.0f, -std::cos(theta0)};  // pivot → far end
  CableBuilder b;
  const int body =
      addCapsule(b, {dir * halfHeight, quatFromTo({0, 0, 1}, dir)}, radius, halfHeight, 1000.0f);
  JointDesc ball;
  ball.type = JointType::Ball;
  ball.parent = -1;
  ball.child = body;
  ball.childAnchor.p = {0.0f, 0.0f, -halfHeight};
  b.addJoint(ball);
  const RigidDesc desc = b.finalize();
  const float m = desc.bodies[0].mass;
  const float iPivot = desc.bodies[0].inertia(0, 0) + m * halfHeight * halfHeight;
  const double expected = 2.0 * std::numbers::pi * std::sqrt(iPivot / (m * kG * halfHeight)) *
                          (1.0 + theta0 * theta0 / 16.0);

  const double h = 1.0 / 600.0;
  RigidSolverOptions o;
  o.chebyshevRho = rho;
  Simulation sim(*cpu, desc, o, h, 1);
  // Times at which the COM crosses x = 0 (linear interpolation between substeps).
  std::vector<double> crossings;
  float previousX = sim.rigid().poses()[0].p.x;
  for (int k = 1; k <= int(3.5 * expected / h); ++k) {
    sim.advanceFrame();
    const float x = sim.rigid().poses()[0].p.x;
    if ((previousX > 0.0f) != (x > 0.0f))
      crossings.push_back((k - 1 + previousX / (previousX - x)) * h);
    previousX = x;
  }
  ASSERT_GE(crossings.size(), 6u);
  const double period = (crossings[5] - crossings[1]) / 2.0;
  EXPECT_NEAR(period, expected, 0.01 * expected) << "expected " << expected;
  // The joint holds: the upper end stays at the pivot.
  const Transform pose = sim.rigid().poses()[0];
  EXPECT_LT(length(transformPoint(pose, {0.0f, 0.0f, -halfHeight})), 1e-3f);
}

TEST(SolverAvbd, CapsulePendulumHasThePhysicalPendulumPeriod) {
  expectPhysicalPendulumPeriod(0.0f);
  expectPhysicalPendulumPeriod(kSceneRho);
}

// Block Gauss–Seidel over bodies converges slowly when the stretch/shear rows are much stiffer
// than the bending they must let through (each body sees its neighbours' anchors as fixed), so
// statics need many iterations: moderate shear stiffness and 50 plain iterations reach them in
// 2.5 s, 20 accelerated ones too (docs/CONVERGENCE.md: cable_cantilever, the same cable, against
// iterations and ρ).
void expectCantileverStatics(int iterations, float rho) {
  SCOPED_TRACE(std::to_string(iterations) + " iterations, chebyshevRho " + std::to_string(rho));
  auto cpu = test::openCpu();
  const int n = 20;
  const float l = 0.05f, radius = 0.005f, kb = 160.0f, ks = 1e4f;
  RodStiffness k;
  k.stretchStiffness = ks;
  k.bendStiffness = kb;
  k.bendDamping = 0.5f;
  CableBuilder b;
  const RodIds rod = addStraightCable(b, n, l, radius, 1.0f, k);
  RigidDesc desc = b.finalize();
  BodyDesc& clamp = desc.bodies[size_t(rod.bodies[0])];
  clamp.kinematic = true;
  clamp.mass = 0.0f;
  clamp.motion.pose0 = clamp.pose;
  const float m = desc.bodies[1].mass;

  RigidSolverOptions o;
  o.iterations = iterations;
  o.chebyshevRho = rho;
  Simulation sim(*cpu, desc, o, 1.0 / 60.0, 10);
  for (int f = 0; f < 150; ++f) sim.advanceFrame();
  const std::vector<Transform> poses = sim.rigid().poses();
  for (const Vec3& v : sim.rigid().linearVelocities()) ASSERT_LT(length(v), 5e-3f) << "not settled";
  const Vec3 tip = transformPoint(poses[size_t(n - 1)], {0.0f, 0.0f, l / 2});
  const double deflection = 1.0 - tip.z;

  // Discrete statics (small angles): joint i sits at x_i = i·l and carries the moment of the
  // segments beyond it, M_i = Σ_{j≥i} m g (x_j + l/2 − x_i), and their weight V_i = Σ_{j≥i} m g.
  // It bends by θ_i = M_i/k_b, which lowers the tip (at n·l) by θ_i·(n·l − x_i), and shears by
  // V_i/k_s.
  double bending = 0.0, shear = 0.0;
  for (int i = 1; i < n; ++i) {
    double moment = 0.0;
    for (int j = i; j < n; ++j) moment += m * kG * ((j + 0.5) * l - i * l);
    bending += moment / kb * (n * l - i * l);
    shear += (n - i) * m * kG / ks;
  }
  EXPECT_NEAR(deflection, bending + shear, 0.03 * (bending + shear));
  // Euler–Bernoulli: δ = wL⁴/(8EI), w = m g/l, L = (n − 1)·l from the clamp, EI = k_b·l. The
  // 19-hinge chain itself differs from the continuum by O(1/n) (11% here, the gap between
  // `bending` and `beam`), hence the wider band.
  const double L = (n - 1) * l, w = m * kG / l, EI = kb * l;
  const double beam = w * L * L * L * L / (8.0 * EI);
  EXPECT_NEAR(deflection - shear, beam, 0.15 * beam) << "discrete " << bending;
  EXPECT_LT(deflection, 0.05 * L) << "the load should be small";
}

TEST(SolverAvbd, CantileverTipDeflectionMatchesDiscreteStaticsAndBeamTheory) {
  expectCantileverStatics(50, 0.0f);
  expectCantileverStatics(20, kSceneRho);
}

void expectTwistTorque(float rho) {
  SCOPED_TRACE("chebyshevRho " + std::to_string(rho));
  auto cpu = test::openCpu();
  const int n = 8;
  const float l = 0.1f, kt = 5.0f, phi = 0.6f, speed = 0.5f;
  RodStiffness k;
  k.stretchStiffness = 1e6f;
  k.bendStiffness = 50.0f;
  k.twistStiffness = kt;
  k.twistDamping = 0.05f;
  CableBuilder b;
  const RodIds rod = addStraightCable(b, n, l, 0.01f, 1.0f, k);
  RigidDesc desc = b.finalize();
  for (int end : {rod.bodies.front(), rod.bodies.back()}) {
    BodyDesc& body = desc.bodies[size_t(end)];
    body.kinematic = true;
    body.mass = 0.0f;
    body.motion.pose0 = body.pose;
  }
  // The last segment turns about the cable's axis (+x) by φ, then holds.
  ShapeMotion& twist = desc.bodies[size_t(rod.bodies.back())].motion;
  twist.type = MotionType::Linear;
  twist.angularVelocity = {speed, 0.0f, 0.0f};
  twist.stopTime = phi / speed;

  RigidSolverOptions o;
  o.gravity = {};
  o.iterations = 10;
  o.chebyshevRho = rho;
  Simulation sim(*cpu, desc, o, 1.0 / 60.0, 10);
  for (int f = 0; f < 180; ++f) sim.advanceFrame();
  // At rest every one of the n − 1 joints twists by φ/(n − 1) and carries k_t·φ/(n − 1); the
  // multiplier of the twist row converges to exactly that material torque.
  const std::vector<RodMultipliers> lambda = sim.rigid().state().jointLambda.download();
  const std::vector<Transform> poses = sim.rigid().poses();
  for (int j = 0; j < n - 1; ++j) {
    EXPECT_NEAR(lambda[size_t(j)].ang.z, kt * phi / (n - 1), 0.02 * kt * phi / (n - 1))
        << "joint " << j;
    const RodStrain s = rodStrain(poses[size_t(j)], poses[size_t(j + 1)],
                                  sim.rigid().model().joints.download()[size_t(j)]);
    EXPECT_NEAR(s.kappa.z, phi / (n - 1), 2e-3f) << "joint " << j;
  }
}

TEST(SolverAvbd, TwistedCableCarriesTheTorqueOfItsTwistStiffness) {
  expectTwistTorque(0.0f);
  expectTwistTorque(kSceneRho);
}

TEST(SolverAvbd, CapsuleRestsOnTheGroundAtTheMaterialDepth) {
  auto cpu = test::openCpu();
  const float radius = 0.02f, halfHeight = 0.1f, ke = 1e4f;
  const ContactMaterial material{ke, 0.0f, 0.5f};
  CableBuilder b;
  addCapsule(b, {{0.0f, 0.0f, radius + 0.002f}, quatFromTo({0, 0, 1}, {1, 0, 0})}, radius,
             halfHeight, 1000.0f, material, 0.01f);
  addGround(b, material, 0.01f);
  const RigidDesc desc = b.finalize();
  const float m = desc.bodies[0].mass;
  Simulation sim(*cpu, desc, RigidSolverOptions{}, 1.0 / 60.0, 10);
  for (int f = 0; f < 90; ++f) sim.advanceFrame();
  // Two rows (the two end caps) carry m·g/2 each at the fixed point λ = ke·C.
  const float depth = radius - sim.rigid().poses()[0].p.z;
  EXPECT_NEAR(depth, m * kG / (2.0f * ke), 0.03f * m * kG / (2.0f * ke));
  EXPECT_LT(length(sim.rigid().linearVelocities()[0]), 1e-3f);
  EXPECT_EQ(sim.rigid().contactReport().lastFrameRows, 2);
}

TEST(SolverAvbd, SlidingCapsuleStopsAfterTheCoulombDistance) {
  auto cpu = test::openCpu();
  const float radius = 0.02f, halfHeight = 0.1f, mu = 0.4f, v0 = 1.0f;
  const ContactMaterial material{1e5f, 0.0f, mu};
  CableBuilder b;
  const float m0 = capsuleMassProperties(radius, halfHeight, 1000.0f).mass;
  // Start resting at the material depth so that no bounce disturbs the slide.
  const float z = radius - m0 * kG / (2.0f * 1e5f);
  const int body = addCapsule(b, {{0.0f, 0.0f, z}, quatFromTo({0, 0, 1}, {1, 0, 0})}, radius,
                              halfHeight, 1000.0f, material, 0.01f);
  addGround(b, material, 0.01f);
  RigidDesc desc = b.finalize();
  desc.bodies[size_t(body)].linearVelocity = {v0, 0.0f, 0.0f};
  Simulation sim(*cpu, desc, RigidSolverOptions{}, 1.0 / 60.0, 10);
  for (int f = 0; f < 30; ++f) sim.advanceFrame();
  // Both ends slide with the same friction: x_stop = v0²/(2 μ g).
  const double expected = v0 * v0 / (2.0 * mu * kG);
  EXPECT_NEAR(sim.rigid().poses()[0].p.x, expected, 0.03 * expected);
  EXPECT_LT(length(sim.rigid().linearVelocities()[0]), 1e-3f);
}

// A small pile: three layers of four short cables dropped crosswise onto the ground.
RigidDesc smallPile() {
  CableBuilder b;
  RodParams params;
  params.radius = 0.012f;
  params.material = {1e5f, 0.0f, 1.0f};
  params.gap = 0.0f;
  params.stiffness.stretchStiffness = 5e5f;
  params.stiffness.bendStiffness = 1e2f;
  params.stiffness.bendDamping = 20.0f;
  for (int layer = 0; layer < 3; ++layer)
    for (int lane = 0; lane < 4; ++lane) {
      std::vector<Vec3> points;
      const float offset = (float(lane) - 1.5f) * 0.1f;
      for (int i = 0; i <= 12; ++i) {
        const float s = -0.3f + 0.05f * float(i);
        const float wave = 0.02f * std::sin(float(i));
        points.push_back(layer % 2 == 0 ? Vec3{s, offset + wave, 0.1f + 0.036f * float(layer)}
                                        : Vec3{offset + wave, s, 0.1f + 0.036f * float(layer)});
      }
      b.addRod(points, {}, params);
    }
  addGround(b, {1e5f, 0.0f, 1.0f});
  return b.finalize();
}

std::vector<Transform> runPile(const Device& device, const RigidSolverOptions& o, int frames,
                               bool graphs = true, RigidPart::ContactReport* report = nullptr,
                               std::vector<std::string>* regrowths = nullptr) {
  Simulation sim(device, smallPile(), o, 1.0 / 60.0, 10, graphs);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  if (report) *report = sim.rigid().contactReport();
  if (regrowths) *regrowths = sim.regrowths();
  return sim.rigid().poses();
}

bool bitIdentical(const std::vector<Transform>& a, const std::vector<Transform>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
}

RigidSolverOptions pileOptions() {
  RigidSolverOptions o;
  o.contactHistory = true;
  o.stickyContacts = true;
  return o;
}

TEST(SolverAvbd, TinyContactBuffersGrowAndLoseNothing) {
  auto cpu = test::openCpu();
  RigidSolverOptions tiny = pileOptions();
  tiny.contactCapacity = 1;
  tiny.pairCapacity = 1;
  RigidPart::ContactReport report;
  std::vector<std::string> regrowths;
  const auto grown = runPile(*cpu, tiny, 12, true, &report, &regrowths);
  EXPECT_FALSE(regrowths.empty());
  EXPECT_GE(report.rowCapacity, report.largestRows);
  EXPECT_GT(report.largestRows, 0);
  RigidSolverOptions large = pileOptions();
  large.contactCapacity = 64;
  large.pairCapacity = 64;
  EXPECT_TRUE(bitIdentical(grown, runPile(*cpu, large, 12)));
}

TEST(SolverAvbd, PileSettlesOnTheGroundWithoutInterpenetration) {
  auto cpu = test::openCpu();
  CableBuilder unused;
  const RigidDesc desc = smallPile();
  Simulation sim(*cpu, desc, pileOptions(), 1.0 / 60.0, 10);
  for (int f = 0; f < 40; ++f) sim.advanceFrame();
  const std::vector<Transform> poses = sim.rigid().poses();
  for (const Transform& p : poses) {
    EXPECT_GT(p.p.z, 0.012f * 0.5f);
    EXPECT_LT(p.p.z, 0.012f * 2.0f * 3.0f + 0.02f);
  }
  const CapsuleOverlap overlap = deepestCapsuleOverlap(desc, poses, 0.25f);
  EXPECT_EQ(overlap.violations, 0) << "depth " << overlap.depth;
  const JointGap gap = largestJointGap(desc, poses);
  EXPECT_LT(gap.gap, 0.02f * gap.referenceLength);
}

TEST(SolverAvbd, KeptPartnerListsChangeNothingAndSkipMostBroadPhases) {
  auto cpu = test::openCpu();
  RigidSolverOptions everyTime = pileOptions(), kept = pileOptions();
  everyTime.pairReuseMargin = 0.0f;
  kept.pairReuseMargin = 0.007f;
  everyTime.allPairsShapes = kept.allPairsShapes = 0;  // the shape tree (lists kept with it only)
  RigidPart::ContactReport a, b;
  const auto fresh = runPile(*cpu, everyTime, 12, true, &a);
  EXPECT_TRUE(bitIdentical(fresh, runPile(*cpu, kept, 12, true, &b)));
  EXPECT_EQ(a.detections, 12 * 10);  // the pile detects every substep
  EXPECT_EQ(a.pairListBuilds, a.detections);
  EXPECT_EQ(b.detections, a.detections);
  EXPECT_GE(b.pairListBuilds, 12);  // at least the first detection of every frame
  EXPECT_LT(b.pairListBuilds, b.detections / 2);
}

// The dual step between iterations folded into the next iteration's first color launch gives the
// bits of its own launch, on the CPU. (On CUDA it does not, yet: a pile of 8 frames differs in the
// last bits, H100, 2026-11-25; docs/DESIGN_NOTES.md.)
TEST(SolverAvbd, FoldedDualStepsChangeNothing) {
  auto cpu = test::openCpu();
  RigidSolverOptions folded = pileOptions(), separate = pileOptions();
  folded.foldDualsUpToBodies = 1 << 30;
  separate.foldDualsUpToBodies = 0;
  EXPECT_TRUE(bitIdentical(runPile(*cpu, folded, 8), runPile(*cpu, separate, 8)));
}

// On CUDA too: the dual step is one compiled function that both launches call (WEFT_NOINLINE), so
// no kernel contracts it differently. Without that, the two differ in the last bits here.
TEST(SolverAvbd, CudaFoldedDualStepsChangeNothing) {
  WEFT_REQUIRE_CUDA(gpu);
  RigidSolverOptions folded = pileOptions(), separate = pileOptions();
  folded.foldDualsUpToBodies = 1 << 30;
  separate.foldDualsUpToBodies = 0;
  EXPECT_TRUE(bitIdentical(runPile(*gpu, folded, 8), runPile(*gpu, separate, 8)));
}

// The step's beginning for the bodies and joints beside the detection (small models: on the
// device's side stream, SolverAVBD::beginStep) gives the bits of the one launch after it: the
// two read and write disjoint data (the first iterate goes to the scratch's pose buffer, the
// detection and its matching read the state's). On the CPU the side's launch runs first.
TEST(SolverAvbd, BeginBesideTheDetectionChangesNothing) {
  auto cpu = test::openCpu();
  RigidSolverOptions beside = pileOptions(), after = pileOptions();
  beside.beginBesideDetectionUpToBodies = 1 << 30;
  after.beginBesideDetectionUpToBodies = 0;
  EXPECT_TRUE(bitIdentical(runPile(*cpu, beside, 8), runPile(*cpu, after, 8)));
  RigidSolverOptions bad;
  bad.beginBesideDetectionUpToBodies = -1;
  EXPECT_THROW(bad.validate(), Error);
}

TEST(SolverAvbd, CudaBeginBesideTheDetectionChangesNothing) {
  WEFT_REQUIRE_CUDA(gpu);
  RigidSolverOptions beside = pileOptions(), after = pileOptions();
  beside.beginBesideDetectionUpToBodies = 1 << 30;
  after.beginBesideDetectionUpToBodies = 0;
  const auto reference = runPile(*gpu, after, 8);
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, beside, 8)));         // one graph a frame
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, beside, 8, false)));  // launches as issued
}

// The convergence record: each iteration's largest body step is what the poses moved by (with
// one iteration: the largest distance of a centre of mass from the inertial prediction, the first
// iterate), recording changes nothing, and on a hanging chain the steps shrink from sweep to sweep.
RigidDesc hangingChain() {
  CableBuilder b;
  RodStiffness k;
  k.stretchStiffness = 1e4f;
  k.bendStiffness = 5.0f;
  const RodIds rod = addStraightCable(b, 12, 0.05f, 0.005f, 1.0f, k);
  RigidDesc desc = b.finalize();
  BodyDesc& top = desc.bodies[size_t(rod.bodies[0])];
  top.kinematic = true;
  top.mass = 0.0f;
  top.motion.pose0 = top.pose;
  return desc;
}

// Which end of each joint takes its dual step in its block (RigidModel::bodyJointsTakingDuals):
// exactly one, the one of the earlier color, or the only dynamic end where the other is
// kinematic; a joint between two kinematic bodies has none, so such a model never takes the
// joints' duals in its blocks.
TEST(SolverAvbd, EachJointHasOneEndThatTakesItsDualStep) {
  auto cpu = test::openCpu();
  RigidDesc desc = hangingChain();  // body 0 kinematic
  {
    const RigidModel model(*cpu, desc);
    EXPECT_TRUE(model.jointDualsCanBeInBlocks);
    const std::vector<int> taking = model.bodyJointsTakingDuals.download();
    const std::vector<int> color = model.bodyColor.download();
    std::vector<int> takers(size_t(model.numJoints), 0);
    for (int b = 0; b < model.numBodies; ++b)
      for (int e = desc.jointOffsets[size_t(b)]; e < desc.jointOffsets[size_t(b) + 1]; ++e) {
        const int j = desc.bodyJoints[size_t(e)];
        const int entry = taking[size_t(e)];
        EXPECT_EQ(entry < 0 ? ~entry : entry, j);
        if (entry >= 0) continue;
        ++takers[size_t(j)];
        const int other = desc.joints[size_t(j)].parent == b ? desc.joints[size_t(j)].child
                                                             : desc.joints[size_t(j)].parent;
        EXPECT_GT(desc.bodies[size_t(b)].mass, 0.0f) << "a kinematic body takes joint " << j;
        if (other >= 0 && desc.bodies[size_t(other)].mass > 0.0f)
          EXPECT_LT(color[size_t(b)], color[size_t(other)]) << "joint " << j;
      }
    for (int j = 0; j < model.numJoints; ++j) EXPECT_EQ(takers[size_t(j)], 1) << "joint " << j;
  }
  BodyDesc& second = desc.bodies[1];
  second.kinematic = true;
  second.mass = 0.0f;
  second.motion.pose0 = second.pose;
  EXPECT_FALSE(RigidModel(*cpu, desc).jointDualsCanBeInBlocks);
}

TEST(SolverAvbd, ConvergenceRecordIsTheLargestBodyStepOfEachIteration) {
  auto cpu = test::openCpu();
  RigidSolverOptions o;
  o.iterations = 1;
  o.recordConvergence = true;
  const RigidDesc desc = hangingChain();
  Simulation sim(*cpu, desc, o, 1.0 / 60.0, 1);
  for (int f = 0; f < 4; ++f) sim.advanceFrame();
  // One substep of one iteration: each body moves once, from the inertial prediction.
  const std::vector<Transform> predicted = sim.rigid().scratch().inertialPoses.download();
  const std::vector<Transform> after = sim.rigid().poses();
  float largest = 0.0f;
  for (size_t b = 0; b < after.size(); ++b) {
    const Vec3 com = desc.bodies[b].com;
    largest = std::max(largest,
                       length(transformPoint(after[b], com) - transformPoint(predicted[b], com)));
  }
  const RigidPart::ConvergenceReport& r = sim.rigid().convergenceReport();
  ASSERT_EQ(r.translation.size(), 4u);  // 4 frames x 1 substep x 1 iteration
  EXPECT_NEAR(r.translation.back(), largest, 1e-6f + 1e-4f * largest);
  EXPECT_GT(r.rotation.back(), 0.0f);

  // Recording changes nothing.
  RigidSolverOptions plain = o, recorded = o;
  plain.iterations = recorded.iterations = 8;
  plain.recordConvergence = false;
  Simulation a(*cpu, hangingChain(), plain, 1.0 / 60.0, 4);
  Simulation c(*cpu, hangingChain(), recorded, 1.0 / 60.0, 4);
  for (int f = 0; f < 5; ++f) {
    a.advanceFrame();
    c.advanceFrame();
  }
  EXPECT_TRUE(bitIdentical(a.rigid().poses(), c.rigid().poses()));
  EXPECT_TRUE(a.rigid().convergenceReport().translation.empty());
  // 5 frames x 4 substeps x 8 iterations; the later sweeps move the chain less.
  const std::vector<float>& t = c.rigid().convergenceReport().translation;
  ASSERT_EQ(t.size(), 160u);
  int shrinking = 0;
  for (size_t s = 0; s < 20; ++s) shrinking += t[s * 8 + 7] < 0.5f * t[s * 8];
  EXPECT_GE(shrinking, 18) << "the last sweep should move far less than the first";
}

// Chebyshev acceleration (RigidSolverOptions::chebyshevRho): five accelerated sweeps leave the
// hanging chain closer to its many-sweep result than five plain ones, and an invalid radius is
// refused.
TEST(SolverAvbd, ChebyshevAccelerationConvergesFurtherInTheSameSweeps) {
  auto cpu = test::openCpu();
  const auto tipAfter = [&](int iterations, float rho) {
    RigidSolverOptions o;
    o.iterations = iterations;
    o.chebyshevRho = rho;
    Simulation sim(*cpu, hangingChain(), o, 1.0 / 60.0, 4);
    for (int f = 0; f < 30; ++f) sim.advanceFrame();
    return sim.rigid().poses().back().p;
  };
  const Vec3 converged = tipAfter(200, 0.0f);
  const float plain = length(tipAfter(5, 0.0f) - converged);
  const float accelerated = length(tipAfter(5, 0.6f) - converged);
  EXPECT_GT(plain, 1e-4f) << "five plain sweeps should not have converged";
  EXPECT_LT(accelerated, 0.7f * plain) << "plain " << plain << ", accelerated " << accelerated;
  RigidSolverOptions bad;
  bad.chebyshevRho = 1.0f;
  EXPECT_THROW(bad.validate(), Error);
  bad.chebyshevRho = -0.1f;
  EXPECT_THROW(bad.validate(), Error);
}

TEST(SolverAvbd, CpuRunsAreDeterministic) {
  auto cpu = test::openCpu();
  EXPECT_TRUE(bitIdentical(runPile(*cpu, pileOptions(), 8), runPile(*cpu, pileOptions(), 8)));
}

TEST(SolverAvbd, CudaGraphReplayEqualsDirectLaunchesAndRunsAreBitIdentical) {
  WEFT_REQUIRE_CUDA(gpu);
  const auto reference = runPile(*gpu, pileOptions(), 10);
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, pileOptions(), 10))) << "run to run";
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, pileOptions(), 10, false))) << "no graph";
}

// How many levels of their tree the body solve's one-lane tiles keep in shared memory
// (OneLaneLevels; the others in global memory) changes no bit, against tiles of 32 lanes, which
// keep no levels; and the pile's bodies, with many contact rows, do reach the deep levels.
TEST(SolverAvbd, CudaOneLaneSharedLevelsChangeNoBit) {
  WEFT_REQUIRE_CUDA(gpu);
  LaunchPolicy lanes32;
  lanes32.setOverride(KernelId::solve_rigid_body_tile, 32);
  gpu->setLaunchPolicy(lanes32);
  const std::vector<Transform> reference = runPile(*gpu, pileOptions(), 16);
  LaunchPolicy oneLane;
  oneLane.setOverride(KernelId::solve_rigid_body_tile, 1);
  gpu->setLaunchPolicy(oneLane);
  RigidSolverOptions three = pileOptions(), two = pileOptions(), automatic = pileOptions();
  three.oneLaneLevels = OneLaneLevels::Three;
  two.oneLaneLevels = OneLaneLevels::Two;
  Simulation sim(*gpu, smallPile(), two, 1.0 / 60.0, 10);
  for (int f = 0; f < 16; ++f) sim.advanceFrame();
  const std::vector<unsigned> spill = sim.rigid().scratch().oneLaneSpill.download();
  EXPECT_TRUE(std::any_of(spill.begin(), spill.end(), [](unsigned w) { return w != 0; }))
      << "no body reached a deep level: the test does not test them";
  EXPECT_GT(sim.rigid().contactReport().largestRows, 0);
  EXPECT_TRUE(bitIdentical(reference, sim.rigid().poses())) << "two shared levels";
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, three, 16))) << "three shared levels";
  EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, automatic, 16))) << "auto";
  gpu->setLaunchPolicy(LaunchPolicy{});
}

// OneLaneLevels::Auto: two shared levels from the frame after one with few contact rows (none,
// on a hanging chain), three again once the rows are many (the pile on the ground); each switch
// captures the graphs again. Not in models that take the joints' dual step in their blocks
// (jointDualsInBlocksUpToWorldColor: the chain, by default), whose launches keep three levels.
TEST(SolverAvbd, AutoKeepsTwoSharedLevelsWhileContactsAreFew) {
  auto cpu = test::openCpu();
  RigidSolverOptions separateDuals;
  separateDuals.jointDualsInBlocksUpToWorldColor = 0;
  Simulation chain(*cpu, hangingChain(), separateDuals, 1.0 / 60.0, 10);
  for (int f = 0; f < 3; ++f) chain.advanceFrame();
  EXPECT_EQ(chain.rigid().contactReport().largestRows, 0);
  EXPECT_TRUE(chain.rigid().scratch().twoSharedLevels);
  EXPECT_GE(chain.rigid().contactReport().framesTwoSharedLevels, 2);
  Simulation inBlocks(*cpu, hangingChain(), RigidSolverOptions{}, 1.0 / 60.0, 10);
  EXPECT_TRUE(inBlocks.rigid().solver().jointDualsInBlocks());
  for (int f = 0; f < 3; ++f) inBlocks.advanceFrame();
  EXPECT_FALSE(inBlocks.rigid().scratch().twoSharedLevels);
  EXPECT_EQ(inBlocks.rigid().contactReport().framesTwoSharedLevels, 0);

  Simulation pile(*cpu, smallPile(), pileOptions(), 1.0 / 60.0, 10);
  const int bodies = pile.rigid().model().numBodies;
  EXPECT_FALSE(pile.rigid().scratch().twoSharedLevels) << "unknown contacts: three at first";
  pile.advanceFrame();  // falling: no rows yet
  EXPECT_EQ(pile.rigid().contactReport().lastFrameRows, 0);
  EXPECT_TRUE(pile.rigid().scratch().twoSharedLevels);
  for (int f = 1; f < 30; ++f) pile.advanceFrame();  // on the ground
  EXPECT_GT(pile.rigid().contactReport().lastFrameRows * 4, bodies);
  EXPECT_FALSE(pile.rigid().scratch().twoSharedLevels);
  const long long framesTwo = pile.rigid().contactReport().framesTwoSharedLevels;
  EXPECT_GT(framesTwo, 0);
  EXPECT_LT(framesTwo, 30);
}

// The body solve reads contact rows through the entries begin_rigid_step gathers after each
// detection (RigidContactEnd): entry e must be row bodyRows[e] of the last detection, bit for
// bit, for every entry of the lists, on a pile resting on the ground (many rows a body).
void expectGatheredEntriesAreTheRows(const Device& device) {
  Simulation sim(device, smallPile(), pileOptions(), 1.0 / 60.0, 10);
  for (int f = 0; f < 30; ++f) sim.advanceFrame();
  const RigidScratch& scratch = sim.rigid().scratch();
  const RigidContactDetector& detector = *scratch.detector;
  const int bodies = sim.rigid().model().numBodies;
  std::vector<int> offsets(size_t(bodies) + 1);
  detail::downloadBytes(device, offsets.data(), detector.bodyContactOffsets(),
                        offsets.size() * sizeof(int));
  const int entries = offsets.back();
  ASSERT_GT(entries, bodies) << "too few rows for the test to mean anything";
  std::vector<int> list(size_t(entries), 0);
  detail::downloadBytes(device, list.data(), detector.bodyContactRows(), list.size() * sizeof(int));
  std::vector<RigidContact> rows(size_t(scratch.rowCapacity));
  detail::downloadBytes(device, rows.data(), detector.rows(), rows.size() * sizeof(RigidContact));
  const std::vector<RigidContactEnd> ends = scratch.contactEnds.download();
  ASSERT_GE(ends.size(), size_t(entries));
  const auto bits = [](const RigidContactEnd& e) {
    // Every member the row gives (all but partnerFirst, checked below).
    std::vector<unsigned char> b(offsetof(RigidContactEnd, partnerFirst));
    std::memcpy(b.data(), &e, b.size());
    return b;
  };
  // partnerFirst: whether the partner's color comes before the listing body's, which is where
  // the body solve reads its pose from this iteration's iterates instead of the previous ones.
  const std::vector<int> color = sim.rigid().model().bodyColor.download();
  int first = 0, later = 0;
  for (int b = 0; b < bodies; ++b)
    for (int e = offsets[size_t(b)]; e < offsets[size_t(b) + 1]; ++e) {
      const int r = list[size_t(e)];
      ASSERT_EQ(bits(ends[size_t(e)]), bits(contactEnd(rows[size_t(r)], r))) << "entry " << e;
      const RigidContact& c = rows[size_t(r)];
      const int other = c.body1 == b ? c.body0 : c.body1;
      const bool partnerFirst = other >= 0 && color[size_t(other)] < color[size_t(b)];
      ASSERT_EQ(ends[size_t(e)].partnerFirst, partnerFirst ? 1 : 0) << "entry " << e;
      (partnerFirst ? first : later) += 1;
    }
  EXPECT_GT(first, 0) << "no entry has a partner of an earlier color";
  EXPECT_GT(later, 0) << "every entry has a partner of an earlier color";
}

TEST(SolverAvbd, GatheredContactEntriesAreTheDetectionsRows) {
  expectGatheredEntriesAreTheRows(*test::openCpu());
}

TEST(SolverAvbd, CudaGatheredContactEntriesAreTheDetectionsRows) {
  WEFT_REQUIRE_CUDA(gpu);
  expectGatheredEntriesAreTheRows(*gpu);
}

TEST(SolverAvbd, CudaIsBitIdenticalForEveryLaunchSizeOfEveryRigidKernel) {
  WEFT_REQUIRE_CUDA(gpu);
  // The small pile run with `o` at the default sizes, then with each kernel of `ids` at each of
  // its sizes: the same bits every time.
  const auto expectEverySize = [&](const RigidSolverOptions& o, std::initializer_list<KernelId> ids,
                                   const std::string& what) {
    gpu->setLaunchPolicy(LaunchPolicy{});
    const auto reference = runPile(*gpu, o, 6);
    for (KernelId id : ids)
      for (int size : launchSizes(id)) {
        LaunchPolicy policy;
        policy.setOverride(id, size);
        gpu->setLaunchPolicy(policy);
        try {
          EXPECT_TRUE(bitIdentical(reference, runPile(*gpu, o, 6)))
              << what << kernelName(id) << " at " << size;
        } catch (const CudaError& e) {
          EXPECT_GT(size, 256) << e.what();
        }
      }
    gpu->setLaunchPolicy(LaunchPolicy{});
  };
  expectEverySize(
      pileOptions(),
      {KernelId::compute_shape_aabbs, KernelId::rigid_broad_phase_cooperative,
       KernelId::rigid_broad_phase_all_pairs, KernelId::rigid_narrow_phase_count,
       KernelId::rigid_narrow_phase, KernelId::fill_body_body_contact_lists,
       KernelId::sort_body_body_contact_lists, KernelId::match_rigid_contacts,
       KernelId::replay_sticky_contacts, KernelId::begin_rigid_step,
       KernelId::solve_rigid_body_tile, KernelId::update_rigid_duals, KernelId::finish_rigid_step},
      "");
  // With Chebyshev acceleration: the extrapolation is per body, so every tile size gives the bits.
  RigidSolverOptions accelerated = pileOptions();
  accelerated.chebyshevRho = 0.6f;
  expectEverySize(accelerated, {KernelId::solve_rigid_body_tile}, "Chebyshev: ");
  // The duals folded into the solve launches (the small pile has 144 bodies: not by default).
  RigidSolverOptions folded = pileOptions();
  folded.foldDualsUpToBodies = 1 << 30;
  expectEverySize(folded,
                  {KernelId::solve_rigid_body_tile, KernelId::solve_rigid_body_tile_folding_duals,
                   KernelId::update_rigid_duals},
                  "folded duals: ");
  // The joints' dual step in the blocks (jointDualsInBlocksUpToWorldColor, forced here: the
  // y_junction's variants of the body solve, under the same kernel names), folded and not.
  for (const bool fold : {false, true}) {
    RigidSolverOptions inBlocks = pileOptions();
    inBlocks.jointDualsInBlocksUpToWorldColor = 1 << 30;
    if (fold) inBlocks.foldDualsUpToBodies = 1 << 30;
    expectEverySize(inBlocks,
                    {KernelId::solve_rigid_body_tile, KernelId::solve_rigid_body_tile_folding_duals,
                     KernelId::update_rigid_duals},
                    fold ? "joint duals in the blocks, folded: " : "joint duals in the blocks: ");
  }
}

// The body solve keeps a contact row's frames and points in registers. Indexed by which endpoint
// is solved (known only at run time), they went to local memory: a 184-byte stack frame, stored
// and reloaded for every row (docs/PERFORMANCE.md, "The solved endpoint selected, not indexed").
// Every body-solve instantiation the pile launches (one-lane tiles with three and with two shared
// levels, 32-lane tiles, the launches that fold the dual step) has a smaller stack frame than the
// two bodies' frames alone (what is left is the trigonometric functions' large-argument path and,
// under the two-level entry's register cap, a few spills).
TEST(SolverAvbd, CudaBodySolveKeepsTheContactFramesInRegisters) {
  WEFT_REQUIRE_CUDA(gpu);
  struct Recorder final : LaunchObserver {
    void onLaunch(const LaunchRecord& record) override {
      if (record.id == KernelId::solve_rigid_body_tile ||
          record.id == KernelId::solve_rigid_body_tile_folding_duals)
        records.push_back(record);
    }
    std::vector<LaunchRecord> records;
  } recorder;
  gpu->setLaunchPolicy(LaunchPolicy{});
  size_t jointDualLaunches = 0;
  {
    gpu->setObserver(&recorder);
    struct Detach {  // the recorder leaves the device even if a run throws
      Device& device;
      ~Detach() { device.setObserver(nullptr); }
    } detach{*gpu};
    for (OneLaneLevels levels : {OneLaneLevels::Three, OneLaneLevels::Two}) {
      RigidSolverOptions o = pileOptions();
      o.oneLaneLevels = levels;
      o.foldDualsUpToBodies = 1 << 30;
      runPile(*gpu, o, 1, false);
    }
    // The variants of the models that take the joints' dual step in their blocks (forced
    // here), launched under the same names.
    RigidSolverOptions o = pileOptions();
    o.foldDualsUpToBodies = 1 << 30;
    o.jointDualsInBlocksUpToWorldColor = 1 << 30;
    Simulation sim(*gpu, smallPile(), o, 1.0 / 60.0, 10, false);
    EXPECT_TRUE(sim.rigid().solver().jointDualsInBlocks());
    const size_t before = recorder.records.size();
    sim.advanceFrame();
    jointDualLaunches = recorder.records.size() - before;
  }
  bool folded = false;
  for (const LaunchRecord& record : recorder.records) {
    folded |= record.id == KernelId::solve_rigid_body_tile_folding_duals;
    for (int tile : {1, 32}) {
      const KernelResources resources = record.resources(tile);
      EXPECT_GT(resources.registers, 0) << kernelName(record.id) << ": no attributes";
      EXPECT_LT(resources.localBytes, int(sizeof(ContactBodyFrames)))
          << kernelName(record.id) << " with tiles of " << tile << " lanes";
    }
  }
  EXPECT_TRUE(folded) << "no launch folded the dual step";
  EXPECT_GT(jointDualLaunches, 0u) << "no launch took the joints' dual step in its blocks";
  EXPECT_GE(recorder.records.size(), 4u);
}

TEST(SolverAvbd, CudaConvergenceRecordAgreesWithCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  RigidSolverOptions o = pileOptions();
  o.recordConvergence = true;
  Simulation a(*cpu, smallPile(), o, 1.0 / 60.0, 10), b(*gpu, smallPile(), o, 1.0 / 60.0, 10);
  for (int f = 0; f < 3; ++f) {
    a.advanceFrame();
    b.advanceFrame();
  }
  const auto& x = a.rigid().convergenceReport().translation;
  const auto& y = b.rigid().convergenceReport().translation;
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-5f + 0.05f * x[i]) << i;
}

TEST(SolverAvbd, CudaAgreesWithCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  RigidSolverOptions folded = pileOptions(), accelerated = pileOptions();
  folded.foldDualsUpToBodies = 1 << 30;
  accelerated.chebyshevRho = 0.6f;
  for (const RigidSolverOptions& o : {pileOptions(), folded, accelerated}) {
    const auto a = runPile(*cpu, o, 5);
    const auto b = runPile(*gpu, o, 5);
    ASSERT_EQ(a.size(), b.size());
    float worst = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, length(a[i].p - b[i].p));
    EXPECT_LT(worst, 1e-3f) << "folded duals: " << (o.foldDualsUpToBodies > 1000);
  }
}

}  // namespace
}  // namespace weft
