// ROD and BALL joints (kernels/rod_joint.h) and the compliant ALM algebra (kernels/compliant_alm.h)
// against an independent double-precision implementation of the strain measure (rigid_avbd_spec
// §5.6): u = R_pᵀ(x_c − x_p), κ_xy from the DER binormal kb = 2(t0×t1)/(1+t0·t1), κ_z the twist of
// m1 about t1 from the parallel-transported m0. Checked: the strain vanishes at the rest pose,
// twist and bend measure the angles (|κ_xy| = 2 tan(θ/2)); the bend/twist Jacobian equals central
// differences of κ under world rotations of either body, also near the fold; the block's wrench is
// −∇ of ½Σk_eff·C² (plus the λ, α, damping and Dahl terms), its Hessian is the Gauss–Newton
// Jᵀdiag(k)J, exact in translation, symmetric PSD; the duals ascend to the material force K·C.
// Configurations are built as the cable builder builds them: COM at the segment midpoint, anchors
// at (0, 0, ±L/2), identity anchor rotations, a node shared by the two anchors at rest.
#include "kernels/rod_joint.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "kernels/compliant_alm.h"
#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h
using Quatd = Eigen::Quaterniond;
using Vec6d = Eigen::Matrix<double, 6, 1>;
using Mat6d = Eigen::Matrix<double, 6, 6>;

constexpr double kPi = std::numbers::pi;

// ---- Poses in double ---------------------------------------------------------------------------

struct PoseD {
  Vec3d p;
  Quatd q;
};

PoseD toDouble(const Transform& t) {
  return {toEigen(t.p), Quatd(t.q.w, t.q.x, t.q.y, t.q.z)};
}
Transform toTransform(const PoseD& t) {
  const Quatd q = t.q.normalized();
  return {toFloat(t.p), Quat{float(q.x()), float(q.y()), float(q.z()), float(q.w())}};
}
Quatd rotationQuat(const Vec3d& theta) {
  const double angle = theta.norm();
  return angle > 0 ? Quatd(Eigen::AngleAxisd(angle, theta / angle)) : Quatd::Identity();
}
/// The pose after moving the COM by dx and turning by the world rotation vector dθ about it.
PoseD perturbed(const PoseD& pose, const Vec3d& com, const Vec3d& dx, const Vec3d& dtheta) {
  const Vec3d x = pose.q * com + pose.p + dx;
  PoseD out;
  out.q = rotationQuat(dtheta) * pose.q;
  out.p = x - out.q * com;
  return out;
}

// ---- Reference strain in double (§5.6.1, §5.6.2) ------------------------------------------------

/// Material axes of the two anchor frames: tangents (+Z) and directors (+X).
struct Axes {
  Vec3d t0, m0, t1, m1;
};

double wrapAngle(double a) {
  return a - 2 * kPi * std::round(a / (2 * kPi));
}

Vec3d perpendicular(const Vec3d& t, const Vec3d& preferred) {
  const Vec3d p = preferred - t * preferred.dot(t);
  if (p.norm() > 1e-7) return p.normalized();
  const Vec3d alt = std::abs(t.x()) > 0.9 ? Vec3d::UnitY() : Vec3d::UnitX();
  return (alt - t * alt.dot(t)).normalized();
}

Vec3d binormal(const Axes& a) {
  const Vec3d X = a.t0.cross(a.t1);
  const double D = 1 + a.t0.dot(a.t1);
  if (D <= 1e-12 && X.squaredNorm() <= 1e-12) return 20 * perpendicular(a.t0, a.m0);
  const Vec3d kb = 2 * X / std::max(D, 1e-12);
  return kb.norm() > 20 ? Vec3d(20 * kb.normalized()) : kb;
}

double twist(const Axes& a) {
  const double c = std::clamp(a.t0.dot(a.t1), -1.0, 1.0);
  Vec3d mt;
  if (1 + c > 1e-8) {
    mt = (a.m0 - (a.t0 + a.t1) * (a.m0.dot(a.t1) / (1 + c))).normalized();
  } else {
    const Vec3d X = a.t0.cross(a.t1);
    const double s = X.norm();
    const Quatd bishop = s > 1e-7 ? Quatd(Eigen::AngleAxisd(std::atan2(s, c), X / s))
                                  : Quatd(Eigen::AngleAxisd(kPi, perpendicular(a.t0, a.m0)));
    mt = (bishop * a.m0).normalized();
  }
  return std::atan2(a.t1.dot(mt.cross(a.m1)), mt.dot(a.m1));
}

/// κ relative to `rest`; the bend components are kb in the parent frame (m0, t0 × m0).
Vec3d kappa(const Axes& a, const RodRest& rest) {
  const Vec3d kb = binormal(a);
  return {a.m0.dot(kb) - rest.kbRestLocal.x, a.t0.cross(a.m0).dot(kb) - rest.kbRestLocal.y,
          wrapAngle(twist(a) - rest.twistRest)};
}

/// The strain (u, κ) as a 6-vector at double poses.
Vec6d strain(const PoseD& parent, const PoseD& child, const RodJoint& joint) {
  const PoseD anchor0 = toDouble(joint.parentAnchor), anchor1 = toDouble(joint.childAnchor);
  const Quatd qp = parent.q * anchor0.q, qc = child.q * anchor1.q;
  const Vec3d xp = parent.q * anchor0.p + parent.p, xc = child.q * anchor1.p + child.p;
  const Axes a{qp * Vec3d::UnitZ(), qp * Vec3d::UnitX(), qc * Vec3d::UnitZ(), qc * Vec3d::UnitX()};
  Vec6d s;
  s << qp.inverse() * (xc - xp), kappa(a, joint.rest);
  return s;
}

/// Absolute float rounding of a strain component at the test's poses (positions up to ~2 m, |kb|
/// up to ~3) [m or rad]; forces built from strain differences carry k·J times this.
constexpr double kStrainError = 1e-6;

// ---- Joint configurations ----------------------------------------------------------------------

/// A ROD joint between a parent and a child segment of length L as the cable builder makes them,
/// its rest from rodRest at the built poses, and current poses moved from rest by random rigid
/// motions (rotations up to `turn` rad, COM shifts up to `shift`·L).
struct JointCase {
  RodJoint joint;
  JointEnd parent, child;
  Transform restParent, restChild;
  double length = 0;
};

JointCase randomJointCase(Random& rng, double restBend, double restTwist, double turn, double shift,
                          bool offsetCom = false) {
  JointCase c;
  c.length = roundToFloat(rng.uniform(0.05, 0.5));
  const float half = float(0.5 * c.length);
  c.joint.parentAnchor.p = {0.0f, 0.0f, half};
  c.joint.childAnchor.p = {0.0f, 0.0f, -half};
  // Parent anywhere; the child's rest frame is the parent's bent about a random axis ⊥ its
  // tangent and twisted about its own tangent, with its start node on the parent's end node.
  const PoseD parent{rng.vec(-1, 1), Quatd(rng.rotation())};
  const Vec3d bendAxis = rng.unitPerpendicular(Vec3d::UnitZ());
  const Quatd childQ = parent.q * rotationQuat(rng.uniform(0, restBend) * bendAxis) *
                       rotationQuat(rng.uniform(-restTwist, restTwist) * Vec3d::UnitZ());
  const Vec3d node = parent.q * Vec3d(0, 0, c.length / 2) + parent.p;
  c.restParent = toTransform(parent);
  c.restChild = toTransform({node + childQ * Vec3d(0, 0, c.length / 2), childQ});
  c.joint.rest = rodRest(c.restParent, c.restChild, c.joint.parentAnchor, c.joint.childAnchor);
  for (int i = 0; i < 2; ++i) {
    JointEnd& end = i == 0 ? c.parent : c.child;
    end.com = offsetCom ? toFloat(roundToFloat(rng.vec(-0.3, 0.3) * c.length)) : Vec3{};
    const PoseD rest = toDouble(i == 0 ? c.restParent : c.restChild);
    end.pose = toTransform(perturbed(rest, toEigen(end.com), rng.vec(-1, 1) * shift * c.length,
                                     rng.vec(-1, 1) * turn));
  }
  return c;
}

/// The strain with body `solvingParent ? parent : child` moved by d = (dx, world dθ about its COM).
Vec6d strainAt(const JointCase& c, bool solvingParent, const Vec6d& d) {
  PoseD poses[2] = {toDouble(c.parent.pose), toDouble(c.child.pose)};
  const int side = solvingParent ? 0 : 1;
  const Vec3 com = solvingParent ? c.parent.com : c.child.com;
  poses[side] = perturbed(poses[side], toEigen(com), d.head<3>(), d.tail<3>());
  return strain(poses[0], poses[1], c.joint);
}

/// ∂(u, κ)/∂(dx, dθ) of the solved body by central differences.
Mat6d strainJacobian(const JointCase& c, bool solvingParent, double step = 1e-6) {
  Mat6d J;
  for (int k = 0; k < 6; ++k) {
    Vec6d d = Vec6d::Zero();
    d[k] = step;
    J.col(k) = (strainAt(c, solvingParent, d) - strainAt(c, solvingParent, -d)) / (2 * step);
  }
  return J;
}

/// Central-difference gradient of a function of the solved body's motion (dx, dθ).
Vec6d gradient(const std::function<double(const Vec6d&)>& f, double step = 1e-6) {
  Vec6d g;
  for (int k = 0; k < 6; ++k) {
    Vec6d d = Vec6d::Zero();
    d[k] = step;
    g[k] = (f(d) - f(-d)) / (2 * step);
  }
  return g;
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

/// The 6×6 Hessian of a unit isotropic point spring at lever r: [[I, [r]×ᵀ], [[r]×, [r]×ᵀ[r]×]].
Mat6d pointSpring(const Vec3d& r) {
  Mat3d rx;
  rx << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
  Mat6d H;
  H << Mat3d::Identity(), rx.transpose(), rx, rx.transpose() * rx;
  return H;
}

/// H_ll and H_aa symmetric, the whole 6×6 block PSD (relative to its norm).
void expectSymmetricPsdBlock(const BodyBlock& b) {
  const Mat6d H = blockMatrix(b);
  const double scale = H.norm();
  EXPECT_LE((toEigen(b.hll) - toEigen(b.hll).transpose()).norm(), 1e-6 * scale);
  EXPECT_LE((toEigen(b.haa) - toEigen(b.haa).transpose()).norm(), 1e-6 * scale);
  const Eigen::SelfAdjointEigenSolver<Mat6d> eig(0.5 * (H + H.transpose()));
  EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-5 * scale) << H;
}

/// Per-step terms for `material` with the bilateral ρ of two bodies of random mass and inertia.
RodStepTerms stepTerms(Random& rng, const RodMaterial& material, float h) {
  const float invMassP = float(1 / rng.uniform(0.01, 1.0)),
              invMassC = float(1 / rng.uniform(0.01, 1.0));
  const float traceP = float(rng.uniform(1e2, 1e4)), traceC = float(rng.uniform(1e2, 1e4));
  RodStepTerms t;
  t.alm = rodCoefficients(material, linearSupport(invMassP, invMassC, h),
                          angularSupport(traceP, traceC, h));
  return t;
}

/// k_eff per strain component (u_x, u_y, u_z, κ_x, κ_y, κ_z).
Vec6d stiffnessDiagonal(const RodCoefficients& c) {
  Vec6d k;
  k << c.shear.kEff, c.shear.kEff, c.stretch.kEff, c.bend.kEff, c.bend.kEff, c.twist.kEff;
  return k;
}

// ---- Strain measure ----------------------------------------------------------------------------

TEST(RodJoint, StrainVanishesAtRestAndMatchesDoubleReference) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const JointCase c = randomJointCase(rng, 1.5, 1.5, 0.3, 0.05);
    const RodStrain atRest = rodStrain(c.restParent, c.restChild, c.joint);
    EXPECT_LE(toEigen(atRest.u).norm(), 1e-6) << "trial " << trial;
    EXPECT_LE(toEigen(atRest.kappa).norm(), 1e-5) << "trial " << trial;
    // Away from rest, the float measure is the double one at the same (float) poses.
    const RodStrain s = rodStrain(c.parent.pose, c.child.pose, c.joint);
    const Vec6d expected = strain(toDouble(c.parent.pose), toDouble(c.child.pose), c.joint);
    EXPECT_LE((toEigen(s.u) - expected.head<3>()).norm(), 1e-6) << "trial " << trial;
    EXPECT_LE((toEigen(s.kappa) - expected.tail<3>()).norm(), 1e-5 * (1 + expected.norm()))
        << "trial " << trial << "\n"
        << toEigen(s.kappa).transpose() << "\n"
        << expected.tail<3>().transpose();
  }
}

TEST(RodJoint, TwistAboutTheTangentIsKappaZ) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const JointCase c = randomJointCase(rng, 1.0, 1.0, 0.0, 0.0);
    // Turn the child about its own tangent through the shared node.
    const double angle = trial < 50 ? rng.uniform(-0.1, 0.1) : rng.uniform(-3.0, 3.0);
    const PoseD rest = toDouble(c.restChild);
    const Vec3d tangent = rest.q * Vec3d::UnitZ();
    const Vec3d node = rest.q * toEigen(c.joint.childAnchor.p) + rest.p;
    const Quatd turn = rotationQuat(angle * tangent);
    const Transform twisted = toTransform({turn * (rest.p - node) + node, turn * rest.q});
    const RodStrain s = rodStrain(c.restParent, twisted, c.joint);
    EXPECT_NEAR(s.kappa.z, angle, 1e-5) << "trial " << trial;
    EXPECT_LE(std::hypot(s.kappa.x, s.kappa.y), 1e-5);
    EXPECT_LE(toEigen(s.u).norm(), 1e-6);
  }
}

TEST(RodJoint, BendInAPlaneIsTwoTanHalfAngle) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const JointCase c = randomJointCase(rng, 0.0, 0.0, 0.0, 0.0);  // straight at rest
    const PoseD parent = toDouble(c.restParent), rest = toDouble(c.restChild);
    const Vec3d tangent = parent.q * Vec3d::UnitZ();
    const Vec3d axis = rng.unitPerpendicular(tangent);
    // Up to the curvature cap |kb| = 20 (θ ≈ 2.94 rad); beyond it |κ| stays at 20.
    const double theta = trial < 90 ? rng.uniform(0.0, 2.9) : rng.uniform(2.96, 3.1);
    const Vec3d node = rest.q * toEigen(c.joint.childAnchor.p) + rest.p;
    const Quatd turn = rotationQuat(theta * axis);
    const Transform bent = toTransform({turn * (rest.p - node) + node, turn * rest.q});
    const RodStrain s = rodStrain(c.restParent, bent, c.joint);
    const double magnitude = std::min(2 * std::tan(theta / 2), 20.0);
    // kb = 2 tan(θ/2)·axis, expressed in the parent frame; a pure bend has no twist.
    const Vec3d expected = magnitude * (parent.q.inverse() * axis);
    const double tolerance = 1e-5 * (1 + magnitude * magnitude);
    EXPECT_NEAR(std::hypot(s.kappa.x, s.kappa.y), magnitude, tolerance) << "theta " << theta;
    EXPECT_NEAR(s.kappa.x, expected.x(), tolerance);
    EXPECT_NEAR(s.kappa.y, expected.y(), tolerance);
    // The transport divides by 1 + cos θ: float rounding of the tangents grows as 1/(1 + cos θ).
    EXPECT_NEAR(s.kappa.z, 0.0, 1e-6 * (1 + 1 / (1 + std::cos(theta)))) << "theta " << theta;
  }
}

// ---- Bend/twist Jacobian -----------------------------------------------------------------------

TEST(RodJoint, BendTwistJacobianMatchesFiniteDifferences) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const JointCase c = randomJointCase(rng, 1.5, 1.0, 0.4, 0.05, trial % 2 == 1);
    const RodFrames f =
        rodFrames(c.parent.pose, c.child.pose, c.joint.parentAnchor, c.joint.childAnchor);
    for (const bool solvingParent : {true, false}) {
      const Mat3d J = toEigen(rodBendTwistJacobian(solvingParent, f));
      // κ does not move with translations; its rotation columns are the Jacobian.
      const Mat6d fd = strainJacobian(c, solvingParent);
      EXPECT_LE((fd.bottomLeftCorner<3, 3>().norm()), 1e-8);
      const Mat3d expected = fd.bottomRightCorner<3, 3>();
      EXPECT_LE((J - expected).norm(), 1e-4 * expected.norm())
          << (solvingParent ? "parent" : "child") << " trial " << trial << "\n"
          << J << "\n\n"
          << expected;
      // The float measure itself differentiates to the same matrix (step 1e-3 rad).
      Mat3d floatFd;
      for (int k = 0; k < 3; ++k) {
        Vec3d e = Vec3d::Zero();
        e[k] = 1e-3;
        Transform poses[2][2] = {{c.parent.pose, c.child.pose}, {c.parent.pose, c.child.pose}};
        const int side = solvingParent ? 0 : 1;
        const Vec3 com = solvingParent ? c.parent.com : c.child.com;
        for (int sign = 0; sign < 2; ++sign)
          poses[sign][side] = toTransform(perturbed(toDouble(poses[sign][side]), toEigen(com),
                                                    Vec3d::Zero(), sign == 0 ? e : Vec3d(-e)));
        floatFd.col(k) = (toEigen(rodStrain(poses[0][0], poses[0][1], c.joint).kappa) -
                          toEigen(rodStrain(poses[1][0], poses[1][1], c.joint).kappa)) /
                         2e-3;
      }
      EXPECT_LE((J - floatFd).norm(), 2e-3 * expected.norm() + 1e-3) << "trial " << trial;
    }
  }
}

/// Anchor axes with the parent's at the identity and the child's tangent nearly opposite:
/// 1 + t0·t1 = D exactly in float (t1.z = D − 1 on the float grid), m1 the transported m0 turned
/// by `twistAngle` about t1.
Axes nearFold(Random& rng, double D, double twistAngle) {
  const double t1z = roundToFloat(D - 1);
  const double s = roundToFloat(std::sqrt(1 - t1z * t1z));
  const double azimuth = rng.uniform(0, 2 * kPi);
  Axes a;
  a.t0 = Vec3d::UnitZ();
  a.m0 = Vec3d::UnitX();
  a.t1 = roundToFloat(Vec3d(s * std::cos(azimuth), s * std::sin(azimuth), t1z));
  const double c = a.t0.dot(a.t1);
  const Vec3d transported = (a.m0 - (a.t0 + a.t1) * (a.m0.dot(a.t1) / (1 + c))).normalized();
  a.m1 = roundToFloat(Quatd(Eigen::AngleAxisd(twistAngle, a.t1.normalized())) * transported);
  return a;
}

TEST(RodJoint, BendTwistJacobianMatchesFiniteDifferencesNearTheFold) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    // 1 + t0·t1 from 1e-8 (on the float grid: ≥ 2⁻²⁴) to 2e-2, across the curvature cap
    // (D < 0.0197) and the directional twist row (D ≤ 0.02).
    const double D =
        std::max(roundToFloat(rng.logUniform(1e-8, 2e-2) - 1) + 1, std::ldexp(1.0, -24));
    // The cap |kb| = 20 (D = 2/101) is a kink of κ: central differences straddling it are no
    // derivative.
    if (std::abs(D - 2.0 / 101.0) < 1e-5) continue;
    const Axes a = nearFold(rng, D, rng.uniform(-2.5, 2.5));
    ASSERT_GT(1 + a.t0.dot(a.t1), 1e-8);
    RodFrames f;
    f.t0 = toFloat(a.t0);
    f.m0 = toFloat(a.m0);
    f.t1 = toFloat(a.t1);
    f.m1 = toFloat(a.m1);
    // Rotation steps well below the angle √(2D) to the fold.
    const double step = 1e-4 * std::sqrt(2 * D);
    for (const bool solvingParent : {true, false}) {
      Mat3d expected;
      for (int k = 0; k < 3; ++k) {
        Vec3d e = Vec3d::Zero();
        e[k] = step;
        Axes plus = a, minus = a;
        const Quatd qPlus = rotationQuat(e), qMinus = rotationQuat(-e);
        if (solvingParent) {
          plus.t0 = qPlus * a.t0, plus.m0 = qPlus * a.m0;
          minus.t0 = qMinus * a.t0, minus.m0 = qMinus * a.m0;
        } else {
          plus.t1 = qPlus * a.t1, plus.m1 = qPlus * a.m1;
          minus.t1 = qMinus * a.t1, minus.m1 = qMinus * a.m1;
        }
        expected.col(k) = (kappa(plus, RodRest{}) - kappa(minus, RodRest{})) / (2 * step);
      }
      const Mat3d J = toEigen(rodBendTwistJacobian(solvingParent, f));
      // Row by row: the bend rows are ~20/|t0×t1|, the twist row ~√(2/D).
      for (int row = 0; row < 3; ++row)
        EXPECT_LE((J.row(row) - expected.row(row)).norm(), 1e-3 * expected.row(row).norm())
            << (solvingParent ? "parent" : "child") << " row " << row << " D " << D << "\n"
            << J << "\n\n"
            << expected;
    }
  }
}

// ---- Block: force = −∇E, Hessian Gauss–Newton --------------------------------------------------

enum class Slot { Stretch, Shear, Bend, Twist };

RodMaterial singleSlot(Random& rng, Slot slot) {
  RodMaterial m;
  switch (slot) {
    case Slot::Stretch:
      m.stretchStiffness = float(rng.logUniform(1e2, 1e6));
      break;
    case Slot::Shear:
      m.shearStiffness = float(rng.logUniform(1e2, 1e6));
      break;
    case Slot::Bend:
      m.bendStiffness = float(rng.logUniform(1e-2, 1e3));
      break;
    case Slot::Twist:
      m.twistStiffness = float(rng.logUniform(1e-2, 1e3));
      break;
  }
  return m;
}

const char* name(Slot slot) {
  switch (slot) {
    case Slot::Stretch:
      return "stretch";
    case Slot::Shear:
      return "shear";
    case Slot::Bend:
      return "bend";
    case Slot::Twist:
      return "twist";
  }
  return "";
}

TEST(RodJoint, BlockIsMinusGradientOfTheAlmEnergyPerSlot) {
  Random rng;
  TRACE_SEED(rng);
  const float h = 1.0f / 600.0f;
  for (int trial = 0; trial < 40; ++trial) {
    for (const Slot slot : {Slot::Stretch, Slot::Shear, Slot::Bend, Slot::Twist}) {
      JointCase c = randomJointCase(rng, 1.0, 1.0, 0.3, 0.05, trial % 2 == 1);
      c.joint.material = singleSlot(rng, slot);
      RodStepTerms step = stepTerms(rng, c.joint.material, h);
      // With α = 0 and no damping the start-of-step strain must not matter.
      step.start = rodStrain(c.restParent, c.restChild, c.joint);
      step.start.u = toFloat(rng.vec(-1, 1));
      step.start.kappa = toFloat(rng.vec(-1, 1));
      const Vec6d k = stiffnessDiagonal(step.alm);
      for (const bool solvingParent : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << name(slot) << (solvingParent ? " parent" : " child") << " trial " << trial);
        const BodyBlock b =
            rodJointBlock(solvingParent, c.parent, c.child, c.joint, step, RodMultipliers{}, h);
        const auto energy = [&](const Vec6d& d) {
          const Vec6d C = strainAt(c, solvingParent, d);
          return 0.5 * C.dot(k.asDiagonal() * C);
        };
        const Vec6d expected = -gradient(energy);
        const Mat6d J = strainJacobian(c, solvingParent);
        EXPECT_LE((wrench(b) - expected).norm(),
                  1e-3 * expected.norm() + kStrainError * k.maxCoeff() * J.norm())
            << wrench(b).transpose() << "\n"
            << expected.transpose();
        // Gauss–Newton: Jᵀdiag(k)J with J = ∂(u, κ)/∂(x, θ).
        const Mat6d gaussNewton = J.transpose() * k.asDiagonal() * J;
        EXPECT_LE((blockMatrix(b) - gaussNewton).norm(), 1e-3 * gaussNewton.norm())
            << blockMatrix(b) << "\n\n"
            << gaussNewton;
        expectSymmetricPsdBlock(b);
        // Stretch and shear forces are linear in the body's translation: H_ll = −∂f/∂x exactly.
        if (slot == Slot::Stretch || slot == Slot::Shear) {
          const double dx = 1e-2 * c.length;
          Mat3d dForce;
          for (int i = 0; i < 3; ++i) {
            JointEnd plus = solvingParent ? c.parent : c.child, minus = plus;
            plus.pose.p[i] += float(dx);
            minus.pose.p[i] -= float(dx);
            const BodyBlock bp =
                solvingParent
                    ? rodJointBlock(true, plus, c.child, c.joint, step, RodMultipliers{}, h)
                    : rodJointBlock(false, c.parent, plus, c.joint, step, RodMultipliers{}, h);
            const BodyBlock bm =
                solvingParent
                    ? rodJointBlock(true, minus, c.child, c.joint, step, RodMultipliers{}, h)
                    : rodJointBlock(false, c.parent, minus, c.joint, step, RodMultipliers{}, h);
            dForce.col(i) = (toEigen(bp.force) - toEigen(bm.force)) /
                            (double(plus.pose.p[i]) - double(minus.pose.p[i]));
          }
          EXPECT_LE((toEigen(b.hll) + dForce).norm(), 1e-4 * dForce.norm())
              << toEigen(b.hll) << "\n\n"
              << -dForce;
        }
      }
    }
  }
}

TEST(RodJoint, BlockWithAllSlotsMultipliersAndStabilization) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    const float h = float(rng.uniform(1e-3, 1e-2));
    JointCase c = randomJointCase(rng, 1.0, 1.0, 0.3, 0.05, trial % 2 == 1);
    RodMaterial& m = c.joint.material;
    m.stretchStiffness = float(rng.logUniform(1e2, 1e6));
    m.shearStiffness = float(rng.logUniform(1e2, 1e6));
    m.bendStiffness = float(rng.logUniform(1e-2, 1e3));
    m.twistStiffness = float(rng.logUniform(1e-2, 1e3));
    RodStepTerms step = stepTerms(rng, m, h);
    step.alpha = float(rng.uniform(0, 1));
    step.start.u = toFloat(rng.vec(-1, 1) * 1e-2 * c.length);
    step.start.kappa = toFloat(rng.vec(-0.1, 0.1));
    RodMultipliers lambda;
    lambda.lin = toFloat(rng.vec(-1, 1) * double(m.stretchStiffness) * 1e-2 * c.length);
    lambda.ang = toFloat(rng.vec(-1, 1) * double(m.bendStiffness) * 0.1);
    const Vec6d k = stiffnessDiagonal(step.alm);
    Vec6d C0, sLambda;
    C0 << toEigen(step.start.u), toEigen(step.start.kappa);
    const RodCoefficients& alm = step.alm;
    sLambda << alm.shear.s * lambda.lin.x, alm.shear.s * lambda.lin.y, alm.stretch.s * lambda.lin.z,
        alm.bend.s * lambda.ang.x, alm.bend.s * lambda.ang.y, alm.twist.s * lambda.ang.z;
    for (const bool solvingParent : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << (solvingParent ? "parent" : "child") << " trial " << trial);
      const BodyBlock b = rodJointBlock(solvingParent, c.parent, c.child, c.joint, step, lambda, h);
      // E = Σ ½k_i(C_i − αC0_i)² + s_iλ_i·C_i.
      const auto energy = [&](const Vec6d& d) {
        const Vec6d C = strainAt(c, solvingParent, d);
        const Vec6d Cs = C - double(step.alpha) * C0;
        return 0.5 * Cs.dot(k.asDiagonal() * Cs) + sLambda.dot(C);
      };
      const Vec6d expected = -gradient(energy);
      const Mat6d J = strainJacobian(c, solvingParent);
      EXPECT_LE((wrench(b) - expected).norm(),
                1e-3 * expected.norm() + kStrainError * k.maxCoeff() * J.norm())
          << wrench(b).transpose() << "\n"
          << expected.transpose();
      // The Gauss–Newton Hessian, except that the parent's isotropic linear part k_iso·I turns
      // about the parent's own anchor instead of the child's (the PSD split of §5.6.1).
      Mat6d expectedH = J.transpose() * k.asDiagonal() * J;
      if (solvingParent) {
        const PoseD parent = toDouble(c.parent.pose), child = toDouble(c.child.pose);
        const Vec3d com = parent.q * toEigen(c.parent.com) + parent.p;
        const Vec3d xp = parent.q * toEigen(c.joint.parentAnchor.p) + parent.p;
        const Vec3d xc = child.q * toEigen(c.joint.childAnchor.p) + child.p;
        expectedH += std::min(k[0], k[2]) * (pointSpring(xp - com) - pointSpring(xc - com));
      }
      EXPECT_LE((blockMatrix(b) - expectedH).norm(), 1e-3 * expectedH.norm());
      expectSymmetricPsdBlock(b);
    }
  }
}

TEST(RodJoint, ParentHessianSplitIsGaussNewtonWhenTheAnchorsCoincide) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    // Only rotations about the shared node: the anchors stay together.
    JointCase c = randomJointCase(rng, 1.0, 1.0, 0.0, 0.0, trial % 2 == 1);
    c.joint.material.stretchStiffness = float(rng.logUniform(1e2, 1e6));
    c.joint.material.shearStiffness = float(rng.logUniform(1e2, 1e6));
    const RodStepTerms step = stepTerms(rng, c.joint.material, 1e-3f);
    const BodyBlock b =
        rodJointBlock(true, c.parent, c.child, c.joint, step, RodMultipliers{}, 1e-3f);
    const Mat6d J = strainJacobian(c, true);
    const Mat6d gaussNewton = J.transpose() * stiffnessDiagonal(step.alm).asDiagonal() * J;
    EXPECT_LE((blockMatrix(b) - gaussNewton).norm(), 1e-3 * gaussNewton.norm());
  }
}

TEST(RodJoint, DampingIsMinusGradientOfTheRayleighPotential) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    for (const Slot slot : {Slot::Stretch, Slot::Shear, Slot::Bend, Slot::Twist}) {
      const float h = float(rng.uniform(1e-3, 1e-2));
      JointCase c = randomJointCase(rng, 1.0, 1.0, 0.3, 0.05, trial % 2 == 1);
      RodMaterial& m = c.joint.material;  // damping only: k_eff = 0
      const float kd = float(rng.logUniform(1e-2, 10.0));
      Vec6d kdDiagonal = Vec6d::Zero();
      switch (slot) {
        case Slot::Stretch:
          m.stretchDamping = kd, kdDiagonal[2] = kd;
          break;
        case Slot::Shear:
          m.shearDamping = kd, kdDiagonal[0] = kdDiagonal[1] = kd;
          break;
        case Slot::Bend:
          m.bendDamping = kd, kdDiagonal[3] = kdDiagonal[4] = kd;
          break;
        case Slot::Twist:
          m.twistDamping = kd, kdDiagonal[5] = kd;
          break;
      }
      // The start of the step: both bodies a little elsewhere.
      JointCase start = c;
      for (JointEnd* end : {&start.parent, &start.child})
        end->pose = toTransform(perturbed(toDouble(end->pose), toEigen(end->com),
                                          rng.vec(-1, 1) * 0.02 * c.length, rng.vec(-0.05, 0.05)));
      RodStepTerms step = stepTerms(rng, m, h);
      step.start = rodStrain(start.parent.pose, start.child.pose, c.joint);
      Vec6d C0;
      C0 << toEigen(step.start.u), toEigen(step.start.kappa);
      for (const bool solvingParent : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << name(slot) << (solvingParent ? " parent" : " child") << " trial " << trial);
        const BodyBlock b =
            rodJointBlock(solvingParent, c.parent, c.child, c.joint, step, RodMultipliers{}, h);
        // ½(kd/h)|C − C_start|², the dissipation potential of one backward-Euler step.
        const auto potential = [&](const Vec6d& d) {
          const Vec6d dC = strainAt(c, solvingParent, d) - C0;
          return 0.5 / double(h) * dC.dot(kdDiagonal.asDiagonal() * dC);
        };
        const Vec6d expected = -gradient(potential);
        const Mat6d J = strainJacobian(c, solvingParent);
        EXPECT_LE((wrench(b) - expected).norm(),
                  1e-3 * expected.norm() + kStrainError * kd / h * J.norm())
            << wrench(b).transpose() << "\n"
            << expected.transpose();
        const Mat6d gaussNewton = J.transpose() * (kdDiagonal / double(h)).asDiagonal() * J;
        EXPECT_LE((blockMatrix(b) - gaussNewton).norm(), 1e-3 * gaussNewton.norm());
        expectSymmetricPsdBlock(b);
      }
    }
  }
}

TEST(RodJoint, DahlStressIsAConstantGeneralizedForceAndCFricOnlyStiffens) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 40; ++trial) {
    JointCase c = randomJointCase(rng, 1.0, 1.0, 0.3, 0.05);
    RodStepTerms step;  // no stiffness at all: only the Dahl terms act
    step.dahlSigma0 = toFloat(rng.vec(-1, 1));
    step.dahlCFric = toFloat(rng.vec(0, 10));
    const Vec3d sigma0 = toEigen(step.dahlSigma0), cFric = toEigen(step.dahlCFric);
    for (const bool solvingParent : {true, false}) {
      const BodyBlock b =
          rodJointBlock(solvingParent, c.parent, c.child, c.joint, step, RodMultipliers{}, 0.01f);
      const auto work = [&](const Vec6d& d) {
        return sigma0.dot(strainAt(c, solvingParent, d).tail<3>());
      };
      const Vec6d expected = -gradient(work);
      EXPECT_LE((wrench(b) - expected).norm(), 1e-3 * expected.norm()) << "trial " << trial;
      const Mat3d J = strainJacobian(c, solvingParent).bottomRightCorner<3, 3>();
      const Mat3d expectedHaa = J.transpose() * cFric.asDiagonal() * J;
      EXPECT_LE((toEigen(b.haa) - expectedHaa).norm(), 1e-3 * expectedHaa.norm());
      EXPECT_EQ(toEigen(b.hll).norm(), 0.0);
      EXPECT_EQ(toEigen(b.hal).norm(), 0.0);
    }
  }
}

TEST(RodJoint, NothingActsWithoutStiffnessDampingOrDahl) {
  Random rng;
  TRACE_SEED(rng);
  const JointCase c = randomJointCase(rng, 1.0, 1.0, 0.3, 0.05);
  RodMultipliers lambda;
  lambda.lin = {1.0f, 2.0f, 3.0f};
  lambda.ang = {1.0f, 2.0f, 3.0f};
  for (const bool solvingParent : {true, false}) {
    const BodyBlock b =
        rodJointBlock(solvingParent, c.parent, c.child, c.joint, RodStepTerms{}, lambda, 0.01f);
    EXPECT_EQ(wrench(b).norm(), 0.0);
    EXPECT_EQ(blockMatrix(b).norm(), 0.0);
  }
}

// ---- Duals -------------------------------------------------------------------------------------

TEST(RodJoint, DualsAscendToTheMaterialForce) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    RodMaterial m;
    m.stretchStiffness = float(rng.logUniform(1e2, 1e6));
    m.shearStiffness = float(rng.logUniform(1e2, 1e6));
    m.bendStiffness = float(rng.logUniform(1e-2, 1e3));
    m.twistStiffness = float(rng.logUniform(1e-2, 1e3));
    RodStepTerms step = stepTerms(rng, m, 1e-3f);
    step.alpha = trial % 2 ? float(rng.uniform(0, 1)) : 0.0f;
    step.start.u = toFloat(rng.vec(-1e-3, 1e-3));
    step.start.kappa = toFloat(rng.vec(-0.1, 0.1));
    RodStrain current;
    current.u = toFloat(rng.vec(-1e-2, 1e-2));
    current.kappa = toFloat(rng.vec(-0.5, 0.5));
    RodMultipliers lambda;
    for (int it = 0; it < 100; ++it) rodJointDuals(current, step, lambda);
    const double K[6] = {m.shearStiffness, m.shearStiffness, m.stretchStiffness,
                         m.bendStiffness,  m.bendStiffness,  m.twistStiffness};
    const AlmCoefficients* alm[6] = {&step.alm.shear, &step.alm.shear, &step.alm.stretch,
                                     &step.alm.bend,  &step.alm.bend,  &step.alm.twist};
    for (int i = 0; i < 6; ++i) {
      const double C = i < 3 ? current.u[i] - double(step.alpha) * step.start.u[i]
                             : current.kappa[i - 3] - double(step.alpha) * step.start.kappa[i - 3];
      const double l = i < 3 ? lambda.lin[i] : lambda.ang[i - 3];
      // C − αC0 is formed in float: its rounding is relative to the operands.
      const double operands =
          i < 3 ? std::abs(current.u[i]) + std::abs(step.start.u[i])
                : std::abs(current.kappa[i - 3]) + std::abs(step.start.kappa[i - 3]);
      const double tolerance = K[i] * (1e-5 * std::abs(C) + 2e-7 * operands);
      EXPECT_NEAR(l, K[i] * C, tolerance) << "component " << i;
      // The primal force at the fixed point is the material force K·C.
      EXPECT_NEAR(alm[i]->kEff * C + alm[i]->s * l, K[i] * C, tolerance);
    }
  }
}

TEST(RodJoint, CoefficientsFollowTheBilateralPolicy) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    RodMaterial m;
    m.stretchStiffness = float(rng.logUniform(1e2, 1e6));
    m.bendStiffness = float(rng.logUniform(1e-2, 1e3));  // shear and twist off
    const float linear = float(rng.logUniform(1, 1e8)), angular = float(rng.logUniform(1e-2, 1e4));
    const RodCoefficients c = rodCoefficients(m, linear, angular);
    const double rhoStretch = std::max(double(linear), 9.0 * m.stretchStiffness);
    const double rhoBend = std::max(double(angular), 9.0 * m.bendStiffness);
    EXPECT_NEAR(c.stretch.kEff, m.stretchStiffness * rhoStretch / (m.stretchStiffness + rhoStretch),
                1e-6 * m.stretchStiffness);
    EXPECT_NEAR(c.bend.kEff, m.bendStiffness * rhoBend / (m.bendStiffness + rhoBend),
                1e-6 * m.bendStiffness);
    EXPECT_GE(c.stretch.kEff, 0.9f * m.stretchStiffness * (1 - 1e-6f));
    EXPECT_GE(c.bend.kEff, 0.9f * m.bendStiffness * (1 - 1e-6f));
    EXPECT_EQ(c.shear.kEff, 0.0f);
    EXPECT_EQ(c.shear.s, 0.0f);
    EXPECT_EQ(c.twist.kEff, 0.0f);
    // Retention scales the groups with stiffness and clears the others.
    RodMultipliers lambda{{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}};
    retainRodMultipliers(m, 0.5f, lambda);
    EXPECT_EQ(lambda.lin, (Vec3{0.0f, 0.0f, 1.5f}));
    EXPECT_EQ(lambda.ang, (Vec3{2.0f, 2.5f, 0.0f}));
  }
}

// ---- BALL joint --------------------------------------------------------------------------------

TEST(BallJoint, ForceIsMinusGradientAndHllIsIsotropic) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const float h = float(rng.uniform(1e-3, 1e-2));
    JointEnd ends[2];
    for (JointEnd& e : ends) {
      e.pose = toTransform({rng.vec(-1, 1), Quatd(rng.rotation())});
      e.com = toFloat(roundToFloat(rng.vec(-0.2, 0.2)));
    }
    const Vec3 anchorP = toFloat(roundToFloat(rng.vec(-0.3, 0.3)));
    // The child anchor near the parent's: a small residual C.
    const Vec3d xp = toDouble(ends[0].pose).q * toEigen(anchorP) + toEigen(ends[0].pose.p);
    const PoseD child = toDouble(ends[1].pose);
    const Vec3 anchorC =
        toFloat(roundToFloat(child.q.inverse() * (xp + rng.vec(-1e-2, 1e-2) - child.p)));
    const float K = float(rng.logUniform(1e3, 1e6));
    const AlmCoefficients alm = almCoefficients(K, bilateralRho(linearSupport(2.0f, 3.0f, h), K));
    const float damping = trial % 2 ? float(rng.uniform(0, 50)) : 0.0f;
    const float alpha = trial % 3 ? 0.0f : float(rng.uniform(0, 1));
    const Vec3 c0 = toFloat(rng.vec(-1e-2, 1e-2)), lambda = toFloat(rng.vec(-100, 100));
    const auto residual = [&](int side, const Vec6d& d) {
      PoseD poses[2] = {toDouble(ends[0].pose), toDouble(ends[1].pose)};
      poses[side] = perturbed(poses[side], toEigen(ends[side].com), d.head<3>(), d.tail<3>());
      return Vec3d((poses[1].q * toEigen(anchorC) + poses[1].p) -
                   (poses[0].q * toEigen(anchorP) + poses[0].p));
    };
    EXPECT_LE((toEigen(ballJointResidual(ends[0].pose, ends[1].pose, anchorP, anchorC)) -
               residual(0, Vec6d::Zero()))
                  .norm(),
              1e-6);
    for (int side = 0; side < 2; ++side) {
      const BodyBlock b = ballJointBlock(side == 0, ends[0], ends[1], anchorP, anchorC, alm,
                                         damping, alpha, c0, lambda, h);
      // ½k_eff|C − αC0|² + sλ·C + ½(kd/h)|C − C0|².
      const auto energy = [&](const Vec6d& d) {
        const Vec3d C = residual(side, d);
        const Vec3d Cs = C - double(alpha) * toEigen(c0), dC = C - toEigen(c0);
        return 0.5 * double(alm.kEff) * Cs.squaredNorm() + double(alm.s) * toEigen(lambda).dot(C) +
               0.5 * double(damping) / double(h) * dC.squaredNorm();
      };
      const Vec6d expected = -gradient(energy);
      const Mat3d hll = (double(alm.kEff) + double(damping) / double(h)) * Mat3d::Identity();
      EXPECT_LE((wrench(b) - expected).norm(),
                1e-3 * expected.norm() + kStrainError * hll(0, 0) * (1 + 2 * 0.5))
          << "side " << side;
      EXPECT_LE((toEigen(b.hll) - hll).norm(), 1e-6 * hll.norm());
      const Mat6d J = [&] {
        Mat6d j = Mat6d::Zero();
        for (int k = 0; k < 6; ++k) {
          Vec6d d = Vec6d::Zero();
          d[k] = 1e-6;
          j.block<3, 1>(0, k) = (residual(side, d) - residual(side, -d)) / 2e-6;
        }
        return j;
      }();
      const Mat6d gaussNewton = hll(0, 0) * J.transpose() * J;
      EXPECT_LE((blockMatrix(b) - gaussNewton).norm(), 1e-3 * gaussNewton.norm());
      expectSymmetricPsdBlock(b);
    }
    // The duals ascend to λ = K·(C − αC0).
    const Vec3 C = ballJointResidual(ends[0].pose, ends[1].pose, anchorP, anchorC);
    Vec3 l = lambda;
    for (int it = 0; it < 100; ++it) ballJointDuals(C, c0, alm, alpha, l);
    const Vec3d target = double(K) * (toEigen(C) - double(alpha) * toEigen(c0));
    EXPECT_LE((toEigen(l) - target).norm(), 1e-5 * target.norm() + 1e-6 * K);
  }
}

// ---- Compliant ALM algebra ---------------------------------------------------------------------

/// |a − b| within `relative` of |b|, or both below the smallest float subnormal.
void expectClose(double a, double b, double relative) {
  EXPECT_LE(std::abs(a - b), relative * std::abs(b) + 1.5e-45) << a << " vs " << b;
}

TEST(CompliantAlm, CoefficientsAreAccurateOverFiftyDecades) {
  Random rng;
  TRACE_SEED(rng);
  std::vector<std::pair<float, float>> cases = {
      {1e30f, 1e-30f}, {1e-30f, 1e30f}, {1e30f, 1e30f}, {1e-30f, 1e-30f}, {1.0f, 1.0f}};
  for (int i = 0; i < 2000; ++i)
    cases.push_back({float(rng.logUniform(1e-30, 1e30)), float(rng.logUniform(1e-30, 1e30))});
  for (const auto& [K, rho] : cases) {
    const AlmCoefficients c = almCoefficients(K, rho);
    SCOPED_TRACE(::testing::Message() << "K " << K << " rho " << rho);
    ASSERT_TRUE(std::isfinite(c.s) && std::isfinite(c.a) && std::isfinite(c.kEff));
    const double k = K, r = rho;
    expectClose(c.s, k / (k + r), 1e-6);
    expectClose(c.a, r / (k + r), 1e-6);
    expectClose(c.kEff, k * r / (k + r), 1e-6);
    expectClose(double(c.s) + double(c.a), 1.0, 1e-6);
    // The product identities hold wherever the factor is a normal float (a = ρ/K = 1e-60 is not).
    constexpr float kNormal = std::numeric_limits<float>::min();
    if (c.s >= kNormal) expectClose(c.kEff, double(c.s) * r, 1e-6);
    if (c.a >= kNormal) expectClose(c.kEff, double(c.a) * k, 1e-6);
    EXPECT_LE(c.kEff, std::min(K, rho));
  }
}

TEST(CompliantAlm, RowIsOffWithoutStiffnessOrMetric) {
  for (const auto& [K, rho] : {std::pair{0.0f, 1.0f},
                               {1.0f, 0.0f},
                               {-1.0f, 1.0f},
                               {1.0f, -1.0f},
                               {std::numeric_limits<float>::quiet_NaN(), 1.0f}}) {
    const AlmCoefficients c = almCoefficients(K, rho);
    EXPECT_EQ(c.s, 0.0f);
    EXPECT_EQ(c.a, 1.0f);
    EXPECT_EQ(c.kEff, 0.0f);
    EXPECT_EQ(relaxedAscent(5.0f, 2.0f, c), 0.0f);
    EXPECT_EQ(almForce(2.0f, 5.0f, c), 0.0f);
  }
  EXPECT_EQ(bilateralRho(100.0f, 0.0f), 0.0f);
  EXPECT_EQ(bilateralRho(100.0f, 50.0f), 450.0f);
  EXPECT_EQ(bilateralRho(1000.0f, 50.0f), 1000.0f);
  EXPECT_FLOAT_EQ(linearSupport(1.0f, 3.0f, 0.5f), 1.0f);
  EXPECT_FLOAT_EQ(angularSupport(1.0f, 2.0f, 0.5f), 4.0f);
  EXPECT_EQ(linearSupport(0.0f, 0.0f, 0.5f), 0.0f);
  EXPECT_EQ(angularSupport(0.0f, 0.0f, 0.5f), 0.0f);
}

TEST(CompliantAlm, RelaxedAscentIsScaledAscentWithFixedPointKC) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 2000; ++trial) {
    const float K = float(rng.logUniform(1e-10, 1e10)), rho = float(rng.logUniform(1e-10, 1e10));
    const AlmCoefficients c = almCoefficients(K, rho);
    const float C = float(rng.uniform(-1, 1)), lambda = float(rng.uniform(-1, 1) * K);
    // One step is s·(λ + ρC), evaluated without forming ρC.
    const double expected = double(c.s) * (double(lambda) + double(rho) * C);
    EXPECT_LE(std::abs(relaxedAscent(lambda, C, c) - expected),
              1e-6 * (std::abs(double(c.s) * lambda) + std::abs(double(c.kEff) * C)) + 1e-38);
    // K·C is a fixed point, where the primal force is the material force.
    const float fixed = K * C;
    EXPECT_LE(std::abs(relaxedAscent(fixed, C, K, rho) - fixed), 1e-6 * std::abs(fixed) + 1e-38);
    EXPECT_LE(std::abs(almForce(C, fixed, c) - fixed), 1e-6 * std::abs(fixed) + 1e-38);
  }
  // Iterating from zero converges to it at the rate s per step.
  for (int trial = 0; trial < 100; ++trial) {
    const float K = float(rng.logUniform(1e-3, 1e6));
    const float rho = K * float(rng.logUniform(0.1, 1e3));  // s ≤ 0.91
    const float C = float(rng.uniform(-1, 1));
    float lambda = 0.0f;
    for (int it = 0; it < 400; ++it) lambda = relaxedAscent(lambda, C, K, rho);
    EXPECT_NEAR(lambda, double(K) * C, 1e-5 * K * std::abs(C) + 1e-30);
  }
}

}  // namespace
}  // namespace weft
