#include "solver/cloth_builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

#include "kernels/runtime/errors.h"
#include "kernels/triangle_geometry.h"
#include "solver/adjacency.h"
#include "solver/shape_checks.h"

namespace weft {
namespace {

// Numbers in messages: shortest readable form ("0.1", "-1", "nan"), not std::to_string's
// "0.100000".
std::string str(float v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::string str(const Vec3& v) {
  std::ostringstream s;
  s << '(' << v.x << ", " << v.y << ", " << v.z << ')';
  return s.str();
}
std::string str(const Quat& q) {
  std::ostringstream s;
  s << '(' << q.x << ", " << q.y << ", " << q.z << ", " << q.w << ')';
  return s.str();
}

bool finiteNonNegative(float v) {
  return std::isfinite(v) && v >= 0.0f;
}
bool finitePositive(float v) {
  return std::isfinite(v) && v > 0.0f;
}
bool finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Rotations must be unit quaternions: rotate() assumes it, and silently normalizing would hide
// a wrong input. The tolerance admits float round-off of hand-written values.
bool isUnit(const Quat& q) {
  const float n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return std::isfinite(n) && std::fabs(n - 1.0f) <= 1e-3f;
}

// The first problem among the parameters grids and meshes share, or "".
std::string checkCommonParams(const std::string& name, const Vec3& position, const Quat& rotation,
                              const Vec3& velocity, const TriangleMaterial& triangle,
                              const EdgeMaterial& edge, float particleRadius) {
  if (!finite(position)) return name + ": position " + str(position) + " is not finite.";
  if (!isUnit(rotation))
    return name + ": rotation " + str(rotation) +
           " is not a unit quaternion; normalize it (e.g. use quatFromAxisAngle).";
  if (!finite(velocity)) return name + ": velocity " + str(velocity) + " is not finite.";
  const auto material = [&](const char* field, float v) -> std::string {
    if (finiteNonNegative(v)) return {};
    return name + ": " + field + " is " + str(v) +
           "; stiffness and damping must be finite and >= 0.";
  };
  for (const std::string& s :
       {material("triangleMaterial.ke", triangle.ke), material("triangleMaterial.ka", triangle.ka),
        material("triangleMaterial.kd", triangle.kd), material("edgeMaterial.ke", edge.ke),
        material("edgeMaterial.kd", edge.kd)})
    if (!s.empty()) return s;
  if (!finiteNonNegative(particleRadius))
    return name + ": particleRadius is " + str(particleRadius) + " m; it must be finite and >= 0.";
  return {};
}

// Most particles a model may have: keeps every particle id and every adjacency offset (about 24
// int32 entries per particle) far inside int32.
constexpr int64_t kMaxParticles = int64_t(1) << 26;

std::string checkSize(const std::string& name, int64_t existing, int64_t adding) {
  if (existing + adding <= kMaxParticles) return {};
  return name + ": " + std::to_string(adding) + " more vertices would make " +
         std::to_string(existing + adding) + " particles, more than the " +
         std::to_string(kMaxParticles) + " a model may have; use a coarser cloth.";
}

/// "triangle 7 (0, 5, 9)" for the caller's triangle k, or "the face on line 31 (vertices 1, 6,
/// 10)" for one read from a file (`lines`: ClothMeshParams::triangleLines), in the file's
/// numbering.
std::string describeTriangle(size_t k, const Int3& t, const std::vector<int>& lines) {
  std::ostringstream s;
  if (lines.empty())
    s << "triangle " << k << " (" << t.x << ", " << t.y << ", " << t.z << ')';
  else
    s << "the face on line " << lines[k] << " (vertices " << t.x + 1 << ", " << t.y + 1 << ", "
      << t.z + 1 << ')';
  return s.str();
}

}  // namespace

int ClothBuilder::addCloth(Cloth cloth, const std::vector<Vec3>& worldPositions,
                           const Vec3& velocity, const std::vector<Int3>& local,
                           const TriangleMaterial& triangleMaterial, float density,
                           float particleRadius, const std::vector<int>& triangleLines) {
  const int first = numParticles();
  static const std::vector<int> kNoLines;
  const std::vector<int>& lines = triangleLines.size() == local.size() ? triangleLines : kNoLines;
  const int numVertices = int(worldPositions.size());
  const int clothIndex = int(cloths_.size());
  cloth.firstParticle = first;
  for (const Vec3& p : worldPositions) {
    model_.positions.push_back(p);
    model_.velocities.push_back(velocity);
    model_.masses.push_back(0.0f);
    model_.radii.push_back(particleRadius);
    particleCloth_.push_back(clothIndex);
  }

  std::vector<int> dropped;  // local ids of degenerate triangles
  // The first triangle of each vertex set (sorted corners): a repeated triangle would add its
  // membrane twice and hinge on itself.
  std::map<std::array<int, 3>, size_t> triangleOf;
  for (size_t k = 0; k < local.size(); ++k) {
    const Int3& t = local[k];
    // Indices are checked against this cloth's own vertices: shifted by `first`, a wrong index
    // could otherwise land silently in another cloth.
    const auto inRange = [&](int v) { return v >= 0 && v < numVertices; };
    if (!inRange(t.x) || !inRange(t.y) || !inRange(t.z)) {
      const int bad = !inRange(t.x) ? t.x : (!inRange(t.y) ? t.y : t.z);
      if (cloth.error.empty())
        cloth.error = cloth.name + ": " + describeTriangle(k, t, lines) + " uses vertex " +
                      std::to_string(lines.empty() ? bad : bad + 1) + ", but the mesh has " +
                      std::to_string(numVertices) + " vertices; fix the triangle indices.";
      continue;
    }
    if (t.x == t.y || t.y == t.z || t.z == t.x) {
      if (cloth.error.empty())
        cloth.error = cloth.name + ": " + describeTriangle(k, t, lines) +
                      " repeats a vertex; remove it or fix its indices.";
      continue;
    }
    std::array<int, 3> corners{t.x, t.y, t.z};
    std::sort(corners.begin(), corners.end());
    if (const auto [it, inserted] = triangleOf.try_emplace(corners, k); !inserted) {
      if (cloth.error.empty())
        cloth.error =
            cloth.name + ": " + describeTriangle(k, t, lines) + " has the same three vertices as " +
            describeTriangle(it->second, local[it->second], lines) + "; remove one of them.";
      continue;
    }
    const Int3 global{t.x + first, t.y + first, t.z + first};
    Mat22 restInverse;
    float area = 0.0f;
    if (!triangleRestData(worldPositions[size_t(t.x)], worldPositions[size_t(t.y)],
                          worldPositions[size_t(t.z)], restInverse, area)) {
      dropped.push_back(int(k));
      continue;
    }
    model_.triangles.push_back(global);
    model_.triangleRestInverse.push_back(restInverse);
    model_.triangleRestAreas.push_back(area);
    model_.triangleMaterials.push_back(triangleMaterial);
    triangleCloth_.push_back(clothIndex);
    // Lumped mass (reference add_cloth_mesh): a third of the triangle's mass to each corner.
    for (int v : {global.x, global.y, global.z}) model_.masses[size_t(v)] += density * area / 3.0f;
  }

  // (A non-finite position makes its triangles degenerate too; finalize() names it instead.)
  const bool finite = std::all_of(worldPositions.begin(), worldPositions.end(),
                                  [](const Vec3& x) { return std::isfinite(x.x + x.y + x.z); });
  if (!local.empty() && dropped.size() == local.size() && finite && cloth.error.empty())
    cloth.error =
        cloth.name + ": " +
        (local.size() == 1 ? std::string("its one triangle has")
                           : "all " + std::to_string(local.size()) + " of its triangles have") +
        " zero area, so no cloth is left; check the vertices (and the scale).";
  // With invalid parameters finalize() throws anyway; a warning about their consequences would
  // only distract from that error.
  if (!dropped.empty() && cloth.error.empty()) {
    std::string ids;
    for (size_t i = 0; i < dropped.size() && i < 10; ++i)
      ids +=
          (i ? ", " : "") + std::to_string(lines.empty() ? dropped[i] : lines[size_t(dropped[i])]);
    if (dropped.size() > 10) ids += ", ...";
    warnings_.push_back(cloth.name + ": dropped " + std::to_string(dropped.size()) +
                        " degenerate (zero-area) triangle" + (dropped.size() > 1 ? "s" : "") +
                        (lines.empty()        ? " ("
                         : dropped.size() > 1 ? " (faces on lines "
                                              : " (the face on line ") +
                        ids + ").");
  }
  cloths_.push_back(std::move(cloth));
  return first;
}

int ClothBuilder::addClothGrid(const ClothGridParams& p) {
  Cloth cloth;
  cloth.name = "cloth grid " + std::to_string(numGrids_++);
  cloth.edgeMaterial = p.edgeMaterial;
  const int64_t numVertices = (int64_t(p.dimX) + 1) * (int64_t(p.dimY) + 1);
  if (p.dimX < 1 || p.dimY < 1)
    cloth.error = cloth.name + ": dimX = " + std::to_string(p.dimX) +
                  " and dimY = " + std::to_string(p.dimY) +
                  " cells; a grid needs at least 1 cell each way.";
  else
    cloth.error = checkSize(cloth.name, numParticles(), numVertices);
  if (!cloth.error.empty()) {  // nothing sensible to add
    cloth.firstParticle = numParticles();
    cloths_.push_back(std::move(cloth));
    return numParticles();
  }
  if (!finitePositive(p.cellX) || !finitePositive(p.cellY))
    cloth.error = cloth.name + ": cell size " + str(p.cellX) + " x " + str(p.cellY) +
                  " m; cellX and cellY must be finite and > 0.";
  else if (!finiteNonNegative(p.mass))
    cloth.error =
        cloth.name + ": mass is " + str(p.mass) + " kg per particle; it must be finite and >= 0.";
  else
    cloth.error = checkCommonParams(cloth.name, p.position, p.rotation, p.velocity,
                                    p.triangleMaterial, p.edgeMaterial, p.particleRadius);

  const int rowLength = p.dimX + 1;
  std::vector<Vec3> positions;
  positions.reserve(size_t(numVertices));
  for (int y = 0; y <= p.dimY; ++y)
    for (int x = 0; x <= p.dimX; ++x)
      positions.push_back(p.position +
                          rotate(p.rotation, Vec3{float(x) * p.cellX, float(y) * p.cellY, 0.0f}));
  // Cell (x, y) with x, y >= 1 has corners v0 = (x−1, y−1), v1 = (x, y−1), v2 = (x, y),
  // v3 = (x−1, y) and the triangles (v0, v1, v3), (v1, v2, v3) (reference add_cloth_grid).
  std::vector<Int3> triangles;
  triangles.reserve(size_t(2) * size_t(p.dimX) * size_t(p.dimY));
  for (int y = 1; y <= p.dimY; ++y)
    for (int x = 1; x <= p.dimX; ++x) {
      const int v0 = (y - 1) * rowLength + x - 1, v1 = (y - 1) * rowLength + x;
      const int v2 = y * rowLength + x, v3 = y * rowLength + x - 1;
      triangles.push_back({v0, v1, v3});
      triangles.push_back({v1, v2, v3});
    }

  const int first = addCloth(std::move(cloth), positions, p.velocity, triangles, p.triangleMaterial,
                             0.0f, p.particleRadius);
  // The reference computes area-lumped masses, then overwrites them all with `mass`.
  for (int y = 0; y <= p.dimY; ++y)
    for (int x = 0; x <= p.dimX; ++x) {
      const bool fixed = (p.fixLeft && x == 0) || (p.fixRight && x == p.dimX) ||
                         (p.fixBottom && y == 0) || (p.fixTop && y == p.dimY);
      model_.masses[size_t(first + y * rowLength + x)] = fixed ? 0.0f : p.mass;
    }
  return first;
}

int ClothBuilder::addClothMesh(const ClothMeshParams& p) {
  Cloth cloth;
  cloth.name = "cloth mesh " + std::to_string(numMeshes_++);
  cloth.edgeMaterial = p.edgeMaterial;
  cloth.error = checkSize(cloth.name, numParticles(), int64_t(p.vertices.size()));
  if (!cloth.error.empty()) {  // nothing sensible to add
    cloth.firstParticle = numParticles();
    cloths_.push_back(std::move(cloth));
    return numParticles();
  }
  if (!finitePositive(p.scale))
    cloth.error = cloth.name + ": scale is " + str(p.scale) + "; it must be finite and > 0.";
  else if (!finiteNonNegative(p.density))
    cloth.error =
        cloth.name + ": density is " + str(p.density) + " kg/m^2; it must be finite and >= 0.";
  else
    cloth.error = checkCommonParams(cloth.name, p.position, p.rotation, p.velocity,
                                    p.triangleMaterial, p.edgeMaterial, p.particleRadius);

  std::vector<Vec3> positions;
  positions.reserve(p.vertices.size());
  for (const Vec3& v : p.vertices)
    positions.push_back(p.position + rotate(p.rotation, p.scale * v));
  if (!p.triangleLines.empty() && p.triangleLines.size() != p.triangles.size() &&
      cloth.error.empty())
    cloth.error = cloth.name + ": triangleLines has " + std::to_string(p.triangleLines.size()) +
                  " entries for " + std::to_string(p.triangles.size()) +
                  " triangles; give one per triangle or none.";
  return addCloth(std::move(cloth), positions, p.velocity, p.triangles, p.triangleMaterial,
                  p.density, p.particleRadius, p.triangleLines);
}

void ClothBuilder::fixParticle(int particle) {
  if (particle < 0 || particle >= numParticles())
    throw Error("fixParticle(" + std::to_string(particle) + "): there is no such particle (the " +
                "builder has " + std::to_string(numParticles()) +
                " particles); add the cloth first or fix the index.");
  model_.masses[size_t(particle)] = 0.0f;
}

void ClothBuilder::addShape(const ShapeDesc& shape) {
  model_.shapes.push_back(shape);
}

void ClothBuilder::addDriver(const DriverDesc& driver) {
  model_.drivers.push_back(driver);
}

std::string ClothBuilder::describeParticle(int particle) const {
  const Cloth& cloth = cloths_[size_t(particleCloth_[size_t(particle)])];
  return "particle " + std::to_string(particle) + " (vertex " +
         std::to_string(particle - cloth.firstParticle) + " of " + cloth.name + ")";
}

void ClothBuilder::validateParticles(const ModelDesc& model) const {
  for (int i = 0; i < model.numParticles(); ++i) {
    const size_t k = size_t(i);
    if (!finite(model.positions[k]))
      throw Error(describeParticle(i) + " has the non-finite position " + str(model.positions[k]) +
                  "; check the mesh vertices and the cloth's position, rotation and scale.");
    if (!finite(model.velocities[k]))
      throw Error(describeParticle(i) + " has the non-finite velocity " + str(model.velocities[k]) +
                  ".");
    if (!finiteNonNegative(model.masses[k]))
      throw Error(describeParticle(i) + " has mass " + str(model.masses[k]) +
                  " kg; masses must be finite and >= 0.");
    if (!finiteNonNegative(model.radii[k]))
      throw Error(describeParticle(i) + " has radius " + str(model.radii[k]) +
                  " m; radii must be finite and >= 0.");
  }
}

void ClothBuilder::validateShapes(const ModelDesc& model) const {
  for (size_t s = 0; s < model.shapes.size(); ++s) {
    const ShapeDesc& shape = model.shapes[s];
    const std::string name = "shape " + std::to_string(s) + " ('" + shape.name + "')";
    if (const std::string problem = shapeGeometryProblem(shape.geometry); !problem.empty())
      throw Error(name + ": " + problem);
    if (!finiteNonNegative(shape.margin))
      throw Error(name + " has margin " + str(shape.margin) + " m; it must be finite and >= 0.");
    const ContactMaterial& m = shape.material;
    if (!finiteNonNegative(m.ke) || !finiteNonNegative(m.kd) || !finiteNonNegative(m.mu))
      throw Error(name + " has contact material ke = " + str(m.ke) + ", kd = " + str(m.kd) +
                  ", mu = " + str(m.mu) + "; all must be finite and >= 0.");
    const ShapeMotion& motion = shape.motion;
    const int motionType = int(motion.type);
    if (motionType < int(MotionType::Static) || motionType > int(MotionType::Sampled))
      throw Error(name + " has the unknown motion type " + std::to_string(motionType) + ".");
    if (motion.type == MotionType::Sampled) {
      if (shape.motionSamples.empty() || !std::isfinite(motion.sampleInterval) ||
          !(motion.sampleInterval > 0.0f))
        throw Error(name + " has sampled motion with " +
                    std::to_string(shape.motionSamples.size()) + " samples every " +
                    str(motion.sampleInterval) +
                    " s; it needs at least one sample and a positive interval.");
      for (size_t k = 0; k < shape.motionSamples.size(); ++k)
        if (!finite(shape.motionSamples[k].p) || !isUnit(shape.motionSamples[k].q))
          throw Error(name + ": motion sample " + std::to_string(k) +
                      " is not a finite position with a unit quaternion.");
    }
    if (!finite(motion.pose0.p) || !isUnit(motion.pose0.q))
      throw Error(name + " has the pose p = " + str(motion.pose0.p) + ", q = " +
                  str(motion.pose0.q) + "; the position must be finite and q a unit quaternion.");
    if (!finite(motion.linearVelocity) || !finite(motion.angularVelocity))
      throw Error(name + " has a non-finite velocity (linear " + str(motion.linearVelocity) +
                  ", angular " + str(motion.angularVelocity) + ").");
    if (!std::isfinite(motion.startTime) || !std::isfinite(motion.stopTime) ||
        motion.startTime > motion.stopTime)
      throw Error(name + " moves from t = " + str(motion.startTime) + " s to t = " +
                  str(motion.stopTime) + " s; the times must be finite and start <= stop.");
  }
}

void ClothBuilder::validateDrivers(const ModelDesc& model) const {
  std::vector<int> driverOf(size_t(model.numParticles()), -1);  // (numParticles)
  for (size_t d = 0; d < model.drivers.size(); ++d) {
    const DriverDesc& desc = model.drivers[d];
    const ParticleDriver& driver = desc.driver;
    const std::string name = "driver " + std::to_string(d);
    if (!finite(driver.axisPoint) || !finite(driver.axisDirection) ||
        !std::isfinite(driver.angularSpeed))
      throw Error(name + " has a non-finite axis point " + str(driver.axisPoint) + ", direction " +
                  str(driver.axisDirection) + " or angular speed " + str(driver.angularSpeed) +
                  ".");
    if (std::fabs(length(driver.axisDirection) - 1.0f) > 1e-3f)
      throw Error(name + " has the axis direction " + str(driver.axisDirection) +
                  ", which is not a unit vector; normalize it.");
    if (!std::isfinite(driver.startTime) || !std::isfinite(driver.stopTime) ||
        driver.startTime > driver.stopTime)
      throw Error(name + " runs from t = " + str(driver.startTime) + " s to t = " +
                  str(driver.stopTime) + " s; the times must be finite and start <= stop.");
    for (int p : desc.particles) {
      if (p < 0 || p >= model.numParticles())
        throw Error(name + " drives particle " + std::to_string(p) +
                    ", which does not exist (the model has " +
                    std::to_string(model.numParticles()) + " particles).");
      if (model.masses[size_t(p)] != 0.0f)
        throw Error(name + " drives " + describeParticle(p) + ", which has mass " +
                    str(model.masses[size_t(p)]) +
                    " kg; driven particles must be fixed first (fixParticle or the grid's fix "
                    "flags).");
      if (driverOf[size_t(p)] == int(d))
        throw Error(name + " lists " + describeParticle(p) + " twice; list each particle once.");
      if (driverOf[size_t(p)] >= 0)
        throw Error(describeParticle(p) + " is driven by both driver " +
                    std::to_string(driverOf[size_t(p)]) + " and " + name +
                    "; a particle can follow only one driver.");
      driverOf[size_t(p)] = int(d);
    }
  }
}

void ClothBuilder::computeBendingEdges(ModelDesc& model) const {
  // Edge key (lower id, higher id) → row. The map is only looked up, never iterated, so the row
  // order is the deterministic first-appearance order of the triangle traversal.
  std::unordered_map<uint64_t, int> rowOfEdge;
  rowOfEdge.reserve(model.triangles.size() * 2);
  std::vector<int> firstTriangle;   // (numEdges) the triangle that supplied o0
  std::vector<int> secondTriangle;  // (numEdges) the triangle that supplied o1, or -1
  for (size_t t = 0; t < model.triangles.size(); ++t) {
    const Int3& tri = model.triangles[t];
    const int corners[3] = {tri.x, tri.y, tri.z};
    for (int k = 0; k < 3; ++k) {
      const int v0 = corners[k], v1 = corners[(k + 1) % 3], opposite = corners[(k + 2) % 3];
      const uint64_t key =
          (uint64_t(uint32_t(std::min(v0, v1))) << 32) | uint32_t(std::max(v0, v1));
      const auto [it, inserted] = rowOfEdge.try_emplace(key, int(model.edges.size()));
      if (inserted) {
        model.edges.push_back({opposite, -1, v0, v1});
        model.edgeMaterials.push_back(cloths_[size_t(triangleCloth_[t])].edgeMaterial);
        firstTriangle.push_back(int(t));
        secondTriangle.push_back(-1);
        continue;
      }
      Int4& row = model.edges[size_t(it->second)];
      if (row.y != -1) {
        const Cloth& cloth = cloths_[size_t(triangleCloth_[t])];
        throw Error(
            cloth.name + ": the edge between vertices " + std::to_string(v0 - cloth.firstParticle) +
            " and " + std::to_string(v1 - cloth.firstParticle) + " (particles " +
            std::to_string(v0) + ", " + std::to_string(v1) +
            ") is shared by three or more triangles (model triangles " +
            std::to_string(firstTriangle[size_t(it->second)]) + ", " +
            std::to_string(secondTriangle[size_t(it->second)]) + " and " + std::to_string(t) +
            "); cloth meshes must be manifold, so split that edge "
            "or remove a triangle.");
      }
      row.y = opposite;
      secondTriangle[size_t(it->second)] = int(t);
    }
  }

  // Rest shape of each hinge (cloth_vbd_spec §3.3): boundary edges carry no bending energy.
  const std::vector<Vec3>& x = model.positions;
  model.edgeRestAngles.resize(model.edges.size());
  model.edgeRestLengths.resize(model.edges.size());
  for (size_t e = 0; e < model.edges.size(); ++e) {
    const Int4& s = model.edges[e];
    model.edgeRestAngles[e] =
        s.y < 0 ? 0.0f
                : dihedralAngle(x[size_t(s.x)], x[size_t(s.y)], x[size_t(s.z)], x[size_t(s.w)]);
    model.edgeRestLengths[e] = length(x[size_t(s.w)] - x[size_t(s.z)]);
  }
}

ModelDesc ClothBuilder::finalize(const ColoringOptions& coloring) const {
  for (const Cloth& cloth : cloths_)
    if (!cloth.error.empty()) throw Error(cloth.error);
  if (numParticles() == 0)
    throw Error(
        "the model has no particles; add a cloth (addClothGrid or addClothMesh) before "
        "finalize().");
  ModelDesc model = model_;
  model.warnings = warnings_;
  validateParticles(model);
  validateShapes(model);
  validateDrivers(model);

  computeBendingEdges(model);
  model.adjacency = buildVertexAdjacency(model.numParticles(), model.triangles, model.edges);
  for (int v = 0; v < model.numParticles(); ++v) {
    const int count = adjacentElementCount(model.adjacency, v);
    if (count > kMaxElementsPerVertex)
      throw Error(describeParticle(v) + " touches " + std::to_string(count) +
                  " elements (triangles + bending edges), more than the " +
                  std::to_string(kMaxElementsPerVertex) +
                  " the per-vertex tile solve handles; remesh the cloth so that no vertex has "
                  "such a high valence.");
  }
  model.coloring = colorParticles(model.numParticles(), model.triangles, model.triangleMaterials,
                                  model.edges, model.edgeMaterials, coloring);
  return model;
}

ModelDesc combineWorlds(std::span<const ModelDesc* const> worlds, const Vec3& spacing,
                        int firstWorld) {
  if (worlds.empty()) throw Error("combineWorlds needs at least one world");
  int colors = 0;
  for (const ModelDesc* desc : worlds) {
    if (!desc->worlds.empty() || !desc->worldRanges.particles.empty())
      throw Error("combineWorlds: a model has worlds already");
    if (desc->adjacency.triangleOffsets.size() != size_t(desc->numParticles()) + 1 ||
        desc->coloring.colorOffsets.empty())
      throw Error("combineWorlds: a model has no adjacency or coloring (finalize() it first)");
    if (desc->coloring.includesBending != worlds.front()->coloring.includesBending)
      throw Error("combineWorlds: the models were colored with different options");
    colors = std::max(colors, desc->coloring.numColors());
  }
  const int n = int(worlds.size());
  ModelDesc out;
  ModelDesc::WorldRanges& ranges = out.worldRanges;
  ranges.particles.assign(size_t(n) + 1, 0);
  ranges.triangles.assign(size_t(n) + 1, 0);
  ranges.edges.assign(size_t(n) + 1, 0);
  ranges.shapes.assign(size_t(n) + 1, 0);
  for (int k = 0; k < n; ++k) {
    const ModelDesc& d = *worlds[size_t(k)];
    ranges.particles[size_t(k) + 1] = ranges.particles[size_t(k)] + d.numParticles();
    ranges.triangles[size_t(k) + 1] = ranges.triangles[size_t(k)] + d.numTriangles();
    ranges.edges[size_t(k) + 1] = ranges.edges[size_t(k)] + d.numEdges();
    ranges.shapes[size_t(k) + 1] = ranges.shapes[size_t(k)] + int(d.shapes.size());
  }
  const auto append = [](auto& to, const auto& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  // Adjacency rows of world k: offsets past the rows before, (element, slot) entries with the
  // element moved past the elements before.
  const auto appendRows = [](std::vector<int>& offsets, std::vector<int>& entries,
                             const std::vector<int>& worldOffsets,
                             const std::vector<int>& worldEntries, int elementBegin) {
    const int entryBegin = int(entries.size());
    if (offsets.empty()) offsets.push_back(0);
    for (size_t v = 1; v < worldOffsets.size(); ++v)
      offsets.push_back(worldOffsets[v] + entryBegin);
    for (size_t i = 0; i < worldEntries.size(); i += 2) {
      entries.push_back(worldEntries[i] + elementBegin);
      entries.push_back(worldEntries[i + 1]);
    }
  };
  for (int k = 0; k < n; ++k) {
    const ModelDesc& d = *worlds[size_t(k)];
    const int P = ranges.particles[size_t(k)];
    const Vec3 offset = spacing * float(firstWorld + k);
    const auto particle = [&](int p) { return p < 0 ? p : p + P; };
    const auto moved = [&](Transform t) {
      t.p = t.p + offset;
      return t;
    };
    for (const Vec3& x : d.positions) out.positions.push_back(x + offset);
    append(out.velocities, d.velocities);
    append(out.masses, d.masses);
    append(out.radii, d.radii);
    out.worlds.insert(out.worlds.end(), size_t(d.numParticles()), k);
    for (const Int3& t : d.triangles) out.triangles.push_back({t.x + P, t.y + P, t.z + P});
    append(out.triangleRestInverse, d.triangleRestInverse);
    append(out.triangleRestAreas, d.triangleRestAreas);
    append(out.triangleMaterials, d.triangleMaterials);
    for (const Int4& e : d.edges)
      out.edges.push_back({particle(e.x), particle(e.y), particle(e.z), particle(e.w)});
    append(out.edgeRestAngles, d.edgeRestAngles);
    append(out.edgeRestLengths, d.edgeRestLengths);
    append(out.edgeMaterials, d.edgeMaterials);
    appendRows(out.adjacency.triangleOffsets, out.adjacency.triangleEntries,
               d.adjacency.triangleOffsets, d.adjacency.triangleEntries,
               ranges.triangles[size_t(k)]);
    appendRows(out.adjacency.edgeOffsets, out.adjacency.edgeEntries, d.adjacency.edgeOffsets,
               d.adjacency.edgeEntries, ranges.edges[size_t(k)]);
    append(out.coloring.colorOfParticle, d.coloring.colorOfParticle);
    // Each distinct model's warnings once, named by the first world that has it.
    if (std::find(worlds.begin(), worlds.begin() + k, worlds[size_t(k)]) == worlds.begin() + k)
      for (const std::string& w : d.warnings)
        out.warnings.push_back(n > 1 ? "world " + std::to_string(k) + ": " + w : w);
    for (ShapeDesc s : d.shapes) {
      s.motion.pose0 = moved(s.motion.pose0);
      for (Transform& t : s.motionSamples) t = moved(t);
      s.name = "world " + std::to_string(k) + " " + s.name;
      out.shapes.push_back(std::move(s));
    }
    for (DriverDesc driver : d.drivers) {
      driver.driver.axisPoint = driver.driver.axisPoint + offset;
      for (int& p : driver.particles) p += P;
      out.drivers.push_back(std::move(driver));
    }
  }
  // Color c: its particles of world 0, then of world 1, ...
  out.coloring.includesBending = worlds.front()->coloring.includesBending;
  out.coloring.colorOffsets.push_back(0);
  for (int c = 0; c < colors; ++c) {
    for (int k = 0; k < n; ++k) {
      const Coloring& coloring = worlds[size_t(k)]->coloring;
      if (c >= coloring.numColors()) continue;
      for (int i = coloring.colorOffsets[size_t(c)]; i < coloring.colorOffsets[size_t(c) + 1]; ++i)
        out.coloring.particlesByColor.push_back(coloring.particlesByColor[size_t(i)] +
                                                ranges.particles[size_t(k)]);
    }
    out.coloring.colorOffsets.push_back(int(out.coloring.particlesByColor.size()));
  }
  return out;
}

}  // namespace weft
