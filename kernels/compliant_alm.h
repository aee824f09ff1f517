// Compliant augmented-Lagrangian algebra of one constraint row (rigid_avbd_spec §5.3), shared by
// the rigid joints and contacts of the AVBD cable path.
//
// Every row has an authored material stiffness K ≥ 0 and a solver-chosen ALM metric ρ ≥ 0, both
// fixed for a step. With s = K/(K+ρ), a = ρ/(K+ρ) and k_eff = Kρ/(K+ρ) = sρ = aK:
//   primal force of the row   F = k_eff·C + s·λ                 (what a local Newton step sees)
//   relaxed dual ascent       λ ← s·(λ + ρ·C) = s·λ + k_eff·C
// (C is the stabilized residual C − α·C0 of the caller). The fixed point λ* = K·C makes the force
// exactly the material force K·C, while each Newton step only sees k_eff ≤ min(K, ρ). K → ∞ is the
// classic hard AL (F = ρC + λ, λ += ρC); ρ ≫ K a plain penalty K·C. K ≤ 0 or ρ ≤ 0 switch the row
// off (s = 0, k_eff = 0, a = 1).
//
// Neither the coefficients nor the ascent ever form K + ρ or ρ·C: whichever of K and ρ is larger
// divides the smaller, so that the small one of s and a stays accurate in float32 and K = 1e30
// with ρ = 1e-30 (or the reverse) neither overflows nor loses the small coefficient. The branch is
// recoverable from the coefficients (K ≥ ρ ⇔ s ≥ a), so the ascent can run on them alone.
//
// ρ policy for bilateral rows (structural joints): ρ = max(support, 9K), i.e. k_eff ≥ 0.9K, with
// support the inertial scale of the row: (1/h²)/(W_a + W_b) for linear rows, and
// (1/h²)/(tr(I_a⁻¹)/3 + tr(I_b⁻¹)/3) for angular rows (static/kinematic ends contribute 0).
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// The ALM coefficients of one row for a step: s = K/(K+ρ), a = ρ/(K+ρ), k_eff = Kρ/(K+ρ).
struct AlmCoefficients {
  float s = 0.0f;     // share of λ in the primal force [1]
  float a = 1.0f;     // 1 − s [1]
  float kEff = 0.0f;  // stiffness a Newton step sees, ≤ min(K, ρ) [K's unit]
};

/// Coefficients for material stiffness K and ALM metric ρ (§5.3); the row is off when K ≤ 0 or
/// ρ ≤ 0. The branch keeps the smaller of s and a accurate (no K + ρ is formed).
WEFT_HD WEFT_FORCEINLINE AlmCoefficients almCoefficients(float K, float rho) {
  AlmCoefficients c;
  if (!(K > 0.0f) || !(rho > 0.0f)) return c;
  if (K >= rho) {
    const float r = rho / K;
    c.s = 1.0f / (1.0f + r);
    c.kEff = rho * c.s;
    c.a = r * c.s;
  } else {
    const float r = K / rho;
    c.a = 1.0f / (1.0f + r);
    c.s = r * c.a;
    c.kEff = K * c.a;
  }
  return c;
}

/// Primal force of the row, k_eff·C + s·λ (C already stabilized: C − α·C0).
WEFT_HD WEFT_FORCEINLINE float almForce(float C, float lambda, const AlmCoefficients& c) {
  return c.kEff * C + c.s * lambda;
}

/// Relaxed ascent λ ← s·(λ + ρ·C) without forming ρ·C: λ + (k_eff·C − a·λ) when K ≥ ρ (s ≈ 1,
/// a small), s·λ + k_eff·C otherwise (s small). A switched-off row returns 0.
WEFT_HD WEFT_FORCEINLINE float relaxedAscent(float lambda, float C, const AlmCoefficients& c) {
  if (c.s >= c.a) return lambda + (c.kEff * C - c.a * lambda);
  return c.s * lambda + c.kEff * C;
}

WEFT_HD WEFT_FORCEINLINE float relaxedAscent(float lambda, float C, float K, float rho) {
  return relaxedAscent(lambda, C, almCoefficients(K, rho));
}

/// Bilateral ρ policy: max(support, 9K) so that k_eff ≥ 0.9K; 0 (row off) when K ≤ 0.
WEFT_HD WEFT_FORCEINLINE float bilateralRho(float support, float K) {
  if (!(K > 0.0f)) return 0.0f;
  return fmaxf(support, 9.0f * K);
}

/// Linear support (1/h²)/(W_a + W_b) [N/m] from the effective inverse masses [1/kg] (lever arms
/// deliberately ignored). 0 when neither end can move (the bilateral policy then gives 9K).
WEFT_HD WEFT_FORCEINLINE float linearSupport(float invMassA, float invMassB, float h) {
  const float w = invMassA + invMassB;
  return w > 0.0f ? 1.0f / (h * h * w) : 0.0f;
}

/// Angular support (1/h²)/(tr(I_a⁻¹)/3 + tr(I_b⁻¹)/3) [N·m/rad] from the traces of the effective
/// body-frame inverse inertias [1/(kg·m²)] (direction-averaged mobility). 0 when neither moves.
WEFT_HD WEFT_FORCEINLINE float angularSupport(float traceInvInertiaA, float traceInvInertiaB,
                                              float h) {
  const float w = (traceInvInertiaA + traceInvInertiaB) / 3.0f;
  return w > 0.0f ? 1.0f / (h * h * w) : 0.0f;
}

}  // namespace weft
