// Closest-point queries (kernels/closest_point.h) against exact double-precision references (the
// face projection or the best of the three edges; the best of the stationary point and the four
// clamped boundary solutions for two segments) and against dense brute-force sampling: every
// region of the triangle is reported as constructed, degenerate triangles and segments stay
// finite, and parallel and point-like segments follow the reference's rules.
#include "kernels/closest_point.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

// ---- Exact references in double ----------------------------------------------------------------

struct TriangleReference {
  Vec3d point, barycentric;
};

/// The projection onto the plane when it falls inside, else the best of the three edges.
TriangleReference referenceClosestOnTriangle(const Vec3d& p, const Vec3d& a, const Vec3d& b,
                                             const Vec3d& c) {
  const Vec3d n = (b - a).cross(c - a);
  const double n2 = n.squaredNorm();
  if (n2 > 0) {
    const Vec3d q = p - n * (n.dot(p - a) / n2);
    const Vec3d beta{(b - q).cross(c - q).dot(n) / n2, (c - q).cross(a - q).dot(n) / n2,
                     (a - q).cross(b - q).dot(n) / n2};
    if (beta.minCoeff() >= 0) return {q, beta};
  }
  const std::array<std::array<int, 2>, 3> edges{{{0, 1}, {0, 2}, {1, 2}}};
  const std::array<Vec3d, 3> corners{a, b, c};
  TriangleReference best{a, {1, 0, 0}};
  double bestDistance = (p - a).norm();
  for (const auto& [i, j] : edges) {
    const double s = segmentParameter(p, corners[size_t(i)], corners[size_t(j)]);
    const Vec3d q = corners[size_t(i)] + s * (corners[size_t(j)] - corners[size_t(i)]);
    if ((p - q).norm() < bestDistance) {
      bestDistance = (p - q).norm();
      best.point = q;
      best.barycentric.setZero();
      best.barycentric[i] = 1 - s;
      best.barycentric[j] = s;
    }
  }
  return best;
}

struct SegmentReference {
  double s, t, distance;
};

/// The minimum of |p1 + s·d1 − p2 − t·d2| over [0, 1]²: the stationary point if inside, and the
/// four edges of the square, each a clamped 1-D projection (exact for this convex problem).
SegmentReference referenceSegmentSegment(const Vec3d& p1, const Vec3d& q1, const Vec3d& p2,
                                         const Vec3d& q2) {
  const Vec3d d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  SegmentReference best{0, 0, std::numeric_limits<double>::infinity()};
  const auto consider = [&](double s, double t) {
    const double distance = ((p1 + s * d1) - (p2 + t * d2)).norm();
    if (distance < best.distance) best = {s, t, distance};
  };
  const double a = d1.dot(d1), e = d2.dot(d2), b = d1.dot(d2), c = d1.dot(r), f = d2.dot(r);
  const double denom = a * e - b * b;
  if (denom > 1e-14 * a * e) {
    const double s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) consider(s, t);
  }
  for (const double s : {0.0, 1.0}) consider(s, segmentParameter(p1 + s * d1, p2, q2));
  for (const double t : {0.0, 1.0}) consider(segmentParameter(p2 + t * d2, p1, q1), t);
  return best;
}

// ---- Random geometry --------------------------------------------------------------------------

/// A triangle of size ~scale around the origin whose angles are all above 20°.
std::array<Vec3d, 3> randomTriangle(Random& rng, double scale) {
  for (;;) {
    const std::array<Vec3d, 3> t{rng.vec(-scale, scale), rng.vec(-scale, scale),
                                 rng.vec(-scale, scale)};
    if (smallestAngle(t[0], t[1], t[2]) > 20.0 * std::numbers::pi / 180.0) return t;
  }
}

/// A query point whose closest point lies in `region`, at distance `distance`, with the
/// expected closest point and barycentrics. The direction is drawn from the region's normal cone
/// with margins, so that the region is unambiguous.
struct RegionQuery {
  Vec3d point, closest, barycentric;
};

RegionQuery queryInRegion(Random& rng, const std::array<Vec3d, 3>& tri, int region,
                          double distance) {
  const Vec3d normal = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalized();
  // Outward in-plane normal of edge (i, j).
  const auto outward = [&](int i, int j) {
    const int k = 3 - i - j;
    Vec3d m = normal.cross(tri[size_t(j)] - tri[size_t(i)]).normalized();
    return m.dot(tri[size_t(k)] - tri[size_t(i)]) > 0 ? Vec3d(-m) : m;
  };
  Vec3d beta = Vec3d::Zero(), direction;
  if (region <= kTriangleRegionVertexC) {
    const int i = region, j = (i + 1) % 3, k = (i + 2) % 3;
    beta[i] = 1;
    direction = rng.uniform(-1, 1) * normal + rng.uniform(0.2, 1) * outward(i, j) +
                rng.uniform(0.2, 1) * outward(i, k);
  } else if (region == kTriangleRegionFace) {
    do {
      beta = {rng.uniform(0.1, 0.8), rng.uniform(0.1, 0.8), 0};
      beta[2] = 1 - beta[0] - beta[1];
    } while (beta[2] < 0.1);
    direction = rng.sign() * normal;
  } else {
    const int i = region == kTriangleRegionEdgeBC ? 1 : 0;
    const int j = region == kTriangleRegionEdgeAB ? 1 : 2;
    const double s = rng.uniform(0.1, 0.9);
    beta[i] = 1 - s;
    beta[j] = s;
    const double theta = rng.uniform(0.15, 0.5 * std::numbers::pi);
    direction = std::cos(theta) * rng.sign() * normal + std::sin(theta) * outward(i, j);
  }
  const Vec3d closest = beta[0] * tri[0] + beta[1] * tri[1] + beta[2] * tri[2];
  return {closest + distance * direction.normalized(), closest, beta};
}

// ---- Point–triangle ---------------------------------------------------------------------------

TEST(ClosestPointOnTriangle, EveryRegionIsFoundAsConstructed) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 2100; ++trial) {
    const int region = trial % 7;
    const double scale = std::pow(10.0, rng.uniform(-2, 1));
    const std::array<Vec3d, 3> t = randomTriangle(rng, scale);
    const RegionQuery q = queryInRegion(rng, t, region, rng.uniform(0.01, 2.0) * scale);
    const TriangleClosestPoint r =
        closestPointOnTriangle(toFloat(q.point), toFloat(t[0]), toFloat(t[1]), toFloat(t[2]));
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " region " << region);
    EXPECT_EQ(r.region, region);
    EXPECT_LE((toEigen(r.barycentric) - q.barycentric).norm(), 1e-4);
    EXPECT_LE((toEigen(r.point) - q.closest).norm(), 1e-5 * scale);
  }
}

TEST(ClosestPointOnTriangle, MatchesExactReferenceAndBarycentricsAreConsistent) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, rng.uniform(-2, 1));
    // Any triangle (no angle bound) and any point near it, all at float precision.
    const Vec3d a = roundToFloat(rng.vec(-scale, scale)), b = roundToFloat(rng.vec(-scale, scale)),
                c = roundToFloat(rng.vec(-scale, scale)),
                p = roundToFloat(rng.vec(-2 * scale, 2 * scale));
    const TriangleClosestPoint r =
        closestPointOnTriangle(toFloat(p), toFloat(a), toFloat(b), toFloat(c));
    const TriangleReference ref = referenceClosestOnTriangle(p, a, b, c);
    const Vec3d point = toEigen(r.point), beta = toEigen(r.barycentric);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    // A sliver thinner than ~3e-4 of its edges is answered by its edges: off by up to its width.
    const double sine = (b - a).normalized().cross((c - a).normalized()).norm();
    const double sliver = sine * sine <= 2e-7 ? sine * 4 * scale : 0.0;
    EXPECT_NEAR((p - point).norm(), (p - ref.point).norm(), 1e-5 * scale + sliver);
    EXPECT_GE(beta.minCoeff(), 0.0);
    EXPECT_NEAR(beta.sum(), 1.0, 1e-6);
    EXPECT_LE((beta[0] * a + beta[1] * b + beta[2] * c - point).norm(), 1e-6 * scale);
  }
}

TEST(ClosestPointOnTriangle, DenseSamplingFindsNothingCloser) {
  Random rng;
  TRACE_SEED(rng);
  constexpr int kSamples = 300;
  for (int trial = 0; trial < 30; ++trial) {
    const std::array<Vec3d, 3> t = randomTriangle(rng, 1.0);
    const Vec3d p = roundToFloat(rng.vec(-2, 2));
    const std::array<Vec3d, 3> tf{roundToFloat(t[0]), roundToFloat(t[1]), roundToFloat(t[2])};
    const double distance = (p - toEigen(closestPointOnTriangle(toFloat(p), toFloat(tf[0]),
                                                                toFloat(tf[1]), toFloat(tf[2]))
                                             .point))
                                .norm();
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kSamples; ++i)
      for (int j = 0; i + j <= kSamples; ++j) {
        const double u = double(i) / kSamples, v = double(j) / kSamples;
        sampled = std::min(sampled, (p - ((1 - u - v) * tf[0] + u * tf[1] + v * tf[2])).norm());
      }
    EXPECT_LE(distance, sampled + 1e-5) << "trial " << trial;
    // The sampling is within one grid cell of the true minimum.
    EXPECT_LE(sampled, distance + 4.0 / kSamples) << "trial " << trial;
  }
}

TEST(ClosestPointOnTriangle, DegenerateTrianglesGiveFiniteEdgeAnswers) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 1000; ++trial) {
    const Vec3d a = roundToFloat(rng.vec(-1, 1)), b = roundToFloat(rng.vec(-1, 1));
    Vec3d c;
    switch (trial % 5) {
      case 0:
        c = a;
        break;  // two corners coincide
      case 1:
        c = roundToFloat(a + rng.uniform(-2, 3) * (b - a));
        break;  // collinear
      case 2:
        c = roundToFloat(a + 1e-7 * rng.unit() + rng.uniform(0, 1) * (b - a));
        break;
      case 3:
        c = b;
        break;
      default:
        c = roundToFloat(0.5 * (a + b));
        break;
    }
    const Vec3d allSame = a;
    // Points off the line and on it.
    const Vec3d p =
        trial % 2 ? roundToFloat(rng.vec(-2, 2)) : roundToFloat(a + rng.uniform(-1, 2) * (b - a));
    for (const bool point : {false, true}) {
      const Vec3d bb = point ? allSame : b, cc = point ? allSame : c;
      const TriangleClosestPoint r =
          closestPointOnTriangle(toFloat(p), toFloat(a), toFloat(bb), toFloat(cc));
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " point " << point);
      ASSERT_TRUE(isFinite(r.point) && isFinite(r.barycentric));
      EXPECT_GE(toEigen(r.barycentric).minCoeff(), 0.0);
      EXPECT_NEAR(toEigen(r.barycentric).sum(), 1.0, 1e-6);
      EXPECT_GE(r.region, 0);
      EXPECT_LE(r.region, 6);
      const TriangleReference ref = referenceClosestOnTriangle(p, a, bb, cc);
      EXPECT_NEAR((p - toEigen(r.point)).norm(), (p - ref.point).norm(), 1e-5);
    }
  }
}

// ---- Segment–segment --------------------------------------------------------------------------

void expectConsistent(const EdgeEdgeClosest& r, const Vec3d& p1, const Vec3d& q1, const Vec3d& p2,
                      const Vec3d& q2, double tolerance) {
  EXPECT_TRUE(std::isfinite(r.s) && std::isfinite(r.t) && std::isfinite(r.distance));
  EXPECT_GE(r.s, 0.0f);
  EXPECT_LE(r.s, 1.0f);
  EXPECT_GE(r.t, 0.0f);
  EXPECT_LE(r.t, 1.0f);
  // The distance is that of the returned parameters.
  EXPECT_NEAR(r.distance, ((p1 + double(r.s) * (q1 - p1)) - (p2 + double(r.t) * (q2 - p2))).norm(),
              tolerance);
}

TEST(ClosestPointEdgeEdge, MatchesExactReference) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 3000; ++trial) {
    const double scale = std::pow(10.0, rng.uniform(-2, 1));
    const Vec3d p1 = roundToFloat(rng.vec(-scale, scale)),
                q1 = roundToFloat(rng.vec(-scale, scale)),
                p2 = roundToFloat(rng.vec(-scale, scale)),
                q2 = roundToFloat(rng.vec(-scale, scale));
    const EdgeEdgeClosest r =
        closestPointEdgeEdge(toFloat(p1), toFloat(q1), toFloat(p2), toFloat(q2), 0.0f);
    const SegmentReference ref = referenceSegmentSegment(p1, q1, p2, q2);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    expectConsistent(r, p1, q1, p2, q2, 1e-5 * scale);
    EXPECT_NEAR(r.distance, ref.distance, 1e-5 * scale);
    // Where the minimiser is well defined (not nearly parallel), the parameters agree too.
    const double sine = (q1 - p1).normalized().cross((q2 - p2).normalized()).norm();
    if (sine > 0.2) {
      EXPECT_NEAR(r.s, ref.s, 1e-3);
      EXPECT_NEAR(r.t, ref.t, 1e-3);
    }
    // Swapping the segments swaps the parameters and keeps the distance.
    const EdgeEdgeClosest swapped =
        closestPointEdgeEdge(toFloat(p2), toFloat(q2), toFloat(p1), toFloat(q1), 0.0f);
    EXPECT_NEAR(swapped.distance, r.distance, 1e-5 * scale);
    if (sine > 0.2) {
      EXPECT_NEAR(swapped.s, r.t, 1e-3);
      EXPECT_NEAR(swapped.t, r.s, 1e-3);
    }
  }
}

TEST(ClosestPointEdgeEdge, DenseSamplingFindsNothingCloser) {
  Random rng;
  TRACE_SEED(rng);
  constexpr int kSamples = 400;
  for (int trial = 0; trial < 30; ++trial) {
    const Vec3d p1 = roundToFloat(rng.vec(-1, 1)), q1 = roundToFloat(rng.vec(-1, 1)),
                p2 = roundToFloat(rng.vec(-1, 1)), q2 = roundToFloat(rng.vec(-1, 1));
    const EdgeEdgeClosest r =
        closestPointEdgeEdge(toFloat(p1), toFloat(q1), toFloat(p2), toFloat(q2), 1e-5f);
    double sampled = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kSamples; ++i)
      for (int j = 0; j <= kSamples; ++j) {
        const double s = double(i) / kSamples, t = double(j) / kSamples;
        sampled = std::min(sampled, ((p1 + s * (q1 - p1)) - (p2 + t * (q2 - p2))).norm());
      }
    EXPECT_LE(r.distance, sampled + 1e-5) << "trial " << trial;
    EXPECT_LE(sampled, r.distance + 8.0 / kSamples) << "trial " << trial;
  }
}

TEST(ClosestPointEdgeEdge, ParallelSegmentsTakeSZeroThenClampT) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 500; ++trial) {
    // Exactly parallel in float: e2 = offset + dyadic multiples of the same direction.
    const Vec3d direction = roundToFloat(rng.unit());
    const Vec3d p1 = roundToFloat(rng.vec(-1, 1));
    const Vec3d offset = rng.unitPerpendicular(direction) * rng.uniform(0.01, 1);
    const double start = std::round(rng.uniform(-3, 3) * 8) / 8;
    const double span = rng.sign() * std::round(rng.uniform(0.25, 2) * 8) / 8;
    const Vec3d q1 = roundToFloat(p1 + 2.0 * direction);
    const Vec3d p2 = roundToFloat(p1 + offset + start * direction);
    const Vec3d q2 = roundToFloat(p2 + span * direction);
    const EdgeEdgeClosest r =
        closestPointEdgeEdge(toFloat(p1), toFloat(q1), toFloat(p2), toFloat(q2), 1e-5f);
    const SegmentReference ref = referenceSegmentSegment(p1, q1, p2, q2);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    expectConsistent(r, p1, q1, p2, q2, 1e-5);
    EXPECT_NEAR(r.distance, ref.distance, 1e-5);
    // The rule: s = 0 and t solves for p1, unless that t is outside [0, 1] (then t is clamped
    // and s recomputed). When the float denominator comes out positive instead, s is still a
    // minimiser, so only the distance is binding; when it is exactly 0 the rule is exact.
    const Vec3 d1 = toFloat(q1) - toFloat(p1), d2 = toFloat(q2) - toFloat(p2);
    const float denom = dot(d1, d1) * dot(d2, d2) - dot(d1, d2) * dot(d1, d2);
    const double tForP1 = (p1 - p2).dot(q2 - p2) / (q2 - p2).squaredNorm();
    if (denom <= 0.0f && tForP1 > 1e-4 && tForP1 < 1 - 1e-4) {
      EXPECT_EQ(r.s, 0.0f);
      EXPECT_NEAR(r.t, tForP1, 1e-5);
    }
  }
  // A hand-made case: collinear and overlapping, s = 0, t at p1.
  const EdgeEdgeClosest overlap =
      closestPointEdgeEdge({0, 0, 0}, {2, 0, 0}, {-1, 1, 0}, {3, 1, 0}, 1e-5f);
  EXPECT_EQ(overlap.s, 0.0f);
  EXPECT_EQ(overlap.t, 0.25f);
  EXPECT_EQ(overlap.distance, 1.0f);
  // Parallel and disjoint: t clamps to 0 and s is recomputed to 1.
  const EdgeEdgeClosest disjoint =
      closestPointEdgeEdge({0, 0, 0}, {1, 0, 0}, {2, 1, 0}, {3, 1, 0}, 1e-5f);
  EXPECT_EQ(disjoint.s, 1.0f);
  EXPECT_EQ(disjoint.t, 0.0f);
  EXPECT_NEAR(disjoint.distance, std::sqrt(2.0f), 1e-6f);
}

TEST(ClosestPointEdgeEdge, ShortSegmentsArePoints) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 500; ++trial) {
    const float epsilon = 1e-5f;
    const Vec3d p1 = roundToFloat(rng.vec(-1, 1)), p2 = roundToFloat(rng.vec(-1, 1));
    // Squared length <= epsilon (or exactly zero) counts as a point.
    const double shortLength = trial % 3 == 0 ? 0.0 : rng.uniform(0, 0.9) * std::sqrt(epsilon);
    const Vec3d q1Short = roundToFloat(p1 + shortLength * rng.unit());
    const Vec3d q1 = roundToFloat(p1 + rng.vec(-1, 1)), q2 = roundToFloat(p2 + rng.vec(-1, 1));
    const Vec3d q2Short = roundToFloat(p2 + shortLength * rng.unit());
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    {  // first a point
      const EdgeEdgeClosest r =
          closestPointEdgeEdge(toFloat(p1), toFloat(q1Short), toFloat(p2), toFloat(q2), epsilon);
      EXPECT_EQ(r.s, 0.0f);
      EXPECT_NEAR(r.t, segmentParameter(p1, p2, q2), 1e-5);
      expectConsistent(r, p1, q1Short, p2, q2, 1e-5);
    }
    {  // second a point
      const EdgeEdgeClosest r =
          closestPointEdgeEdge(toFloat(p1), toFloat(q1), toFloat(p2), toFloat(q2Short), epsilon);
      EXPECT_EQ(r.t, 0.0f);
      EXPECT_NEAR(r.s, segmentParameter(p2, p1, q1), 1e-5);
      expectConsistent(r, p1, q1, p2, q2Short, 1e-5);
    }
    {  // both points
      const EdgeEdgeClosest r = closestPointEdgeEdge(toFloat(p1), toFloat(q1Short), toFloat(p2),
                                                     toFloat(q2Short), epsilon);
      EXPECT_EQ(r.s, 0.0f);
      EXPECT_EQ(r.t, 0.0f);
      EXPECT_NEAR(r.distance, (p1 - p2).norm(), 1e-6);
    }
  }
  // With epsilon 0 a zero-length segment is still finite.
  const EdgeEdgeClosest zero = closestPointEdgeEdge({1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}, 0);
  EXPECT_EQ(zero.s, 0.0f);
  EXPECT_EQ(zero.t, 0.0f);
  EXPECT_EQ(zero.distance, 0.0f);
}

}  // namespace
}  // namespace weft
