// ClothBuilder: assembles a ModelDesc from cloth grids and meshes, shapes and particle drivers
// (reference ModelBuilder.add_cloth_grid / add_cloth_mesh, scenes_spec §0.2, cloth_vbd_spec §3).
//
// What each call does:
//   addClothGrid / addClothMesh  append one particle per vertex (placed by the cloth's transform)
//       and one membrane triangle per face with its rest data (triangleRestData on the placed
//       positions). Degenerate faces are dropped with a warning, as the reference does. A mesh's
//       particle masses are lumped from its triangles (density·area/3 per corner); a grid then
//       overwrites every mass with its per-particle `mass` and zeroes the fixed rows/columns.
//   fixParticle / addShape / addDriver  record what they are given.
//   finalize()  computes the derived data and returns the model: bending edges (below), the
//       vertex adjacency CSR (solver/adjacency.h) and the coloring (solver/coloring.h).
//
// Bending edges: every unique mesh edge, boundary edges included, one row (o0, o1, v0, v1) each,
// in order of first appearance over the triangles (t.x→t.y, t.y→t.z, t.z→t.x per triangle). The
// first triangle with the edge fills (o0, -1, v0, v1) in its own winding, o0 being its third
// vertex; the second supplies o1. Rest angle = dihedralAngle of the initial positions (0 on a
// boundary edge), rest length = |v1 − v0|. An edge of three or more triangles is an error.
//
// Errors: every problem is reported by finalize() as a weft::Error that names the item (cloth,
// particle, shape or driver) and says what to do; add* calls never throw, so a scene can build
// everything and get one clear error at the end. fixParticle() is the exception: it throws at
// once for a particle that does not exist, since nothing sensible could be recorded.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kernels/materials.h"
#include "kernels/math.h"
#include "solver/coloring.h"
#include "solver/model_desc.h"

namespace weft {

struct ClothGridParams {
  Vec3 position;           // placement: world = position + rotate(rotation, local) [m]
  Quat rotation;           // unit quaternion
  Vec3 velocity;           // initial velocity of every particle [m/s]
  int dimX = 0, dimY = 0;  // cells; (dimX+1)×(dimY+1) vertices, vertex (x, y) = y·(dimX+1)+x at
                           // local (x·cellX, y·cellY, 0)
  float cellX = 0.1f, cellY = 0.1f;  // [m]
  float mass = 0.1f;  // per particle [kg] (overwrites the area-lumped mass, as the reference)
  // Columns x = 0 / x = dimX and rows y = 0 / y = dimY get mass 0 (held in place).
  bool fixLeft = false, fixRight = false, fixBottom = false, fixTop = false;
  TriangleMaterial triangleMaterial;
  EdgeMaterial edgeMaterial;
  float particleRadius = 0.1f;  // [m]
};

struct ClothMeshParams {
  Vec3 position;                // placement: world = position + rotate(rotation, scale·v) [m]
  Quat rotation;                // unit quaternion
  float scale = 1.0f;           // [-], > 0
  Vec3 velocity;                // initial velocity of every particle [m/s]
  std::vector<Vec3> vertices;   // (numVertices) in mesh units
  std::vector<Int3> triangles;  // (numTriangles) vertex indices into `vertices`
  // (numTriangles, or empty) the line of the file each triangle came from (counting from 1, e.g.
  // MeshData::triangleLines): messages then name "the face on line L" with the file's vertex
  // numbers (from 1) instead of the triangle's index.
  std::vector<int> triangleLines;
  float density = 0.1f;  // [kg/m²]: each triangle adds density·area/3 to each corner
  TriangleMaterial triangleMaterial;
  EdgeMaterial edgeMaterial;
  float particleRadius = 0.1f;  // [m]
};

class ClothBuilder {
 public:
  /// Adds a regular grid cloth; returns the index of its first particle.
  int addClothGrid(const ClothGridParams& params);
  /// Adds a triangle-mesh cloth; returns the index of its first particle.
  int addClothMesh(const ClothMeshParams& params);
  /// Sets the particle's mass to 0: it is held in place or moved by a driver.
  void fixParticle(int particle);
  void addShape(const ShapeDesc& shape);
  /// Its particles must be fixed (mass 0) by the time finalize() runs.
  void addDriver(const DriverDesc& driver);

  int numParticles() const { return model_.numParticles(); }
  int numTriangles() const { return model_.numTriangles(); }
  /// Things the builder fixed silently, e.g. "cloth mesh 0: dropped 2 degenerate triangles ...".
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// Computes bending edges, adjacency and coloring; validates; returns the model. Throws
  /// weft::Error naming the first invalid item: a cloth parameter or triangle index, a particle
  /// (non-finite or negative values), a shape, a driver (unknown or unfixed particle), a mesh
  /// edge shared by 3+ triangles, or a vertex touching more than kMaxElementsPerVertex elements.
  ModelDesc finalize(const ColoringOptions& coloring = {}) const;

 private:
  struct Cloth {
    std::string name;  // "cloth grid 0", "cloth mesh 1": how errors and warnings name it
    int firstParticle = 0;
    EdgeMaterial edgeMaterial;  // given to the bending edges of its triangles
    std::string error;          // first invalid parameter found when added; finalize() throws it
  };

  // Appends the particles and triangles shared by grids and meshes. `local` triangles index
  // `worldPositions`; invalid ones are recorded in cloth.error and skipped.
  int addCloth(Cloth cloth, const std::vector<Vec3>& worldPositions, const Vec3& velocity,
               const std::vector<Int3>& local, const TriangleMaterial& triangleMaterial,
               float density, float particleRadius, const std::vector<int>& triangleLines = {});
  // "particle 12 (vertex 3 of cloth mesh 1)", for error messages.
  std::string describeParticle(int particle) const;
  void validateParticles(const ModelDesc& model) const;
  void validateShapes(const ModelDesc& model) const;
  void validateDrivers(const ModelDesc& model) const;
  void computeBendingEdges(ModelDesc& model) const;

  ModelDesc model_;  // particles, triangles with rest data, shapes, drivers
  std::vector<Cloth> cloths_;
  std::vector<int> particleCloth_;    // (numParticles) index into cloths_
  std::vector<int> triangleCloth_;    // (numTriangles) index into cloths_
  int numGrids_ = 0, numMeshes_ = 0;  // for naming
  std::vector<std::string> warnings_;
};

/// Finalized cloth models in one (the many-worlds layout, ModelDesc::worldRanges): world k's
/// particles, triangles, bending edges, shapes and drivers follow world k − 1's, each in its
/// model's order, placed `spacing`·k further; its particles carry world k (ModelDesc::worlds), so
/// self-contact never pairs two worlds, and they touch only world k's shapes. The worlds may differ
/// (a parameter sweep). Nothing is recomputed: adjacency rows are shifted, and color c holds color
/// c's particles of every world in turn, so one launch per color covers all worlds and each
/// world's particles meet the colors they meet alone. With a zero spacing world k's bits are those
/// of its model run alone. `firstWorld` places the worlds as worlds firstWorld, firstWorld + 1, …
/// of a larger batch (spacing·(firstWorld + k); one process's part of an mpirun's batch). Throws
/// weft::Error for no worlds, a model that has worlds already, or one that was not finalized.
ModelDesc combineWorlds(std::span<const ModelDesc* const> worlds, const Vec3& spacing = {},
                        int firstWorld = 0);

}  // namespace weft
