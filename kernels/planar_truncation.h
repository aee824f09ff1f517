// Planar divide-and-truncate (DAT) of one self-contact pair: how far along its displacement each
// stencil vertex may go before the pair could interpenetrate (cloth_vbd_spec §5.9; the Newton
// reference's apply_planar_truncation_parallel_by_collision, a variant of the displacement
// bounds of Offset Geometric Contact, Chen et al. 2025).
//
// The pair is measured at the positions p of the last collision detection, and every vertex has
// moved by its accumulated displacement Δ since. A plane separates the two sides: its normal n is
// the direction of the closest-point gap m (pointing toward the vertex, or toward e1), and its
// point o = c* + λ·m (o = c2 + λ·m for edges) splits the gap in proportion to how far each side
// moves toward the other, λ = δ_t/(δ_t + δ_v) (δ_e2/(δ_e1 + δ_e2)) clamped to [0.05, 0.95] so
// that neither side is left with no room. A vertex whose side approaches and whose segment p → p +
// Δ reaches the plane is a candidate; it may go the fraction τ* = n·(o − p)/(n·Δ) of its
// displacement to the plane, relaxed to t = clamp(min(γτ*, τ* − 1e-3), 0, 1). By the projection
// property of closest points the vertex lies on the positive side of the plane and the triangle (or
// e2) on the negative side, so after Δ_j ← t_j·Δ_j no stencil vertex has crossed it. Each pair
// returns one factor per stencil vertex (1 = not truncated by this pair); the caller takes the
// minimum over all the pairs of a vertex (atomic min) before scaling Δ
// (kernels/apply_truncation_ts.cuh).
#pragma once

#include "kernels/closest_point.h"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct PairTruncation {
  float t[4];  // per stencil vertex: truncation factor in [0, 1], 1 = not truncated by this pair
};

/// Below this |m| the pair has no usable gap direction [m].
inline constexpr float kTruncationMinGap = 1e-12f;
/// |n·Δ| below which a displacement counts as parallel to the plane in the segment test [m].
inline constexpr float kTruncationSegmentParallel = 1e-6f;
/// Squared length below which an edge counts as a point in the truncation's edge query [m²].
inline constexpr float kTruncationEdgeEpsilon = 1e-6f;

namespace detail {

/// λ of the plane point o = base + λ·m, m running from the base side (triangle, e2) to the tip
/// side (vertex, e1): each side gets the share of the gap in proportion to how far it moves
/// toward the other, clamped to [0.05, 0.95]; 0.5 when neither side approaches.
WEFT_HD inline float planeSplit(float baseApproach, float tipApproach) {
  const float total = baseApproach + tipApproach;
  if (!(total > 0.0f)) return 0.5f;
  return fminf(fmaxf(baseApproach / total, 0.05f), 0.95f);
}

/// Whether the segment p → p + Δ meets the plane n·(y − o) = 0 at a parameter within
/// [−endTolerance, 1 + endTolerance]; a displacement with |n·Δ| < 1e-6 never meets it.
WEFT_HD inline bool segmentMeetsPlane(const Vec3& p, const Vec3& delta, const Vec3& normal,
                                      const Vec3& planePoint, float endTolerance) {
  const float normalDelta = dot(normal, delta);
  if (fabsf(normalDelta) < kTruncationSegmentParallel) return false;
  const float tau = dot(normal, planePoint - p) / normalDelta;
  return tau >= -endTolerance && tau <= 1.0f + endTolerance;
}

/// t = clamp(min(γτ*, τ* − 1e-3), 0, 1) with τ* = n·(o − p)/(n·Δ) the fraction of Δ that reaches
/// the plane; 1 when Δ is parallel to the plane (|n·Δ| < parallelEpsilon) or moves away (τ* < 0).
WEFT_HD inline float truncationFactor(const Vec3& p, const Vec3& delta, const Vec3& normal,
                                      const Vec3& planePoint, float relaxation,
                                      float parallelEpsilon) {
  const float normalDelta = dot(normal, delta);
  if (fabsf(normalDelta) < parallelEpsilon) return 1.0f;
  const float tau = dot(normal, planePoint - p) / normalDelta;
  if (tau < 0.0f) return 1.0f;
  return fminf(fmaxf(fminf(relaxation * tau, tau - 1e-3f), 0.0f), 1.0f);
}

}  // namespace detail

/// A unit normal for two edges that touch (no gap direction, §5.9 edge–edge step 2): the normal
/// of the plane of their directions; for parallel edges (within 1e-3 rad), of the plane through
/// the longer one and the bridge between the midpoints; for collinear ones, a direction
/// perpendicular to the longer edge (crossed with the coordinate axis it is least aligned with);
/// for two points, the bridge, else +z. Always unit length and finite for finite input.
WEFT_HD inline Vec3 robustEdgeEdgeNormal(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                         const Vec3& q2) {
  const Vec3 e1 = q1 - p1, e2 = q2 - p2;
  const float l1 = lengthSquared(e1), l2 = lengthSquared(e2);
  // A float cross product of directions at angle θ is off by ~1e-7/θ (rounding of the nearly
  // cancelling products): trust it only for θ > 1e-3, i.e. sin² > 1e-6.
  const Vec3 n = cross(e1, e2);
  if (lengthSquared(n) > 1e-6f * l1 * l2) return normalizeOrZero(n);
  const Vec3 direction = l1 >= l2 ? e1 : e2;
  const float ld = fmaxf(l1, l2);
  const Vec3 bridge = 0.5f * ((p2 + q2) - (p1 + q1));
  const Vec3 nb = cross(direction, bridge);
  if (lengthSquared(nb) > 1e-6f * ld * lengthSquared(bridge)) return normalizeOrZero(nb);
  if (ld > 0.0f) {
    const Vec3 a{fabsf(direction.x), fabsf(direction.y), fabsf(direction.z)};
    const Vec3 axis = (a.x <= a.y && a.x <= a.z) ? Vec3{1.0f, 0.0f, 0.0f}
                      : (a.y <= a.z)             ? Vec3{0.0f, 1.0f, 0.0f}
                                                 : Vec3{0.0f, 0.0f, 1.0f};
    return normalizeOrZero(cross(direction, axis));
  }
  return lengthSquared(bridge) > 0.0f ? normalizeOrZero(bridge) : Vec3{0.0f, 0.0f, 1.0f};
}

/// Which pairs can truncate at all. A stencil vertex is truncated only if it reaches the pair's
/// plane, and the plane lies at λg from the base side and (1 − λ)g from the tip side (g = |m|,
/// λ ∈ [0.05, 0.95] split in proportion to the sides' approaches δ_base, δ_tip): with λ unclamped
/// either side reaches it only if δ_base + δ_tip ≥ g, and with λ clamped the side that moves
/// reaches it only if it alone moves ≥ 0.95g. So a pair can truncate only if δ_base + δ_tip ≥
/// 0.95g, and δ ≤ the longest displacement of the side. The checks below use a lower bound of g
/// that costs a few dot products (the full evaluation's closest points and plane cost ~10×
/// more) and a margin for rounding (kMayTruncateShare = 0.8 instead of 0.95): a pair that fails
/// them returns factor 1 for all four vertices, so skipping it changes nothing
/// (`PlanarTruncation.PairsThatCannotTruncateAreSkipped` checks it on random pairs).
inline constexpr float kMayTruncateShare = 0.8f;

namespace detail {

/// The two sides' longest displacements summed (an upper bound of δ_base + δ_tip).
WEFT_HD inline float sidesReach(float base2, float tip2) {
  return sqrtf(base2) + sqrtf(tip2);
}

/// reach < share · h / sqrt(n2), without the division (false when n2 or h is 0).
WEFT_HD inline bool reachesLessThanBound(float reach, float h, float n2) {
  return reach * reach * n2 < kMayTruncateShare * kMayTruncateShare * h * h;
}

}  // namespace detail

/// False if the vertex–triangle pair (v; a, b, c) provably leaves every factor at 1: the sides
/// move less than 0.8 × the vertex's distance from the triangle's plane (a lower bound of its
/// distance from the triangle).
WEFT_HD inline bool vertexTriangleMayTruncate(const Vec3& pv, const Vec3& pa, const Vec3& pb,
                                              const Vec3& pc, const Vec3& dv, const Vec3& da,
                                              const Vec3& db, const Vec3& dc) {
  const float reach = detail::sidesReach(
      fmaxf(fmaxf(lengthSquared(da), lengthSquared(db)), lengthSquared(dc)), lengthSquared(dv));
  if (reach == 0.0f) return false;  // nothing moved: no vertex reaches the plane
  const Vec3 normal = cross(pb - pa, pc - pa);
  return !detail::reachesLessThanBound(reach, dot(normal, pv - pa), lengthSquared(normal));
}

/// False if the edge–edge pair (p1, q1; p2, q2) provably leaves every factor at 1: the sides move
/// less than 0.8 × a lower bound of the edges' distance, the larger of the distance of their
/// lines (edges more than ~0.01 rad from parallel, where it is well conditioned) and the gap of
/// their projections on the direction between their midpoints, made perpendicular to e1 (a
/// separating axis: exact for parallel edges side by side).
WEFT_HD inline bool edgeEdgeMayTruncate(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                        const Vec3& q2, const Vec3& dp1, const Vec3& dq1,
                                        const Vec3& dp2, const Vec3& dq2) {
  const float reach = detail::sidesReach(fmaxf(lengthSquared(dp2), lengthSquared(dq2)),
                                         fmaxf(lengthSquared(dp1), lengthSquared(dq1)));
  if (reach == 0.0f) return false;
  const Vec3 e1 = q1 - p1, e2 = q2 - p2;
  const float l1 = lengthSquared(e1), l2 = lengthSquared(e2);
  // The evaluation takes an edge this short as its first endpoint: no bound then.
  if (!(l1 > kTruncationEdgeEpsilon && l2 > kTruncationEdgeEpsilon)) return true;
  const Vec3 c = cross(e1, e2);
  const float c2 = lengthSquared(c);
  if (c2 > 1e-4f * l1 * l2 && detail::reachesLessThanBound(reach, dot(c, p2 - p1), c2))
    return false;
  const Vec3 w = 0.5f * ((p2 + q2) - (p1 + q1));
  const Vec3 u = w - (dot(w, e1) / l1) * e1;
  const float gap = fminf(dot(u, p2), dot(u, q2)) - fmaxf(dot(u, p1), dot(u, q1));
  return !(gap > 0.0f && detail::reachesLessThanBound(reach, gap, lengthSquared(u)));
}

/// Truncation of the vertex–triangle pair (v; a, b, c): result slots 0, 1, 2 = a, b, c and
/// 3 = v. p* are the positions at the last detection, d* the displacements accumulated since;
/// relaxation γ (0.85), parallelEpsilon the |n·Δ| below which a vertex is not truncated (1e-5).
/// All 1 when the detection positions have no gap (|m| < 1e-12).
WEFT_HD inline PairTruncation vertexTriangleTruncation(const Vec3& pv, const Vec3& pa,
                                                       const Vec3& pb, const Vec3& pc,
                                                       const Vec3& dv, const Vec3& da,
                                                       const Vec3& db, const Vec3& dc,
                                                       float relaxation, float parallelEpsilon) {
  PairTruncation out{{1.0f, 1.0f, 1.0f, 1.0f}};
  const Vec3 closest = closestPointOnTriangle(pv, pa, pb, pc).point;
  const Vec3 gap = pv - closest;  // m, toward the vertex
  const float gapLength = length(gap);
  if (!(gapLength >= kTruncationMinGap)) return out;
  const Vec3 normal = gap / gapLength;
  // How far each side moves toward the other along n.
  const float vertexApproach = fmaxf(-dot(normal, dv), 0.0f);  // δ_v
  const float triangleApproach =
      fmaxf(fmaxf(dot(normal, da), dot(normal, db)), fmaxf(dot(normal, dc), 0.0f));  // δ_t
  const Vec3 planePoint =
      closest + detail::planeSplit(triangleApproach, vertexApproach) * gap;  // o
  constexpr float kEndTolerance = 1e-8f;
  const Vec3* positions[4] = {&pa, &pb, &pc, &pv};
  const Vec3* displacements[4] = {&da, &db, &dc, &dv};
  for (int j = 0; j < 4; ++j) {
    const bool sideApproaches = j == 3 ? vertexApproach > 0.0f : triangleApproach > 0.0f;
    if (sideApproaches && detail::segmentMeetsPlane(*positions[j], *displacements[j], normal,
                                                    planePoint, kEndTolerance))
      out.t[j] = detail::truncationFactor(*positions[j], *displacements[j], normal, planePoint,
                                          relaxation, parallelEpsilon);
  }
  return out;
}

/// Truncation of the edge–edge pair (e1 = (p1, q1) the owner, e2 = (p2, q2)): result slots 0, 1
/// = p1, q1 and 2, 3 = p2, q2. p* are the positions at the last detection; dp1, dq1, dp2, dq2 the
/// displacements of p1, q1, p2, q2 accumulated since. When the edges touch (|m| < 1e-12) the
/// plane goes through the midpoint of the closest points with robustEdgeEdgeNormal, and all four
/// endpoints are candidates.
WEFT_HD inline PairTruncation edgeEdgeTruncation(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                                 const Vec3& q2, const Vec3& dp1, const Vec3& dq1,
                                                 const Vec3& dp2, const Vec3& dq2, float relaxation,
                                                 float parallelEpsilon) {
  PairTruncation out{{1.0f, 1.0f, 1.0f, 1.0f}};
  const EdgeEdgeClosest closest = closestPointEdgeEdge(p1, q1, p2, q2, kTruncationEdgeEpsilon);
  const Vec3 c1 = p1 + closest.s * (q1 - p1), c2 = p2 + closest.t * (q2 - p2);
  const Vec3 gap = c1 - c2;  // m, toward e1
  const float gapLength = length(gap);
  const Vec3* positions[4] = {&p1, &q1, &p2, &q2};
  const Vec3* displacements[4] = {&dp1, &dq1, &dp2, &dq2};

  if (!(gapLength >= kTruncationMinGap)) {
    const Vec3 normal = robustEdgeEdgeNormal(p1, q1, p2, q2);
    const Vec3 planePoint = 0.5f * (c1 + c2);
    for (int j = 0; j < 4; ++j)
      out.t[j] = detail::truncationFactor(*positions[j], *displacements[j], normal, planePoint,
                                          relaxation, parallelEpsilon);
    return out;
  }

  const Vec3 normal = gap / gapLength;
  const float e1Approach = fmaxf(fmaxf(-dot(normal, dp1), -dot(normal, dq1)), 0.0f);  // δ_e1
  const float e2Approach = fmaxf(fmaxf(dot(normal, dp2), dot(normal, dq2)), 0.0f);    // δ_e2
  const Vec3 planePoint = c2 + detail::planeSplit(e2Approach, e1Approach) * gap;      // o
  constexpr float kEndTolerance = 1e-6f;
  for (int j = 0; j < 4; ++j) {
    const bool sideApproaches = j < 2 ? e1Approach > 0.0f : e2Approach > 0.0f;
    if (sideApproaches && detail::segmentMeetsPlane(*positions[j], *displacements[j], normal,
                                                    planePoint, kEndTolerance))
      out.t[j] = detail::truncationFactor(*positions[j], *displacements[j], normal, planePoint,
                                          relaxation, parallelEpsilon);
  }
  return out;
}

}  // namespace weft
