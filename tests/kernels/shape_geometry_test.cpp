// Closest-surface-point queries (kernels/shape_geometry.h) for planes, boxes, spheres and
// capsules: the reported distance is the true (signed) distance, checked against a brute-force
// minimum over densely sampled surface points and an independent inside test; the surface point
// lies on the surface; the query point is surfacePoint + distance·normal with a unit normal that
// is the distance gradient; degenerate queries give valid normals.
#include "kernels/shape_geometry.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "math_test_support.h"

namespace weft {
namespace {

using namespace test;  // math_test_support.h

// ---- Brute-force references --------------------------------------------------------------------

/// Dense surface samples of a shape, and the largest distance from any surface point to its
/// nearest sample (so that the brute-force minimum overestimates the true distance by less).
struct SurfaceSamples {
  std::vector<Vec3d> points;
  double spacing = 0.0;
};

/// n×n grid on the rectangle centre ± (u·a, v·b) (corners included).
void addGrid(SurfaceSamples& s, const Vec3d& centre, const Vec3d& u, const Vec3d& v, int n) {
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j)
      s.points.push_back(centre + (2.0 * i / n - 1.0) * u + (2.0 * j / n - 1.0) * v);
  s.spacing = std::max(s.spacing, std::sqrt((u / n).squaredNorm() + (v / n).squaredNorm()));
}

/// Fibonacci points on the sphere of `radius` about `centre` with z·zSign >= 0 (0: all).
void addSphere(SurfaceSamples& s, const Vec3d& centre, double radius, int n, double zSign) {
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < n; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / n, r = std::sqrt(1.0 - z * z);
    const Vec3d d(r * std::cos(golden * i), r * std::sin(golden * i), z);
    if (zSign * z >= 0.0) s.points.push_back(centre + radius * d);
  }
  // Each sample covers an area 4πr²/n; its covering radius is about 1.2 × sqrt(area/π).
  s.spacing = std::max(s.spacing, 1.2 * radius * std::sqrt(4.0 / n));
}

SurfaceSamples sampleSurface(const ShapeGeometry& g, double planeHalfSize) {
  SurfaceSamples s;
  const int n = 120;
  switch (g.type) {
    case ShapeType::Plane:
      addGrid(s, Vec3d::Zero(), Vec3d(planeHalfSize, 0, 0), Vec3d(0, planeHalfSize, 0), 4 * n);
      break;
    case ShapeType::Box: {
      const Vec3d h = toEigen(g.halfExtents);
      for (int axis = 0; axis < 3; ++axis) {
        const int a = (axis + 1) % 3, b = (axis + 2) % 3;
        Vec3d u = Vec3d::Zero(), v = Vec3d::Zero(), c = Vec3d::Zero();
        u[a] = h[a];
        v[b] = h[b];
        for (double side : {-1.0, 1.0}) {
          c[axis] = side * h[axis];
          addGrid(s, c, u, v, n);
        }
      }
      break;
    }
    case ShapeType::Sphere:
      addSphere(s, Vec3d::Zero(), g.radius, 40000, 0.0);
      break;
    case ShapeType::Capsule: {
      const double r = g.radius, hh = g.halfHeight;
      const int rings = 200, around = 400;
      for (int i = 0; i <= rings; ++i)
        for (int j = 0; j < around; ++j) {
          const double phi = 2.0 * std::numbers::pi * j / around;
          s.points.emplace_back(r * std::cos(phi), r * std::sin(phi), -hh + 2.0 * hh * i / rings);
        }
      s.spacing = std::hypot(hh / rings, std::numbers::pi * r / around);
      addSphere(s, Vec3d(0, 0, hh), r, 40000, 1.0);
      addSphere(s, Vec3d(0, 0, -hh), r, 40000, -1.0);
      break;
    }
  }
  return s;
}

/// Inside test written independently of the query (strictly inside the solid).
bool isInside(const ShapeGeometry& g, const Vec3d& p) {
  switch (g.type) {
    case ShapeType::Plane:
      return p.z() < 0.0;
    case ShapeType::Box:
      return (p.cwiseAbs() - toEigen(g.halfExtents)).maxCoeff() < 0.0;
    case ShapeType::Sphere:
      return p.norm() < g.radius;
    case ShapeType::Capsule: {
      // Minimum distance to densely sampled axis points.
      double best = 1e30;
      for (int i = 0; i <= 2000; ++i) {
        const double z = -g.halfHeight + 2.0 * g.halfHeight * i / 2000;
        best = std::min(best, (p - Vec3d(0, 0, z)).norm());
      }
      return best < g.radius;
    }
  }
  return false;
}

double bruteForceDistance(const SurfaceSamples& s, const Vec3d& p) {
  double best = 1e30;
  for (const Vec3d& q : s.points) best = std::min(best, (p - q).squaredNorm());
  return std::sqrt(best);
}

// ---- Random shapes and query points -------------------------------------------------------------

ShapeGeometry randomShape(Random& rng, ShapeType type) {
  ShapeGeometry g;
  g.type = type;
  g.halfExtents = {float(rng.uniform(0.05, 1.0)), float(rng.uniform(0.05, 1.0)),
                   float(rng.uniform(0.05, 1.0))};
  g.radius = float(rng.uniform(0.05, 1.0));
  g.halfHeight = float(rng.uniform(0.0, 1.0));
  return g;
}

/// Half size of a box that contains the shape.
Vec3d shapeBounds(const ShapeGeometry& g) {
  switch (g.type) {
    case ShapeType::Box:
      return toEigen(g.halfExtents);
    case ShapeType::Sphere:
      return Vec3d::Constant(g.radius);
    case ShapeType::Capsule:
      return Vec3d(g.radius, g.radius, g.radius + g.halfHeight);
    case ShapeType::Plane:
    default:
      return Vec3d(1, 1, 1);
  }
}

/// Points inside (deep and shallow) and outside, up to one shape size away.
std::vector<Vec3d> queryPoints(Random& rng, const ShapeGeometry& g, int count) {
  const Vec3d b = shapeBounds(g);
  std::vector<Vec3d> points;
  for (int i = 0; i < count; ++i) {
    const double grow = i % 2 ? 1.0 : 2.0;  // half of them in the shape's bounding box
    Vec3d p = rng.vec(-grow * b, grow * b);
    if (g.type == ShapeType::Plane) p.z() = rng.uniform(-1, 1);
    points.push_back(roundToFloat(p));
  }
  return points;
}

ShapeQuery query(const ShapeGeometry& g, const Vec3d& p) {
  return queryShape(g, toFloat(p));
}

double sizeOf(const ShapeGeometry& g) {
  return shapeBounds(g).norm();
}

void expectDistanceMatchesBruteForce(ShapeType type) {
  Random rng;
  TRACE_SEED(rng);
  for (int shape = 0; shape < 4; ++shape) {
    const ShapeGeometry g = randomShape(rng, type);
    // Plane: query points stay within half the sampled patch, so their feet are sampled.
    const SurfaceSamples samples = sampleSurface(g, 2.0);
    for (const Vec3d& p : queryPoints(rng, g, 100)) {
      const ShapeQuery q = query(g, p);
      const double brute = bruteForceDistance(samples, p);
      const double tolerance = 1e-5 * sizeOf(g);
      SCOPED_TRACE(::testing::Message() << "shape " << shape << " point " << p.transpose()
                                        << " distance " << q.distance << " brute " << brute);
      // The query finds the true minimum: never farther than the best sample, and no closer
      // than the best sample minus the sampling resolution.
      EXPECT_LE(std::abs(q.distance), brute + tolerance);
      EXPECT_GE(std::abs(q.distance), brute - samples.spacing - tolerance);
      // Sign from an independent inside test (points within rounding of the surface excepted).
      if (brute > 10.0 * tolerance + samples.spacing) {
        EXPECT_EQ(q.distance < 0.0f, isInside(g, p));
      }
    }
  }
}

TEST(ShapeGeometry, PlaneDistanceMatchesBruteForce) {
  expectDistanceMatchesBruteForce(ShapeType::Plane);
}
TEST(ShapeGeometry, BoxDistanceMatchesBruteForce) {
  expectDistanceMatchesBruteForce(ShapeType::Box);
}
TEST(ShapeGeometry, SphereDistanceMatchesBruteForce) {
  expectDistanceMatchesBruteForce(ShapeType::Sphere);
}
TEST(ShapeGeometry, CapsuleDistanceMatchesBruteForce) {
  expectDistanceMatchesBruteForce(ShapeType::Capsule);
}

constexpr ShapeType kAllTypes[] = {ShapeType::Plane, ShapeType::Box, ShapeType::Sphere,
                                   ShapeType::Capsule};

TEST(ShapeGeometry, SurfacePointLiesOnSurface) {
  Random rng;
  TRACE_SEED(rng);
  for (ShapeType type : kAllTypes) {
    for (int shape = 0; shape < 10; ++shape) {
      const ShapeGeometry g = randomShape(rng, type);
      for (const Vec3d& p : queryPoints(rng, g, 100)) {
        const ShapeQuery q = query(g, p);
        SCOPED_TRACE(::testing::Message() << "type " << int(type) << " point " << p.transpose());
        EXPECT_NEAR(queryShape(g, q.surfacePoint).distance, 0.0f, 1e-6 * sizeOf(g));
        // The surface point is its own closest point.
        EXPECT_LE(
            (toEigen(queryShape(g, q.surfacePoint).surfacePoint) - toEigen(q.surfacePoint)).norm(),
            1e-6 * sizeOf(g));
      }
    }
  }
}

TEST(ShapeGeometry, QueryPointIsSurfacePointPlusDistanceAlongUnitNormal) {
  Random rng;
  TRACE_SEED(rng);
  for (ShapeType type : kAllTypes) {
    for (int shape = 0; shape < 10; ++shape) {
      const ShapeGeometry g = randomShape(rng, type);
      for (const Vec3d& p : queryPoints(rng, g, 100)) {
        const ShapeQuery q = query(g, p);
        SCOPED_TRACE(::testing::Message() << "type " << int(type) << " point " << p.transpose());
        EXPECT_NEAR(toEigen(q.normal).norm(), 1.0, 1e-6);
        const Vec3d rebuilt = toEigen(q.surfacePoint) + double(q.distance) * toEigen(q.normal);
        EXPECT_LE((rebuilt - p).norm(), 1e-6 * sizeOf(g));
        // Outside, the normal points from the surface towards the query point.
        if (q.distance > 0.0f) {
          EXPECT_GT((p - toEigen(q.surfacePoint)).dot(toEigen(q.normal)), 0.0);
        }
      }
    }
  }
}

TEST(ShapeGeometry, NormalIsDistanceGradientOutside) {
  Random rng;
  TRACE_SEED(rng);
  for (ShapeType type : kAllTypes) {
    int checked = 0;
    for (int shape = 0; shape < 10; ++shape) {
      const ShapeGeometry g = randomShape(rng, type);
      const double h = 1e-3 * sizeOf(g);
      for (const Vec3d& p : queryPoints(rng, g, 50)) {
        const ShapeQuery q = query(g, p);
        if (q.distance < 30.0 * h) continue;  // outside: the distance field is smooth there
        Vec3d gradient;
        for (int i = 0; i < 3; ++i) {
          Vec3d plus = p, minus = p;
          plus[i] += h;
          minus[i] -= h;
          gradient[i] =
              (double(query(g, plus).distance) - double(query(g, minus).distance)) / (2 * h);
        }
        EXPECT_LE((gradient - toEigen(q.normal)).norm(), 1e-2)
            << "type " << int(type) << " point " << p.transpose();
        ++checked;
      }
    }
    EXPECT_GT(checked, 50) << "type " << int(type);
  }
}

TEST(ShapeGeometry, BoxInsidePointLeavesThroughNearestFace) {
  const ShapeGeometry g{ShapeType::Box, Vec3{1.0f, 2.0f, 3.0f}, 0.0f, 0.0f};
  // Depths 0.75 (x), 0.5 (y: nearest, on the +y side), 2.75 (z).
  const ShapeQuery q = queryShape(g, Vec3{0.25f, 1.5f, -0.25f});
  EXPECT_FLOAT_EQ(q.distance, -0.5f);
  EXPECT_EQ(toEigen(q.normal), Vec3d(0, 1, 0));
  EXPECT_EQ(toEigen(q.surfacePoint), Vec3d(0.25, 2.0, -0.25));
  // Nearest face on the negative side.
  const ShapeQuery r = queryShape(g, Vec3{-0.875f, 0.5f, 1.0f});
  EXPECT_FLOAT_EQ(r.distance, -0.125f);
  EXPECT_EQ(toEigen(r.normal), Vec3d(-1, 0, 0));
  EXPECT_EQ(toEigen(r.surfacePoint), Vec3d(-1.0, 0.5, 1.0));
  // Outside a corner: the corner is the closest point.
  const ShapeQuery c = queryShape(g, Vec3{2.0f, 4.0f, 5.0f});
  EXPECT_FLOAT_EQ(c.distance, 3.0f);
  EXPECT_EQ(toEigen(c.surfacePoint), Vec3d(1, 2, 3));
}

TEST(ShapeGeometry, DegenerateQueriesGiveValidUnitNormals) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const ShapeGeometry sphere = randomShape(rng, ShapeType::Sphere);
    const ShapeGeometry capsule = randomShape(rng, ShapeType::Capsule);
    const ShapeGeometry box = randomShape(rng, ShapeType::Box);
    const float r = sphere.radius;
    struct Case {
      const ShapeGeometry* g;
      Vec3 p;
      float expectedDistance;
    };
    const float axisZ = float(rng.uniform(-1, 1)) * capsule.halfHeight;
    const float minHalf = std::min({box.halfExtents.x, box.halfExtents.y, box.halfExtents.z});
    const Case cases[] = {
        {&sphere, Vec3{}, -r},                                         // sphere centre
        {&capsule, Vec3{0, 0, axisZ}, -capsule.radius},                // on the axis
        {&capsule, Vec3{0, 0, capsule.halfHeight}, -capsule.radius},   // axis end
        {&capsule, Vec3{0, 0, -capsule.halfHeight}, -capsule.radius},  // other end
        {&box, Vec3{}, -minHalf},                                      // box centre
        {&box, box.halfExtents, 0.0f},                                 // box corner
    };
    for (const Case& c : cases) {
      const ShapeQuery q = queryShape(*c.g, c.p);
      SCOPED_TRACE(::testing::Message() << "type " << int(c.g->type));
      ASSERT_TRUE(isFinite(q.normal));
      ASSERT_TRUE(isFinite(q.surfacePoint));
      EXPECT_NEAR(length(q.normal), 1.0f, 1e-6f);
      EXPECT_NEAR(q.distance, c.expectedDistance, 1e-6f);
      EXPECT_NEAR(queryShape(*c.g, q.surfacePoint).distance, 0.0f, 1e-6f);
      EXPECT_LE(length(q.surfacePoint + q.distance * q.normal - c.p), 1e-6f);
    }
  }
  // A zero-height capsule is a sphere.
  const ShapeGeometry ball{ShapeType::Capsule, Vec3{}, 0.5f, 0.0f};
  const ShapeQuery q = queryShape(ball, Vec3{0.0f, 0.0f, 0.0f});
  EXPECT_FLOAT_EQ(q.distance, -0.5f);
  EXPECT_NEAR(length(q.normal), 1.0f, 1e-6f);
}

TEST(ShapeGeometry, PlaneIsTheZEqualsZeroHalfSpace) {
  Random rng;
  TRACE_SEED(rng);
  const ShapeGeometry plane;
  for (int i = 0; i < 100; ++i) {
    const Vec3 p{float(rng.uniform(-100, 100)), float(rng.uniform(-100, 100)),
                 float(rng.uniform(-1, 1))};
    const ShapeQuery q = queryShape(plane, p);
    EXPECT_EQ(q.distance, p.z);
    EXPECT_EQ(toEigen(q.surfacePoint), Vec3d(p.x, p.y, 0.0));
    EXPECT_EQ(toEigen(q.normal), Vec3d(0, 0, 1));
  }
}

}  // namespace
}  // namespace weft
