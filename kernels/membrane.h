// Membrane (in-plane) elasticity of a cloth triangle: stable Neo-Hookean energy plus damping of
// the rate of the right Cauchy–Green tensor C = FᵀF, per vertex, for the VBD Newton step.
//
// F is the 3×2 deformation gradient [f0 | f1] = [x1 − x0 | x2 − x0]·D with D = restInverse, the
// inverse 2-D rest edge matrix (kernels/triangle_geometry.h). Each vertex k of the triangle moves
// F linearly: ∂f0/∂x_k = w0·I and ∂f1/∂x_k = w1·I, with (w0, w1) the slot weights below, so the
// per-vertex force and Hessian block are short contractions of the Piola columns (P0, P1).
//
// Energy (cloth_vbd_spec §5.3; stable Neo-Hookean, Smith et al. 2018, restricted to a 2-D
// manifold): E = area·(μ/2·(I_c − 2) + λ/2·(J − α)²), μ = ke, λ = ka + ke, α = 1 + μ/λ, with
// I_c = |f0|² + |f1|² and J = |f0 × f1| the area ratio. The Hessian block is PSD: the curvature of
// J is kept only when its coefficient s = λ(J − α) is positive (s⁺ = max(0, s)), which makes it
// exact in the stretched regime J ≥ α and a PSD approximation under compression.
// Damping: dissipation potential area·kd/(2dt)·‖C − C_prev‖²_F, C_prev from the step-start
// positions p (VBD, Chen et al. 2024 anchor x_n), with its Gauss–Newton Hessian (exact when
// C = C_prev). kd is an absolute coefficient [N·s/m per m² of rest area].
// Everything is float32 and pure; the caller sums the blocks of all adjacent elements.
#pragma once

#include "kernels/force_hessian.h"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// Columns f0, f1 of the 3×2 deformation gradient F = [x1 − x0 | x2 − x0]·D (cloth_vbd_spec §5.3:
/// f0 = D00·x01 + D10·x02, f1 = D01·x01 + D11·x02).
struct MembraneDeformation {
  Vec3 f0, f1;
};

WEFT_HD inline MembraneDeformation membraneDeformation(const Vec3& x0, const Vec3& x1,
                                                       const Vec3& x2, const Mat22& restInverse) {
  const Vec3 x01 = x1 - x0, x02 = x2 - x0;
  return {restInverse.m00 * x01 + restInverse.m10 * x02,
          restInverse.m01 * x01 + restInverse.m11 * x02};
}

/// (w0, w1) with ∂f0/∂x_slot = w0·I, ∂f1/∂x_slot = w1·I (the spec's scalar slot weights).
struct MembraneSlotWeights {
  float w0, w1;
};

WEFT_HD inline MembraneSlotWeights membraneSlotWeights(int slot, const Mat22& restInverse) {
  const Mat22& d = restInverse;
  if (slot == 1) return {d.m00, d.m01};
  if (slot == 2) return {d.m10, d.m11};
  return {-(d.m00 + d.m10), -(d.m01 + d.m11)};
}

/// Stable Neo-Hookean constants from the reference's (ke, ka): μ = ke, λ = ka + ke and
/// α = 1 + μ/λ_safe, λ_safe = sign(λ)·max(|λ|, 1e-6) with sign(0) = +1 (cloth_vbd_spec §5.3), so
/// that λ = 0 gives a finite α (the λ-term then vanishes because it is scaled by λ itself).
struct StableNeoHookean {
  float mu, lambda, alpha;
};

WEFT_HD inline StableNeoHookean stableNeoHookean(float ke, float ka) {
  const float lambda = ka + ke;
  const float lambdaSafe = (lambda < 0.0f ? -1.0f : 1.0f) * fmaxf(fabsf(lambda), 1e-6f);
  return {ke, lambda, 1.0f + ke / lambdaSafe};
}

/// Area ratio J = |f0 × f1|, floored at 1e-10 like the reference's sqrt(max(J², 1e-20)). The
/// cross product is the same quantity as sqrt(|f0|²|f1|² − (f0·f1)²) (Lagrange's identity) but
/// does not cancel catastrophically in float for nearly rest-shaped triangles.
WEFT_HD inline float membraneAreaRatio(const MembraneDeformation& F) {
  return sqrtf(fmaxf(lengthSquared(cross(F.f0, F.f1)), 1e-20f));
}

/// Force on, and Hessian block of, vertex `slot` (0, 1, 2) of triangle (x0, x1, x2) from the
/// stable Neo-Hookean membrane and its FᵀF-rate damping. p0..p2 are the positions at the start of
/// the step (damping anchor). Hessian is the spec's PSD-clamped block (s⁺ = max(0, s)).
WEFT_HD inline ForceHessian membraneForceHessian(int slot, const Vec3& x0, const Vec3& x1,
                                                 const Vec3& x2, const Vec3& p0, const Vec3& p1,
                                                 const Vec3& p2, const Mat22& restInverse,
                                                 float restArea, float ke, float ka, float kd,
                                                 float dtSeconds) {
  ForceHessian out;
  if (ke <= 0.0f && ka <= 0.0f) return out;
  const StableNeoHookean nh = stableNeoHookean(ke, ka);
  const MembraneDeformation F = membraneDeformation(x0, x1, x2, restInverse);
  const MembraneSlotWeights sw = membraneSlotWeights(slot, restInverse);
  const float w0 = sw.w0, w1 = sw.w1;
  const float f00 = dot(F.f0, F.f0), f11 = dot(F.f1, F.f1), f01 = dot(F.f0, F.f1);
  const float J = membraneAreaRatio(F);

  // Piola columns P = μF + s·∂J/∂F, with g = ∂J/∂f and s = λ(J − α) (cloth_vbd_spec §5.3).
  const Vec3 g0 = (f11 * F.f0 - f01 * F.f1) / J;
  const Vec3 g1 = (f00 * F.f1 - f01 * F.f0) / J;
  const float s = nh.lambda * (J - nh.alpha);
  const Vec3 piola0 = nh.mu * F.f0 + s * g0;
  const Vec3 piola1 = nh.mu * F.f1 + s * g1;
  out.force = -restArea * (w0 * piola0 + w1 * piola1);

  // J = |c(x_k)| with c = f0 × f1 affine in x_k, so ∂²J = (|w|²I − wwᵀ − dJ dJᵀ)/J, w = w0 f1 − w1
  // f0. Scaling that curvature by s⁺ instead of s drops it under compression and keeps the block
  // PSD: a − r|w|² = μ(w0² + w1²) ≥ 0, and c1 = λ − s⁺/J is λ or λα/J, both > 0 whenever λ > 0.
  const float r = fmaxf(0.0f, s) / J;
  const float c1 = nh.lambda - r;
  const Vec3 dJ = w0 * g0 + w1 * g1;
  const Vec3 w = w0 * F.f1 - w1 * F.f0;
  const float a =
      nh.mu * (w0 * w0 + w1 * w1) + r * (w0 * w0 * f11 + w1 * w1 * f00 - 2.0f * w0 * w1 * f01);
  out.hessian = restArea * (Mat33::diagonal(a) + c1 * outer(dJ, dJ) - r * outer(w, w));

  if (kd > 0.0f) {
    // Damping of Ċ = (C − C_prev)/dt, C = FᵀF; dC.. = ∂C../∂x_k (cloth_vbd_spec §5.3). The
    // off-diagonal entry appears twice in ‖Ċ‖²_F, hence the factors 2.
    const MembraneDeformation Fp = membraneDeformation(p0, p1, p2, restInverse);
    const float invDt = 1.0f / dtSeconds;
    const float rate00 = (f00 - dot(Fp.f0, Fp.f0)) * invDt;
    const float rate01 = (f01 - dot(Fp.f0, Fp.f1)) * invDt;
    const float rate11 = (f11 - dot(Fp.f1, Fp.f1)) * invDt;
    const Vec3 dC00 = 2.0f * w0 * F.f0;
    const Vec3 dC01 = w0 * F.f1 + w1 * F.f0;
    const Vec3 dC11 = 2.0f * w1 * F.f1;
    out.force -= restArea * kd * (rate00 * dC00 + 2.0f * rate01 * dC01 + rate11 * dC11);
    // 2 dC01 dC01ᵀ as dC01 (2 dC01)ᵀ (the same bits: scaling by two is exact), and the sum of
    // the three outer products with explicit fused multiply-adds on CUDA (addOuter): nvcc fused
    // a different one of the products with the additions in some tile kernels' inlining of this
    // code than in others, and the tile sizes disagreed.
    out.hessian += (restArea * kd * invDt) *
                   addOuter(addOuter(outer(dC00, dC00), dC01, 2.0f * dC01), dC11, dC11);
  }
  return out;
}

/// Elastic energy area·ψ of the triangle [J]; zero when ke <= 0 and ka <= 0 (element skipped).
WEFT_HD inline float membraneEnergy(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                    const Mat22& restInverse, float restArea, float ke, float ka) {
  if (ke <= 0.0f && ka <= 0.0f) return 0.0f;
  const StableNeoHookean nh = stableNeoHookean(ke, ka);
  const MembraneDeformation F = membraneDeformation(x0, x1, x2, restInverse);
  const float ic = dot(F.f0, F.f0) + dot(F.f1, F.f1);
  const float jMinusAlpha = membraneAreaRatio(F) - nh.alpha;
  return restArea * (0.5f * nh.mu * (ic - 2.0f) + 0.5f * nh.lambda * jMinusAlpha * jMinusAlpha);
}

/// Dissipation potential area·kd/(2dt)·‖FᵀF − FₚᵀFₚ‖²_F [J] whose negative gradient (w.r.t. x,
/// p fixed) is the damping force; zero when kd <= 0. (The element skip for ke <= 0 and ka <= 0
/// lives in membraneForceHessian.)
WEFT_HD inline float membraneDampingPotential(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                              const Vec3& p0, const Vec3& p1, const Vec3& p2,
                                              const Mat22& restInverse, float restArea, float kd,
                                              float dtSeconds) {
  if (kd <= 0.0f) return 0.0f;
  const MembraneDeformation F = membraneDeformation(x0, x1, x2, restInverse);
  const MembraneDeformation Fp = membraneDeformation(p0, p1, p2, restInverse);
  const float d00 = dot(F.f0, F.f0) - dot(Fp.f0, Fp.f0);
  const float d01 = dot(F.f0, F.f1) - dot(Fp.f0, Fp.f1);
  const float d11 = dot(F.f1, F.f1) - dot(Fp.f1, Fp.f1);
  return restArea * kd / (2.0f * dtSeconds) * (d00 * d00 + 2.0f * d01 * d01 + d11 * d11);
}

}  // namespace weft
