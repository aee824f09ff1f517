// ModelDesc: the host-side description of a simulation, as builders produce it and before it is
// uploaded to a backend (solver/model.h). Everything here is plain std::vector data in SI units
// (or the scene's units, see scenes/), structure of arrays, with shape comments.
//
// Who writes what:
//   ClothBuilder (solver/cloth_builder.h) appends particles, triangles and bending edges;
//   scenes add shapes and particle drivers; ClothBuilder::finalize() computes the vertex
//   adjacency CSR and the graph coloring and validates everything (NaN, negative values, index
//   ranges), throwing weft::Error with a sentence that names the offending item.
#pragma once

#include <string>
#include <vector>

#include "kernels/kinematics.h"
#include "kernels/materials.h"
#include "kernels/math.h"
#include "kernels/shape.h"

namespace weft {

/// Vertex → element adjacency in CSR form, built once on the host (reference MeshAdjacency).
/// Entries are pairs (element id, local slot); offsets count int32 entries, i.e. pairs × 2.
struct VertexAdjacency {
  std::vector<int> triangleOffsets;  // (numParticles + 1) int, into triangleEntries
  std::vector<int> triangleEntries;  // (2 x sum of valences) int: (triangle id, slot 0..2)
  std::vector<int> edgeOffsets;      // (numParticles + 1) int, into edgeEntries
  std::vector<int> edgeEntries;      // (2 x ...) int: (edge id, slot 0=o0 1=o1 2=v0 3=v1)
};

/// Graph coloring of the particles: no two particles of one color share an element.
struct Coloring {
  std::vector<int> colorOfParticle;   // (numParticles) int
  std::vector<int> colorOffsets;      // (numColors + 1) int, into particlesByColor
  std::vector<int> particlesByColor;  // (numParticles) int, particle ids grouped by color
  bool includesBending = false;       // hinge stencils were in the graph (ColoringOptions)
  int numColors() const { return colorOffsets.empty() ? 0 : int(colorOffsets.size()) - 1; }
};

/// A collision shape the particles touch. Static or kinematic (moved by `motion` on the device).
struct ShapeDesc {
  std::string name;  // for summaries and output files
  ShapeGeometry geometry;
  ContactMaterial material;
  float margin = 0.0f;                   // reference shape_margin [m]: thickens the surface
  ShapeMotion motion;                    // pose as a function of time (Static: motion.pose0)
  std::vector<Transform> motionSamples;  // Sampled motion: the pose at t = k·sampleInterval
};

/// The pose of `shape` at time t [s] (host side; the device evaluates the same function).
inline Transform shapePoseAt(const ShapeDesc& shape, float t) {
  ShapeMotion motion = shape.motion;  // the samples are the desc's own, from index 0
  motion.sampleOffset = 0;
  motion.sampleCount = int(shape.motionSamples.size());
  return poseAt(motion, t, shape.motionSamples.data());
}

/// Particles moved rigidly by a driver instead of the solver (they must have mass 0).
struct DriverDesc {
  ParticleDriver driver;
  std::vector<int> particles;  // ids of the driven particles
};

struct ModelDesc {
  // Particles
  std::vector<Vec3> positions;   // (numParticles) initial positions = rest shape [m]
  std::vector<Vec3> velocities;  // (numParticles) initial velocities [m/s]
  std::vector<float> masses;     // (numParticles) [kg]; 0 = held fixed (inactive)
  std::vector<float> radii;      // (numParticles) contact radius against shapes [m]
  std::vector<int> worlds;       // (numParticles) world ids for self-contact filtering (-1:
                                 // global, collides with all); empty: one world

  // Triangles (membrane)
  std::vector<Int3> triangles;                      // (numTriangles) particle ids, CCW
  std::vector<Mat22> triangleRestInverse;           // (numTriangles) Dm⁻¹ of the 2-D rest edges
  std::vector<float> triangleRestAreas;             // (numTriangles) [m²]
  std::vector<TriangleMaterial> triangleMaterials;  // (numTriangles)

  // Bending edges: every unique mesh edge, boundary edges included (o1 = -1 there)
  std::vector<Int4> edges;                  // (numEdges) (o0, o1, v0, v1)
  std::vector<float> edgeRestAngles;        // (numEdges) θ0 [rad]
  std::vector<float> edgeRestLengths;       // (numEdges) L0 [m]
  std::vector<EdgeMaterial> edgeMaterials;  // (numEdges)

  // Derived by ClothBuilder::finalize()
  VertexAdjacency adjacency;
  Coloring coloring;

  // What the builder changed without failing (e.g. degenerate faces it dropped); weft run prints
  // them and its summary lists them.
  std::vector<std::string> warnings;

  // Environment
  std::vector<ShapeDesc> shapes;
  std::vector<DriverDesc> drivers;

  // Worlds of a batch (combineWorlds in solver/cloth_builder.h; empty: one world). World k owns
  // particles [particles[k], particles[k + 1]), and likewise its triangles, bending edges and
  // shapes; `worlds` then holds k for each of its particles. A world's particles touch only its
  // own shapes and its own mesh.
  struct WorldRanges {
    std::vector<int> particles, triangles, edges, shapes;  // (worlds + 1) each, or all empty
    int count() const { return particles.empty() ? 1 : int(particles.size()) - 1; }
  };
  WorldRanges worldRanges;

  int numParticles() const { return int(positions.size()); }
  int numTriangles() const { return int(triangles.size()); }
  int numEdges() const { return int(edges.size()); }
};

}  // namespace weft
