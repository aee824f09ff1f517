// cable_y_junction: the reference's cable_y_junction (scenes_spec §8, Newton
// example_cable_y_junction.py). A branched rod built as a graph (CableBuilder::addRodGraph):
// three straight branches meet at one junction node, and the Y hangs under gravity as a stiff
// cantilever from the pinned tip of one branch. Essentially contact-free; the smallest scene.
//
// Counts: 61 nodes, 60 edges → 60 bodies (1 kinematic), 59 ROD joints, 61 shapes (60 capsules +
// the ground). Units m, kg, s; gravity (0, 0, −9.81).
// Settings, all the reference's: 60 fps, 20 substeps (dt = 1/1200 s), 5 iterations, contacts
// every substep. Junction J = (0, 0, 1.25); branch b = 0, 1, 2 along d₀ = (1, 0, 0),
// d₁ = (−½, √3/2, 0), d₂ = (−½, −√3/2, 0) with nodes J + 0.03·i·d_b, i = 1…20 (node 1 + 20b +
// i − 1); edges (previous node, node), each branch's first from J: edges 0–19 are branch 0, 20–39
// branch 1, 40–59 branch 2. Each edge gets its own shortest-arc frame from +z (no quaternions are
// given). Radius 0.01, segment 0.03 m (half height 0.015), density 1000: 0.0136136 kg per capsule.
// addRodGraph with wrapInArticulation (BFS forest: edge 0 is the parent of edges 20 and 40 at J
// and of edge 1; the branches then continue as chains) and junctionCollisionFilter (the
// unjointed pair 20–40 at J never collides). ROD joints: stretch = shear = 1e7 N/m, undamped;
// bend = twist = 5e3 N·m/rad with damping 1e3 N·m·s/rad. Every shape (capsules and the ground
// plane z = 0): ke 1e4, kd 0, mu 1, gap 0.002 m (rigid_gap). The body of edge 19, the outer tip of
// branch 0 centred at (0.585, 0, 1.25), is kinematic (mass and inertia 0) and never moves (Static
// motion). Coloring by joints without balancing (the reference's color(balance_colors=False)).
//
// Final checks: the reference's test_final (the joints connect all 60 bodies into one group;
// finite; |x|, |y| <= 2 m and z in [−0.2, 3] m for every body; the pinned body has moved at most
// 1e-4 m in each coordinate), plus joints not torn and no deep capsule interpenetration
// (cable_checks.h).
//
// Differences from the reference: none in the model; the sweeps are Chebyshev-accelerated
// (kCableSceneChebyshevRho, ρ 0.7;
// `--chebyshev-rho 0` gives the reference's plain sweeps; docs/CONVERGENCE.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "solver/cable_builder.h"

namespace weft {
namespace {

constexpr int kBranches = 3;
constexpr int kSegmentsPerBranch = 20;
constexpr float kSegmentLength = 0.03f;  // [m]
constexpr Vec3 kJunction{0.0f, 0.0f, 1.25f};
constexpr int kPinnedEdge = kSegmentsPerBranch - 1;  // the outer tip of branch 0
constexpr float kPinTolerance = 1.0e-4f;             // [m] per coordinate

RigidDesc buildYJunction(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any option: this scene has none

  const float halfRoot3 = 0.5f * std::sqrt(3.0f);
  const Vec3 directions[kBranches] = {
      {1.0f, 0.0f, 0.0f}, {-0.5f, halfRoot3, 0.0f}, {-0.5f, -halfRoot3, 0.0f}};
  std::vector<Vec3> nodes = {kJunction};
  std::vector<std::pair<int, int>> edges;
  for (const Vec3& d : directions) {
    int previous = 0;
    for (int i = 1; i <= kSegmentsPerBranch; ++i) {
      nodes.push_back(kJunction + d * (float(i) * kSegmentLength));
      edges.push_back({previous, int(nodes.size()) - 1});
      previous = int(nodes.size()) - 1;
    }
  }

  CableBuilder builder;
  RodParams rod;
  rod.name = "y graph";
  rod.radius = 0.01f;
  rod.density = 1000.0f;
  rod.material = {1.0e4f, 0.0f, 1.0f};
  rod.gap = 0.002f;
  rod.stiffness.stretchStiffness = 1.0e7f;
  rod.stiffness.bendStiffness = 5.0e3f;
  rod.stiffness.bendDamping = 1.0e3f;
  rod.wrapInArticulation = true;
  rod.junctionCollisionFilter = true;
  const RodIds ids = builder.addRodGraph(nodes, edges, {}, rod);

  RigidShapeDesc ground;
  ground.name = "ground";
  ground.body = -1;
  ground.geometry.type = ShapeType::Plane;  // z = 0, normal +z
  ground.material = rod.material;           // the reference's default_shape_cfg
  ground.gap = rod.gap;
  builder.addShape(ground);

  ColoringOptions coloring;
  coloring.balance = false;  // color(balance_colors=False)
  RigidDesc desc = builder.finalize(coloring);

  BodyDesc& pinned = desc.bodies[size_t(ids.bodies[kPinnedEdge])];
  pinned.mass = 0.0f;
  pinned.inertia = Mat33{};
  pinned.kinematic = true;
  pinned.motion.type = MotionType::Static;
  pinned.motion.pose0 = pinned.pose;
  validateRigidDesc(desc);
  return desc;
}

CheckResult checkConnected(const RigidCheckInput& in) {
  const std::vector<std::vector<int>> groups = jointedBodyGroups(in.desc);
  const size_t largest =
      groups.empty()
          ? 0
          : std::max_element(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
              return a.size() < b.size();
            })->size();
  // Information: the joint graph is the model's, fixed when the scene is built.
  return {"connected", groups.size() == 1,
          "jointed groups: " + std::to_string(groups.size()) + ", the largest of " +
              std::to_string(largest) + " of " + std::to_string(in.desc.numBodies()) +
              " bodies (limit: 1)",
          true};
}

/// Every body within |x|, |y| <= 2 m and −0.2 <= z <= 3 m (the reference's inclusive limits).
CheckResult checkYBounds(const RigidCheckInput& in) {
  float horizontal = 0.0f, lowest = INFINITY, highest = -INFINITY;
  bool finite = true;
  for (const Transform& pose : in.poses) {
    finite = finite && isFinite(pose.p);
    horizontal = std::max({horizontal, std::fabs(pose.p.x), std::fabs(pose.p.y)});
    lowest = std::min(lowest, pose.p.z);
    highest = std::max(highest, pose.p.z);
  }
  char detail[160];
  std::snprintf(detail, sizeof(detail),
                "largest |x|, |y| %.4g m (limit 2), z from %.4g to %.4g m (limits [-0.2, 3])",
                horizontal, lowest, highest);
  return {"bounded", finite && horizontal <= 2.0f && lowest >= -0.2f && highest <= 3.0f, detail};
}

/// Every kinematic body (the pinned tip) within kPinTolerance of its rest position, per coordinate.
CheckResult checkPinned(const RigidCheckInput& in) {
  float moved = 0.0f;
  for (int b = 0; b < in.desc.numBodies(); ++b) {
    const BodyDesc& body = in.desc.bodies[size_t(b)];
    if (!body.kinematic && body.mass > 0.0f) continue;
    const Vec3 d = in.poses[size_t(b)].p - body.pose.p;
    const float m = std::max({std::fabs(d.x), std::fabs(d.y), std::fabs(d.z)});
    moved = std::max(moved, isFinite(m) ? m : INFINITY);
  }
  char detail[128];
  std::snprintf(detail, sizeof(detail),
                "pinned body moved %.3g m in its largest coordinate (limit %.3g)", moved,
                kPinTolerance);
  return {"pinned", moved <= kPinTolerance, detail};
}

std::vector<CheckResult> checkYJunction(const RigidCheckInput& in) {
  std::vector<CheckResult> checks = {checkConnected(in), checkBodiesFinite(in), checkYBounds(in),
                                     checkPinned(in)};
  for (CheckResult& c : cableIntegrityChecks(in)) checks.push_back(std::move(c));
  return checks;
}

}  // namespace

Scene makeCableYJunctionScene() {
  Scene scene;
  scene.name = "cable_y_junction";
  scene.aliases = {"y_junction"};
  scene.description =
      "a Y-shaped rod graph (three 0.6 m branches joined at one node) hangs as a stiff "
      "cantilever from one pinned tip";
  scene.benchmark = true;       // one of the reference's eight benchmark scenes
  scene.benchWindowFirst = 20;  // weft bench's window, frames [20, 80)
  scene.benchWindowEnd = 80;
  scene.fps = 60.0;
  scene.substeps = 20;
  scene.defaultFrames = 20;  // the reference's test length
  scene.tuneWindowFrames = 20;
  RigidSolverOptions& o = scene.rigid.solver;
  o.iterations = 5;
  o.chebyshevRho = kCableSceneChebyshevRho;
  o.gravity = {0.0f, 0.0f, -9.81f};
  o.collideInterval = 1;  // contacts every substep
  scene.rigid.build = buildYJunction;
  scene.rigid.checks = checkYJunction;
  return scene;
}

}  // namespace weft
