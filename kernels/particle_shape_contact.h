// Penalty contact between a particle and a collision shape (the ground plane included): normal
// force, normal damping and lagged IPC-style friction, with the per-particle Hessian block used by
// the VBD Newton step (cloth_vbd_spec §5.8).
//
// A contact record, made once per substep, stores the shape's surface point in the body frame and
// the world normal n (from the shape towards the particle). Its geometry is frozen for the step;
// only the penetration φ = contactDistance − n·(x − b) is re-evaluated at every iterate, with b the
// surface point at the current shape pose. With Δ = (x − x_n) − (b − b_n) the particle's
// displacement relative to the surface over the step (VBD, Chen et al. 2024: x_n is the anchor):
//   normal     E = ½·k·φ²                      f = kφ·n,               H = k·nnᵀ
//   damping    D = kd/(2dt)·(n·Δ)², n·Δ < 0    f = −(kd/dt)(n·Δ)·n,    H = (kd/dt)·nnᵀ
//   friction   F = μλ·f0(|u_t|), λ = kφ       f = −μλ·φ_ε(|u_t|)·u_t,  H = μλ·φ_ε·(I − nnᵀ)
// with u_t = Δ − n(n·Δ) the tangential slip and φ_ε the smoothed weight f0'(u)/u of IPC (Li et
// al. 2020, "Incremental Potential Contact"; ε_u = frictionEpsilon·dt). Damping acts only while the
// particle approaches the surface, so it never glues it. Friction is "lagged": λ and n are held
// fixed, and its Hessian keeps only the constant-weight part (PSD; exact in the limit |u_t| → 0).
// Nothing acts when φ <= 0. The force on the particle is returned; the shape gets no reaction.
#pragma once

#include "kernels/force_hessian.h"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// IPC-style smoothed friction weight φ(u) = 1/u for u > epsU, (2 − u/epsU)/epsU otherwise.
/// φ(u)·u ramps from 0 to 1 over [0, epsU] (static friction as a stiff spring) and is continuous
/// with its derivative at epsU, where it reaches full Coulomb magnitude.
WEFT_HD inline float frictionWeight(float u, float epsU) {
  return u > epsU ? 1.0f / u : (2.0f - u / epsU) / epsU;
}

/// f0(u) with f0' = φ(u)·u and f0(0) = 0: u²/ε − u³/(3ε²) on [0, ε], u − ε/3 beyond.
WEFT_HD inline float frictionPotential(float u, float epsU) {
  return u > epsU ? u - epsU / 3.0f : u * u / epsU - u * u * u / (3.0f * epsU * epsU);
}

/// Penetration φ = contactDistance − n·(x − surfacePoint) [m]; the contact acts when φ > 0.
WEFT_HD inline float contactPenetration(const Vec3& x, const Vec3& surfacePoint, const Vec3& normal,
                                        float contactDistance) {
  return contactDistance - dot(normal, x - surfacePoint);
}

/// Δ: the particle's displacement over the step relative to the surface point (x − x_n − v_b·dt).
WEFT_HD inline Vec3 contactRelativeDisplacement(const Vec3& x, const Vec3& xPrev,
                                                const Vec3& surfacePoint,
                                                const Vec3& surfacePointPrev) {
  return (x - xPrev) - (surfacePoint - surfacePointPrev);
}

/// x: particle position now; xPrev: at step start; surfacePoint/surfacePointPrev: the contact's
/// body-frame surface point mapped to world with the shape pose now / at step start (their
/// difference is the surface displacement v_b·dt); normal: unit world normal pointing from the
/// shape to the particle; contactDistance = particle radius + shape margin. Zero when
/// φ = contactDistance − n·(x − surfacePoint) <= 0.
WEFT_HD inline ForceHessian particleShapeContactForceHessian(
    const Vec3& x, const Vec3& xPrev, const Vec3& surfacePoint, const Vec3& surfacePointPrev,
    const Vec3& normal, float contactDistance, float ke, float kd, float mu,
    float frictionEpsilon /* [m/s]; eps_u = frictionEpsilon·dt */, float dtSeconds) {
  ForceHessian out;
  const float phi = contactPenetration(x, surfacePoint, normal, contactDistance);
  if (!(phi > 0.0f)) return out;
  const Mat33 nnT = outer(normal, normal);
  const float normalLoad = ke * phi;  // λ, also the friction bound
  out.force = normalLoad * normal;
  out.hessian = ke * nnT;

  const Vec3 delta = contactRelativeDisplacement(x, xPrev, surfacePoint, surfacePointPrev);
  const float normalDelta = dot(normal, delta);
  if (normalDelta < 0.0f) {
    const float c = kd / dtSeconds;
    out.force -= (c * normalDelta) * normal;
    out.hessian += c * nnT;
  }

  const Vec3 slip = delta - normalDelta * normal;
  const float slipLength = length(slip);
  if (slipLength > 0.0f) {
    const float s = mu * normalLoad * frictionWeight(slipLength, frictionEpsilon * dtSeconds);
    out.force -= s * slip;
    out.hessian += s * (Mat33::identity() - nnT);
  }
  return out;
}

/// Normal penalty energy ½·ke·φ² [J] (zero when φ <= 0).
WEFT_HD inline float particleShapeContactEnergy(const Vec3& x, const Vec3& surfacePoint,
                                                const Vec3& normal, float contactDistance,
                                                float ke) {
  const float phi = contactPenetration(x, surfacePoint, normal, contactDistance);
  return phi > 0.0f ? 0.5f * ke * phi * phi : 0.0f;
}

/// Normal damping potential kd/(2dt)·(n·Δ)² while approaching (n·Δ < 0) and in contact [J].
WEFT_HD inline float particleShapeContactDampingPotential(const Vec3& x, const Vec3& xPrev,
                                                          const Vec3& surfacePoint,
                                                          const Vec3& surfacePointPrev,
                                                          const Vec3& normal, float contactDistance,
                                                          float kd, float dtSeconds) {
  if (!(contactPenetration(x, surfacePoint, normal, contactDistance) > 0.0f)) return 0.0f;
  const float normalDelta =
      dot(normal, contactRelativeDisplacement(x, xPrev, surfacePoint, surfacePointPrev));
  return normalDelta < 0.0f ? 0.5f * kd / dtSeconds * normalDelta * normalDelta : 0.0f;
}

/// Friction potential μ·λ·f0(|u_t|) with the normal load λ held fixed (the lagged model: pass
/// λ = ke·φ of the iterate whose force is compared) [J]; zero when not in contact.
WEFT_HD inline float particleShapeContactFrictionPotential(
    const Vec3& x, const Vec3& xPrev, const Vec3& surfacePoint, const Vec3& surfacePointPrev,
    const Vec3& normal, float contactDistance, float mu, float normalLoad, float frictionEpsilon,
    float dtSeconds) {
  if (!(contactPenetration(x, surfacePoint, normal, contactDistance) > 0.0f)) return 0.0f;
  const Vec3 delta = contactRelativeDisplacement(x, xPrev, surfacePoint, surfacePointPrev);
  const Vec3 slip = delta - dot(normal, delta) * normal;
  return mu * normalLoad * frictionPotential(length(slip), frictionEpsilon * dtSeconds);
}

}  // namespace weft
