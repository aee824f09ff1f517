// Closest-point queries of self-contact (cloth_vbd_spec §6.2): point–triangle and
// segment–segment. Detection (collision/), the contact forces (kernels/self_contact.h) and the
// planar truncation (kernels/planar_truncation.h) all call these, so a pair is measured the same
// way everywhere.
//
// Point–triangle follows the Voronoi-region test of Ericson, "Real-Time Collision Detection"
// (2005) §5.1.5: the dot products of (p − corner) with the edge vectors classify p into one of
// the seven regions of the triangle (three vertex, three edge regions and the face), and only
// that region's projection is computed. The result carries the barycentric weights of (a, b, c)
// and the region, because the contact force distributes itself over the corners with them.
// Robustness: every division is guarded, and a degenerate triangle (collinear or coincident
// corners, or a sliver too thin for float to resolve its face) is answered by the closest of its
// three edges, so no input made of finite numbers yields NaN.
//
// Segment–segment is the clamped solution of Ericson §5.1.9 as the reference's Warp
// closest_point_edge_edge uses it: a segment whose squared length is <= epsilon is a point; for
// parallel segments (a·e − b² <= 0) s = 0 and t is solved for; t outside [0, 1] is clamped and s
// recomputed.
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// Regions of the point–triangle query (numbering as the reference's TRI_CONTACT_FEATURE_*).
enum TriangleRegion : int {
  kTriangleRegionVertexA = 0,
  kTriangleRegionVertexB = 1,
  kTriangleRegionVertexC = 2,
  kTriangleRegionEdgeAB = 3,
  kTriangleRegionEdgeAC = 4,
  kTriangleRegionEdgeBC = 5,
  kTriangleRegionFace = 6,
};

struct TriangleClosestPoint {
  Vec3 point;        // closest point of the triangle to the query [m]
  Vec3 barycentric;  // weights of (a, b, c): point = β_a·a + β_b·b + β_c·c, β >= 0, Σβ = 1
  int region;        // TriangleRegion
};

namespace detail {

WEFT_HD inline float clamp01(float x) {
  return fminf(fmaxf(x, 0.0f), 1.0f);
}

/// num/den clamped to [0, 1] for den > 0, else 0: the region tests guarantee den >= 0, and den = 0
/// only when the edge has no length, where any parameter gives the same point.
WEFT_HD inline float ratioOrZero(float num, float den) {
  return den > 0.0f ? clamp01(num / den) : 0.0f;
}

/// Closest point of segment (a, b) to p as a parameter in [0, 1] (0 for a zero-length segment).
WEFT_HD inline float segmentParameter(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  return ratioOrZero(dot(p - a, ab), dot(ab, ab));
}

/// The answer for a triangle without (resolvable) area: the closest of its three edges. The region
/// is that edge's, or a vertex region when the parameter lands on an end.
WEFT_HD inline TriangleClosestPoint closestPointOnDegenerateTriangle(const Vec3& p, const Vec3& a,
                                                                     const Vec3& b, const Vec3& c) {
  // Edges in the order AB, AC, BC; the corner weights of each edge point.
  const float sAB = segmentParameter(p, a, b);
  const float sAC = segmentParameter(p, a, c);
  const float sBC = segmentParameter(p, b, c);
  const Vec3 onAB = a + sAB * (b - a), onAC = a + sAC * (c - a), onBC = b + sBC * (c - b);
  const float dAB = lengthSquared(p - onAB), dAC = lengthSquared(p - onAC),
              dBC = lengthSquared(p - onBC);
  TriangleClosestPoint out;
  if (dAB <= dAC && dAB <= dBC) {
    out = {onAB, {1.0f - sAB, sAB, 0.0f}, kTriangleRegionEdgeAB};
    if (sAB <= 0.0f) out.region = kTriangleRegionVertexA;
    if (sAB >= 1.0f) out.region = kTriangleRegionVertexB;
  } else if (dAC <= dBC) {
    out = {onAC, {1.0f - sAC, 0.0f, sAC}, kTriangleRegionEdgeAC};
    if (sAC <= 0.0f) out.region = kTriangleRegionVertexA;
    if (sAC >= 1.0f) out.region = kTriangleRegionVertexC;
  } else {
    out = {onBC, {0.0f, 1.0f - sBC, sBC}, kTriangleRegionEdgeBC};
    if (sBC <= 0.0f) out.region = kTriangleRegionVertexB;
    if (sBC >= 1.0f) out.region = kTriangleRegionVertexC;
  }
  return out;
}

}  // namespace detail

/// Closest point of triangle (a, b, c) to p: Ericson's region test (vertex, edge and face
/// regions, Real-Time Collision Detection §5.1.5), finite for degenerate triangles.
WEFT_HD inline TriangleClosestPoint closestPointOnTriangle(const Vec3& p, const Vec3& a,
                                                           const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  // The region test compares differences of products of dot products, whose float rounding is
  // ~1e-7·|ab|²|ac|² while the face's share of them is sin²(A)·|ab|²|ac|². Below sin²(A) = 1e-7
  // (a sliver or needle narrower than ~3e-4 of its edges) they are noise, and the best of the
  // three edges is both robust and within that width of the exact answer.
  const Vec3 normal = cross(ab, ac);
  const float normal2 = lengthSquared(normal);
  if (!(normal2 > 1e-7f * lengthSquared(ab) * lengthSquared(ac)))
    return detail::closestPointOnDegenerateTriangle(p, a, b, c);

  // Vertex region A: p is behind both edges leaving A.
  const float d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0.0f && d2 <= 0.0f) return {a, {1.0f, 0.0f, 0.0f}, kTriangleRegionVertexA};

  // Vertex region B.
  const Vec3 bp = p - b;
  const float d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0f && d4 <= d3) return {b, {0.0f, 1.0f, 0.0f}, kTriangleRegionVertexB};

  // Edge region AB: between the two vertex regions and outside AB (signed area vc <= 0).
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
    const float v = detail::ratioOrZero(d1, d1 - d3);
    return {a + v * ab, {1.0f - v, v, 0.0f}, kTriangleRegionEdgeAB};
  }

  // Vertex region C.
  const Vec3 cp = p - c;
  const float d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0f && d5 <= d6) return {c, {0.0f, 0.0f, 1.0f}, kTriangleRegionVertexC};

  // Edge region AC.
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
    const float w = detail::ratioOrZero(d2, d2 - d6);
    return {a + w * ac, {1.0f - w, 0.0f, w}, kTriangleRegionEdgeAC};
  }

  // Edge region BC.
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0.0f && (d4 - d3) >= 0.0f && (d5 - d6) >= 0.0f) {
    const float w = detail::ratioOrZero(d4 - d3, (d4 - d3) + (d5 - d6));
    return {b + w * (c - b), {0.0f, 1.0f - w, w}, kTriangleRegionEdgeBC};
  }

  // Face region. The barycentrics come from signed sub-areas taken as cross products against the
  // normal (rounding ~1e-7/sin(A)) rather than as Ericson's va/vb/vc over their sum (~1e-7/sin²A),
  // which matters for thin triangles. Rounding can still have sent a point just outside the face
  // here; a negative weight then hands it to the edges.
  const float inverseNormal2 = 1.0f / normal2;
  const float v = dot(cross(ap, ac), normal) * inverseNormal2;
  const float w = dot(cross(ab, ap), normal) * inverseNormal2;
  const float u = 1.0f - v - w;
  if (!(u >= 0.0f && v >= 0.0f && w >= 0.0f))
    return detail::closestPointOnDegenerateTriangle(p, a, b, c);
  return {u * a + v * b + w * c, {u, v, w}, kTriangleRegionFace};
}

struct EdgeEdgeClosest {
  float s;         // parameter of the closest point on the first segment: p1 + s·(q1 − p1)
  float t;         // on the second: p2 + t·(q2 − p2)
  float distance;  // |c1 − c2| [m]
};

/// Closest points of segments (p1, q1) and (p2, q2) (cloth_vbd_spec §6.2, Warp
/// closest_point_edge_edge; Ericson §5.1.9). A segment whose squared length is <= epsilon [m²] is
/// treated as the point p; parallel segments (a·e − b² <= 0) take s = 0 and solve for t; a t
/// outside [0, 1] is clamped and s recomputed.
WEFT_HD inline EdgeEdgeClosest closestPointEdgeEdge(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                                    const Vec3& q2, float epsilon) {
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const float a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  float s = 0.0f, t = 0.0f;
  if (a <= epsilon && e <= epsilon) {
    // Both are points.
  } else if (a <= epsilon) {
    t = detail::clamp01(f / e);
  } else {
    const float c = dot(d1, r);
    if (e <= epsilon) {
      s = detail::clamp01(-c / a);
    } else {
      // Minimise |r + s·d1 − t·d2|²: s from the 2x2 normal equations, then t for that s.
      const float b = dot(d1, d2);
      const float denom = a * e - b * b;
      s = denom > 0.0f ? detail::clamp01((b * f - c * e) / denom) : 0.0f;
      t = (b * s + f) / e;
      if (t < 0.0f) {
        t = 0.0f;
        s = detail::clamp01(-c / a);
      } else if (t > 1.0f) {
        t = 1.0f;
        s = detail::clamp01((b - c) / a);
      }
    }
  }
  const Vec3 c1 = p1 + s * d1, c2 = p2 + t * d2;
  return {s, t, length(c1 - c2)};
}

}  // namespace weft
