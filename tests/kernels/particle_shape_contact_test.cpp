// Particle–shape penalty contact (kernels/particle_shape_contact.h) against double-precision
// references of its potentials: the force is −∇(penalty + damping + friction with the normal load
// held fixed), the penalty and damping Hessian is exact, the friction Hessian is the lagged
// μλφ(|u|)(I − nnᵀ), everything is symmetric PSD; damping only while approaching, friction
// opposes slip with Coulomb magnitude and is continuous at ε_u, nothing acts without penetration.
#include "kernels/particle_shape_contact.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <functional>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

/// One contact: everything at float precision so that the double reference sees the same inputs.
struct Contact {
  Vec3d x, xPrev, surfacePoint, surfacePointPrev, normal;
  double contactDistance, ke, kd, mu, frictionEpsilon, dt;

  double epsU() const { return double(float(frictionEpsilon) * float(dt)); }
};

/// A penetrating contact whose relative displacement Δ has a normal part of magnitude
/// [0.2, 1]·s (sign `approachSign` < 0: approaching) and a tangential slip of length
/// slipOverEps·ε_u, with s = (1 + slipOverEps)·ε_u. The surface moves by up to 3s. Keeping all
/// step displacements at the scale of the slip keeps the float slip accurate: Δ = (x − x_n) −
/// (b − b_n) loses ~1e-7 of the larger displacements, which would swamp a slip far below them.
Contact randomContact(Random& rng, double approachSign, double slipOverEps) {
  Contact c;
  // The normal is stored in float; renormalising in double would not match the kernel's input.
  c.normal = roundToFloat(rng.unit());
  c.contactDistance = roundToFloat(rng.uniform(0.005, 0.05));
  c.ke = roundToFloat(rng.uniform(1e2, 1e4));
  c.kd = roundToFloat(rng.uniform(1.0, 100.0));
  c.mu = roundToFloat(rng.uniform(0.1, 1.0));
  c.frictionEpsilon = roundToFloat(rng.uniform(1e-2, 5e-2));
  c.dt = roundToFloat(rng.uniform(1e-3, 1e-2));
  c.surfacePoint = roundToFloat(rng.vec(-1, 1));
  const Vec3d tangent = c.normal.cross(rng.unit()).normalized();
  // Penetration φ ∈ [0.1, 0.9]·contactDistance.
  const double phi = rng.uniform(0.1, 0.9) * c.contactDistance;
  c.x = roundToFloat(c.surfacePoint + (c.contactDistance - phi) * c.normal +
                     rng.uniform(-0.01, 0.01) * tangent);
  const double scale = (1.0 + slipOverEps) * c.epsU();
  const Vec3d surfaceMotion = rng.vec(-3, 3) * scale;
  c.surfacePointPrev = roundToFloat(c.surfacePoint - surfaceMotion);
  const Vec3d slipDirection = c.normal.cross(rng.unit()).normalized();
  const Vec3d delta = approachSign * rng.uniform(0.2, 1.0) * scale * c.normal +
                      slipOverEps * c.epsU() * slipDirection;
  c.xPrev = roundToFloat(c.x - surfaceMotion - delta);
  return c;
}

ForceHessian evaluate(const Contact& c) {
  return particleShapeContactForceHessian(toFloat(c.x), toFloat(c.xPrev), toFloat(c.surfacePoint),
                                          toFloat(c.surfacePointPrev), toFloat(c.normal),
                                          float(c.contactDistance), float(c.ke), float(c.kd),
                                          float(c.mu), float(c.frictionEpsilon), float(c.dt));
}

// ---- Double-precision reference (cloth_vbd_spec §5.8) -----------------------------------------

double penetration(const Contact& c, const Vec3d& x) {
  return c.contactDistance - c.normal.dot(x - c.surfacePoint);
}
Vec3d relativeDisplacement(const Contact& c, const Vec3d& x) {
  return (x - c.xPrev) - (c.surfacePoint - c.surfacePointPrev);
}

double referencePenalty(const Contact& c, const Vec3d& x) {
  const double phi = penetration(c, x);
  return phi > 0 ? 0.5 * c.ke * phi * phi : 0.0;
}

double referenceDamping(const Contact& c, const Vec3d& x) {
  const double nd = c.normal.dot(relativeDisplacement(c, x));
  return penetration(c, x) > 0 && nd < 0 ? 0.5 * c.kd / c.dt * nd * nd : 0.0;
}

/// IPC friction potential μλ·f0(|u_t|) with f0(u) = u²/ε − u³/(3ε²) (u ≤ ε), u − ε/3 (u > ε).
double referenceFriction(const Contact& c, const Vec3d& x, double normalLoad) {
  if (penetration(c, x) <= 0) return 0.0;
  const Vec3d d = relativeDisplacement(c, x);
  const double u = (d - c.normal * c.normal.dot(d)).norm();
  const double eps = c.epsU();
  const double f0 = u > eps ? u - eps / 3.0 : u * u / eps - u * u * u / (3.0 * eps * eps);
  return c.mu * normalLoad * f0;
}

using Potential = std::function<double(const Vec3d&)>;

Vec3d finiteDifferenceGradient(const Potential& e, Vec3d x, double h) {
  Vec3d g;
  for (int i = 0; i < 3; ++i) {
    const double x0 = x[i];
    x[i] = x0 + h;
    const double plus = e(x);
    x[i] = x0 - h;
    const double minus = e(x);
    x[i] = x0;
    g[i] = (plus - minus) / (2.0 * h);
  }
  return g;
}

Mat3d finiteDifferenceHessian(const Potential& e, const Vec3d& x, double h) {
  Mat3d H;
  for (int j = 0; j < 3; ++j) {
    Vec3d plus = x, minus = x;
    plus[j] += h;
    minus[j] -= h;
    H.col(j) =
        (finiteDifferenceGradient(e, plus, h) - finiteDifferenceGradient(e, minus, h)) / (2.0 * h);
  }
  return H;
}

TEST(ParticleShapeContact, ForceIsNegativePotentialGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    // Approaching and separating, slipping inside and beyond the smoothing band.
    const double slip = trial % 2 ? rng.uniform(0.1, 0.9) : rng.uniform(1.1, 50.0);
    const Contact c = randomContact(rng, rng.sign(), slip);
    Contact penaltyOnly = c, withDamping = c, withFriction = c;
    penaltyOnly.kd = penaltyOnly.mu = 0.0;
    withDamping.mu = 0.0;
    withFriction.kd = 0.0;
    const double normalLoad = c.ke * penetration(c, c.x);  // λ lagged at the evaluation point
    const double h = 1e-4 * c.epsU();
    // Each term separately (differences of kernel calls), then all of them together.
    const Vec3d penalty = toEigen(evaluate(penaltyOnly).force);
    const Vec3d damping = toEigen(evaluate(withDamping).force) - penalty;
    const Vec3d friction = toEigen(evaluate(withFriction).force) - penalty;
    const Vec3d total = toEigen(evaluate(c).force);
    const Vec3d expectedPenalty =
        -finiteDifferenceGradient([&](const Vec3d& y) { return referencePenalty(c, y); }, c.x, h);
    const Vec3d expectedDamping =
        -finiteDifferenceGradient([&](const Vec3d& y) { return referenceDamping(c, y); }, c.x, h);
    const Vec3d expectedFriction = -finiteDifferenceGradient(
        [&](const Vec3d& y) { return referenceFriction(c, y, normalLoad); }, c.x, h);
    // Terms that come out of a difference carry the rounding of the larger penalty force.
    const double rounding = 1e-6 * penalty.norm();
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    EXPECT_LE((penalty - expectedPenalty).norm(), 1e-4 * expectedPenalty.norm());
    EXPECT_LE((damping - expectedDamping).norm(), 1e-3 * expectedDamping.norm() + rounding)
        << damping.transpose() << " vs " << expectedDamping.transpose();
    EXPECT_LE((friction - expectedFriction).norm(), 1e-3 * expectedFriction.norm() + rounding)
        << friction.transpose() << " vs " << expectedFriction.transpose();
    const Vec3d expectedTotal = expectedPenalty + expectedDamping + expectedFriction;
    EXPECT_LE((total - expectedTotal).norm(), 1e-3 * expectedTotal.norm());
  }
}

TEST(ParticleShapeContact, PotentialsMatchReference) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Contact c = randomContact(rng, rng.sign(), rng.uniform(0.1, 5.0));
    const Vec3 x = toFloat(c.x), xPrev = toFloat(c.xPrev), b = toFloat(c.surfacePoint),
               bPrev = toFloat(c.surfacePointPrev), n = toFloat(c.normal);
    const double penalty = referencePenalty(c, c.x);
    EXPECT_NEAR(particleShapeContactEnergy(x, b, n, float(c.contactDistance), float(c.ke)), penalty,
                1e-3 * penalty);
    const double damping = referenceDamping(c, c.x);
    EXPECT_NEAR(particleShapeContactDampingPotential(
                    x, xPrev, b, bPrev, n, float(c.contactDistance), float(c.kd), float(c.dt)),
                damping, 1e-3 * damping);
    const double load = c.ke * penetration(c, c.x);
    const double friction = referenceFriction(c, c.x, load);
    EXPECT_NEAR(particleShapeContactFrictionPotential(
                    x, xPrev, b, bPrev, n, float(c.contactDistance), float(c.mu), float(load),
                    float(c.frictionEpsilon), float(c.dt)),
                friction, 1e-3 * friction);
  }
}

TEST(ParticleShapeContact, PenaltyAndDampingHessianIsExact) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    Contact c = randomContact(rng, rng.sign(), rng.uniform(0.1, 5.0));
    c.mu = 0.0;  // friction's Hessian is the lagged approximation, tested below
    const Potential total = [&](const Vec3d& y) {
      return referencePenalty(c, y) + referenceDamping(c, y);
    };
    // Both potentials are quadratic on each side of n·Δ = 0, so a step well inside the current
    // side is exact up to rounding.
    const double normalDelta = std::abs(c.normal.dot(relativeDisplacement(c, c.x)));
    const Mat3d expected =
        finiteDifferenceHessian(total, c.x, 0.1 * std::min(normalDelta, 0.1 * c.contactDistance));
    const Mat3d hessian = toEigen(evaluate(c).hessian);
    EXPECT_LE((hessian - expected).norm(), 1e-3 * expected.norm()) << "trial " << trial << "\n"
                                                                   << hessian << "\n\n"
                                                                   << expected;
  }
}

TEST(ParticleShapeContact, FrictionHessianIsLaggedTangentProjector) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    Contact c = randomContact(rng, rng.sign(), rng.uniform(0.1, 50.0));
    Contact frictionless = c;
    frictionless.mu = 0.0;
    const Vec3d d = relativeDisplacement(c, c.x);
    const double u = (d - c.normal * c.normal.dot(d)).norm();
    const double weight = u > c.epsU() ? 1.0 / u : (2.0 - u / c.epsU()) / c.epsU();
    const Mat3d expected = c.mu * c.ke * penetration(c, c.x) * weight *
                           (Mat3d::Identity() - c.normal * c.normal.transpose());
    const Mat3d friction = toEigen(evaluate(c).hessian) - toEigen(evaluate(frictionless).hessian);
    // The difference carries the rounding of the whole block.
    EXPECT_LE((friction - expected).norm(),
              1e-3 * expected.norm() + 1e-6 * toEigen(evaluate(c).hessian).norm())
        << "trial " << trial;
  }
}

TEST(ParticleShapeContact, HessianIsSymmetricPsd) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 300; ++trial) {
    const Contact c = randomContact(rng, rng.sign(), rng.uniform(0.0, 100.0));
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    expectSymmetricPsd(toEigen(evaluate(c).hessian));
  }
}

TEST(ParticleShapeContact, DampingActsOnlyWhileApproaching) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const double approach = trial % 2 ? -1.0 : 1.0;
    Contact c = randomContact(rng, approach, rng.uniform(0.1, 5.0));
    Contact undamped = c;
    undamped.kd = 0.0;
    const Vec3d extra = toEigen(evaluate(c).force) - toEigen(evaluate(undamped).force);
    const Mat3d extraH = toEigen(evaluate(c).hessian) - toEigen(evaluate(undamped).hessian);
    const double nd = c.normal.dot(relativeDisplacement(c, c.x));
    // The difference carries the rounding of the whole force.
    const double rounding = 1e-6 * toEigen(evaluate(c).force).norm();
    if (approach < 0) {
      // Pushes back along +n, against the approach, with magnitude (kd/dt)|n·Δ|.
      EXPECT_NEAR(extra.dot(c.normal), -c.kd / c.dt * nd,
                  1e-3 * c.kd / c.dt * std::abs(nd) + rounding);
      EXPECT_LE((extra - extra.dot(c.normal) * c.normal).norm(), 1e-3 * extra.norm() + rounding);
      EXPECT_NEAR((extraH - c.kd / c.dt * c.normal * c.normal.transpose()).norm(), 0.0,
                  1e-4 * c.kd / c.dt + 1e-6 * toEigen(evaluate(c).hessian).norm());
    } else {
      EXPECT_EQ(extra, Vec3d::Zero());
      EXPECT_EQ(extraH, Mat3d::Zero());
    }
  }
}

TEST(ParticleShapeContact, FrictionOpposesSlipWithCoulombMagnitude) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    // Kinetic (|u| ≫ ε_u) or inside the band, down to the nearly stuck |u| = 1e-4·ε_u.
    const double slipOverEps =
        trial % 2 ? rng.uniform(1e2, 1e3) : 0.95 * std::pow(10.0, rng.uniform(-4.0, 0.0));
    Contact c = randomContact(rng, rng.sign(), slipOverEps);
    Contact frictionless = c;
    frictionless.mu = 0.0;
    const Vec3d friction = toEigen(evaluate(c).force) - toEigen(evaluate(frictionless).force);
    const Vec3d d = relativeDisplacement(c, c.x);
    const Vec3d slip = d - c.normal * c.normal.dot(d);
    const double coulomb = c.mu * c.ke * penetration(c, c.x);
    // Antiparallel to the slip, in the tangent plane.
    EXPECT_LT(friction.dot(slip), 0.0);
    const double rounding = 1e-6 * toEigen(evaluate(c).force).norm();  // of the difference
    EXPECT_LE((friction + friction.norm() * slip.normalized()).norm(),
              1e-4 * friction.norm() + rounding)
        << "trial " << trial;
    if (slipOverEps > 1.0) {
      // |u| ≫ ε_u: kinetic friction μ·kφ.
      EXPECT_NEAR(friction.norm(), coulomb, 2e-3 * coulomb) << "trial " << trial;
    } else {
      // Inside the band: a fraction (2 − u/ε)·u/ε < 1 of it.
      const double r = slip.norm() / c.epsU();
      EXPECT_NEAR(friction.norm(), coulomb * (2.0 - r) * r, 2e-3 * coulomb) << "trial " << trial;
    }
  }
}

TEST(ParticleShapeContact, FrictionIsContinuousAtEpsilon) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    const float eps = float(rng.uniform(1e-5, 1e-2));
    const float below = eps * (1.0f - 1e-5f), above = eps * (1.0f + 1e-5f);
    // The force magnitude φ(u)·u and its slope reach 1 and 0 at ε from both sides.
    EXPECT_NEAR(frictionWeight(below, eps) * below, 1.0f, 1e-4f);
    EXPECT_NEAR(frictionWeight(above, eps) * above, 1.0f, 1e-4f);
    EXPECT_NEAR(frictionWeight(eps, eps) * eps, 1.0f, 1e-6f);
    EXPECT_NEAR(frictionPotential(below, eps), frictionPotential(above, eps), 1e-4f * eps);
    EXPECT_NEAR(frictionPotential(eps, eps), 2.0f * eps / 3.0f, 1e-6f * eps);
    EXPECT_EQ(frictionPotential(0.0f, eps), 0.0f);
    // Static end: φ(0) = 2/ε, the stiffness of the "stick" spring.
    EXPECT_NEAR(frictionWeight(0.0f, eps), 2.0f / eps, 1e-6f / eps);
    // Whole contact force on either side of ε_u·(1 ± 1e-4): magnitudes within 1e-3 of each other.
    Contact c = randomContact(rng, 1.0, 1.0);
    Contact frictionless = c;
    frictionless.mu = 0.0;
    const double coulomb = c.mu * c.ke * penetration(c, c.x);
    const Vec3d f = toEigen(evaluate(c).force) - toEigen(evaluate(frictionless).force);
    EXPECT_NEAR(f.norm(), coulomb, 1e-3 * coulomb) << "trial " << trial;
  }
}

TEST(ParticleShapeContact, NoForceWithoutPenetration) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 100; ++trial) {
    Contact c = randomContact(rng, -1.0, rng.uniform(0.1, 5.0));
    // Move the particle (and its start) out along n so that φ ∈ [−d, 0]: separated or touching.
    const double lift = penetration(c, c.x) + rng.uniform(0.0, 1.0) * c.contactDistance;
    c.x = roundToFloat(c.x + lift * c.normal);
    c.xPrev = roundToFloat(c.xPrev + lift * c.normal);
    if (penetration(c, c.x) > 0) continue;  // rounding put it back in contact
    const ForceHessian fh = evaluate(c);
    EXPECT_EQ(toEigen(fh.force), Vec3d::Zero());
    EXPECT_EQ(toEigen(fh.hessian), Mat3d::Zero());
    const Vec3 x = toFloat(c.x), b = toFloat(c.surfacePoint), n = toFloat(c.normal);
    EXPECT_EQ(particleShapeContactEnergy(x, b, n, float(c.contactDistance), float(c.ke)), 0.0f);
  }
  // Exactly touching: φ = 0 (values exact in float).
  const Vec3 n{0.0f, 0.0f, 1.0f}, b{0.25f, -0.5f, 1.0f}, x{0.25f, -0.5f, 1.125f};
  const ForceHessian touching = particleShapeContactForceHessian(
      x, x + Vec3{0, 0, 0.5f}, b, b, n, 0.125f, 1e3f, 10.0f, 0.5f, 0.01f, 1e-3f);
  EXPECT_EQ(toEigen(touching.force), Vec3d::Zero());
  EXPECT_EQ(toEigen(touching.hessian), Mat3d::Zero());
}

TEST(ParticleShapeContact, RestingOnMovingSurfaceFeelsOnlyThePenalty) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 50; ++trial) {
    // Dyadic values, so that every subtraction is exact in float and Δ = 0 exactly: the particle
    // moved with the surface (v_b·dt) and neither damping nor friction may act.
    const auto dyadic = [&](double lo, double hi) {
      return std::round(rng.uniform(lo, hi) * 64) / 64;
    };
    const Vec3 n{0.0f, 0.0f, 1.0f};
    const Vec3 b{float(dyadic(-1, 1)), float(dyadic(-1, 1)), float(dyadic(-1, 1))};
    const Vec3 motion{float(dyadic(-1, 1)), float(dyadic(-1, 1)), float(dyadic(-1, 1))};
    const float depth = float(dyadic(0.1, 0.4)) / 8.0f;  // φ, with contactDistance = 0.0625
    const Vec3 x = b + Vec3{0.0f, 0.0f, 0.0625f - depth};
    const float ke = 1000.0f;
    const ForceHessian fh = particleShapeContactForceHessian(
        x, x - motion, b, b - motion, n, 0.0625f, ke, 50.0f, 0.8f, 0.01f, 2e-3f);
    EXPECT_EQ(toEigen(fh.force), Vec3d(0, 0, ke * depth));
    EXPECT_EQ(toEigen(fh.hessian), toEigen(ke * outer(n, n)));
  }
}

}  // namespace
}  // namespace weft
