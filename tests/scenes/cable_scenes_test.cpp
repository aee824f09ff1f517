// The four cable scenes (scenes_spec §5–§8): each builds with the reference's counts, geometry,
// masses, joint stiffness slots, shape materials and gaps, kinematic bodies and a valid coloring;
// the scripted motions (cable_twist's spinning first capsules, the bundle's load–hold–release
// obstacles) evaluated with poseAt() follow the spec's closed forms; bad scene options are
// rejected; and the final checks pass on the rest poses and fail, naming what they measured, on
// deliberately broken ones (a torn joint, a NaN, a body below the ground, capsules pushed into
// each other). The solver is not run here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kinematics.h"
#include "kernels/runtime/errors.h"
#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"
#include "solver/coloring.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

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

SceneOptions withOptions(std::map<std::string, std::string> values) {
  SceneOptions options;
  options.values = std::move(values);
  return options;
}

/// A final state to check: body poses (the rest poses unless changed) and zero velocities.
struct State {
  std::vector<Transform> poses;
  std::vector<Vec3> linear, angular;
  explicit State(const RigidDesc& desc)
      : linear(size_t(desc.numBodies())), angular(size_t(desc.numBodies())) {
    for (const BodyDesc& body : desc.bodies) poses.push_back(body.pose);
  }
};

std::vector<CheckResult> runChecks(const Scene& scene, const RigidDesc& desc, const State& state,
                                   double seconds = 0.0) {
  const long long frames = std::llround(seconds * scene.fps);
  return scene.rigid.checks({desc, state.poses, state.linear, state.angular, frames, seconds});
}

const CheckResult* findCheck(const std::vector<CheckResult>& checks, const std::string& name) {
  for (const CheckResult& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

/// Expects every check to pass (printing each).
void expectAllPass(const std::vector<CheckResult>& checks) {
  ASSERT_FALSE(checks.empty());
  for (const CheckResult& c : checks) {
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
    EXPECT_FALSE(c.detail.empty()) << c.name;
  }
}

/// Expects check `name` to be present and to fail with a detail containing `needle`.
void expectFails(const std::vector<CheckResult>& checks, const std::string& name,
                 const std::string& needle) {
  const CheckResult* c = findCheck(checks, name);
  ASSERT_NE(c, nullptr) << "no check named " << name;
  EXPECT_FALSE(c->pass) << name << ": " << c->detail;
  EXPECT_THAT(c->detail, HasSubstr(needle)) << name;
}

/// The body coloring of `desc` as a Coloring, and its joint edges.
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

int countKinematic(const RigidDesc& desc) {
  int n = 0;
  for (const BodyDesc& b : desc.bodies) n += b.kinematic;
  return n;
}

/// The two quaternions are the same rotation (up to sign) within `tolerance` radians.
void expectSameRotation(const Quat& a, const Quat& b, double tolerance) {
  // The angle of conj(a)·b, in double.
  const double w = double(a.w) * b.w + double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z;
  const double x = double(a.w) * b.x - double(a.x) * b.w - double(a.y) * b.z + double(a.z) * b.y;
  const double y = double(a.w) * b.y + double(a.x) * b.z - double(a.y) * b.w - double(a.z) * b.x;
  const double z = double(a.w) * b.z - double(a.x) * b.y + double(a.y) * b.x - double(a.z) * b.w;
  const double angle = 2.0 * std::atan2(std::sqrt(x * x + y * y + z * z), std::fabs(w));
  EXPECT_LE(angle, tolerance) << "(" << a.x << ", " << a.y << ", " << a.z << ", " << a.w << ") vs ("
                              << b.x << ", " << b.y << ", " << b.z << ", " << b.w << ")";
}

/// poseAt for a body's motion, with its own sample table.
Transform bodyPoseAt(const BodyDesc& body, float t) {
  ShapeMotion m = body.motion;
  m.sampleOffset = 0;
  m.sampleCount = int(body.motionSamples.size());
  return poseAt(m, t, body.motionSamples.data());
}

// ---- All four ----------------------------------------------------------------------------------

struct Expected {
  const char* name;
  std::vector<std::string> aliases;
  int substeps, collideInterval, contactCapacity;  // initial rows per shape (grown on demand)
};
const Expected kExpected[] = {{"cable_twist", {}, 10, 10, 4},
                              {"cable_pile", {"pile"}, 10, 1, 4},
                              {"cable_bundle_hysteresis", {"bundle"}, 10, 10, 4},
                              {"cable_y_junction", {"y_junction"}, 20, 1, 4}};

TEST(CableScenes, NamesAliasesAndTheReferencesSolverSettings) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const Scene& scene = findScene(e.name);
    EXPECT_EQ(scene.name, e.name);
    EXPECT_EQ(scene.aliases, e.aliases);
    for (const std::string& alias : e.aliases) EXPECT_EQ(findScene(alias).name, e.name);
    EXPECT_FALSE(scene.description.empty());
    EXPECT_TRUE(scene.isCable());
    EXPECT_TRUE(scene.benchmark);
    EXPECT_EQ(scene.fps, 60.0);
    EXPECT_EQ(scene.substeps, e.substeps);
    EXPECT_EQ(scene.defaultFrames, 20);  // the reference's test length
    EXPECT_EQ(scene.tuneWindowFrames, 20);
    EXPECT_TRUE(scene.rigid.build);
    EXPECT_TRUE(scene.rigid.checks);
    const RigidSolverOptions& o = scene.rigid.solver;
    EXPECT_EQ(o.iterations, 5);
    EXPECT_EQ(o.gravity.x, 0.0f);
    EXPECT_EQ(o.gravity.y, 0.0f);
    EXPECT_EQ(o.gravity.z, -9.81f);
    EXPECT_EQ(o.collideInterval, e.collideInterval);
    EXPECT_EQ(e.substeps % o.collideInterval, 0);
    EXPECT_EQ(o.contactCapacity, e.contactCapacity);
    // Only the pile matches contacts across detections (sticky, with history), as the reference.
    const bool pile = std::string(e.name) == "cable_pile";
    EXPECT_EQ(o.contactHistory, pile);
    EXPECT_EQ(o.stickyContacts, pile);
  }
  // "twist" stays cloth_twist's alias.
  EXPECT_EQ(findScene("twist").name, "cloth_twist");
}

TEST(CableScenes, EveryColoringIsValidAndEveryDescriptionValidates) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const Scene& scene = findScene(e.name);
    const RigidDesc desc = scene.rigid.build(withOptions({}));
    EXPECT_EQ(errorOf([&] { validateRigidDesc(desc); }), "(no weft::Error thrown)");
    const Coloring coloring = coloringOf(desc);
    EXPECT_EQ(findGraphColoringConflict(coloring, jointEdges(desc)), "");
    EXPECT_GE(coloring.numColors(), 2);  // rod chains need two
    EXPECT_EQ(desc.bodiesByColor.size(), size_t(desc.numBodies()));
    std::printf("[ info     ] %s: %d bodies, %d joints, %d shapes, %d body colors\n", e.name,
                desc.numBodies(), desc.numJoints(), desc.numShapes(), coloring.numColors());
  }
}

TEST(CableScenes, ChecksPassOnTheRestPoses) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const Scene& scene = findScene(e.name);
    const RigidDesc desc = scene.rigid.build(withOptions({}));
    const std::vector<CheckResult> checks = runChecks(scene, desc, State(desc));
    expectAllPass(checks);
    for (const char* generic : {"finite", "joints_not_torn", "no_deep_interpenetration"})
      EXPECT_NE(findCheck(checks, generic), nullptr) << generic;
  }
}

TEST(CableScenes, OptionlessScenesRejectEveryOption) {
  for (const char* name : {"cable_twist", "cable_y_junction"})
    EXPECT_THAT(errorOf([&] {
                  findScene(name).rigid.build(withOptions({{"layers", "4"}}));
                }),
                HasSubstr("unknown scene option 'layers'"))
        << name;
}

// ---- cable_twist -------------------------------------------------------------------------------

RigidDesc buildTwist() {
  return findScene("cable_twist").rigid.build(withOptions({}));
}

/// Zigzag point i of cable c (scenes_spec §5).
Vec3 twistPoint(int c, int i) {
  double x = 0.0, y = 0.0;
  if (i <= 16) {
    y = 0.1 * i;
  } else if (i <= 32) {
    x = 0.1 * (i - 16);
    y = 1.6;
  } else if (i <= 48) {
    x = 1.6;
    y = 1.6 - 0.1 * (i - 32);
  } else {
    x = 1.6 + 0.1 * (i - 48);
  }
  return {float(-1.6 + x), float((c - 1) * 3.0 + y), 0.02f};
}

TEST(CableTwist, ThreeZigzagCablesWithTheReferencesCounts) {
  const RigidDesc desc = buildTwist();
  EXPECT_EQ(desc.numBodies(), 192);
  EXPECT_EQ(desc.numJoints(), 189);
  EXPECT_EQ(desc.numShapes(), 193);
  EXPECT_EQ(countKinematic(desc), 3);
  EXPECT_EQ(desc.filteredShapePairs.size(), 189u);  // jointed neighbours only
  EXPECT_EQ(cableBodies(desc).size(), 3u);
}

TEST(CableTwist, CapsulesFollowTheZigzagWithParallelTransportFrames) {
  const RigidDesc desc = buildTwist();
  for (int c = 0; c < 3; ++c) {
    std::vector<Vec3> points;
    for (int i = 0; i <= 64; ++i) points.push_back(twistPoint(c, i));
    const std::vector<Quat> frames = parallelTransportFrames(points);
    for (int i = 0; i < 64; ++i) {
      const BodyDesc& body = desc.bodies[size_t(64 * c + i)];
      const Vec3 mid = (points[size_t(i)] + points[size_t(i) + 1]) * 0.5f;
      EXPECT_LT(length(body.pose.p - mid), 1e-6f) << "cable " << c << " segment " << i;
      expectSameRotation(body.pose.q, frames[size_t(i)], 1e-6);
      const Vec3 axis = rotate(body.pose.q, {0, 0, 1});
      const Vec3 d = (points[size_t(i) + 1] - points[size_t(i)]) / 0.1f;
      EXPECT_LT(length(axis - d), 1e-5f) << "cable " << c << " segment " << i;
      const RigidShapeDesc& shape = desc.shapes[size_t(64 * c + i)];
      EXPECT_EQ(shape.body, 64 * c + i);
      EXPECT_EQ(shape.geometry.type, ShapeType::Capsule);
      EXPECT_EQ(shape.geometry.radius, 0.02f);
      EXPECT_NEAR(shape.geometry.halfHeight, 0.05f, 1e-6f);
      if (i == 0) {
        EXPECT_TRUE(body.kinematic);
        EXPECT_EQ(body.mass, 0.0f);
        EXPECT_EQ(body.inertia(0, 0), 0.0f);
        EXPECT_EQ(body.inertia(2, 2), 0.0f);
      } else {
        EXPECT_FALSE(body.kinematic);
        EXPECT_NEAR(body.mass, 0.159174f, 1e-6f);
        EXPECT_EQ(body.motion.type, MotionType::Static);
      }
    }
    // Segment 0 of every cable: q = (−0.7071, 0, 0, 0.7071) (scenes_spec §5).
    expectSameRotation(desc.bodies[size_t(64 * c)].pose.q,
                       {-std::sqrt(0.5f), 0.0f, 0.0f, std::sqrt(0.5f)}, 1e-6);
  }
}

TEST(CableTwist, JointsCarryTheStiffnessSweepAndShapesTheMaterial) {
  const RigidDesc desc = buildTwist();
  for (int j = 0; j < 189; ++j) {
    const JointDesc& joint = desc.joints[size_t(j)];
    const int cable = j / 63;
    const float k = std::pow(10.0f, 2.0f + float(cable));
    EXPECT_EQ(joint.type, JointType::Rod);
    EXPECT_EQ(joint.parent, 64 * cable + j % 63);
    EXPECT_EQ(joint.child, joint.parent + 1);
    EXPECT_EQ(joint.stretchStiffness, 1.0e6f);
    EXPECT_EQ(joint.shearStiffness, 1.0e6f);
    EXPECT_EQ(joint.stretchDamping, 0.0f);
    EXPECT_EQ(joint.shearDamping, 0.0f);
    EXPECT_FLOAT_EQ(joint.bendStiffness, k);
    EXPECT_FLOAT_EQ(joint.twistStiffness, k);
    EXPECT_FLOAT_EQ(joint.bendDamping, 0.01f * k);
    EXPECT_FLOAT_EQ(joint.twistDamping, 0.01f * k);
    EXPECT_EQ(joint.dahlEpsMax, 0.0f);
  }
  for (const RigidShapeDesc& shape : desc.shapes) {
    EXPECT_EQ(shape.material.ke, 1.0e6f);
    EXPECT_EQ(shape.material.kd, 0.0f);
    EXPECT_EQ(shape.material.mu, 0.5f);
    EXPECT_EQ(shape.gap, 0.1f);
    EXPECT_EQ(shape.margin, 0.0f);
  }
  const RigidShapeDesc& ground = desc.shapes.back();
  EXPECT_EQ(ground.body, -1);
  EXPECT_EQ(ground.geometry.type, ShapeType::Plane);
  EXPECT_EQ(length(ground.localPose.p), 0.0f);
}

TEST(CableTwist, FirstCapsulesSpinAboutTheirOwnAxisAsTheReferenceTurnsThem) {
  const RigidDesc desc = buildTwist();
  constexpr float kDt = 1.0f / 600.0f;
  for (int c = 0; c < 3; ++c) {
    const BodyDesc& body = desc.bodies[size_t(64 * c)];
    ASSERT_EQ(body.motion.type, MotionType::Linear);
    EXPECT_EQ(length(body.motion.linearVelocity), 0.0f);
    // Closed form q(t) = q₀·R_z(0.5 t), position fixed.
    for (float t : {0.0f, kDt, 1.0f / 60.0f, 0.5f, 1.0f, 7.3f}) {
      const Transform pose = bodyPoseAt(body, t);
      EXPECT_LT(length(pose.p - body.pose.p), 1e-6f) << "t " << t;
      expectSameRotation(pose.q, body.pose.q * quatFromAxisAngle({0, 0, 1}, 0.5f * t), 1e-5);
    }
    // The reference's update: before each substep's solve, q ← R(q·ẑ, 0.5·dt)·q. After k substeps
    // that is our pose at the end of substep k, t = k·dt.
    Quat q = body.pose.q;
    for (int k = 1; k <= 20; ++k) {
      q = normalize(quatFromAxisAngle(rotate(q, {0, 0, 1}), 0.5f * kDt) * q);
      expectSameRotation(bodyPoseAt(body, float(k) * kDt).q, q, 1e-5);
    }
  }
}

TEST(CableTwist, ChecksFailOnATornJointANaNAndABodyBelowTheGround) {
  const Scene& scene = findScene("cable_twist");
  const RigidDesc desc = buildTwist();
  {
    State torn(desc);
    torn.poses[70].p.x += 0.05f;  // 0.05 m: 50% of the 0.1 m segment
    const std::vector<CheckResult> checks = runChecks(scene, desc, torn);
    expectFails(checks, "joints_not_torn", "limit < 0.02");
    expectFails(checks, "connected", "limit < 0.11");
  }
  {
    State nan(desc);
    nan.poses[5].q.w = kNaN;
    const std::vector<CheckResult> checks = runChecks(scene, desc, nan);
    expectFails(checks, "finite", "body 5");
    expectFails(checks, "joints_not_torn", "non-finite");
  }
  {
    State fast(desc);
    fast.angular[3] = {0.0f, 600.0f, 0.0f};
    expectFails(runChecks(scene, desc, fast), "bounded", "limit < 500");
  }
  {
    State sunk(desc);
    for (Transform& pose : sunk.poses) pose.p.z -= 0.6f;  // the whole scene 0.58 m under
    expectFails(runChecks(scene, desc, sunk), "above_ground", "limit > -0.5");
  }
  {
    // Cable 1's segment 40 laid on cable 1's segment 10: unjointed capsules inside each other.
    State overlap(desc);
    overlap.poses[64 + 40] = overlap.poses[64 + 10];
    expectFails(runChecks(scene, desc, overlap), "no_deep_interpenetration", "limit 0.005");
  }
}

// The integrity checks over a per-frame record: a bad frame fails them wherever it is, unless it
// comes before the frame the scene starts judging from; the detail names the worst frame.
TEST(CableChecks, EveryFrameRecordJudgesTheWorstFrame) {
  const RigidDesc desc = buildTwist();
  const State rest(desc);
  State overlap(desc), torn(desc);
  overlap.poses[64 + 40] = overlap.poses[64 + 10];  // unjointed capsules inside each other
  torn.poses[70].p.x += 0.05f;                      // a joint opened by half a segment
  CableIntegrityRecord record;
  record.record(desc, rest.poses, 1);
  record.record(desc, overlap.poses, 2);
  record.record(desc, torn.poses, 3);
  record.record(desc, rest.poses, 4);
  ASSERT_EQ(record.gapFractions().size(), 4u);
  EXPECT_NEAR(record.overlapFractions()[1], 2.0f, 1e-3f);  // coincident capsules: two radii deep
  const RigidCheckInput in{desc, rest.poses, rest.linear, rest.angular, 4, 4 / 60.0, &record};
  const std::vector<CheckResult> all = cableIntegrityChecks(in);
  expectFails(all, "no_deep_interpenetration", "1 of 4 frames");
  expectFails(all, "no_deep_interpenetration", "frame 2,");
  expectFails(all, "joints_not_torn", "2 of 4 frames");  // moving a capsule tears its joints too
  expectFails(all, "joints_not_torn", "in frame 2");
  const std::vector<CheckResult> late = cableIntegrityChecks(in, {.fromFrame = 3});
  expectFails(late, "joints_not_torn", "1 of 2 frames from frame 3");
  expectFails(late, "joints_not_torn", "in frame 3");
  EXPECT_TRUE(findCheck(late, "no_deep_interpenetration")->pass);
  for (const CheckResult& c : cableIntegrityChecks(in, {.fromFrame = 4}))
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
  // The final state alone (no record) sees none of it.
  for (const CheckResult& c :
       cableIntegrityChecks({desc, rest.poses, rest.linear, rest.angular, 4, 4 / 60.0}))
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
}

// ---- cable_pile --------------------------------------------------------------------------------

TEST(CablePile, DefaultAndBenchmarkSizesHaveTheReferencesCounts) {
  const Scene& scene = findScene("cable_pile");
  const RigidDesc full = scene.rigid.build(withOptions({}));
  EXPECT_EQ(full.numBodies(), 4000);
  EXPECT_EQ(full.numJoints(), 3900);
  EXPECT_EQ(full.numShapes(), 4001);
  EXPECT_EQ(countKinematic(full), 0);
  const RigidDesc benchmark = scene.rigid.build(withOptions({{"layers", "4"}}));
  EXPECT_EQ(benchmark.numBodies(), 1600);
  EXPECT_EQ(benchmark.numJoints(), 1560);
  EXPECT_EQ(benchmark.numShapes(), 1601);
  const RigidDesc small = scene.rigid.build(withOptions({{"layers", "2"}, {"lanes", "3"}}));
  EXPECT_EQ(small.numBodies(), 240);
  EXPECT_EQ(small.numJoints(), 234);
  EXPECT_EQ(small.numShapes(), 241);
}

TEST(CablePile, WavyLayersAlternateBetweenXAndY) {
  const RigidDesc desc = findScene("cable_pile").rigid.build(withOptions({{"layers", "4"}}));
  // Ground first (shape 0), as the reference adds it.
  EXPECT_EQ(desc.shapes[0].geometry.type, ShapeType::Plane);
  EXPECT_EQ(desc.shapes[0].body, -1);
  float shortest = INFINITY, longest = 0.0f, lightest = INFINITY, heaviest = 0.0f;
  for (int layer = 0; layer < 4; ++layer)
    for (int lane = 0; lane < 10; ++lane) {
      const bool alongX = layer % 2 == 0;
      const double offset = (lane - 4.5) * 0.15, z = 0.3 + 0.036 * layer;
      const auto point = [&](int i) {
        const double along = -1.0 + 0.05 * i;
        const double across = offset + 0.05 * std::sin(2.0 * std::numbers::pi * 2.0 * i / 40.0);
        return alongX ? Vec3{float(along), float(across), float(z)}
                      : Vec3{float(across), float(along), float(z)};
      };
      const int first = 40 * (10 * layer + lane);
      for (int i = 0; i < 40; ++i) {
        const BodyDesc& body = desc.bodies[size_t(first + i)];
        const Vec3 a = point(i), b = point(i + 1);
        EXPECT_LT(length(body.pose.p - (a + b) * 0.5f), 2e-6f)
            << "layer " << layer << " lane " << lane << " segment " << i;
        EXPECT_LT(length(rotate(body.pose.q, {0, 0, 1}) - (b - a) / length(b - a)), 1e-5f);
        const RigidShapeDesc& shape = desc.shapes[size_t(first + i) + 1];
        EXPECT_EQ(shape.body, first + i);
        EXPECT_EQ(shape.geometry.radius, 0.012f);
        // Solid capsule of the segment's own length: ρ(πr²·2hh + 4/3·πr³).
        const double halfHeight = 0.5 * length(b - a);
        const double r = 0.012,
                     mass = 1000.0 * std::numbers::pi * r * r * (2.0 * halfHeight + 4.0 / 3.0 * r);
        EXPECT_NEAR(shape.geometry.halfHeight, halfHeight, 1e-6);
        EXPECT_NEAR(body.mass, mass, 5e-6 * mass);  // float geometry: hh within ~1e-8 m
        shortest = std::min(shortest, shape.geometry.halfHeight);
        longest = std::max(longest, shape.geometry.halfHeight);
        lightest = std::min(lightest, body.mass);
        heaviest = std::max(heaviest, body.mass);
      }
    }
  // Within scenes_spec §6's ranges: half heights 0.025–0.0262, masses 0.02986–0.03094 kg (the
  // shortest segments straddle a crest, the longest a zero crossing).
  EXPECT_GE(shortest, 0.025f);
  EXPECT_LE(longest, 0.0262f);
  EXPECT_GE(lightest, 0.02986f);
  EXPECT_LE(heaviest, 0.03094f);
  EXPECT_NEAR(shortest, 0.5 * std::hypot(0.05, 0.05 * (1.0 - std::sin(0.4 * std::numbers::pi))),
              1e-6);
  EXPECT_NEAR(longest, 0.5 * std::hypot(0.05, 0.05 * std::sin(0.1 * std::numbers::pi)), 1e-6);
  // Frames by parallel transport along the first cable, whose nodes are the capsule ends.
  const RigidDesc& d = desc;
  std::vector<Vec3> nodes;
  nodes.push_back(d.bodies[0].pose.p -
                  rotate(d.bodies[0].pose.q, {0, 0, d.shapes[1].geometry.halfHeight}));
  for (int i = 0; i < 40; ++i)
    nodes.push_back(
        d.bodies[size_t(i)].pose.p +
        rotate(d.bodies[size_t(i)].pose.q, {0, 0, d.shapes[size_t(i) + 1].geometry.halfHeight}));
  const std::vector<Quat> frames = parallelTransportFrames(nodes);
  for (int i = 0; i < 40; ++i)
    expectSameRotation(d.bodies[size_t(i)].pose.q, frames[size_t(i)], 1e-5);
}

TEST(CablePile, MaterialsStiffnessAndGaps) {
  const RigidDesc desc = findScene("cable_pile").rigid.build(withOptions({{"layers", "2"}}));
  const RigidShapeDesc& ground = desc.shapes[0];
  EXPECT_EQ(ground.material.ke, 1.0e5f);
  EXPECT_EQ(ground.material.kd, 0.0f);
  EXPECT_EQ(ground.material.mu, 1.0e9f);
  for (const RigidShapeDesc& shape : desc.shapes) {
    EXPECT_EQ(shape.gap, 0.0f);
    if (shape.body < 0) continue;
    EXPECT_EQ(shape.material.ke, 1.0e5f);
    EXPECT_EQ(shape.material.kd, 0.0f);
    EXPECT_EQ(shape.material.mu, 1.0f);
  }
  for (const JointDesc& joint : desc.joints) {
    EXPECT_EQ(joint.stretchStiffness, 5.0e5f);
    EXPECT_EQ(joint.shearStiffness, 5.0e5f);
    EXPECT_EQ(joint.stretchDamping, 0.0f);
    EXPECT_EQ(joint.shearDamping, 0.0f);
    EXPECT_EQ(joint.bendStiffness, 1.0e2f);
    EXPECT_EQ(joint.twistStiffness, 1.0e2f);
    EXPECT_EQ(joint.bendDamping, 20.0f);
    EXPECT_EQ(joint.twistDamping, 20.0f);
  }
}

TEST(CablePile, RejectsBadOptions) {
  const Scene& scene = findScene("cable_pile");
  EXPECT_THAT(errorOf([&] {
                scene.rigid.build(withOptions({{"layer", "4"}}));
              }),
              AllOf(HasSubstr("unknown scene option 'layer'"), HasSubstr("layers, lanes")));
  EXPECT_THAT(errorOf([&] {
                scene.rigid.build(withOptions({{"layers", "four"}}));
              }),
              HasSubstr("layers=four is not a number"));
  for (const char* bad : {"0", "-2", "2.5"})
    EXPECT_THAT(errorOf([&] {
                  scene.rigid.build(withOptions({{"layers", bad}}));
                }),
                AllOf(HasSubstr("layers="), HasSubstr("whole number")))
        << bad;
  EXPECT_THAT(errorOf([&] {
                scene.rigid.build(withOptions({{"lanes", "0"}}));
              }),
              HasSubstr("lanes=0"));
}

TEST(CablePile, ChecksFailWhenThePileIsTooHighOrFallsThroughTheGround) {
  const Scene& scene = findScene("cable_pile");
  const RigidDesc desc = scene.rigid.build(withOptions({{"layers", "4"}}));
  {
    State high(desc);
    high.poses[100].p.z = 0.6f;  // limit 4·0.024 + 0.5 = 0.596
    expectFails(runChecks(scene, desc, high), "pile_height", "limit < 0.596 m for 4 layers");
  }
  {
    State low(desc);
    low.poses[7].p.z = -0.6f;
    const std::vector<CheckResult> checks = runChecks(scene, desc, low);
    expectFails(checks, "above_ground", "body 7");
    expectFails(checks, "joints_not_torn", "limit");
  }
  {
    State fast(desc);
    fast.linear[9] = {0.0f, 0.0f, -501.0f};
    expectFails(runChecks(scene, desc, fast), "velocities", "limit < 500");
  }
  {
    State nan(desc);
    nan.linear[11].x = kNaN;
    expectFails(runChecks(scene, desc, nan), "finite", "body 11's velocity");
  }
  // The default 10 layers rest up to 0.624 m; the check reads 10 layers from the rest heights.
  const RigidDesc full = scene.rigid.build(withOptions({}));
  const std::vector<CheckResult> checks = runChecks(scene, full, State(full));
  const CheckResult* height = findCheck(checks, "pile_height");
  ASSERT_NE(height, nullptr);
  EXPECT_TRUE(height->pass);
  EXPECT_THAT(height->detail, HasSubstr("10 layers"));
}

// ---- cable_bundle_hysteresis -------------------------------------------------------------------

RigidDesc buildBundle(std::map<std::string, std::string> values = {}) {
  return findScene("cable_bundle_hysteresis").rigid.build(withOptions(std::move(values)));
}

TEST(CableBundle, CountsWithFreeKinematicObstacles) {
  const RigidDesc desc = buildBundle();
  EXPECT_EQ(desc.numBodies(), 284);
  EXPECT_EQ(desc.numJoints(), 273);  // ROD joints only: the obstacles are free bodies, unjointed
  EXPECT_EQ(desc.numShapes(), 285);
  EXPECT_EQ(countKinematic(desc), 4);
  for (int b = 280; b < 284; ++b) {
    EXPECT_EQ(desc.jointOffsets[size_t(b)], desc.jointOffsets[size_t(b) + 1]) << "obstacle " << b;
    EXPECT_TRUE(desc.bodies[size_t(b)].kinematic);
    EXPECT_EQ(desc.bodies[size_t(b)].mass, 0.0f);
  }
  for (const JointDesc& joint : desc.joints) EXPECT_EQ(joint.type, JointType::Rod);
  const RigidDesc coarse = buildBundle({{"segments", "20"}});
  EXPECT_EQ(coarse.numBodies(), 144);
  EXPECT_EQ(coarse.numJoints(), 133);
  EXPECT_EQ(coarse.numShapes(), 145);
  EXPECT_NEAR(coarse.shapes[0].geometry.halfHeight, 0.1f, 1e-6f);
}

// The contact stiffness: held by default (cables 3e5, obstacles 1e7: docs/CABLES.md), the
// reference's with materials=reference (cables 1e5, obstacles the ShapeConfig default 2.5e3).
TEST(CableBundle, CablesFormTheSevenStrandCrossSection) {
  for (const bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "materials=reference" : "materials=held");
    const RigidDesc desc = reference ? buildBundle({{"materials", "reference"}}) : buildBundle();
    const float offsets[7][2] = {
        {0, 0},       {0.044f, 0},         {0.022f, 0.0381f}, {-0.022f, 0.0381f},
        {-0.044f, 0}, {-0.022f, -0.0381f}, {0.022f, -0.0381f}};
    for (int c = 0; c < 7; ++c)
      for (int i = 0; i < 40; ++i) {
        const BodyDesc& body = desc.bodies[size_t(40 * c + i)];
        EXPECT_NEAR(body.pose.p.x, -0.5f + 0.1f * (float(i) + 0.5f), 2e-6f);
        EXPECT_NEAR(body.pose.p.y, offsets[c][0], 1e-4f) << "cable " << c;
        EXPECT_NEAR(body.pose.p.z, 0.3f + offsets[c][1], 1e-4f) << "cable " << c;
        expectSameRotation(body.pose.q, {0.0f, std::sqrt(0.5f), 0.0f, std::sqrt(0.5f)}, 1e-6);
        EXPECT_NEAR(body.mass, 0.159174f, 1e-6f);
        EXPECT_FALSE(body.kinematic);
        const RigidShapeDesc& shape = desc.shapes[size_t(40 * c + i)];
        EXPECT_EQ(shape.geometry.radius, 0.02f);
        EXPECT_EQ(shape.material.ke, reference ? 1.0e5f : 3.0e5f);
        EXPECT_EQ(shape.material.kd, 10.0f);
        EXPECT_EQ(shape.material.mu, 1.0f);
        EXPECT_EQ(shape.gap, 0.05f);
      }
    for (const JointDesc& joint : desc.joints) {
      EXPECT_EQ(joint.stretchStiffness, 1.0e5f);
      EXPECT_EQ(joint.shearStiffness, 1.0e5f);
      EXPECT_EQ(joint.bendStiffness, 1.0e2f);
      EXPECT_EQ(joint.twistStiffness, 1.0e2f);
      EXPECT_EQ(joint.bendDamping, 5.0f);
      EXPECT_EQ(joint.twistDamping, 5.0f);
      EXPECT_EQ(joint.stretchDamping, 0.0f);
    }
    // Obstacles: vertical capsules r 0.05, hh 0.35 at x = 0.5 + 2i/3, y = ±0.3, z = 0.3.
    for (int i = 0; i < 4; ++i) {
      const BodyDesc& body = desc.bodies[size_t(280 + i)];
      EXPECT_NEAR(body.pose.p.x, 0.5f + 2.0f * float(i) / 3.0f, 1e-6f);
      EXPECT_EQ(body.pose.p.y, i % 2 == 0 ? 0.3f : -0.3f);
      EXPECT_EQ(body.pose.p.z, 0.3f);
      EXPECT_EQ(body.pose.q.w, 1.0f);
      const RigidShapeDesc& shape = desc.shapes[size_t(280 + i)];
      EXPECT_EQ(shape.body, 280 + i);
      EXPECT_EQ(shape.geometry.type, ShapeType::Capsule);
      EXPECT_EQ(shape.geometry.radius, 0.05f);
      EXPECT_EQ(shape.geometry.halfHeight, 0.35f);
      EXPECT_EQ(shape.material.ke, reference ? 2.5e3f : 1.0e7f);
      EXPECT_EQ(shape.material.kd, 100.0f);
      EXPECT_EQ(shape.material.mu, 0.0f);
      EXPECT_EQ(shape.gap, 0.05f);
    }
    const RigidShapeDesc& ground = desc.shapes[284];
    EXPECT_EQ(ground.geometry.type, ShapeType::Plane);
    EXPECT_EQ(ground.body, -1);
    EXPECT_EQ(ground.material.ke, 2.5e3f);
    EXPECT_EQ(ground.material.kd, 100.0f);
    EXPECT_EQ(ground.material.mu, 1.0f);
    EXPECT_EQ(ground.gap, 0.05f);
  }
  EXPECT_THROW(buildBundle({{"materials", "soft"}}), Error);
}

TEST(CableBundle, DahlOnEveryRodJointUnlessTurnedOff) {
  for (const JointDesc& joint : buildBundle().joints) {
    EXPECT_EQ(joint.dahlEpsMax, 2.0f);
    EXPECT_EQ(joint.dahlTau, 0.1f);
  }
  for (const JointDesc& joint : buildBundle({{"eps_max", "1.5"}, {"tau", "0.3"}}).joints) {
    EXPECT_EQ(joint.dahlEpsMax, 1.5f);
    EXPECT_EQ(joint.dahlTau, 0.3f);
  }
  // The reference's --no-dahl, and eps_max or tau of 0, turn it off.
  for (const auto& off : {std::map<std::string, std::string>{{"dahl", "0"}},
                          std::map<std::string, std::string>{{"eps_max", "0"}},
                          std::map<std::string, std::string>{{"tau", "0"}}})
    for (const JointDesc& joint : buildBundle(off).joints) {
      EXPECT_EQ(joint.dahlEpsMax, 0.0f);
      EXPECT_EQ(joint.dahlTau, 0.0f);
    }
}

TEST(CableBundle, ObstaclesFollowLoadHoldAndRelease) {
  const RigidDesc desc = buildBundle();
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(::testing::Message() << "obstacle " << i);
    const BodyDesc& body = desc.bodies[size_t(280 + i)];
    const float y0 = i % 2 == 0 ? 0.3f : -0.3f;
    ASSERT_EQ(body.motion.type, MotionType::Sampled);
    EXPECT_FLOAT_EQ(body.motion.sampleInterval, 1.0f / 600.0f);
    ASSERT_EQ(body.motionSamples.size(), 1203u);  // t ∈ [0, 2 + 2·dt]
    // Load: y = y₀·tri(t), linear from y₀ at t = 0 to −y₀ at t = 1 (0.6 m/s).
    const std::pair<float, float> load[] = {
        {0.0f, y0}, {0.25f, 0.5f * y0}, {0.5f, 0.0f}, {0.75f, -0.5f * y0}, {1.0f, -y0}};
    for (const auto& [t, y] : load) {
      const Transform pose = bodyPoseAt(body, t);
      EXPECT_NEAR(pose.p.y, y, 1e-5f) << "t " << t;
      EXPECT_NEAR(pose.p.x, body.pose.p.x, 1e-6f) << "t " << t;
      EXPECT_NEAR(pose.p.z, 0.3f, 1e-6f) << "t " << t;
      expectSameRotation(pose.q, Quat{}, 1e-6);
    }
    // Hold.
    for (float t : {1.2f, 1.5f, 1.99f}) {
      const Transform pose = bodyPoseAt(body, t);
      EXPECT_NEAR(pose.p.y, -y0, 1e-6f) << "t " << t;
      EXPECT_NEAR(pose.p.z, 0.3f, 1e-6f) << "t " << t;
    }
    // Release: 10 m up, for ever.
    for (float t : {2.0f + 1.0f / 600.0f, 2.1f, 3.0f, 100.0f}) {
      const Transform pose = bodyPoseAt(body, t);
      EXPECT_NEAR(pose.p.y, -y0, 1e-6f) << "t " << t;
      EXPECT_NEAR(pose.p.z, 10.3f, 1e-5f) << "t " << t;
    }
    // Substep ends k·dt of the sweep: exactly the closed form at the sample times.
    for (int k : {1, 7, 300, 599}) {
      const double t = k / 600.0;
      EXPECT_NEAR(bodyPoseAt(body, float(t)).p.y, y0 * (1.0 - 2.0 * t), 2e-5) << "substep " << k;
    }
  }
}

TEST(CableBundle, RejectsBadOptions) {
  EXPECT_THAT(errorOf([&] {
                buildBundle({{"no_dahl", "1"}});
              }),
              AllOf(HasSubstr("unknown scene option 'no_dahl'"),
                    HasSubstr("segments, eps_max, tau, dahl")));
  EXPECT_THAT(errorOf([&] {
                buildBundle({{"tau", "fast"}});
              }),
              HasSubstr("tau=fast is not a number"));
  for (const char* bad : {"1", "0", "12.5", "-4"})
    EXPECT_THAT(errorOf([&] { buildBundle({{"segments", bad}}); }), HasSubstr("segments=")) << bad;
  EXPECT_THAT(errorOf([&] { buildBundle({{"dahl", "2"}}); }), HasSubstr("dahl must be 0"));
  EXPECT_THAT(errorOf([&] { buildBundle({{"eps_max", "-1"}}); }), HasSubstr("eps_max must be"));
  EXPECT_THAT(errorOf([&] { buildBundle({{"tau", "-1"}}); }), HasSubstr("tau must be"));
}

/// The bundle after the release with every cable folded into a V in the xy-plane: its 40
/// segments keep their 0.1 m length and turn by ±alpha about z (the first 20 toward +y, the rest
/// back), each capsule along its segment, so no joint opens; the obstacles are 10 m up.
/// Straightness is then 3.9·cos(alpha) / (3.8 + 0.1·cos(alpha)) and the arc-length ratio ≈ 1.
State foldedBundle(const RigidDesc& desc, float alpha) {
  State state(desc);
  for (int c = 0; c < 7; ++c) {
    const int first = 40 * c;
    const BodyDesc& start = desc.bodies[size_t(first)];
    Vec3 node = start.pose.p - rotate(start.pose.q, {0.0f, 0.0f, 0.05f});
    for (int i = 0; i < 40; ++i) {
      const Vec3 d{std::cos(alpha), i < 20 ? std::sin(alpha) : -std::sin(alpha), 0.0f};
      state.poses[size_t(first + i)] = {node + d * 0.05f, shortestArc({0, 0, 1}, d)};
      node = node + d * 0.1f;
    }
  }
  for (int b = 280; b < 284; ++b) state.poses[size_t(b)].p.z += 10.0f;
  return state;
}

TEST(CableBundle, ShapeChecksApplyOnlyAfterTheReleaseAndFollowDahl) {
  const Scene& scene = findScene("cable_bundle_hysteresis");
  const RigidDesc dahl = buildBundle();
  const RigidDesc elastic = buildBundle({{"dahl", "0"}});
  // Before t = 2.4 s (the default 20 frames) only the generic checks run.
  EXPECT_EQ(findCheck(runChecks(scene, dahl, State(dahl), 20.0 / 60.0), "arc_length"), nullptr);
  // After it: straight cables pass without Dahl and fail with it (they should keep a bend).
  const double late = 150.0 / 60.0;
  expectAllPass(runChecks(scene, elastic, State(elastic), late));
  expectFails(runChecks(scene, dahl, State(dahl), late), "keeps_bend", "limits [0.5, 0.9]");
  // Folded by 30°: straightness 3.377 / 3.887 = 0.869, a kept bend.
  const float alpha = float(std::numbers::pi / 6.0);
  expectAllPass(runChecks(scene, dahl, foldedBundle(dahl, alpha), late));
  expectFails(runChecks(scene, elastic, foldedBundle(elastic, alpha), late), "recovers",
              "limit >= 0.9");
  // Folded by 80°: straightness 0.18, too bent even with Dahl.
  expectFails(runChecks(scene, dahl, foldedBundle(dahl, 1.396f), late), "keeps_bend",
              "limits [0.5, 0.9]");
  // Stretched by 30% along x: the arc-length ratio is 1.3.
  State stretched(dahl);
  for (Transform& pose : stretched.poses) pose.p.x = -0.5f + 1.3f * (pose.p.x + 0.5f);
  expectFails(runChecks(scene, dahl, stretched, late), "arc_length", "limits [0.8, 1.2]");
}

TEST(CableBundle, ChecksFailOnATornCableOrAnObstacleInsideTheBundle) {
  const Scene& scene = findScene("cable_bundle_hysteresis");
  const RigidDesc desc = buildBundle();
  {
    State torn(desc);
    for (int i = 20; i < 40; ++i) torn.poses[size_t(i)].p.x += 0.2f;
    expectFails(runChecks(scene, desc, torn), "joints_not_torn", "joint 19");
  }
  {
    State pushed(desc);
    pushed.poses[281].p = {1.1667f, 0.0f, 0.3f};  // obstacle 1 through the bundle's middle
    expectFails(runChecks(scene, desc, pushed), "no_deep_interpenetration", "shapes");
  }
}

// ---- cable_y_junction --------------------------------------------------------------------------

RigidDesc buildY() {
  return findScene("cable_y_junction").rigid.build(withOptions({}));
}

TEST(CableYJunction, CountsFramesAndTheBfsForest) {
  const RigidDesc desc = buildY();
  EXPECT_EQ(desc.numBodies(), 60);
  EXPECT_EQ(desc.numJoints(), 59);
  EXPECT_EQ(desc.numShapes(), 61);
  EXPECT_EQ(countKinematic(desc), 1);
  // Edge 0 is the parent of edges 20 and 40 at J (both anchors at −hh) and of edge 1.
  const std::pair<int, int> first[] = {{0, 20}, {0, 40}, {0, 1}};
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(desc.joints[size_t(j)].parent, first[j].first);
    EXPECT_EQ(desc.joints[size_t(j)].child, first[j].second);
  }
  EXPECT_NEAR(desc.joints[0].parentAnchor.p.z, -0.015f, 1e-6f);
  EXPECT_NEAR(desc.joints[0].childAnchor.p.z, -0.015f, 1e-6f);
  EXPECT_NEAR(desc.joints[1].parentAnchor.p.z, -0.015f, 1e-6f);
  EXPECT_NEAR(desc.joints[2].parentAnchor.p.z, 0.015f, 1e-6f);
  // The unjointed pair at J never collides: 59 jointed pairs + (20, 40).
  EXPECT_EQ(desc.filteredShapePairs.size(), 60u);
  EXPECT_TRUE(std::binary_search(desc.filteredShapePairs.begin(), desc.filteredShapePairs.end(),
                                 std::pair{20, 40}));
  EXPECT_EQ(jointedBodyGroups(desc).size(), 1u);
  // Branch b's edge i: centre J + 0.03·(i + ½)·d_b, its own shortest arc from +z.
  const float s = 0.5f * std::sqrt(3.0f);
  const Vec3 directions[3] = {{1, 0, 0}, {-0.5f, s, 0}, {-0.5f, -s, 0}};
  for (int e = 0; e < 60; ++e) {
    const Vec3& d = directions[e / 20];
    const BodyDesc& body = desc.bodies[size_t(e)];
    const Vec3 centre = Vec3{0, 0, 1.25f} + d * (0.03f * (float(e % 20) + 0.5f));
    EXPECT_LT(length(body.pose.p - centre), 2e-6f) << "edge " << e;
    expectSameRotation(body.pose.q, shortestArc({0, 0, 1}, d), 1e-6);
  }
}

TEST(CableYJunction, MaterialsMassesAndThePinnedTip) {
  const RigidDesc desc = buildY();
  for (int e = 0; e < 60; ++e) {
    const BodyDesc& body = desc.bodies[size_t(e)];
    const RigidShapeDesc& shape = desc.shapes[size_t(e)];
    EXPECT_EQ(shape.geometry.radius, 0.01f);
    EXPECT_NEAR(shape.geometry.halfHeight, 0.015f, 1e-6f);
    if (e == 19) continue;
    EXPECT_NEAR(body.mass, 0.0136136f, 1e-7f) << "edge " << e;
    EXPECT_FALSE(body.kinematic);
  }
  const BodyDesc& pinned = desc.bodies[19];
  EXPECT_TRUE(pinned.kinematic);
  EXPECT_EQ(pinned.mass, 0.0f);
  EXPECT_EQ(pinned.inertia(1, 1), 0.0f);
  EXPECT_EQ(pinned.motion.type, MotionType::Static);
  EXPECT_LT(length(pinned.pose.p - Vec3{0.585f, 0.0f, 1.25f}), 1e-6f);
  EXPECT_LT(length(bodyPoseAt(pinned, 5.0f).p - pinned.pose.p), 1e-9f);
  for (const RigidShapeDesc& shape : desc.shapes) {
    EXPECT_EQ(shape.material.ke, 1.0e4f);
    EXPECT_EQ(shape.material.kd, 0.0f);
    EXPECT_EQ(shape.material.mu, 1.0f);
    EXPECT_EQ(shape.gap, 0.002f);
  }
  EXPECT_EQ(desc.shapes[60].geometry.type, ShapeType::Plane);
  for (const JointDesc& joint : desc.joints) {
    EXPECT_EQ(joint.stretchStiffness, 1.0e7f);
    EXPECT_EQ(joint.shearStiffness, 1.0e7f);
    EXPECT_EQ(joint.bendStiffness, 5.0e3f);
    EXPECT_EQ(joint.twistStiffness, 5.0e3f);
    EXPECT_EQ(joint.bendDamping, 1.0e3f);
    EXPECT_EQ(joint.twistDamping, 1.0e3f);
    EXPECT_EQ(joint.stretchDamping, 0.0f);
  }
}

TEST(CableYJunction, ColoringIsTheUnbalancedOne) {
  const RigidDesc desc = buildY();
  ColoringOptions unbalanced;
  unbalanced.balance = false;
  const Coloring expected = colorGraph(desc.numBodies(), jointEdges(desc), unbalanced);
  EXPECT_EQ(desc.bodyColorOffsets, expected.colorOffsets);
  EXPECT_EQ(desc.bodiesByColor, expected.particlesByColor);
}

TEST(CableYJunction, ChecksFailWhenThePinMovesTheYDriftsOrAJointIsMissing) {
  const Scene& scene = findScene("cable_y_junction");
  const RigidDesc desc = buildY();
  {
    State moved(desc);
    moved.poses[19].p.z -= 2e-4f;
    expectFails(runChecks(scene, desc, moved), "pinned", "limit 0.0001");
  }
  {
    State drifted(desc);
    drifted.poses[45].p.y = -2.5f;
    const std::vector<CheckResult> checks = runChecks(scene, desc, drifted);
    expectFails(checks, "bounded", "limit 2");
    expectFails(checks, "joints_not_torn", "limit");
  }
  {
    State fallen(desc);
    for (Transform& pose : fallen.poses) pose.p.z = -0.3f;
    expectFails(runChecks(scene, desc, fallen), "bounded", "limits [-0.2, 3]");
  }
  {
    State nan(desc);
    nan.poses[3].p.x = kNaN;
    const std::vector<CheckResult> checks = runChecks(scene, desc, nan);
    expectFails(checks, "finite", "body 3");
    EXPECT_FALSE(findCheck(checks, "bounded")->pass);
  }
  {
    RigidDesc cut = desc;
    cut.joints.erase(cut.joints.begin() + 10);  // one branch falls off
    const std::vector<CheckResult> checks = runChecks(scene, cut, State(cut));
    expectFails(checks, "connected", "jointed groups: 2");
    // A property of the model, not of the run: information.
    EXPECT_TRUE(findCheck(checks, "connected")->informational);
  }
}

}  // namespace
}  // namespace weft
