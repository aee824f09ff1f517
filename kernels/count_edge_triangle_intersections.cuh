// count_edge_triangle_intersections: how many (mesh edge, triangle) pairs that share no vertex
// intersect, i.e. how often the cloth passes through itself (diagnostic; the penetration-free
// truncation should keep it at zero). collision/intersection_check.h runs it.
//
// Reads:  the triangle LBVH (built on the same positions), positions, triangles, edges; in a
//         batch of worlds each particle's world (the tree is then a forest, and an edge meets
//         only its own world's triangles).
// Writes: the total and each world's count (atomic integer adds, so they are deterministic) and
//         the first maxPairs (edge, triangle) pairs in claim order (timing-dependent on CUDA; the
//         host sorts them).
//
// The predicate, segmentIntersectsTriangle: closed sets (touching counts), decided by signs of
// orientation determinants, never by computing an intersection point:
//   1. the segment's ends against the triangle's plane (orient3d): both strictly on one side → no;
//   2. not both in the plane: the segment's line against the triangle's three edges (signs of
//      orient3d(p, q, edge)); all ≥ 0 or all ≤ 0 → the line meets the closed triangle, and by 1.
//      the meeting point lies on the segment;
//   3. both in the plane (coplanar): a 2-D test (orient2d) in a projection along an axis the plane
//      is not parallel to: an end inside the triangle, or the segment meets one of its edges. A
//      zero-area triangle is the union of its edges, so it is tested as three segments in 3-D.
//
// What "exact" means here: every sign is the exact sign of the determinant for the given float
// positions (exact in Shewchuk's sense for float inputs; the answer is the true one for the
// float geometry). Each determinant is first evaluated in double precision from the coordinate
// differences, and its sign is taken when |det| exceeds a forward error bound (Shewchuk 1997,
// "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates", the bounds
// ccwerrboundA and o3derrboundA, rounded up). Otherwise — (nearly) degenerate configurations only:
// a vertex on the other triangle's plane, an edge lying in it or passing through a triangle's
// edge or vertex — the determinant is summed exactly from its monomials in the raw coordinates:
// a product of two floats is exact in double, a product of three is exactly a sum of two doubles
// (two-product with FMA), and an expansion sum (Shewchuk's grow-expansion) gives the exact sign.
// Plain double evaluation is not enough: on a planar but tilted strip of cloth the determinants
// are tiny, separately rounded ones contradict each other (an end off the plane, yet the line in
// it), and disjoint neighbours were reported as crossing (tests/collision: the folded grid).
// What remains approximate is the input, not the predicate: positions are float32, so a contact
// that is touching in exact arithmetic may be counted or not depending on how its coordinates
// rounded. Requires finite positions (no NaN or infinity); any finite float works (products of
// three floats neither overflow nor underflow in double).
// The arithmetic uses explicitly rounded operations on the device (__dmul_rn, …: never
// contracted into FMAs, so the error bounds hold) and plain ones on the host (built with
// -ffp-contract=off); since the signs are exact, both backends count the same pairs.
#pragma once

#include <cmath>

#include "kernels/lbvh.cuh"
#include "kernels/math.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

namespace predicates {

// ---- Rounded arithmetic that no compiler contracts or reorders ----------------------------------

WEFT_HD inline double add(double a, double b) {
#if WEFT_DEVICE_PASS
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
WEFT_HD inline double sub(double a, double b) {
#if WEFT_DEVICE_PASS
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
WEFT_HD inline double mul(double a, double b) {
#if WEFT_DEVICE_PASS
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
/// a·b + c with one rounding.
WEFT_HD inline double fusedMulAdd(double a, double b, double c) {
#if WEFT_DEVICE_PASS
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
WEFT_HD inline double absd(double v) {
  return v < 0.0 ? -v : v;
}
WEFT_HD inline int sign(double v) {
  return (v > 0.0) - (v < 0.0);
}

/// Unit roundoff of double, 2^-53.
inline constexpr double kEpsilon = 1.1102230246251565e-16;
/// Forward error bounds of the double evaluations below, relative to their permanents (Shewchuk
/// 1997: ccwerrboundA = (3 + 16ε)ε, o3derrboundA = (7 + 56ε)ε), rounded up to 4ε and 8ε.
inline constexpr double kOrient2dBound = 4.0 * kEpsilon;
inline constexpr double kOrient3dBound = 8.0 * kEpsilon;

/// An exact sum of doubles: a nonoverlapping expansion, components in increasing magnitude,
/// zeros eliminated (Shewchuk 1997, Grow-Expansion with TwoSum). Capacity: one component per add.
template <int kCapacity>
struct ExactSum {
  double parts[kCapacity];
  int count = 0;

  WEFT_HD void add(double x) {
    double carry = x;
    int kept = 0;
    for (int i = 0; i < count; ++i) {
      // TwoSum: carry + parts[i] = sum + error exactly.
      const double sum = predicates::add(carry, parts[i]);
      const double virtualB = sub(sum, carry);
      const double error = predicates::add(sub(carry, sub(sum, virtualB)), sub(parts[i], virtualB));
      if (error != 0.0) parts[kept++] = error;
      carry = sum;
    }
    if (carry != 0.0) parts[kept++] = carry;
    count = kept;
  }
  /// Adds a·b exactly (two-product: the rounded product and its exact error).
  WEFT_HD void addProduct(double a, double b) {
    const double product = mul(a, b);
    add(fusedMulAdd(a, b, -product));
    add(product);
  }
  /// Sign of the exact sum: that of the largest component.
  WEFT_HD int sign() const { return count > 0 ? predicates::sign(parts[count - 1]) : 0; }
};

// ---- orient2d and orient3d, exact for float coordinates -----------------------------------------

/// A point of a projection that drops one axis (float coordinates, so products of two are exact).
struct Point2 {
  float u, v;
};
WEFT_HD inline Point2 project(const Vec3& p, int drop) {
  return drop == 0 ? Point2{p.y, p.z} : (drop == 1 ? Point2{p.z, p.x} : Point2{p.x, p.y});
}

/// Sign of (b − a) × (c − a): +1 if a, b, c turn counterclockwise, 0 if collinear.
WEFT_HD inline int orient2d(const Point2& a, const Point2& b, const Point2& c) {
  const double left = mul(sub(a.u, c.u), sub(b.v, c.v));
  const double right = mul(sub(a.v, c.v), sub(b.u, c.u));
  const double det = sub(left, right);
  if (absd(det) > mul(kOrient2dBound, add(absd(left), absd(right)))) return sign(det);
  // Exact: the six monomials of det[[a 1], [b 1], [c 1]], each a product of two floats.
  ExactSum<6> sum;
  sum.add(mul(a.u, b.v));
  sum.add(-mul(a.u, c.v));
  sum.add(-mul(a.v, b.u));
  sum.add(mul(a.v, c.u));
  sum.add(mul(b.u, c.v));
  sum.add(-mul(b.v, c.u));
  return sum.sign();
}

/// Adds sign · det[p; q; r] (raw coordinates) to `sum`: six products of three floats.
template <int kCapacity>
WEFT_HD void addDeterminant3(ExactSum<kCapacity>& sum, double sign, const Vec3& p, const Vec3& q,
                             const Vec3& r) {
  sum.addProduct(mul(sign, mul(p.x, q.y)), r.z);
  sum.addProduct(mul(-sign, mul(p.x, q.z)), r.y);
  sum.addProduct(mul(-sign, mul(p.y, q.x)), r.z);
  sum.addProduct(mul(sign, mul(p.y, q.z)), r.x);
  sum.addProduct(mul(sign, mul(p.z, q.x)), r.y);
  sum.addProduct(mul(-sign, mul(p.z, q.y)), r.x);
}

/// Sign of ((b − a) × (c − a)) · (d − a): which side of the plane abc d lies on (0: in it).
WEFT_HD inline int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  // det[a − d; b − d; c − d] = −(the value above), expanded along z.
  const double adx = sub(a.x, d.x), ady = sub(a.y, d.y), adz = sub(a.z, d.z);
  const double bdx = sub(b.x, d.x), bdy = sub(b.y, d.y), bdz = sub(b.z, d.z);
  const double cdx = sub(c.x, d.x), cdy = sub(c.y, d.y), cdz = sub(c.z, d.z);
  const double bdxcdy = mul(bdx, cdy), bdycdx = mul(bdy, cdx);
  const double cdxady = mul(cdx, ady), cdyadx = mul(cdy, adx);
  const double adxbdy = mul(adx, bdy), adybdx = mul(ady, bdx);
  const double det = add(add(mul(adz, sub(bdxcdy, bdycdx)), mul(bdz, sub(cdxady, cdyadx))),
                         mul(cdz, sub(adxbdy, adybdx)));
  const double permanent = add(add(mul(add(absd(bdxcdy), absd(bdycdx)), absd(adz)),
                                   mul(add(absd(cdxady), absd(cdyadx)), absd(bdz))),
                               mul(add(absd(adxbdy), absd(adybdx)), absd(cdz)));
  if (absd(det) > mul(kOrient3dBound, permanent)) return -sign(det);
  // Exact: (b − a) × (c − a) · (d − a) = −det4[[a 1], [b 1], [c 1], [d 1]]
  //   = det[b; c; d] − det[a; c; d] + det[a; b; d] − det[a; b; c]  (24 monomials).
  ExactSum<48> sum;
  addDeterminant3(sum, 1.0, b, c, d);
  addDeterminant3(sum, -1.0, a, c, d);
  addDeterminant3(sum, 1.0, a, b, d);
  addDeterminant3(sum, -1.0, a, b, c);
  return sum.sign();
}

// ---- 2-D and 3-D segment tests ----------------------------------------------------------------

/// For p collinear with a–b: p lies in the closed segment's bounding box, hence on it.
WEFT_HD inline bool onCollinearSegment(const Point2& a, const Point2& b, const Point2& p) {
  return (a.u <= b.u ? a.u <= p.u && p.u <= b.u : b.u <= p.u && p.u <= a.u) &&
         (a.v <= b.v ? a.v <= p.v && p.v <= b.v : b.v <= p.v && p.v <= a.v);
}
/// Closed segments p1–p2 and q1–q2 share a point (degenerate segments allowed).
WEFT_HD inline bool segmentsIntersect2d(const Point2& p1, const Point2& p2, const Point2& q1,
                                        const Point2& q2) {
  const int d1 = orient2d(q1, q2, p1), d2 = orient2d(q1, q2, p2);
  const int d3 = orient2d(p1, p2, q1), d4 = orient2d(p1, p2, q2);
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  return (d1 == 0 && onCollinearSegment(q1, q2, p1)) ||
         (d2 == 0 && onCollinearSegment(q1, q2, p2)) ||
         (d3 == 0 && onCollinearSegment(p1, p2, q1)) || (d4 == 0 && onCollinearSegment(p1, p2, q2));
}
/// p lies in the closed triangle abc (abc not degenerate).
WEFT_HD inline bool pointInTriangle2d(const Point2& p, const Point2& a, const Point2& b,
                                      const Point2& c) {
  const int s1 = orient2d(a, b, p), s2 = orient2d(b, c, p), s3 = orient2d(c, a, p);
  return (s1 >= 0 && s2 >= 0 && s3 >= 0) || (s1 <= 0 && s2 <= 0 && s3 <= 0);
}
/// An axis whose projection keeps triangle abc non-degenerate (−1: abc is collinear). Tries the
/// axis of the largest normal component first (fewest exact fallbacks).
WEFT_HD inline int projectionAxis(const Vec3& a, const Vec3& b, const Vec3& c) {
  const double ux = sub(b.x, a.x), uy = sub(b.y, a.y), uz = sub(b.z, a.z);
  const double vx = sub(c.x, a.x), vy = sub(c.y, a.y), vz = sub(c.z, a.z);
  const double nx = absd(sub(mul(uy, vz), mul(uz, vy)));
  const double ny = absd(sub(mul(uz, vx), mul(ux, vz)));
  const double nz = absd(sub(mul(ux, vy), mul(uy, vx)));
  const int first = nx >= ny && nx >= nz ? 0 : (ny >= nz ? 1 : 2);
  for (int k = 0; k < 3; ++k) {
    const int drop = (first + k) % 3;
    if (orient2d(project(a, drop), project(b, drop), project(c, drop)) != 0) return drop;
  }
  return -1;
}

/// Closed segments p–q and r–s share a point, in 3-D.
WEFT_HD inline bool segmentsIntersect3d(const Vec3& p, const Vec3& q, const Vec3& r,
                                        const Vec3& s) {
  if (orient3d(p, q, r, s) != 0) return false;  // not coplanar
  // Coplanar: project along an axis the plane is not parallel to, found from any non-collinear
  // triple. If every triple is collinear, so are all four points: keep an axis along which two
  // of them differ (dropping another), which preserves their order on the line.
  int drop = projectionAxis(p, q, r);
  if (drop < 0) drop = projectionAxis(p, q, s);
  if (drop < 0) drop = projectionAxis(p, r, s);
  if (drop < 0) drop = projectionAxis(q, r, s);
  if (drop < 0) {
    drop = 0;
    const Vec3 points[4] = {p, q, r, s};
    for (int i = 1; i < 4; ++i)
      for (int axis = 0; axis < 3; ++axis)
        if (points[i][axis] != p[axis]) drop = (axis + 1) % 3;
  }
  return segmentsIntersect2d(project(p, drop), project(q, drop), project(r, drop),
                             project(s, drop));
}

}  // namespace predicates

/// The closed segment p–q and the closed triangle abc share a point, decided exactly for the
/// float coordinates. See the file comment for the method.
WEFT_HD inline bool segmentIntersectsTriangle(const Vec3& p, const Vec3& q, const Vec3& a,
                                              const Vec3& b, const Vec3& c) {
  using namespace predicates;
  const int sp = orient3d(a, b, c, p), sq = orient3d(a, b, c, q);
  if (sp * sq > 0) return false;  // both ends strictly on one side

  if (sp != 0 || sq != 0) {
    // The segment crosses or touches the plane at one point (a collinear abc would give sp =
    // sq = 0): the line meets the closed triangle iff it passes no edge on the outside.
    const int e1 = orient3d(p, q, a, b), e2 = orient3d(p, q, b, c), e3 = orient3d(p, q, c, a);
    return (e1 >= 0 && e2 >= 0 && e3 >= 0) || (e1 <= 0 && e2 <= 0 && e3 <= 0);
  }

  const int drop = projectionAxis(a, b, c);
  if (drop < 0) {
    // Zero-area triangle: the union of its three edges.
    return segmentsIntersect3d(p, q, a, b) || segmentsIntersect3d(p, q, b, c) ||
           segmentsIntersect3d(p, q, c, a);
  }
  const Point2 p2 = project(p, drop), q2 = project(q, drop);
  const Point2 a2 = project(a, drop), b2 = project(b, drop), c2 = project(c, drop);
  return pointInTriangle2d(p2, a2, b2, c2) || segmentsIntersect2d(p2, q2, a2, b2) ||
         segmentsIntersect2d(p2, q2, b2, c2) || segmentsIntersect2d(p2, q2, c2, a2);
}

/// The edge and the triangle have no vertex in common.
WEFT_HD inline bool sharesNoVertex(const Int4& edge, const Int3& tri) {
  return edge.z != tri.x && edge.z != tri.y && edge.z != tri.z && edge.w != tri.x &&
         edge.w != tri.y && edge.w != tri.z;
}

/// One thread per edge: queries the triangle tree with the segment's box (exact bounds, so no
/// touching pair is missed) and tests every candidate that shares no vertex.
struct CountEdgeTriangleIntersections {
  static constexpr KernelId kId = KernelId::count_edge_triangle_intersections;

  BvhView triangleBvh;                 // over the triangles' exact boxes at `positions`
  int maxPairs;                        // slots in pairs
  const Vec3* __restrict__ positions;  // (numParticles) [m]
  const Int3* __restrict__ triangles;  // (numTriangles)
  const Int4* __restrict__ edges;      // (numEdges) (o0, o1, v0, v1): the segment v0–v1
  const int* __restrict__ worlds;      // (numParticles) world of each particle, or null; with
                                       // worlds the tree is a forest (edges query their own)
  int* __restrict__ count;             // (worlds, or 1) in/out, zeroed before the launch
  int* __restrict__ total;             // (1) in/out: every world's, for the pairs' slots
  int* __restrict__ pairs;             // (maxPairs x 2) out: (edge, triangle), or null

  WEFT_HD void operator()(int e) const {
    const Int4 edge = edges[e];
    const Vec3 p = positions[edge.z], q = positions[edge.w];
    const int world = worlds ? worlds[edge.z] : 0;
    const auto visit = [&](int t) {
      const Int3 tri = triangles[t];
      if (!sharesNoVertex(edge, tri)) return;
      if (!segmentIntersectsTriangle(p, q, positions[tri.x], positions[tri.y], positions[tri.z]))
        return;
      if (count != total) atomicAddInt(count + world, 1);  // one world: the total is its count
      const int slot = atomicAddInt(total, 1);
      if (pairs && slot < maxPairs) {
        pairs[2 * slot] = e;
        pairs[2 * slot + 1] = t;
      }
    };
    bvhQueryStacklessFrom(triangleBvh, triangleBvh.rootOf(world), selectMin(p, q), selectMax(p, q),
                          visit);
  }
};

}  // namespace weft
