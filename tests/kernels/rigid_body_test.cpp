// The per-body pieces of the rigid AVBD step (kernels/rigid_body.h) against double-precision
// references: the 6×6 LDLᵀ solve equals Eigen's, the prediction is semi-implicit Euler (free
// fall in closed form, torque-free spin keeps the angular momentum to first order, kinematic
// bodies stay), the inertial block is the gradient/Hessian of the inertial energy, increments move
// the COM exactly, and the BDF1 velocity recovers a known motion.
#include "kernels/rigid_body.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cmath>
#include <numbers>

#include "kernels/runtime/one_lane_tree.h"
#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h
using Quatd = Eigen::Quaterniond;
using Mat6d = Eigen::Matrix<double, 6, 6>;
using Vec6d = Eigen::Matrix<double, 6, 1>;

Quat toFloatQuat(const Quatd& q) {
  return {float(q.x()), float(q.y()), float(q.z()), float(q.w())};
}
Quatd toEigenQuat(const Quat& q) {
  return {q.w, q.x, q.y, q.z};
}

/// exp of a world rotation vector.
Quatd rotationQuat(const Vec3d& theta) {
  const double angle = theta.norm();
  if (angle == 0.0) return Quatd::Identity();
  return Quatd(Eigen::AngleAxisd(angle, theta / angle));
}

/// Rotation vector of a unit quaternion, shortest arc.
Vec3d rotationVector(Quatd q) {
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  const Eigen::AngleAxisd aa(q);
  return aa.angle() * aa.axis();
}

Quatd randomQuat(Random& rng) {
  return Quatd(rng.rotation()).normalized();
}

/// A float-exact pose.
Transform randomPose(Random& rng) {
  return {toFloat(roundToFloat(rng.vec(-2, 2))), toFloatQuat(randomQuat(rng))};
}

/// Body-frame inertia R·diag·Rᵀ with principal moments in [0.2, 2]·scale.
Mat3d randomInertia(Random& rng, double scale) {
  const Mat3d R = rng.rotation();
  const Vec3d d = rng.vec(0.2, 2.0) * scale;
  Mat3d I = R * d.asDiagonal() * R.transpose();
  I = 0.5 * (I + I.transpose());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) I(i, j) = roundToFloat(I(i, j));
  return I;
}

/// A random symmetric PSD 3×3 stiffness of scale k.
Mat3d randomStiffness(Random& rng, double k) {
  Mat3d B;
  for (int i = 0; i < 3; ++i) B.col(i) = rng.vec(-1, 1);
  Mat3d K = k * B * B.transpose();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j) K(i, j) = K(j, i) = roundToFloat(K(i, j));
  return K;
}

Mat33 toFloatMatrix(const Mat3d& m) {
  Mat33 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = float(m(i, j));
  return r;
}

/// The symmetric 6×6 of a block in double, built from its lower triangles and H_al as the solve
/// reads it, plus the regularizer.
Mat6d denseBlock(const BodyBlock& b) {
  Mat6d A;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j) {
      A(i, j) = A(j, i) = b.hll(i, j);
      A(i + 3, j + 3) = A(j + 3, i + 3) = b.haa(i, j);
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A(i + 3, j) = A(j, i + 3) = b.hal(i, j);
  const double reg = 1e-9 * (double(b.haa(0, 0)) + b.haa(1, 1) + b.haa(2, 2)) / 3.0 + 1e-9;
  for (int i = 3; i < 6; ++i) A(i, i) += reg;
  return A;
}

/// An SPD block as the solver assembles one: inertia plus several point springs.
BodyBlock randomBlock(Random& rng) {
  const double h = rng.logUniform(1e-3, 2e-2);
  const float mass = float(rng.logUniform(1e-3, 10.0));
  const Mat3d inertia = randomInertia(rng, double(mass) * rng.logUniform(1e-3, 1.0));
  const Vec3 com = toFloat(roundToFloat(rng.vec(-0.5, 0.5)));
  const Transform pose = randomPose(rng);
  const Transform target = randomPose(rng);
  BodyBlock b = inertialBlock(pose, target, com, mass, toFloatMatrix(inertia), float(h));
  const int springs = int(rng.uniform(0, 6));
  for (int s = 0; s < springs; ++s) {
    const double k = rng.logUniform(1.0, 1e6);
    b.addPointSpring(toFloat(roundToFloat(rng.vec(-1, 1))), toFloatMatrix(randomStiffness(rng, k)),
                     toFloat(roundToFloat(rng.vec(-1, 1) * k * 1e-2)));
  }
  return b;
}

TEST(RigidBody, LdltSolveMatchesEigen) {
  Random rng;
  TRACE_SEED(rng);
  int conditioned = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const BodyBlock b = randomBlock(rng);
    const Mat6d A = denseBlock(b);
    Vec6d rhs;
    rhs << b.force.x, b.force.y, b.force.z, b.torque.x, b.torque.y, b.torque.z;
    const Vec6d expected = A.ldlt().solve(rhs);
    Vec3 dx, dtheta;
    solveBodyBlock(b, dx, dtheta);
    Vec6d got;
    got << toEigen(dx), toEigen(dtheta);
    // Forward error of a backward-stable float solve: κ(A)·ε_float. Only meaningful while the
    // float-rounded block is safely positive definite: a tiny inertia under stiff springs (cond
    // beyond ~1e7, a few in a million draws) is indefinite at float precision.
    const Eigen::SelfAdjointEigenSolver<Mat6d> eig(A);
    const double cond = eig.eigenvalues().maxCoeff() / eig.eigenvalues().minCoeff();
    if (cond > 0.0 && cond < 1e7) {
      ++conditioned;
      EXPECT_LE((got - expected).norm(), 1e-6 * cond * expected.norm() + 1e-30)
          << "trial " << trial << " cond " << cond << "\n"
          << got.transpose() << "\n"
          << expected.transpose();
    }
    // The residual is small relative to the matrix scale regardless of conditioning.
    EXPECT_LE((A * got - rhs).norm(), 1e-5 * A.norm() * got.norm() + 1e-6 * rhs.norm())
        << "trial " << trial;
  }
  EXPECT_GE(conditioned, 450);
}

TEST(RigidBody, LdltSolveReadsOnlyLowerTriangles) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const BodyBlock b = randomBlock(rng);
    BodyBlock garbage = b;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) {
        garbage.hll(i, j) = float(rng.uniform(-1e6, 1e6));
        garbage.haa(i, j) = float(rng.uniform(-1e6, 1e6));
      }
    Vec3 dx, dtheta, dxG, dthetaG;
    solveBodyBlock(b, dx, dtheta);
    solveBodyBlock(garbage, dxG, dthetaG);
    EXPECT_EQ(dx, dxG);
    EXPECT_EQ(dtheta, dthetaG);
  }
}

// A tile's tree keeps 27 words of a body block (kernels/runtime/one_lane_tree.h, TreeWords): every
// word the solve reads survives bit for bit, the upper triangles come back zero, and the sum of
// blocks kept that way solves to the bits of the full sum.
TEST(RigidBody, TreeWordsKeepWhatTheSolveReads) {
  static_assert(TreeWords<BodyBlock>::kWords == 27 && TreeWords<BodyBlock>::kPacked);
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const BodyBlock a = randomBlock(rng), b = randomBlock(rng);
    unsigned words[TreeWords<BodyBlock>::kWords];
    TreeWords<BodyBlock>::store(a, words);
    const BodyBlock kept = TreeWords<BodyBlock>::load(words);
    EXPECT_EQ(kept.force, a.force);
    EXPECT_EQ(kept.torque, a.torque);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(kept.hal(i, j), a.hal(i, j));
        EXPECT_EQ(kept.hll(i, j), j <= i ? a.hll(i, j) : 0.0f) << i << j;
        EXPECT_EQ(kept.haa(i, j), j <= i ? a.haa(i, j) : 0.0f) << i << j;
      }
    BodyBlock full = a, tree = kept;
    full += b;
    tree += b;
    Vec3 dx, dtheta, dxTree, dthetaTree;
    solveBodyBlock(full, dx, dtheta);
    solveBodyBlock(tree, dxTree, dthetaTree);
    EXPECT_EQ(dx, dxTree);
    EXPECT_EQ(dtheta, dthetaTree);
  }
}

TEST(RigidBody, FreeFallMatchesSemiImplicitEuler) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const Transform pose0 = randomPose(rng);
    const Vec3 com = toFloat(roundToFloat(rng.vec(-0.5, 0.5)));
    const Mat3d inertia = randomInertia(rng, 1.0);
    const Vec3d g(0, 0, -9.81), v0 = rng.vec(-2, 2);
    const double h = rng.uniform(1e-3, 1e-2);
    Transform pose = pose0;
    Vec3 v = toFloat(v0), w;
    const int steps = 50;
    for (int n = 1; n <= steps; ++n) {
      predictBody(pose, v, w, com, 2.0f, toFloatMatrix(inertia),
                  toFloatMatrix(Mat3d(inertia.inverse())), toFloat(g), float(h), pose, v, w);
      // v_n = v0 + n·g·h, x_n = x0 + n·h·v0 + h²·g·n(n+1)/2.
      const Vec3d vExpected = v0 + n * h * g;
      const Vec3d xExpected =
          toEigen(worldCom(pose0, com)) + n * h * v0 + h * h * g * (n * (n + 1) / 2.0);
      EXPECT_LE((toEigen(v) - vExpected).norm(), 1e-5 * (1 + vExpected.norm())) << n;
      EXPECT_LE((toEigen(worldCom(pose, com)) - xExpected).norm(), 1e-5 * (1 + xExpected.norm()));
      EXPECT_EQ(w, Vec3{});
      EXPECT_LE((toEigenQuat(pose.q).coeffs() - toEigenQuat(pose0.q).coeffs()).norm(), 1e-6);
    }
  }
}

/// World angular momentum R·I·Rᵀ·ω of a body after integrating for `duration` at step h.
Vec3d spinMomentum(const Transform& pose0, const Vec3d& w0, const Mat3d& inertia, double h,
                   double duration) {
  Transform pose = pose0;
  Vec3 v, w = toFloat(w0);
  const int steps = int(std::lround(duration / h));
  for (int n = 0; n < steps; ++n)
    predictBody(pose, v, w, Vec3{}, 1.0f, toFloatMatrix(inertia),
                toFloatMatrix(Mat3d(inertia.inverse())), Vec3{}, float(h), pose, v, w);
  const Mat3d R = toEigenQuat(pose.q).toRotationMatrix();
  return R * inertia * R.transpose() * toEigen(w);
}

TEST(RigidBody, TorqueFreeSpinConservesAngularMomentumToFirstOrder) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 10; ++trial) {
    Transform pose = randomPose(rng);
    pose.p = Vec3{};
    const Mat3d inertia = toEigen(toFloatMatrix(Mat3d(Vec3d(1.0, 2.0, 3.0).asDiagonal())));
    // Well away from the principal axes, so that the gyroscopic term matters.
    const Mat3d R0 = toEigenQuat(pose.q).toRotationMatrix();
    const Vec3d wBody(rng.sign() * rng.uniform(1, 2), rng.sign() * rng.uniform(1, 2),
                      rng.sign() * rng.uniform(1, 2));
    const Vec3d w0 = R0 * wBody;
    const Vec3d L0 = R0 * inertia * R0.transpose() * w0;
    // The error after a fixed time is O(h): halving h about halves it.
    double previous = 0.0;
    for (double h : {8e-3, 4e-3, 2e-3}) {
      const double error = (spinMomentum(pose, w0, inertia, h, 0.5) - L0).norm();
      EXPECT_LE(error, 2.0 * h * L0.norm() * w0.norm()) << "h " << h;
      if (previous > 0.0) {
        EXPECT_GT(previous / error, 1.6) << "h " << h;
        EXPECT_LT(previous / error, 2.5) << "h " << h;
      }
      previous = error;
    }
  }
}

TEST(RigidBody, KinematicBodyDoesNotMove) {
  Random rng;
  TRACE_SEED(rng);
  const Transform pose = randomPose(rng);
  const Vec3 v = toFloat(rng.vec(-1, 1)), w = toFloat(rng.vec(-1, 1));
  Transform outPose;
  Vec3 outV, outW;
  predictBody(pose, v, w, Vec3{0.1f, 0.2f, 0.3f}, 0.0f, Mat33{}, Mat33{}, Vec3{0, 0, -9.81f}, 0.01f,
              outPose, outV, outW);
  EXPECT_EQ(outPose.p, pose.p);
  EXPECT_EQ(toEigenQuat(outPose.q).coeffs(), toEigenQuat(pose.q).coeffs());
  EXPECT_EQ(outV, v);
  EXPECT_EQ(outW, w);
}

struct InertialCase {
  Transform pose, target;
  Vec3 com;
  float mass;
  Mat3d inertia;
  double h;
};

InertialCase randomInertialCase(Random& rng, double offset) {
  InertialCase c;
  c.pose = randomPose(rng);
  c.com = toFloat(roundToFloat(rng.vec(-0.5, 0.5)));
  c.mass = float(roundToFloat(rng.logUniform(0.01, 10.0)));
  c.inertia = randomInertia(rng, c.mass * 0.1);
  c.h = roundToFloat(rng.uniform(1e-3, 1e-2));
  c.target.p = toFloat(roundToFloat(toEigen(c.pose.p) + rng.vec(-offset, offset)));
  c.target.q = toFloatQuat(rotationQuat(rng.vec(-offset, offset)) * toEigenQuat(c.pose.q));
  return c;
}

/// ½(m/h²)|x − x*|² + ½(1/h²)θ_bᵀIθ_b for the body at `pose` moved by (dx, world rotation dθ
/// about its COM).
double inertialEnergy(const InertialCase& c, const Vec3d& dx, const Vec3d& dtheta) {
  const Quatd q = toEigenQuat(c.pose.q), qTarget = toEigenQuat(c.target.q);
  const Vec3d com = toEigen(c.com);
  const Vec3d x = toEigen(c.pose.p) + q * com + dx;
  const Vec3d xTarget = toEigen(c.target.p) + qTarget * com;
  const Quatd qMoved = rotationQuat(dtheta) * q;
  const Vec3d thetaBody = rotationVector(qMoved.conjugate() * qTarget);
  return 0.5 * c.mass / (c.h * c.h) * (x - xTarget).squaredNorm() +
         0.5 / (c.h * c.h) * thetaBody.dot(c.inertia * thetaBody);
}

/// Gradient of inertialEnergy at (0, 0): translation part and rotation part.
void inertialGradient(const InertialCase& c, double step, Vec3d& gx, Vec3d& gtheta) {
  for (int i = 0; i < 3; ++i) {
    Vec3d e = Vec3d::Zero();
    e[i] = step;
    gx[i] =
        (inertialEnergy(c, e, Vec3d::Zero()) - inertialEnergy(c, -e, Vec3d::Zero())) / (2 * step);
    gtheta[i] =
        (inertialEnergy(c, Vec3d::Zero(), e) - inertialEnergy(c, Vec3d::Zero(), -e)) / (2 * step);
  }
}

BodyBlock evaluate(const InertialCase& c) {
  return inertialBlock(c.pose, c.target, c.com, c.mass, toFloatMatrix(c.inertia), float(c.h));
}

TEST(RigidBody, InertialBlockIsZeroAtTarget) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    InertialCase c = randomInertialCase(rng, 0.0);
    c.target = c.pose;
    // q⁻¹q is the identity up to float rounding (~1e-7 rad).
    const double torqueTolerance = 1e-6 * c.inertia.norm() / (c.h * c.h);
    const BodyBlock b = evaluate(c);
    EXPECT_EQ(b.force, Vec3{});
    EXPECT_LE(toEigen(b.torque).norm(), torqueTolerance);
    // Also when the target quaternion is the same rotation in the other hemisphere.
    c.target.q = {-c.pose.q.x, -c.pose.q.y, -c.pose.q.z, -c.pose.q.w};
    EXPECT_LE(toEigen(evaluate(c).torque).norm(), torqueTolerance);
  }
}

TEST(RigidBody, InertialForceIsNegativeEnergyGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const double offset = 1e-2;
    const InertialCase c = randomInertialCase(rng, offset);
    Vec3d gx, gtheta;
    inertialGradient(c, 1e-6, gx, gtheta);
    const BodyBlock b = evaluate(c);
    EXPECT_LE((toEigen(b.force) + gx).norm(), 1e-4 * gx.norm() + 1e-6 * c.mass / (c.h * c.h))
        << "trial " << trial;
    // The torque is the gradient to first order in the rotation offset θ_b.
    const double angle =
        rotationVector(toEigenQuat(c.pose.q).conjugate() * toEigenQuat(c.target.q)).norm();
    EXPECT_LE((toEigen(b.torque) + gtheta).norm(), (angle + 1e-3) * gtheta.norm() + 1e-9)
        << "trial " << trial;
  }
}

TEST(RigidBody, InertialHessianIsExactAtTarget) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 30; ++trial) {
    InertialCase c = randomInertialCase(rng, 0.0);
    c.target = c.pose;
    const BodyBlock b = evaluate(c);
    // The energy is quadratic in x (any step is exact); rotations use a small step.
    const double translationStep = 1e-2, rotationStep = 1e-3;
    Mat3d hxx, htt;
    for (int j = 0; j < 3; ++j) {
      Vec3d e = Vec3d::Zero();
      e[j] = translationStep;
      InertialCase plus = c, minus = c;
      // Shift the pose (not the target) by ±e and differentiate the gradient.
      Vec3d gxp, gtp, gxm, gtm;
      plus.pose.p = toFloat(toEigen(c.pose.p) + e);
      minus.pose.p = toFloat(toEigen(c.pose.p) - e);
      inertialGradient(plus, 1e-6, gxp, gtp);
      inertialGradient(minus, 1e-6, gxm, gtm);
      hxx.col(j) = (gxp - gxm) / (2 * translationStep);
      e[j] = rotationStep;
      plus.pose = minus.pose = c.pose;
      plus.pose.q = toFloatQuat(rotationQuat(e) * toEigenQuat(c.pose.q));
      minus.pose.q = toFloatQuat(rotationQuat(-e) * toEigenQuat(c.pose.q));
      // Keep the COM fixed while rotating.
      plus.pose.p =
          toFloat(toEigen(worldCom(c.pose, c.com)) - toEigenQuat(plus.pose.q) * toEigen(c.com));
      minus.pose.p =
          toFloat(toEigen(worldCom(c.pose, c.com)) - toEigenQuat(minus.pose.q) * toEigen(c.com));
      inertialGradient(plus, 1e-6, gxp, gtp);
      inertialGradient(minus, 1e-6, gxm, gtm);
      htt.col(j) = (gtp - gtm) / (2 * rotationStep);
    }
    EXPECT_LE((toEigen(b.hll) - hxx).norm(), 1e-3 * hxx.norm()) << "trial " << trial;
    EXPECT_LE((toEigen(b.haa) - htt).norm(), 2e-2 * htt.norm()) << "trial " << trial << "\n"
                                                                << toEigen(b.haa) << "\n\n"
                                                                << htt;
    EXPECT_EQ(toEigen(b.hal), Mat3d::Zero());
  }
}

TEST(RigidBody, NewtonStepOnInertialBlockReachesTarget) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const double offset = rng.logUniform(1e-4, 1e-1);
    const InertialCase c = randomInertialCase(rng, offset);
    Vec3 dx, dtheta;
    solveBodyBlock(evaluate(c), dx, dtheta);
    const Transform moved = applyIncrement(c.pose, c.com, dx, dtheta);
    // Translation lands exactly; the rotation to second order in the offset.
    EXPECT_LE((toEigen(worldCom(moved, c.com)) - toEigen(worldCom(c.target, c.com))).norm(),
              1e-5 * (1 + toEigen(worldCom(c.target, c.com)).norm()));
    const double angle =
        rotationVector(toEigenQuat(moved.q).conjugate() * toEigenQuat(c.target.q)).norm();
    EXPECT_LE(angle, 2.0 * offset * offset * 3.0 + 1e-5) << "offset " << offset;
  }
}

TEST(RigidBody, ApplyIncrementMovesComExactlyAndRotatesToFirstOrder) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Transform pose = randomPose(rng);
    const Vec3 com = toFloat(roundToFloat(rng.vec(-0.5, 0.5)));
    const Vec3d dx = roundToFloat(rng.vec(-0.1, 0.1));
    const Vec3d dtheta = roundToFloat(rng.vec(-1, 1) * rng.logUniform(1e-5, 1e-1));
    const Transform moved = applyIncrement(pose, com, toFloat(dx), toFloat(dtheta));
    EXPECT_LE((toEigen(worldCom(moved, com)) - toEigen(worldCom(pose, com)) - dx).norm(), 1e-6);
    // normalize((Δθ/2, 1))⊗q, exactly.
    const Quatd expected =
        (Quatd(1.0, dtheta.x() / 2, dtheta.y() / 2, dtheta.z() / 2).normalized() *
         toEigenQuat(pose.q))
            .normalized();
    EXPECT_LE((toEigenQuat(moved.q).coeffs() - expected.coeffs()).norm(), 1e-6);
    // And the exponential map to third order in |Δθ| (the half-angle tangent is first order).
    const Quatd exact = rotationQuat(dtheta) * toEigenQuat(pose.q);
    EXPECT_LE(rotationVector(toEigenQuat(moved.q) * exact.conjugate()).norm(),
              std::pow(dtheta.norm(), 3) / 10.0 + 1e-6);
  }
}

TEST(RigidBody, VelocityRecoversTranslationAndRotation) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const Transform prev = randomPose(rng);
    const Vec3 com = toFloat(roundToFloat(rng.vec(-0.5, 0.5)));
    const double h = rng.uniform(1e-3, 2e-2);
    const Vec3d v = rng.vec(-3, 3);
    // Rotations per step up to 3 rad (below π: the shortest arc is the motion).
    const Vec3d w = rng.unit() * rng.uniform(0.0, 3.0) / h;
    Quatd q = rotationQuat(w * h) * toEigenQuat(prev.q);
    if (trial % 2) q.coeffs() = -q.coeffs();  // either hemisphere is the same rotation
    Transform pose;
    pose.q = toFloatQuat(q);
    pose.p = toFloat(toEigen(worldCom(prev, com)) + v * h - toEigenQuat(pose.q) * toEigen(com));
    Vec3 vOut, wOut;
    bodyVelocity(pose, prev, com, float(h), vOut, wOut);
    EXPECT_LE((toEigen(vOut) - v).norm(), 2e-6 * 4.0 / h) << "trial " << trial;
    EXPECT_LE((toEigen(wOut) - w).norm(), 1e-5 / h + 1e-5 * w.norm()) << "trial " << trial;
  }
}

TEST(RigidBody, QuaternionRotationVectorMatchesAngleAxis) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3d theta = rng.unit() * (trial < 20 ? rng.logUniform(1e-9, 1e-4)
                                                 : rng.uniform(0.0, std::numbers::pi - 1e-3));
    Quatd q = rotationQuat(theta);
    if (trial % 2) q.coeffs() = -q.coeffs();
    EXPECT_LE((toEigen(quatToRotationVector(toFloatQuat(q))) - theta).norm(),
              1e-6 * (1 + theta.norm()));
  }
}

}  // namespace
}  // namespace weft
