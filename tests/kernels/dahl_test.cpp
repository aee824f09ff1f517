// Dahl hysteresis friction of ROD joints (kernels/dahl.h, rigid_avbd_spec §5.8) against the
// Dahl law dσ/dκ = (σ_max − dir·σ)/τ, σ_max = k·ε_max: the update is its closed-form solution
// (so half increments compose to a full one), monotone loading saturates at ±σ_max over the
// length τ, and a cyclic strain driven step by step through dahlCompute/dahlUpdate traces the
// Dahl hysteresis loop: the dissipated work ∮M dκ of the moment M = k·κ + σ matches both an
// independent explicit integration of the law and the closed-form periodic loop, and vanishes
// with Dahl off. Also: the ±1e-6 direction deadband, the clamp and tangent term of the start-of-
// step terms, rebaselining, twist wrapping and the inactive cases.
#include "kernels/dahl.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

/// The closed-form Dahl stress in double for a known direction.
double dahlReference(double sigmaPrev, double dKappa, double sigmaMax, double tau, double dir) {
  const double e = std::exp(-dir * dKappa / tau);
  return dir * sigmaMax * (1 - e) + sigmaPrev * e;
}

TEST(Dahl, StressIsTheClosedFormSolution) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 2000; ++trial) {
    const float sigmaMax = float(rng.logUniform(1e-3, 1e3));
    const float tau = float(rng.logUniform(1e-3, 1.0));
    const float sigmaPrev = float(rng.uniform(-1.5, 1.5) * sigmaMax);
    const float dKappa = float(rng.sign() * rng.logUniform(2e-6, 1.0));
    const float dKappaPrev = float(rng.uniform(-1, 1));
    const double expected =
        dahlReference(sigmaPrev, dKappa, sigmaMax, tau, dKappa > 0 ? 1.0 : -1.0);
    EXPECT_NEAR(dahlStress(sigmaPrev, dKappa, sigmaMax, tau, dKappaPrev), expected,
                2e-6 * (sigmaMax + std::abs(sigmaPrev)) * (1 + std::abs(dKappa) / tau))
        << "trial " << trial;
  }
}

TEST(Dahl, DirectionKeepsThePreviousOneInsideTheDeadband) {
  EXPECT_EQ(dahlDirection(2e-6f, -1.0f), 1.0f);
  EXPECT_EQ(dahlDirection(-2e-6f, 1.0f), -1.0f);
  EXPECT_EQ(dahlDirection(5e-7f, -0.3f), -1.0f);
  EXPECT_EQ(dahlDirection(-5e-7f, 0.3f), 1.0f);
  EXPECT_EQ(dahlDirection(0.0f, 0.0f), 1.0f);
  EXPECT_EQ(dahlDirection(0.0f, -1e-9f), -1.0f);
  // A tiny forward increment while unloading stays on the unloading branch, whose slope
  // (σ_max + σ)/τ differs from the loading one (σ_max − σ)/τ: 150 vs 50 here.
  const float sigma = dahlStress(0.5f, 5e-7f, 1.0f, 0.01f, -1e-3f);
  EXPECT_NEAR(sigma, dahlReference(0.5, 5e-7, 1.0, 0.01, -1.0), 2e-7);
  EXPECT_GT(std::abs(sigma - dahlReference(0.5, 5e-7, 1.0, 0.01, 1.0)), 4e-5);
}

TEST(Dahl, MonotoneLoadingSaturatesAtSigmaMaxOverTau) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const Vec3 k = toFloat(rng.vec(0.1, 10.0));
    const float epsMax = float(rng.uniform(0.05, 2.0)), tau = float(rng.uniform(0.01, 0.2));
    const double sign = rng.sign();
    DahlState state;
    dahlCompute(state, Vec3{}, k, epsMax, tau, true, true);
    // Load to 10τ in 500 steps, and compare with σ_max(1 − e^{−κ/τ}) along the way.
    const int steps = 500;
    for (int n = 1; n <= steps; ++n) {
      const double kappa = sign * 10.0 * tau * n / steps;
      dahlUpdate(state, toFloat(Vec3d::Constant(kappa)), k, epsMax, tau, true);
      for (int i = 0; i < 3; ++i) {
        const double sigmaMax = double(k[i]) * epsMax;
        const double expected = sign * sigmaMax * (1 - std::exp(-std::abs(kappa) / tau));
        ASSERT_NEAR(state.sigmaPrev[i], expected, 1e-5 * sigmaMax) << "step " << n;
        // At κ = τ the stress has covered 1 − 1/e of the way to the envelope.
        if (n == steps / 10) {
          ASSERT_NEAR(std::abs(state.sigmaPrev[i]) / sigmaMax, 1 - 1 / std::numbers::e, 1e-5);
        }
      }
    }
    for (int i = 0; i < 3; ++i)
      EXPECT_NEAR(state.sigmaPrev[i], sign * double(k[i]) * epsMax, 1e-4 * k[i] * epsMax);
  }
}

TEST(Dahl, HalfIncrementsComposeToOneIncrement) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 2000; ++trial) {
    const float sigmaMax = float(rng.logUniform(1e-3, 1e3));
    const float tau = float(rng.logUniform(1e-3, 1.0));
    const float sigma0 = float(rng.uniform(-1, 1) * sigmaMax);
    const float dKappa = float(rng.sign() * rng.logUniform(1e-5, 1.0));
    const float whole = dahlStress(sigma0, dKappa, sigmaMax, tau, 0.0f);
    const float half = dahlStress(sigma0, 0.5f * dKappa, sigmaMax, tau, 0.0f);
    const float halves = dahlStress(half, 0.5f * dKappa, sigmaMax, tau, 0.5f * dKappa);
    EXPECT_NEAR(halves, whole, 1e-5 * sigmaMax) << "trial " << trial;
    // And ten pieces.
    float pieces = sigma0;
    for (int i = 0; i < 10; ++i) pieces = dahlStress(pieces, 0.1f * dKappa, sigmaMax, tau, dKappa);
    EXPECT_NEAR(pieces, whole, 3e-5 * sigmaMax) << "trial " << trial;
  }
}

// ---- The hysteresis loop -----------------------------------------------------------------------

/// What a cyclic strain κ(t) = A·sin t does to one joint, per κ axis.
struct Loop {
  Vec3d area = Vec3d::Zero();   // ∮ M dκ over the second cycle, M = k·κ + σ0 [N·m·rad]
  Vec3d atMax = Vec3d::Zero();  // σ0 where κ = +A in the second cycle [N·m]
  Vec3d atMin = Vec3d::Zero();  // σ0 where κ = −A [N·m]
};

/// Two cycles of κ = A·sin t in `steps` per cycle, each step as the solver does it: dahlCompute at
/// the start-of-step strain (σ0 is the stress there), then dahlUpdate at the end-of-step strain.
Loop drive(const Vec3d& amplitude, const Vec3& k, float epsMax, float tau, bool enabled,
           int steps) {
  Loop loop;
  DahlState state;
  const auto strainAt = [&](int n) {
    return toFloat(amplitude * std::sin(2 * std::numbers::pi * n / steps));
  };
  Vec3d previousMoment = Vec3d::Zero(), previousKappa = Vec3d::Zero();
  for (int n = 0; n <= 2 * steps; ++n) {
    const Vec3 kappa = strainAt(n);
    const DahlTerms terms = dahlCompute(state, kappa, k, epsMax, tau, enabled, n == 0);
    const Vec3d moment = toEigen(k).cwiseProduct(toEigen(kappa)) + toEigen(terms.sigma0);
    // Trapezoid rule over the second cycle (the conservative k·κ part integrates to 0).
    if (n > steps)
      loop.area += 0.5 * (moment + previousMoment).cwiseProduct(toEigen(kappa) - previousKappa);
    if (n == steps + steps / 4) loop.atMax = toEigen(terms.sigma0);
    if (n == steps + 3 * steps / 4) loop.atMin = toEigen(terms.sigma0);
    previousMoment = moment;
    previousKappa = toEigen(kappa);
    if (n < 2 * steps) dahlUpdate(state, strainAt(n + 1), k, epsMax, tau, enabled);
  }
  return loop;
}

/// ∮σ dκ over the second cycle by explicit Euler on dσ/dκ = (σ_max − dir·σ)/τ with `substeps`
/// per cycle, independent of the kernel.
double integrateLoop(double amplitude, double sigmaMax, double tau, int substeps) {
  double sigma = 0, area = 0, kappa = 0;
  for (int n = 1; n <= 2 * substeps; ++n) {
    const double next = amplitude * std::sin(2 * std::numbers::pi * n / substeps);
    const double dKappa = next - kappa;
    const double dir = dKappa >= 0 ? 1.0 : -1.0;
    const double sigmaNext = sigma + (sigmaMax - dir * sigma) / tau * dKappa;
    if (n > substeps) area += 0.5 * (sigma + sigmaNext) * dKappa;
    sigma = sigmaNext;
    kappa = next;
  }
  return area;
}

/// The periodic Dahl loop between ±A in closed form: each branch starts at ∓σ* with
/// σ* = σ_max(1 − E)/(1 + E), E = e^{−2A/τ}, and ∮σ dκ = 2[2Aσ_max − (σ_max + σ*)·τ·(1 − E)].
double periodicLoopArea(double amplitude, double sigmaMax, double tau) {
  const double E = std::exp(-2 * amplitude / tau);
  const double sigmaStar = sigmaMax * (1 - E) / (1 + E);
  return 2 * (2 * amplitude * sigmaMax - (sigmaMax + sigmaStar) * tau * (1 - E));
}

TEST(Dahl, CyclicStrainTracesTheDahlHysteresisLoop) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 6; ++trial) {
    const float tau = float(rng.uniform(0.02, 0.1));
    const float epsMax = float(rng.uniform(0.05, 2.0));
    const Vec3 k = toFloat(rng.vec(0.5, 5.0));
    // Bend x, y and twist: amplitudes from a few τ to many (twist below π: no wrap).
    const Vec3d amplitude(rng.uniform(2, 4) * tau, rng.uniform(5, 10) * tau, rng.uniform(1.0, 3.0));
    const Loop loop = drive(amplitude, k, epsMax, tau, true, 4000);
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(::testing::Message() << "axis " << i << " A/tau " << amplitude[i] / tau);
      const double A = amplitude[i], sigmaMax = double(k[i]) * epsMax;
      const double reference = integrateLoop(A, sigmaMax, tau, 400000);
      // Dissipative, and the loop of the Dahl law: numerically and in closed form.
      EXPECT_GT(loop.area[i], 0.0);
      EXPECT_NEAR(loop.area[i], reference, 0.01 * reference);
      EXPECT_NEAR(loop.area[i], periodicLoopArea(A, sigmaMax, tau), 0.01 * reference);
      // The friction stress saturates at the extremes: σ(±A) = ±σ*, ≈ ±σ_max when A ≫ τ.
      const double E = std::exp(-2 * A / tau);
      const double sigmaStar = sigmaMax * (1 - E) / (1 + E);
      EXPECT_NEAR(loop.atMax[i], sigmaStar, 2e-3 * sigmaMax);
      EXPECT_NEAR(loop.atMin[i], -sigmaStar, 2e-3 * sigmaMax);
      if (A > 5 * tau) {
        EXPECT_GT(loop.atMax[i], 0.99 * sigmaMax);
        // The area is the envelope 4Aσ_max less the reversal, 4σ_max·τ for A ≫ τ.
        EXPECT_NEAR(loop.area[i], 4 * sigmaMax * (A - tau), 0.01 * reference);
      }
    }
  }
}

TEST(Dahl, LoopHasNoAreaWithDahlOff) {
  const Vec3d amplitude(0.3, 0.5, 2.0);
  const Vec3 k{2.0f, 3.0f, 4.0f};
  for (const auto& [epsMax, tau, enabled] :
       {std::tuple{0.0f, 0.05f, true}, {0.5f, 0.0f, true}, {0.5f, 0.05f, false}}) {
    const Loop loop = drive(amplitude, k, epsMax, tau, enabled, 1000);
    for (int i = 0; i < 3; ++i) {
      EXPECT_LT(std::abs(loop.area[i]), 1e-6 * k[i] * amplitude[i] * amplitude[i]);
      EXPECT_EQ(loop.atMax[i], 0.0);
    }
  }
  // With it on, the same drive dissipates.
  const Loop on = drive(amplitude, k, 0.5f, 0.05f, true, 1000);
  for (int i = 0; i < 3; ++i) EXPECT_GT(on.area[i], 0.1 * k[i] * 0.5 * amplitude[i]);
}

// ---- Start- and end-of-step terms --------------------------------------------------------------

TEST(Dahl, ComputeGivesTheLaggedStressClampedAndTheDahlSlope) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 k = toFloat(rng.vec(0.1, 10.0));
    const float epsMax = float(rng.uniform(0.05, 1.0)), tau = float(rng.uniform(0.01, 0.2));
    DahlState state;
    state.kappaPrev = toFloat(rng.vec(-1, 1));
    state.dKappaPrev = toFloat(rng.vec(-1e-2, 1e-2));
    for (int i = 0; i < 3; ++i) state.sigmaPrev[i] = float(rng.uniform(-1.5, 1.5) * k[i] * epsMax);
    // Normally κ_now is the κ_prev of the last update; here also a drift of up to 0.1.
    const bool drift = trial % 2 == 1;
    const Vec3 kappaNow =
        drift ? toFloat(toEigen(state.kappaPrev) + rng.vec(-0.1, 0.1)) : state.kappaPrev;
    const DahlState before = state;
    const DahlTerms terms = dahlCompute(state, kappaNow, k, epsMax, tau, true, false);
    for (int i = 0; i < 3; ++i) {
      const double sigmaMax = double(k[i]) * epsMax;
      const double dKappa = double(kappaNow[i]) - before.kappaPrev[i];
      const double dir = std::abs(dKappa) > 1e-6 ? (dKappa > 0 ? 1.0 : -1.0)
                                                 : (before.dKappaPrev[i] >= 0 ? 1.0 : -1.0);
      const double sigma = std::clamp(
          dahlReference(before.sigmaPrev[i], dKappa, sigmaMax, tau, dir), -sigmaMax, sigmaMax);
      EXPECT_NEAR(terms.sigma0[i], sigma, 1e-5 * sigmaMax) << "trial " << trial;
      EXPECT_LE(std::abs(terms.sigma0[i]), sigmaMax * (1 + 1e-6));
      const double slope = std::max((sigmaMax - dir * sigma) / (tau + std::abs(dKappa)), 0.0);
      EXPECT_NEAR(terms.cFric[i], slope, 1e-5 * sigmaMax / tau) << "trial " << trial;
    }
    // The state itself is only read.
    EXPECT_EQ(state.sigmaPrev, before.sigmaPrev);
    EXPECT_EQ(state.kappaPrev, before.kappaPrev);
  }
}

TEST(Dahl, RebaselineRestartsAtTheCurrentStrainWithoutStress) {
  const Vec3 k{1.0f, 2.0f, 3.0f};
  DahlState state{{0.3f, -0.2f, 0.1f}, {0.5f, 0.5f, 0.5f}, {1e-3f, -1e-3f, 1e-3f}};
  const Vec3 kappaNow{-0.4f, 0.2f, 1.0f};
  const DahlTerms terms = dahlCompute(state, kappaNow, k, 0.5f, 0.1f, true, true);
  EXPECT_EQ(state.kappaPrev, kappaNow);
  EXPECT_EQ(state.sigmaPrev, Vec3{});
  EXPECT_EQ(state.dKappaPrev, Vec3{});
  EXPECT_EQ(terms.sigma0, Vec3{});
  // No history: loading direction +, slope σ_max/τ.
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(terms.cFric[i], k[i] * 0.5f / 0.1f);
  // Inactive: still rebaselined, no terms.
  DahlState off{{0.3f, -0.2f, 0.1f}, {}, {}};
  const DahlTerms none = dahlCompute(off, kappaNow, k, 0.0f, 0.1f, true, true);
  EXPECT_EQ(off.kappaPrev, kappaNow);
  EXPECT_EQ(none.sigma0, Vec3{});
  EXPECT_EQ(none.cFric, Vec3{});
}

TEST(Dahl, UpdateAdvancesActiveAxesAndResetsInactiveOnes) {
  const Vec3 kappaPrev{0.1f, 0.2f, 3.1f};
  const DahlState start{{0.05f, -0.05f, 0.1f}, kappaPrev, {1e-3f, 1e-3f, 1e-3f}};
  // Twist crosses ±π: the increment is the wrapped 2π − 6.2, not −6.2.
  const Vec3 kappaFinal{0.15f, 0.1f, -3.1f};
  const double dTwist = 2 * std::numbers::pi - 6.2;
  const float epsMax = 0.5f, tau = 0.1f;

  DahlState s = start;
  const Vec3 k{1.0f, 1.0f, 2.0f};
  dahlUpdate(s, kappaFinal, k, epsMax, tau, true);
  EXPECT_NEAR(s.sigmaPrev.x, dahlReference(0.05, 0.05, 0.5, 0.1, 1.0), 1e-6);
  EXPECT_NEAR(s.sigmaPrev.y, dahlReference(-0.05, -0.1, 0.5, 0.1, -1.0), 1e-6);
  EXPECT_NEAR(s.sigmaPrev.z, dahlReference(0.1, dTwist, 1.0, 0.1, 1.0), 1e-5);
  EXPECT_NEAR(s.dKappaPrev.z, dTwist, 1e-5);
  EXPECT_EQ(s.kappaPrev, kappaFinal);

  // Bend without stiffness: those axes carry nothing; twist still advances.
  s = start;
  dahlUpdate(s, kappaFinal, Vec3{0.0f, 0.0f, 2.0f}, epsMax, tau, true);
  EXPECT_EQ(s.sigmaPrev.x, 0.0f);
  EXPECT_EQ(s.sigmaPrev.y, 0.0f);
  EXPECT_EQ(s.dKappaPrev.x, 0.0f);
  EXPECT_NEAR(s.sigmaPrev.z, dahlReference(0.1, dTwist, 1.0, 0.1, 1.0), 1e-5);

  // ε_max ≤ 0 or τ ≤ 0: no stress, but the increment is remembered.
  for (const auto& [e, t] : {std::pair{0.0f, tau}, {epsMax, 0.0f}}) {
    s = start;
    dahlUpdate(s, kappaFinal, k, e, t, true);
    EXPECT_EQ(s.sigmaPrev, Vec3{});
    EXPECT_NEAR(s.dKappaPrev.x, 0.05, 1e-6);
    EXPECT_NEAR(s.dKappaPrev.z, dTwist, 1e-5);
    EXPECT_EQ(s.kappaPrev, kappaFinal);
  }

  // Disabled, or no bend/twist stiffness at all: everything but κ_prev resets.
  for (const auto& [stiffness, enabled] : {std::pair{k, false}, {Vec3{}, true}}) {
    s = start;
    dahlUpdate(s, kappaFinal, stiffness, epsMax, tau, enabled);
    EXPECT_EQ(s.sigmaPrev, Vec3{});
    EXPECT_EQ(s.dKappaPrev, Vec3{});
    EXPECT_EQ(s.kappaPrev, kappaFinal);
  }
}

TEST(Dahl, AxisStiffnessIsBendBendTwist) {
  RodMaterial m;
  m.bendStiffness = 2.0f;
  m.twistStiffness = 5.0f;
  m.stretchStiffness = 100.0f;
  EXPECT_EQ(dahlAxisStiffness(m), (Vec3{2.0f, 2.0f, 5.0f}));
  EXPECT_TRUE(dahlActive(dahlAxisStiffness(m), 0.1f, 0.05f, true));
  EXPECT_FALSE(dahlActive(dahlAxisStiffness(m), 0.1f, 0.05f, false));
  EXPECT_FALSE(dahlActive(dahlAxisStiffness(m), 0.0f, 0.05f, true));
  EXPECT_FALSE(dahlActive(dahlAxisStiffness(m), 0.1f, 0.0f, true));
  EXPECT_FALSE(dahlActive(Vec3{}, 0.1f, 0.05f, true));
}

}  // namespace
}  // namespace weft
