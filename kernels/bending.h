// Dihedral-angle bending of a cloth hinge plus angular-rate damping, per stencil vertex, for the
// VBD Newton step.
//
// A hinge is the stencil (x0, x1, x2, x3) = (o0, o1, v0, v1): two triangles (o0, v0, v1) and
// (o1, v1, v0) sharing the edge e = v1 − v0. The signed angle θ follows dihedralAngle()
// (kernels/triangle_geometry.h): 0 when flat, atan2 of sin and cos of the angle between the
// normals n1 = (x2 − x0) × (x3 − x0) and n2 = (x3 − x1) × (x2 − x1) about ê.
//
// Energy (cloth_vbd_spec §5.4): E = ½·ke·L0·(θ − θ0)², L0 the rest edge length (ke is per unit
// length so that refining the mesh keeps the response). Force −ke·L0·(θ − θ0)·∇θ; Hessian the
// Gauss–Newton ke·L0·∇θ∇θᵀ (the (θ − θ0)·∇²θ term is dropped: PSD, exact at θ = θ0).
// Damping: dissipation kd·L0/(2dt)·Δθ², Δθ = θ − θ_prev wrapped once into [−π, π], θ_prev from
// the step-start positions p (the VBD anchor x_n); it adds −kd·L0·(Δθ/dt)·∇θ and
// (kd·L0/dt)·∇θ∇θᵀ. Nothing acts when ke <= 0 (kd-only bending is inert, like the reference) or
// the current hinge is degenerate (|n1|, |n2| or |e| < 1e-6); damping alone is dropped when the
// previous hinge is degenerate. The caller skips boundary edges (o1 = −1).
// ∇θ uses the closed form of Bridson et al. 2003 ("Simulation of clothing with folds and
// wrinkles"), which the spec allows in place of its matrix form: the wing vertices move θ along
// their face normals by 1/height, and the edge vertices take the balancing lever-arm weights.
#pragma once

#include "kernels/force_hessian.h"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"
#include "kernels/triangle_geometry.h"

namespace weft {

/// True when dihedralAngle() treats the hinge as degenerate (|n1|, |n2| or |e| below 1e-6).
WEFT_HD inline bool hingeIsDegenerate(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                      const Vec3& x3) {
  const Vec3 n1 = cross(x2 - x0, x3 - x0);
  const Vec3 n2 = cross(x3 - x1, x2 - x1);
  return length(n1) < 1e-6f || length(n2) < 1e-6f || length(x3 - x2) < 1e-6f;
}

/// ∇_slot θ (the angle gradient for one stencil vertex), exposed for tests. Zero for a
/// degenerate hinge.
WEFT_HD inline Vec3 dihedralAngleGradient(int slot, const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                          const Vec3& x3) {
  const Vec3 e = x3 - x2;
  const Vec3 n1 = cross(x2 - x0, x3 - x0);
  const Vec3 n2 = cross(x3 - x1, x2 - x1);
  const float l1 = length(n1), l2 = length(n2), le = length(e);
  if (l1 < 1e-6f || l2 < 1e-6f || le < 1e-6f) return {};
  // n/|n|² = n̂/(|e|·h) with h the wing height over the edge: moving a wing vertex by δ along
  // its own normal turns its face by δ/h (Bridson et al. 2003).
  const Vec3 u1 = n1 / (l1 * l1);
  const Vec3 u2 = n2 / (l2 * l2);
  if (slot == 0) return -le * u1;
  if (slot == 1) return -le * u2;
  // The edge vertices balance the wings so that translations and rotations leave θ unchanged:
  // each wing's share goes to the far edge vertex in proportion to its projection on the edge.
  if (slot == 2) return -(dot(x0 - x3, e) * u1 + dot(x1 - x3, e) * u2) / le;
  return (dot(x0 - x2, e) * u1 + dot(x1 - x2, e) * u2) / le;
}

/// Angle difference shifted once by ∓2π so that it lies in [−π, π] (cloth_vbd_spec §5.4): a hinge
/// that crosses θ = ±π between two iterates turned by a small angle, not by almost 2π.
WEFT_HD inline float wrapAngleDifference(float delta) {
  const float kPi = 3.14159265358979f;
  if (delta > kPi) return delta - 2.0f * kPi;
  if (delta < -kPi) return delta + 2.0f * kPi;
  return delta;
}

/// slot: 0 = o0, 1 = o1, 2 = v0, 3 = v1 of the hinge (x0, x1, x2, x3) = (o0, o1, v0, v1).
/// The caller skips boundary hinges (o1 = -1); this returns zero for degenerate hinges
/// (|n1|, |n2| or |e| < 1e-6) and when ke <= 0. Gauss–Newton Hessian k∇θ∇θᵀ.
WEFT_HD inline ForceHessian bendingForceHessian(int slot, const Vec3& x0, const Vec3& x1,
                                                const Vec3& x2, const Vec3& x3, const Vec3& p0,
                                                const Vec3& p1, const Vec3& p2, const Vec3& p3,
                                                float restAngle, float restLength, float ke,
                                                float kd, float dtSeconds) {
  ForceHessian out;
  if (ke <= 0.0f || hingeIsDegenerate(x0, x1, x2, x3)) return out;
  const Vec3 grad = dihedralAngleGradient(slot, x0, x1, x2, x3);
  const float theta = dihedralAngle(x0, x1, x2, x3);
  const float k = ke * restLength;
  // Both terms act along ∇θ: collect the scalar dE/dθ and the scalar Gauss–Newton curvature.
  float dEdTheta = k * (theta - restAngle);
  float curvature = k;
  if (kd > 0.0f && !hingeIsDegenerate(p0, p1, p2, p3)) {
    const float deltaTheta = wrapAngleDifference(theta - dihedralAngle(p0, p1, p2, p3));
    const float c = kd * restLength / dtSeconds;
    dEdTheta += c * deltaTheta;
    curvature += c;
  }
  out.force = -dEdTheta * grad;
  out.hessian = curvature * outer(grad, grad);
  return out;
}

/// ½·ke·L0·(θ − θ0)² [J]; zero for a degenerate hinge and when ke <= 0 (as the force).
WEFT_HD inline float bendingEnergy(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3,
                                   float restAngle, float restLength, float ke) {
  if (ke <= 0.0f || hingeIsDegenerate(x0, x1, x2, x3)) return 0.0f;
  const float d = dihedralAngle(x0, x1, x2, x3) - restAngle;
  return 0.5f * ke * restLength * d * d;
}

/// Dissipation potential kd·L0/(2dt)·Δθ² [J] whose negative gradient (w.r.t. x, p fixed) is the
/// damping force; zero when kd <= 0 or either configuration is degenerate. (The element skip for
/// ke <= 0 lives in bendingForceHessian.)
WEFT_HD inline float bendingDampingPotential(const Vec3& x0, const Vec3& x1, const Vec3& x2,
                                             const Vec3& x3, const Vec3& p0, const Vec3& p1,
                                             const Vec3& p2, const Vec3& p3, float restLength,
                                             float kd, float dtSeconds) {
  if (kd <= 0.0f || hingeIsDegenerate(x0, x1, x2, x3) || hingeIsDegenerate(p0, p1, p2, p3)) {
    return 0.0f;
  }
  const float d =
      wrapAngleDifference(dihedralAngle(x0, x1, x2, x3) - dihedralAngle(p0, p1, p2, p3));
  return 0.5f * kd * restLength / dtSeconds * d * d;
}

}  // namespace weft
