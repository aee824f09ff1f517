// Dahl hysteresis friction on the bend/twist of ROD joints (rigid_avbd_spec §5.8).
//
// Per κ axis (bend x, bend y, twist) a friction stress σ follows the Dahl law
// dσ/dκ = (σ_max − dir·σ)/τ, whose exact solution for a monotone increment Δκ is
//   σ = dir·σ_max·(1 − e) + σ_prev·e,  e = exp(−dir·Δκ/τ),
// with dir the loading direction (sign of Δκ, or of the previous increment inside a ±1e-6
// deadband). The envelope is σ_max = k_axis·ε_max (k_axis: the bend/twist material stiffness), τ
// the strain over which the stress reverses. After loading and release the rod rests where
// K·κ + σ = 0: a residual strain of up to ε_max.
//
// Per step: dahlCompute() at the START-of-step poses gives the lagged stress σ0 (clamped to
// ±σ_max) that rodJointBlock adds to the generalized force, and C_fric = (σ_max − dir·σ0)/(τ +
// |Δκ|) that it adds only to the Hessian diagonal (not a consistent linearization; it slows motion
// per iteration without moving the fixed point — reproduced as specified). dahlUpdate() at the
// FINAL poses advances the state (no clamp there). The state's κ_prev is rebaselined on the first
// step and after a reset. Dahl is active for a joint iff it is enabled, τ > 0, ε_max > 0 and some
// k_axis > 0; axes with σ_max = 0 carry no stress.
#pragma once

#include "kernels/math.h"
#include "kernels/rod_joint.h"
#include "kernels/runtime/platform.h"

namespace weft {

inline constexpr float kDahlDirectionDeadband = 1e-6f;

/// Per-joint Dahl state, per κ axis (bend x, bend y, twist).
struct DahlState {
  Vec3 sigmaPrev;   // stress at the end of the previous step [N·m]
  Vec3 kappaPrev;   // strain at the end of the previous step [rad]
  Vec3 dKappaPrev;  // the previous step's increment (direction memory) [rad]
};

/// What the block of a step needs (RodStepTerms::dahlSigma0 / dahlCFric).
struct DahlTerms {
  Vec3 sigma0;  // lagged stress, clamped to ±σ_max [N·m]
  Vec3 cFric;   // Hessian-only tangent term [N·m/rad]
};

/// Loading direction: sign of dKappa outside the ±1e-6 deadband, else that of the previous
/// increment (+1 when it was 0).
WEFT_HD inline float dahlDirection(float dKappa, float dKappaPrev) {
  if (dKappa > kDahlDirectionDeadband) return 1.0f;
  if (dKappa < -kDahlDirectionDeadband) return -1.0f;
  return dKappaPrev >= 0.0f ? 1.0f : -1.0f;
}

/// Exact Dahl update of one axis over the increment dKappa [rad] from sigmaPrev, with the envelope
/// sigmaMax [N·m] and reversal length tau [rad] > 0; dKappaPrev only breaks deadband ties.
WEFT_HD inline float dahlStress(float sigmaPrev, float dKappa, float sigmaMax, float tau,
                                float dKappaPrev) {
  const float dir = dahlDirection(dKappa, dKappaPrev);
  const float e = expf(-dir * dKappa / tau);
  return dir * sigmaMax * (1.0f - e) + sigmaPrev * e;
}

/// Per-axis stiffness k_axis of a ROD joint: (bend, bend, twist) material stiffness.
WEFT_HD inline Vec3 dahlAxisStiffness(const RodMaterial& m) {
  return {m.bendStiffness, m.bendStiffness, m.twistStiffness};
}

/// True when Dahl acts on the joint at all.
WEFT_HD inline bool dahlActive(const Vec3& axisStiffness, float epsMax, float tau, bool enabled) {
  return enabled && tau > 0.0f && epsMax > 0.0f &&
         (axisStiffness.x > 0.0f || axisStiffness.y > 0.0f || axisStiffness.z > 0.0f);
}

/// Start of step (spec A10), κ_now = rod strain at the start-of-step poses. With `rebaseline`
/// (first step, reset) the state restarts at κ_now with no stress. Per axis with σ_max > 0:
/// σ0 = clamp(σ(Δκ), ±σ_max), C_fric = max((σ_max − dir·σ0)/(τ + |Δκ|), 0), Δκ = κ_now − κ_prev
/// (twist wrapped); zero terms on other axes and for inactive joints.
WEFT_HD inline DahlTerms dahlCompute(DahlState& state, const Vec3& kappaNow,
                                     const Vec3& axisStiffness, float epsMax, float tau,
                                     bool enabled, bool rebaseline) {
  if (rebaseline) state = {Vec3{}, kappaNow, Vec3{}};
  DahlTerms out;
  if (!dahlActive(axisStiffness, epsMax, tau, enabled)) return out;
  const Vec3 dKappa = rodStrainDifference(kappaNow, state.kappaPrev);
  for (int i = 0; i < 3; ++i) {
    const float sigmaMax = axisStiffness[i] * epsMax;
    if (!(sigmaMax > 0.0f)) continue;
    const float sigma =
        dahlStress(state.sigmaPrev[i], dKappa[i], sigmaMax, tau, state.dKappaPrev[i]);
    const float dir = dahlDirection(dKappa[i], state.dKappaPrev[i]);
    out.sigma0[i] = fminf(fmaxf(sigma, -sigmaMax), sigmaMax);
    out.cFric[i] = fmaxf((sigmaMax - dir * out.sigma0[i]) / (tau + fabsf(dKappa[i])), 0.0f);
  }
  return out;
}

/// End of step (spec F), κ_final = rod strain at the final poses: σ_prev ← σ(Δκ) (no clamp),
/// Δκ_prev ← Δκ per axis with σ_max > 0 (0 on the others); κ_prev ← κ_final. A disabled joint or
/// one without bend/twist stiffness resets σ and Δκ_prev to 0; ε_max ≤ 0 or τ ≤ 0 zero σ but keep
/// Δκ_prev = Δκ.
WEFT_HD inline void dahlUpdate(DahlState& state, const Vec3& kappaFinal, const Vec3& axisStiffness,
                               float epsMax, float tau, bool enabled) {
  const Vec3 dKappa = rodStrainDifference(kappaFinal, state.kappaPrev);
  const bool anyStiffness =
      axisStiffness.x > 0.0f || axisStiffness.y > 0.0f || axisStiffness.z > 0.0f;
  if (!enabled || !anyStiffness) {
    state = {Vec3{}, kappaFinal, Vec3{}};
    return;
  }
  if (!(epsMax > 0.0f) || !(tau > 0.0f)) {
    state = {Vec3{}, kappaFinal, dKappa};
    return;
  }
  for (int i = 0; i < 3; ++i) {
    const float sigmaMax = axisStiffness[i] * epsMax;
    if (sigmaMax > 0.0f) {
      state.sigmaPrev[i] =
          dahlStress(state.sigmaPrev[i], dKappa[i], sigmaMax, tau, state.dKappaPrev[i]);
      state.dKappaPrev[i] = dKappa[i];
    } else {
      state.sigmaPrev[i] = 0.0f;
      state.dKappaPrev[i] = 0.0f;
    }
  }
  state.kappaPrev = kappaFinal;
}

}  // namespace weft
