// accumulate_self_contact_force_and_hessian: the self-contact force and Hessian block of every
// particle of one color (cloth_vbd_spec §5.7), by gather. The same gather (SelfContactGather)
// also runs inside the fused vertex solve, solve_elasticity_self_contact_tile
// (kernels/solve_elasticity.cuh), which is what the solver uses with the tile solve.
//
// The reference scatters each contact pair's forces into per-vertex arrays with float atomics,
// sweeping every contact slot of the mesh for every color. Here each particle of the color
// collects, in a fixed order, every pair it belongs to:
//   1. as the vertex of a vertex–triangle pair: its own list (slot 3 of the stencil);
//   2. as a corner of a triangle: for each adjacent triangle, the triangle's (sorted) list of
//      vertices near it (slot 0..2);
//   3. as an endpoint of an edge: for each adjacent edge in which it is v0 or v1, that edge's own
//      edge–edge list (only the owner edge's endpoints get force from a record; the mirror record
//      in the other edge's list supplies the other side, as the reference).
// It is a tile kernel (launch.h): a particle's contacts, in that order, are cut into at most
// kParts runs of equal length; the tile's lanes sum the runs in parallel (each run serially) and
// the fixed tree of launchTile adds the runs. The cut depends only on the particle's contact
// count, so the result is the same for every tile size, run to run, and on the CPU. A thread per
// particle summing hundreds of contacts one after the other (the stacked cards of poker_cards)
// would be a chain of dependent loads hundreds long; this shortens it by the tile width.
//
// The order and the pairs come from the detector's per-particle records
// (kernels/particle_contact_records.cuh), written once per detection.
//
// Reads:  positions (current, and at the step start for damping and friction), triangles, edges,
//         the particle's contact records.
// Writes: contactForces / contactHessians of the color's particles.
#pragma once

#include "kernels/force_hessian.h"
#include "kernels/particle_contact_records.cuh"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/self_contact.h"
#include "kernels/self_contact_detection.cuh"

namespace weft {

/// Every self-contact pair a particle belongs to, as the run of records the detector wrote for it
/// (kernels/particle_contact_records.cuh, gather order), cut into at most kParts runs of equal
/// length (the parts a tile sums). Shared by accumulate_self_contact_force_and_hessian and the
/// fused solve_elasticity_self_contact_tile.
struct SelfContactGather {
  static constexpr int kParts = 64;  // a particle's contacts are split into at most 64 runs

  const Vec3* __restrict__ positions;         // (numParticles) x [m]
  const Vec3* __restrict__ stepStart;         // (numParticles) x_n [m]
  const float* __restrict__ invMasses;        // (numParticles) 0 = held
  const Int3* __restrict__ triangles;         // (numTriangles)
  const Int4* __restrict__ edges;             // (numEdges)
  const int* __restrict__ recordOffsets;      // (numParticles + 1) into records
  const ContactRecord* __restrict__ records;  // every particle's pairs, in gather order
  long long recordSlots;                      // the records' buffer
  SelfContactParams params;

  /// v's records; none where the offsets' scan wrapped (ContactStatus::recordsWrapped: the frame
  /// is not kept), so that no record is read out of range.
  WEFT_HD int contactCount(int v) const {
    const int first = recordOffsets[v], end = recordOffsets[v + 1];
    return recordRunFits(first, end, recordSlots) ? end - first : 0;
  }

  /// Contacts per part for a particle with `total` contacts: at most kParts parts.
  WEFT_HD static int runLength(int total) { return (total + kParts - 1) / kParts; }

  /// Parts of particle v (0 for a held particle or one without contacts).
  WEFT_HD int partCount(int v) const {
    if (invMasses[v] == 0.0f) return 0;
    const int total = contactCount(v);
    if (total == 0) return 0;
    const int run = runLength(total);
    return (total + run - 1) / run;
  }

  /// Force and Hessian on particle v from one of its records.
  WEFT_HD ForceHessian evaluate(int v, const ContactRecord& r) const {
    const int kind = r.kind();
    if (kind <= 3) {  // vertex–triangle: v is corner `kind` of triangle id, or the vertex (3)
      const int t = kind == 3 ? r.partner : r.id();
      const int vertex = kind == 3 ? v : r.partner;
      const Int3 tri = triangles[t];
      return vertexTriangleContactForceHessian(
          kind, positions[vertex], positions[tri.x], positions[tri.y], positions[tri.z],
          stepStart[vertex], stepStart[tri.x], stepStart[tri.y], stepStart[tri.z], params);
    }
    const Int4 own = edges[r.id()], other = edges[r.partner];  // v is endpoint kind − 4 of own
    return edgeEdgeContactForceHessian(
        kind - 4, positions[own.z], positions[own.w], positions[other.z], positions[other.w],
        stepStart[own.z], stepStart[own.w], stepStart[other.z], stepStart[other.w], params);
  }

  /// The sum over contacts [k·run, (k+1)·run) of particle v's gather order.
  WEFT_HD ForceHessian part(int v, int k) const {
    const int first = recordOffsets[v], total = contactCount(v);
    const int run = runLength(total);
    const int begin = k * run, end = begin + run < total ? begin + run : total;
    ForceHessian sum;
    for (int j = begin; j < end; ++j) sum += evaluate(v, records[first + j]);
    return sum;
  }
};

struct AccumulateSelfContactForceAndHessian {
  static constexpr KernelId kId = KernelId::accumulate_self_contact_force_and_hessian;
  using Part = ForceHessian;

  const int* __restrict__ colorParticles;  // (count) particle ids of this color
  SelfContactGather gather;
  Vec3* __restrict__ contactForces;     // (numParticles) [N]
  Mat33* __restrict__ contactHessians;  // (numParticles) [N/m]

  int maxParts() const { return SelfContactGather::kParts; }
  WEFT_HD int partCount(int item) const { return gather.partCount(colorParticles[item]); }
  WEFT_HD Part part(int item, int k) const { return gather.part(colorParticles[item], k); }
  WEFT_HD void finish(int item, const Part& sum) const {
    const int v = colorParticles[item];
    contactForces[v] = sum.force;
    contactHessians[v] = sum.hessian;
  }
};

}  // namespace weft
