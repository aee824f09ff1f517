// CableBuilder (solver/cable_builder.h): solid-capsule mass properties against a 3D quadrature
// over the solid; shortest-arc and parallel-transport frames (they map ẑ onto each segment, and
// consecutive frames differ by a rotation with no twist about the tangent); addRod counts, body
// and shape layout, anchors meeting at the shared node, the reference's material defaulting,
// collision filters and a valid coloring; closed rods; addRodGraph's BFS forest and junction
// filter on the reference's Y; every construction and validation error naming its item; and the
// measurements the scene checks use (jointedBodyGroups, largestJointGap, deepestCapsuleOverlap)
// against brute force on fresh random inputs.
#include "solver/cable_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kinematics.h"
#include "kernels/runtime/errors.h"
#include "math_test_support.h"
#include "solver/coloring.h"

namespace weft {
namespace {

using test::Mat3d;
using test::Random;
using test::toEigen;
using test::Vec3d;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the weft::Error that f throws, or a marker when it throws none.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no weft::Error thrown)";
}

Vec3d rotated(const Quat& q, const Vec3d& v) {
  const Eigen::Quaterniond e(q.w, q.x, q.y, q.z);
  return e.normalized() * v;
}

Vec3 toFloat(const Vec3d& v) {
  return {float(v.x()), float(v.y()), float(v.z())};
}

// ---- Gauss–Legendre quadrature (for the capsule integrals)
// ---------------------------------------

/// n-point Gauss–Legendre nodes and weights on [a, b] (Newton iteration on the roots of P_n).
std::vector<std::pair<double, double>> gaussLegendre(int n, double a, double b) {
  std::vector<std::pair<double, double>> rule;
  for (int i = 0; i < n; ++i) {
    double x = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5));
    double derivative = 0.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p0 = 1.0, p1 = x;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      derivative = n * (x * p1 - p0) / (x * x - 1.0);
      const double step = p1 / derivative;
      x -= step;
      if (std::fabs(step) < 1e-16) break;
    }
    const double weight = 2.0 / ((1.0 - x * x) * derivative * derivative);
    rule.push_back({0.5 * (a + b) + 0.5 * (b - a) * x, 0.5 * (b - a) * weight});
  }
  return rule;
}

struct MassIntegrals {
  double mass = 0.0;
  Mat3d inertia = Mat3d::Zero();  // about the centre
};

/// Mass and inertia tensor of the solid capsule {x : dist(x, segment z ∈ [−h, h]) <= r}, density
/// ρ, by quadrature in cylindrical coordinates: z over the two caps and the cylinder, the slice
/// radius s ∈ [0, ρ(z)] and the angle θ. The integrands are polynomials in s, z and trigonometric
/// of low degree in θ, so these rules are exact up to rounding.
MassIntegrals integrateCapsule(double r, double h, double density) {
  MassIntegrals out;
  const auto sliceRadius = [&](double z) {
    const double beyond = std::max(0.0, std::fabs(z) - h);
    return std::sqrt(std::max(0.0, r * r - beyond * beyond));
  };
  constexpr int kAngles = 16;
  std::vector<std::pair<double, double>> zRule;
  for (const auto& [lo, hi] : {std::pair{-h - r, -h}, std::pair{-h, h}, std::pair{h, h + r}})
    if (hi > lo)
      for (const auto& node : gaussLegendre(16, lo, hi)) zRule.push_back(node);
  for (const auto& [z, wz] : zRule) {
    const double rho = sliceRadius(z);
    for (const auto& [s, ws] : gaussLegendre(12, 0.0, rho))
      for (int k = 0; k < kAngles; ++k) {
        const double theta = 2.0 * std::numbers::pi * k / kAngles;
        const double dm = density * wz * ws * s * (2.0 * std::numbers::pi / kAngles);
        const Vec3d x(s * std::cos(theta), s * std::sin(theta), z);
        out.mass += dm;
        out.inertia += dm * (x.squaredNorm() * Mat3d::Identity() - x * x.transpose());
      }
  }
  return out;
}

TEST(CapsuleMassProperties, MatchesAQuadratureOverTheSolidCapsule) {
  Random rng;
  TRACE_SEED(rng);
  std::vector<std::array<double, 3>> cases = {{0.02, 0.05, 1000.0},   // cable_twist / bundle
                                              {0.01, 0.015, 1000.0},  // cable_y_junction
                                              {0.3, 0.0, 500.0}};     // a sphere
  for (int i = 0; i < 20; ++i)
    cases.push_back({rng.logUniform(1e-3, 1.0),
                     rng.uniform(0.0, 1.0) < 0.1 ? 0.0 : rng.logUniform(1e-3, 2.0),
                     rng.uniform(100.0, 8000.0)});
  for (const auto& [r, h, density] : cases) {
    SCOPED_TRACE(::testing::Message() << "r " << r << ", h " << h << ", density " << density);
    const float rf = float(r), hf = float(h), df = float(density);
    const CapsuleMassProperties got = capsuleMassProperties(rf, hf, df);
    const MassIntegrals expected = integrateCapsule(rf, hf, df);
    EXPECT_NEAR(got.mass, expected.mass, 2e-6 * expected.mass);
    const double scale = expected.inertia.trace();
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        EXPECT_NEAR(got.inertia(a, b), expected.inertia(a, b),
                    a == b ? 2e-6 * expected.inertia(a, b) : 1e-9 * scale)
            << "component (" << a << ", " << b << ")";
  }
  // The spec's capsule masses.
  EXPECT_NEAR(capsuleMassProperties(0.02f, 0.05f, 1000.0f).mass, 0.159174, 5e-7);
  EXPECT_NEAR(capsuleMassProperties(0.01f, 0.015f, 1000.0f).mass, 0.0136136, 5e-8);
  // A sphere: I = 2/5 m r².
  const CapsuleMassProperties sphere = capsuleMassProperties(0.5f, 0.0f, 1.0f);
  EXPECT_NEAR(sphere.inertia(0, 0), 0.4 * sphere.mass * 0.25, 1e-7);
  EXPECT_NEAR(sphere.inertia(2, 2), 0.4 * sphere.mass * 0.25, 1e-7);
}

// ---- Frames ------------------------------------------------------------------------------------

TEST(ShortestArc, RotatesFromOntoToAboutTheirCommonNormal) {
  Random rng;
  TRACE_SEED(rng);
  for (int i = 0; i < 200; ++i) {
    const Vec3d from = rng.unit() * rng.logUniform(0.1, 10.0),
                to = rng.unit() * rng.logUniform(0.1, 10.0);
    const Quat q = shortestArc(toFloat(from), toFloat(to));
    const Vec3d a = from.normalized(), b = to.normalized();
    EXPECT_NEAR(std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w), 1.0, 1e-6);
    EXPECT_LT((rotated(q, a) - b).norm(), 1e-5);
    // The rotation axis is the common normal (no component along from or to), and its angle is
    // the angle between them: the minimal rotation.
    const Vec3d axis(q.x, q.y, q.z);
    EXPECT_NEAR(axis.dot(a), 0.0, 1e-6);
    EXPECT_NEAR(axis.dot(b), 0.0, 1e-6);
    EXPECT_NEAR(2.0 * std::acos(std::clamp(double(q.w), -1.0, 1.0)),
                std::acos(std::clamp(a.dot(b), -1.0, 1.0)), 2e-3);
  }
}

TEST(ShortestArc, AntiParallelTurnsHalfAWayAboutTheSpecsHelperAxis) {
  // from × x̂, or from × ŷ when |from.x| >= 0.9 (scenes_spec §0.3).
  const Quat zFlip = shortestArc({0, 0, 1}, {0, 0, -1});  // ẑ × x̂ = ŷ
  EXPECT_NEAR(zFlip.y, 1.0f, 1e-6f);
  EXPECT_NEAR(zFlip.w, 0.0f, 1e-6f);
  const Quat xFlip = shortestArc({1, 0, 0}, {-1, 0, 0});  // x̂ × ŷ = ẑ
  EXPECT_NEAR(xFlip.z, 1.0f, 1e-6f);
  EXPECT_NEAR(xFlip.w, 0.0f, 1e-6f);
  Random rng;
  TRACE_SEED(rng);
  for (int i = 0; i < 50; ++i) {
    const Vec3d a = rng.unit();
    const Quat q = shortestArc(toFloat(a), toFloat(-a));
    EXPECT_LT((rotated(q, a) + a).norm(), 1e-5);
  }
}

TEST(ParallelTransportFrames, MapZOntoEachSegmentWithNoTwistBetweenNeighbours) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 20; ++trial) {
    // A random polyline whose turns stay below 150° (away from the anti-parallel branch).
    std::vector<Vec3> points = {toFloat(rng.vec(-1, 1))};
    Vec3d direction = rng.unit();
    const int segments = 1 + trial * 3;
    for (int i = 0; i < segments; ++i) {
      Vec3d next = rng.unit();
      while (next.dot(direction) < std::cos(150.0 * std::numbers::pi / 180.0)) next = rng.unit();
      direction = next;
      points.push_back(points.back() + toFloat(direction * rng.uniform(0.05, 1.0)));
    }
    const std::vector<Quat> frames = parallelTransportFrames(points);
    ASSERT_EQ(frames.size(), size_t(segments));
    Vec3d previousTangent(0, 0, 1);
    Eigen::Quaterniond previous = Eigen::Quaterniond::Identity();
    for (int i = 0; i < segments; ++i) {
      const Vec3d d = (toEigen(points[size_t(i) + 1]) - toEigen(points[size_t(i)])).normalized();
      const Eigen::Quaterniond q(frames[size_t(i)].w, frames[size_t(i)].x, frames[size_t(i)].y,
                                 frames[size_t(i)].z);
      EXPECT_NEAR(q.norm(), 1.0, 1e-6);
      EXPECT_LT((q * Vec3d(0, 0, 1) - d).norm(), 2e-5) << "segment " << i;
      // The step from the previous frame (ẑ before segment 0) is a rotation about an axis normal
      // to both tangents: no twist about the tangent.
      const Eigen::Quaterniond step = q * previous.conjugate();
      EXPECT_NEAR(step.vec().dot(previousTangent), 0.0, 2e-5) << "segment " << i;
      EXPECT_NEAR(step.vec().dot(d), 0.0, 2e-5) << "segment " << i;
      previous = q;
      previousTangent = d;
    }
  }
}

TEST(ParallelTransportFrames, TheTwistCablesFirstFrameAndErrors) {
  const std::vector<Vec3> zigzag = {{0, 0, 0}, {0, 0.1f, 0}, {0.1f, 0.1f, 0}};
  const std::vector<Quat> frames = parallelTransportFrames(zigzag);
  EXPECT_NEAR(frames[0].x, -std::sqrt(0.5f), 1e-6f);  // (−0.7071, 0, 0, 0.7071), scenes_spec §5
  EXPECT_NEAR(frames[0].y, 0.0f, 1e-6f);
  EXPECT_NEAR(frames[0].z, 0.0f, 1e-6f);
  EXPECT_NEAR(frames[0].w, std::sqrt(0.5f), 1e-6f);
  const std::vector<Vec3> one = {{0, 0, 0}};
  EXPECT_THAT(errorOf([&] { parallelTransportFrames(one); }), HasSubstr("at least 2"));
  const std::vector<Vec3> repeated = {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}};
  EXPECT_THAT(errorOf([&] { parallelTransportFrames(repeated); }), HasSubstr("segment 1"));
}

// ---- addRod ------------------------------------------------------------------------------------

/// The coloring of `desc` as a Coloring (colorOfParticle rebuilt from the groups).
Coloring coloringOf(const RigidDesc& desc) {
  Coloring c;
  c.colorOffsets = desc.bodyColorOffsets;
  c.particlesByColor = desc.bodiesByColor;
  c.colorOfParticle.assign(size_t(desc.numBodies()), -1);
  for (int color = 0; color + 1 < int(c.colorOffsets.size()); ++color)
    for (int k = c.colorOffsets[size_t(color)]; k < c.colorOffsets[size_t(color) + 1]; ++k)
      c.colorOfParticle[size_t(c.particlesByColor[size_t(k)])] = color;
  return c;
}

std::vector<std::pair<int, int>> jointEdges(const RigidDesc& desc) {
  std::vector<std::pair<int, int>> edges;
  for (const JointDesc& j : desc.joints)
    if (j.parent >= 0) edges.push_back({j.parent, j.child});
  return edges;
}

Vec3 worldAnchor(const RigidDesc& desc, int body, const Transform& anchor) {
  return body < 0 ? anchor.p : transformPoint(desc.bodies[size_t(body)].pose, anchor.p);
}

RodParams exampleRod() {
  RodParams rod;
  rod.name = "example";
  rod.radius = 0.03f;
  rod.density = 700.0f;
  rod.material = {3.0e4f, 7.0f, 0.4f};
  rod.margin = 0.001f;
  rod.gap = 0.02f;
  rod.stiffness.stretchStiffness = 2.0e5f;
  rod.stiffness.stretchDamping = 3.0f;
  rod.stiffness.bendStiffness = 40.0f;
  rod.stiffness.bendDamping = 0.5f;
  rod.dahlEpsMax = 1.5f;
  rod.dahlTau = 0.2f;
  return rod;
}

TEST(CableBuilder, AddRodMakesOneCapsulePerSegmentJoinedAtTheSharedNodes) {
  Random rng;
  TRACE_SEED(rng);
  for (int segments : {2, 3, 17, 64}) {
    SCOPED_TRACE(::testing::Message() << segments << " segments");
    std::vector<Vec3> points = {toFloat(rng.vec(-1, 1))};
    for (int i = 0; i < segments; ++i)
      points.push_back(points.back() + toFloat(rng.unit() * rng.uniform(0.02, 0.2)));
    const RodParams rod = exampleRod();
    CableBuilder builder;
    const RodIds ids = builder.addRod(points, {}, rod);
    const RigidDesc desc = builder.finalize();
    ASSERT_EQ(desc.numBodies(), segments);
    ASSERT_EQ(desc.numShapes(), segments);
    ASSERT_EQ(desc.numJoints(), segments - 1);
    ASSERT_EQ(ids.bodies.size(), size_t(segments));
    ASSERT_EQ(ids.joints.size(), size_t(segments - 1));
    const std::vector<Quat> frames = parallelTransportFrames(points);
    for (int i = 0; i < segments; ++i) {
      const BodyDesc& body = desc.bodies[size_t(i)];
      const Vec3 a = points[size_t(i)], b = points[size_t(i) + 1];
      const float halfHeight = 0.5f * length(b - a);
      EXPECT_LT(length(body.pose.p - (a + b) * 0.5f), 1e-6f);
      EXPECT_EQ(body.pose.q.x, frames[size_t(i)].x);
      EXPECT_EQ(body.pose.q.w, frames[size_t(i)].w);
      EXPECT_LT(length(body.com), 1e-12f);
      EXPECT_FALSE(body.kinematic);
      const CapsuleMassProperties mass = capsuleMassProperties(rod.radius, halfHeight, rod.density);
      EXPECT_NEAR(body.mass, mass.mass, 1e-6 * mass.mass);
      EXPECT_NEAR(body.inertia(0, 0), mass.inertia(0, 0), 1e-5 * mass.inertia(0, 0));
      EXPECT_NEAR(body.inertia(2, 2), mass.inertia(2, 2), 1e-5 * mass.inertia(2, 2));
      EXPECT_THAT(body.name, HasSubstr("example"));
      const RigidShapeDesc& shape = desc.shapes[size_t(i)];
      EXPECT_EQ(shape.body, i);
      EXPECT_EQ(shape.geometry.type, ShapeType::Capsule);
      EXPECT_EQ(shape.geometry.radius, rod.radius);
      EXPECT_NEAR(shape.geometry.halfHeight, halfHeight, 1e-6f);
      EXPECT_EQ(length(shape.localPose.p), 0.0f);
      EXPECT_EQ(shape.localPose.q.w, 1.0f);
      EXPECT_EQ(shape.material.ke, rod.material.ke);
      EXPECT_EQ(shape.material.kd, rod.material.kd);
      EXPECT_EQ(shape.material.mu, rod.material.mu);
      EXPECT_EQ(shape.margin, rod.margin);
      EXPECT_EQ(shape.gap, rod.gap);
    }
    std::vector<std::pair<int, int>> expectedFilters;
    for (int j = 0; j + 1 < segments; ++j) {
      const JointDesc& joint = desc.joints[size_t(j)];
      EXPECT_EQ(joint.type, JointType::Rod);
      EXPECT_EQ(joint.parent, j);
      EXPECT_EQ(joint.child, j + 1);
      // Both anchors at the shared node: +hh on the parent (its end), −hh on the child (its start).
      EXPECT_NEAR(joint.parentAnchor.p.z, desc.shapes[size_t(j)].geometry.halfHeight, 1e-7f);
      EXPECT_NEAR(joint.childAnchor.p.z, -desc.shapes[size_t(j) + 1].geometry.halfHeight, 1e-7f);
      EXPECT_EQ(joint.parentAnchor.q.w, 1.0f);
      EXPECT_EQ(joint.childAnchor.q.w, 1.0f);
      const Vec3 p = worldAnchor(desc, joint.parent, joint.parentAnchor);
      const Vec3 c = worldAnchor(desc, joint.child, joint.childAnchor);
      EXPECT_LT(length(p - c), 2e-6f) << "joint " << j;
      EXPECT_LT(length(p - points[size_t(j) + 1]), 2e-6f) << "joint " << j;
      EXPECT_EQ(joint.stretchStiffness, 2.0e5f);
      EXPECT_EQ(joint.shearStiffness, 2.0e5f);
      EXPECT_EQ(joint.stretchDamping, 3.0f);
      EXPECT_EQ(joint.shearDamping, 3.0f);
      EXPECT_EQ(joint.bendStiffness, 40.0f);
      EXPECT_EQ(joint.twistStiffness, 40.0f);
      EXPECT_EQ(joint.bendDamping, 0.5f);
      EXPECT_EQ(joint.twistDamping, 0.5f);
      EXPECT_EQ(joint.dahlEpsMax, 1.5f);
      EXPECT_EQ(joint.dahlTau, 0.2f);
      expectedFilters.push_back({j, j + 1});
    }
    // Jointed neighbours never collide, and nothing else is filtered.
    EXPECT_EQ(desc.filteredShapePairs, expectedFilters);
    // A valid coloring by joints, and each body lists its joints in order.
    EXPECT_EQ(findGraphColoringConflict(coloringOf(desc), jointEdges(desc)), "");
    EXPECT_EQ(int(desc.bodyColorOffsets.size()) - 1, 2);
    ASSERT_EQ(desc.jointOffsets.size(), size_t(segments) + 1);
    for (int b = 0; b < segments; ++b) {
      std::vector<int> expected;
      if (b > 0) expected.push_back(b - 1);
      if (b + 1 < segments) expected.push_back(b);
      const std::vector<int> got(desc.bodyJoints.begin() + desc.jointOffsets[size_t(b)],
                                 desc.bodyJoints.begin() + desc.jointOffsets[size_t(b) + 1]);
      EXPECT_EQ(got, expected) << "body " << b;
    }
  }
}

TEST(CableBuilder, GivenQuaternionsAreUsedAsTheyAre) {
  const std::vector<Vec3> points = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  const Quat alongX = shortestArc({0, 0, 1}, {1, 0, 0});
  const Quat twisted = quatFromAxisAngle({1, 0, 0}, 0.3f) * alongX;
  const std::vector<Quat> frames = {alongX, twisted};
  CableBuilder builder;
  builder.addRod(points, frames, exampleRod());
  const RigidDesc desc = builder.finalize();
  EXPECT_EQ(desc.bodies[1].pose.q.x, twisted.x);
  EXPECT_EQ(desc.bodies[1].pose.q.w, twisted.w);
}

TEST(CableBuilder, RodMaterialFollowsTheReferenceDefaulting) {
  struct Case {
    std::optional<float> shearStiffness, shearDamping, twistStiffness, twistDamping;
    float shear, shearDamp, twist, twistDamp;  // expected
  };
  // stretch 1e5 / damping 2, bend 30 / damping 0.7 throughout.
  const Case cases[] = {
      {{}, {}, {}, {}, 1e5f, 2.0f, 30.0f, 0.7f},         // neither given: copies of both
      {5e4f, {}, 9.0f, {}, 5e4f, 0.0f, 9.0f, 0.0f},      // stiffness only: damping 0
      {{}, 4.0f, {}, 0.1f, 1e5f, 4.0f, 30.0f, 0.1f},     // damping only: stiffness copied
      {5e4f, 4.0f, 9.0f, 0.1f, 5e4f, 4.0f, 9.0f, 0.1f},  // both given
      {0.0f, {}, 0.0f, {}, 0.0f, 0.0f, 0.0f, 0.0f},      // explicit zeros are values
  };
  for (const Case& c : cases) {
    RodStiffness k;
    k.stretchStiffness = 1e5f;
    k.stretchDamping = 2.0f;
    k.bendStiffness = 30.0f;
    k.bendDamping = 0.7f;
    k.shearStiffness = c.shearStiffness;
    k.shearDamping = c.shearDamping;
    k.twistStiffness = c.twistStiffness;
    k.twistDamping = c.twistDamping;
    JointDesc joint;
    setRodMaterial(joint, k);
    EXPECT_EQ(joint.stretchStiffness, 1e5f);
    EXPECT_EQ(joint.stretchDamping, 2.0f);
    EXPECT_EQ(joint.bendStiffness, 30.0f);
    EXPECT_EQ(joint.bendDamping, 0.7f);
    EXPECT_EQ(joint.shearStiffness, c.shear);
    EXPECT_EQ(joint.shearDamping, c.shearDamp);
    EXPECT_EQ(joint.twistStiffness, c.twist);
    EXPECT_EQ(joint.twistDamping, c.twistDamp);
  }
  // The defaults of RodStiffness: stretch 1e5, everything else 0 or copied.
  JointDesc joint;
  setRodMaterial(joint, RodStiffness{});
  EXPECT_EQ(joint.stretchStiffness, 1e5f);
  EXPECT_EQ(joint.shearStiffness, 1e5f);
  EXPECT_EQ(joint.bendStiffness, 0.0f);
  EXPECT_EQ(joint.twistStiffness, 0.0f);
}

TEST(CableBuilder, ClosedRodJoinsTheLastSegmentToTheFirst) {
  const std::vector<Vec3> square = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 0}};
  RodParams rod = exampleRod();
  rod.closed = true;
  CableBuilder builder;
  const RodIds ids = builder.addRod(square, {}, rod);
  const RigidDesc desc = builder.finalize();
  ASSERT_EQ(desc.numBodies(), 4);
  ASSERT_EQ(desc.numJoints(), 4);
  EXPECT_EQ(ids.joints.size(), 4u);
  const JointDesc& closing = desc.joints[3];
  EXPECT_EQ(closing.parent, 3);
  EXPECT_EQ(closing.child, 0);
  for (const JointDesc& joint : desc.joints)
    EXPECT_LT(length(worldAnchor(desc, joint.parent, joint.parentAnchor) -
                     worldAnchor(desc, joint.child, joint.childAnchor)),
              1e-6f);
  const std::vector<std::pair<int, int>> filters = {{0, 1}, {0, 3}, {1, 2}, {2, 3}};
  EXPECT_EQ(desc.filteredShapePairs, filters);
  EXPECT_EQ(findGraphColoringConflict(coloringOf(desc), jointEdges(desc)), "");

  // Open ends, or too few points, are errors.
  const std::vector<Vec3> open = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(open, {}, rod); }),
              AllOf(HasSubstr("example"), HasSubstr("closed")));
  const std::vector<Vec3> three = {{0, 0, 0}, {1, 0, 0}, {0, 0, 0}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(three, {}, rod); }), HasSubstr("at least 4"));
}

// ---- addRodGraph on the reference's Y ----------------------------------------------------------

struct YGraph {
  std::vector<Vec3> nodes;
  std::vector<std::pair<int, int>> edges;
};

/// scenes_spec §8: J plus 20 nodes per branch, edges (previous, node), each branch from J.
YGraph yGraph() {
  YGraph y;
  const Vec3 junction{0, 0, 1.25f};
  y.nodes.push_back(junction);
  const float s = 0.5f * std::sqrt(3.0f);
  for (const Vec3& d : {Vec3{1, 0, 0}, Vec3{-0.5f, s, 0}, Vec3{-0.5f, -s, 0}}) {
    int previous = 0;
    for (int i = 1; i <= 20; ++i) {
      y.nodes.push_back(junction + d * (0.03f * float(i)));
      y.edges.push_back({previous, int(y.nodes.size()) - 1});
      previous = int(y.nodes.size()) - 1;
    }
  }
  return y;
}

TEST(CableBuilder, RodGraphBuildsTheReferencesBfsForestOnTheY) {
  const YGraph y = yGraph();
  RodParams rod = exampleRod();
  rod.radius = 0.01f;
  CableBuilder builder;
  const RodIds ids = builder.addRodGraph(y.nodes, y.edges, {}, rod);
  const RigidDesc desc = builder.finalize();
  ASSERT_EQ(desc.numBodies(), 60);
  ASSERT_EQ(desc.numJoints(), 59);
  ASSERT_EQ(ids.joints.size(), 59u);

  // Edge 0 adopts the edges at its start node J (20, 40), then at its end node (1); the queue
  // then continues 20 → 21, 40 → 41, 1 → 2, …
  const std::vector<std::pair<int, int>> firstJoints = {{0, 20},  {0, 40},  {0, 1},
                                                        {20, 21}, {40, 41}, {1, 2}};
  for (size_t j = 0; j < firstJoints.size(); ++j) {
    EXPECT_EQ(desc.joints[j].parent, firstJoints[j].first) << "joint " << j;
    EXPECT_EQ(desc.joints[j].child, firstJoints[j].second) << "joint " << j;
  }
  // Every edge but 0 has exactly one parent: the previous edge of its branch, or 0 at J.
  std::vector<int> parentOf(60, -2);
  for (const JointDesc& joint : desc.joints) {
    EXPECT_EQ(parentOf[size_t(joint.child)], -2) << "edge " << joint.child << " has two parents";
    parentOf[size_t(joint.child)] = joint.parent;
  }
  EXPECT_EQ(parentOf[0], -2);
  for (int e = 1; e < 60; ++e) EXPECT_EQ(parentOf[size_t(e)], e % 20 == 0 ? 0 : e - 1) << e;

  // The two joints at J have both anchors at −hh (each edge starts at J); the others join an
  // edge's end (+hh) to the next one's start (−hh). All meet at their shared node.
  for (int j = 0; j < 59; ++j) {
    const JointDesc& joint = desc.joints[size_t(j)];
    const bool atJunction = j < 2;
    EXPECT_NEAR(joint.parentAnchor.p.z, atJunction ? -0.015f : 0.015f, 1e-6f) << "joint " << j;
    EXPECT_NEAR(joint.childAnchor.p.z, -0.015f, 1e-6f) << "joint " << j;
    EXPECT_LT(length(worldAnchor(desc, joint.parent, joint.parentAnchor) -
                     worldAnchor(desc, joint.child, joint.childAnchor)),
              1e-6f)
        << "joint " << j;
  }
  // Independent shortest-arc frames per edge (no quaternions given).
  for (int e = 0; e < 60; ++e) {
    const Vec3 d =
        y.nodes[size_t(y.edges[size_t(e)].second)] - y.nodes[size_t(y.edges[size_t(e)].first)];
    const Quat expected = shortestArc({0, 0, 1}, d);
    EXPECT_NEAR(desc.bodies[size_t(e)].pose.q.x, expected.x, 1e-6f);
    EXPECT_NEAR(desc.bodies[size_t(e)].pose.q.y, expected.y, 1e-6f);
    EXPECT_NEAR(desc.bodies[size_t(e)].pose.q.w, expected.w, 1e-6f);
  }
  // Filters: the 59 jointed pairs plus the unjointed pair (20, 40) at the junction.
  EXPECT_EQ(desc.filteredShapePairs.size(), 60u);
  EXPECT_TRUE(std::binary_search(desc.filteredShapePairs.begin(), desc.filteredShapePairs.end(),
                                 std::pair{20, 40}));
  EXPECT_EQ(findGraphColoringConflict(coloringOf(desc), jointEdges(desc)), "");
  EXPECT_EQ(jointedBodyGroups(desc).size(), 1u);

  // Without the junction filter, (20, 40) may collide.
  rod.junctionCollisionFilter = false;
  CableBuilder unfiltered;
  unfiltered.addRodGraph(y.nodes, y.edges, {}, rod);
  const RigidDesc open = unfiltered.finalize();
  EXPECT_EQ(open.filteredShapePairs.size(), 59u);
  EXPECT_FALSE(std::binary_search(open.filteredShapePairs.begin(), open.filteredShapePairs.end(),
                                  std::pair{20, 40}));
}

TEST(CableBuilder, RodGraphWithoutArticulationJoinsAStarAtEachNode) {
  // On the Y the star gives the same jointed pairs as the BFS forest, in node order.
  const YGraph y = yGraph();
  RodParams rod = exampleRod();
  rod.radius = 0.01f;
  rod.wrapInArticulation = false;
  CableBuilder builder;
  builder.addRodGraph(y.nodes, y.edges, {}, rod);
  const RigidDesc desc = builder.finalize();
  ASSERT_EQ(desc.numJoints(), 59);
  const std::vector<std::pair<int, int>> firstJoints = {{0, 20}, {0, 40}, {0, 1}, {1, 2}};
  for (size_t j = 0; j < firstJoints.size(); ++j) {
    EXPECT_EQ(desc.joints[j].parent, firstJoints[j].first) << "joint " << j;
    EXPECT_EQ(desc.joints[j].child, firstJoints[j].second) << "joint " << j;
  }
  std::set<std::pair<int, int>> pairs;
  for (const JointDesc& joint : desc.joints) pairs.insert({joint.parent, joint.child});
  for (int e = 1; e < 60; ++e) EXPECT_TRUE(pairs.count({e % 20 == 0 ? 0 : e - 1, e})) << e;
}

TEST(CableBuilder, RodGraphOfTwoComponentsIsAForestOfTwoTrees) {
  const std::vector<Vec3> nodes = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0},
                                   {0, 5, 0}, {1, 5, 0}, {2, 5, 1}};
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {3, 4}, {1, 2}, {4, 5}};
  CableBuilder builder;
  builder.addRodGraph(nodes, edges, {}, exampleRod());
  const RigidDesc desc = builder.finalize();
  ASSERT_EQ(desc.numJoints(), 2);
  EXPECT_EQ(desc.joints[0].parent, 0);
  EXPECT_EQ(desc.joints[0].child, 2);
  EXPECT_EQ(desc.joints[1].parent, 1);
  EXPECT_EQ(desc.joints[1].child, 3);
  const std::vector<std::vector<int>> groups = {{0, 2}, {1, 3}};
  EXPECT_EQ(jointedBodyGroups(desc), groups);
}

// ---- Errors ------------------------------------------------------------------------------------

TEST(CableBuilder, ConstructionErrorsNameTheRodAndItem) {
  const RodParams rod = exampleRod();
  const std::vector<Vec3> two = {{0, 0, 0}, {1, 0, 0}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(two, {}, rod); }),
              AllOf(HasSubstr("'example'"), HasSubstr("at least 3")));
  const std::vector<Vec3> repeated = {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(repeated, {}, rod); }),
              AllOf(HasSubstr("'example'"), HasSubstr("segment 1"), HasSubstr("length")));
  const std::vector<Vec3> points = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  const std::vector<Quat> oneFrame = {Quat{}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(points, oneFrame, rod); }),
              AllOf(HasSubstr("1 quaternions"), HasSubstr("2 segments")));
  for (float radius : {0.0f, -0.1f, std::numeric_limits<float>::quiet_NaN()}) {
    RodParams bad = rod;
    bad.radius = radius;
    EXPECT_THAT(errorOf([&] { CableBuilder().addRod(points, {}, bad); }),
                AllOf(HasSubstr("'example'"), HasSubstr("radius")));
  }
  RodParams heavy = rod;
  heavy.density = -1.0f;
  EXPECT_THAT(errorOf([&] { CableBuilder().addRod(points, {}, heavy); }), HasSubstr("density"));
  const std::vector<std::pair<int, int>> badEdge = {{0, 1}, {1, 7}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRodGraph(points, badEdge, {}, rod); }),
              AllOf(HasSubstr("edge 1"), HasSubstr("(1, 7)")));
  const std::vector<std::pair<int, int>> loop = {{0, 0}};
  EXPECT_THAT(errorOf([&] { CableBuilder().addRodGraph(points, loop, {}, rod); }),
              HasSubstr("edge 0"));
  EXPECT_THAT(errorOf([&] { CableBuilder().addRodGraph(points, {}, {}, rod); }),
              HasSubstr("no edges"));
  // The same segment twice, in either direction: two capsules inside each other.
  for (const std::pair<int, int> again : {std::pair{1, 2}, std::pair{2, 1}}) {
    const std::vector<std::pair<int, int>> twice = {{0, 1}, {1, 2}, again};
    EXPECT_THAT(
        errorOf([&] { CableBuilder().addRodGraph(points, twice, {}, rod); }),
        AllOf(HasSubstr("'example'"), HasSubstr("edge 2"), HasSubstr("same two nodes as edge 1")));
  }
}

/// A valid two-body description to break one item at a time.
CableBuilder twoBodies() {
  CableBuilder builder;
  const std::vector<Vec3> points = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  builder.addRod(points, {}, exampleRod());
  return builder;
}

TEST(CableBuilder, FinalizeErrorsNameTheInvalidItem) {
  {  // a joint to a missing body
    CableBuilder b = twoBodies();
    JointDesc joint;
    joint.parent = 0;
    joint.child = 5;
    b.addJoint(joint);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("joint 1"), HasSubstr("child body 5 does not exist")));
  }
  {  // a joint from a missing parent
    CableBuilder b = twoBodies();
    JointDesc joint;
    joint.parent = -3;
    joint.child = 1;
    b.addJoint(joint, false);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), AllOf(HasSubstr("joint 1"), HasSubstr("parent")));
  }
  {  // a body joined to itself
    CableBuilder b = twoBodies();
    JointDesc joint;
    joint.parent = 1;
    joint.child = 1;
    b.addJoint(joint, false);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), AllOf(HasSubstr("joint 1"), HasSubstr("itself")));
  }
  {  // a negative stiffness
    CableBuilder b = twoBodies();
    JointDesc joint;
    joint.parent = -1;
    joint.child = 1;
    joint.bendStiffness = -1.0f;
    b.addJoint(joint);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("joint 1"), HasSubstr("bend stiffness")));
  }
  {  // a shape on a missing body
    CableBuilder b = twoBodies();
    RigidShapeDesc shape;
    shape.name = "stray";
    shape.body = 9;
    shape.geometry.type = ShapeType::Sphere;
    shape.geometry.radius = 0.1f;
    b.addShape(shape);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("shape 2"), HasSubstr("'stray'"), HasSubstr("body 9")));
  }
  {  // a capsule without a radius
    CableBuilder b = twoBodies();
    RigidShapeDesc shape;
    shape.body = -1;
    shape.geometry.type = ShapeType::Capsule;
    b.addShape(shape);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), AllOf(HasSubstr("shape 2"), HasSubstr("radius")));
  }
  {  // a negative gap
    CableBuilder b = twoBodies();
    RigidShapeDesc shape;
    shape.body = -1;
    shape.gap = -0.1f;
    b.addShape(shape);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), AllOf(HasSubstr("shape 2"), HasSubstr("gap")));
  }
  {  // a dynamic body without inertia
    CableBuilder b = twoBodies();
    BodyDesc body;
    body.name = "brick";
    body.mass = 1.0f;
    b.addBody(body);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("body 2"), HasSubstr("'brick'"), HasSubstr("inertia")));
  }
  {  // a non-finite pose
    CableBuilder b = twoBodies();
    BodyDesc body;
    body.kinematic = true;
    body.pose.p.x = std::numeric_limits<float>::quiet_NaN();
    b.addBody(body);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), AllOf(HasSubstr("body 2"), HasSubstr("pose")));
  }
  {  // a kinematic body whose motion starts elsewhere
    CableBuilder b = twoBodies();
    BodyDesc body;
    body.kinematic = true;
    body.pose.p = {1, 2, 3};
    body.motion.type = MotionType::Linear;
    body.motion.linearVelocity = {1, 0, 0};
    b.addBody(body);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("body 2"), HasSubstr("motion starts")));
  }
  {  // a scripted motion on a dynamic body
    CableBuilder b = twoBodies();
    BodyDesc body;
    body.mass = 1.0f;
    body.inertia = Mat33::identity();
    body.motion.type = MotionType::Linear;
    b.addBody(body);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("body 2"), HasSubstr("scripted motion")));
  }
  {  // a sampled motion whose count disagrees with its table
    CableBuilder b = twoBodies();
    BodyDesc body;
    body.kinematic = true;
    body.motion.type = MotionType::Sampled;
    body.motion.sampleInterval = 0.1f;
    body.motion.sampleCount = 3;
    body.motionSamples = {Transform{}, Transform{}};
    b.addBody(body);
    EXPECT_THAT(errorOf([&] { b.finalize(); }),
                AllOf(HasSubstr("body 2"), HasSubstr("sampleCount 3")));
  }
  {  // a filtered pair naming one shape twice
    CableBuilder b = twoBodies();
    b.filterShapePair(1, 1);
    EXPECT_THAT(errorOf([&] { b.finalize(); }), HasSubstr("filtered shape pair"));
  }
  {  // the valid description itself finalizes
    CableBuilder b = twoBodies();
    EXPECT_EQ(errorOf([&] { b.finalize(); }), "(no weft::Error thrown)");
  }
}

TEST(CableBuilder, AddJointFiltersEveryShapePairOfItsBodies) {
  CableBuilder builder;
  BodyDesc body;
  body.mass = 1.0f;
  body.inertia = Mat33::identity();
  const int a = builder.addBody(body), b = builder.addBody(body);
  RigidShapeDesc sphere;
  sphere.geometry.type = ShapeType::Sphere;
  sphere.geometry.radius = 0.1f;
  sphere.body = a;
  builder.addShape(sphere);  // 0
  sphere.body = b;
  builder.addShape(sphere);  // 1
  JointDesc joint;
  joint.type = JointType::Ball;
  joint.parent = a;
  joint.child = b;
  builder.addJoint(joint);
  sphere.body = a;
  builder.addShape(sphere);  // 2, added after the joint
  const RigidDesc desc = builder.finalize();
  const std::vector<std::pair<int, int>> filters = {{0, 1}, {1, 2}};
  EXPECT_EQ(desc.filteredShapePairs, filters);
}

// ---- Measurements against brute force ---------------------------------------------------------

/// Random joints between n bodies (some to the world, some duplicates).
std::vector<JointDesc> randomJoints(Random& rng, int n, int count) {
  std::vector<JointDesc> joints;
  for (int k = 0; k < count && n >= 2; ++k) {
    JointDesc j;
    j.parent = rng.uniform(0, 1) < 0.1 ? -1 : int(rng.uniform(0, n));
    j.child = int(rng.uniform(0, n));
    if (j.parent == j.child) continue;
    joints.push_back(j);
  }
  return joints;
}

TEST(JointedBodyGroups, MatchesADepthFirstSearch) {
  Random rng;
  TRACE_SEED(rng);
  for (int n : {0, 1, 2, 7, 31, 200}) {
    for (int trial = 0; trial < 5; ++trial) {
      RigidDesc desc;
      desc.bodies.resize(size_t(n));
      desc.joints = randomJoints(rng, n, int(rng.uniform(0, 1.2 * n)));
      std::vector<std::vector<int>> adjacency(static_cast<size_t>(n));
      for (const JointDesc& j : desc.joints)
        if (j.parent >= 0) {
          adjacency[size_t(j.parent)].push_back(j.child);
          adjacency[size_t(j.child)].push_back(j.parent);
        }
      std::vector<int> seen(static_cast<size_t>(n), 0);
      std::vector<std::vector<int>> expected;
      for (int start = 0; start < n; ++start) {
        if (seen[size_t(start)]) continue;
        std::vector<int> group, stack = {start};
        seen[size_t(start)] = 1;
        while (!stack.empty()) {
          const int b = stack.back();
          stack.pop_back();
          group.push_back(b);
          for (int c : adjacency[size_t(b)])
            if (!seen[size_t(c)]) {
              seen[size_t(c)] = 1;
              stack.push_back(c);
            }
        }
        std::sort(group.begin(), group.end());
        expected.push_back(group);
      }
      EXPECT_EQ(jointedBodyGroups(desc), expected) << n << " bodies";
    }
  }
}

Transform randomPose(Random& rng, double extent) {
  Eigen::Quaterniond q(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1),
                       rng.uniform(-1, 1));
  q.normalize();
  return {toFloat(rng.vec(-extent, extent)),
          Quat{float(q.x()), float(q.y()), float(q.z()), float(q.w())}};
}

TEST(LargestJointGap, MatchesBruteForce) {
  Random rng;
  TRACE_SEED(rng);
  for (int n : {0, 1, 2, 9, 100}) {
    RigidDesc desc;
    desc.bodies.resize(size_t(n));
    desc.joints = randomJoints(rng, n, 2 * n);
    for (JointDesc& j : desc.joints) {
      j.parentAnchor.p = toFloat(rng.vec(-0.2, 0.2));
      j.childAnchor.p = toFloat(rng.vec(-0.2, 0.2));
      if (rng.uniform(0, 1) < 0.05) j.parentAnchor.p = j.childAnchor.p = {};  // no length: skipped
    }
    std::vector<Transform> poses;
    for (int b = 0; b < n; ++b) poses.push_back(randomPose(rng, 1.0));
    // Brute force in double: the largest gap / reference length.
    int worst = -1;
    double worstRatio = -1.0, worstGap = 0.0;
    for (int k = 0; k < desc.numJoints(); ++k) {
      const JointDesc& j = desc.joints[size_t(k)];
      const auto world = [&](int body, const Vec3& local) {
        return body < 0 ? toEigen(local)
                        : toEigen(poses[size_t(body)].p) +
                              rotated(poses[size_t(body)].q, toEigen(local));
      };
      const double reference = toEigen(j.parentAnchor.p).norm() + toEigen(j.childAnchor.p).norm();
      if (reference <= 0.0) continue;
      const double gap =
          (world(j.parent, j.parentAnchor.p) - world(j.child, j.childAnchor.p)).norm();
      if (gap / reference > worstRatio) {
        worstRatio = gap / reference;
        worst = k;
        worstGap = gap;
      }
    }
    const JointGap got = largestJointGap(desc, poses);
    EXPECT_EQ(got.joint, worst) << n << " bodies";
    EXPECT_NEAR(got.gap, worstGap, 1e-5);
    EXPECT_EQ(got.nonFinite, 0);
    if (n >= 2 && !desc.joints.empty()) {
      // A non-finite pose is counted, not measured.
      const int child = desc.joints[0].child;
      poses[size_t(child)].p.y = std::numeric_limits<float>::quiet_NaN();
      int touching = 0;
      for (const JointDesc& j : desc.joints) touching += j.parent == child || j.child == child;
      EXPECT_EQ(largestJointGap(desc, poses).nonFinite, touching);
    }
  }
  RigidDesc two;
  two.bodies.resize(2);
  const std::vector<Transform> one(1);
  EXPECT_THAT(errorOf([&] { largestJointGap(two, one); }), HasSubstr("1 poses for 2 bodies"));
}

/// Distance between segments [p1, q1] and [p2, q2] in double: the smaller of the four
/// endpoint-to-segment distances and the interior critical point, if there is one.
double segmentDistance(const Vec3d& p1, const Vec3d& q1, const Vec3d& p2, const Vec3d& q2) {
  const auto pointToSegment = [](const Vec3d& p, const Vec3d& a, const Vec3d& b) {
    return (a + test::segmentParameter(p, a, b) * (b - a) - p).norm();
  };
  double best = std::min({pointToSegment(p1, p2, q2), pointToSegment(q1, p2, q2),
                          pointToSegment(p2, p1, q1), pointToSegment(q2, p1, q1)});
  const Vec3d d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  Eigen::Matrix2d m;
  m << d1.dot(d1), -d1.dot(d2), -d1.dot(d2), d2.dot(d2);
  const Eigen::Vector2d rhs(-d1.dot(r), d2.dot(r));
  if (std::fabs(m.determinant()) > 1e-12 * m.norm() * m.norm()) {
    const Eigen::Vector2d st = m.inverse() * rhs;
    if (st.x() > 0 && st.x() < 1 && st.y() > 0 && st.y() < 1)
      best = std::min(best, (p1 + st.x() * d1 - p2 - st.y() * d2).norm());
  }
  return best;
}

TEST(DeepestCapsuleOverlap, MatchesBruteForceOverAllPairs) {
  Random rng;
  TRACE_SEED(rng);
  for (int count : {0, 1, 2, 13, 120}) {
    RigidDesc desc;
    const int numBodies = std::max(1, count / 2);
    for (int b = 0; b < numBodies; ++b) {
      BodyDesc body;
      body.pose = randomPose(rng, 0.6);
      desc.bodies.push_back(body);
    }
    for (int s = 0; s < count; ++s) {
      RigidShapeDesc shape;
      shape.body = rng.uniform(0, 1) < 0.15 ? -1 : int(rng.uniform(0, numBodies));
      shape.geometry.type = ShapeType::Capsule;
      shape.geometry.radius = float(rng.uniform(0.02, 0.15));
      shape.geometry.halfHeight = rng.uniform(0, 1) < 0.2 ? 0.0f : float(rng.uniform(0.0, 0.3));
      if (rng.uniform(0, 1) < 0.5) shape.localPose = randomPose(rng, 0.1);
      desc.shapes.push_back(shape);
    }
    // A plane and a sphere: not capsules, never measured.
    RigidShapeDesc plane;
    desc.shapes.push_back(plane);
    RigidShapeDesc sphere;
    sphere.geometry.type = ShapeType::Sphere;
    sphere.geometry.radius = 1.0f;
    desc.shapes.push_back(sphere);
    for (int k = 0; k < count; ++k)
      desc.filteredShapePairs.push_back({int(rng.uniform(0, count)), int(rng.uniform(0, count))});

    std::vector<Transform> poses;
    for (const BodyDesc& body : desc.bodies) poses.push_back(body.pose);
    const float tolerance = float(rng.uniform(0.0, 1.0));

    std::set<std::pair<int, int>> filtered;
    for (const auto& [a, b] : desc.filteredShapePairs)
      filtered.insert({std::min(a, b), std::max(a, b)});
    const auto ends = [&](int s) {
      const RigidShapeDesc& shape = desc.shapes[size_t(s)];
      Vec3d centre = toEigen(shape.localPose.p);
      Vec3d axis = rotated(shape.localPose.q, Vec3d(0, 0, shape.geometry.halfHeight));
      if (shape.body >= 0) {
        const Transform& body = poses[size_t(shape.body)];
        centre = toEigen(body.p) + rotated(body.q, centre);
        axis = rotated(body.q, axis);
      }
      return std::pair<Vec3d, Vec3d>(centre - axis, centre + axis);
    };
    int violations = 0, worstA = -1, worstB = -1;
    double worstExcess = -INFINITY, worstDepth = 0.0;
    for (int a = 0; a < count; ++a)
      for (int b = a + 1; b < count; ++b) {
        const RigidShapeDesc &sa = desc.shapes[size_t(a)], &sb = desc.shapes[size_t(b)];
        if (sa.body == sb.body || filtered.count({a, b})) continue;
        const auto [pa, qa] = ends(a);
        const auto [pb, qb] = ends(b);
        const double depth =
            sa.geometry.radius + sb.geometry.radius - segmentDistance(pa, qa, pb, qb);
        const double allowance = tolerance * std::min(sa.geometry.radius, sb.geometry.radius);
        violations += depth > allowance;
        if (depth - allowance > worstExcess) {
          worstExcess = depth - allowance;
          worstA = a;
          worstB = b;
          worstDepth = depth;
        }
      }
    const CapsuleOverlap got = deepestCapsuleOverlap(desc, poses, tolerance);
    SCOPED_TRACE(::testing::Message() << count << " capsules");
    EXPECT_EQ(got.violations, violations);
    if (count == 120) {
      EXPECT_GT(violations, 0);  // dense enough that the worst pair is compared
    }
    EXPECT_EQ(got.skippedNonFinite, 0);
    // Only pairs in neighbouring grid cells are measured, so the deepest pair is comparable
    // when it exceeds its allowance (a violating pair overlaps, so it is always measured).
    if (worstExcess > 0.0) {
      EXPECT_EQ(got.shapeA, worstA);
      EXPECT_EQ(got.shapeB, worstB);
      EXPECT_NEAR(got.depth, worstDepth, 2e-5);
    }
  }
}

TEST(DeepestCapsuleOverlap, SkipsNonFiniteCapsulesAndHandlesFarApartOnes) {
  RigidDesc desc;
  for (int b = 0; b < 3; ++b) {
    BodyDesc body;
    body.pose.p = {float(b) * 10.0f, 0, 0};
    desc.bodies.push_back(body);
    RigidShapeDesc capsule;
    capsule.body = b;
    capsule.geometry.type = ShapeType::Capsule;
    capsule.geometry.radius = 0.1f;
    capsule.geometry.halfHeight = 0.2f;
    desc.shapes.push_back(capsule);
  }
  std::vector<Transform> poses = {desc.bodies[0].pose, desc.bodies[1].pose, desc.bodies[2].pose};
  CapsuleOverlap got = deepestCapsuleOverlap(desc, poses, 0.5f);
  EXPECT_EQ(got.violations, 0);
  EXPECT_EQ(got.shapeA, -1);     // nothing within reach
  poses[1].p = {1.0e-3f, 0, 0};  // on top of capsule 0
  poses[2].p.z = std::numeric_limits<float>::infinity();
  got = deepestCapsuleOverlap(desc, poses, 0.5f);
  EXPECT_EQ(got.violations, 1);
  EXPECT_EQ(got.shapeA, 0);
  EXPECT_EQ(got.shapeB, 1);
  EXPECT_NEAR(got.depth, 0.2f - 1e-3f, 1e-6f);
  EXPECT_NEAR(got.allowance, 0.05f, 1e-7f);
  EXPECT_EQ(got.skippedNonFinite, 1);
}

}  // namespace
}  // namespace weft
