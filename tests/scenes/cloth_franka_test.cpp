// cloth_franka (scenes_spec §3): the default garment is the reference's own shirt (compiled in,
// equal to `--mesh assets/unisex_shirt.obj`) with its counts and placement; the tube=1 stand-in
// has the spec's counts, mass and placement; the settings are the reference's but for the
// self-contact exclusion; the gripper starts at the reference's FK pose and follows the 33-row
// key-pose schedule (checked against an independent closed-form solution in double precision,
// through the sampled shape trajectories the solver reads); two frames on the CPU, and on CUDA the
// reference's 50 frames and 300 frames with the shirt and 50 with the tube, pass the scene's
// checks with no self-intersection in any frame.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <optional>

#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "math_test_support.h"
#include "scene_test_support.h"
#include "scenes/scene.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using Vec3d = Eigen::Vector3d;
using Quatd = Eigen::Quaterniond;
using test::toEigen;  // math_test_support.h

constexpr double kPi = std::numbers::pi;

const Scene& franka() {
  return findScene("cloth_franka");
}

const ModelDesc& tubeDesc() {
  static const ModelDesc desc = [] {
    SceneOptions options;
    options.values["tube"] = "1";
    return franka().cloth.build(options);
  }();
  return desc;
}

/// The default garment: the reference's shirt.
const ModelDesc& shirtDesc() {
  static const ModelDesc desc = franka().cloth.build({});
  return desc;
}

/// Pose of shape s at time t, read from its samples as the solver does (kernels/kinematics.h).
Transform shapePose(const ModelDesc& desc, int s, double t) {
  return shapePoseAt(desc.shapes[size_t(s)], float(t));
}

int shapeIndex(const ModelDesc& desc, const std::string& name) {
  for (size_t s = 0; s < desc.shapes.size(); ++s)
    if (desc.shapes[s].name == name) return int(s);
  ADD_FAILURE() << "no shape named " << name;
  return 0;
}

/// What the gripper's shapes say about it at time t: the EE point (the palm is centred at hand
/// (0, −0.2, 2.0) and the EE lies 11.3 cm along the tool axis from the hand origin), link7's
/// tool axis, the hand's y axis and the finger opening q (pad centres are 2q + 1.516 apart).
struct Gripper {
  Vec3d ee, toolAxis, handY;
  double opening;
};
Gripper gripperAt(const ModelDesc& desc, double t) {
  const Transform palm = shapePose(desc, shapeIndex(desc, "palm"), t);
  const Transform left = shapePose(desc, shapeIndex(desc, "left pad"), t);
  const Transform right = shapePose(desc, shapeIndex(desc, "right pad"), t);
  Gripper g;
  g.ee = toEigen(transformPoint(palm, {0.0f, 0.2f, 9.3f}));
  g.toolAxis = toEigen(rotate(palm.q, {0.0f, 0.0f, 1.0f}));
  g.handY = toEigen(rotate(palm.q, {0.0f, 1.0f, 0.0f}));
  g.opening = 0.5 * ((toEigen(left.p) - toEigen(right.p)).norm() - 1.516);
  return g;
}

// ---- Independent schedule: scenes_spec §3's key-pose table, solved in closed form -----------

struct Key {
  double duration;
  Vec3d position;
  bool tilted;
  double activation;
};
const std::array<Key, 33> kKeys{{
    {4, {31, -60, 40}, true, 0.8},     {2, {31, -60, 20}, true, 0.8},
    {2, {31, -60, 20}, true, 0.1},     {2, {26, -60, 26}, true, 0.1},
    {2, {12, -60, 31}, true, 0.1},     {3, {-6, -60, 31}, true, 0.1},
    {1, {-6, -60, 31}, true, 0.8},     {2, {15, -33, 31}, true, 0.8},
    {3, {15, -33, 21}, true, 0.8},     {3, {15, -33, 21}, true, 0.1},
    {2, {15, -33, 28}, true, 0.1},     {3, {-2, -33, 28}, true, 0.1},
    {1, {-2, -33, 28}, true, 0.8},     {2, {-28, -60, 28}, false, 0.8},
    {2, {-28, -60, 20}, false, 0.8},   {2, {-28, -60, 20}, false, 0.1},
    {2, {-18, -60, 31}, false, 0.1},   {3, {5, -60, 31}, false, 0.1},
    {1, {5, -60, 31}, false, 0.8},     {3, {-18, -30, 20.5}, false, 0.8},
    {3, {-18, -30, 20.5}, false, 0.1}, {2, {-3, -30, 31}, false, 0.1},
    {3, {-3, -30, 31}, false, 0.1},    {2, {-3, -30, 31}, false, 0.8},
    {2, {0, -20, 30}, false, 0.8},     {2, {0, -20, 19.5}, false, 0.8},
    {2, {0, -20, 19.5}, false, 0.1},   {2, {0, -20, 35}, false, 0.1},
    {1, {0, -30, 35}, false, 0.1},     {1.5, {0, -30, 35}, false, 0.1},
    {1.5, {0, -40, 35}, false, 0.1},   {1.5, {0, -40, 35}, false, 0.8},
    {2, {-28, -60, 28}, false, 0.8},
}};
// Quaternions (x, y, z, w) of the table; Eigen's constructor takes (w, x, y, z).
const Quatd kA(-0.1464, 0.8536, -0.3536, 0.3536);
const Quatd kB(0.0, 0.9239, -0.3827, 0.0);

struct Expected {
  double time;
  Vec3d ee;
  Quatd orientation;
  double opening;
};

/// Newton 1.8.0's IK target for frame k (update_ik_targets at sim_time s = (k+1)/60): row
/// i = searchsorted(cum, s, left), blended linearly from row i − 1 (row 0: from the initial FK
/// pose, with row 0's activation) by α = clamp((s − cum(i−1))/duration(i), 0, 1), the quaternion
/// normalized, the fingers at 4·activation; no new target from s >= 70.5 s on (nullopt).
/// The initial FK pose (link7 turned a half-turn about the bisector of z and the tool axis) with
/// the given finger opening.
Expected initialPose(double opening) {
  const Vec3d tool = Vec3d(0.803856, 0.0, -0.594824).normalized();
  const Vec3d n = (Vec3d::UnitZ() + tool).normalized();
  return {0.0, Vec3d(19.7719, -50.0, 66.1308), Quatd(0.0, n.x(), n.y(), n.z()), opening};
}

std::optional<Expected> frameTarget(int frame) {
  const double s = (frame + 1) / 60.0;
  if (s >= 70.5 - 1e-9) return std::nullopt;
  Expected previous = initialPose(4.0 * kKeys[0].activation);
  double start = 0.0;
  for (const Key& key : kKeys) {
    const Quatd q = (key.tilted ? kA : kB).normalized();
    if (start + key.duration >= s - 1e-9) {
      const double alpha = std::clamp((s - start) / key.duration, 0.0, 1.0);
      Quatd blended;
      blended.coeffs() = (1 - alpha) * previous.orientation.coeffs() + alpha * q.coeffs();
      return Expected{s, (1 - alpha) * previous.ee + alpha * key.position, blended.normalized(),
                      (1 - alpha) * previous.opening + alpha * 4.0 * key.activation};
    }
    previous = {0.0, key.position, q, 4.0 * key.activation};
    start += key.duration;
  }
  return std::nullopt;
}

/// The gripper at time t: during frame k it moves linearly from frame k − 1's target (frame −1:
/// the initial pose, fingers closed) to frame k's, reaching it at the frame's end; after the last
/// target it holds.
Expected expectedAt(double t) {
  Expected from = initialPose(0.0);  // fingers closed
  const int frame = int(std::floor(t * 60.0 + 1e-9));
  for (int k = std::min(frame, 4229) - 1; k >= 0; --k)
    if (const auto target = frameTarget(k)) {  // the latest target before frame `frame`
      from = *target;
      break;
    }
  const std::optional<Expected> to = frameTarget(frame);
  if (!to) return from;
  const double w = t * 60.0 - frame;
  Expected e;
  e.time = t;
  e.ee = (1 - w) * from.ee + w * to->ee;
  e.orientation.coeffs() = (1 - w) * from.orientation.coeffs() + w * to->orientation.coeffs();
  e.orientation.normalize();
  e.opening = (1 - w) * from.opening + w * to->opening;
  return e;
}

// ---- Model ---------------------------------------------------------------------------------

TEST(ClothFranka, TubeGarmentHasTheSpecCounts) {
  const ModelDesc& desc = tubeDesc();
  EXPECT_EQ(desc.numParticles(), 6400);
  EXPECT_EQ(desc.numTriangles(), 12600);
  EXPECT_EQ(desc.numEdges(), 19000);
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, false), "");
  std::printf("cloth_franka: %d colors (coloring without bending)\n", desc.coloring.numColors());
  EXPECT_GE(desc.coloring.numColors(), 3);
  EXPECT_LE(desc.coloring.numColors(), 10);
}

TEST(ClothFranka, TubeGarmentHasTheSpecShapeAndMass) {
  const ModelDesc& desc = tubeDesc();
  Vec3 lower{1e30f, 1e30f, 1e30f}, upper{-1e30f, -1e30f, -1e30f};
  for (const Vec3& x : desc.positions) {
    lower = cwiseMin(lower, x);
    upper = cwiseMax(upper, x);
  }
  EXPECT_NEAR(lower.x, -26.0f, 1e-3f);
  EXPECT_NEAR(upper.x, 26.0f, 0.1f);
  EXPECT_NEAR(lower.y, -82.6f, 1e-3f);
  EXPECT_NEAR(upper.y, -18.0f, 1e-3f);
  EXPECT_NEAR(lower.z, 11.6f, 1e-3f);  // the back wall, inside the table (top at 20)
  EXPECT_NEAR(upper.z, 35.6f, 1e-3f);

  // Every quad is a planar rectangle: area = polygon perimeter × length; mass = 0.02 × area.
  double perimeter = 0.0;
  for (int k = 0; k < 100; ++k) {
    const double a = 2 * kPi * k / 100, b = 2 * kPi * (k + 1) / 100;
    perimeter += std::hypot(26 * (std::cos(b) - std::cos(a)), 12 * (std::sin(b) - std::sin(a)));
  }
  const double area = perimeter * 64.6;
  double restArea = 0.0, mass = 0.0;
  for (float a : desc.triangleRestAreas) restArea += a;
  for (float m : desc.masses) {
    EXPECT_GT(m, 0.0f);  // nothing is fixed
    mass += m;
  }
  EXPECT_NEAR(restArea, area, 1e-4 * area);
  EXPECT_NEAR(mass, 0.02 * area, 1e-4 * 0.02 * area);
  EXPECT_NEAR(area, 7970.0, 30.0);  // the spec's "about 7900 cm²"

  for (float angle : desc.edgeRestAngles) ASSERT_EQ(angle, 0.0f);  // zeroed, as the reference
  for (float r : desc.radii) ASSERT_EQ(r, 0.8f);
  for (const TriangleMaterial& m : desc.triangleMaterials) {
    ASSERT_EQ(m.ke, 1.0e4f);
    ASSERT_EQ(m.ka, 1.0e4f);
    ASSERT_EQ(m.kd, 1.5e-2f);
  }
  for (const EdgeMaterial& m : desc.edgeMaterials) {
    ASSERT_EQ(m.ke, 5.0f);
    ASSERT_EQ(m.kd, 0.5f);
  }

  // About 40% of the tube starts inside the table (32% of the reference's shirt).
  int inside = 0;
  for (const Vec3& x : desc.positions) inside += x.z < 20.0f;
  EXPECT_NEAR(inside / 6400.0, 0.40, 0.03);
}

TEST(ClothFranka, EnvironmentAndSettingsAreTheReferences) {
  const Scene& scene = franka();
  EXPECT_EQ(scene.units, "cm, g, s");
  EXPECT_EQ(scene.fps, 60.0);
  EXPECT_EQ(scene.substeps, 10);
  EXPECT_EQ(scene.defaultFrames, 50);
  EXPECT_TRUE(scene.cloth.checksSelfIntersections);
  const SolverOptions& o = scene.cloth.solver;
  EXPECT_EQ(o.iterations, 5);
  EXPECT_EQ(o.gravity.z, -981.0f);
  EXPECT_EQ(o.particleContact.ke, 1.0e4f);
  EXPECT_EQ(o.particleContact.kd, 10.0f);
  EXPECT_EQ(o.particleContact.mu, 0.25f);
  EXPECT_EQ(o.shapeContactMargin, 0.8f);
  EXPECT_TRUE(o.selfContact.enabled);
  EXPECT_EQ(o.selfContact.radius, 0.2f);
  EXPECT_EQ(o.selfContact.margin, 0.2f);
  EXPECT_EQ(o.selfContact.detectionInterval, -1);
  EXPECT_EQ(o.selfContact.topologicalFilter, 1);
  EXPECT_EQ(o.selfContact.restExclusion, 0.0f);  // the reference's 0.5: see the scene file
  EXPECT_EQ(o.selfContact.bvhRebuildInterval, 1);
  EXPECT_EQ(o.selfContact.vertexTriangleCapacity, 16);
  EXPECT_EQ(o.selfContact.edgeEdgeCapacity, 20);
  EXPECT_EQ(o.selfContact.triangleVertexCapacity, 16);

  const ModelDesc& desc = tubeDesc();
  ASSERT_EQ(desc.shapes.size(), 11u);  // table, ground, palm, 4 boxes per finger
  for (const ShapeDesc& s : desc.shapes) {
    EXPECT_EQ(s.material.ke, 5.0e4f) << s.name;
    EXPECT_EQ(s.material.kd, 50.0f) << s.name;
    EXPECT_EQ(s.material.mu, 1.5f) << s.name;
  }
  const ShapeDesc& table = desc.shapes[size_t(shapeIndex(desc, "table"))];
  EXPECT_EQ(table.geometry.type, ShapeType::Box);
  EXPECT_EQ(table.motion.type, MotionType::Static);
  EXPECT_EQ(table.motion.pose0.p, (Vec3{0.0f, -50.0f, 10.0f}));
  EXPECT_EQ(table.geometry.halfExtents, (Vec3{40.0f, 40.0f, 10.0f}));
  EXPECT_EQ(desc.shapes[size_t(shapeIndex(desc, "ground"))].geometry.type, ShapeType::Plane);
  const ShapeDesc& pad = desc.shapes[size_t(shapeIndex(desc, "left pad"))];
  EXPECT_EQ(pad.motion.type, MotionType::Sampled);
  EXPECT_NEAR(pad.geometry.halfExtents.x, 0.875f, 1e-6f);  // 1.75 × 1.52 × 1.85 cm
  EXPECT_NEAR(pad.geometry.halfExtents.y, 0.76f, 1e-6f);
  EXPECT_NEAR(pad.geometry.halfExtents.z, 0.925f, 1e-6f);
  const ShapeDesc& palm = desc.shapes[size_t(shapeIndex(desc, "palm"))];
  EXPECT_NEAR(palm.geometry.halfExtents.x, 3.2f, 1e-6f);  // 6.4 × 20.4 × 9.2 cm
  EXPECT_NEAR(palm.geometry.halfExtents.y, 10.2f, 1e-6f);
  EXPECT_NEAR(palm.geometry.halfExtents.z, 4.6f, 1e-6f);
}

// ---- Gripper ---------------------------------------------------------------------------------

TEST(ClothFranka, GripperStartsAtTheReferenceEndEffectorPose) {
  const ModelDesc& desc = tubeDesc();
  const Gripper g = gripperAt(desc, 0.0);
  EXPECT_NEAR((g.ee - Vec3d(19.77, -50.0, 66.13)).norm(), 0.0, 0.01);
  EXPECT_NEAR((g.toolAxis - Vec3d(0.804, 0.0, -0.595)).norm(), 0.0, 1e-3);
  EXPECT_NEAR(g.opening, 0.0, 1e-4);
  // The pads' bottom faces are the EE point (the pads end 21.99 cm along the tool axis from
  // link7, the EE is at 22): the midpoint of the two pad bottoms lies on it.
  for (const char* name : {"left pad", "right pad"}) {
    const Transform pad = shapePose(desc, shapeIndex(desc, name), 0.0);
    const Vec3d bottom = toEigen(transformPoint(pad, {0.0f, 0.0f, 0.925f}));
    EXPECT_NEAR((bottom - g.ee).dot(g.toolAxis), -0.01, 1e-3) << name;
    EXPECT_NEAR(std::abs((bottom - g.ee).dot(g.handY)), 0.758, 1e-3) << name;
  }
  // Link7's y is world −y at the start (FK), so the hand is turned −45° from it about the tool.
  EXPECT_NEAR(g.handY.dot(Vec3d(0, -1, 0)), std::cos(kPi / 4), 1e-3);
}

TEST(ClothFranka, GripperFollowsTheKeyPoseSchedule) {
  const ModelDesc& desc = shirtDesc();
  // Frame ends (each frame's target reached) and points inside frames, over the whole schedule
  // and past its end.
  std::vector<double> times;
  for (int frame = 0; frame < 4300; frame += 37) {
    times.push_back((frame + 1) / 60.0);
    times.push_back((frame + 0.3) / 60.0);
  }
  for (double t : times) {
    SCOPED_TRACE("t = " + std::to_string(t));
    const Expected e = expectedAt(t);
    const Gripper g = gripperAt(desc, t);
    EXPECT_NEAR((g.ee - e.ee).norm(), 0.0, 5e-3);
    const Vec3d toolAxis = e.orientation * Vec3d::UnitZ();
    const Quatd hand = e.orientation * Quatd(Eigen::AngleAxisd(-kPi / 4, Vec3d::UnitZ()));
    EXPECT_NEAR((g.toolAxis - toolAxis).norm(), 0.0, 2e-3);
    EXPECT_NEAR((g.handY - hand * Vec3d::UnitY()).norm(), 0.0, 2e-3);
    EXPECT_NEAR(g.opening, e.opening, 2e-3);
  }
}

TEST(ClothFranka, GripperReachesTheKeyPosesAndOpensAndCloses) {
  const ModelDesc& desc = shirtDesc();
  // Frame 0 opens the fingers to 4 × 0.8 = 3.2 cm.
  EXPECT_NEAR(gripperAt(desc, 1.0 / 60.0).opening, 3.2, 1e-3);
  // Row 0 ends at 4 s exactly on its pose, tilted 45°, open.
  Gripper g = gripperAt(desc, 4.0);
  EXPECT_LT((g.ee - Vec3d(31, -60, 40)).norm(), 5e-3);
  EXPECT_NEAR(g.opening, 3.2, 1e-3);
  EXPECT_NEAR((g.toolAxis - Vec3d(0.7071, 0, -0.7071)).norm(), 0.0, 1e-3);
  // Row 2 closes the fingers at (31, −60, 20) to 0.4 cm, halfway by 7 s.
  EXPECT_NEAR(gripperAt(desc, 7.0).opening, 0.5 * (3.2 + 0.4), 1e-3);
  g = gripperAt(desc, 8.0);
  EXPECT_LT((g.ee - Vec3d(31, -60, 20)).norm(), 5e-3);
  EXPECT_NEAR(g.opening, 0.4, 1e-3);
  // Row 13 turns to orientation B: the tool points straight down and the fingers close along
  // world y; row 17 ends at (5, −60, 31).
  g = gripperAt(desc, 41.0);
  EXPECT_GT(-g.toolAxis.z(), 0.9999);
  EXPECT_GT(std::abs(g.handY.y()), 0.9999);
  EXPECT_LT((g.ee - Vec3d(5, -60, 31)).norm(), 5e-3);
  // The last target is set for frame 4228 (s = 70.4833 s, α = 0.99167 into the last row, from
  // (0, −40, 35) toward (−28, −60, 28)); the pose holds from the end of that frame on.
  const Gripper end = gripperAt(desc, 4229.0 / 60.0), later = gripperAt(desc, 100.0);
  EXPECT_LT((end.ee - later.ee).norm(), 1e-3);  // (t in float: ~1e-5 s from the sample)
  const double alpha = (4229.0 / 60.0 - 68.5) / 2.0;
  EXPECT_LT((end.ee - ((1 - alpha) * Vec3d(0, -40, 35) + alpha * Vec3d(-28, -60, 28))).norm(),
            5e-3);
}

TEST(ClothFranka, GripperStaysClearOfTheClothDuringTheDefaultFrames) {
  // The reference's 50-frame test never touches the cloth: the EE descends to ≈ 60.7 cm
  // (a fifth of the way to row 0's 40 cm) with the fingers open 3.2 cm; the shirt's top is at
  // 37.4 cm (the tube's at 35.6).
  const ModelDesc& desc = shirtDesc();
  const double tEnd = 50.0 / 60.0;
  const Gripper g = gripperAt(desc, tEnd);
  EXPECT_NEAR(g.ee.z(), 66.1308 + (tEnd / 4.0) * (40.0 - 66.1308), 5e-3);
  EXPECT_NEAR(g.opening, 3.2, 1e-3);
  double lowest = 1e30;
  for (size_t s = 0; s < desc.shapes.size(); ++s) {
    if (desc.shapes[s].motion.type != MotionType::Sampled) continue;
    const Vec3 h = desc.shapes[s].geometry.halfExtents;
    for (int k = 0; k <= 500; ++k) {
      const Transform pose = shapePose(desc, int(s), tEnd * k / 500);
      for (int c = 0; c < 8; ++c) {
        const Vec3 corner{c & 1 ? h.x : -h.x, c & 2 ? h.y : -h.y, c & 4 ? h.z : -h.z};
        lowest = std::min(lowest, double(transformPoint(pose, corner).z));
      }
    }
  }
  EXPECT_GT(lowest, 37.4 + 1.6 + 5.0);  // beyond the contact distance, with room to spare
}

// ---- --mesh ----------------------------------------------------------------------------------

std::string shirtPath() {
  return std::string(WEFT_SOURCE_DIR) + "/assets/unisex_shirt.obj";
}

TEST(ClothFranka, MeshOptionLoadsTheReferenceShirtWhereTheReferencePutsIt) {
  ASSERT_TRUE(std::filesystem::exists(shirtPath()))
      << "the shipped shirt is missing: " << shirtPath();
  SceneOptions options;
  options.meshPath = shirtPath();
  const ModelDesc desc = franka().cloth.build(options);
  EXPECT_EQ(desc.numParticles(), 6436);
  EXPECT_EQ(desc.numTriangles(), 12736);
  EXPECT_EQ(desc.numEdges(), 19174);
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, false), "");
  std::printf("cloth_franka --mesh unisex_shirt.obj: %d colors\n", desc.coloring.numColors());
  Vec3 lower{1e30f, 1e30f, 1e30f}, upper{-1e30f, -1e30f, -1e30f};
  for (const Vec3& x : desc.positions) {
    lower = cwiseMin(lower, x);
    upper = cwiseMax(upper, x);
  }
  // World bbox x [−32.51, 32.61], y [−82.59, −18.01], z [9.88, 37.37] (scenes_spec §3).
  EXPECT_NEAR(lower.x, -32.513f, 2e-3f);
  EXPECT_NEAR(upper.x, 32.609f, 2e-3f);
  EXPECT_NEAR(lower.y, -82.592f, 2e-3f);
  EXPECT_NEAR(upper.y, -18.009f, 2e-3f);
  EXPECT_NEAR(lower.z, 9.884f, 2e-3f);
  EXPECT_NEAR(upper.z, 37.369f, 2e-3f);
  double mass = 0.0;
  for (float m : desc.masses) mass += m;
  EXPECT_NEAR(mass, 141.2, 0.2);  // 0.02 × 7060.4 cm²
  for (float angle : desc.edgeRestAngles) ASSERT_EQ(angle, 0.0f);
  // 2066 vertices (32%) start inside the table.
  int inside = 0;
  for (const Vec3& x : desc.positions)
    inside += x.x > -40 && x.x < 40 && x.y > -90 && x.y < -10 && x.z > 0 && x.z < 20;
  EXPECT_EQ(inside, 2066);
}

// The default garment is the shipped shirt, bit for bit what --mesh with the file builds.
TEST(ClothFranka, DefaultGarmentIsTheShippedShirt) {
  SceneOptions options;
  options.meshPath = shirtPath();
  const ModelDesc fromFile = franka().cloth.build(options);
  const ModelDesc& desc = shirtDesc();
  ASSERT_EQ(desc.numParticles(), fromFile.numParticles());
  ASSERT_EQ(desc.numTriangles(), fromFile.numTriangles());
  for (size_t i = 0; i < desc.positions.size(); ++i)
    ASSERT_TRUE(desc.positions[i] == fromFile.positions[i]) << "vertex " << i;
  for (size_t i = 0; i < desc.masses.size(); ++i) ASSERT_EQ(desc.masses[i], fromFile.masses[i]);
  SceneOptions bad;
  bad.values["tube"] = "2";
  EXPECT_THROW(franka().cloth.build(bad), Error);
}

TEST(ClothFranka, MeshTransformFlagsReplaceTheShirtPlacement) {
  ASSERT_TRUE(std::filesystem::exists(shirtPath()))
      << "the shipped shirt is missing: " << shirtPath();
  SceneOptions options;
  options.meshPath = shirtPath();
  options.meshTransformGiven = true;
  options.meshScale = 0.5f;
  options.meshTranslation = {1.0f, 2.0f, 3.0f};
  const ModelDesc desc = franka().cloth.build(options);
  Vec3 lower{1e30f, 1e30f, 1e30f};
  for (const Vec3& x : desc.positions) lower = cwiseMin(lower, x);
  // Authored bbox minimum (−32.609, 88.009, −20.116), halved and moved; no rotation.
  EXPECT_NEAR(lower.x, 1.0f - 16.3045f, 2e-3f);
  EXPECT_NEAR(lower.y, 2.0f + 44.0045f, 2e-3f);
  EXPECT_NEAR(lower.z, 3.0f - 10.058f, 2e-3f);
  double mass = 0.0;
  for (float m : desc.masses) mass += m;
  EXPECT_NEAR(mass, 141.2 / 4, 0.1);
}

// ---- Runs ------------------------------------------------------------------------------------

/// Runs `frames` frames of `desc` and expects every scene check, no self-intersection in any
/// frame and complete contact lists.
void expectRunPassesChecks(const Device& device, const ModelDesc& desc, int frames) {
  test::expectRunPassesChecks(device, franka(), desc, franka().cloth.solver, frames);
}

// ---- The exclusion rule on close layers of our own making --------------------------------------

/// A hemmed cuff (cm): a 30 × 20 cm sheet whose end is folded back over itself into a 3 cm hem
/// whose layer lies 0.1 cm above the sheet (closer than the 0.2 cm contact radius) through a
/// hairpin of 0.05 cm radius (edges down to 0.04 cm, finer than the shirt's finest). Written as
/// an OBJ, so the scene builds it through --mesh.
std::string writeHemmedCuff() {
  std::vector<std::array<double, 2>> rows;  // (x, z) of each row along the folded strip
  for (int i = 0; i <= 30; ++i) rows.push_back({double(i), 0.0});
  for (int k = 1; k <= 3; ++k) {  // the hairpin: a half circle of radius 0.05 about (30, 0.05)
    const double theta = kPi * k / 4.0;
    rows.push_back({30.0 + 0.05 * std::sin(theta), 0.05 - 0.05 * std::cos(theta)});
  }
  for (int i = 0; i <= 6; ++i) rows.push_back({30.0 - 0.5 * i, 0.1});  // the hem, back to 27
  constexpr int kColumns = 21;                                         // 20 cm at 1 cm
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("weft_hemmed_cuff_" + std::to_string(test::testSeed()) + ".obj");
  std::FILE* f = std::fopen(path.string().c_str(), "w");
  if (!f) return "";
  for (const auto& row : rows)
    for (int j = 0; j < kColumns; ++j) std::fprintf(f, "v %.6f %d %.6f\n", row[0], j, row[1]);
  for (size_t i = 0; i + 1 < rows.size(); ++i)
    for (int j = 0; j + 1 < kColumns; ++j) {
      const int a = int(i) * kColumns + j + 1, b = a + kColumns;  // 1-based
      std::fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, a + 1, b, b + 1, a + 1);
    }
  std::fclose(f);
  return path.string();
}

// Layers closer than the contact radius at rest (a hem) stay in contact detection under Weft's
// rule, so they never pass through each other: the cuff, dropped 2 cm onto the table, has no
// self-intersection in any frame, passes every check, and its hem stays within a few contact
// radii of the sheet (the slight rest repulsion opens it, it does not fly apart).
void expectHemmedGarmentHolds(const Device& device, int frames) {
  const std::string path = writeHemmedCuff();
  ASSERT_FALSE(path.empty());
  SceneOptions options;
  options.meshPath = path;
  options.meshTransformGiven = true;
  options.meshTranslation = {-15.0f, -60.0f, 22.0f};  // over the table (top at z = 20)
  const ModelDesc desc = franka().cloth.build(options);
  std::filesystem::remove(path);
  ASSERT_EQ(desc.numParticles(), 41 * 21);
  const std::vector<Vec3> x =
      test::expectRunPassesChecks(device, franka(), desc, franka().cloth.solver, frames);
  // A hem row (38, x = 28) against the sheet row under it (28): the gap stays between zero (no
  // crossing, also counted above) and a few contact radii.
  for (int j = 0; j < 21; ++j) {
    const Vec3 top = x[size_t(38 * 21 + j)], below = x[size_t(28 * 21 + j)];
    EXPECT_GT(top.z - below.z, 0.0f) << "column " << j;
    EXPECT_LT(top.z - below.z, 1.0f) << "column " << j;
  }
}

TEST(ClothFranka, HemmedGarmentStaysFreeOfSelfIntersectionsOnCpu) {
  expectHemmedGarmentHolds(*test::openCpu(), 10);
}

TEST(ClothFranka, HemmedGarmentStaysFreeOfSelfIntersectionsFor120FramesOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectHemmedGarmentHolds(*gpu, 120);
}

TEST(ClothFranka, TwoFramesOnCpuPassItsChecks) {
  expectRunPassesChecks(*test::openCpu(), shirtDesc(), 2);
}

TEST(ClothFranka, DefaultFramesOnCudaPassItsChecks) {
  WEFT_REQUIRE_CUDA(gpu);
  expectRunPassesChecks(*gpu, shirtDesc(), franka().defaultFrames);
}

// Six times the reference's test with the shirt: the exclusion rule keeps it free of
// self-intersections throughout (the reference's 0.5 cm rest exclusion does not, scene file).
TEST(ClothFranka, ShirtStaysFreeOfSelfIntersectionsFor300FramesOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectRunPassesChecks(*gpu, shirtDesc(), 300);
}

TEST(ClothFranka, TubeDefaultFramesOnCudaPassItsChecks) {
  WEFT_REQUIRE_CUDA(gpu);
  expectRunPassesChecks(*gpu, tubeDesc(), franka().defaultFrames);
}

}  // namespace
}  // namespace weft
