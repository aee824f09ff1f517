// Dihedral bending and its angular-rate damping (kernels/bending.h) against a double-precision
// reference of the hinge angle: ∇θ matches finite differences, forces are negative gradients of
// the energy and the dissipation potential, the Gauss–Newton Hessian is exact at θ = θ0 (and at
// Δθ = 0 for damping), forces balance, and Δθ wraps across ±π.
#include "kernels/bending.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <functional>
#include <numbers>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;                // math_test_support.h
using Hinge = std::array<Vec3d, 4>;  // (o0, o1, v0, v1)

// ---- Double-precision reference (cloth_vbd_spec §5.4) -----------------------------------------

double referenceAngle(const Hinge& x) {
  const Vec3d n1 = (x[2] - x[0]).cross(x[3] - x[0]).normalized();
  const Vec3d n2 = (x[3] - x[1]).cross(x[2] - x[1]).normalized();
  const Vec3d e = (x[3] - x[2]).normalized();
  return std::atan2(n1.cross(n2).dot(e), n1.dot(n2));
}

double wrap(double d) {
  if (d > std::numbers::pi) return d - 2.0 * std::numbers::pi;
  if (d < -std::numbers::pi) return d + 2.0 * std::numbers::pi;
  return d;
}

struct Material {
  double restAngle, restLength, ke, kd, dt;
};

double referenceEnergy(const Hinge& x, const Material& m) {
  const double d = referenceAngle(x) - m.restAngle;
  return 0.5 * m.ke * m.restLength * d * d;
}

double referenceDamping(const Hinge& x, const Hinge& p, const Material& m) {
  const double d = wrap(referenceAngle(x) - referenceAngle(p));
  return 0.5 * m.kd * m.restLength / m.dt * d * d;
}

using Energy = std::function<double(const Hinge&)>;

/// A well-conditioned hinge at float precision: wings well away from the edge line, |θ| < 2.8
/// (finite differences stay clear of the ±π branch cut), at a random scale and placement.
Hinge randomHinge(Random& rng) {
  for (;;) {
    const double scale = rng.uniform(0.05, 2.0);
    Hinge x;
    for (Vec3d& v : x) v = roundToFloat(rng.vec(-scale, scale));
    const double edge = (x[3] - x[2]).norm();
    const double a1 = (x[2] - x[0]).cross(x[3] - x[0]).norm();
    const double a2 = (x[3] - x[1]).cross(x[2] - x[1]).norm();
    if (edge < 0.5 * scale || a1 < 0.3 * scale * edge || a2 < 0.3 * scale * edge) continue;
    if (std::abs(referenceAngle(x)) > 2.8) continue;
    return x;
  }
}

Hinge rigidMotion(Random& rng, const Hinge& x) {
  const Mat3d R = rng.rotation();
  const Vec3d t = rng.vec(-1, 1);
  Hinge y;
  for (int i = 0; i < 4; ++i) y[i] = roundToFloat(Vec3d(R * x[i] + t));
  return y;
}

/// Values at float precision, so that the reference sees exactly what the kernel sees.
Material randomMaterial(Random& rng) {
  return {roundToFloat(rng.uniform(-2.5, 2.5)), roundToFloat(rng.uniform(0.01, 1.0)),
          roundToFloat(rng.uniform(1e-2, 1e2)), roundToFloat(rng.uniform(1e-3, 1.0)),
          roundToFloat(rng.uniform(1e-3, 1e-2))};
}

ForceHessian evaluate(int slot, const Hinge& x, const Hinge& p, const Material& m) {
  return bendingForceHessian(slot, toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3]),
                             toFloat(p[0]), toFloat(p[1]), toFloat(p[2]), toFloat(p[3]),
                             float(m.restAngle), float(m.restLength), float(m.ke), float(m.kd),
                             float(m.dt));
}

Vec3d angleGradient(int slot, const Hinge& x) {
  return toEigen(
      dihedralAngleGradient(slot, toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3])));
}

double scaleOf(const Hinge& x) {
  return (x[3] - x[2]).norm();
}

TEST(Bending, AngleGradientMatchesFiniteDifference) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const Hinge x = randomHinge(rng);
    const Energy angle = [](const Hinge& y) { return referenceAngle(y); };
    std::array<Vec3d, 4> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      expected[slot] = finiteDifferenceGradient(angle, x, slot, 1e-7 * scaleOf(x));
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 4; ++slot) {
      EXPECT_LE((angleGradient(slot, x) - expected[slot]).norm(), 1e-4 * scale)
          << "trial " << trial << " slot " << slot << ": " << angleGradient(slot, x).transpose()
          << " vs " << expected[slot].transpose();
    }
  }
}

TEST(Bending, AngleMatchesDihedralAngleConvention) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Hinge x = randomHinge(rng);
    EXPECT_NEAR(dihedralAngle(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3])),
                referenceAngle(x), 1e-5);
  }
  // Flat hinge (θ = 0); folding both wings up (+z) over an edge along +x gives θ > 0.
  const Hinge flat{Vec3d(0.5, -1, 0), Vec3d(0.5, 1, 0), Vec3d(0, 0, 0), Vec3d(1, 0, 0)};
  EXPECT_NEAR(referenceAngle(flat), 0.0, 1e-12);
  for (int slot : {0, 1}) EXPECT_GT(angleGradient(slot, flat).z(), 0.0);
  for (int slot : {2, 3}) EXPECT_LT(angleGradient(slot, flat).z(), 0.0);
}

TEST(Bending, ForceIsNegativeEnergyGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Hinge x = randomHinge(rng);
    Material m = randomMaterial(rng);
    m.kd = 0.0;
    const Energy energy = [&](const Hinge& y) { return referenceEnergy(y, m); };
    std::array<Vec3d, 4> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      expected[slot] = -finiteDifferenceGradient(energy, x, slot, 1e-7 * scaleOf(x));
      scale = std::max(scale, expected[slot].norm());
    }
    // Near θ = θ0 the force is small and the float angle's own rounding (~1e-7 rad) dominates.
    double gradientScale = 0.0;
    for (int slot = 0; slot < 4; ++slot)
      gradientScale = std::max(gradientScale, angleGradient(slot, x).norm());
    const double tolerance = 1e-3 * scale + 2e-6 * m.ke * m.restLength * gradientScale;
    for (int slot = 0; slot < 4; ++slot) {
      const Vec3d force = toEigen(evaluate(slot, x, x, m).force);
      EXPECT_LE((force - expected[slot]).norm(), tolerance)
          << "trial " << trial << " slot " << slot;
    }
    const float energyValue =
        bendingEnergy(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3]),
                      float(m.restAngle), float(m.restLength), float(m.ke));
    EXPECT_NEAR(energyValue, referenceEnergy(x, m), 1e-4 * m.ke * m.restLength);
  }
}

TEST(Bending, HessianIsExactAtRestAngle) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const Hinge x = randomHinge(rng);
    Material m = randomMaterial(rng);
    m.kd = 0.0;
    m.restAngle = roundToFloat(referenceAngle(x));  // the dropped (θ − θ0)∇²θ term vanishes
    const Energy energy = [&](const Hinge& y) { return referenceEnergy(y, m); };
    std::array<Mat3d, 4> expected;
    double scale = 0.0;  // blocks of edge vertices can be tiny: compare against the largest
    for (int slot = 0; slot < 4; ++slot) {
      expected[slot] = finiteDifferenceHessian(energy, x, slot, 1e-4 * scaleOf(x));
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 4; ++slot) {
      const Mat3d hessian = toEigen(evaluate(slot, x, x, m).hessian);
      EXPECT_LE((hessian - expected[slot]).norm(), 1e-3 * scale)
          << "trial " << trial << " slot " << slot << "\n"
          << hessian << "\n\n"
          << expected[slot];
    }
  }
}

TEST(Bending, HessianIsSymmetricPsd) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Hinge x = randomHinge(rng);
    const Hinge p = randomHinge(rng);
    const Material m = randomMaterial(rng);
    for (int slot = 0; slot < 4; ++slot) {
      const Mat3d H = toEigen(evaluate(slot, x, p, m).hessian);
      EXPECT_LE((H - H.transpose()).norm(), 1e-6 * H.norm());
      const Eigen::SelfAdjointEigenSolver<Mat3d> eig(H);
      EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-5 * H.norm()) << "trial " << trial;
    }
  }
}

TEST(Bending, RestAngleGivesZeroForce) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const Hinge x = randomHinge(rng);
    Material m = randomMaterial(rng);
    m.restAngle = dihedralAngle(toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3]));
    for (int slot = 0; slot < 4; ++slot) {
      // At rest (p = x) and also when moving rigidly (damping sees Δθ = 0).
      const double scale = m.ke * m.restLength * angleGradient(slot, x).norm();
      EXPECT_LE(toEigen(evaluate(slot, x, x, m).force).norm(), 1e-6 * scale);
      const Hinge p = rigidMotion(rng, x);
      EXPECT_LE(toEigen(evaluate(slot, x, p, m).force).norm(),
                1e-4 * (scale + m.kd * m.restLength / m.dt * angleGradient(slot, x).norm()));
    }
  }
}

TEST(Bending, ForcesHaveNoNetForceOrTorque) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Hinge x = randomHinge(rng);
    const Hinge p = randomHinge(rng);
    const Material m = randomMaterial(rng);
    Vec3d force = Vec3d::Zero(), torque = Vec3d::Zero();
    double scale = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      const Vec3d f = toEigen(evaluate(slot, x, p, m).force);
      force += f;
      torque += (x[slot] - x[2]).cross(f);
      scale = std::max(scale, f.norm());
    }
    EXPECT_LE(force.norm(), 1e-5 * scale) << "trial " << trial;
    EXPECT_LE(torque.norm(), 1e-5 * scale * scaleOf(x) * 4.0) << "trial " << trial;
  }
}

TEST(Bending, DampingForceIsNegativeDampingPotentialGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Hinge x = randomHinge(rng);
    const Hinge p = randomHinge(rng);
    const Material m = randomMaterial(rng);
    Material undamped = m;
    undamped.kd = 0.0;
    const Energy damping = [&](const Hinge& y) { return referenceDamping(y, p, m); };
    std::array<Vec3d, 4> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      expected[slot] = -finiteDifferenceGradient(damping, x, slot, 1e-7 * scaleOf(x));
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 4; ++slot) {
      const Vec3d elastic = toEigen(evaluate(slot, x, p, undamped).force);
      const Vec3d dampingForce = toEigen(evaluate(slot, x, p, m).force) - elastic;
      EXPECT_LE((dampingForce - expected[slot]).norm(), 1e-3 * scale + 1e-5 * elastic.norm())
          << "trial " << trial << " slot " << slot;
    }
    const float potential = bendingDampingPotential(
        toFloat(x[0]), toFloat(x[1]), toFloat(x[2]), toFloat(x[3]), toFloat(p[0]), toFloat(p[1]),
        toFloat(p[2]), toFloat(p[3]), float(m.restLength), float(m.kd), float(m.dt));
    EXPECT_NEAR(potential, referenceDamping(x, p, m), 1e-4 * m.kd * m.restLength / m.dt);
  }
}

TEST(Bending, DampingHessianIsExactWhenAngleIsUnchanged) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const Hinge x = randomHinge(rng);
    const Hinge p = rigidMotion(rng, x);  // Δθ = 0: the dropped Δθ·∇²θ term vanishes
    Material m = randomMaterial(rng);
    m.restAngle = roundToFloat(referenceAngle(x));
    const Energy total = [&](const Hinge& y) {
      return referenceEnergy(y, m) + referenceDamping(y, p, m);
    };
    std::array<Mat3d, 4> expected;
    double scale = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      expected[slot] = finiteDifferenceHessian(total, x, slot, 1e-4 * scaleOf(x));
      scale = std::max(scale, expected[slot].norm());
    }
    for (int slot = 0; slot < 4; ++slot) {
      const Mat3d hessian = toEigen(evaluate(slot, x, p, m).hessian);
      EXPECT_LE((hessian - expected[slot]).norm(), 1e-3 * scale)
          << "trial " << trial << " slot " << slot;
    }
  }
}

TEST(Bending, DampingAngleDifferenceWrapsAcrossPi) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    // Edge along z; wing o0 fixed, wing o1 swings through the fully folded position (β = 0)
    // where θ jumps from +π to −π. Between p (β < 0) and x (β > 0) the hinge turned by a small
    // angle, and the damping must see that small angle, not ~2π.
    const double beta = rng.uniform(0.02, 0.2), betaPrev = -rng.uniform(0.02, 0.2);
    const auto hinge = [](double b) {
      return Hinge{Vec3d(1, 0, 0.3), Vec3d(std::cos(b), std::sin(b), 0.6), Vec3d(0, 0, 0),
                   Vec3d(0, 0, 1)};
    };
    // Odd trials swing the other way, so both wrap branches (Δθ > π and Δθ < −π) are hit.
    const Hinge x = rigidMotion(rng, hinge(trial % 2 ? betaPrev : beta));
    const Hinge p = rigidMotion(rng, hinge(trial % 2 ? beta : betaPrev));
    const double theta = referenceAngle(x), thetaPrev = referenceAngle(p);
    ASSERT_GT(std::abs(theta), 2.5);
    ASSERT_GT(std::abs(thetaPrev), 2.5);
    ASSERT_LT(theta * thetaPrev, 0.0);  // on opposite sides of the branch cut
    const double deltaTheta = theta - thetaPrev - std::copysign(2.0 * std::numbers::pi, theta);
    ASSERT_LT(std::abs(deltaTheta), 0.5);

    Material m = randomMaterial(rng);
    Material undamped = m;
    undamped.kd = 0.0;
    for (int slot = 0; slot < 4; ++slot) {
      const Vec3d dampingForce =
          toEigen(evaluate(slot, x, p, m).force) - toEigen(evaluate(slot, x, p, undamped).force);
      const Vec3d expected = -m.kd * m.restLength * deltaTheta / m.dt * angleGradient(slot, x);
      EXPECT_LE((dampingForce - expected).norm(),
                1e-3 * expected.norm() + 1e-5 * toEigen(evaluate(slot, x, p, m).force).norm())
          << "trial " << trial << " slot " << slot;
    }
  }
}

TEST(Bending, DegeneratePreviousHingeGivesUndampedForce) {
  Random rng;
  TRACE_SEED(rng);
  const Hinge x = randomHinge(rng);
  const Vec3d c = rng.vec(-1, 1);
  const Hinge collapsed{c, c, c, c};
  const Material m = randomMaterial(rng);
  Material undamped = m;
  undamped.kd = 0.0;
  for (int slot = 0; slot < 4; ++slot) {
    EXPECT_EQ(toEigen(evaluate(slot, x, collapsed, m).force),
              toEigen(evaluate(slot, x, x, undamped).force));
    EXPECT_EQ(toEigen(evaluate(slot, x, collapsed, m).hessian),
              toEigen(evaluate(slot, x, x, undamped).hessian));
  }
}

TEST(Bending, ZeroStiffnessOrDegenerateHingeGivesZero) {
  Random rng;
  TRACE_SEED(rng);
  const Hinge x = randomHinge(rng);
  const Hinge p = randomHinge(rng);
  Material m = randomMaterial(rng);
  // kd-only bending is inert (the reference skips the element when ke <= 0).
  m.ke = 0.0;
  for (int slot = 0; slot < 4; ++slot) {
    EXPECT_EQ(toEigen(evaluate(slot, x, p, m).force), Vec3d::Zero());
    EXPECT_EQ(toEigen(evaluate(slot, x, p, m).hessian), Mat3d::Zero());
  }
  // Degenerate hinges: wing on the edge line, zero-length edge.
  m = randomMaterial(rng);
  Hinge wingOnEdge = x;
  wingOnEdge[0] = x[2];
  Hinge shortEdge = x;
  shortEdge[3] = shortEdge[2];
  for (const Hinge& y : {wingOnEdge, shortEdge}) {
    for (int slot = 0; slot < 4; ++slot) {
      EXPECT_EQ(toEigen(evaluate(slot, y, p, m).force), Vec3d::Zero());
      EXPECT_EQ(toEigen(evaluate(slot, y, p, m).hessian), Mat3d::Zero());
      EXPECT_EQ(angleGradient(slot, y), Vec3d::Zero());
    }
  }
}

}  // namespace
}  // namespace weft
