// Body–body contact rows (kernels/rigid_contact.h) against double-precision references: the
// normal force and torque are −∇ of ½k_eff·C² + s·λ_n·C (C the penetration at the skeleton points)
// with respect to the body's COM translation and world rotation, H_ll and H_al are that energy's
// exact second derivatives and H_aa its Gauss–Newton part, every block is symmetric PSD; friction
// inside the cone is the spring ρ_t·(u + C0_t) + λ_t at the anchors, outside it is capped at μf_n;
// damping acts only while approaching; body 0 and body 1 get opposite forces. The per-step setup
// (C0, ρ_n by the point Delassus series, ρ_t by the tangent Delassus eigenvalue, λ retention) and
// the dual update (relaxed ascent with its fixed point λ = K·C, cone projection) are checked
// against independent world-frame computations. Every randomized check traces its seed.
#include "kernels/rigid_contact.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

using Mat6d = Eigen::Matrix<double, 6, 6>;
using Vec6d = Eigen::Matrix<double, 6, 1>;

// ---- Poses in double ---------------------------------------------------------------------------

struct PoseD {
  Vec3d p;
  Eigen::Quaterniond q;
};

PoseD toDouble(const Transform& t) {
  return {toEigen(t.p), Eigen::Quaterniond(t.q.w, t.q.x, t.q.y, t.q.z)};
}
Transform toTransform(const PoseD& t) {
  const Eigen::Quaterniond q = t.q.normalized();
  return {toFloat(t.p), Quat{float(q.x()), float(q.y()), float(q.z()), float(q.w())}};
}
Vec3d apply(const PoseD& t, const Vec3d& local) {
  return t.q * local + t.p;
}
Transform randomPose(Random& rng) {
  return toTransform({rng.vec(-1, 1), Eigen::Quaterniond(rng.rotation())});
}

/// The pose after moving the COM by dx and turning by the world rotation vector dθ about it.
PoseD perturbed(const PoseD& pose, const Vec3d& com, const Vec3d& dx, const Vec3d& dtheta) {
  const Vec3d x = apply(pose, com) + dx;
  const double angle = dtheta.norm();
  const Eigen::Quaterniond turn = angle > 0
                                      ? Eigen::Quaterniond(Eigen::AngleAxisd(angle, dtheta / angle))
                                      : Eigen::Quaterniond::Identity();
  PoseD out;
  out.q = turn * pose.q;
  out.p = x - out.q * com;
  return out;
}

Mat6d blockMatrix(const BodyBlock& b) {
  Mat6d H;
  H.topLeftCorner<3, 3>() = toEigen(b.hll);
  H.bottomLeftCorner<3, 3>() = toEigen(b.hal);
  H.topRightCorner<3, 3>() = toEigen(b.hal).transpose();
  H.bottomRightCorner<3, 3>() = toEigen(b.haa);
  return H;
}
Vec6d wrench(const BodyBlock& b) {
  Vec6d w;
  w << toEigen(b.force), toEigen(b.torque);
  return w;
}

void expectSymmetricPsd6(const Mat6d& H) {
  const double scale = H.norm();
  EXPECT_LE((H - H.transpose()).norm(), 1e-6 * scale) << H;
  const Eigen::SelfAdjointEigenSolver<Mat6d> eig(0.5 * (H + H.transpose()));
  EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-5 * scale) << H;
}

// ---- Random contacts ---------------------------------------------------------------------------

/// Skeleton points, anchors and penetration of a row at double-precision poses.
struct GeometryD {
  std::array<Vec3d, 2> skeleton, anchor;
  double penetration;
};
GeometryD geometry(const RigidContact& c, const PoseD& pose0, const PoseD& pose1) {
  GeometryD g;
  g.skeleton = {apply(pose0, toEigen(c.point0)), apply(pose1, toEigen(c.point1))};
  g.anchor = {apply(pose0, toEigen(c.point0 + c.offset0)),
              apply(pose1, toEigen(c.point1 + c.offset1))};
  g.penetration =
      double(c.margin0) + double(c.margin1) - toEigen(c.normal).dot(g.skeleton[1] - g.skeleton[0]);
  return g;
}

/// The start residual C0 = C_n(start)·n − tangential(A1 − A0)(start) of a row at double-precision
/// start poses (what rigidContactBeginStep computes in float).
Vec3 startResidual(const RigidContact& c, const PoseD& start0, const PoseD& start1) {
  const GeometryD g = geometry(c, start0, start1);
  const Vec3d n = toEigen(c.normal), gap = g.anchor[1] - g.anchor[0];
  return toFloat(g.penetration * n - (gap - n * n.dot(gap)));
}

/// A row between two bodies with random poses and COMs. At the start pose the skeleton points sit
/// along the normal with penetration `startPenetration`; the current pose moves each body by
/// `motion` (a random rigid motion of that size). The state's C0 is the start poses' residual,
/// as the step's beginning leaves it (the iterations see the start only through it).
struct Scenario {
  RigidContact row;
  ContactBodyFrames frames;
  Transform startPose[2];
  RigidContactState state;
  float h = 1.0f / 600.0f;
  float frictionEpsilon = 1e-2f;
};

Scenario randomScenario(Random& rng, double startPenetration, double motion) {
  Scenario s;
  const Vec3d n = roundToFloat(rng.unit());
  s.row.normal = toFloat(n);
  s.row.shape0 = 0;
  s.row.shape1 = 1;
  s.row.body0 = 0;
  s.row.body1 = 1;
  s.row.margin0 = float(rng.uniform(0.005, 0.05));
  s.row.margin1 = float(rng.uniform(0.005, 0.05));
  const Vec3d p0 = rng.vec(-0.5, 0.5);
  const Vec3d p1 = p0 + (double(s.row.margin0) + double(s.row.margin1) - startPenetration) * n;
  for (int i = 0; i < 2; ++i) {
    s.startPose[i] = randomPose(rng);
    s.frames.com[i] = toFloat(rng.vec(-0.1, 0.1));
    const PoseD start = toDouble(s.startPose[i]);
    const Vec3d move = rng.vec(-1, 1) * motion, turn = rng.vec(-1, 1) * motion;
    s.frames.pose[i] = toTransform(perturbed(start, toEigen(s.frames.com[i]), move, turn));
  }
  const PoseD start0 = toDouble(s.startPose[0]), start1 = toDouble(s.startPose[1]);
  s.row.point0 = toFloat(start0.q.inverse() * (p0 - start0.p));
  s.row.point1 = toFloat(start1.q.inverse() * (p1 - start1.p));
  s.row.offset0 = toFloat(start0.q.inverse() * (double(s.row.margin0) * n));
  s.row.offset1 = toFloat(start1.q.inverse() * (-double(s.row.margin1) * n));
  s.state.ke = float(rng.logUniform(1e3, 1e6));
  s.state.normalRho = float(rng.logUniform(1e3, 1e6));
  s.state.tangentRho = float(rng.logUniform(1e3, 1e6));
  s.state.c0 = startResidual(s.row, start0, start1);
  return s;
}

/// Evaluates `energy(poses)` with body `side` moved by the 6-vector (dx, dθ).
using PoseEnergy = std::function<double(const PoseD&, const PoseD&)>;
double energyAt(const PoseEnergy& energy, const Scenario& s, int side, const Vec6d& d) {
  PoseD poses[2] = {toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1])};
  poses[side] = perturbed(poses[side], toEigen(s.frames.com[side]), d.head<3>(), d.tail<3>());
  return energy(poses[0], poses[1]);
}
Vec6d gradient(const PoseEnergy& energy, const Scenario& s, int side, double step) {
  Vec6d g;
  for (int k = 0; k < 6; ++k) {
    Vec6d d = Vec6d::Zero();
    d[k] = step;
    g[k] = (energyAt(energy, s, side, d) - energyAt(energy, s, side, -d)) / (2 * step);
  }
  return g;
}
Mat6d hessian(const PoseEnergy& energy, const Scenario& s, int side, double step) {
  Mat6d H;
  for (int j = 0; j < 6; ++j) {
    Vec6d d = Vec6d::Zero();
    d[j] = step;
    const Vec6d gp = [&] {
      Vec6d g;
      for (int k = 0; k < 6; ++k) {
        Vec6d e = d;
        e[k] += step;
        Vec6d f = d;
        f[k] -= step;
        g[k] = (energyAt(energy, s, side, e) - energyAt(energy, s, side, f)) / (2 * step);
      }
      return g;
    }();
    const Vec6d gm = [&] {
      Vec6d g;
      for (int k = 0; k < 6; ++k) {
        Vec6d e = -d;
        e[k] += step;
        Vec6d f = -d;
        f[k] -= step;
        g[k] = (energyAt(energy, s, side, e) - energyAt(energy, s, side, f)) / (2 * step);
      }
      return g;
    }();
    H.col(j) = (gp - gm) / (2 * step);
  }
  return 0.5 * (H + H.transpose());
}

/// The normal energy ½k_eff·C² + s·λ_n·C of a row (α = 0), valid while k_eff·C + s·λ_n > 0.
PoseEnergy normalEnergy(const RigidContact& row, const RigidContactState& state) {
  const AlmCoefficients alm = almCoefficients(state.ke, state.normalRho);
  const double lambdaN = double(dot(row.normal, state.lambda));
  return [row, alm, lambdaN](const PoseD& a, const PoseD& b) {
    const double C = geometry(row, a, b).penetration;
    return 0.5 * double(alm.kEff) * C * C + double(alm.s) * lambdaN * C;
  };
}

// ---- Normal force ------------------------------------------------------------------------------

TEST(RigidContact, NormalForceIsMinusGradientOfPenaltyEnergy) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, rng.uniform(0.002, 0.01), 1e-4);
    if (trial % 2) s.state.lambda = float(rng.uniform(0, 50)) * s.row.normal;
    const PoseEnergy energy = normalEnergy(s.row, s.state);
    for (int side = 0; side < 2; ++side) {
      const BodyBlock b = rigidContactBlock(side, s.row, s.state, s.frames, s.h, 0.01f);
      const Vec6d expected = -gradient(energy, s, side, 1e-7);
      EXPECT_LE((wrench(b) - expected).norm(), 2e-4 * expected.norm() + 1e-6)
          << "side " << side << "\n"
          << wrench(b).transpose() << "\n"
          << expected.transpose();
    }
  }
}

TEST(RigidContact, HessianIsExactInTranslationAndGaussNewtonInRotation) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    // A small penetration: the geometric term k·C·∂²C/∂θ² that Gauss–Newton drops is ~C/lever
    // of the rest.
    Scenario s = randomScenario(rng, 1e-4, 0.0);
    const PoseEnergy energy = normalEnergy(s.row, s.state);
    for (int side = 0; side < 2; ++side) {
      const BodyBlock b = rigidContactBlock(side, s.row, s.state, s.frames, s.h, 0.01f);
      const Mat6d H = blockMatrix(b);
      const Mat6d reference = hessian(energy, s, side, 1e-4);
      EXPECT_LE((H - reference).norm(), 1e-3 * reference.norm()) << H << "\n\n" << reference;
      expectSymmetricPsd6(H);
    }
    // Deeper: H_ll and H_al stay exact (no geometric term in them).
    s = randomScenario(rng, 0.01, 0.0);
    const PoseEnergy deep = normalEnergy(s.row, s.state);
    const Mat6d H = blockMatrix(rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f));
    const Mat6d reference = hessian(deep, s, 1, 1e-4);
    EXPECT_LE((H.leftCols<3>() - reference.leftCols<3>()).norm(), 1e-3 * reference.norm());
    expectSymmetricPsd6(H);
  }
}

TEST(RigidContact, NothingActsWhenSeparatedWithoutLambda) {
  Random rng;
  TRACE_SEED(rng);
  Scenario s = randomScenario(rng, -0.01, 0.0);
  s.state.mu = 1.0f;
  s.state.kd = 10.0f;
  for (int side = 0; side < 2; ++side) {
    const BodyBlock b = rigidContactBlock(side, s.row, s.state, s.frames, s.h, 0.01f);
    EXPECT_EQ(wrench(b).norm(), 0.0);
    EXPECT_EQ(blockMatrix(b).norm(), 0.0);
  }
  // A positive normal multiplier still pushes while k_eff·C + s·λ_n > 0.
  s.state.lambda = 1e6f * s.row.normal;
  const AlmCoefficients alm = almCoefficients(s.state.ke, s.state.normalRho);
  const BodyBlock b = rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f);
  const double fn = std::max(alm.kEff * -0.01 + alm.s * 1e6, 0.0);
  EXPECT_NEAR(toEigen(b.force).dot(toEigen(s.row.normal)), fn, 1e-3 * fn + 1e-3);
}

// ---- Friction
// ------------------------------------------------------------------------------------

/// The force on body 1 split into normal and tangential parts.
struct SplitForce {
  double normal;
  Vec3d tangential;
};
SplitForce split(const BodyBlock& b, const Vec3& normal) {
  const Vec3d n = toEigen(normal), f = toEigen(b.force);
  return {n.dot(f), f - n * n.dot(f)};
}

/// Bound on the float rounding error of the slip u [m]: a difference of anchor displacements of
/// ~1e-3 m between points up to ~2 m from the origin (observed up to ~7e-7 m).
constexpr double kSlipError = 2e-6;

/// u: the tangential displacement of anchor 0 relative to anchor 1 since the step start, as the
/// state's C0 defines it: tangential(A0 − A1)(now) − C0_t. With C0 the start poses' residual
/// (randomScenario) it is the displacement between the start and the current poses
/// (MotionFromC0IsTheDisplacementSinceTheStart checks both in float).
Vec3d slip(const Scenario& s) {
  const GeometryD now = geometry(s.row, toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1]));
  const Vec3d n = toEigen(s.row.normal), c0 = toEigen(s.state.c0);
  const Vec3d rel = now.anchor[0] - now.anchor[1];
  return (rel - n * n.dot(rel)) - (c0 - n * n.dot(c0));
}

/// The same slip from the start poses themselves: the displacements of the two anchors.
Vec3d slipSinceStartPoses(const Scenario& s) {
  const GeometryD now = geometry(s.row, toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1]));
  const GeometryD start = geometry(s.row, toDouble(s.startPose[0]), toDouble(s.startPose[1]));
  const Vec3d n = toEigen(s.row.normal);
  const Vec3d rel = (now.anchor[0] - start.anchor[0]) - (now.anchor[1] - start.anchor[1]);
  return rel - n * n.dot(rel);
}

TEST(RigidContact, MotionFromC0IsTheDisplacementSinceTheStart) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, rng.uniform(-0.01, 0.02), trial % 2 ? 1e-3 : 1e-2);
    // A tangential anchor drift at the start, as sticky contacts replay, so that C0_t is not 0.
    s.row.point1 += Vec3{float(rng.uniform(-2e-3, 2e-3)), float(rng.uniform(-2e-3, 2e-3)),
                         float(rng.uniform(-2e-3, 2e-3))};
    // C0 as the step's beginning computes it, in float, from the float start poses.
    s.state = rigidContactBeginStep(s.row, RigidContactState{}, ContactMaterial{1e4f, 0.0f, 0.5f},
                                    s.startPose[0], s.startPose[1], ContactEndpointInertia{},
                                    ContactEndpointInertia{}, s.h, 0.999f);
    const ContactPoints now = contactPoints(s.row, s.frames.pose[0], s.frames.pose[1]);
    const float cNow = rigidContactPenetration(s.row, now);
    const float c0n = dot(s.row.normal, s.state.c0);
    const ContactMotion m = contactMotion(s.row, now, cNow, c0n, s.state.c0);
    // In double from the poses: the normal approach of the skeleton points and the slip.
    const PoseD pose[2] = {toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1])};
    const PoseD start[2] = {toDouble(s.startPose[0]), toDouble(s.startPose[1])};
    const GeometryD g = geometry(s.row, pose[0], pose[1]), g0 = geometry(s.row, start[0], start[1]);
    const Vec3d n = toEigen(s.row.normal);
    const double approach =
        n.dot((g.skeleton[1] - g0.skeleton[1]) - (g.skeleton[0] - g0.skeleton[0]));
    EXPECT_NEAR(m.approach, approach, kSlipError) << "trial " << trial;
    const Vec3d u = slipSinceStartPoses(s);
    EXPECT_LE((toEigen(m.slip) - u).norm(), kSlipError)
        << toEigen(m.slip).transpose() << " vs " << u.transpose();
    EXPECT_LE((slip(s) - u).norm(), kSlipError);
    // C0_t itself: the start anchors' tangential offset, which the drift made ~1e-3 m.
    const Vec3d gap = g0.anchor[0] - g0.anchor[1];
    EXPECT_LE((toEigen(m.c0t) - (gap - n * n.dot(gap))).norm(), kSlipError);
  }
}

TEST(RigidContact, FrictionInsideTheConeIsTheTangentSpring) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, 0.02, 1e-3);
    const Vec3d n = toEigen(s.row.normal);
    s.state.mu = 1e6f;  // never leaves the cone
    const Vec3d t = rng.unitPerpendicular(n);
    s.state.lambda = toFloat(rng.uniform(0, 10) * n + rng.uniform(-5, 5) * t);
    s.state.c0 = toFloat(0.001 * n + rng.uniform(-1e-4, 1e-4) * rng.unitPerpendicular(n));
    const BodyBlock b1 = rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f);
    const Vec3d c0t = toEigen(s.state.c0) - n * n.dot(toEigen(s.state.c0));
    const Vec3d lambda = toEigen(s.state.lambda);
    const Vec3d lambdaT = lambda - n * n.dot(lambda);
    const Vec3d expected = double(s.state.tangentRho) * (slip(s) + c0t) + lambdaT;
    const SplitForce f = split(b1, s.row.normal);
    EXPECT_LE((f.tangential - expected).norm(),
              1e-3 * expected.norm() + kSlipError * double(s.state.tangentRho))
        << f.tangential.transpose() << " vs " << expected.transpose();
    // Stiffness ρ_t(I − nnᵀ) at the anchor (plus k_eff·nnᵀ at the skeleton point) in H_ll.
    const AlmCoefficients alm = almCoefficients(s.state.ke, s.state.normalRho);
    const Mat3d expectedHll = double(alm.kEff) * n * n.transpose() +
                              double(s.state.tangentRho) * (Mat3d::Identity() - n * n.transpose());
    EXPECT_LE((toEigen(b1.hll) - expectedHll).norm(), 1e-4 * expectedHll.norm());
    expectSymmetricPsd6(blockMatrix(b1));
  }
}

/// −∂(force, torque)/∂(dx, dθ) of body `side` by central differences of the float block, the
/// body moved by (dx, world dθ about its COM); columns: the six motion components.
Mat6d wrenchDerivative(const Scenario& s, int side, double translationStep, double rotationStep) {
  Mat6d D;
  for (int k = 0; k < 6; ++k) {
    Vec6d d = Vec6d::Zero();
    d[k] = k < 3 ? translationStep : rotationStep;
    Vec6d w[2];
    double applied = 0;
    for (int sign = 0; sign < 2; ++sign) {
      Scenario moved = s;
      const Vec6d step = sign == 0 ? d : Vec6d(-d);
      moved.frames.pose[side] =
          toTransform(perturbed(toDouble(s.frames.pose[side]), toEigen(s.frames.com[side]),
                                step.head<3>(), step.tail<3>()));
      w[sign] = wrench(rigidContactBlock(side, moved.row, moved.state, moved.frames, moved.h,
                                         moved.frictionEpsilon));
      // The translation actually applied in float.
      if (k < 3) {
        const double x = apply(toDouble(moved.frames.pose[side]), toEigen(s.frames.com[side]))[k];
        applied += sign == 0 ? x : -x;
      }
    }
    D.col(k) = -(w[0] - w[1]) / (k < 3 ? applied : 2 * rotationStep);
  }
  return D;
}

TEST(RigidContact, HessianIsTheForceDerivativeInsideTheCone) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, 0.02, 1e-3);
    const Vec3d n = toEigen(s.row.normal);
    s.state.mu = 1e6f;  // sticking: the force is smooth in the motion
    s.state.lambda =
        toFloat(rng.uniform(0, 10) * n + rng.uniform(-5, 5) * rng.unitPerpendicular(n));
    s.state.c0 = toFloat(0.001 * n + rng.uniform(-1e-4, 1e-4) * rng.unitPerpendicular(n));
    for (int side = 0; side < 2; ++side) {
      SCOPED_TRACE(::testing::Message() << "side " << side << " trial " << trial);
      const BodyBlock b = rigidContactBlock(side, s.row, s.state, s.frames, s.h, s.frictionEpsilon);
      const Mat6d H = blockMatrix(b);
      const Mat6d D = wrenchDerivative(s, side, 1e-3, 1e-3);
      const double scale = double(std::max(s.state.tangentRho, s.state.ke));
      // Both springs act on points that translate with the body: H_ll and H_al (the torque's
      // derivative in translation) are exact, and so is H_alᵀ (the force's in rotation).
      EXPECT_LE((H.topLeftCorner<3, 3>() - D.topLeftCorner<3, 3>()).norm(), 2e-3 * scale)
          << H << "\n\n"
          << D;
      EXPECT_LE((H.bottomLeftCorner<3, 3>() - D.bottomLeftCorner<3, 3>()).norm(), 2e-3 * scale)
          << H << "\n\n"
          << D;
      EXPECT_LE((H.topRightCorner<3, 3>() - D.topRightCorner<3, 3>()).norm(), 2e-3 * scale)
          << H << "\n\n"
          << D;
      // H_aa is Gauss–Newton: it drops the terms of the turning lever arms, of the size |F|·|r|.
      const double levers = (toEigen(b.torque).norm() + 1e-9) / (toEigen(b.force).norm() + 1e-9);
      EXPECT_LE((H.bottomRightCorner<3, 3>() - D.bottomRightCorner<3, 3>()).norm(),
                2e-3 * scale + 4.0 * toEigen(b.force).norm() * (levers + 1.0))
          << H << "\n\n"
          << D;
      expectSymmetricPsd6(H);
    }
  }
}

TEST(RigidContact, FrictionOutsideTheConeIsCappedAtMuTimesNormalForce) {
  Random rng;
  TRACE_SEED(rng);
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, 0.02, 1e-3);
    s.state.mu = float(rng.uniform(0.1, 0.5));
    s.state.ke = s.state.normalRho = float(rng.logUniform(1e3, 1e4));
    s.state.tangentRho = 1e7f;  // slips far beyond the cone
    const Vec3d n = toEigen(s.row.normal);
    const BodyBlock b1 = rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f);
    const SplitForce f = split(b1, s.row.normal);
    const Vec3d trialForce = double(s.state.tangentRho) * slip(s);
    if (trialForce.norm() < 2.0 * s.state.mu * f.normal) continue;  // a rare tiny slip
    ++checked;
    // Relative float error of the slip (direction and length), see kSlipError.
    const double slipRelativeError = kSlipError / slip(s).norm();
    EXPECT_NEAR(f.tangential.norm(), double(s.state.mu) * f.normal, 1e-4 * f.normal);
    EXPECT_LE((f.tangential.normalized() - trialForce.normalized()).norm(),
              2.0 * slipRelativeError + 1e-5);
    EXPECT_LE(std::abs(f.tangential.dot(n)), 1e-5 * f.tangential.norm());
    expectSymmetricPsd6(blockMatrix(b1));
    // The sliding metric: H_ll's tangential part is (c/|F|)ρ_t(P − t̂t̂ᵀ) + c·φ(|u|)·t̂t̂ᵀ.
    const double cone = double(s.state.mu) * f.normal;
    const Vec3d dir = trialForce.normalized();
    const double phi = double(frictionWeight(float(slip(s).norm()), s.frictionEpsilon * s.h));
    const Mat3d P = Mat3d::Identity() - n * n.transpose();
    const AlmCoefficients alm = almCoefficients(s.state.ke, s.state.normalRho);
    const Mat3d expectedHll =
        double(alm.kEff) * n * n.transpose() +
        cone / trialForce.norm() * double(s.state.tangentRho) * (P - dir * dir.transpose()) +
        cone * phi * dir * dir.transpose();
    EXPECT_LE((toEigen(b1.hll) - expectedHll).norm(),
              (2e-3 + 2.0 * slipRelativeError) * expectedHll.norm());
  }
  EXPECT_GE(checked, 30);
}

TEST(RigidContact, NormalDampingActsOnlyWhileApproaching) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    for (const double direction : {-1.0, 1.0}) {  // −1: body 1 moved towards body 0
      Scenario s = randomScenario(rng, 0.005, 0.0);
      const Vec3d n = toEigen(s.row.normal);
      const double dn = direction * rng.uniform(1e-4, 1e-3);
      PoseD p1 = toDouble(s.startPose[1]);
      p1.p += dn * n;
      s.frames.pose[1] = toTransform(p1);
      Scenario undamped = s;
      s.state.kd = float(rng.uniform(1, 100));
      const BodyBlock damped = rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f);
      const BodyBlock plain =
          rigidContactBlock(1, undamped.row, undamped.state, undamped.frames, undamped.h, 0.01f);
      const Vec3d extraForce = toEigen(damped.force) - toEigen(plain.force);
      const Mat3d extraStiffness = toEigen(damped.hll) - toEigen(plain.hll);
      if (direction < 0) {
        const double vn = dn / double(s.h);
        EXPECT_LE((extraForce - (-double(s.state.kd) * vn) * n).norm(),
                  5e-3 * std::abs(s.state.kd * vn));
        const Mat3d expected = double(s.state.kd) / double(s.h) * n * n.transpose();
        EXPECT_LE((extraStiffness - expected).norm(), 1e-4 * expected.norm());
      } else {
        EXPECT_EQ(extraForce.norm(), 0.0);
        EXPECT_EQ(extraStiffness.norm(), 0.0);
      }
    }
  }
}

TEST(RigidContact, BodiesGetOppositeForcesAtTheirOwnLevers) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, 0.005, 1e-4);
    s.state.mu = float(rng.uniform(0.0, 1.0));
    s.state.kd = float(rng.uniform(0.0, 50.0));
    const BodyBlock b0 = rigidContactBlock(0, s.row, s.state, s.frames, s.h, 0.01f);
    const BodyBlock b1 = rigidContactBlock(1, s.row, s.state, s.frames, s.h, 0.01f);
    const Vec3d f1 = toEigen(b1.force);
    EXPECT_LE((toEigen(b0.force) + f1).norm(), 1e-6 * f1.norm());
    // Torques: normal force at the skeleton point, friction at the anchor, about each COM.
    const SplitForce parts = split(b1, s.row.normal);
    const Vec3d fn = parts.normal * toEigen(s.row.normal), ft = parts.tangential;
    const GeometryD g = geometry(s.row, toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1]));
    for (int side = 0; side < 2; ++side) {
      const double sign = side == 1 ? 1.0 : -1.0;
      const Vec3d com = apply(toDouble(s.frames.pose[side]), toEigen(s.frames.com[side]));
      const Vec3d expected =
          (g.skeleton[side] - com).cross(sign * fn) + (g.anchor[side] - com).cross(sign * ft);
      const Vec3d torque = toEigen(side == 1 ? b1.torque : b0.torque);
      EXPECT_LE((torque - expected).norm(), 1e-4 * expected.norm() + 1e-6);
      expectSymmetricPsd6(blockMatrix(side == 1 ? b1 : b0));
    }
  }
}

// ---- Per-step setup ----------------------------------------------------------------------------

ContactEndpointInertia randomEndpoint(Random& rng, const Vec3& com) {
  ContactEndpointInertia e;
  e.invMass = float(1.0 / rng.uniform(0.01, 1.0));
  const Mat3d R = rng.rotation();
  const Vec3d diagonal = rng.vec(10, 1000);
  const Mat3d inv = R * diagonal.asDiagonal() * R.transpose();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) e.invInertia(i, j) = float(0.5 * (inv(i, j) + inv(j, i)));
  e.com = com;
  e.structuralK = float(rng.logUniform(1e2, 1e5));
  return e;
}

/// The world-frame point Delassus matrix W·I − [r]×·I_w⁻¹·[r]× of one endpoint at lever r.
Mat3d pointDelassus(const ContactEndpointInertia& e, const PoseD& pose, const Vec3d& lever) {
  if (!(e.invMass > 0)) return Mat3d::Zero();
  const Mat3d R = pose.q.toRotationMatrix();
  const Mat3d invI = R * toEigen(e.invInertia) * R.transpose();
  Mat3d rx;
  rx << 0, -lever.z(), lever.y(), lever.z(), 0, -lever.x(), -lever.y(), lever.x(), 0;
  return double(e.invMass) * Mat3d::Identity() - rx * invI * rx;
}

double seriesOrMax(double a, double b) {
  return a > 0 && b > 0 ? a * b / (a + b) : std::max(a, b);
}

TEST(RigidContact, BeginStepComputesC0RhoAndRetention) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Scenario s = randomScenario(rng, rng.uniform(-0.01, 0.01), 1e-3);
    // Give the start pose a tangential anchor drift so that C0_t is not zero.
    s.row.point1 += Vec3{1e-3f, -2e-3f, 5e-4f};
    ContactEndpointInertia ends[2] = {randomEndpoint(rng, s.frames.com[0]),
                                      randomEndpoint(rng, s.frames.com[1])};
    const bool oneStatic = trial % 4 == 3;
    if (oneStatic) ends[0] = ContactEndpointInertia{};
    const float h = 1.0f / 600.0f, gamma = 0.999f;
    RigidContactState previous;
    previous.lambda = toFloat(rng.uniform(-5, 5) * toEigen(s.row.normal) + rng.vec(-1, 1));
    const ContactMaterial material{float(rng.logUniform(1e3, 1e5)), 10.0f, 0.5f};
    const RigidContactState st = rigidContactBeginStep(s.row, previous, material, s.startPose[0],
                                                       s.startPose[1], ends[0], ends[1], h, gamma);
    EXPECT_EQ(st.ke, material.ke);
    EXPECT_EQ(st.kd, material.kd);
    EXPECT_EQ(st.mu, material.mu);

    const PoseD start[2] = {toDouble(s.startPose[0]), toDouble(s.startPose[1])};
    const GeometryD g = geometry(s.row, start[0], start[1]);
    const Vec3d n = toEigen(s.row.normal);
    const Vec3d d = g.anchor[1] - g.anchor[0];
    const Vec3d c0 = g.penetration * n - (d - n * n.dot(d));
    EXPECT_LE((toEigen(st.c0) - c0).norm(), 1e-5) << toEigen(st.c0).transpose();

    // ρ_n: series of 1/(h²·nᵀDn) + S over moving endpoints (Delassus at the skeleton point).
    double scale[2], structural[2];
    Mat3d tangentDelassus = Mat3d::Zero();
    for (int i = 0; i < 2; ++i) {
      const Vec3d com = apply(start[i], toEigen(s.frames.com[i]));
      const double w = n.dot(pointDelassus(ends[i], start[i], g.skeleton[i] - com) * n);
      scale[i] = ends[i].invMass > 0 ? 1.0 / (double(h) * h * w) + ends[i].structuralK : 0.0;
      structural[i] = ends[i].invMass > 0 ? ends[i].structuralK : 0.0;
      tangentDelassus += pointDelassus(ends[i], start[i], g.anchor[i] - com);
    }
    const double rhoN = seriesOrMax(scale[0], scale[1]);
    EXPECT_NEAR(st.normalRho, rhoN, 1e-4 * rhoN);

    // ρ_t: the largest eigenvalue of the Delassus matrix restricted to the tangent plane.
    const Mat3d P = Mat3d::Identity() - n * n.transpose();
    const Eigen::SelfAdjointEigenSolver<Mat3d> eig(P * tangentDelassus * P);
    const double supportT = 1.0 / (double(h) * h * eig.eigenvalues().maxCoeff());
    const double rhoT =
        std::max(supportT, std::min(rhoN, seriesOrMax(structural[0], structural[1])));
    EXPECT_NEAR(st.tangentRho, rhoT, 1e-4 * rhoT);

    // λ is kept (scaled by γ) only while it pushes.
    const bool pushes = dot(previous.lambda, s.row.normal) > 0;
    const Vec3d expectedLambda =
        pushes ? Vec3d(double(gamma) * toEigen(previous.lambda)) : Vec3d::Zero();
    EXPECT_LE((toEigen(st.lambda) - expectedLambda).norm(), 1e-6 * expectedLambda.norm());
  }
}

/// A solid sphere (mass m, radius r, inverse inertia 5/(2mr²)·I) as a contact endpoint.
ContactEndpointInertia sphere(double mass, double radius, double structuralK) {
  ContactEndpointInertia e;
  e.invMass = float(1 / mass);
  e.invInertia = Mat33::diagonal(float(2.5 / (mass * radius * radius)));
  e.structuralK = float(structuralK);
  return e;
}

TEST(RigidContact, BeginStepOfASphereOnAPlane) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    // Plane z = 0 (static, shape 0), sphere of radius r above it (body 1, COM at its center)
    // sinking by d, turned at random: normal +z, skeleton point the center, anchor its bottom.
    const double m = rng.logUniform(0.01, 10), r = rng.uniform(0.01, 0.2);
    const double d = rng.uniform(-0.2, 0.5) * r;
    const float h = float(rng.uniform(1e-3, 1e-2));
    // Structural stiffness below or above the tangent support m/(3.5h²).
    const double S = trial % 2 ? 0.0 : rng.logUniform(1e-2, 1e2) * m / (h * h);
    const Vec3d center(rng.uniform(-1, 1), rng.uniform(-1, 1), r - d);
    const PoseD spherePose{center, Eigen::Quaterniond(rng.rotation())};
    const Transform pose1 = toTransform(spherePose);
    RigidContact row;
    row.body0 = -1;
    row.body1 = 0;
    row.normal = Vec3{0.0f, 0.0f, 1.0f};
    row.point0 = toFloat(Vec3d(center.x(), center.y(), 0));
    row.margin1 = float(r);
    row.offset1 = toFloat(toDouble(pose1).q.inverse() * Vec3d(0, 0, -r));
    const ContactEndpointInertia ball = sphere(m, r, S);
    RigidContactState previous;
    const Vec3d lambda(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.1, 5));
    previous.lambda = toFloat(lambda);
    const ContactMaterial material{float(rng.logUniform(1e3, 1e6)), 5.0f, 0.7f};
    const float gamma = 0.999f;
    const RigidContactState st = rigidContactBeginStep(row, previous, material, Transform{}, pose1,
                                                       ContactEndpointInertia{}, ball, h, gamma);
    // C0 = d·n: the anchors (the sphere's bottom and the plane point below the center) differ
    // only along the normal.
    EXPECT_LE((toEigen(st.c0) - Vec3d(0, 0, d)).norm(), 1e-6) << toEigen(st.c0).transpose();
    // ρ_n = 1/(h²·W) + S: no lever along the normal through the center.
    const double hd = h;
    const double rhoN = m / (hd * hd) + S;
    EXPECT_NEAR(st.normalRho, rhoN, 1e-5 * rhoN);
    // Tangent: w = 1/m + r²·5/(2mr²) = 3.5/m in every tangent direction; S_pair = S.
    const double rhoT = std::max(m / (3.5 * hd * hd), std::min(rhoN, S));
    EXPECT_NEAR(st.tangentRho, rhoT, 1e-5 * rhoT);
    // λ pushes (λ·n > 0): kept, scaled by γ.
    EXPECT_LE((toEigen(st.lambda) - double(gamma) * lambda).norm(), 1e-6 * lambda.norm());
    // Retention rules: a pulling λ, no stiffness, or γ = 0 drop it.
    previous.lambda.z = -previous.lambda.z;
    EXPECT_EQ(toEigen(rigidContactBeginStep(row, previous, material, Transform{}, pose1,
                                            ContactEndpointInertia{}, ball, h, gamma)
                          .lambda)
                  .norm(),
              0.0);
    previous.lambda.z = -previous.lambda.z;
    const RigidContactState soft =
        rigidContactBeginStep(row, previous, ContactMaterial{0.0f, 5.0f, 0.7f}, Transform{}, pose1,
                              ContactEndpointInertia{}, ball, h, gamma);
    EXPECT_EQ(soft.normalRho, 0.0f);
    EXPECT_EQ(toEigen(soft.lambda).norm(), 0.0);
    EXPECT_EQ(toEigen(rigidContactBeginStep(row, previous, material, Transform{}, pose1,
                                            ContactEndpointInertia{}, ball, h, 0.0f)
                          .lambda)
                  .norm(),
              0.0);
  }
}

TEST(RigidContact, BeginStepOfTwoSpheresIsTheSeriesOfTheirScales) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const double m0 = rng.logUniform(0.01, 10), m1 = rng.logUniform(0.01, 10);
    const double r0 = rng.uniform(0.01, 0.2), r1 = rng.uniform(0.01, 0.2);
    const double S0 = rng.logUniform(1, 1e5), S1 = rng.logUniform(1, 1e5);
    const float h = float(rng.uniform(1e-3, 1e-2));
    const Vec3d n = roundToFloat(rng.unit());
    const Vec3d c0 = rng.vec(-1, 1), c1 = c0 + (r0 + r1 - 0.01 * r0) * n;
    const Transform pose0 = toTransform({c0, Eigen::Quaterniond(rng.rotation())});
    const Transform pose1 = toTransform({c1, Eigen::Quaterniond(rng.rotation())});
    RigidContact row;
    row.body0 = 0;
    row.body1 = 1;
    row.normal = toFloat(n);
    row.margin0 = float(r0);
    row.margin1 = float(r1);
    row.offset0 = toFloat(toDouble(pose0).q.inverse() * (r0 * n));
    row.offset1 = toFloat(toDouble(pose1).q.inverse() * (-r1 * n));
    const RigidContactState st =
        rigidContactBeginStep(row, RigidContactState{}, ContactMaterial{}, pose0, pose1,
                              sphere(m0, r0, S0), sphere(m1, r1, S1), h, 0.999f);
    const double hd = h;
    const double a = m0 / (hd * hd) + S0, b = m1 / (hd * hd) + S1;
    EXPECT_NEAR(st.normalRho, a * b / (a + b), 1e-5 * a * b / (a + b));
    // Tangent: the two 3.5/m mobilities add; S_pair is the series of S0 and S1.
    const double supportT = 1 / (hd * hd * (3.5 / m0 + 3.5 / m1));
    const double rhoT = std::max(supportT, std::min(a * b / (a + b), S0 * S1 / (S0 + S1)));
    EXPECT_NEAR(st.tangentRho, rhoT, 1e-5 * rhoT);
    EXPECT_NEAR(st.c0.x * n.x() + st.c0.y * n.y() + st.c0.z * n.z(), 0.01 * r0, 1e-6);
  }
}

TEST(RigidContact, BeginStepSwitchesOffWithoutStiffness) {
  Random rng;
  TRACE_SEED(rng);
  Scenario s = randomScenario(rng, 0.005, 0.0);
  const ContactEndpointInertia end = randomEndpoint(rng, s.frames.com[1]);
  RigidContactState previous;
  previous.lambda = 5.0f * s.row.normal;
  const RigidContactState st =
      rigidContactBeginStep(s.row, previous, ContactMaterial{0.0f, 0.0f, 1.0f}, s.startPose[0],
                            s.startPose[1], ContactEndpointInertia{}, end, 1e-3f, 0.999f);
  EXPECT_EQ(st.normalRho, 0.0f);
  EXPECT_EQ(toEigen(st.lambda).norm(), 0.0);
  // Both ends immovable: no support at all.
  const RigidContactState none =
      rigidContactBeginStep(s.row, previous, ContactMaterial{}, s.startPose[0], s.startPose[1],
                            ContactEndpointInertia{}, ContactEndpointInertia{}, 1e-3f, 0.999f);
  EXPECT_EQ(none.normalRho, 0.0f);
  EXPECT_EQ(none.tangentRho, 0.0f);
}

// ---- Dual update -------------------------------------------------------------------------------

TEST(RigidContact, DualUpdateAscendsToTheMaterialForce) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    Scenario s = randomScenario(rng, 0.004, 0.0);  // no motion
    s.frames.pose[0] = s.startPose[0];
    s.frames.pose[1] = s.startPose[1];
    s.state.ke = float(rng.logUniform(1e3, 1e5));
    s.state.normalRho = float(rng.logUniform(1e3, 1e5));
    // Frictionless: at frozen poses r_t is the float rounding of the anchors' tangential gap
    // (~1e-7 m, as C0_t or as the slip), which ρ_t (up to 1e6 N/m) would integrate into λ_t
    // over 2000 steps up to the cone; the friction's dual step is the next test's.
    s.state.mu = 0.0f;
    const double C =
        geometry(s.row, toDouble(s.frames.pose[0]), toDouble(s.frames.pose[1])).penetration;
    const AlmCoefficients alm = almCoefficients(s.state.ke, s.state.normalRho);
    // One step is the relaxed ascent s·(λ + ρC).
    const Vec3 once = rigidContactDualUpdate(s.row, s.state, s.frames);
    // (C is a float difference of skeleton points: kSlipError absolute.)
    EXPECT_NEAR(dot(once, s.row.normal), alm.s * s.state.normalRho * C,
                alm.s * s.state.normalRho * (1e-4 * C + kSlipError));
    // The fixed point is λ = K·C, where the force k_eff·C + s·λ is the material force K·C.
    for (int it = 0; it < 2000; ++it)
      s.state.lambda = rigidContactDualUpdate(s.row, s.state, s.frames);
    const double lambdaN = dot(s.state.lambda, s.row.normal);
    EXPECT_NEAR(lambdaN, double(s.state.ke) * C, 2e-3 * s.state.ke * C);
    // No tangential part beyond the float rounding of splitting λ into λ_n·n + λ_t 2000 times.
    EXPECT_LE(toEigen(s.state.lambda - float(lambdaN) * s.row.normal).norm(), 1e-4 * lambdaN);
  }
}

TEST(RigidContact, DualUpdateReleasesSeparatedRowsAndProjectsFriction) {
  Random rng;
  TRACE_SEED(rng);
  // Separated: λ_n only shrinks, to zero.
  Scenario s = randomScenario(rng, -0.002, 0.0);
  s.frames.pose[0] = s.startPose[0];
  s.frames.pose[1] = s.startPose[1];
  s.state.lambda = 10.0f * s.row.normal;
  for (int it = 0; it < 50; ++it) {
    const float before = dot(s.state.lambda, s.row.normal);
    s.state.lambda = rigidContactDualUpdate(s.row, s.state, s.frames);
    EXPECT_LE(dot(s.state.lambda, s.row.normal), before);
    EXPECT_GE(dot(s.state.lambda, s.row.normal), 0.0f);
  }
  EXPECT_EQ(toEigen(s.state.lambda).norm(), 0.0);

  // Sliding: λ_t lands on the cone μ·f_n, along λ_t + ρ_t·r_t.
  for (int trial = 0; trial < 20; ++trial) {
    Scenario t = randomScenario(rng, 0.02, 1e-3);
    t.state.mu = float(rng.uniform(0.1, 1.0));
    const Vec3 updated = rigidContactDualUpdate(t.row, t.state, t.frames);
    const Vec3d n = toEigen(t.row.normal);
    const double lambdaN = n.dot(toEigen(updated));
    const AlmCoefficients alm = almCoefficients(t.state.ke, t.state.normalRho);
    const double C =
        geometry(t.row, toDouble(t.frames.pose[0]), toDouble(t.frames.pose[1])).penetration;
    const double fn = std::max(alm.kEff * C + alm.s * lambdaN, 0.0);
    const Vec3d lambdaT = toEigen(updated) - n * lambdaN;
    const Vec3d trialT = double(t.state.tangentRho) * slip(t);
    const double slipError = kSlipError * double(t.state.tangentRho);
    const double cone = t.state.mu * fn;
    if (std::abs(trialT.norm() - cone) < slipError + 1e-4 * cone) continue;  // on the boundary
    if (trialT.norm() > cone) {
      EXPECT_NEAR(lambdaT.norm(), cone, 1e-4 * fn);
      EXPECT_LE((lambdaT.normalized() - trialT.normalized()).norm(),
                2.0 * slipError / trialT.norm() + 1e-5);
    } else {
      EXPECT_LE((lambdaT - trialT).norm(), 1e-4 * trialT.norm() + slipError);
    }
  }
}

// ---- Warm start across detections ---------------------------------------------------------------

TEST(RigidContact, WarmStartCarriesTheNormalMultiplierOntoTheNewNormal) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3d nOld = rng.unit();
    // The new normal turned by up to ~25°, as a matched row's may between detections.
    const Vec3d nNew = (nOld + 0.4 * rng.unit()).normalized();
    const Vec3d lambda = rng.uniform(-3, 8) * nOld + rng.vec(-2, 2);
    const double mu = rng.uniform(0.0, 1.0);
    const double lambdaN = lambda.dot(nOld);
    // Sticky matching: the normal part only, whatever μ is.
    const Vec3d sticky =
        toEigen(warmStartLambda(toFloat(lambda), toFloat(nOld), toFloat(nNew), float(mu), false));
    EXPECT_LE((sticky - lambdaN * nNew).norm(), 1e-5 * (1 + lambda.norm())) << trial;
    // Latest matching: plus the old tangent part without its n_new component, inside the cone.
    Vec3d t = lambda - lambdaN * nOld;
    t -= nNew * nNew.dot(t);
    const double limit = mu * std::max(lambdaN, 0.0);
    if (limit <= 0)
      t.setZero();
    else if (t.norm() > limit)
      t *= limit / t.norm();
    const Vec3d latest =
        toEigen(warmStartLambda(toFloat(lambda), toFloat(nOld), toFloat(nNew), float(mu), true));
    EXPECT_LE((latest - (lambdaN * nNew + t)).norm(), 1e-5 * (1 + lambda.norm())) << trial;
    EXPECT_LE(std::abs(latest.dot(nNew) - lambdaN), 1e-5 * (1 + lambda.norm()));
    EXPECT_LE((latest - latest.dot(nNew) * nNew).norm(), limit * (1 + 1e-5) + 1e-6);
  }
}

TEST(RigidContact, WarmStartOfAnUnturnedRowInsideTheConeIsTheWholeVector) {
  const Vec3 n{0.0f, 0.0f, 1.0f};
  const Vec3 lambda{0.3f, -0.2f, 2.0f};  // |λ_t| = 0.36 < μ·λ_n = 1
  const Vec3 latest = warmStartLambda(lambda, n, n, 0.5f, true);
  EXPECT_FLOAT_EQ(latest.x, 0.3f);
  EXPECT_FLOAT_EQ(latest.y, -0.2f);
  EXPECT_FLOAT_EQ(latest.z, 2.0f);
  const Vec3 sticky = warmStartLambda(lambda, n, n, 0.5f, false);
  EXPECT_EQ(sticky.x, 0.0f);
  EXPECT_EQ(sticky.y, 0.0f);
  EXPECT_FLOAT_EQ(sticky.z, 2.0f);
  // A pulling multiplier has no cone: only its (negative) normal part is carried, and the
  // per-step retention then drops it (rigidContactBeginStep keeps only pushing λ).
  const Vec3 pulling = warmStartLambda(Vec3{0.3f, 0.0f, -1.0f}, n, n, 0.5f, true);
  EXPECT_EQ(pulling.x, 0.0f);
  EXPECT_FLOAT_EQ(pulling.z, -1.0f);
}

// ---- Small pieces ------------------------------------------------------------------------------

TEST(RigidContact, MaterialsMixArithmeticallyAndGeometrically) {
  const ContactMaterial m =
      mixContactMaterials(ContactMaterial{1e4f, 20.0f, 1e9f}, ContactMaterial{3e4f, 0.0f, 1.0f});
  EXPECT_FLOAT_EQ(m.ke, 2e4f);
  EXPECT_FLOAT_EQ(m.kd, 10.0f);
  EXPECT_NEAR(m.mu, std::sqrt(1e9), 1.0);  // the pile's ground: effectively no slip
}

TEST(RigidContact, TangentBasisIsOrthonormal) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 1000; ++trial) {
    Vec3d nd = trial < 6 ? Vec3d::Unit(trial % 3) * (trial < 3 ? 1.0 : -1.0) : rng.unit();
    const Vec3 n = toFloat(nd);
    Vec3 t1, t2;
    tangentBasis(n, t1, t2);
    EXPECT_NEAR(length(t1), 1.0f, 1e-5f);
    EXPECT_NEAR(length(t2), 1.0f, 1e-5f);
    EXPECT_NEAR(dot(t1, t2), 0.0f, 1e-5f);
    EXPECT_NEAR(dot(t1, n), 0.0f, 1e-5f);
    EXPECT_NEAR(dot(t2, n), 0.0f, 1e-5f);
  }
}

}  // namespace
}  // namespace weft
