// Model / State / Scratch: the three kinds of solver data (docs/ARCHITECTURE.md; MuJoCo's
// mjModel/mjData).
//
//   Model    immutable after upload: rest shape, materials, adjacency, colors, shapes, drivers.
//   State    what evolves and what a user reads: positions, velocities, the substep counter
//            (simulation time = substep · dt, read on the device by kinematic motion).
//   Scratch  per-substep work memory: the inertial target, displacements, contacts, shape poses.
// All three are allocated once, before the first step; step() allocates nothing, so a whole
// frame can be captured as one CUDA graph. Buffers are public members with shape comments, as in
// MuJoCo; kernels receive raw pointers from them (solver_vbd.cpp builds the argument structs).
#pragma once

#include <memory>
#include <vector>

#include "collision/self_contact_detector.h"
#include "kernels/generate_particle_shape_contacts.cuh"
#include "kernels/materials.h"
#include "kernels/runtime/buffer.h"
#include "kernels/shape.h"
#include "solver/model_desc.h"

namespace weft {

/// Self-contact settings (reference SolverVBD particle_self_contact_* and related options).
/// The contact stiffness, damping and friction are SolverOptions::particleContact, as the
/// reference uses model.soft_contact_ke / kd / mu for self-contact.
struct SelfContactOptions {
  bool enabled = false;
  float radius = 0.2f;         // contact radius r: the energy acts for d < r [m]
  float margin = 0.2f;         // detection distance, >= radius [m]
  float relaxation = 0.85f;    // γ: planar truncation factor and the isotropic clamp
  int detectionInterval = 0;   // < 0: detect once per substep (before the forward step);
                               // 0: also before iteration 0; n >= 1: also before iterations
                               // n − 1, 2n − 1, … (Newton 1.8.0; selfContactDetectionDue)
  int topologicalFilter = 2;   // n-ring exclusion (spec §6.4)
  float restExclusion = 0.0f;  // skip pairs closer than this in the rest shape [m]
  float edgeParallelEpsilon = 1e-5f;
  DetectionTraversal traversal = DetectionTraversal::Cooperative;  // all give the same lists
  int bvhRebuildInterval = 0;       // rebuild the trees every n frames (0: refit only)
  int vertexTriangleCapacity = 16;  // initial candidate slots; grown on demand, never dropped
  int edgeEdgeCapacity = 32;
  int triangleVertexCapacity = 16;
  float reuseSlack = 0.0f;  // s: detections keep the lists (found at margin + 2s) while no particle
                            // moved more than s since [m]; 0: every detection builds them
};

/// Solver settings (reference SolverVBD constructor and model-level contact parameters).
struct SolverOptions {
  int iterations = 10;            // Gauss–Seidel sweeps per substep
  float frictionEpsilon = 1e-2f;  // friction smoothing velocity [m/s]; ε_u = frictionEpsilon·dt
  bool tileSolve = true;          // solve_elasticity_tile (true) or solve_elasticity
  Vec3 gravity{0.0f, 0.0f, -9.81f};                      // [m/s²]
  ContactMaterial particleContact{1.0e3f, 10.0f, 0.5f};  // model soft_contact_ke / kd / mu
  float shapeContactMargin = 0.01f;  // CollisionPipeline soft_contact_margin [m]
  SelfContactOptions selfContact;

  /// Throws weft::Error naming the first invalid field.
  void validate() const;
};

class Model {
 public:
  Model(const Device& device, const ModelDesc& desc, const SolverOptions& options);

  int numParticles = 0, numTriangles = 0, numEdges = 0, numShapes = 0, numDriven = 0;
  int numWorlds = 1;   // worlds of a batch (ModelDesc::worldRanges)
  int shapeSlots = 0;  // shape-contact slots per particle: numShapes, or a world's most shapes
  ModelDesc::WorldRanges worldRanges;  // host copy (empty: one world)

  // Particles
  DeviceBuffer<float> masses;     // (numParticles) [kg]
  DeviceBuffer<float> invMasses;  // (numParticles) [1/kg], 0 = held or driven
  DeviceBuffer<float> radii;      // (numParticles) [m]

  // Membrane and bending elements
  DeviceBuffer<Int3> triangles;                      // (numTriangles)
  DeviceBuffer<Mat22> triangleRestInverse;           // (numTriangles) Dm⁻¹
  DeviceBuffer<float> triangleRestAreas;             // (numTriangles) [m²]
  DeviceBuffer<TriangleMaterial> triangleMaterials;  // (numTriangles)
  DeviceBuffer<Int4> edges;                          // (numEdges) (o0, o1, v0, v1)
  DeviceBuffer<float> edgeRestAngles;                // (numEdges) [rad]
  DeviceBuffer<float> edgeRestLengths;               // (numEdges) [m]
  DeviceBuffer<EdgeMaterial> edgeMaterials;          // (numEdges)

  // What the vertex solve visits: the adjacency restricted to elements that have energy
  // (triangles with ke or ka > 0; interior hinges with edge ke > 0), as (element, slot) pairs.
  DeviceBuffer<int> solveTriangleOffsets;  // (numParticles + 1)
  DeviceBuffer<int> solveTriangleEntries;  // (2 x ...)
  DeviceBuffer<int> solveHingeOffsets;     // (numParticles + 1)
  DeviceBuffer<int> solveHingeEntries;     // (2 x ...)
  int maxElementsPerParticle = 0;

  // Full vertex → element adjacency (every triangle and bending edge; self-contact gathers).
  DeviceBuffer<int> triangleOffsets;  // (numParticles + 1)
  DeviceBuffer<int> triangleEntries;  // (2 x ...) (triangle, slot)
  DeviceBuffer<int> edgeOffsets;      // (numParticles + 1)
  DeviceBuffer<int> edgeEntries;      // (2 x ...) (edge, slot 0..3)

  // Self-contact data (empty when self-contact is off)
  DeviceBuffer<Vec3> restPositions;  // (numParticles) [m]
  DeviceBuffer<int> worlds;  // (numParticles) world ids, with self-contact or worlds; else empty
  DeviceBuffer<int> vertexFilterOffsets;  // (numParticles + 1) topological filter
  DeviceBuffer<int> vertexFilterValues;   //   sorted triangle ids per vertex
  DeviceBuffer<int> edgeFilterOffsets;    // (numEdges + 1)
  DeviceBuffer<int> edgeFilterValues;     //   sorted edge ids per edge
  // (numEdges) 1: held edges whose pairs are all in the lists of the edges that move; they query
  // nothing (solver/contact_filter.h, quietEdges)
  DeviceBuffer<unsigned char> quietEdges;

  // Coloring: colorOffsets stays on the host (the color loop is host-side); particle ids per
  // color live on the device.
  std::vector<int> colorOffsets;       // (numColors + 1)
  DeviceBuffer<int> particlesByColor;  // (numParticles)
  int numColors() const { return int(colorOffsets.size()) - 1; }

  // Shapes
  DeviceBuffer<ShapeGeometry> shapeGeometry;     // (numShapes)
  DeviceBuffer<ShapeMotion> shapeMotions;        // (numShapes)
  DeviceBuffer<Transform> motionSamples;         // (numSamples) all shapes' sampled poses
  DeviceBuffer<ContactMaterial> shapeMaterials;  // (numShapes), mixed with particleContact
  DeviceBuffer<float> shapeMargins;              // (numShapes) [m]
  DeviceBuffer<int> shapeWorldBegin;             // (numWorlds + 1) with worlds, else empty

  // Driven particles
  DeviceBuffer<int> drivenParticles;     // (numDriven) particle ids
  DeviceBuffer<int> drivenDriver;        // (numDriven) index into drivers
  DeviceBuffer<Vec3> drivenInitial;      // (numDriven) positions at t = 0 [m]
  DeviceBuffer<ParticleDriver> drivers;  // (numDrivers)
};

/// Everything of a cloth model that carries over from one substep to the next (the work buffers,
/// Scratch, hold nothing that must survive a substep).
struct State {
  State(const Device& device, const ModelDesc& desc);

  DeviceBuffer<Vec3> positions;     // (numParticles) [m]
  DeviceBuffer<Vec3> velocities;    // (numParticles) [m/s]
  DeviceBuffer<long long> substep;  // (1) substeps completed since t = 0

  /// Every buffer above, for saving a frame's start (FrameDriver::carry).
  std::vector<BufferRange> carried() {
    return {rangeOf(positions), rangeOf(velocities), rangeOf(substep)};
  }
};

struct Scratch {
  Scratch(const Device& device, const Model& model, const SolverOptions& options);

  DeviceBuffer<Vec3> stepStart;        // (numParticles) x_n: damping anchor, velocity base [m]
  DeviceBuffer<Vec3> inertia;          // (numParticles) y = x_n + dt·v + dt²·g [m]
  DeviceBuffer<Vec3> displacements;    // (numParticles) Δ since the last anchor [m]
  DeviceBuffer<Transform> shapePoses;  // (2 x numShapes): end, start of the substep
  DeviceBuffer<ShapeContact> shapeContacts;  // (numParticles x shapeSlots)

  // Self-contact (allocated only when enabled)
  std::unique_ptr<SelfContactDetector> selfContact;  // trees and candidate lists
  DeviceBuffer<Vec3> anchors;           // (numParticles) p_cd: positions at the last detection
  DeviceBuffer<Vec3> contactForces;     // (numParticles) self-contact force of the color [N]
  DeviceBuffer<Mat33> contactHessians;  // (numParticles) [N/m]
  DeviceBuffer<float> truncation;       // (numParticles) ts, 1 between truncation passes
};

}  // namespace weft
