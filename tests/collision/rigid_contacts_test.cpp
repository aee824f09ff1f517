// Rigid contact generation (rigid_avbd_spec §6): the analytic narrow phase against exact and
// brute-force distances computed independently in double (capsule–capsule including parallel and
// crossing cores, capsule–plane, capsule–sphere, capsule–box, sphere–sphere, sphere–box,
// plane–box), always through the row writer (points and offsets in the body frames, margins =
// effective radius + shape margin); and RigidContactDetector against an all-pairs brute force
// (pair rule, filter, static and kinematic bodies, planes), its per-body lists, determinism,
// overflow and growToFit, refit-only trees, CPU == CUDA bit for bit, and bad counts.
// All seeds are fixed.
#include "collision/rigid_contacts.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/rigid_broad_phase.cuh"
#include "kernels/rigid_contact.h"
#include "kernels/rigid_narrow_phase.h"
#include "kernels/runtime/buffer.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch_table.h"
#include "test_support.h"

namespace weft {
namespace {

using Vec3d = Eigen::Vector3d;

// ---- Random inputs ------------------------------------------------------------------------------

struct Rng {
  std::mt19937 gen;
  explicit Rng(unsigned seed) : gen(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen); }
  double uniformD(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  bool chance(double p) { return uniformD(0.0, 1.0) < p; }
  Vec3 vec(float lo, float hi) { return {uniform(lo, hi), uniform(lo, hi), uniform(lo, hi)}; }
  Vec3d unitD() {
    for (;;) {
      const Vec3d v{uniformD(-1, 1), uniformD(-1, 1), uniformD(-1, 1)};
      if (v.norm() > 0.1 && v.norm() < 1.0) return v.normalized();
    }
  }
  Quat rotation() {
    std::normal_distribution<float> g;
    return normalize(Quat{g(gen), g(gen), g(gen), g(gen)});
  }
};

/// The rotation by `angle` about the unit `axis`, computed in double.
Quat axisAngle(const Vec3d& axis, double angle) {
  const double s = std::sin(0.5 * angle);
  return normalize(Quat{float(axis.x() * s), float(axis.y() * s), float(axis.z() * s),
                        float(std::cos(0.5 * angle))});
}
/// A rotation taking local +Z to the direction d.
Quat zTo(const Vec3d& d) {
  const Vec3d u = d.normalized(), axis = Vec3d::UnitZ().cross(u);
  const double s = axis.norm();
  if (s < 1e-12) return u.z() > 0 ? Quat{} : Quat{1.0f, 0.0f, 0.0f, 0.0f};
  return axisAngle(axis / s, std::atan2(s, u.z()));
}
Vec3 toFloat(const Vec3d& v) {
  return {float(v.x()), float(v.y()), float(v.z())};
}
Vec3d toD(const Vec3& v) {
  return {v.x, v.y, v.z};
}

// ---- Double-precision references (independent of the float kernels) -----------------------------

/// rotate(q, v) of kernels/math.h, in double.
Vec3d rotateD(const Quat& q, const Vec3d& v) {
  const Vec3d u{q.x, q.y, q.z};
  const Vec3d t = 2.0 * u.cross(v);
  return v + double(q.w) * t + u.cross(t);
}
Vec3d rotateInverseD(const Quat& q, const Vec3d& v) {
  return rotateD(Quat{-q.x, -q.y, -q.z, q.w}, v);
}
Vec3d transformD(const Transform& t, const Vec3d& local) {
  return rotateD(t.q, local) + toD(t.p);
}

struct SegmentD {
  Vec3d a, b;
  Vec3d at(double t) const { return a + t * (b - a); }
};

SegmentD coreSegment(const ShapeGeometry& g, const Transform& pose) {
  const Vec3d half = rotateD(pose.q, Vec3d{0, 0, double(g.halfHeight)});
  return {toD(pose.p) - half, toD(pose.p) + half};
}

double pointSegmentDistance(const Vec3d& p, const SegmentD& s) {
  const Vec3d d = s.b - s.a;
  const double len2 = d.squaredNorm();
  const double t = len2 > 0 ? std::clamp((p - s.a).dot(d) / len2, 0.0, 1.0) : 0.0;
  return (s.at(t) - p).norm();
}

/// Exact distance of two segments: |A(s) − B(t)|² is a convex quadratic on [0,1]², so its minimum
/// is the interior stationary point (if it lies inside) or the 1-D optimum of one of the 4 edges.
double segmentSegmentDistance(const SegmentD& A, const SegmentD& B) {
  const Vec3d dA = A.b - A.a, dB = B.b - B.a, r = A.a - B.a;
  auto at = [&](double s, double t) { return (A.at(s) - B.at(t)).norm(); };
  auto clampedOn = [](const Vec3d& p, const Vec3d& start, const Vec3d& d) {
    const double len2 = d.squaredNorm();
    return len2 > 0 ? std::clamp((p - start).dot(d) / len2, 0.0, 1.0) : 0.0;
  };
  double best = std::numeric_limits<double>::infinity();
  for (double s : {0.0, 1.0}) best = std::min(best, at(s, clampedOn(A.at(s), B.a, dB)));
  for (double t : {0.0, 1.0}) best = std::min(best, at(clampedOn(B.at(t), A.a, dA), t));
  const double a = dA.squaredNorm(), e = dB.squaredNorm(), b = dA.dot(dB), c = dA.dot(r),
               f = dB.dot(r);
  const double det = dA.cross(dB).squaredNorm();
  if (det > 1e-30 * a * e) {
    const double s = (b * f - c * e) / det, t = (a * f - b * c) / det;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) best = std::min(best, at(s, t));
  }
  return best;
}

/// Signed distance of a box-frame point to the box [−h, h] (negative inside).
double boxSignedDistance(const Vec3d& p, const Vec3& h) {
  const Vec3d hd = toD(h);
  const Vec3d q = p.cwiseAbs() - hd;
  const double outside = q.cwiseMax(0.0).norm();
  const double inside = std::min(q.maxCoeff(), 0.0);
  return outside + inside;
}

/// Minimum over a segment (box frame) of the box's signed distance. The signed distance of a
/// convex set is convex, so dense sampling brackets the minimum and golden sections refine it.
double segmentBoxSignedDistance(const SegmentD& s, const Vec3& h) {
  auto f = [&](double t) { return boxSignedDistance(s.at(t), h); };
  constexpr int kSamples = 256;
  int bestI = 0;
  double best = f(0.0);
  for (int i = 1; i <= kSamples; ++i) {
    const double v = f(double(i) / kSamples);
    if (v < best) best = v, bestI = i;
  }
  double lo = std::max(0.0, double(bestI - 1) / kSamples);
  double hi = std::min(1.0, double(bestI + 1) / kSamples);
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 100; ++it) {
    const double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
    if (f(m1) < f(m2))
      hi = m2;
    else
      lo = m1;
  }
  return std::min(best, f(0.5 * (lo + hi)));
}

// ---- Shapes placed on bodies --------------------------------------------------------------------

/// One shape of a two-shape narrow-phase case: its own body (index 0 or 1) or static (−1).
struct Placed {
  ShapeGeometry geometry;
  int body = -1;
  Transform bodyPose;   // identity when static
  Transform localPose;  // in the body frame (world when static)
  Transform world;      // shapeWorldPose(bodyPose, localPose), as the detector computes it
  float margin = 0.0f, gap = 0.0f;
};

ShapeGeometry capsule(float radius, float halfHeight) {
  ShapeGeometry g;
  g.type = ShapeType::Capsule;
  g.radius = radius;
  g.halfHeight = halfHeight;
  return g;
}
ShapeGeometry sphere(float radius) {
  ShapeGeometry g;
  g.type = ShapeType::Sphere;
  g.radius = radius;
  return g;
}
ShapeGeometry box(const Vec3& halfExtents) {
  ShapeGeometry g;
  g.type = ShapeType::Box;
  g.halfExtents = halfExtents;
  return g;
}
ShapeGeometry plane() {
  return ShapeGeometry{};
}

/// The shape near `desired` (world), on body `index` at a random pose or (sometimes) static.
Placed place(Rng& rng, const ShapeGeometry& g, const Transform& desired, int index) {
  Placed s;
  s.geometry = g;
  s.margin = rng.chance(0.5) ? 0.0f : rng.uniform(0.0f, 0.01f);
  s.gap = rng.uniform(0.0f, 0.02f);
  if (rng.chance(0.2)) {
    s.localPose = s.world = desired;
    return s;
  }
  s.body = index;
  s.bodyPose = {rng.vec(-2.0f, 2.0f), rng.rotation()};
  s.localPose = {rotateInverse(s.bodyPose.q, desired.p - s.bodyPose.p),
                 normalize(conjugate(s.bodyPose.q) * desired.q)};
  s.world = shapeWorldPose(s.bodyPose, s.localPose);
  return s;
}

float effectiveRadius(const ShapeGeometry& g) {
  return g.type == ShapeType::Capsule || g.type == ShapeType::Sphere ? g.radius : 0.0f;
}

/// Distance of a world point to the shape's skeleton: core segment, centre, plane, box surface.
double skeletonDistance(const Placed& s, const Vec3d& p) {
  const ShapeGeometry& g = s.geometry;
  switch (g.type) {
    case ShapeType::Capsule:
      return pointSegmentDistance(p, coreSegment(g, s.world));
    case ShapeType::Sphere:
      return (p - toD(s.world.p)).norm();
    case ShapeType::Box:
      return std::abs(
          boxSignedDistance(rotateInverseD(s.world.q, p - toD(s.world.p)), g.halfExtents));
    case ShapeType::Plane:
    default:
      return std::abs(rotateD(s.world.q, Vec3d::UnitZ()).dot(p - toD(s.world.p)));
  }
}

/// Exact signed surface distance of two shapes (either order), shape b moved by `shiftB`; NaN for
/// the pairs without a narrow phase (plane–plane, box–box).
double exactDistance(const Placed& a0, const Placed& b0, const Vec3d& shiftB = Vec3d::Zero()) {
  const Placed* a = &a0;
  const Placed* b = &b0;
  Vec3d shiftA = Vec3d::Zero(), shift = shiftB;
  if (narrowPhaseRank(a->geometry.type) > narrowPhaseRank(b->geometry.type)) {
    std::swap(a, b);
    std::swap(shiftA, shift);
  }
  const ShapeGeometry &ga = a->geometry, &gb = b->geometry;
  const Vec3d pa = toD(a->world.p) + shiftA, pb = toD(b->world.p) + shift;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto segment = [](const ShapeGeometry& g, const Transform& pose, const Vec3d& centre) {
    const Vec3d half = rotateD(pose.q, Vec3d{0, 0, double(g.halfHeight)});
    return SegmentD{centre - half, centre + half};
  };
  if (ga.type == ShapeType::Plane) {
    const Vec3d n = rotateD(a->world.q, Vec3d::UnitZ());
    auto height = [&](const Vec3d& p) { return n.dot(p - pa); };
    switch (gb.type) {
      case ShapeType::Sphere:
        return height(pb) - gb.radius;
      case ShapeType::Capsule: {
        const SegmentD s = segment(gb, b->world, pb);
        return std::min(height(s.a), height(s.b)) - gb.radius;
      }
      case ShapeType::Box: {
        double lowest = std::numeric_limits<double>::infinity();
        for (int k = 0; k < 8; ++k) {
          const Vec3 h = gb.halfExtents;
          const Vec3d local{(k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z};
          lowest = std::min(lowest, height(rotateD(b->world.q, local) + pb));
        }
        return lowest;
      }
      default:
        return nan;
    }
  }
  if (ga.type == ShapeType::Sphere) {
    switch (gb.type) {
      case ShapeType::Sphere:
        return (pb - pa).norm() - ga.radius - gb.radius;
      case ShapeType::Capsule:
        return pointSegmentDistance(pa, segment(gb, b->world, pb)) - ga.radius - gb.radius;
      case ShapeType::Box:
        return boxSignedDistance(rotateInverseD(b->world.q, pa - pb), gb.halfExtents) - ga.radius;
      default:
        return nan;
    }
  }
  if (ga.type == ShapeType::Capsule) {
    const SegmentD s = segment(ga, a->world, pa);
    switch (gb.type) {
      case ShapeType::Capsule:
        return segmentSegmentDistance(s, segment(gb, b->world, pb)) - ga.radius - gb.radius;
      case ShapeType::Box: {
        const SegmentD local{rotateInverseD(b->world.q, s.a - pb),
                             rotateInverseD(b->world.q, s.b - pb)};
        return segmentBoxSignedDistance(local, gb.halfExtents) - ga.radius;
      }
      default:
        return nan;
    }
  }
  return nan;
}

/// Distance between the skeletons (surface distance plus the effective radii).
double skeletonGap(const Placed& a, const Placed& b) {
  return exactDistance(a, b) + effectiveRadius(a.geometry) + effectiveRadius(b.geometry);
}

// ---- The narrow phase through the row writer ----------------------------------------------------

struct NarrowResult {
  ContactCandidates candidates;
  std::vector<RigidContact> rows;
};

/// Candidates of shapes 0 and 1 (queried as (0, 1) or as (1, 0)) and their rows.
NarrowResult narrowRows(const Placed& s0, const Placed& s1, bool fromShape1) {
  const int body[2] = {s0.body, s1.body};
  const ShapeGeometry geometry[2] = {s0.geometry, s1.geometry};
  const Transform local[2] = {s0.localPose, s1.localPose};
  const float margin[2] = {s0.margin, s1.margin}, gap[2] = {s0.gap, s1.gap};
  const Transform bodyPoses[2] = {s0.bodyPose, s1.bodyPose};
  const Transform world[2] = {s0.world, s1.world};
  const RigidShapesView view{2, body, geometry, local, margin, gap};
  const int a = fromShape1 ? 1 : 0, b = 1 - a;
  NarrowResult r;
  r.candidates = collideShapes(geometry[a], world[a], geometry[b], world[b]);
  for (int k = 0; k < r.candidates.count; ++k)
    r.rows.push_back(makeRigidContact(a, b, r.candidates.items[k], view, bodyPoses));
  return r;
}

/// A row seen in world space, at the detection poses.
struct WorldRow {
  Vec3d p0, p1, n;
  double separation;  // n·(P1 − P0) − (margin0 + margin1)
};

/// The row invariants every pair shares; returns the row in world space.
WorldRow checkRow(const RigidContact& row, const Placed& s0, const Placed& s1) {
  EXPECT_EQ(row.shape0, 0);
  EXPECT_EQ(row.shape1, 1);
  EXPECT_EQ(row.body0, s0.body);
  EXPECT_EQ(row.body1, s1.body);
  EXPECT_EQ(row.margin0, effectiveRadius(s0.geometry) + s0.margin);
  EXPECT_EQ(row.margin1, effectiveRadius(s1.geometry) + s1.margin);
  const Transform pose0 = s0.body >= 0 ? s0.bodyPose : Transform{};
  const Transform pose1 = s1.body >= 0 ? s1.bodyPose : Transform{};
  WorldRow w;
  w.p0 = transformD(pose0, toD(row.point0));
  w.p1 = transformD(pose1, toD(row.point1));
  w.n = toD(row.normal);
  w.separation = w.n.dot(w.p1 - w.p0) - (double(row.margin0) + double(row.margin1));
  EXPECT_NEAR(w.n.norm(), 1.0, 1e-6);
  // Points on the skeletons; P1 − P0 along the normal (no tangential offset between the anchors).
  EXPECT_LT(skeletonDistance(s0, w.p0), 2e-5);
  EXPECT_LT(skeletonDistance(s1, w.p1), 2e-5);
  const Vec3d d = w.p1 - w.p0;
  EXPECT_LT((d - w.n * w.n.dot(d)).norm(), 2e-5);
  // Anchors: the surfaces (plus shape margin) along ±n, stored in the body frames.
  const Vec3d a0 = transformD(pose0, toD(row.point0 + row.offset0));
  const Vec3d a1 = transformD(pose1, toD(row.point1 + row.offset1));
  EXPECT_LT((a0 - (w.p0 + double(row.margin0) * w.n)).norm(), 2e-5);
  EXPECT_LT((a1 - (w.p1 - double(row.margin1) * w.n)).norm(), 2e-5);
  // The solver's own reading of the row gives the same separation.
  const ContactPoints points = contactPoints(row, pose0, pose1);
  EXPECT_NEAR(-rigidContactPenetration(row, points), w.separation, 2e-5);
  return w;
}

/// What a batch of random cases measured (for sanity checks that the cases cover something).
struct Coverage {
  int cases = 0, penetrating = 0, separated = 0, twoCandidates = 0;
};

/// Runs the shared checks on one case (both query orders) and compares the separations with the
/// exact distance: every candidate at least the exact separation (no candidate invents a deeper
/// contact than the geometry has) unless `deeperAllowed`, and the smallest at most exact + slack.
/// The normal of the closest candidate, if the skeletons are apart, must separate them: moving
/// shape 1 along n by ε grows the exact distance by about ε.
void checkCase(const Placed& s0, const Placed& s1, double slack, bool deeperAllowed,
               Coverage& coverage) {
  const double exact = exactDistance(s0, s1) - double(s0.margin) - double(s1.margin);
  const double skeletons = skeletonGap(s0, s1);
  size_t count = 0;
  for (bool fromShape1 : {false, true}) {
    SCOPED_TRACE(fromShape1 ? "queried from shape 1" : "queried from shape 0");
    const NarrowResult r = narrowRows(s0, s1, fromShape1);
    ASSERT_GE(r.rows.size(), 1u);
    double smallest = std::numeric_limits<double>::infinity();
    Vec3d closestNormal = Vec3d::Zero();
    for (size_t k = 0; k < r.rows.size(); ++k) {
      const WorldRow w = checkRow(r.rows[k], s0, s1);
      // The candidate's own distance is consistent with the row's separation.
      EXPECT_NEAR(double(r.candidates.items[k].distance) - s0.margin - s1.margin, w.separation,
                  2e-5);
      if (!deeperAllowed) {
        EXPECT_GE(w.separation, exact - 1e-4) << "candidate " << k;
      }
      if (w.separation < smallest) smallest = w.separation, closestNormal = w.n;
    }
    EXPECT_LE(smallest, exact + slack);
    if (!deeperAllowed || exact > 0) {
      EXPECT_GE(smallest, exact - 1e-4);
    }
    if (skeletons > 1e-2) {
      const double eps = 1e-3;
      const double grown = exactDistance(s0, s1, eps * closestNormal) - s0.margin - s1.margin;
      EXPECT_GT((grown - exact) / eps, 0.9) << "the normal does not point from shape 0 to shape 1";
    }
    if (!fromShape1) {
      count = r.rows.size();
    } else if (s0.geometry.type != s1.geometry.type) {
      // Mixed pairs are evaluated in type order either way: the rows are the same bit for bit.
      const NarrowResult forward = narrowRows(s0, s1, false);
      ASSERT_EQ(forward.rows.size(), r.rows.size());
      EXPECT_EQ(
          0, std::memcmp(forward.rows.data(), r.rows.data(), r.rows.size() * sizeof(RigidContact)));
    }
  }
  ++coverage.cases;
  coverage.penetrating += exact < 0;
  coverage.separated += exact > 0;
  coverage.twoCandidates += count == 2;
}

// ---- Narrow phase tests -------------------------------------------------------------------------

TEST(RigidNarrowPhase, CapsuleCapsuleMatchesExactSegmentDistance) {
  Rng rng(1234);
  Coverage random, crossing, parallel, nearParallel;
  auto randomCapsule = [&] {
    return capsule(rng.uniform(0.01f, 0.3f), rng.chance(0.05) ? 0.0f : rng.uniform(0.0f, 1.0f));
  };
  for (int i = 0; i < 4000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const int kind = i % 4;
    const ShapeGeometry ga = randomCapsule(), gb = randomCapsule();
    const Transform poseA{rng.vec(-1.0f, 1.0f), rng.rotation()};
    const Vec3d axisA = rotateD(poseA.q, Vec3d::UnitZ());
    Transform poseB;
    double slack = 1e-4;
    if (kind == 0) {  // anywhere
      poseB = {rng.vec(-1.0f, 1.0f), rng.rotation()};
    } else if (kind == 1) {  // crossing: B's core passes near an interior point of A's core
      const Vec3d axisB = rng.unitD();
      const Vec3d across = axisA.cross(axisB).normalized();
      const Vec3d onA = toD(poseA.p) + rng.uniformD(-1, 1) * ga.halfHeight * axisA;
      const double offset = rng.chance(0.1) ? 0.0 : rng.uniformD(-0.5, 0.5);
      const Vec3d centre = onA + offset * across - rng.uniformD(-1, 1) * gb.halfHeight * axisB;
      poseB = {toFloat(centre), zTo(axisB)};
    } else {  // (near-)parallel: B's axis is A's turned by a tiny angle (or exactly A's, ±)
      const Vec3d perpendicular = axisA.cross(rng.unitD()).normalized();
      const double angle = kind == 2 ? 0.0 : std::exp(rng.uniformD(std::log(1e-6), std::log(3e-2)));
      Quat q = poseA.q;
      if (kind == 2 && rng.chance(0.5)) q = q * Quat{1.0f, 0.0f, 0.0f, 0.0f};  // reversed axis
      if (angle > 0) q = normalize(axisAngle(perpendicular, angle) * q);
      const Vec3d centre = toD(poseA.p) + rng.uniformD(0.0, 0.6) * perpendicular.cross(axisA) +
                           rng.uniformD(-1.0, 1.0) * rng.uniformD(0.0, 2.0) * axisA;
      poseB = {toFloat(centre), q};
    }
    const Placed s0 = place(rng, ga, poseA, 0), s1 = place(rng, gb, poseB, 1);
    // Axes parallel to within 1e-3 rad give the two ends of the common span, whose distance can
    // exceed the closest one by the tilt times the span.
    const SegmentD A = coreSegment(ga, s0.world), B = coreSegment(gb, s1.world);
    const Vec3d dA = A.b - A.a, dB = B.b - B.a;
    const double sine =
        dA.norm() > 0 && dB.norm() > 0 ? dA.cross(dB).norm() / (dA.norm() * dB.norm()) : 1.0;
    if (sine < 1.1e-3) slack += 2.0 * sine * (ga.halfHeight + gb.halfHeight);
    Coverage& coverage =
        kind == 0 ? random : (kind == 1 ? crossing : (kind == 2 ? parallel : nearParallel));
    checkCase(s0, s1, slack, false, coverage);
    const NarrowResult r = narrowRows(s0, s1, false);
    if (sine > 2e-3) {
      EXPECT_EQ(r.rows.size(), 1u) << "crossing axes give one candidate";
    }
    if (kind == 2 && ga.halfHeight > 0.05f && gb.halfHeight > 0.05f) {
      // Exactly parallel with a real common span: both ends of the span.
      const double t0 = (B.a - A.a).dot(dA) / dA.squaredNorm(),
                   t1 = (B.b - A.a).dot(dA) / dA.squaredNorm();
      const double span =
          (std::min(std::max(t0, t1), 1.0) - std::max(std::min(t0, t1), 0.0)) * dA.norm();
      if (span > 0.05 * std::min(dA.norm(), dB.norm())) {
        EXPECT_EQ(r.rows.size(), 2u);
      }
      if (span < 0.0) {
        EXPECT_EQ(r.rows.size(), 1u);
      }
    }
    if (HasFailure()) return;
  }
  for (const Coverage* c : {&random, &crossing, &parallel, &nearParallel}) {
    EXPECT_GT(c->penetrating, 50);
    EXPECT_GT(c->separated, 50);
  }
  EXPECT_GT(parallel.twoCandidates, 300);
}

TEST(RigidNarrowPhase, CapsulePlaneGivesBothCoreEndsAgainstThePlane) {
  Rng rng(77);
  Coverage coverage;
  int parallelCases = 0;
  for (int i = 0; i < 2000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const ShapeGeometry gc = capsule(rng.uniform(0.01f, 0.3f), rng.uniform(0.0f, 1.0f));
    const Transform planePose{rng.vec(-1.0f, 1.0f), rng.rotation()};
    const Vec3d n = rotateD(planePose.q, Vec3d::UnitZ());
    const bool parallel = i % 3 == 0;  // the core lies parallel to the plane
    const Quat q = parallel ? zTo(n.cross(rng.unitD())) : rng.rotation();
    const Vec3d centre =
        toD(planePose.p) + rng.uniformD(-1, 1) * n.cross(rng.unitD()) + rng.uniformD(-0.5, 0.8) * n;
    const bool planeFirst = rng.chance(0.5);
    const Placed planeShape = place(rng, plane(), planePose, planeFirst ? 0 : 1);
    const Placed capsuleShape = place(rng, gc, {toFloat(centre), q}, planeFirst ? 1 : 0);
    const Placed& s0 = planeFirst ? planeShape : capsuleShape;
    const Placed& s1 = planeFirst ? capsuleShape : planeShape;
    checkCase(s0, s1, 1e-4, false, coverage);
    // Always two candidates: each core end against the plane, along the plane's normal.
    const NarrowResult r = narrowRows(s0, s1, false);
    ASSERT_EQ(r.rows.size(), 2u);
    const SegmentD core = coreSegment(gc, capsuleShape.world);
    const Vec3d planeNormal = rotateD(planeShape.world.q, Vec3d::UnitZ());
    double separations[2];
    for (int k = 0; k < 2; ++k) {
      const WorldRow w = checkRow(r.rows[k], s0, s1);
      const Vec3d onCore = planeFirst ? w.p1 : w.p0;
      EXPECT_LT(((k == 0 ? core.a : core.b) - onCore).norm(), 2e-5) << "end " << k;
      EXPECT_LT((w.n - (planeFirst ? 1.0 : -1.0) * planeNormal).norm(), 1e-6);
      const double height = planeNormal.dot((k == 0 ? core.a : core.b) - toD(planeShape.world.p));
      EXPECT_NEAR(w.separation, height - gc.radius - s0.margin - s1.margin, 5e-5);
      separations[k] = w.separation;
    }
    if (parallel) {
      EXPECT_NEAR(separations[0], separations[1], 5e-5);
      ++parallelCases;
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(parallelCases, 600);
  EXPECT_GT(coverage.penetrating, 200);
  EXPECT_GT(coverage.separated, 200);
}

TEST(RigidNarrowPhase, CapsuleSphereMatchesExactDistance) {
  Rng rng(4321);
  Coverage coverage;
  for (int i = 0; i < 2000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const ShapeGeometry gc = capsule(rng.uniform(0.01f, 0.3f), rng.uniform(0.0f, 1.0f));
    const ShapeGeometry gs = sphere(rng.uniform(0.01f, 0.4f));
    const Transform capsulePose{rng.vec(-1.0f, 1.0f), rng.rotation()};
    Vec3 centre = rng.vec(-1.0f, 1.0f);
    if (i % 50 == 0) centre = capsulePose.p;  // the centre on the core: a fallback normal
    const bool sphereFirst = rng.chance(0.5);
    const Placed sp = place(rng, gs, {centre, rng.rotation()}, sphereFirst ? 0 : 1);
    const Placed cp = place(rng, gc, capsulePose, sphereFirst ? 1 : 0);
    checkCase(sphereFirst ? sp : cp, sphereFirst ? cp : sp, 1e-4, false, coverage);
    EXPECT_EQ(narrowRows(sp, cp, false).rows.size(), 1u);
    if (HasFailure()) return;
  }
  EXPECT_GT(coverage.penetrating, 100);
  EXPECT_GT(coverage.separated, 100);
}

TEST(RigidNarrowPhase, SphereSphereAndSphereBoxMatchExactDistance) {
  Rng rng(99);
  Coverage spheres, boxes;
  for (int i = 0; i < 2000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const ShapeGeometry ga = sphere(rng.uniform(0.01f, 0.4f)),
                        gb = sphere(rng.uniform(0.01f, 0.4f));
    const Transform pa{rng.vec(-1.0f, 1.0f), rng.rotation()};
    const Transform pb{i % 100 == 0 ? pa.p : rng.vec(-1.0f, 1.0f), rng.rotation()};
    checkCase(place(rng, ga, pa, 0), place(rng, gb, pb, 1), 1e-4, false, spheres);
    if (HasFailure()) return;
  }
  for (int i = 0; i < 2000; ++i) {
    SCOPED_TRACE("box case " + std::to_string(i));
    const ShapeGeometry gs = sphere(rng.uniform(0.01f, 0.3f));
    const ShapeGeometry gb = box(rng.vec(0.05f, 0.6f));
    const Transform boxPose{rng.vec(-0.5f, 0.5f), rng.rotation()};
    const Transform spherePose{rng.vec(-1.0f, 1.0f), rng.rotation()};
    const bool sphereFirst = rng.chance(0.5);
    const Placed sp = place(rng, gs, spherePose, sphereFirst ? 0 : 1);
    const Placed bp = place(rng, gb, boxPose, sphereFirst ? 1 : 0);
    checkCase(sphereFirst ? sp : bp, sphereFirst ? bp : sp, 1e-4, false, boxes);
    if (HasFailure()) return;
  }
  EXPECT_GT(spheres.penetrating, 50);
  EXPECT_GT(spheres.separated, 500);
  EXPECT_GT(boxes.penetrating, 100);
  EXPECT_GT(boxes.separated, 500);
}

TEST(RigidNarrowPhase, CapsuleBoxMatchesBruteForceDistance) {
  Rng rng(2024);
  Coverage coverage, faces;
  for (int i = 0; i < 3000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const ShapeGeometry gc = capsule(rng.uniform(0.01f, 0.2f), rng.uniform(0.0f, 0.8f));
    const ShapeGeometry gb = box(rng.vec(0.05f, 0.6f));
    const Transform boxPose{rng.vec(-0.5f, 0.5f), rng.rotation()};
    Transform capsulePose{rng.vec(-1.2f, 1.2f), rng.rotation()};
    const bool onFace = i % 3 == 0;
    if (onFace) {
      // Lying on a face, parallel to it, over the face's middle: a two-point face manifold.
      const int axis = i % 2 == 0 ? 2 : 0;
      const float side = rng.chance(0.5) ? 1.0f : -1.0f;
      Vec3 faceNormal, local;
      faceNormal[axis] = side;
      const float height = gc.radius + rng.uniform(-0.5f, 1.0f) * gc.radius;
      local[axis] = side * (gb.halfExtents[axis] + height);
      const Vec3d inFace = toD(faceNormal).cross(rng.unitD()).normalized();
      capsulePose = {transformPoint(boxPose, local), zTo(rotateD(boxPose.q, inFace))};
    }
    const bool capsuleFirst = rng.chance(0.5);
    const Placed cp = place(rng, gc, capsulePose, capsuleFirst ? 0 : 1);
    const Placed bp = place(rng, gb, boxPose, capsuleFirst ? 1 : 0);
    const Placed& s0 = capsuleFirst ? cp : bp;
    const Placed& s1 = capsuleFirst ? bp : cp;
    // A core that enters the box is pushed out through one face: the face manifold's ends can lie
    // deeper below that face than the segment's signed distance.
    const SegmentD core = coreSegment(gc, cp.world);
    const double coreDistance =
        segmentBoxSignedDistance({rotateInverseD(bp.world.q, core.a - toD(bp.world.p)),
                                  rotateInverseD(bp.world.q, core.b - toD(bp.world.p))},
                                 gb.halfExtents);
    checkCase(s0, s1, 1e-4, coreDistance <= 0.0, onFace ? faces : coverage);
    if (onFace) {
      const NarrowResult r = narrowRows(s0, s1, false);
      EXPECT_EQ(r.rows.size(), 2u)
          << "capsule " << gc.radius << " " << gc.halfHeight << " box " << gb.halfExtents.x << " "
          << gb.halfExtents.y << " " << gb.halfExtents.z << " core " << coreDistance << " exact "
          << exactDistance(s0, s1) << " local "
          << toD(inverseTransformPoint(bp.world, cp.world.p)).transpose() << " axis "
          << rotateInverseD(bp.world.q, rotateD(cp.world.q, Vec3d::UnitZ())).transpose();
      if (r.rows.size() == 2) {
        EXPECT_NEAR(checkRow(r.rows[0], s0, s1).separation, checkRow(r.rows[1], s0, s1).separation,
                    5e-5);
      }
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(coverage.penetrating, 100);
  EXPECT_GT(coverage.separated, 500);
  EXPECT_GT(faces.penetrating, 100);
  EXPECT_GT(faces.separated, 300);
  EXPECT_EQ(faces.twoCandidates, faces.cases);
}

TEST(RigidNarrowPhase, PlaneBoxGivesTheFourLowestCorners) {
  Rng rng(5);
  Coverage coverage;
  for (int i = 0; i < 1000; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const ShapeGeometry gb = box(rng.vec(0.05f, 0.6f));
    const Transform planePose{rng.vec(-1.0f, 1.0f), rng.rotation()};
    const Vec3d n = rotateD(planePose.q, Vec3d::UnitZ());
    const Vec3 centre = toFloat(toD(planePose.p) + rng.uniformD(-0.3, 1.0) * n);
    const Placed s0 = place(rng, plane(), planePose, 0);
    const Placed s1 = place(rng, gb, {centre, rng.rotation()}, 1);
    checkCase(s0, s1, 1e-4, false, coverage);
    const NarrowResult r = narrowRows(s0, s1, false);
    ASSERT_EQ(r.rows.size(), 4u);
    // The four corners with the smallest heights, each once.
    std::vector<double> heights;
    for (int k = 0; k < 8; ++k) {
      const Vec3 h = gb.halfExtents;
      const Vec3d local{(k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z};
      heights.push_back(n.dot(transformD(s1.world, local) - toD(s0.world.p)));
    }
    std::sort(heights.begin(), heights.end());
    std::vector<double> found;
    for (const RigidContact& row : r.rows)
      found.push_back(checkRow(row, s0, s1).separation + s0.margin + s1.margin);
    std::sort(found.begin(), found.end());
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(found[k], heights[k], 5e-5);
    if (HasFailure()) return;
  }
  EXPECT_GT(coverage.penetrating, 100);
  EXPECT_GT(coverage.separated, 100);
}

TEST(RigidNarrowPhase, UnsupportedPairsGiveNoCandidates) {
  const Transform pose{};
  EXPECT_EQ(collideShapes(box({1, 1, 1}), pose, box({1, 1, 1}), pose).count, 0);
  EXPECT_EQ(collideShapes(plane(), pose, plane(), pose).count, 0);
}

// ---- Scenes for the detector --------------------------------------------------------------------

struct Scene {
  std::vector<int> body;  // (numShapes) −1 static
  std::vector<ShapeGeometry> geometry;
  std::vector<Transform> localPose;
  std::vector<float> margin, gap;
  std::vector<float> invMass;       // (numBodies) 0: kinematic
  std::vector<Transform> bodyPose;  // (numBodies)
  std::vector<std::pair<int, int>> filtered;
  int numShapes() const { return int(body.size()); }
  int numBodies() const { return int(invMass.size()); }
};

/// A random pile: `numCapsules` capsules plus spheres and boxes in a 2 × 2 × 0.5 m region on a
/// static ground plane, with a second plane (a wall on a kinematic body) in the middle of the
/// shape list; bodies with one or two shapes, some kinematic, some static shapes. No filter yet.
Scene makeScene(unsigned seed, int numCapsules) {
  Rng rng(seed);
  Scene s;
  auto newBody = [&](bool kinematic, const Transform& pose) {
    s.invMass.push_back(kinematic ? 0.0f : 1.0f / rng.uniform(0.5f, 2.0f));
    s.bodyPose.push_back(pose);
    return s.numBodies() - 1;
  };
  auto addShape = [&](int body, const ShapeGeometry& g, const Transform& local) {
    s.body.push_back(body);
    s.geometry.push_back(g);
    s.localPose.push_back(local);
    s.margin.push_back(rng.chance(0.5) ? 0.0f : rng.uniform(0.0f, 0.005f));
    s.gap.push_back(rng.uniform(0.0f, 0.03f));
  };
  addShape(-1, plane(), Transform{});  // ground z = 0
  const int numSpheres = numCapsules / 20, numBoxes = numCapsules / 30;
  const int total = numCapsules + numSpheres + numBoxes;
  for (int i = 0; i < total; ++i) {
    if (i == total / 2) {  // the wall x = 0.3 (normal +x), owned by a kinematic body
      const int wall = newBody(true, {Vec3{0.02f, 0.0f, 0.0f}, rng.rotation()});
      const Transform world{Vec3{0.3f, 0.0f, 0.0f},
                            quatFromAxisAngle({0, 1, 0}, 0.5f * std::numbers::pi_v<float>)};
      const Transform& b = s.bodyPose[wall];
      addShape(wall, plane(),
               {rotateInverse(b.q, world.p - b.p), normalize(conjugate(b.q) * world.q)});
    }
    const float pick = rng.uniform(0.0f, float(total));
    ShapeGeometry g = pick < float(numSpheres) ? sphere(rng.uniform(0.03f, 0.1f))
                      : pick < float(numSpheres + numBoxes)
                          ? box(rng.vec(0.03f, 0.15f))
                          : capsule(rng.uniform(0.02f, 0.06f), rng.uniform(0.05f, 0.3f));
    const Transform world{
        Vec3{rng.uniform(0.0f, 2.0f), rng.uniform(0.0f, 2.0f), rng.uniform(0.0f, 0.5f)},
        rng.rotation()};
    const int previous = s.body.back();
    if (rng.chance(0.1)) {
      addShape(-1, g, world);  // static
    } else if (previous >= 0 && rng.chance(0.15) && s.geometry.back().type != ShapeType::Plane) {
      // A second shape on the previous shape's body, overlapping it.
      addShape(previous, g, {rng.vec(-0.15f, 0.15f), rng.rotation()});
    } else {
      const int b = newBody(rng.chance(0.1), world);
      addShape(b, g, {rng.vec(-0.05f, 0.05f), rng.rotation()});
    }
  }
  return s;
}

/// The scene's body poses moved by up to `step` and turned a little.
std::vector<Transform> movedPoses(const Scene& s, unsigned seed, float step) {
  Rng rng(seed);
  std::vector<Transform> poses = s.bodyPose;
  for (Transform& t : poses) {
    t.p += rng.vec(-step, step);
    t.q = normalize(quatFromAxisAngle(toFloat(rng.unitD()), rng.uniform(0.0f, 0.5f)) * t.q);
  }
  return poses;
}

std::vector<Transform> worldPoses(const Scene& s, const std::vector<Transform>& bodyPoses) {
  std::vector<Transform> w;
  for (int i = 0; i < s.numShapes(); ++i)
    w.push_back(s.body[i] >= 0 ? shapeWorldPose(bodyPoses[s.body[i]], s.localPose[i])
                               : s.localPose[i]);
  return w;
}

/// Why an all-pairs brute force dropped pairs the narrow phase would have admitted.
struct Excluded {
  int sameBody = 0, immovable = 0, filtered = 0;
};

/// All pairs (a < b) in pair order: the pair rule (different bodies, at least one with inverse
/// mass > 0, not filtered), then every candidate with distance − margins ≤ gaps, written as the
/// detector writes rows. No tree, no boxes.
std::vector<RigidContact> bruteForceRows(const Scene& s, const std::vector<Transform>& bodyPoses,
                                         Excluded* excluded = nullptr) {
  const std::vector<Transform> world = worldPoses(s, bodyPoses);
  const RigidShapesView view{s.numShapes(),      s.body.data(),   s.geometry.data(),
                             s.localPose.data(), s.margin.data(), s.gap.data()};
  std::set<std::pair<int, int>> filtered;
  for (auto [a, b] : s.filtered) filtered.insert({std::min(a, b), std::max(a, b)});
  std::vector<RigidContact> rows;
  for (int a = 0; a < s.numShapes(); ++a) {
    for (int b = a + 1; b < s.numShapes(); ++b) {
      const ContactCandidates found =
          collideShapes(s.geometry[a], world[a], s.geometry[b], world[b]);
      std::vector<RigidContact> pairRows;
      for (int k = 0; k < found.count; ++k) {
        if (found.items[k].distance - (s.margin[a] + s.margin[b]) <= s.gap[a] + s.gap[b])
          pairRows.push_back(makeRigidContact(a, b, found.items[k], view, bodyPoses.data()));
      }
      if (pairRows.empty()) continue;
      const int ba = s.body[a], bb = s.body[b];
      const bool moves = (ba >= 0 && s.invMass[ba] > 0) || (bb >= 0 && s.invMass[bb] > 0);
      if (ba == bb) {
        if (excluded) ++excluded->sameBody;
      } else if (!moves) {
        if (excluded) ++excluded->immovable;
      } else if (filtered.count({a, b})) {
        if (excluded) ++excluded->filtered;
      } else {
        rows.insert(rows.end(), pairRows.begin(), pairRows.end());
      }
    }
  }
  return rows;
}

/// Filters a share of the admitted pairs (given in either order) plus some far-apart ones.
void addFilter(Scene& s, unsigned seed) {
  Rng rng(seed);
  const std::vector<RigidContact> rows = bruteForceRows(s, s.bodyPose);
  std::set<std::pair<int, int>> pairs;
  for (const RigidContact& r : rows) pairs.insert({r.shape0, r.shape1});
  int k = 0;
  for (auto [a, b] : pairs)
    if (k++ % 6 == 0) s.filtered.push_back(rng.chance(0.5) ? std::pair{a, b} : std::pair{b, a});
  for (int i = 0; i < 20; ++i) {
    const int a = int(rng.uniform(0.0f, float(s.numShapes()) - 0.01f));
    const int b = int(rng.uniform(0.0f, float(s.numShapes()) - 0.01f));
    if (a != b) s.filtered.push_back({a, b});
  }
}

/// The largest broad-phase partner count: per non-plane shape a, the non-plane shapes b > a whose
/// grown boxes overlap a's, and every plane, that pass the pair rule.
int maxPartners(const Scene& s, const std::vector<Transform>& bodyPoses) {
  const std::vector<Transform> world = worldPoses(s, bodyPoses);
  const std::vector<std::uint64_t> keys = shapePairFilterKeys(s.filtered);
  const int n = s.numShapes();
  std::vector<Vec3> lo(s.geometry.size()), hi(s.geometry.size());
  for (int a = 0; a < n; ++a)
    if (s.geometry[a].type != ShapeType::Plane)
      shapeBounds(s.geometry[a], world[a], s.margin[a] + s.gap[a], lo[a], hi[a]);
  int best = 0;
  for (int a = 0; a < n; ++a) {
    if (s.geometry[a].type == ShapeType::Plane) continue;
    int count = 0;
    for (int b = 0; b < n; ++b) {
      const bool isPlane = s.geometry[b].type == ShapeType::Plane;
      if (!isPlane && (b <= a || !boxesOverlap(lo[a], hi[a], lo[b], hi[b]))) continue;
      count += shapesMayCollide(a, b, s.body.data(), s.invMass.data(),
                                ShapePairFilterView{int(keys.size()), keys.data()});
    }
    best = std::max(best, count);
  }
  return best;
}

/// The scene on a device.
struct DeviceScene {
  DeviceBuffer<int> body;
  DeviceBuffer<ShapeGeometry> geometry;
  DeviceBuffer<Transform> localPose;
  DeviceBuffer<float> margin, gap, invMass;
  DeviceBuffer<std::uint64_t> filter;
  DeviceBuffer<int> filterStarts;
  DeviceBuffer<Transform> bodyPose;
  int numShapes = 0, numBodies = 0;

  DeviceScene(const Device& d, const Scene& s)
      : body(d, s.body),
        geometry(d, s.geometry),
        localPose(d, s.localPose),
        margin(d, s.margin),
        gap(d, s.gap),
        invMass(d, s.invMass),
        filter(d, shapePairFilterKeys(s.filtered)),
        filterStarts(d, shapePairFilterStarts(shapePairFilterKeys(s.filtered), s.numShapes())),
        bodyPose(d, s.bodyPose),
        numShapes(s.numShapes()),
        numBodies(s.numBodies()) {}

  RigidShapesView shapes() const {
    return {numShapes, body.data(), geometry.data(), localPose.data(), margin.data(), gap.data()};
  }
  RigidBodiesView bodies() const { return {numBodies, invMass.data()}; }
  /// The filter indexed by shape (`starts`), as the solver's model gives it; `indexed` false:
  /// every key searched.
  ShapePairFilterView filterView(bool indexed = true) const {
    return {int(filter.size()), filter.data(), indexed ? filterStarts.data() : nullptr};
  }
};

/// Everything a detection produced, on the host.
struct Detection {
  RigidContactStatus status;
  int rowCount = 0;
  std::vector<RigidContact> rows;  // (rowCount)
  std::vector<int> bodyOffsets;    // (numBodies + 1)
  std::vector<int> bodyRows;       // (bodyOffsets[numBodies])
  std::vector<Transform> world;    // (numShapes)
};

Detection read(const Device& d, RigidContactDetector& detector) {
  Detection r;
  r.status = detector.readStatus();
  detail::downloadBytes(d, &r.rowCount, detector.rowCount(), sizeof(int));
  r.rows.resize(size_t(r.rowCount));
  if (r.rowCount > 0)
    detail::downloadBytes(d, r.rows.data(), detector.rows(), r.rows.size() * sizeof(RigidContact));
  r.bodyOffsets.resize(size_t(detector.numBodies()) + 1);
  detail::downloadBytes(d, r.bodyOffsets.data(), detector.bodyContactOffsets(),
                        r.bodyOffsets.size() * sizeof(int));
  r.bodyRows.resize(size_t(r.bodyOffsets.back()));
  if (!r.bodyRows.empty())
    detail::downloadBytes(d, r.bodyRows.data(), detector.bodyContactRows(),
                          r.bodyRows.size() * sizeof(int));
  r.world.resize(size_t(detector.numShapes()));
  if (!r.world.empty())
    detail::downloadBytes(d, r.world.data(), detector.shapeWorldPoses(),
                          r.world.size() * sizeof(Transform));
  return r;
}

/// One detection (status reset first) at `poses`, read back.
Detection detectAt(
    const Device& d, RigidContactDetector& detector, const std::vector<Transform>& poses,
    RigidContactDetector::TreeUpdate tree = RigidContactDetector::TreeUpdate::Rebuild) {
  const DeviceBuffer<Transform> onDevice(d, poses);
  detector.resetStatus();
  detector.detect(onDevice.data(), tree);
  return read(d, detector);
}

bool sameBytes(const void* a, const void* b, size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}
bool sameRows(const std::vector<RigidContact>& a, const std::vector<RigidContact>& b) {
  return a.size() == b.size() && sameBytes(a.data(), b.data(), a.size() * sizeof(RigidContact));
}
bool sameDetection(const Detection& a, const Detection& b) {
  return a.rowCount == b.rowCount && sameRows(a.rows, b.rows) && a.bodyOffsets == b.bodyOffsets &&
         a.bodyRows == b.bodyRows && a.status.maxContacts == b.status.maxContacts &&
         a.status.maxShapePairs == b.status.maxShapePairs &&
         sameBytes(a.world.data(), b.world.data(), a.world.size() * sizeof(Transform));
}

/// Rows stably sorted by shape pair (the detector groups them by querying shape and tree order).
std::vector<RigidContact> byPair(std::vector<RigidContact> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const RigidContact& x, const RigidContact& y) {
    return std::pair{x.shape0, x.shape1} < std::pair{y.shape0, y.shape1};
  });
  return rows;
}

std::set<std::pair<int, int>> pairsOf(const std::vector<RigidContact>& rows) {
  std::set<std::pair<int, int>> pairs;
  for (const RigidContact& r : rows) pairs.insert({r.shape0, r.shape1});
  return pairs;
}

/// The detection holds exactly the brute force's rows: same pairs, and per pair the same rows bit
/// for bit in the same order; the row order groups rows by querying shape (the non-plane shape of
/// a plane pair, else shape0) ascending; the exact distances agree with the pair set.
void expectMatchesBruteForce(const Scene& s, const std::vector<Transform>& poses,
                             const Detection& got) {
  const std::vector<RigidContact> expected = bruteForceRows(s, poses);
  const auto gotPairs = pairsOf(got.rows), expectedPairs = pairsOf(expected);
  for (const auto& p : expectedPairs)
    EXPECT_TRUE(gotPairs.count(p)) << "missed pair " << p.first << ", " << p.second;
  for (const auto& p : gotPairs)
    EXPECT_TRUE(expectedPairs.count(p)) << "extra pair " << p.first << ", " << p.second;
  EXPECT_EQ(got.rowCount, int(expected.size()));
  EXPECT_TRUE(sameRows(byPair(got.rows), expected));
  EXPECT_EQ(got.status.maxContacts, int(expected.size()));
  EXPECT_EQ(got.status.maxShapePairs, maxPartners(s, poses));

  const std::vector<Transform> world = worldPoses(s, poses);
  EXPECT_TRUE(sameBytes(got.world.data(), world.data(), world.size() * sizeof(Transform)));
  int previousQuery = -1;
  for (const RigidContact& r : got.rows) {
    const int query = s.geometry[r.shape0].type == ShapeType::Plane ? r.shape1 : r.shape0;
    EXPECT_GE(query, previousQuery) << "rows are not grouped by querying shape";
    previousQuery = query;
  }

  // Independent sanity: pairs whose exact separation is clearly within the gaps are present,
  // clearly beyond them absent (up to the parallel-capsule manifold's slack).
  std::set<std::pair<int, int>> filtered;
  for (auto [a, b] : s.filtered) filtered.insert({std::min(a, b), std::max(a, b)});
  int clearlyIn = 0;
  for (int a = 0; a < s.numShapes(); ++a) {
    for (int b = a + 1; b < s.numShapes(); ++b) {
      const int ba = s.body[a], bb = s.body[b];
      const bool moves = (ba >= 0 && s.invMass[ba] > 0) || (bb >= 0 && s.invMass[bb] > 0);
      if (ba == bb || !moves || filtered.count({a, b})) continue;
      Placed pa, pb;
      pa.geometry = s.geometry[a];
      pa.world = world[a];
      pb.geometry = s.geometry[b];
      pb.world = world[b];
      const double d = exactDistance(pa, pb);
      if (std::isnan(d)) continue;
      const double excess = d - s.margin[a] - s.margin[b] - s.gap[a] - s.gap[b];
      if (excess < -1e-3) {
        EXPECT_TRUE(gotPairs.count({a, b})) << a << ", " << b << " excess " << excess;
        ++clearlyIn;
      }
      if (excess > 1e-4) {
        EXPECT_FALSE(gotPairs.count({a, b})) << a << ", " << b;
      }
    }
  }
  EXPECT_GT(clearlyIn, 100);
}

/// Each moving body's list is exactly the rows naming it, ascending; others have empty lists.
void expectBodyLists(const Scene& s, const Detection& got) {
  ASSERT_EQ(got.bodyOffsets.size(), size_t(s.numBodies()) + 1);
  EXPECT_EQ(got.bodyOffsets[0], 0);
  int movingEndpoints = 0;
  for (int b = 0; b < s.numBodies(); ++b) {
    std::vector<int> expected;
    if (s.invMass[b] > 0)
      for (int i = 0; i < got.rowCount; ++i)
        if (got.rows[i].body0 == b || got.rows[i].body1 == b) expected.push_back(i);
    movingEndpoints += int(expected.size());
    ASSERT_LE(got.bodyOffsets[b], got.bodyOffsets[b + 1]);
    const std::vector<int> list(got.bodyRows.begin() + got.bodyOffsets[b],
                                got.bodyRows.begin() + got.bodyOffsets[b + 1]);
    EXPECT_EQ(list, expected) << "body " << b << (s.invMass[b] > 0 ? "" : " (kinematic)");
  }
  EXPECT_EQ(got.bodyOffsets.back(), movingEndpoints);
}

constexpr int kCapsules = 300;
constexpr unsigned kSceneSeed = 17;

Scene filteredScene() {
  Scene s = makeScene(kSceneSeed, kCapsules);
  addFilter(s, kSceneSeed + 1);
  return s;
}

RigidContactDetectorSettings largeSettings() {
  RigidContactDetectorSettings settings;
  settings.pairCapacity = 256;
  settings.rowCapacity = 20000;
  settings.allPairsShapes = 0;  // the tree path (the all-pairs tests below set their own)
  return settings;
}

RigidContactDetectorSettings allPairsSettings() {
  RigidContactDetectorSettings settings = largeSettings();
  settings.allPairsShapes = 1 << 20;
  return settings;
}

// ---- Detector tests -----------------------------------------------------------------------------

TEST(RigidContactDetector, RowsEqualAllPairsBruteForce) {
  const Scene s = filteredScene();
  // The scene exercises every rule: pairs that only the body rule, immovability or the filter
  // drop, and rows with a plane before and after the querying shape.
  Excluded excluded;
  const std::vector<RigidContact> expected = bruteForceRows(s, s.bodyPose, &excluded);
  EXPECT_GT(expected.size(), 300u);
  EXPECT_GT(excluded.sameBody, 5);
  EXPECT_GT(excluded.immovable, 5);
  EXPECT_GT(excluded.filtered, 20);
  int groundRows = 0, wallRows = 0;
  for (const RigidContact& r : expected) {
    groundRows += r.shape0 == 0;
    wallRows += s.geometry[r.shape1].type == ShapeType::Plane;
  }
  EXPECT_GT(groundRows, 20);
  EXPECT_GT(wallRows, 4);

  auto cpu = test::openCpu();
  const DeviceScene d(*cpu, s);
  RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                                d.bodyPose.data());
  for (int frame = 0; frame < 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const std::vector<Transform> poses =
        frame == 0 ? s.bodyPose : movedPoses(s, 100 + frame, 0.1f * frame);
    const Detection got = detectAt(*cpu, detector, poses);
    expectMatchesBruteForce(s, poses, got);
    EXPECT_TRUE(detector.fits(got.status));
  }
}

TEST(RigidContactDetector, ARefitTreeGivesExactlyTheDetectionOfARebuiltOne) {
  using TreeUpdate = RigidContactDetector::TreeUpdate;
  const Scene s = filteredScene();
  auto cpu = test::openCpu();
  const DeviceScene d(*cpu, s);
  RigidContactDetector refit(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                             d.bodyPose.data());
  RigidContactDetector rebuilt(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                               d.bodyPose.data());
  // The refit tree keeps the topology built at the start poses while the shapes move far away
  // from them; rows, their order and the body lists stay those of a fresh build, bit for bit.
  for (int frame = 1; frame <= 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const std::vector<Transform> poses = movedPoses(s, 200 + frame, 0.3f * frame);
    const Detection a = detectAt(*cpu, refit, poses, TreeUpdate::Refit);
    const Detection b = detectAt(*cpu, rebuilt, poses, TreeUpdate::Rebuild);
    EXPECT_GT(a.rowCount, 300);
    expectMatchesBruteForce(s, poses, a);
    EXPECT_TRUE(sameDetection(a, b));
  }
}

/// `poses` with every body moved by at most `step` along each axis and not rotated.
std::vector<Transform> nudgedPoses(std::vector<Transform> poses, unsigned seed, float step) {
  Rng rng(seed);
  for (Transform& t : poses) t.p += rng.vec(-step, step);
  return poses;
}

/// The same rows, stored count, body lists and shape world poses (the partner maxima differ when
/// one side kept grown lists).
bool sameRowsAndLists(const Detection& a, const Detection& b) {
  return a.rowCount == b.rowCount && sameRows(a.rows, b.rows) && a.bodyOffsets == b.bodyOffsets &&
         a.bodyRows == b.bodyRows && a.status.maxContacts == b.status.maxContacts &&
         sameBytes(a.world.data(), b.world.data(), a.world.size() * sizeof(Transform));
}

/// A detector that keeps its partner lists (pairReuseMargin) against one that builds them at every
/// detection, over a sequence of small and large motions on `device`: the same rows and lists
/// every time; lists kept while every shape stays within the margin of its list box, built anew
/// (once) when one leaves it. Returns the kept detector's detections.
std::vector<Detection> checkKeptListsGiveFreshRows(const Device& device,
                                                   RigidContactDetectorSettings settings) {
  using TreeUpdate = RigidContactDetector::TreeUpdate;
  const Scene s = filteredScene();
  const DeviceScene d(device, s);
  RigidContactDetector fresh(device, d.shapes(), d.bodies(), d.filterView(), settings,
                             d.bodyPose.data());
  settings.pairReuseMargin = 0.05f;
  RigidContactDetector kept(device, d.shapes(), d.bodies(), d.filterView(), settings,
                            d.bodyPose.data());
  const std::vector<Transform> far = movedPoses(s, 1500, 0.3f);
  struct Step {
    std::vector<Transform> poses;
    TreeUpdate tree;
    int builds;  // list builds expected of the kept detector
    const char* what;
  };
  const std::vector<Step> steps = {
      {s.bodyPose, TreeUpdate::Refit, 1, "first detection: no lists yet"},
      {nudgedPoses(s.bodyPose, 1501, 0.02f), TreeUpdate::Refit, 0, "within the margin: kept"},
      {nudgedPoses(s.bodyPose, 1502, 0.04f), TreeUpdate::Refit, 0, "still within: kept"},
      {far, TreeUpdate::Refit, 1, "shapes left their boxes: built"},
      {nudgedPoses(far, 1503, 0.03f), TreeUpdate::Refit, 0, "within the new boxes: kept"},
      {nudgedPoses(far, 1504, 0.03f), TreeUpdate::Rebuild, 1, "a rebuild always builds"},
  };
  std::vector<Detection> got;
  for (const Step& step : steps) {
    SCOPED_TRACE(step.what);
    const Detection a = detectAt(device, kept, step.poses, step.tree);
    const Detection b = detectAt(device, fresh, step.poses, TreeUpdate::Rebuild);
    EXPECT_GT(b.rowCount, 300);
    EXPECT_TRUE(sameRowsAndLists(a, b));
    EXPECT_EQ(a.status.pairListBuilds, step.builds);
    EXPECT_EQ(b.status.pairListBuilds, 1);
    if (step.builds > 0)  // lists from grown boxes: at least the partners of exact ones
      EXPECT_GE(a.status.maxShapePairs, b.status.maxShapePairs);
    got.push_back(a);
  }
  return got;
}

TEST(RigidContactDetector, KeptPartnerListsGiveTheRowsOfFreshListsOnCpu) {
  auto cpu = test::openCpu();
  checkKeptListsGiveFreshRows(*cpu, largeSettings());
}

TEST(RigidContactDetector, KeptPartnerListsGiveTheRowsOfFreshListsOnCudaBitForBitWithCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const std::vector<Detection> onGpu = checkKeptListsGiveFreshRows(*gpu, largeSettings());
  const std::vector<Detection> onCpu = checkKeptListsGiveFreshRows(*cpu, largeSettings());
  ASSERT_EQ(onGpu.size(), onCpu.size());
  for (size_t i = 0; i < onGpu.size(); ++i) EXPECT_TRUE(sameDetection(onGpu[i], onCpu[i])) << i;
}

TEST(RigidContactDetector, AllPairsDetectionsBuildTheirListsEveryTime) {
  using TreeUpdate = RigidContactDetector::TreeUpdate;
  auto cpu = test::openCpu();
  const Scene s = filteredScene();
  const DeviceScene d(*cpu, s);
  RigidContactDetectorSettings settings = allPairsSettings();
  settings.pairReuseMargin = 0.05f;
  RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), settings,
                                d.bodyPose.data());
  for (unsigned seed : {1600u, 1601u}) {
    const std::vector<Transform> poses = nudgedPoses(s.bodyPose, seed, 0.01f);
    const Detection got = detectAt(*cpu, detector, poses, TreeUpdate::Refit);
    EXPECT_EQ(got.status.pairListBuilds, 1);
    expectMatchesBruteForce(s, poses, got);
  }
}

TEST(RigidContactDetector, RejectsANegativeOrNonFinitePairReuseMargin) {
  auto cpu = test::openCpu();
  const Scene s = filteredScene();
  const DeviceScene d(*cpu, s);
  for (float margin : {-0.01f, std::numeric_limits<float>::infinity()}) {
    RigidContactDetectorSettings settings = largeSettings();
    settings.pairReuseMargin = margin;
    EXPECT_THROW(RigidContactDetector(*cpu, d.shapes(), d.bodies(), d.filterView(), settings,
                                      d.bodyPose.data()),
                 Error);
  }
}

TEST(RigidContactDetector, BodyListsHoldExactlyTheirRowsAscending) {
  const Scene s = filteredScene();
  auto cpu = test::openCpu();
  const DeviceScene d(*cpu, s);
  RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                                d.bodyPose.data());
  int kinematicWithRows = 0;
  for (int frame = 0; frame < 2; ++frame) {
    const std::vector<Transform> poses = frame == 0 ? s.bodyPose : movedPoses(s, 300, 0.2f);
    const Detection got = detectAt(*cpu, detector, poses);
    expectBodyLists(s, got);
    for (const RigidContact& r : got.rows)
      for (int b : {r.body0, r.body1}) kinematicWithRows += b >= 0 && s.invMass[b] == 0.0f;
  }
  EXPECT_GT(kinematicWithRows, 5);  // kinematic bodies do have rows, but no lists
}

TEST(RigidContactDetector, DetectionIsDeterministic) {
  const Scene s = filteredScene();
  auto cpu = test::openCpu();
  const DeviceScene d(*cpu, s);
  RigidContactDetector first(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                             d.bodyPose.data());
  RigidContactDetector second(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                              d.bodyPose.data());
  const std::vector<Transform> poses = movedPoses(s, 400, 0.2f);
  const Detection a = detectAt(*cpu, first, poses);
  const Detection again = detectAt(*cpu, first, poses);
  const Detection b = detectAt(*cpu, second, poses);
  EXPECT_GT(a.rowCount, 300);
  EXPECT_TRUE(sameDetection(a, again));
  EXPECT_TRUE(sameDetection(a, b));
}

TEST(RigidContactDetector, AllPairsBroadPhaseRowsEqualBruteForceWithoutATree) {
  const Scene s = filteredScene();
  auto cpu = test::openCpu();
  const DeviceScene d(*cpu, s);
  RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), allPairsSettings(),
                                d.bodyPose.data());
  RigidContactDetector withTree(*cpu, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                                d.bodyPose.data());
  // The filter searched whole instead of by shape (ShapePairFilterView::starts null).
  RigidContactDetector wholeFilter(*cpu, d.shapes(), d.bodies(), d.filterView(false),
                                   allPairsSettings(), d.bodyPose.data());
  ASSERT_TRUE(detector.usesAllPairs());
  ASSERT_FALSE(withTree.usesAllPairs());
  for (int frame = 0; frame < 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const std::vector<Transform> poses =
        frame == 0 ? s.bodyPose : movedPoses(s, 800 + frame, 0.2f * frame);
    const Detection got = detectAt(*cpu, detector, poses);
    EXPECT_GT(got.rowCount, 300);
    expectMatchesBruteForce(s, poses, got);
    expectBodyLists(s, got);
    // Partners come out in shape order from every broad phase: the same rows as the tree's.
    EXPECT_TRUE(sameDetection(got, detectAt(*cpu, withTree, poses)));
    EXPECT_TRUE(sameDetection(got, detectAt(*cpu, wholeFilter, poses)));
  }
}

// The filter indexed by each pair's smaller shape answers every query as the search over all
// keys does, and as the set of filtered pairs: random pairs among 300 shapes, some shapes with
// many keys, some with none, and the shapes at both ends.
TEST(ShapePairFilter, IndexedByShapeAnswersAsTheWholeSearch) {
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  std::mt19937 rng(seed);
  constexpr int kShapes = 300;
  std::uniform_int_distribution<int> shape(0, kShapes - 1);
  std::vector<std::pair<int, int>> pairs = {{0, 1}, {kShapes - 2, kShapes - 1}, {0, kShapes - 1}};
  for (int k = 0; k < 40; ++k) pairs.push_back({7, shape(rng)});  // one shape with many keys
  for (int k = 0; k < 500; ++k) pairs.push_back({shape(rng), shape(rng)});
  std::set<std::pair<int, int>> filtered;
  for (auto [a, b] : pairs) filtered.insert({std::min(a, b), std::max(a, b)});
  const std::vector<std::uint64_t> keys = shapePairFilterKeys(pairs);
  const std::vector<int> starts = shapePairFilterStarts(keys, kShapes);
  ASSERT_EQ(starts.size(), size_t(kShapes) + 1);
  EXPECT_EQ(starts.front(), 0);
  EXPECT_EQ(starts.back(), int(keys.size()));
  const ShapePairFilterView indexed{int(keys.size()), keys.data(), starts.data()};
  const ShapePairFilterView whole{int(keys.size()), keys.data()};
  int hits = 0;
  for (int a = 0; a < kShapes; ++a)
    for (int b = 0; b < kShapes; ++b) {
      const bool expected = filtered.count({std::min(a, b), std::max(a, b)}) > 0;
      ASSERT_EQ(indexed.contains(a, b), expected) << a << ", " << b;
      ASSERT_EQ(whole.contains(a, b), expected) << a << ", " << b;
      hits += expected;
    }
  EXPECT_GT(hits, 800);
}

TEST(RigidContactDetector, AllPairsBroadPhaseCudaEqualsCpuBitForBit) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const Scene s = filteredScene();
  const DeviceScene onCpu(*cpu, s), onGpu(*gpu, s);
  RigidContactDetector c(*cpu, onCpu.shapes(), onCpu.bodies(), onCpu.filterView(),
                         allPairsSettings(), onCpu.bodyPose.data());
  RigidContactDetector g(*gpu, onGpu.shapes(), onGpu.bodies(), onGpu.filterView(),
                         allPairsSettings(), onGpu.bodyPose.data());
  for (int frame = 0; frame < 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const std::vector<Transform> poses =
        frame == 0 ? s.bodyPose : movedPoses(s, 900 + frame, 0.2f * frame);
    const Detection a = detectAt(*cpu, c, poses), b = detectAt(*gpu, g, poses);
    EXPECT_TRUE(sameDetection(a, b));
    expectMatchesBruteForce(s, poses, b);
  }
}

/// The group sizes a test runs kernel `id` with: on CUDA every size the table may pick, on the CPU
/// its one lane.
std::vector<int> groupSizesToTry(const Device& device, KernelId id) {
  if (!device.isCuda()) return {1};
  const auto sizes = launchSizes(id);
  return std::vector<int>(sizes.begin(), sizes.end());
}

/// Every shape's stored partners (up to the capacity) and true count, on the host.
struct PartnerLists {
  std::vector<int> counts, items;
  bool operator==(const PartnerLists&) const = default;
};

PartnerLists partnerLists(const Device& d, RigidContactDetector& detector) {
  const ShapePairLists lists = detector.shapePairs();
  PartnerLists r;
  r.counts.resize(size_t(detector.numShapes()));
  detail::downloadBytes(d, r.counts.data(), lists.counts, r.counts.size() * sizeof(int));
  std::vector<int> items(r.counts.size() * size_t(lists.capacity));
  detail::downloadBytes(d, items.data(), lists.items, items.size() * sizeof(int));
  for (size_t a = 0; a < r.counts.size(); ++a)  // only the stored slots are defined
    for (int k = 0; k < std::min(r.counts[a], lists.capacity); ++k)
      r.items.push_back(items[a * size_t(lists.capacity) + size_t(k)]);
  return r;
}

RigidContactDetectorSettings allPairsRunsSettings() {
  RigidContactDetectorSettings settings = allPairsSettings();
  settings.allPairsRunsFromWorlds = 1;  // the one world too
  return settings;
}

/// The run broad phase (a group per 32 of a world's tree slots, their boxes staged in group
/// memory) lists exactly the partners of the per-shape all-pairs broad phase, with the filter
/// indexed by shape (its cursor) and searched whole, on `device` (on CUDA for every group size the
/// table may pick); the 300 capsules are ten runs, the last one short.
void checkAllPairsRunsEqualPerShape(Device& device) {
  const Scene s = filteredScene();
  const DeviceScene d(device, s);
  RigidContactDetectorSettings perShape = allPairsSettings();
  perShape.allPairsRunsFromWorlds = 1 << 30;
  RigidContactDetector reference(device, d.shapes(), d.bodies(), d.filterView(), perShape,
                                 d.bodyPose.data());
  ASSERT_TRUE(reference.usesAllPairs());
  ASSERT_FALSE(reference.usesAllPairsRuns());
  const std::vector<int> sizes =
      groupSizesToTry(device, KernelId::rigid_broad_phase_all_pairs_runs);
  for (int frame = 0; frame < 3; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const std::vector<Transform> poses =
        frame == 0 ? s.bodyPose : movedPoses(s, 1100 + frame, 0.2f * frame);
    const Detection expected = detectAt(device, reference, poses);
    const PartnerLists expectedLists = partnerLists(device, reference);
    EXPECT_GT(expected.rowCount, 300);
    expectMatchesBruteForce(s, poses, expected);
    for (int size : sizes) {
      SCOPED_TRACE("lanes " + std::to_string(size));
      LaunchPolicy policy;
      policy.setOverride(KernelId::rigid_broad_phase_all_pairs_runs, size);
      device.setLaunchPolicy(policy);
      RigidContactDetector runs(device, d.shapes(), d.bodies(), d.filterView(),
                                allPairsRunsSettings(), d.bodyPose.data());
      RigidContactDetector wholeFilter(device, d.shapes(), d.bodies(), d.filterView(false),
                                       allPairsRunsSettings(), d.bodyPose.data());
      ASSERT_TRUE(runs.usesAllPairsRuns());
      EXPECT_TRUE(sameDetection(expected, detectAt(device, runs, poses)));
      EXPECT_TRUE(partnerLists(device, runs) == expectedLists);
      EXPECT_TRUE(sameDetection(expected, detectAt(device, wholeFilter, poses)));
      EXPECT_TRUE(partnerLists(device, wholeFilter) == expectedLists);
    }
    device.setLaunchPolicy(LaunchPolicy{});
  }
}

TEST(RigidContactDetector, AllPairsRunsListThePartnersOfAllPairsPerShapeOnCpu) {
  auto cpu = test::openCpu();
  checkAllPairsRunsEqualPerShape(*cpu);
}

TEST(RigidContactDetector, AllPairsRunsListThePartnersOfAllPairsPerShapeOnCudaForEveryGroupSize) {
  WEFT_REQUIRE_CUDA(gpu);
  checkAllPairsRunsEqualPerShape(*gpu);
}

/// The cooperative broad phase (a group of lanes per shape) against the one-thread walk: the same
/// partner lists, hence the same rows, on `device` (on CUDA for every group size the table may
/// pick).
void checkCooperativeBroadPhaseEqualsOneThread(Device& device) {
  const Scene s = filteredScene();
  const DeviceScene d(device, s);
  RigidContactDetectorSettings one = largeSettings(), cooperative = largeSettings();
  one.cooperativeBroadPhase = false;
  cooperative.cooperativeBroadPhase = true;
  RigidContactDetector a(device, d.shapes(), d.bodies(), d.filterView(), one, d.bodyPose.data());
  const std::vector<Transform> poses = movedPoses(s, 700, 0.2f);
  const Detection reference = detectAt(device, a, poses);
  EXPECT_GT(reference.rowCount, 300);
  const std::vector<int> sizes = groupSizesToTry(device, KernelId::rigid_broad_phase_cooperative);
  for (int size : sizes) {
    SCOPED_TRACE("lanes " + std::to_string(size));
    LaunchPolicy policy;
    policy.setOverride(KernelId::rigid_broad_phase_cooperative, size);
    device.setLaunchPolicy(policy);
    RigidContactDetector b(device, d.shapes(), d.bodies(), d.filterView(), cooperative,
                           d.bodyPose.data());
    EXPECT_TRUE(sameDetection(reference, detectAt(device, b, poses)));
  }
  device.setLaunchPolicy(LaunchPolicy{});
}

TEST(RigidContactDetector, CooperativeBroadPhaseEqualsOneThreadOnCpu) {
  auto cpu = test::openCpu();
  checkCooperativeBroadPhaseEqualsOneThread(*cpu);
}

TEST(RigidContactDetector, CooperativeBroadPhaseEqualsOneThreadOnCudaForEveryGroupSize) {
  WEFT_REQUIRE_CUDA(gpu);
  checkCooperativeBroadPhaseEqualsOneThread(*gpu);
}

/// Tiny capacities: the status reports the true counts of what was evaluated, nothing stored is
/// wrong, and growing until everything fits reproduces the large-capacity detection bit for bit.
void checkOverflowAndGrowth(const Device& device, int allPairsShapes, int runsFromWorlds) {
  const auto largeSettings = [&] {
    RigidContactDetectorSettings settings = ::weft::largeSettings();
    settings.allPairsShapes = allPairsShapes;
    settings.allPairsRunsFromWorlds = runsFromWorlds;
    return settings;
  };
  const Scene s = filteredScene();
  const DeviceScene d(device, s);
  const std::vector<Transform> poses = movedPoses(s, 500, 0.1f);
  RigidContactDetector large(device, d.shapes(), d.bodies(), d.filterView(), largeSettings(),
                             d.bodyPose.data());
  const Detection reference = detectAt(device, large, poses);
  const int totalRows = int(bruteForceRows(s, poses).size());
  const int partners = maxPartners(s, poses);
  ASSERT_EQ(reference.rowCount, totalRows);
  ASSERT_GT(partners, 1);

  RigidContactDetectorSettings tiny;
  tiny.allPairsShapes = allPairsShapes;
  tiny.allPairsRunsFromWorlds = runsFromWorlds;
  tiny.pairCapacity = 1;
  tiny.rowCapacity = 1;
  {
    SCOPED_TRACE("rows overflow alone");
    RigidContactDetectorSettings rowsOnly = largeSettings();
    rowsOnly.rowCapacity = 1;
    RigidContactDetector detector(device, d.shapes(), d.bodies(), d.filterView(), rowsOnly,
                                  d.bodyPose.data());
    const Detection small = detectAt(device, detector, poses);
    EXPECT_EQ(small.status.maxContacts, totalRows);
    EXPECT_EQ(small.status.maxShapePairs, partners);
    EXPECT_FALSE(detector.fits(small.status));
    ASSERT_EQ(small.rowCount, 1);
    EXPECT_TRUE(sameBytes(&small.rows[0], &reference.rows[0], sizeof(RigidContact)));
    expectBodyLists(s, small);
    EXPECT_NE(detector.growToFit(small.status), "");
    EXPECT_GE(detector.rowCapacity(), totalRows);
    const Detection grown = detectAt(device, detector, poses);
    EXPECT_TRUE(detector.fits(grown.status));
    EXPECT_EQ(detector.growToFit(grown.status), "");
    EXPECT_TRUE(sameDetection(grown, reference));
  }
  {
    SCOPED_TRACE("pairs overflow alone");
    RigidContactDetectorSettings pairsOnly = largeSettings();
    pairsOnly.pairCapacity = 1;
    RigidContactDetector detector(device, d.shapes(), d.bodies(), d.filterView(), pairsOnly,
                                  d.bodyPose.data());
    const Detection small = detectAt(device, detector, poses);
    EXPECT_EQ(small.status.maxShapePairs, partners);
    EXPECT_FALSE(detector.fits(small.status));
    // Only the stored pairs reach the narrow phase: fewer rows, each a true one.
    EXPECT_LT(small.rowCount, totalRows);
    EXPECT_EQ(small.status.maxContacts, small.rowCount);
    std::vector<RigidContact> expected = byPair(reference.rows);
    for (const RigidContact& r : small.rows) {
      const bool found = std::any_of(expected.begin(), expected.end(), [&](const RigidContact& e) {
        return sameBytes(&e, &r, sizeof(RigidContact));
      });
      EXPECT_TRUE(found) << "row " << r.shape0 << ", " << r.shape1 << " is not a true row";
    }
    EXPECT_NE(detector.growToFit(small.status), "");
    EXPECT_GE(detector.pairCapacity(), partners);
    EXPECT_TRUE(sameDetection(detectAt(device, detector, poses), reference));
  }
  {
    SCOPED_TRACE("both overflow");
    RigidContactDetector detector(device, d.shapes(), d.bodies(), d.filterView(), tiny,
                                  d.bodyPose.data());
    Detection got = detectAt(device, detector, poses);
    EXPECT_EQ(got.status.maxShapePairs, partners);
    EXPECT_GT(got.status.maxContacts, 1);
    EXPECT_EQ(got.rowCount, 1);
    // The pairs grow first; the rows of the pairs now evaluated may then overflow once more.
    int grows = 0;
    while (!detector.fits(got.status) && grows < 3) {
      EXPECT_NE(detector.growToFit(got.status), "");
      ++grows;
      got = detectAt(device, detector, poses);
    }
    EXPECT_LE(grows, 2);
    EXPECT_TRUE(detector.fits(got.status));
    EXPECT_EQ(got.status.maxContacts, totalRows);
    EXPECT_TRUE(sameDetection(got, reference));
  }
}

/// checkOverflowAndGrowth with the tree, all pairs per shape and all pairs by runs.
void checkOverflowAndGrowthEveryBroadPhase(const Device& device) {
  {
    SCOPED_TRACE("tree");
    checkOverflowAndGrowth(device, 0, 1 << 30);
  }
  {
    SCOPED_TRACE("all pairs");
    checkOverflowAndGrowth(device, 1 << 20, 1 << 30);
  }
  {
    SCOPED_TRACE("all pairs by runs");
    checkOverflowAndGrowth(device, 1 << 20, 1);
  }
}

TEST(RigidContactDetector, OverflowIsReportedAndGrowToFitRecoversEverythingOnCpu) {
  checkOverflowAndGrowthEveryBroadPhase(*test::openCpu());
}

TEST(RigidContactDetector, OverflowIsReportedAndGrowToFitRecoversEverythingOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkOverflowAndGrowthEveryBroadPhase(*gpu);
}

TEST(RigidContactDetector, CudaEqualsCpuBitForBit) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const Scene s = filteredScene();
  const DeviceScene onCpu(*cpu, s), onGpu(*gpu, s);
  using TreeUpdate = RigidContactDetector::TreeUpdate;
  for (TreeUpdate tree : {TreeUpdate::Rebuild, TreeUpdate::Refit}) {
    SCOPED_TRACE(tree == TreeUpdate::Refit ? "refit" : "rebuild");
    const RigidContactDetectorSettings settings = largeSettings();
    RigidContactDetector c(*cpu, onCpu.shapes(), onCpu.bodies(), onCpu.filterView(), settings,
                           onCpu.bodyPose.data());
    RigidContactDetector g(*gpu, onGpu.shapes(), onGpu.bodies(), onGpu.filterView(), settings,
                           onGpu.bodyPose.data());
    for (int frame = 0; frame < 3; ++frame) {
      SCOPED_TRACE("frame " + std::to_string(frame));
      const std::vector<Transform> poses =
          frame == 0 ? s.bodyPose : movedPoses(s, 600 + frame, 0.2f * frame);
      const Detection a = detectAt(*cpu, c, poses, tree), b = detectAt(*gpu, g, poses, tree);
      EXPECT_GT(a.rowCount, 300);
      EXPECT_TRUE(sameDetection(a, b));
      expectMatchesBruteForce(s, poses, b);
      expectBodyLists(s, b);
    }
  }
}

TEST(RigidContactDetector, ScenesWithoutTreeShapesOrBodies) {
  auto cpu = test::openCpu();
  const RigidContactDetectorSettings settings;
  {  // nothing at all
    Scene s;
    const DeviceScene d(*cpu, s);
    RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), settings,
                                  d.bodyPose.data());
    const Detection got = detectAt(*cpu, detector, {});
    EXPECT_EQ(got.rowCount, 0);
    EXPECT_EQ(got.bodyOffsets, std::vector<int>{0});
  }
  {  // planes only (static and on a moving body): planes never pair with planes
    Scene s;
    s.body = {-1, 0};
    s.geometry = {plane(), plane()};
    s.localPose = {Transform{}, {Vec3{}, quatFromAxisAngle({1, 0, 0}, 0.3f)}};
    s.margin = {0.0f, 0.0f};
    s.gap = {0.1f, 0.1f};
    s.invMass = {1.0f};
    s.bodyPose = {Transform{}};
    const DeviceScene d(*cpu, s);
    RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), settings,
                                  d.bodyPose.data());
    const Detection got = detectAt(*cpu, detector, s.bodyPose);
    EXPECT_EQ(got.rowCount, 0);
    EXPECT_EQ(got.status.maxShapePairs, 0);
  }
  {  // one capsule resting on the ground: one tree leaf, two rows
    Scene s;
    s.body = {-1, 0};
    s.geometry = {plane(), capsule(0.05f, 0.2f)};
    s.localPose = {Transform{}, Transform{}};
    s.margin = {0.0f, 0.001f};
    s.gap = {0.01f, 0.0f};
    s.invMass = {1.0f};
    s.bodyPose = {{Vec3{0.0f, 0.0f, 0.055f}, quatFromAxisAngle({1, 0, 0}, 1.5707964f)}};
    const DeviceScene d(*cpu, s);
    RigidContactDetector detector(*cpu, d.shapes(), d.bodies(), d.filterView(), settings,
                                  d.bodyPose.data());
    const Detection got = detectAt(*cpu, detector, s.bodyPose);
    ASSERT_EQ(got.rowCount, 2);
    for (const RigidContact& r : got.rows) {
      EXPECT_EQ(r.shape0, 0);
      EXPECT_EQ(r.shape1, 1);
      EXPECT_EQ(r.normal, (Vec3{0, 0, 1}));
      const ContactPoints p = contactPoints(r, Transform{}, s.bodyPose[0]);
      EXPECT_NEAR(-rigidContactPenetration(r, p), 0.055 - 0.05 - 0.001, 1e-6);
    }
    EXPECT_EQ(got.bodyOffsets, (std::vector<int>{0, 2}));
    EXPECT_EQ(got.bodyRows, (std::vector<int>{0, 1}));
  }
}

TEST(RigidContactDetector, RejectsBadCounts) {
  auto cpu = test::openCpu();
  const RigidContactDetectorSettings settings;
  RigidShapesView shapes;
  RigidBodiesView bodies;
  const ShapePairFilterView filter;
  shapes.numShapes = -1;
  EXPECT_THROW((void)RigidContactDetector(*cpu, shapes, bodies, filter, settings, nullptr), Error);
  shapes.numShapes = 1 << 30;
  EXPECT_THROW((void)RigidContactDetector(*cpu, shapes, bodies, filter, settings, nullptr), Error);
  shapes.numShapes = 0;
  bodies.numBodies = -1;
  EXPECT_THROW((void)RigidContactDetector(*cpu, shapes, bodies, filter, settings, nullptr), Error);
  bodies.numBodies = 1 << 30;
  EXPECT_THROW((void)RigidContactDetector(*cpu, shapes, bodies, filter, settings, nullptr), Error);
  bodies.numBodies = 0;
  EXPECT_NO_THROW((void)RigidContactDetector(*cpu, shapes, bodies, filter, settings, nullptr));
}

}  // namespace
}  // namespace weft
