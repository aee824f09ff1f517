// solve_elasticity / solve_elasticity_tile: the VBD vertex step for one color
// (VBD, Chen et al. 2024, Alg. 1; cloth_vbd_spec §4).
//
// For each particle v of the color:
//   f = m/dt²·(y − x) + Σ_elements f_e + Σ_shape contacts f_c,
//   H = m/dt²·I       + Σ_elements H_e + Σ_shape contacts H_c,
//   if |det H| > 1e-8:  Δ_v += H⁻¹ f        (no fallback step, as the reference)
// The elements are the particle's adjacent membrane triangles (kernels/membrane.h) and bending
// hinges (kernels/bending.h); the shape contacts are the ones generate_particle_shape_contacts
// recorded for this particle (kernels/particle_shape_contact.h), gathered here instead of
// scattered with float atomics as the reference does, so the result is deterministic and no
// separate accumulation kernel (and graph node) is needed per color.
// The solve writes only Δ; apply_truncation_ts then rewrites positions. Because no two particles
// of one color share an element, every read of x inside a color sees the same values.
//
// Three launch shapes share the same per-element math (VertexSolve):
//   solve_elasticity       one thread per particle, elements summed serially in order;
//   solve_elasticity_tile  one tile per particle: lanes evaluate elements in parallel and a
//                          fixed pairwise tree sums them (launch.h), identical for every tile size;
//   solve_elasticity_self_contact_tile  the tile solve with the particle's self-contact runs as
//                          further parts of the same tree (with self-contact and the tile solve,
//                          the solver's choice: no separate accumulation kernel per color).
//
// Reads:  x, x_n, y, masses, element data and adjacency, shape contacts and poses.
// Writes: displacements Δ of this color's particles.
#pragma once

#include "kernels/accumulate_self_contact_force_and_hessian.cuh"
#include "kernels/bending.h"
#include "kernels/force_hessian.h"
#include "kernels/generate_particle_shape_contacts.cuh"
#include "kernels/materials.h"
#include "kernels/membrane.h"
#include "kernels/particle_shape_contact.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// What the vertex step reads, shared by both launch shapes.
struct VertexSolve {
  float dtSeconds;
  float frictionEpsilon;                                   // [m/s]
  const Vec3* __restrict__ positions;                      // (numParticles) x, current iterate [m]
  const Vec3* __restrict__ stepStart;                      // (numParticles) x_n [m]
  const Vec3* __restrict__ inertia;                        // (numParticles) y [m]
  const float* __restrict__ masses;                        // (numParticles) [kg]
  const float* __restrict__ invMasses;                     // (numParticles) [1/kg], 0 = held
  const float* __restrict__ radii;                         // (numParticles) [m]
  const Int3* __restrict__ triangles;                      // (numTriangles)
  const Mat22* __restrict__ triangleRestInverse;           // (numTriangles) Dm⁻¹
  const float* __restrict__ triangleRestAreas;             // (numTriangles) [m²]
  const TriangleMaterial* __restrict__ triangleMaterials;  // (numTriangles)
  const Int4* __restrict__ edges;                          // (numEdges) (o0, o1, v0, v1)
  const float* __restrict__ edgeRestAngles;                // (numEdges) [rad]
  const float* __restrict__ edgeRestLengths;               // (numEdges) [m]
  const EdgeMaterial* __restrict__ edgeMaterials;          // (numEdges)
  const int* __restrict__ triangleOffsets;  // (numParticles + 1) into triangleEntries
  const int* __restrict__ triangleEntries;  // pairs (triangle, slot) with energy
  const int* __restrict__ hingeOffsets;     // (numParticles + 1) into hingeEntries
  const int* __restrict__ hingeEntries;     // pairs (edge, slot) of interior hinges with ke > 0
  int numShapes;
  int shapeSlots;                                      // shape-contact slots per particle
  const ShapeContact* __restrict__ shapeContacts;      // (numParticles x shapeSlots)
  const Transform* __restrict__ shapePoses;            // (2 x numShapes): end, start of substep
  const ContactMaterial* __restrict__ shapeMaterials;  // (numShapes) mixed with the particles'
  const float* __restrict__ shapeMargins;              // (numShapes) [m]
  const Vec3* __restrict__ contactForces;              // (numParticles) self-contact, or null
  const Mat33* __restrict__ contactHessians;           // (numParticles) self-contact, or null
  Vec3* __restrict__ displacements;                    // (numParticles) Δ [m]

  WEFT_HD int triangleCount(int v) const {
    return (triangleOffsets[v + 1] - triangleOffsets[v]) / 2;
  }
  WEFT_HD int elementCount(int v) const {
    return triangleCount(v) + (hingeOffsets[v + 1] - hingeOffsets[v]) / 2;
  }

  /// Force and Hessian block on v from its k-th element (triangles first, then hinges).
  WEFT_HD ForceHessian element(int v, int k) const {
    const int numTriangles = triangleCount(v);
    if (k < numTriangles) {
      const int t = triangleEntries[triangleOffsets[v] + 2 * k];
      const int slot = triangleEntries[triangleOffsets[v] + 2 * k + 1];
      const Int3 tri = triangles[t];
      const TriangleMaterial m = triangleMaterials[t];
      return membraneForceHessian(slot, positions[tri.x], positions[tri.y], positions[tri.z],
                                  stepStart[tri.x], stepStart[tri.y], stepStart[tri.z],
                                  triangleRestInverse[t], triangleRestAreas[t], m.ke, m.ka, m.kd,
                                  dtSeconds);
    }
    const int h = k - numTriangles;
    const int e = hingeEntries[hingeOffsets[v] + 2 * h];
    const int slot = hingeEntries[hingeOffsets[v] + 2 * h + 1];
    const Int4 s = edges[e];
    const EdgeMaterial m = edgeMaterials[e];
    return bendingForceHessian(slot, positions[s.x], positions[s.y], positions[s.z], positions[s.w],
                               stepStart[s.x], stepStart[s.y], stepStart[s.z], stepStart[s.w],
                               edgeRestAngles[e], edgeRestLengths[e], m.ke, m.kd, dtSeconds);
  }

  /// Force and Hessian on v from its shape-contact slot `c` (zero for an empty slot: unused
  /// slots are marked shape = -1, kernels/generate_particle_shape_contacts.cuh).
  WEFT_HD ForceHessian shapeContact(int v, int c) const {
    const ShapeContact contact = shapeContacts[size_t(v) * shapeSlots + c];
    if (contact.shape < 0) return ForceHessian{};
    const int s = contact.shape;
    const ContactMaterial m = shapeMaterials[s];
    return particleShapeContactForceHessian(
        positions[v], stepStart[v], transformPoint(shapePoses[s], contact.bodyPoint),
        transformPoint(shapePoses[numShapes + s], contact.bodyPoint), contact.normal,
        radii[v] + shapeMargins[s], m.ke, m.kd, m.mu, frictionEpsilon, dtSeconds);
  }

  /// Adds inertia, shape contacts and (when present) the self-contact terms gathered by
  /// accumulate_self_contact_force_and_hessian to the summed elements, then takes the 3×3
  /// Newton step.
  WEFT_HD void finish(int v, const ForceHessian& elastic) const {
    if (invMasses[v] == 0.0f) return;
    const Vec3 x = positions[v];
    const float inertiaStiffness = masses[v] / (dtSeconds * dtSeconds);
    ForceHessian total = elastic;
    total.force += (inertia[v] - x) * inertiaStiffness;
    total.hessian += Mat33::diagonal(inertiaStiffness);
    const ShapeContact* contacts = shapeContacts + size_t(v) * shapeSlots;
    for (int c = 0; c < shapeSlots && contacts[c].shape >= 0; ++c) total += shapeContact(v, c);
    if (contactForces) {
      total.force += contactForces[v];
      total.hessian += contactHessians[v];
    }
    const float det = determinant(total.hessian);
    if (fabsf(det) > 1e-8f) displacements[v] += inverse(total.hessian, det) * total.force;
  }
};

/// One thread per particle of the color.
struct SolveElasticity {
  static constexpr KernelId kId = KernelId::solve_elasticity;

  const int* __restrict__ colorParticles;  // (count) particle ids of this color
  VertexSolve solve;

  WEFT_HD void operator()(int i) const {
    const int v = colorParticles[i];
    ForceHessian sum;
    if (solve.invMasses[v] != 0.0f) {
      const int count = solve.elementCount(v);
      for (int k = 0; k < count; ++k) sum += solve.element(v, k);
    }
    solve.finish(v, sum);
  }
};

/// One block-cooperative tile per particle of the color (launch.h, launchTile).
struct SolveElasticityTile {
  static constexpr KernelId kId = KernelId::solve_elasticity_tile;
  using Part = ForceHessian;

  const int* __restrict__ colorParticles;  // (count) particle ids of this color
  int maxElements;                         // max elementCount over all particles
  VertexSolve solve;

  int maxParts() const { return maxElements; }
  WEFT_HD int partCount(int item) const {
    const int v = colorParticles[item];
    return solve.invMasses[v] == 0.0f ? 0 : solve.elementCount(v);
  }
  WEFT_HD Part part(int item, int k) const { return solve.element(colorParticles[item], k); }
  WEFT_HD void finish(int item, const Part& sum) const { solve.finish(colorParticles[item], sum); }
};

/// The tile solve with the particle's self-contact gathered in the same tile, one kernel per color
/// instead of accumulate_self_contact_force_and_hessian + solve_elasticity_tile: no round trip of
/// the contact force through memory, one graph node less per color.
///
/// Parts: the particle's elements (triangles, then hinges), then its self-contact runs
/// (SelfContactGather). When the elements fit one warp (kLeadSlots) and there are self-contact
/// runs, the runs start at slot kLeadSlots, on the tile's second warp (the slots between add
/// zero): lanes of one warp that take different code paths (membrane, bending, vertex–triangle,
/// edge–edge) run them one after another, so keeping the elements and the contacts on different
/// warps lets a tile of 64 or more lanes evaluate them at the same time (docs/PERFORMANCE.md).
/// The layout depends only on the particle, never on the tile size, so the fixed tree's sum is
/// the same for every size. solve.contactForces must be null (the contact is in the sum).
struct SolveElasticitySelfContactTile {
  static constexpr KernelId kId = KernelId::solve_elasticity_self_contact_tile;
  static constexpr int kLeadSlots = 32;  // one warp
  /// 80 registers: what its 64- to 256-lane entries take anyway; the 1- to 32-lane ones the
  /// batches use take 85-86 uncapped (8 bytes of stack capped), so that more of their warps fit
  /// on an SM (not profiled): the cloth batches 1.03-1.06x a substep on the H200, one world
  /// 1.00x, the same bits (docs/PERFORMANCE.md, "The fused cloth solve's registers").
  static constexpr int kMaxRegisters = 80;
  using Part = ForceHessian;

  const int* __restrict__ colorParticles;  // (count) particle ids of this color
  int maxElements;                         // max elementCount over all particles
  VertexSolve solve;
  SelfContactGather contacts;

  int maxParts() const {
    return (maxElements < kLeadSlots ? kLeadSlots : maxElements) + SelfContactGather::kParts;
  }
  /// The slot of particle v's first self-contact run.
  WEFT_HD int contactSlot(int v) const {
    const int elements = solve.elementCount(v);
    return elements <= kLeadSlots ? kLeadSlots : elements;
  }
  WEFT_HD int partCount(int item) const {
    const int v = colorParticles[item];
    if (solve.invMasses[v] == 0.0f) return 0;
    const int runs = contacts.partCount(v);
    return runs > 0 ? contactSlot(v) + runs : solve.elementCount(v);
  }
  WEFT_HD Part part(int item, int k) const {
    const int v = colorParticles[item];
    if (k < solve.elementCount(v)) return solve.element(v, k);
    const int first = contactSlot(v);
    return k < first ? Part{} : contacts.part(v, k - first);
  }
  WEFT_HD void finish(int item, const Part& sum) const { solve.finish(colorParticles[item], sum); }
};

}  // namespace weft
