// Cloth self-contact between a vertex and a triangle and between two edges: the OGC-style barrier
// on the closest distance, normal damping and lagged IPC friction, as per-vertex force and
// Hessian blocks for the VBD Newton step (cloth_vbd_spec §5.7; Offset Geometric Contact, Chen et
// al. 2025; friction from IPC, Li et al. 2020).
//
// A pair is measured by its closest points (kernels/closest_point.h): d = |x_v − c*| for a
// vertex v and its closest point c* = Σ β_j x_j on triangle (a, b, c), and d = |c1 − c2| for two
// edges. Both are stencils with weights b, so that the gap vector is Σ b_j x_j and, by the
// envelope theorem (the closest point minimises the distance), ∂d/∂x_j = b_j·n with
// n the unit gap direction, in every region of the query:
//   vertex–triangle  b = (−β_a, −β_b, −β_c, +1) for (a, b, c, v),  n = (x_v − c*)/d
//   edge–edge        b = (1 − s, s) for e1's endpoints,            n = (c1 − c2)/d
// Per stencil vertex j, with E(d) the barrier below, λ = −E'(d) > 0 the normal load, and
// Δx = Σ b_j (x_j − x̄_j) the relative displacement of the gap over the step (x̄ = step-start
// positions, the same weights):
//   elastic   f_j = −E'·b_j·n                 H_j = E''·b_j²·nnᵀ
//   damping   f_j = −kd·ġ·b_j·n, ġ = n·Δx/dt  H_j = (kd/dt)·b_j²·nnᵀ      only while ġ < −1e-6
//   friction  f_j = −b_j·μλφ(|u|)·u          H_j = b_j²·μλφ(|u|)·(I − nnᵀ)
// with u = (I − nnᵀ)Δx the tangential slip and φ the smoothed IPC weight of
// particle_shape_contact.h. The spec writes friction in a 2-D tangent basis T (u = TᵀΔx,
// f = −μλφ·Tu, H = μλφ·TTᵀ); since TTᵀ = I − nnᵀ for any orthonormal basis of n⊥, the projector
// form used here is the same law without building a basis.
// The elastic force is the exact gradient of E(d(x)); its Hessian is the Gauss–Newton block (it
// drops E'·∂²d/∂x², the curvature of the distance), which is PSD because E'' > 0. Damping and
// friction treat n and the weights as constants of the iterate (lagged), so every block is PSD.
//
// Ownership (§5.7): a vertex–triangle record drives all four stencil vertices; an edge–edge pair
// is recorded in both edges' buffers and each record pushes only its owner edge's endpoints, so
// the mirror record supplies the other half.
#pragma once

#include "kernels/closest_point.h"
#include "kernels/force_hessian.h"
#include "kernels/math.h"
#include "kernels/particle_shape_contact.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// d_min of the barrier: below it the log barrier is continued by a quadratic [m].
inline constexpr float kSelfContactMinDistance = 1e-5f;
/// ġ below which the gap counts as closing and is damped [m/s].
inline constexpr float kSelfContactApproachSpeed = 1e-6f;
/// Squared length below which an edge counts as a point in the edge–edge force [m²].
inline constexpr float kEdgeEdgeContactEpsilon = 1e-5f;

struct BarrierDerivatives {
  float dE;   // E'(d) [N], <= 0 inside the radius
  float d2E;  // E''(d) [N/m], > 0 inside the radius
};

/// E'(d), E''(d) of the self-contact barrier (§5.7, evaluate_self_contact_force_norm), with
/// τ = radius/2 and d_min = 1e-5: ½k(r − d)² on [τ, r), the log barrier −kτ²·ln d on (d_min, τ),
/// and below d_min the quadratic continuation E' = kτ²(d − 2d_min)/d_min², so that E' and E'' are
/// continuous at τ and d_min (the C2 fix of the reference's #2235). Zero for d >= radius. Assumes
/// τ > d_min (radius > 2e-5 m); otherwise the log band is empty and E' jumps at τ.
WEFT_HD inline BarrierDerivatives selfContactBarrier(float d, float radius, float stiffness) {
  if (!(d < radius)) return {0.0f, 0.0f};
  const float tau = 0.5f * radius;
  if (d >= tau) return {-stiffness * (radius - d), stiffness};
  const float kTau2 = stiffness * tau * tau;
  if (d > kSelfContactMinDistance) return {-kTau2 / d, kTau2 / (d * d)};
  const float dMin = kSelfContactMinDistance;
  return {kTau2 * (d - 2.0f * dMin) / (dMin * dMin), kTau2 / (dMin * dMin)};
}

/// E(d) whose derivative is selfContactBarrier's E' [J]: zero at and beyond the radius and
/// continuous at τ and d_min, i.e. ½k(r − d)², kτ²(½ − ln(d/τ)), and
/// kτ²((d − 2d_min)²/(2d_min²) − ln(d_min/τ)).
WEFT_HD inline float selfContactBarrierEnergy(float d, float radius, float stiffness) {
  if (!(d < radius)) return 0.0f;
  const float tau = 0.5f * radius;
  if (d >= tau) return 0.5f * stiffness * (radius - d) * (radius - d);
  const float kTau2 = stiffness * tau * tau;
  if (d > kSelfContactMinDistance) return kTau2 * (0.5f - logf(d / tau));
  const float dMin = kSelfContactMinDistance;
  const float g = d - 2.0f * dMin;
  return kTau2 * (g * g / (2.0f * dMin * dMin) - logf(dMin / tau));
}

struct SelfContactParams {
  float radius;            // r: the barrier acts for d < r [m] (particle_self_contact_radius)
  float stiffness;         // k [N/m] (soft_contact_ke)
  float damping;           // kd [N·s/m] (soft_contact_kd)
  float friction;          // μ [-] (soft_contact_mu)
  float frictionEpsilonU;  // ε_u = friction_epsilon·dt, a displacement [m]
  float dtSeconds;         // step size [s]
};

/// Force and Hessian block of one stencil vertex of an active pair: weight b (∂d/∂x_j = b·n),
/// unit gap direction n, distance d (0 < d < r) and the gap's relative displacement Δx over the
/// step. The three terms of the table at the top of this file.
WEFT_HD inline ForceHessian selfContactStencilForceHessian(float weight, const Vec3& normal,
                                                           float distance,
                                                           const Vec3& relativeDisplacement,
                                                           const SelfContactParams& params) {
  ForceHessian out;
  const BarrierDerivatives barrier = selfContactBarrier(distance, params.radius, params.stiffness);
  const Mat33 nnT = outer(normal, normal);
  const float weight2 = weight * weight;
  out.force = (-barrier.dE * weight) * normal;
  out.hessian = (barrier.d2E * weight2) * nnT;

  // Damping of the closing speed only, so that it never holds the two sides together.
  const float normalDisplacement = dot(normal, relativeDisplacement);
  const float gapRate = normalDisplacement / params.dtSeconds;  // ġ [m/s]
  if (gapRate < -kSelfContactApproachSpeed) {
    out.force -= (params.damping * gapRate * weight) * normal;
    out.hessian += (params.damping / params.dtSeconds * weight2) * nnT;
  }

  // Lagged IPC friction on the tangential slip, bounded by μλ (λ = −E').
  const Vec3 slip = relativeDisplacement - normalDisplacement * normal;
  const float slipLength = length(slip);
  if (slipLength > 0.0f) {
    const float s = params.friction * (-barrier.dE) *
                    frictionWeight(slipLength, params.frictionEpsilonU);  // μλφ(|u|)
    out.force -= (s * weight) * slip;
    out.hessian += (s * weight2) * (Mat33::identity() - nnT);
  }
  return out;
}

/// Force on, and Hessian block of, stencil vertex `slot` of the vertex–triangle pair (v; a, b, c):
/// slot 0, 1, 2 = corners a, b, c, slot 3 = the vertex v (§5.7). x* are the current positions,
/// p* the positions at the start of the step (the damping and friction anchor). Zero unless
/// 0 < d < radius, and for a slot outside [0, 3].
WEFT_HD inline ForceHessian vertexTriangleContactForceHessian(
    int slot, const Vec3& xv, const Vec3& xa, const Vec3& xb, const Vec3& xc, const Vec3& pv,
    const Vec3& pa, const Vec3& pb, const Vec3& pc, const SelfContactParams& params) {
  const TriangleClosestPoint closest = closestPointOnTriangle(xv, xa, xb, xc);
  const Vec3 gap = xv - closest.point;
  const float distance = length(gap);
  if (!(distance > 0.0f && distance < params.radius) || slot < 0 || slot > 3) return {};
  const Vec3 normal = gap / distance;
  const Vec3& beta = closest.barycentric;
  const float weight = slot == 3 ? 1.0f : -beta[slot];
  // Δx = (x_v − x̄_v) − Σ β_j (x_j − x̄_j): the spec's (x_v − x̄_v) − (c* − c̄) with c̄ on the
  // same barycentrics, summed from the per-vertex displacements so that a slip much smaller than
  // the coordinates keeps its precision.
  const Vec3 relativeDisplacement =
      (xv - pv) - (beta.x * (xa - pa) + beta.y * (xb - pb) + beta.z * (xc - pc));
  return selfContactStencilForceHessian(weight, normal, distance, relativeDisplacement, params);
}

/// Force on, and Hessian block of, endpoint `slot` (0 = p1, 1 = q1) of the owner edge
/// e1 = (p1, q1) of the edge–edge pair (e1, e2 = (p2, q2)) (§5.7). e2 receives nothing here: its
/// mirror record, evaluated with the roles swapped, supplies its half. pp*, pq* are the
/// step-start positions. Closest points with epsilon 1e-5. Zero unless 0 < d < radius, and for a
/// slot other than 0 or 1.
WEFT_HD inline ForceHessian edgeEdgeContactForceHessian(int slot, const Vec3& p1, const Vec3& q1,
                                                        const Vec3& p2, const Vec3& q2,
                                                        const Vec3& pp1, const Vec3& pq1,
                                                        const Vec3& pp2, const Vec3& pq2,
                                                        const SelfContactParams& params) {
  const EdgeEdgeClosest closest = closestPointEdgeEdge(p1, q1, p2, q2, kEdgeEdgeContactEpsilon);
  const float s = closest.s, t = closest.t;
  const Vec3 c1 = p1 + s * (q1 - p1), c2 = p2 + t * (q2 - p2);
  const Vec3 gap = c1 - c2;
  const float distance = length(gap);
  if (!(distance > 0.0f && distance < params.radius) || slot < 0 || slot > 1) return {};
  const Vec3 normal = gap / distance;
  const float weight = slot == 0 ? 1.0f - s : s;
  // Δx = (c1 − c̄1) − (c2 − c̄2) with the same (s, t) on the step-start positions, from the
  // per-vertex displacements (see the vertex–triangle case).
  const Vec3 relativeDisplacement =
      ((1.0f - s) * (p1 - pp1) + s * (q1 - pq1)) - ((1.0f - t) * (p2 - pp2) + t * (q2 - pq2));
  return selfContactStencilForceHessian(weight, normal, distance, relativeDisplacement, params);
}

/// Barrier energy E(d) of the vertex–triangle pair at its current closest distance [J] (zero for
/// d >= radius); −∂/∂x_j of it is the elastic force above.
WEFT_HD inline float vertexTriangleContactEnergy(const Vec3& xv, const Vec3& xa, const Vec3& xb,
                                                 const Vec3& xc, float radius, float stiffness) {
  const float distance = length(xv - closestPointOnTriangle(xv, xa, xb, xc).point);
  return selfContactBarrierEnergy(distance, radius, stiffness);
}

/// Barrier energy E(d) of the edge–edge pair [J]. The whole pair's energy: its gradient with
/// respect to e1's endpoints is the owner record's elastic force, with respect to e2's the
/// mirror record's.
WEFT_HD inline float edgeEdgeContactEnergy(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                           const Vec3& q2, float radius, float stiffness) {
  return selfContactBarrierEnergy(
      closestPointEdgeEdge(p1, q1, p2, q2, kEdgeEdgeContactEpsilon).distance, radius, stiffness);
}

}  // namespace weft
