// CableBuilder: assembles a RigidDesc (solver/rigid_desc.h) from rods, bodies, shapes and joints
// (reference ModelBuilder.add_rod / add_rod_graph / add_body / add_shape_* / add_joint_*;
// rigid_avbd_spec §1, §7; scenes_spec §0.3).
//
// A rod is a chain (addRod) or a graph (addRodGraph) of capsules joined by ROD joints:
//   * one body per segment (edge u→v, length L = |x_v − x_u| > 1e-9 m): origin and COM at the
//     segment midpoint, orientation q with R(q)·ẑ = (x_v − x_u)/L, solid-capsule mass and inertia
//     (capsuleMassProperties) from the rod's density;
//   * one capsule shape per body: radius r, half height L/2 (caps excluded), at the body origin;
//   * one ROD joint per jointed pair of segments sharing a node n, both anchors at n: local
//     (0, 0, −L/2) on a segment whose edge starts at n and (0, 0, +L/2) on one whose edge ends
//     there, identity anchor rotations (so anchor +Z = capsule axis). The four material slots
//     follow the reference's defaulting (setRodMaterial). The two capsules are collision-filtered.
// Which pairs are jointed: addRodGraph with wrapInArticulation builds a BFS spanning forest over
// the edge adjacency (roots: the lowest unvisited edge; a visited edge looks at its start node,
// then its end node, and adopts every unvisited edge incident there, in edge order); without it,
// every node joins its first incident edge (parent) to each other one (the reference's "star").
// Either way the joints of a graph form a tree per component, so a cycle of edges leaves one
// shared node unjointed. At nodes of degree ≥ 3, junctionCollisionFilter also filters the
// incident pairs that are not jointed. addRod is addRodGraph on the path 0→1→…→N (both modes give
// the same chain: joint i has parent segment i and child i + 1), with frames from
// parallelTransportFrames when none are given, and `closed` adds a joint from the last segment
// to the first (the first and last points must coincide).
//
// finalize() validates everything, sorts and deduplicates the filtered shape pairs, and derives
// the body coloring by joints (colorGraph on the edges parent–child of every joint with two
// distinct bodies; contacts are not in the graph) and the body → joint adjacency CSR.
// Errors: add* calls throw weft::Error at once for input that cannot be built (too few points,
// mismatched array sizes, a zero-length segment, two graph edges joining the same nodes, a
// non-positive radius); finalize() throws
// weft::Error naming the first invalid body, shape, joint or filtered pair.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/math.h"
#include "kernels/shape.h"
#include "solver/coloring.h"
#include "solver/rigid_desc.h"

namespace weft {

/// The four material slots of a rod's joints as the reference's add_rod takes them. Shear copies
/// stretch (stiffness and damping) when neither shear value is given; if one is given, a missing
/// shear stiffness is the stretch stiffness and a missing shear damping is 0. Twist follows the
/// same rule with bend (rigid_avbd_spec §1, "verified fix").
struct RodStiffness {
  float stretchStiffness = 1.0e5f;  // [N/m]
  float stretchDamping = 0.0f;      // [N·s/m]
  std::optional<float> shearStiffness, shearDamping;
  float bendStiffness = 0.0f;  // [N·m/rad]
  float bendDamping = 0.0f;    // [N·m·s/rad]
  std::optional<float> twistStiffness, twistDamping;
};

/// Writes the eight ROD slots of `stiffness` into `joint`, applying the defaulting rules above.
void setRodMaterial(JointDesc& joint, const RodStiffness& stiffness);

struct RodParams {
  std::string name;  // names the bodies ("<name> segment 3"), shapes and errors; "rod k" if empty
  float radius = 0.1f;      // capsule radius [m] (> 0)
  float density = 1000.0f;  // [kg/m³]
  ContactMaterial material;
  float margin = 0.0f;  // shape margin [m]
  float gap = 0.1f;     // speculative contact gap [m] (the reference's rigid_gap default)
  RodStiffness stiffness;
  float dahlEpsMax = 0.0f;              // Dahl friction on every joint of the rod (0: off)
  float dahlTau = 0.0f;                 // [rad]
  bool closed = false;                  // addRod only: also join the last segment to the first
  bool wrapInArticulation = true;       // addRodGraph: BFS forest (else the star per node)
  bool junctionCollisionFilter = true;  // addRodGraph: filter unjointed pairs at degree ≥ 3
};

/// What a rod added: one body and one shape per segment (edge order), and its joints.
struct RodIds {
  std::vector<int> bodies;
  std::vector<int> shapes;
  std::vector<int> joints;
};

/// Mass [kg] and inertia about the COM in the capsule frame [kg·m²] of a solid capsule.
struct CapsuleMassProperties {
  float mass = 0.0f;
  Mat33 inertia;
};

/// Solid capsule of radius r and cylinder half height h (axis local z, centred), density ρ:
///   m_c = ρπr²·2h (cylinder), m_h = ρ·(2/3)πr³ (each hemisphere), m = m_c + 2m_h;
///   I_zz = ½m_c r² + 2·(2/5)m_h r²;
///   I_xx = I_yy = m_c(r²/4 + h²/3) + 2m_h(2r²/5 + h² + 3hr/4).
/// The cap term: a hemisphere has I = (2/5)m_h r² about a diameter of its flat face and its COM
/// 3r/8 from that face, so about its COM (2/5 − 9/64)m_h r² = (83/320)m_h r²; moved to the capsule
/// centre, a distance h + 3r/8 away: (83/320)r² + (h + 3r/8)² = 2r²/5 + h² + 3hr/4 (times m_h).
/// Computed in double, rounded to float.
CapsuleMassProperties capsuleMassProperties(float radius, float halfHeight, float density);

/// Shortest-arc rotation taking unit vector `from` onto unit vector `to` (inputs need not be unit).
/// Anti-parallel inputs (1 + cos < 1e-12) rotate by π about from × x̂, or from × ŷ when
/// |from.x| ≥ 0.9 (scenes_spec §0.3). Computed in double.
Quat shortestArc(const Vec3& from, const Vec3& to);

/// Parallel-transport frames of a polyline of N + 1 points (scenes_spec §0.3): q_0 =
/// shortestArc(ẑ, d_0) and q_i = shortestArc(d_{i−1}, d_i)·q_{i−1}, d_i the unit segment
/// directions, so R(q_i)·ẑ = d_i and consecutive frames differ by the minimal rotation (no twist).
/// Throws weft::Error for fewer than 2 points or a zero-length segment.
std::vector<Quat> parallelTransportFrames(std::span<const Vec3> points);

class CableBuilder {
 public:
  /// A chain of N = points.size() − 1 ≥ 2 capsules (≥ 3 when closed) with N − 1 ROD joints (N
  /// when closed). `quaternions`: N segment frames mapping ẑ onto each segment, or empty for
  /// parallel-transport frames.
  RodIds addRod(std::span<const Vec3> points, std::span<const Quat> quaternions,
                const RodParams& params);
  /// A graph of capsules, one per edge (u, v) of `nodes`; `quaternions` per edge, or empty for an
  /// independent shortestArc(ẑ, edge direction) per edge (the reference's default).
  RodIds addRodGraph(std::span<const Vec3> nodes, std::span<const std::pair<int, int>> edges,
                     std::span<const Quat> quaternions, const RodParams& params);

  /// Records a body as given; returns its id.
  int addBody(const BodyDesc& body);
  /// Records a shape as given (body −1: static, localPose in the world); returns its id.
  int addShape(const RigidShapeDesc& shape);
  /// Records a joint (ROD or BALL); with filterCollisions every shape of its parent is
  /// collision-filtered against every shape of its child (resolved by finalize(), so shapes may
  /// be added later). Returns its id.
  int addJoint(const JointDesc& joint, bool filterCollisions = true);
  /// Shapes a and b never collide.
  void filterShapePair(int a, int b);

  int numBodies() const { return desc_.numBodies(); }
  int numShapes() const { return desc_.numShapes(); }
  int numJoints() const { return desc_.numJoints(); }

  /// Validates (see validate()), resolves the joint collision filters, and derives the coloring
  /// (`coloring`'s balance, targetMaxMinRatio and order; includeBending is ignored) and the body →
  /// joint adjacency. Throws weft::Error naming the first invalid item.
  RigidDesc finalize(const ColoringOptions& coloring = {}) const;

 private:
  // Throws if `params` cannot make a rod; `rod` names it in the message.
  void checkRodParams(const RodParams& params, const std::string& rod) const;

  RigidDesc desc_;
  // (numJoints) what error messages call each joint: "rod 'cable 0', segments 5 and 6", or ""
  std::vector<std::string> jointLabels_;
  std::vector<std::pair<int, int>> filteredBodyPairs_;  // all shapes of a × all shapes of b
  int numRods_ = 0;
};

/// Validates a description (every check finalize() makes): finite poses with unit quaternions
/// (|q| within 1e-3 of 1), finite non-negative masses, finite inertia with a positive diagonal for
/// dynamic bodies, kinematic bodies (mass 0 or the flag) whose motion starts at their pose,
/// moving motions only on kinematic bodies, complete Sampled tables; shapes on existing bodies
/// with positive finite dimensions and finite non-negative material, margin and gap; joints
/// between existing distinct bodies (parent −1 = world; child ≥ 0) with finite non-negative
/// stiffness, damping and Dahl parameters; filtered pairs of distinct existing shapes. Throws
/// weft::Error naming the item. Does not look at the derived arrays.
void validateRigidDesc(const RigidDesc& desc);

/// Finalized models in one (the many-worlds layout): world k's bodies, shapes and joints follow
/// world k − 1's, each in its model's order, placed `spacing`·k further; its shapes carry world k,
/// so they never touch another world's (RigidShapeDesc::world). The worlds may differ (a parameter
/// sweep). The colorings are not recomputed: color c holds color c's bodies of every world in
/// turn, so one launch per color covers all worlds and each world's bodies meet the colors they
/// meet alone. With a zero spacing world k's bits are those of its model run alone. `firstWorld`
/// places the worlds as worlds firstWorld, firstWorld + 1, … of a larger batch (spacing·(firstWorld
/// + k); one process's part of an mpirun's batch). Throws weft::Error for no worlds, a model that
/// has worlds already, or one without derived arrays (finalize() first).
RigidDesc combineWorlds(std::span<const RigidDesc* const> worlds, const Vec3& spacing = {},
                        int firstWorld = 0);
/// N copies of one finalized model (combineWorlds of `desc` n times).
RigidDesc replicateWorlds(const RigidDesc& desc, int n, const Vec3& spacing = {});

/// The body coloring and body → joint adjacency of `desc` (its derived arrays), as finalize()
/// fills them: colors by colorGraph over the joints whose parent and child are both ≥ 0 and
/// distinct; adjacency lists each joint under its parent and its child (those ≥ 0), in joint order.
void deriveRigidGraphs(RigidDesc& desc, const ColoringOptions& coloring);

// ---- Measurements for scene checks and tests --------------------------------------------------

/// Bodies connected through joints (both ends ≥ 0), one group per connected component, each
/// ascending by id, groups ordered by their smallest body. Unjointed bodies form groups of one.
std::vector<std::vector<int>> jointedBodyGroups(const RigidDesc& desc);

/// The joint whose anchors are farthest apart relative to its reference length: gap = |world
/// parent anchor point − world child anchor point| [m], referenceLength = |parent anchor offset| +
/// |child anchor offset| (for a ROD joint, the mean length of its two segments) [m].
struct JointGap {
  int joint = -1;  // -1: no joint (or no joint with a non-zero reference length)
  float gap = 0.0f;
  float referenceLength = 0.0f;
  int nonFinite = 0;  // joints whose anchor points are not finite (counted, not measured)
};
JointGap largestJointGap(const RigidDesc& desc, std::span<const Transform> poses);

/// The capsule pair that overlaps most relative to its allowance, over all pairs of capsule
/// shapes on different bodies (or static) that are not filtered: depth = rA + rB − (closest
/// distance of the two core segments) [m] (negative: apart), allowance = toleranceFraction ·
/// min(rA, rB). A uniform grid of cell size max(2·(halfHeight + radius)) finds the candidate pairs.
struct CapsuleOverlap {
  int shapeA = -1, shapeB = -1;  // -1: no capsule pair was close enough to measure
  float depth = 0.0f;            // [m]
  float allowance = 0.0f;        // [m]
  int violations = 0;            // pairs with depth > allowance
  int skippedNonFinite = 0;      // capsules skipped because their pose is not finite
};
CapsuleOverlap deepestCapsuleOverlap(const RigidDesc& desc, std::span<const Transform> poses,
                                     float toleranceFraction);

}  // namespace weft
