// Rigid narrow phase: analytic contact candidates between two collision shapes in world space
// (rigid_avbd_spec §6.3). Pure float32 functions, used by the contact detector's kernels
// (kernels/rigid_broad_phase.cuh) and by tests.
//
// Writer convention (§6.3): every candidate carries
//   pointA, pointB   world points: the CORE (skeleton) point of a capsule or sphere (its segment or
//                    centre), the SURFACE point of a plane or box;
//   radiusA, radiusB the effective radius that point sits below the surface (r for capsules and
//                    spheres, 0 for planes and boxes);
//   normal           unit, from A towards B;
//   distance         the signed surface distance, > 0 apart, < 0 penetrating, with the invariant
//                    distance = normal·(pointB − pointA) − radiusA − radiusB
//                    and pointB − pointA parallel to the normal (so the anchors pointX ± r·n of a
//                    fresh contact coincide in the tangent plane: no spurious friction spring).
// Pairs and what they give (at most kMaxContactCandidates):
//   plane–sphere, sphere–sphere, sphere–capsule, sphere–box   one candidate;
//   plane–capsule    two: both core endpoints against the plane (the reference);
//   plane–box        four: the four box corners lowest along the plane normal;
//   capsule–capsule  closest points of the core segments (2×2 system, clamped): one candidate;
//                    when the axes are parallel to within 1e-3 rad, two: the ends of the segments'
//                    common span, each against its closest point on the other core. (The
//                    reference uses both ends of A against their clamped projections on B, which
//                    overestimates the distance when B is shorter and lies inside A's span.)
//   capsule–box      exact closest point of the core segment to the box (the squared distance is
//                    convex and piecewise quadratic in the segment parameter: minimized exactly on
//                    each piece between the ≤ 6 face-plane crossings); if the nearest box feature
//                    is a face (or the core enters the box: the deepest core point leaves through
//                    its nearest face), the core is clipped to that face's prism and the clip ends
//                    give two candidates against the face plane, otherwise (edge, corner) one. The
//                    reference routes capsule–box to GJK/MPR with a polygon-clipping manifold.
//   plane–plane, box–box  none (no cable scene needs them).
// Degenerate directions (coincident core points, crossing axes) take a fixed valid normal, so
// the normal is always unit and never NaN. collideShapes() takes the shapes in either order and
// returns candidates with A = its first argument.
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"
#include "kernels/shape_geometry.h"
#include "kernels/small_sort.h"

namespace weft {

inline constexpr int kMaxContactCandidates = 4;
/// Capsule axes with sin²(angle) at most this are parallel (angle below ~1e-3 rad).
inline constexpr float kParallelSinSquared = 1e-6f;
/// A two-point manifold needs a span of at least this fraction of the shorter core segment.
inline constexpr float kMinManifoldFraction = 1e-2f;

struct ContactCandidate {
  Vec3 pointA, pointB;  // world: core points (capsule, sphere), surface points (plane, box) [m]
  Vec3 normal;          // unit, A → B
  float distance;       // surface distance [m]: normal·(pointB − pointA) − radiusA − radiusB
  float radiusA, radiusB;  // effective radius below the surface of each point [m]
};

struct ContactCandidates {
  int count = 0;
  ContactCandidate items[kMaxContactCandidates];

  WEFT_HD void add(const ContactCandidate& c) {
    if (count < kMaxContactCandidates) items[count++] = c;
  }
};

namespace narrow_phase_detail {

inline constexpr float kTinyLengthSquared = 1e-24f;  // [m²] a core segment this short is a point

WEFT_HD inline float clamp01(float x) {
  return fminf(fmaxf(x, 0.0f), 1.0f);
}

/// A unit vector perpendicular to v (which need not be unit); +X for v = 0.
WEFT_HD inline Vec3 perpendicularUnit(const Vec3& v) {
  const Vec3 a{fabsf(v.x), fabsf(v.y), fabsf(v.z)};
  // Cross with the axis least aligned with v.
  const Vec3 axis = a.x <= a.y && a.x <= a.z
                        ? Vec3{1.0f, 0.0f, 0.0f}
                        : (a.y <= a.z ? Vec3{0.0f, 1.0f, 0.0f} : Vec3{0.0f, 0.0f, 1.0f});
  const Vec3 p = normalizeOrZero(cross(v, axis));
  return lengthSquared(p) > 0.0f ? p : Vec3{1.0f, 0.0f, 0.0f};
}

/// Unit direction from `from` to `to`, or `fallback` when the points coincide.
WEFT_HD inline Vec3 directionOr(const Vec3& from, const Vec3& to, const Vec3& fallback) {
  const Vec3 d = to - from;
  const float len = length(d);
  return len > 1e-20f ? d / len : fallback;
}

/// The candidate for a point pair along `normal` (distance by the writer invariant).
WEFT_HD inline ContactCandidate candidateAlong(const Vec3& pointA, float radiusA,
                                               const Vec3& pointB, float radiusB,
                                               const Vec3& normal) {
  return {pointA,  pointB, normal, dot(normal, pointB - pointA) - radiusA - radiusB,
          radiusA, radiusB};
}

/// start + t·delta, t ∈ [0, 1].
struct Segment {
  Vec3 start, delta;
  WEFT_HD Vec3 at(float t) const { return start + t * delta; }
};

/// A capsule's core segment in world space (its axis is the local z of its pose).
WEFT_HD inline Segment capsuleSegment(const ShapeGeometry& g, const Transform& pose) {
  const Vec3 half = rotate(pose.q, Vec3{0.0f, 0.0f, g.halfHeight});
  return {pose.p - half, 2.0f * half};
}

/// The parameter of the point of `s` closest to p.
WEFT_HD inline float closestSegmentParameter(const Segment& s, const Vec3& p) {
  const float len2 = lengthSquared(s.delta);
  return len2 > kTinyLengthSquared ? clamp01(dot(p - s.start, s.delta) / len2) : 0.0f;
}

struct SegmentParameters {
  float s, t;  // on the first and the second segment
};

/// Closest points of two segments: minimize |A(s) − B(t)|² over [0,1]² (normal equations of the
/// 2×2 system, clamped; the unclamped s is taken at the free optimum of t, then t is clamped and s
/// re-solved). The determinant is |dA × dB|², free of the cancellation in a·e − b².
WEFT_HD inline SegmentParameters closestSegmentParameters(const Segment& A, const Segment& B) {
  const Vec3 r = A.start - B.start;
  const float a = lengthSquared(A.delta), e = lengthSquared(B.delta), f = dot(B.delta, r);
  if (a <= kTinyLengthSquared && e <= kTinyLengthSquared) return {0.0f, 0.0f};
  if (a <= kTinyLengthSquared) return {0.0f, clamp01(f / e)};
  const float c = dot(A.delta, r);
  if (e <= kTinyLengthSquared) return {clamp01(-c / a), 0.0f};
  const float b = dot(A.delta, B.delta);
  const float det = lengthSquared(cross(A.delta, B.delta));
  float s = det > 0.0f ? clamp01((b * f - c * e) / det) : 0.0f;
  float t = (b * s + f) / e;
  if (t < 0.0f) {
    t = 0.0f;
    s = clamp01(-c / a);
  } else if (t > 1.0f) {
    t = 1.0f;
    s = clamp01((b - c) / a);
  }
  return {s, t};
}

WEFT_HD inline Vec3 clampToBox(const Vec3& p, const Vec3& h) {
  return cwiseMin(cwiseMax(p, -h), h);
}
WEFT_HD inline float squaredDistanceToBox(const Vec3& p, const Vec3& h) {
  return lengthSquared(p - clampToBox(p, h));
}

/// The parameter of the segment point closest to the box [−h, h] (local frame). The squared
/// distance is convex in t and quadratic between the crossings of the six face planes; each piece
/// is minimized in closed form and the smallest value kept (first one on ties).
WEFT_HD inline float closestSegmentBoxParameter(const Segment& s, const Vec3& h) {
  float breaks[8];
  int n = 0;
  breaks[n++] = 0.0f;
  breaks[n++] = 1.0f;
  for (int i = 0; i < 3; ++i) {
    if (s.delta[i] == 0.0f) continue;
    for (int side = -1; side <= 1; side += 2) {
      const float t = (float(side) * h[i] - s.start[i]) / s.delta[i];
      if (t > 0.0f && t < 1.0f) breaks[n++] = t;
    }
  }
  sortAscending(breaks, n);  // ≤ 8 values
  float bestT = 0.0f;
  float best = squaredDistanceToBox(s.start, h);
  for (int k = 0; k + 1 < n; ++k) {
    const float lo = breaks[k], hi = breaks[k + 1];
    if (!(hi > lo)) continue;
    // On (lo, hi) each axis is either inside its slab or beyond one fixed face: the squared
    // distance is Σ over outside axes of (start_i + t·delta_i − bound_i)².
    const Vec3 mid = s.at(0.5f * (lo + hi));
    float num = 0.0f, den = 0.0f;
    for (int i = 0; i < 3; ++i) {
      const float bound = mid[i] > h[i] ? h[i] : (mid[i] < -h[i] ? -h[i] : mid[i]);
      if (bound == mid[i]) continue;
      num += (s.start[i] - bound) * s.delta[i];
      den += s.delta[i] * s.delta[i];
    }
    const float t = den > 0.0f ? fminf(fmaxf(-num / den, lo), hi) : lo;
    const float d2 = squaredDistanceToBox(s.at(t), h);
    if (d2 < best) {
      best = d2;
      bestT = t;
    }
  }
  const float end = squaredDistanceToBox(s.at(1.0f), h);
  return end < best ? 1.0f : bestT;
}

/// Depth of p inside the box: min_i (h_i − |p_i|) (negative outside).
WEFT_HD inline float boxDepth(const Vec3& p, const Vec3& h) {
  return fminf(fminf(h.x - fabsf(p.x), h.y - fabsf(p.y)), h.z - fabsf(p.z));
}

/// The parameter of the deepest segment point in the box. The depth is the minimum of six affine
/// functions h_i ∓ p_i(t), so it is concave and its maximum lies at an end or at a crossing of two
/// of them (15 pairs).
WEFT_HD inline float deepestSegmentBoxParameter(const Segment& s, const Vec3& h) {
  float bestT = 0.0f;
  float best = boxDepth(s.start, h);
  auto consider = [&](float t) {
    if (!(t >= 0.0f && t <= 1.0f)) return;
    const float d = boxDepth(s.at(t), h);
    if (d > best) {
      best = d;
      bestT = t;
    }
  };
  consider(1.0f);
  // Function k = 2i + (0: h_i − p_i, 1: h_i + p_i): value c_k + t·m_k.
  for (int k = 0; k < 6; ++k) {
    const float sk = (k & 1) ? 1.0f : -1.0f;
    const float ck = h[k / 2] + sk * s.start[k / 2], mk = sk * s.delta[k / 2];
    for (int l = k + 1; l < 6; ++l) {
      const float sl = (l & 1) ? 1.0f : -1.0f;
      const float cl = h[l / 2] + sl * s.start[l / 2], ml = sl * s.delta[l / 2];
      if (mk != ml) consider((cl - ck) / (mk - ml));
    }
  }
  return bestT;
}

/// Face (axis, side) a point inside the box leaves through: the smallest h_i − |p_i| (first axis
/// on ties), as queryBox.
WEFT_HD inline void nearestBoxFace(const Vec3& p, const Vec3& h, int& axis, float& side) {
  axis = 0;
  float depth = h.x - fabsf(p.x);
  for (int i = 1; i < 3; ++i) {
    const float d = h[i] - fabsf(p[i]);
    if (d < depth) {
      depth = d;
      axis = i;
    }
  }
  side = p[axis] < 0.0f ? -1.0f : 1.0f;
}

}  // namespace narrow_phase_detail

// ---- Pairs (A first; rank order plane < sphere < capsule < box) --------------------------------

template <class Out>
WEFT_HD inline void collidePlaneSphere(const Transform& plane, const ShapeGeometry& sphere,
                                       const Transform& spherePose, Out& out) {
  const Vec3 n = rotate(plane.q, Vec3{0.0f, 0.0f, 1.0f});
  const Vec3 c = spherePose.p;
  out.add(
      narrow_phase_detail::candidateAlong(c - dot(n, c - plane.p) * n, 0.0f, c, sphere.radius, n));
}

template <class Out>
WEFT_HD inline void collidePlaneCapsule(const Transform& plane, const ShapeGeometry& capsule,
                                        const Transform& capsulePose, Out& out) {
  using namespace narrow_phase_detail;
  const Vec3 n = rotate(plane.q, Vec3{0.0f, 0.0f, 1.0f});
  const Segment s = capsuleSegment(capsule, capsulePose);
  for (int end = 0; end < 2; ++end) {
    const Vec3 e = s.at(float(end));
    out.add(candidateAlong(e - dot(n, e - plane.p) * n, 0.0f, e, capsule.radius, n));
  }
}

/// The four corners lowest along the plane normal (lowest index first on ties).
template <class Out>
WEFT_HD inline void collidePlaneBox(const Transform& plane, const ShapeGeometry& box,
                                    const Transform& boxPose, Out& out) {
  const Vec3 n = rotate(plane.q, Vec3{0.0f, 0.0f, 1.0f});
  const Vec3 h = box.halfExtents;
  Vec3 corners[8];
  float heights[8];
  for (int k = 0; k < 8; ++k) {
    const Vec3 local{(k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z};
    corners[k] = transformPoint(boxPose, local);
    heights[k] = dot(n, corners[k] - plane.p);
  }
  unsigned taken = 0;
  for (int pick = 0; pick < 4; ++pick) {
    int lowest = -1;
    for (int k = 0; k < 8; ++k)
      if (!(taken & (1u << k)) && (lowest < 0 || heights[k] < heights[lowest])) lowest = k;
    taken |= 1u << lowest;
    const Vec3 v = corners[lowest];
    out.add(narrow_phase_detail::candidateAlong(v - heights[lowest] * n, 0.0f, v, 0.0f, n));
  }
}

template <class Out>
WEFT_HD inline void collideSphereSphere(const ShapeGeometry& a, const Transform& poseA,
                                        const ShapeGeometry& b, const Transform& poseB, Out& out) {
  using namespace narrow_phase_detail;
  const Vec3 n = directionOr(poseA.p, poseB.p, Vec3{0.0f, 0.0f, 1.0f});
  out.add(candidateAlong(poseA.p, a.radius, poseB.p, b.radius, n));
}

template <class Out>
WEFT_HD inline void collideSphereCapsule(const ShapeGeometry& sphere, const Transform& spherePose,
                                         const ShapeGeometry& capsule, const Transform& capsulePose,
                                         Out& out) {
  using namespace narrow_phase_detail;
  const Segment s = capsuleSegment(capsule, capsulePose);
  const Vec3 c = spherePose.p;
  const Vec3 q = s.at(closestSegmentParameter(s, c));
  const Vec3 n = directionOr(c, q, perpendicularUnit(s.delta));
  out.add(candidateAlong(c, sphere.radius, q, capsule.radius, n));
}

template <class Out>
WEFT_HD inline void collideSphereBox(const ShapeGeometry& sphere, const Transform& spherePose,
                                     const ShapeGeometry& box, const Transform& boxPose, Out& out) {
  // queryBox's normal points out of the box (towards the centre when outside); A → B is inward.
  const ShapeQuery q = queryBox(box.halfExtents, inverseTransformPoint(boxPose, spherePose.p));
  const Vec3 n = -rotate(boxPose.q, q.normal);
  out.add(narrow_phase_detail::candidateAlong(spherePose.p, sphere.radius,
                                              transformPoint(boxPose, q.surfacePoint), 0.0f, n));
}

template <class Out>
WEFT_HD inline void collideCapsuleCapsule(const ShapeGeometry& ga, const Transform& pa,
                                          const ShapeGeometry& gb, const Transform& pb, Out& out) {
  using namespace narrow_phase_detail;
  const Segment A = capsuleSegment(ga, pa), B = capsuleSegment(gb, pb);
  const float a = lengthSquared(A.delta), e = lengthSquared(B.delta);
  const Vec3 axesCross = cross(A.delta, B.delta);
  const bool nondegenerate = a > kTinyLengthSquared && e > kTinyLengthSquared;

  if (nondegenerate && lengthSquared(axesCross) <= kParallelSinSquared * a * e) {
    // Parallel: the common span of the two cores, as an interval of A's parameter.
    const float t0 = dot(B.start - A.start, A.delta) / a;
    const float t1 = dot(B.start + B.delta - A.start, A.delta) / a;
    const float lo = fmaxf(fminf(t0, t1), 0.0f), hi = fminf(fmaxf(t0, t1), 1.0f);
    if (lo <= hi) {
      const Vec3 p0 = A.at(lo), q0 = B.at(closestSegmentParameter(B, p0));
      const Vec3 n0 = directionOr(p0, q0, perpendicularUnit(A.delta));
      out.add(candidateAlong(p0, ga.radius, q0, gb.radius, n0));
      // Two points only when the span is a real fraction of the shorter core.
      if ((hi - lo) * sqrtf(a) > kMinManifoldFraction * sqrtf(fminf(a, e))) {
        const Vec3 p1 = A.at(hi), q1 = B.at(closestSegmentParameter(B, p1));
        out.add(candidateAlong(p1, ga.radius, q1, gb.radius, directionOr(p1, q1, n0)));
      }
      return;
    }
    // No common span: the closest pair is a pair of ends, which the general case finds.
  }
  const SegmentParameters st = closestSegmentParameters(A, B);
  const Vec3 p = A.at(st.s), q = B.at(st.t);
  // Crossing cores: the common perpendicular of the axes separates them best.
  const Vec3 across = normalizeOrZero(axesCross);
  const Vec3 fallback = lengthSquared(across) > 0.0f
                            ? across
                            : perpendicularUnit(a > kTinyLengthSquared ? A.delta : B.delta);
  out.add(candidateAlong(p, ga.radius, q, gb.radius, directionOr(p, q, fallback)));
}

template <class Out>
WEFT_HD inline void collideCapsuleBox(const ShapeGeometry& capsule, const Transform& capsulePose,
                                      const ShapeGeometry& box, const Transform& boxPose,
                                      Out& out) {
  using namespace narrow_phase_detail;
  const Segment world = capsuleSegment(capsule, capsulePose);
  // Everything below in the box frame; candidates go back to world at the end.
  const Segment s{inverseTransformPoint(boxPose, world.start),
                  rotateInverse(boxPose.q, world.delta)};
  const Vec3 h = box.halfExtents;
  const float r = capsule.radius;

  const float tClosest = closestSegmentBoxParameter(s, h);
  const Vec3 p = s.at(tClosest);
  const Vec3 b = clampToBox(p, h);
  int outsideAxes = 0, faceAxis = 0;
  for (int i = 0; i < 3; ++i) {
    // Outside only beyond rounding: a core lying parallel to a face but overhanging it has its
    // closest points on a whole interval (a tie), and the one picked is a crossing of a side
    // slab that rounding can put just outside it; that contact is still the face's, not an edge's.
    const float tolerance = 1e-5f * (fabsf(s.start[i]) + fabsf(s.delta[i]) + h[i]);
    if (fabsf(p[i] - b[i]) > tolerance) {
      ++outsideAxes;
      faceAxis = i;
    }
  }
  float faceSide = 1.0f;
  float tFace = tClosest;
  if (outsideAxes == 0) {
    // The core touches or enters the box: the deepest core point leaves through its nearest face.
    tFace = deepestSegmentBoxParameter(s, h);
    nearestBoxFace(s.at(tFace), h, faceAxis, faceSide);
  } else if (outsideAxes == 1) {
    faceSide = p[faceAxis] < 0.0f ? -1.0f : 1.0f;
  } else {
    // Nearest feature is an edge or a corner: one candidate, core point to box point.
    const Vec3 core = transformPoint(boxPose, p), surface = transformPoint(boxPose, b);
    out.add(candidateAlong(core, r, surface, 0.0f, directionOr(core, surface, Vec3{0, 0, 1})));
    return;
  }

  // Face manifold: clip the core to the face's prism (the other two axes' slabs).
  float lo = 0.0f, hi = 1.0f;
  for (int j = 0; j < 3; ++j) {
    if (j == faceAxis || s.delta[j] == 0.0f) continue;
    const float ta = (-h[j] - s.start[j]) / s.delta[j], tb = (h[j] - s.start[j]) / s.delta[j];
    lo = fmaxf(lo, fminf(ta, tb));
    hi = fminf(hi, fmaxf(ta, tb));
  }
  lo = fminf(lo, tFace);
  hi = fmaxf(hi, tFace);
  Vec3 faceNormal;  // outward, box frame
  faceNormal[faceAxis] = faceSide;
  const Vec3 n = -rotate(boxPose.q, faceNormal);  // capsule → box
  auto addFacePoint = [&](float t) {
    const Vec3 q = s.at(t);
    Vec3 onFace = q;
    onFace[faceAxis] = faceSide * h[faceAxis];
    out.add(
        candidateAlong(transformPoint(boxPose, q), r, transformPoint(boxPose, onFace), 0.0f, n));
  };
  addFacePoint(lo);
  if (hi - lo > kMinManifoldFraction) addFacePoint(hi);
}

// ---- Dispatch ----------------------------------------------------------------------------------

/// The reference's type order (plane < sphere < capsule < box); pairs are evaluated rank-ordered.
WEFT_HD inline int narrowPhaseRank(ShapeType t) {
  switch (t) {
    case ShapeType::Plane:
      return 0;
    case ShapeType::Sphere:
      return 1;
    case ShapeType::Capsule:
      return 2;
    case ShapeType::Box:
    default:
      return 3;
  }
}

/// Candidates of a rank-ordered pair (narrowPhaseRank(a) <= narrowPhaseRank(b)).
template <class Out>
WEFT_HD inline void collideRankOrdered(const ShapeGeometry& a, const Transform& pa,
                                       const ShapeGeometry& b, const Transform& pb, Out& out) {
  switch (a.type) {
    case ShapeType::Plane:
      if (b.type == ShapeType::Sphere) collidePlaneSphere(pa, b, pb, out);
      if (b.type == ShapeType::Capsule) collidePlaneCapsule(pa, b, pb, out);
      if (b.type == ShapeType::Box) collidePlaneBox(pa, b, pb, out);
      return;
    case ShapeType::Sphere:
      if (b.type == ShapeType::Sphere) collideSphereSphere(a, pa, b, pb, out);
      if (b.type == ShapeType::Capsule) collideSphereCapsule(a, pa, b, pb, out);
      if (b.type == ShapeType::Box) collideSphereBox(a, pa, b, pb, out);
      return;
    case ShapeType::Capsule:
      if (b.type == ShapeType::Capsule) collideCapsuleCapsule(a, pa, b, pb, out);
      if (b.type == ShapeType::Box) collideCapsuleBox(a, pa, b, pb, out);
      return;
    case ShapeType::Box:
    default:
      return;  // box–box: not supported
  }
}

/// The same candidate seen from the other shape: points, radii swapped, normal reversed.
WEFT_HD inline ContactCandidate flipped(const ContactCandidate& c) {
  return {c.pointB, c.pointA, -c.normal, c.distance, c.radiusB, c.radiusA};
}

/// A sink that hands on each candidate seen from the other shape.
template <class Out>
struct FlippedCandidates {
  Out& out;
  WEFT_HD void add(const ContactCandidate& c) { out.add(flipped(c)); }
};

/// Every contact candidate between shape A (geometry a, world pose pa) and shape B, in either
/// type order and with A = the first argument, handed to `out.add(candidate)` one by one, in the
/// order collideShapes lists them. A kernel that only counts candidates or writes each where it
/// belongs passes a sink of its own, so that no candidate array exists: an array filled up to a
/// run-time count lives in the thread's local memory (docs/PERFORMANCE.md, "The narrow phase
/// without a candidate array").
template <class Out>
WEFT_HD inline void forEachCandidate(const ShapeGeometry& a, const Transform& pa,
                                     const ShapeGeometry& b, const Transform& pb, Out& out) {
  if (narrowPhaseRank(a.type) <= narrowPhaseRank(b.type)) {
    collideRankOrdered(a, pa, b, pb, out);
  } else {
    FlippedCandidates<Out> flippedOut{out};
    collideRankOrdered(b, pb, a, pa, flippedOut);
  }
}

/// Contact candidates between shape A (geometry a, world pose pa) and shape B, in either type
/// order; every candidate has A = the first argument (at most kMaxContactCandidates, the first).
WEFT_HD inline ContactCandidates collideShapes(const ShapeGeometry& a, const Transform& pa,
                                               const ShapeGeometry& b, const Transform& pb) {
  ContactCandidates out;
  forEachCandidate(a, pa, b, pb, out);
  return out;
}

}  // namespace weft
