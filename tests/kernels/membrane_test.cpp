// Stable Neo-Hookean membrane and its FᵀF-rate damping (kernels/membrane.h) against independent
// double-precision Eigen references of the energy and the dissipation potential: forces are
// their negative gradients, the Hessian block is their exact second derivative where the spec
// says it is (stretched regime s ≥ 0; damping at C = C_prev), symmetric PSD everywhere.
#include "kernels/membrane.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <functional>

#include "kernels/triangle_geometry.h"
#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h
using Triangle = std::array<Vec3d, 3>;

/// Rest triangle with float rest data computed by the builder's triangleRestData().
struct RestTriangle {
  Triangle x;  // rest positions, double copies of the float positions
  Mat22 restInverse;
  float area = 0.0f;
};

RestTriangle randomRestTriangle(Random& rng) {
  for (;;) {
    const double scale = rng.uniform(0.05, 1.0);
    Triangle x{rng.vec(-scale, scale), rng.vec(-scale, scale), rng.vec(-scale, scale)};
    // Well-shaped triangles only: all angles above ~15 degrees.
    bool good = true;
    for (int i = 0; i < 3; ++i) {
      const Vec3d a = x[(i + 1) % 3] - x[i], b = x[(i + 2) % 3] - x[i];
      if (a.cross(b).norm() < 0.25 * a.norm() * b.norm()) good = false;
    }
    if (!good) continue;
    RestTriangle t;
    for (int i = 0; i < 3; ++i) t.x[i] = roundToFloat(x[i]);
    if (!triangleRestData(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), t.restInverse, t.area)) {
      continue;
    }
    return t;
  }
}

/// x = R·(s·rest + small noise) + t: stretched by s in every direction (J ≈ s²).
Triangle deform(Random& rng, const Triangle& rest, double stretch, double noise) {
  const Mat3d R = rng.rotation();
  const Vec3d t = rng.vec(-1, 1);
  const double edge = (rest[1] - rest[0]).norm();
  Triangle x;
  for (int i = 0; i < 3; ++i) x[i] = R * (stretch * rest[i] + rng.vec(-noise, noise) * edge) + t;
  return x;
}

/// x = A·rest + t with A = R·diag(s1, s2, s3)·Q, singular values in [lo, hi]: anisotropic
/// stretch plus shear in the triangle's plane (f0·f1 ≠ 0 in general).
Triangle deformAnisotropic(Random& rng, const Triangle& rest, double lo, double hi) {
  const Mat3d A =
      rng.rotation() *
      Eigen::Vector3d(rng.uniform(lo, hi), rng.uniform(lo, hi), rng.uniform(lo, hi)).asDiagonal() *
      rng.rotation();
  const Vec3d t = rng.vec(-1, 1);
  Triangle x;
  for (int i = 0; i < 3; ++i) x[i] = A * rest[i] + t;
  return x;
}

Triangle rigidMotion(Random& rng, const Triangle& x) {
  const Mat3d R = rng.rotation();
  const Vec3d t = rng.vec(-1, 1);
  Triangle y;
  for (int i = 0; i < 3; ++i) y[i] = R * x[i] + t;
  return y;
}

Triangle toFloatPrecision(const Triangle& x) {
  Triangle y;
  for (int i = 0; i < 3; ++i) y[i] = roundToFloat(x[i]);
  return y;
}

// ---- Double-precision reference (cloth_vbd_spec §5.3, written in matrix form) -----------------

struct Material {
  double ke, ka, kd, dt;
};

Eigen::Matrix<double, 3, 2> deformationGradient(const Triangle& x, const Mat22& restInverse) {
  Eigen::Matrix<double, 3, 2> ds;
  ds.col(0) = x[1] - x[0];
  ds.col(1) = x[2] - x[0];
  Eigen::Matrix2d d;
  d << restInverse.m00, restInverse.m01, restInverse.m10, restInverse.m11;
  return ds * d;
}

double referenceEnergy(const Triangle& x, const RestTriangle& rest, const Material& m) {
  const double mu = m.ke, lambda = m.ke + m.ka;
  const double lambdaSafe = (lambda < 0 ? -1.0 : 1.0) * std::max(std::abs(lambda), 1e-6);
  const double alpha = 1.0 + mu / lambdaSafe;
  const Eigen::Matrix<double, 3, 2> F = deformationGradient(x, rest.restInverse);
  const Eigen::Matrix2d C = F.transpose() * F;
  const double J = std::sqrt(std::max(C.determinant(), 1e-20));
  return rest.area * (0.5 * mu * (C.trace() - 2.0) + 0.5 * lambda * (J - alpha) * (J - alpha));
}

double referenceDamping(const Triangle& x, const Triangle& p, const RestTriangle& rest,
                        const Material& m) {
  const Eigen::Matrix<double, 3, 2> F = deformationGradient(x, rest.restInverse);
  const Eigen::Matrix<double, 3, 2> Fp = deformationGradient(p, rest.restInverse);
  const Eigen::Matrix2d dC = F.transpose() * F - Fp.transpose() * Fp;
  return rest.area * m.kd / (2.0 * m.dt) * dC.squaredNorm();
}

using Energy = std::function<double(const Triangle&)>;

ForceHessian evaluate(int slot, const Triangle& x, const Triangle& p, const RestTriangle& rest,
                      const Material& m) {
  return membraneForceHessian(slot, toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(p[0]),
                              toFloat(p[1]), toFloat(p[2]), rest.restInverse, rest.area,
                              float(m.ke), float(m.ka), float(m.kd), float(m.dt));
}

Material randomMaterial(Random& rng) {
  return {rng.uniform(1e2, 1e4), rng.uniform(1e2, 1e4), rng.uniform(0.1, 10.0),
          rng.uniform(1e-3, 1e-2)};
}

TEST(Membrane, ForceIsNegativeEnergyGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    Material m = randomMaterial(rng);
    m.kd = 0.0;
    // Stretched and compressed configurations alike (the force is exact in both).
    const Triangle x = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const double h = 1e-6 * (rest.x[1] - rest.x[0]).norm();
    const Energy energy = [&](const Triangle& y) { return referenceEnergy(y, rest, m); };
    std::array<Vec3d, 3> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 3; ++slot) {
      expected[slot] = -finiteDifferenceGradient(energy, x, slot, h);
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 3; ++slot) {
      const Vec3d force = toEigen(evaluate(slot, x, x, rest, m).force);
      EXPECT_LE((force - expected[slot]).norm(), 2e-3 * scale)
          << "trial " << trial << " slot " << slot << "\n"
          << force.transpose() << "\n"
          << expected[slot].transpose();
    }
  }
}

TEST(Membrane, EnergyMatchesReference) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    const Triangle x = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const double expected = referenceEnergy(x, rest, m);
    const float energy = membraneEnergy(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]),
                                        rest.restInverse, rest.area, float(m.ke), float(m.ka));
    // Relative to the energy of a comparable strain, so that near-zero energies are not noise.
    const double scale = rest.area * (m.ke + m.ka);
    EXPECT_NEAR(energy, expected, 1e-4 * (std::abs(expected) + scale)) << "trial " << trial;
  }
}

TEST(Membrane, HessianIsExactSecondDerivativeWhenStretched) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 30; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    Material m = randomMaterial(rng);
    m.kd = 0.0;
    // Stretch ≥ 1.5 in every direction gives J ≥ 2.25 > α (α ≤ 2), so s = λ(J − α) > 0 and the
    // clamp s⁺ = s leaves the exact Hessian. Anisotropic stretch makes f0·f1 ≠ 0.
    const Triangle x = toFloatPrecision(deformAnisotropic(rng, rest.x, 1.5, 3.0));
    const double h = 1e-4 * (rest.x[1] - rest.x[0]).norm();
    const Energy energy = [&](const Triangle& y) { return referenceEnergy(y, rest, m); };
    for (int slot = 0; slot < 3; ++slot) {
      const Mat3d expected = finiteDifferenceHessian(energy, x, slot, h);
      const Mat3d hessian = toEigen(evaluate(slot, x, x, rest, m).hessian);
      EXPECT_LE((hessian - expected).norm(), 2e-3 * expected.norm())
          << "trial " << trial << " slot " << slot << "\n"
          << hessian << "\n\n"
          << expected;
    }
  }
}

TEST(Membrane, HessianIsSymmetricPsdEverywhere) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    // Wild configurations: compressed, stretched, sheared, inverted.
    const Triangle x = deform(rng, rest.x, rng.uniform(0.2, 2.0), 1.0);
    const Triangle p = deform(rng, rest.x, rng.uniform(0.2, 2.0), 1.0);
    for (int slot = 0; slot < 3; ++slot) {
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " slot " << slot);
      expectSymmetricPsd(toEigen(evaluate(slot, x, p, rest, m).hessian));
    }
  }
}

TEST(Membrane, RestConfigurationHasZeroForce) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    // Any rigid placement of the rest shape, at rest (p = x) or moving rigidly (p ≠ x).
    const Triangle x = rigidMotion(rng, rest.x);
    const Triangle p = rigidMotion(rng, rest.x);
    for (int slot = 0; slot < 3; ++slot) {
      const MembraneSlotWeights w = membraneSlotWeights(slot, rest.restInverse);
      const double stiffnessScale =
          rest.area * (2.0 * m.ke + m.ka) * (std::abs(w.w0) + std::abs(w.w1));
      const Vec3d force = toEigen(evaluate(slot, x, p, rest, m).force);
      EXPECT_LE(force.norm(), 1e-4 * stiffnessScale) << "trial " << trial << " slot " << slot;
    }
  }
}

TEST(Membrane, ForcesSumToZero) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    const Triangle x = deform(rng, rest.x, rng.uniform(0.5, 2.0), 0.3);
    const Triangle p = deform(rng, rest.x, rng.uniform(0.5, 2.0), 0.3);
    Vec3d sum = Vec3d::Zero();
    double scale = 0.0;
    for (int slot = 0; slot < 3; ++slot) {
      const Vec3d f = toEigen(evaluate(slot, x, p, rest, m).force);
      sum += f;
      scale = std::max(scale, f.norm());
    }
    EXPECT_LE(sum.norm(), 1e-5 * scale) << "trial " << trial;
  }
}

TEST(Membrane, DampingForceIsNegativeDampingPotentialGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    Material undamped = m;
    undamped.kd = 0.0;
    const Triangle x = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const Triangle p = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const double h = 1e-6 * (rest.x[1] - rest.x[0]).norm();
    const Energy damping = [&](const Triangle& y) { return referenceDamping(y, p, rest, m); };
    std::array<Vec3d, 3> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 3; ++slot) {
      expected[slot] = -finiteDifferenceGradient(damping, x, slot, h);
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 3; ++slot) {
      const Vec3d dampingForce = toEigen(evaluate(slot, x, p, rest, m).force) -
                                 toEigen(evaluate(slot, x, p, rest, undamped).force);
      // The elastic part cancels in the difference, up to its own float rounding.
      const double elasticScale = toEigen(evaluate(slot, x, p, rest, undamped).force).norm();
      EXPECT_LE((dampingForce - expected[slot]).norm(), 2e-3 * scale + 1e-5 * elasticScale)
          << "trial " << trial << " slot " << slot;
    }
    // The float potential agrees with the reference.
    const double potential = referenceDamping(x, p, rest, m);
    const float value = membraneDampingPotential(
        toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(p[0]), toFloat(p[1]), toFloat(p[2]),
        rest.restInverse, rest.area, float(m.kd), float(m.dt));
    EXPECT_NEAR(value, potential, 1e-3 * potential + 1e-9) << "trial " << trial;
  }
}

TEST(Membrane, DampingHessianIsExactWhenStrainRateVanishes) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 30; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    const Material m = randomMaterial(rng);
    Material undamped = m;
    undamped.kd = 0.0;
    // p is a rigid motion of x, so C = C_prev and the Gauss–Newton damping Hessian is exact.
    const Triangle x = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const Triangle p = toFloatPrecision(rigidMotion(rng, x));
    const double h = 1e-4 * (rest.x[1] - rest.x[0]).norm();
    const Energy damping = [&](const Triangle& y) { return referenceDamping(y, p, rest, m); };
    for (int slot = 0; slot < 3; ++slot) {
      const Mat3d expected = finiteDifferenceHessian(damping, x, slot, h);
      const Mat3d hessian = toEigen(evaluate(slot, x, p, rest, m).hessian) -
                            toEigen(evaluate(slot, x, p, rest, undamped).hessian);
      const double elasticScale = toEigen(evaluate(slot, x, p, rest, undamped).hessian).norm();
      EXPECT_LE((hessian - expected).norm(), 2e-3 * expected.norm() + 1e-5 * elasticScale)
          << "trial " << trial << " slot " << slot << "\n"
          << hessian << "\n\n"
          << expected;
    }
  }
}

// The damping Hessian sums its outer products with addOuter (explicit fused multiply-adds on CUDA,
// kernels/math.h) and 2 dC01 dC01ᵀ as dC01 (2 dC01)ᵀ; on the host that is, bit for bit, the plain
// sum it replaced, so the CPU backend's results did not move.
TEST(Membrane, DampingHessianSumOnTheHostIsThePlainSumOfOuterProducts) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 1000; ++trial) {
    const Vec3 a = toFloat(rng.vec(-3, 3)), b = toFloat(rng.vec(-3, 3)),
               c = toFloat(rng.vec(-3, 3));
    const Mat33 plain = outer(a, a) + 2.0f * outer(b, b) + outer(c, c);
    const Mat33 fused = addOuter(addOuter(outer(a, a), b, 2.0f * b), c, c);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(fused.m[i][j], plain.m[i][j]) << "trial " << trial << " entry " << i << j;
  }
}

TEST(Membrane, DampingActsOnlyWithPositiveKd) {
  Random rng;
  TRACE_SEED(rng);
  const RestTriangle rest = randomRestTriangle(rng);
  Material m = randomMaterial(rng);
  const Triangle x = deform(rng, rest.x, 1.3, 0.2);
  const Triangle p = deform(rng, rest.x, 0.8, 0.2);
  m.kd = 0.0;
  const ForceHessian reference = evaluate(0, x, p, rest, m);
  m.kd = -5.0;
  const ForceHessian negative = evaluate(0, x, p, rest, m);
  EXPECT_EQ(toEigen(negative.force), toEigen(reference.force));
  EXPECT_EQ(toEigen(negative.hessian), toEigen(reference.hessian));
  m.kd = 5.0;
  EXPECT_GT((toEigen(evaluate(0, x, p, rest, m).force) - toEigen(reference.force)).norm(), 0.0);
  // p = x: no strain rate, so kd changes the Hessian but not the force.
  m.kd = 0.0;
  const Vec3d atRest = toEigen(evaluate(0, x, x, rest, m).force);
  m.kd = 5.0;
  EXPECT_LE((toEigen(evaluate(0, x, x, rest, m).force) - atRest).norm(), 1e-5 * atRest.norm());
}

TEST(Membrane, ZeroStiffnessSkipsTheElement) {
  Random rng;
  TRACE_SEED(rng);
  const RestTriangle rest = randomRestTriangle(rng);
  const Material m{0.0, 0.0, 10.0, 1e-3};
  const Triangle x = deform(rng, rest.x, 1.5, 0.2);
  const Triangle p = deform(rng, rest.x, 0.7, 0.2);
  for (int slot = 0; slot < 3; ++slot) {
    const ForceHessian fh = evaluate(slot, x, p, rest, m);
    EXPECT_EQ(toEigen(fh.force), Vec3d::Zero());
    EXPECT_EQ(toEigen(fh.hessian), Mat3d::Zero());
  }
  EXPECT_EQ(membraneEnergy(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), rest.restInverse, rest.area,
                           0.0f, 0.0f),
            0.0f);
}

TEST(Membrane, ZeroLameLambdaUsesPositiveSafeValue) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const RestTriangle rest = randomRestTriangle(rng);
    // ka = −ke gives λ_nh = 0: λ_safe = +1e-6 (sign(0) = +1), the J-term vanishes and only the
    // μ/2·(I_c − 2) term remains, with a finite α.
    const double ke = rng.uniform(1e2, 1e4);
    const Material m{ke, -ke, 0.0, 1e-3};
    EXPECT_GT(stableNeoHookean(float(ke), float(-ke)).alpha, 1.0f);
    const Triangle x = toFloatPrecision(deform(rng, rest.x, rng.uniform(0.6, 1.8), 0.2));
    const double h = 1e-6 * (rest.x[1] - rest.x[0]).norm();
    const Energy energy = [&](const Triangle& y) {
      const Eigen::Matrix<double, 3, 2> F = deformationGradient(y, rest.restInverse);
      return rest.area * 0.5 * ke * (F.squaredNorm() - 2.0);
    };
    for (int slot = 0; slot < 3; ++slot) {
      const ForceHessian fh = evaluate(slot, x, x, rest, m);
      ASSERT_TRUE(isFinite(fh.force));
      const Vec3d expected = -finiteDifferenceGradient(energy, x, slot, h);
      EXPECT_LE((toEigen(fh.force) - expected).norm(), 1e-3 * expected.norm() + 1e-6);
      expectSymmetricPsd(toEigen(fh.hessian));
    }
  }
}

TEST(Membrane, CollapsedTriangleGivesFiniteForce) {
  Random rng;
  TRACE_SEED(rng);
  const RestTriangle rest = randomRestTriangle(rng);
  const Material m = randomMaterial(rng);
  const Vec3d c = rng.vec(-1, 1);
  // All three vertices at one point, and all three on a line: J hits its 1e-10 floor.
  const Triangle points{c, c, c};
  const Triangle line{c, c + Vec3d(0.1, 0.2, 0.3), c + Vec3d(0.2, 0.4, 0.6)};
  for (const Triangle& x : {points, line}) {
    for (int slot = 0; slot < 3; ++slot) {
      const ForceHessian fh = evaluate(slot, x, rest.x, rest, m);
      EXPECT_TRUE(isFinite(fh.force));
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_TRUE(isFinite(fh.hessian(i, j)));
    }
  }
}

}  // namespace
}  // namespace weft
