#include "solver/cable_builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <string>

#include "kernels/closest_point.h"
#include "kernels/kinematics.h"
#include "kernels/runtime/errors.h"
#include "solver/shape_checks.h"

namespace weft {
namespace {

// ---- Double-precision helpers for the frames (built once on the host) -------------------------

struct Vec3d {
  double x = 0.0, y = 0.0, z = 0.0;
};
struct QuatD {
  double x = 0.0, y = 0.0, z = 0.0, w = 1.0;
};

Vec3d toDouble(const Vec3& v) {
  return {v.x, v.y, v.z};
}
Vec3d sub(const Vec3d& a, const Vec3d& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
double dotD(const Vec3d& a, const Vec3d& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
Vec3d crossD(const Vec3d& a, const Vec3d& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
double lengthD(const Vec3d& a) {
  return std::sqrt(dotD(a, a));
}
Vec3d scaleD(const Vec3d& a, double s) {
  return {a.x * s, a.y * s, a.z * s};
}
QuatD multiply(const QuatD& a, const QuatD& b) {
  return {
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
QuatD normalizeD(const QuatD& q) {
  const double n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return {q.x / n, q.y / n, q.z / n, q.w / n};
}
Quat toFloat(const QuatD& q) {
  return {float(q.x), float(q.y), float(q.z), float(q.w)};
}

/// Shortest arc between two unit vectors: q = normalize(a × b, 1 + a·b), whose half angle is
/// that of the rotation (the half-way-vector construction); π about a fixed axis when
/// anti-parallel.
QuatD shortestArcD(const Vec3d& a, const Vec3d& b) {
  const double c = dotD(a, b);
  if (1.0 + c < 1e-12) {
    const Vec3d helper = std::fabs(a.x) >= 0.9 ? Vec3d{0.0, 1.0, 0.0} : Vec3d{1.0, 0.0, 0.0};
    const Vec3d axis = crossD(a, helper);
    const Vec3d unit = scaleD(axis, 1.0 / lengthD(axis));
    return {unit.x, unit.y, unit.z, 0.0};
  }
  const Vec3d axis = crossD(a, b);
  return normalizeD({axis.x, axis.y, axis.z, 1.0 + c});
}

/// Unit direction of segment (a, b) and its length; throws if shorter than 1e-9 m (the
/// reference's limit) or not finite. `what` names the segment.
Vec3d segmentDirection(const Vec3& a, const Vec3& b, double& length, const std::string& what) {
  const Vec3d d = sub(toDouble(b), toDouble(a));
  length = lengthD(d);
  if (!(length > 1e-9) || !std::isfinite(length))
    throw Error(what + " has length " + std::to_string(length) +
                " m; segments must be finite and longer than 1e-9 m (remove repeated points).");
  return scaleD(d, 1.0 / length);
}

// ---- Validation helpers ------------------------------------------------------------------------

bool finite(const Transform& t) {
  return isFinite(t.p) && isFinite(t.q.x) && isFinite(t.q.y) && isFinite(t.q.z) && isFinite(t.q.w);
}
bool unitQuaternion(const Quat& q) {
  const double n =
      std::sqrt(double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z + double(q.w) * q.w);
  return std::fabs(n - 1.0) <= 1e-3;
}
bool finiteMatrix(const Mat33& m) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      if (!isFinite(m(r, c))) return false;
  return true;
}
bool finiteNonNegative(float v) {
  return isFinite(v) && v >= 0.0f;
}
std::string number(double v) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}
std::string describeBody(const RigidDesc& desc, int b) {
  const std::string& name = desc.bodies[size_t(b)].name;
  return "body " + std::to_string(b) + (name.empty() ? "" : " ('" + name + "')");
}
std::string describeShape(const RigidDesc& desc, int s) {
  const std::string& name = desc.shapes[size_t(s)].name;
  return "shape " + std::to_string(s) + (name.empty() ? "" : " ('" + name + "')");
}

/// Whether two poses agree: positions within 1e-5 m (relative beyond 1 m) and rotations within
/// 1 − |q_a·q_b| <= 1e-6 (about 0.16°; sign-insensitive).
bool samePose(const Transform& a, const Transform& b) {
  const float d = length(a.p - b.p);
  const float c = std::fabs(a.q.x * b.q.x + a.q.y * b.q.y + a.q.z * b.q.z + a.q.w * b.q.w);
  return d <= 1e-5f * std::max(1.0f, length(a.p)) && 1.0f - c <= 1e-6f;
}

void validateBodies(const RigidDesc& desc) {
  for (int b = 0; b < desc.numBodies(); ++b) {
    const BodyDesc& body = desc.bodies[size_t(b)];
    const auto fail = [&](const std::string& what) {
      throw Error(describeBody(desc, b) + ": " + what);
    };
    if (!finite(body.pose) || !unitQuaternion(body.pose.q))
      fail(
          "its pose is not finite or its quaternion is not unit length; give a finite position "
          "and a normalized quaternion.");
    if (!isFinite(body.com) || !isFinite(body.linearVelocity) || !isFinite(body.angularVelocity))
      fail("its centre of mass or initial velocity is not finite.");
    if (!finiteNonNegative(body.mass))
      fail("mass is " + number(body.mass) + " kg; it must be finite and >= 0 (0: kinematic).");
    if (!finiteMatrix(body.inertia)) fail("its inertia is not finite.");
    const bool kinematic = body.kinematic || body.mass == 0.0f;
    if (!kinematic &&
        !(body.inertia(0, 0) > 0.0f && body.inertia(1, 1) > 0.0f && body.inertia(2, 2) > 0.0f))
      fail("a dynamic body (mass " + number(body.mass) +
           " kg) needs an inertia with a positive diagonal; give one, or make it kinematic.");

    const ShapeMotion& m = body.motion;
    if (m.type != MotionType::Static && !kinematic)
      fail("it has a scripted motion but mass " + number(body.mass) +
           " kg and no kinematic flag; the solver would ignore the motion. Set mass 0 or "
           "`kinematic`.");
    if (m.type == MotionType::Linear &&
        (!isFinite(m.linearVelocity) || !isFinite(m.angularVelocity) || !isFinite(m.startTime) ||
         !(m.stopTime >= m.startTime)))
      fail("its linear motion has non-finite velocities or stopTime < startTime.");
    if (m.type == MotionType::Sampled) {
      if (body.motionSamples.empty() || !(m.sampleInterval > 0.0f) || !isFinite(m.sampleInterval))
        fail("its sampled motion needs at least one sample and a positive sampleInterval.");
      if (m.sampleCount != 0 && m.sampleCount != int(body.motionSamples.size()))
        fail("its sampled motion says sampleCount " + std::to_string(m.sampleCount) + " but has " +
             std::to_string(body.motionSamples.size()) + " samples.");
      for (size_t k = 0; k < body.motionSamples.size(); ++k)
        if (!finite(body.motionSamples[k]) || !unitQuaternion(body.motionSamples[k].q))
          fail("motion sample " + std::to_string(k) + " is not finite or not unit.");
    }
    if (m.type != MotionType::Static && !finite(m.pose0)) fail("its motion's pose0 is not finite.");
    // A kinematic body is wherever its motion puts it: at t = 0 that must be its pose.
    if (kinematic) {
      ShapeMotion local = m;
      local.sampleOffset = 0;
      local.sampleCount = int(body.motionSamples.size());
      const Transform start = poseAt(local, 0.0f, body.motionSamples.data());
      if (!samePose(start, body.pose))
        fail("it is kinematic but its motion starts at (" + number(start.p.x) + ", " +
             number(start.p.y) + ", " + number(start.p.z) +
             "), not at its pose; set motion.pose0 (or the first sample) to the body's pose.");
    }
  }
}

void validateShapes(const RigidDesc& desc) {
  for (int s = 0; s < desc.numShapes(); ++s) {
    const RigidShapeDesc& shape = desc.shapes[size_t(s)];
    const auto fail = [&](const std::string& what) {
      throw Error(describeShape(desc, s) + ": " + what);
    };
    if (shape.body < -1 || shape.body >= desc.numBodies())
      fail("belongs to body " + std::to_string(shape.body) + ", which does not exist (" +
           std::to_string(desc.numBodies()) + " bodies; -1 = static).");
    if (shape.world < 0 || (s > 0 && shape.world < desc.shapes[size_t(s) - 1].world))
      fail("is in world " + std::to_string(shape.world) +
           "; worlds are numbered from 0 and their shapes come in ascending order of world.");
    if (!finite(shape.localPose) || !unitQuaternion(shape.localPose.q))
      fail("its local pose is not finite or its quaternion is not unit length.");
    if (const std::string problem = shapeGeometryProblem(shape.geometry); !problem.empty())
      fail(problem);
    const ContactMaterial& mat = shape.material;
    if (!finiteNonNegative(mat.ke) || !finiteNonNegative(mat.kd) || !finiteNonNegative(mat.mu))
      fail("material ke " + number(mat.ke) + ", kd " + number(mat.kd) + ", mu " + number(mat.mu) +
           ": each must be finite and >= 0.");
    if (!finiteNonNegative(shape.margin) || !finiteNonNegative(shape.gap))
      fail("margin " + number(shape.margin) + " m and gap " + number(shape.gap) +
           " m must be finite and >= 0.");
  }
}

void validateJoints(const RigidDesc& desc, const std::vector<std::string>& labels) {
  for (int j = 0; j < desc.numJoints(); ++j) {
    const JointDesc& joint = desc.joints[size_t(j)];
    const std::string label = size_t(j) < labels.size() && !labels[size_t(j)].empty()
                                  ? " (" + labels[size_t(j)] + ")"
                                  : "";
    const auto fail = [&](const std::string& what) {
      throw Error("joint " + std::to_string(j) + label + ": " + what);
    };
    if (joint.type != JointType::Rod && joint.type != JointType::Ball)
      fail("unknown joint type " + std::to_string(int(joint.type)) + ".");
    if (joint.parent < -1 || joint.parent >= desc.numBodies())
      fail("parent body " + std::to_string(joint.parent) + " does not exist (" +
           std::to_string(desc.numBodies()) + " bodies; -1 = world).");
    if (joint.child < 0 || joint.child >= desc.numBodies())
      fail("child body " + std::to_string(joint.child) + " does not exist (" +
           std::to_string(desc.numBodies()) + " bodies).");
    if (joint.parent == joint.child)
      fail("joins body " + std::to_string(joint.child) + " to itself.");
    if (!finite(joint.parentAnchor) || !finite(joint.childAnchor) ||
        !unitQuaternion(joint.parentAnchor.q) || !unitQuaternion(joint.childAnchor.q))
      fail("its anchor frames are not finite or their quaternions are not unit length.");
    const std::array<std::pair<const char*, float>, 10> values = {{
        {"stretch stiffness", joint.stretchStiffness},
        {"shear stiffness", joint.shearStiffness},
        {"bend stiffness", joint.bendStiffness},
        {"twist stiffness", joint.twistStiffness},
        {"stretch damping", joint.stretchDamping},
        {"shear damping", joint.shearDamping},
        {"bend damping", joint.bendDamping},
        {"twist damping", joint.twistDamping},
        {"Dahl eps_max", joint.dahlEpsMax},
        {"Dahl tau", joint.dahlTau},
    }};
    for (const auto& [name, value] : values)
      if (!finiteNonNegative(value))
        fail(std::string(name) + " is " + number(value) + "; it must be finite and >= 0.");
  }
}

void validateFilteredPairs(const RigidDesc& desc) {
  for (size_t k = 0; k < desc.filteredShapePairs.size(); ++k) {
    const auto [a, b] = desc.filteredShapePairs[k];
    if (a < 0 || b < 0 || a >= desc.numShapes() || b >= desc.numShapes() || a == b)
      throw Error("filtered shape pair " + std::to_string(k) + " (" + std::to_string(a) + ", " +
                  std::to_string(b) + ") must name two different existing shapes (" +
                  std::to_string(desc.numShapes()) + " shapes).");
  }
}

/// The world ranges of a combined model (RigidDesc::worldBodyOffsets, worldJointOffsets): both
/// or neither, one entry per world and one more, ascending from 0 to the body and joint counts,
/// every joint and every shape's body inside its world's bodies.
void validateWorldRanges(const RigidDesc& desc) {
  const std::vector<int>& bodies = desc.worldBodyOffsets;
  const std::vector<int>& joints = desc.worldJointOffsets;
  if (bodies.empty() && joints.empty()) return;
  const int worlds = int(bodies.size()) - 1;
  const auto fail = [](const std::string& why) {
    throw Error("the model's world ranges (worldBodyOffsets, worldJointOffsets) " + why);
  };
  if (worlds < 1 || joints.size() != bodies.size())
    fail("must both have one entry per world and one more");
  for (const std::vector<int>* range : {&bodies, &joints}) {
    if (range->front() != 0 || !std::is_sorted(range->begin(), range->end()))
      fail("must ascend from 0");
  }
  if (bodies.back() != desc.numBodies() || joints.back() != desc.numJoints())
    fail("must end at the body and joint counts");
  const auto worldOf = [&](int body) {
    return int(std::upper_bound(bodies.begin(), bodies.end(), body) - bodies.begin()) - 1;
  };
  for (int k = 0; k < worlds; ++k)
    for (int j = joints[size_t(k)]; j < joints[size_t(k) + 1]; ++j) {
      const JointDesc& d = desc.joints[size_t(j)];
      if (worldOf(d.child) != k || (d.parent >= 0 && worldOf(d.parent) != k))
        fail("put joint " + std::to_string(j) + " in world " + std::to_string(k) +
             " but not both of its bodies");
    }
  for (int s = 0; s < desc.numShapes(); ++s) {
    const RigidShapeDesc& shape = desc.shapes[size_t(s)];
    if (shape.world >= worlds || (shape.body >= 0 && worldOf(shape.body) != shape.world))
      fail("do not hold shape " + std::to_string(s) + "'s body in its world " +
           std::to_string(shape.world));
  }
}

/// (min, max) of a pair.
std::pair<int, int> ordered(int a, int b) {
  return {std::min(a, b), std::max(a, b)};
}

}  // namespace

// ---- Free functions
// ------------------------------------------------------------------------------

void setRodMaterial(JointDesc& joint, const RodStiffness& k) {
  joint.stretchStiffness = k.stretchStiffness;
  joint.stretchDamping = k.stretchDamping;
  if (!k.shearStiffness && !k.shearDamping) {
    joint.shearStiffness = k.stretchStiffness;
    joint.shearDamping = k.stretchDamping;
  } else {
    joint.shearStiffness = k.shearStiffness.value_or(k.stretchStiffness);
    joint.shearDamping = k.shearDamping.value_or(0.0f);
  }
  joint.bendStiffness = k.bendStiffness;
  joint.bendDamping = k.bendDamping;
  if (!k.twistStiffness && !k.twistDamping) {
    joint.twistStiffness = k.bendStiffness;
    joint.twistDamping = k.bendDamping;
  } else {
    joint.twistStiffness = k.twistStiffness.value_or(k.bendStiffness);
    joint.twistDamping = k.twistDamping.value_or(0.0f);
  }
}

CapsuleMassProperties capsuleMassProperties(float radius, float halfHeight, float density) {
  const double r = radius, h = halfHeight, rho = density, pi = std::numbers::pi;
  const double cylinderMass = rho * pi * r * r * 2.0 * h;
  const double capMass = rho * 2.0 / 3.0 * pi * r * r * r;  // one hemisphere
  const double axial = 0.5 * cylinderMass * r * r + 2.0 * 0.4 * capMass * r * r;
  const double transverse = cylinderMass * (r * r / 4.0 + h * h / 3.0) +
                            2.0 * capMass * (0.4 * r * r + h * h + 0.75 * h * r);
  CapsuleMassProperties out;
  out.mass = float(cylinderMass + 2.0 * capMass);
  out.inertia(0, 0) = float(transverse);
  out.inertia(1, 1) = float(transverse);
  out.inertia(2, 2) = float(axial);
  return out;
}

Quat shortestArc(const Vec3& from, const Vec3& to) {
  const Vec3d a = toDouble(from), b = toDouble(to);
  return toFloat(shortestArcD(scaleD(a, 1.0 / lengthD(a)), scaleD(b, 1.0 / lengthD(b))));
}

std::vector<Quat> parallelTransportFrames(std::span<const Vec3> points) {
  if (points.size() < 2)
    throw Error("parallelTransportFrames: got " + std::to_string(points.size()) +
                " points; a polyline needs at least 2.");
  std::vector<Quat> frames;
  frames.reserve(points.size() - 1);
  Vec3d previous{0.0, 0.0, 1.0};
  QuatD q;  // identity: the frame "before" segment 0 has ẑ as its tangent
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    double length = 0.0;
    const Vec3d d = segmentDirection(points[i], points[i + 1], length,
                                     "parallelTransportFrames: segment " + std::to_string(i));
    q = normalizeD(multiply(shortestArcD(previous, d), q));
    frames.push_back(toFloat(q));
    previous = d;
  }
  return frames;
}

// ---- CableBuilder
// ----------------------------------------------------------------------------------

void CableBuilder::checkRodParams(const RodParams& params, const std::string& rod) const {
  if (!(params.radius > 0.0f) || !isFinite(params.radius))
    throw Error(rod + ": radius is " + number(params.radius) + " m; it must be finite and > 0.");
  if (!finiteNonNegative(params.density))
    throw Error(rod + ": density is " + number(params.density) +
                " kg/m³; it must be finite and >= 0.");
}

RodIds CableBuilder::addRod(std::span<const Vec3> points, std::span<const Quat> quaternions,
                            const RodParams& params) {
  const std::string rod =
      "rod '" + (params.name.empty() ? "rod " + std::to_string(numRods_) : params.name) + "'";
  const size_t minPoints = params.closed ? 4 : 3;
  if (points.size() < minPoints)
    throw Error(rod + ": got " + std::to_string(points.size()) + " points; a " +
                (params.closed ? "closed rod needs at least 4 (3 segments)"
                               : "rod needs at least 3 (2 segments)") +
                ".");
  const size_t numSegments = points.size() - 1;
  if (!quaternions.empty() && quaternions.size() != numSegments)
    throw Error(rod + ": got " + std::to_string(quaternions.size()) + " quaternions for " +
                std::to_string(numSegments) + " segments; give one per segment, or none.");
  std::vector<Quat> frames(quaternions.begin(), quaternions.end());
  if (frames.empty()) {
    try {
      frames = parallelTransportFrames(points);
    } catch (const Error& e) {
      throw Error(rod + ": " + e.what());
    }
  }
  std::vector<std::pair<int, int>> edges(numSegments);
  for (size_t i = 0; i < numSegments; ++i) edges[i] = {int(i), int(i) + 1};
  if (params.closed) {
    const float gap = length(points.back() - points.front());
    const float first = length(points[1] - points[0]);
    if (!(gap <= 1e-5f * first))
      throw Error(rod + ": closed, but its last point is " + number(gap) +
                  " m from its first; a closed rod's last point must repeat the first.");
  }
  RodIds ids = addRodGraph(points, edges, frames, params);

  if (params.closed) {
    // The loop-closing joint, outside the chain: last segment (its end) to the first (its start).
    const int last = ids.bodies.back(), first = ids.bodies.front();
    JointDesc joint;
    joint.type = JointType::Rod;
    joint.parent = last;
    joint.child = first;
    joint.parentAnchor.p = {0.0f, 0.0f,
                            desc_.shapes[size_t(ids.shapes.back())].geometry.halfHeight};
    joint.childAnchor.p = {0.0f, 0.0f,
                           -desc_.shapes[size_t(ids.shapes.front())].geometry.halfHeight};
    setRodMaterial(joint, params.stiffness);
    joint.dahlEpsMax = params.dahlEpsMax;
    joint.dahlTau = params.dahlTau;
    ids.joints.push_back(desc_.numJoints());
    desc_.joints.push_back(joint);
    jointLabels_.push_back(rod + ", closing segments " + std::to_string(numSegments - 1) +
                           " and 0");
    filterShapePair(ids.shapes.back(), ids.shapes.front());
  }
  return ids;
}

RodIds CableBuilder::addRodGraph(std::span<const Vec3> nodes,
                                 std::span<const std::pair<int, int>> edges,
                                 std::span<const Quat> quaternions, const RodParams& params) {
  const std::string name = params.name.empty() ? "rod " + std::to_string(numRods_) : params.name;
  const std::string rod = "rod '" + name + "'";
  ++numRods_;
  checkRodParams(params, rod);
  if (edges.empty()) throw Error(rod + ": has no edges.");
  if (!quaternions.empty() && quaternions.size() != edges.size())
    throw Error(rod + ": got " + std::to_string(quaternions.size()) + " quaternions for " +
                std::to_string(edges.size()) + " edges; give one per edge, or none.");
  const int numNodes = int(nodes.size());
  // The first edge of each node pair: a second capsule along the same segment would lie inside
  // the first, jointed to it or not.
  std::map<std::pair<int, int>, size_t> edgeOf;
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [u, v] = edges[e];
    if (u < 0 || v < 0 || u >= numNodes || v >= numNodes || u == v)
      throw Error(rod + ": edge " + std::to_string(e) + " (" + std::to_string(u) + ", " +
                  std::to_string(v) + ") must join two different existing nodes (" +
                  std::to_string(numNodes) + " nodes).");
    if (const auto [it, inserted] = edgeOf.try_emplace(std::minmax(u, v), e); !inserted)
      throw Error(rod + ": edge " + std::to_string(e) + " (" + std::to_string(u) + ", " +
                  std::to_string(v) + ") joins the same two nodes as edge " +
                  std::to_string(it->second) + "; remove one of them.");
  }

  // One capsule body and shape per edge, origin and COM at the midpoint.
  RodIds ids;
  std::vector<float> halfHeight(edges.size());  // (numEdges) [m]
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [u, v] = edges[e];
    double segmentLength = 0.0;
    const Vec3d direction = segmentDirection(nodes[size_t(u)], nodes[size_t(v)], segmentLength,
                                             rod + ": edge " + std::to_string(e));
    halfHeight[e] = float(0.5 * segmentLength);
    const Vec3 midpoint = (nodes[size_t(u)] + nodes[size_t(v)]) * 0.5f;

    BodyDesc body;
    body.name = name + " segment " + std::to_string(e);
    body.pose.p = midpoint;
    body.pose.q =
        quaternions.empty() ? toFloat(shortestArcD({0.0, 0.0, 1.0}, direction)) : quaternions[e];
    const CapsuleMassProperties mass =
        capsuleMassProperties(params.radius, halfHeight[e], params.density);
    body.mass = mass.mass;
    body.inertia = mass.inertia;
    ids.bodies.push_back(addBody(body));

    RigidShapeDesc shape;
    shape.name = name + " capsule " + std::to_string(e);
    shape.body = ids.bodies.back();
    shape.geometry.type = ShapeType::Capsule;
    shape.geometry.radius = params.radius;
    shape.geometry.halfHeight = halfHeight[e];
    shape.material = params.material;
    shape.margin = params.margin;
    shape.gap = params.gap;
    ids.shapes.push_back(addShape(shape));
  }

  // Edges incident to each node, in edge order.
  std::vector<std::vector<int>> incident(static_cast<size_t>(numNodes));
  for (size_t e = 0; e < edges.size(); ++e) {
    incident[size_t(edges[e].first)].push_back(int(e));
    incident[size_t(edges[e].second)].push_back(int(e));
  }

  // Joins edge `parent` to edge `child` at their shared node: each anchor at −hh on an edge
  // starting there, +hh on one ending there.
  std::set<std::pair<int, int>> jointed;  // edge pairs (min, max)
  const auto join = [&](int parent, int child, int node) {
    const auto anchorZ = [&](int e) {
      return edges[size_t(e)].first == node ? -halfHeight[size_t(e)] : halfHeight[size_t(e)];
    };
    JointDesc joint;
    joint.type = JointType::Rod;
    joint.parent = ids.bodies[size_t(parent)];
    joint.child = ids.bodies[size_t(child)];
    joint.parentAnchor.p = {0.0f, 0.0f, anchorZ(parent)};
    joint.childAnchor.p = {0.0f, 0.0f, anchorZ(child)};
    setRodMaterial(joint, params.stiffness);
    joint.dahlEpsMax = params.dahlEpsMax;
    joint.dahlTau = params.dahlTau;
    ids.joints.push_back(desc_.numJoints());
    desc_.joints.push_back(joint);
    jointLabels_.push_back(rod + ", segments " + std::to_string(parent) + " and " +
                           std::to_string(child));
    filterShapePair(ids.shapes[size_t(parent)], ids.shapes[size_t(child)]);
    jointed.insert(ordered(parent, child));
  };

  if (params.wrapInArticulation) {
    // BFS spanning forest over the edge adjacency.
    std::vector<char> visited(edges.size(), 0);
    std::vector<int> queue;
    for (size_t root = 0; root < edges.size(); ++root) {
      if (visited[root]) continue;
      visited[root] = 1;
      queue.assign(1, int(root));
      for (size_t head = 0; head < queue.size(); ++head) {
        const int e = queue[head];
        for (const int node : {edges[size_t(e)].first, edges[size_t(e)].second})
          for (const int f : incident[size_t(node)]) {
            if (visited[size_t(f)]) continue;
            visited[size_t(f)] = 1;
            join(e, f, node);
            queue.push_back(f);
          }
      }
    }
  } else {
    // Star per node: the first incident edge is the parent of the others.
    for (int node = 0; node < numNodes; ++node) {
      const std::vector<int>& around = incident[size_t(node)];
      for (size_t k = 1; k < around.size(); ++k) join(around[0], around[k], node);
    }
  }

  if (params.junctionCollisionFilter)
    for (const std::vector<int>& around : incident) {
      if (around.size() < 3) continue;
      for (size_t a = 0; a < around.size(); ++a)
        for (size_t b = a + 1; b < around.size(); ++b)
          if (!jointed.count(ordered(around[a], around[b])))
            filterShapePair(ids.shapes[size_t(around[a])], ids.shapes[size_t(around[b])]);
    }
  return ids;
}

int CableBuilder::addBody(const BodyDesc& body) {
  desc_.bodies.push_back(body);
  return desc_.numBodies() - 1;
}

int CableBuilder::addShape(const RigidShapeDesc& shape) {
  desc_.shapes.push_back(shape);
  return desc_.numShapes() - 1;
}

int CableBuilder::addJoint(const JointDesc& joint, bool filterCollisions) {
  desc_.joints.push_back(joint);
  jointLabels_.emplace_back();
  if (filterCollisions && joint.parent >= 0 && joint.child >= 0)
    filteredBodyPairs_.push_back({joint.parent, joint.child});
  return desc_.numJoints() - 1;
}

void CableBuilder::filterShapePair(int a, int b) {
  desc_.filteredShapePairs.push_back(ordered(a, b));
}

RigidDesc CableBuilder::finalize(const ColoringOptions& coloring) const {
  RigidDesc desc = desc_;
  validateBodies(desc);
  validateShapes(desc);
  validateJoints(desc, jointLabels_);
  validateFilteredPairs(desc);

  // Joint collision filters: every shape of the parent against every shape of the child.
  std::vector<std::vector<int>> shapesOfBody(size_t(desc.numBodies()));
  for (int s = 0; s < desc.numShapes(); ++s)
    if (desc.shapes[size_t(s)].body >= 0)
      shapesOfBody[size_t(desc.shapes[size_t(s)].body)].push_back(s);
  for (const auto& [a, b] : filteredBodyPairs_)
    for (int sa : shapesOfBody[size_t(a)])
      for (int sb : shapesOfBody[size_t(b)]) desc.filteredShapePairs.push_back(ordered(sa, sb));
  std::sort(desc.filteredShapePairs.begin(), desc.filteredShapePairs.end());
  desc.filteredShapePairs.erase(
      std::unique(desc.filteredShapePairs.begin(), desc.filteredShapePairs.end()),
      desc.filteredShapePairs.end());

  deriveRigidGraphs(desc, coloring);
  return desc;
}

void validateRigidDesc(const RigidDesc& desc) {
  validateBodies(desc);
  validateShapes(desc);
  validateJoints(desc, {});
  validateFilteredPairs(desc);
  validateWorldRanges(desc);
}

RigidDesc combineWorlds(std::span<const RigidDesc* const> worlds, const Vec3& spacing,
                        int firstWorld) {
  if (worlds.empty()) throw Error("combineWorlds needs at least one world");
  int colors = 0;
  for (const RigidDesc* desc : worlds) {
    for (const RigidShapeDesc& s : desc->shapes)
      if (s.world != 0) throw Error("combineWorlds: a model has worlds already");
    if (desc->bodyColorOffsets.empty() || desc->jointOffsets.size() != desc->bodies.size() + 1)
      throw Error("combineWorlds: a model has no coloring or joint lists (finalize() it first)");
    colors = std::max(colors, int(desc->bodyColorOffsets.size()) - 1);
  }
  const int n = int(worlds.size());
  // Where each world's bodies, shapes and joints begin in the combined model.
  std::vector<int> bodyBegin(size_t(n) + 1, 0), shapeBegin(size_t(n) + 1, 0),
      jointBegin(size_t(n) + 1, 0);
  for (int k = 0; k < n; ++k) {
    bodyBegin[size_t(k) + 1] = bodyBegin[size_t(k)] + worlds[size_t(k)]->numBodies();
    shapeBegin[size_t(k) + 1] = shapeBegin[size_t(k)] + worlds[size_t(k)]->numShapes();
    jointBegin[size_t(k) + 1] = jointBegin[size_t(k)] + worlds[size_t(k)]->numJoints();
  }
  RigidDesc out;
  out.bodies.reserve(size_t(bodyBegin.back()));
  out.shapes.reserve(size_t(shapeBegin.back()));
  out.joints.reserve(size_t(jointBegin.back()));
  for (int k = 0; k < n; ++k) {
    const RigidDesc& desc = *worlds[size_t(k)];
    const int B = bodyBegin[size_t(k)], S = shapeBegin[size_t(k)];
    const auto body = [&](int b) { return b < 0 ? b : b + B; };
    const auto moved = [&](Transform t) {
      t.p = t.p + spacing * float(firstWorld + k);
      return t;
    };
    for (BodyDesc b : desc.bodies) {
      b.pose = moved(b.pose);
      b.motion.pose0 = moved(b.motion.pose0);
      for (Transform& t : b.motionSamples) t = moved(t);
      if (!b.name.empty()) b.name = "world " + std::to_string(k) + " " + b.name;
      out.bodies.push_back(std::move(b));
    }
    for (RigidShapeDesc s : desc.shapes) {
      if (s.body < 0) s.localPose = moved(s.localPose);  // static: placed in the world
      s.body = body(s.body);
      s.world = k;
      out.shapes.push_back(std::move(s));
    }
    for (JointDesc j : desc.joints) {
      if (j.parent < 0) j.parentAnchor = moved(j.parentAnchor);  // anchored in the world
      j.parent = body(j.parent);
      j.child = body(j.child);
      out.joints.push_back(j);
    }
    for (const auto& [a, b] : desc.filteredShapePairs)
      out.filteredShapePairs.push_back({a + S, b + S});
  }
  // Color c: its bodies of world 0, then of world 1, ...
  out.bodyColorOffsets.push_back(0);
  for (int c = 0; c < colors; ++c) {
    for (int k = 0; k < n; ++k) {
      const RigidDesc& desc = *worlds[size_t(k)];
      if (c + 1 >= int(desc.bodyColorOffsets.size())) continue;
      for (int i = desc.bodyColorOffsets[size_t(c)]; i < desc.bodyColorOffsets[size_t(c) + 1]; ++i)
        out.bodiesByColor.push_back(desc.bodiesByColor[size_t(i)] + bodyBegin[size_t(k)]);
    }
    out.bodyColorOffsets.push_back(int(out.bodiesByColor.size()));
  }
  // Joint lists: each body's joints, in the same order, in its world's joint block.
  out.jointOffsets.push_back(0);
  for (int k = 0; k < n; ++k) {
    const RigidDesc& desc = *worlds[size_t(k)];
    for (int b = 0; b < desc.numBodies(); ++b) {
      for (int i = desc.jointOffsets[size_t(b)]; i < desc.jointOffsets[size_t(b) + 1]; ++i)
        out.bodyJoints.push_back(desc.bodyJoints[size_t(i)] + jointBegin[size_t(k)]);
      out.jointOffsets.push_back(int(out.bodyJoints.size()));
    }
  }
  out.worldBodyOffsets = bodyBegin;
  out.worldJointOffsets = jointBegin;
  validateRigidDesc(out);
  return out;
}

RigidDesc replicateWorlds(const RigidDesc& desc, int n, const Vec3& spacing) {
  if (n < 1)
    throw Error("replicateWorlds needs at least one world (got " + std::to_string(n) + ")");
  const std::vector<const RigidDesc*> copies(static_cast<size_t>(n), &desc);
  return combineWorlds(copies, spacing);
}

void deriveRigidGraphs(RigidDesc& desc, const ColoringOptions& options) {
  const int numBodies = desc.numBodies();
  std::vector<std::pair<int, int>> graphEdges;
  graphEdges.reserve(desc.joints.size());
  for (const JointDesc& j : desc.joints)
    if (j.parent >= 0 && j.child >= 0 && j.parent != j.child)
      graphEdges.push_back({j.parent, j.child});
  const Coloring coloring = colorGraph(numBodies, graphEdges, options);
  desc.bodyColorOffsets = coloring.colorOffsets;
  desc.bodiesByColor = coloring.particlesByColor;

  // Body → joint CSR by counting sort; scanning joints in order keeps each list in joint order.
  const auto forEachEnd = [&](auto&& visit) {
    for (int j = 0; j < desc.numJoints(); ++j) {
      const JointDesc& joint = desc.joints[size_t(j)];
      if (joint.parent >= 0) visit(joint.parent, j);
      if (joint.child >= 0 && joint.child != joint.parent) visit(joint.child, j);
    }
  };
  desc.jointOffsets.assign(size_t(numBodies) + 1, 0);
  forEachEnd([&](int body, int) { ++desc.jointOffsets[size_t(body) + 1]; });
  for (int b = 0; b < numBodies; ++b)
    desc.jointOffsets[size_t(b) + 1] += desc.jointOffsets[size_t(b)];
  desc.bodyJoints.assign(size_t(desc.jointOffsets.back()), 0);
  std::vector<int> cursor(desc.jointOffsets.begin(), desc.jointOffsets.end() - 1);
  forEachEnd([&](int body, int j) { desc.bodyJoints[size_t(cursor[size_t(body)]++)] = j; });
}

// ---- Measurements
// ----------------------------------------------------------------------------------

std::vector<std::vector<int>> jointedBodyGroups(const RigidDesc& desc) {
  const int n = desc.numBodies();
  std::vector<int> root(static_cast<size_t>(n));
  for (int b = 0; b < n; ++b) root[size_t(b)] = b;
  const auto find = [&](int b) {
    while (root[size_t(b)] != b) b = root[size_t(b)] = root[size_t(root[size_t(b)])];
    return b;
  };
  for (const JointDesc& j : desc.joints) {
    if (j.parent < 0 || j.child < 0 || j.parent >= n || j.child >= n) continue;
    const int a = find(j.parent), b = find(j.child);
    if (a != b) root[size_t(std::max(a, b))] = std::min(a, b);
  }
  // The smaller id always becomes the root, so a group's root is its smallest body.
  std::vector<int> groupOfRoot(size_t(n), -1);
  std::vector<std::vector<int>> groups;
  for (int b = 0; b < n; ++b) {
    const int r = find(b);
    if (groupOfRoot[size_t(r)] < 0) {
      groupOfRoot[size_t(r)] = int(groups.size());
      groups.emplace_back();
    }
    groups[size_t(groupOfRoot[size_t(r)])].push_back(b);
  }
  return groups;
}

JointGap largestJointGap(const RigidDesc& desc, std::span<const Transform> poses) {
  if (int(poses.size()) != desc.numBodies())
    throw Error("largestJointGap: got " + std::to_string(poses.size()) + " poses for " +
                std::to_string(desc.numBodies()) + " bodies.");
  const auto anchorPoint = [&](int body, const Transform& anchor) {
    return body >= 0 ? transformPoint(poses[size_t(body)], anchor.p) : anchor.p;
  };
  JointGap worst;
  double worstRatio = -1.0;
  for (int j = 0; j < desc.numJoints(); ++j) {
    const JointDesc& joint = desc.joints[size_t(j)];
    const Vec3 a = anchorPoint(joint.parent, joint.parentAnchor);
    const Vec3 b = anchorPoint(joint.child, joint.childAnchor);
    if (!isFinite(a) || !isFinite(b)) {
      ++worst.nonFinite;
      continue;
    }
    const float gap = length(a - b);
    const float reference = length(joint.parentAnchor.p) + length(joint.childAnchor.p);
    if (!(reference > 0.0f)) continue;
    if (double(gap) / reference > worstRatio) {
      worstRatio = double(gap) / reference;
      worst.joint = j;
      worst.gap = gap;
      worst.referenceLength = reference;
    }
  }
  return worst;
}

CapsuleOverlap deepestCapsuleOverlap(const RigidDesc& desc, std::span<const Transform> poses,
                                     float toleranceFraction) {
  if (int(poses.size()) != desc.numBodies())
    throw Error("deepestCapsuleOverlap: got " + std::to_string(poses.size()) + " poses for " +
                std::to_string(desc.numBodies()) + " bodies.");
  struct Capsule {
    int shape, body;
    Vec3 a, b, centre;  // core segment ends and midpoint [m]
    float radius;
  };
  CapsuleOverlap out;
  std::vector<Capsule> capsules;
  float cell = 0.0f;
  for (int s = 0; s < desc.numShapes(); ++s) {
    const RigidShapeDesc& shape = desc.shapes[size_t(s)];
    if (shape.geometry.type != ShapeType::Capsule) continue;
    Transform world = shape.localPose;
    if (shape.body >= 0) {
      const Transform& body = poses[size_t(shape.body)];
      world = {transformPoint(body, shape.localPose.p), body.q * shape.localPose.q};
    }
    const Vec3 axis = rotate(world.q, {0.0f, 0.0f, shape.geometry.halfHeight});
    Capsule c{s, shape.body, world.p - axis, world.p + axis, world.p, shape.geometry.radius};
    if (!isFinite(c.a) || !isFinite(c.b)) {
      ++out.skippedNonFinite;
      continue;
    }
    capsules.push_back(c);
    cell = std::max(cell, 2.0f * (shape.geometry.halfHeight + shape.geometry.radius));
  }
  if (capsules.size() < 2 || !(cell > 0.0f)) return out;

  // Uniform grid keyed by cell coordinates: two capsules can touch only if their centres are
  // within halfHeightA + rA + halfHeightB + rB <= cell of each other, i.e. in neighbouring cells.
  constexpr int64_t kCellLimit = (int64_t(1) << 20) - 2;  // 21 bits per axis, clamped (monotone)
  const auto cellOf = [&](float x) {
    const double c = std::floor(double(x) / double(cell));
    return int64_t(std::clamp(c, double(-kCellLimit), double(kCellLimit)));
  };
  const auto key = [](int64_t i, int64_t j, int64_t k) {
    const auto bits = [](int64_t v) { return uint64_t(v + (int64_t(1) << 20)) & 0x1FFFFFu; };
    return (bits(i) << 42) | (bits(j) << 21) | bits(k);
  };
  std::vector<std::pair<uint64_t, int>> sorted(capsules.size());
  for (size_t i = 0; i < capsules.size(); ++i) {
    const Vec3& p = capsules[i].centre;
    sorted[i] = {key(cellOf(p.x), cellOf(p.y), cellOf(p.z)), int(i)};
  }
  std::sort(sorted.begin(), sorted.end());

  std::vector<std::pair<int, int>> filtered = desc.filteredShapePairs;
  for (auto& pair : filtered) pair = ordered(pair.first, pair.second);
  std::sort(filtered.begin(), filtered.end());

  double worstExcess = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < capsules.size(); ++i) {
    const Capsule& ci = capsules[i];
    const int64_t x = cellOf(ci.centre.x), y = cellOf(ci.centre.y), z = cellOf(ci.centre.z);
    for (int64_t dx = -1; dx <= 1; ++dx)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dz = -1; dz <= 1; ++dz) {
          const uint64_t k = key(x + dx, y + dy, z + dz);
          auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair<uint64_t, int>{k, 0});
          for (; it != sorted.end() && it->first == k; ++it) {
            const size_t jIndex = size_t(it->second);
            if (jIndex <= i) continue;  // each pair once
            const Capsule& cj = capsules[jIndex];
            if (ci.body == cj.body) continue;  // same body, or both static
            if (std::binary_search(filtered.begin(), filtered.end(), ordered(ci.shape, cj.shape)))
              continue;
            const float distance = closestPointEdgeEdge(ci.a, ci.b, cj.a, cj.b, 1e-12f).distance;
            const float depth = ci.radius + cj.radius - distance;
            const float allowance = toleranceFraction * std::min(ci.radius, cj.radius);
            out.violations += depth > allowance;
            if (double(depth) - allowance > worstExcess) {
              worstExcess = double(depth) - allowance;
              out.shapeA = std::min(ci.shape, cj.shape);
              out.shapeB = std::max(ci.shape, cj.shape);
              out.depth = depth;
              out.allowance = allowance;
            }
          }
        }
  }
  return out;
}

}  // namespace weft
