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
// Reads:  positions (current, and at the step start for damping and friction), triangles, edges,
//         the particle's full adjacency, the three candidate lists.
// Writes: contactForces / contactHessians of the color's particles.
#pragma once

#include "kernels/force_hessian.h"
#include "kernels/runtime/platform.h"
#include "kernels/self_contact.h"
#include "kernels/self_contact_detection.cuh"
#include "tuning/kernel_ids.h"

namespace weft {

/// Every self-contact pair a particle belongs to, in a fixed gather order, cut into at most
/// kParts runs of equal length (the parts a tile sums). Shared by
/// accumulate_self_contact_force_and_hessian and the fused solve_elasticity_self_contact_tile.
struct SelfContactGather {
  static constexpr int kParts = 64;  // a particle's contacts are split into at most 64 runs

  const Vec3* __restrict__ positions;       // (numParticles) x [m]
  const Vec3* __restrict__ stepStart;       // (numParticles) x_n [m]
  const float* __restrict__ invMasses;      // (numParticles) 0 = held
  const Int3* __restrict__ triangles;       // (numTriangles)
  const Int4* __restrict__ edges;           // (numEdges)
  const int* __restrict__ triangleOffsets;  // (numParticles + 1) full vertex → triangle CSR
  const int* __restrict__ triangleEntries;  //   pairs (triangle, slot)
  const int* __restrict__ edgeOffsets;      // (numParticles + 1) full vertex → edge CSR
  const int* __restrict__ edgeEntries;      //   pairs (edge, slot 0..3)
  CandidateLists vertexTriangles;           // per vertex: triangle ids
  CandidateLists triangleVertices;          // per triangle: vertex ids (sorted)
  CandidateLists edgeEdges;                 // per edge: edge ids
  SelfContactParams params;
  const int* __restrict__ totals = nullptr;  // (numParticles) contactCount per particle since the
                                             // last detection (count_particle_self_contacts), or
                                             // null: counted on the fly

  WEFT_HD static int stored(const CandidateLists& l, int i) {
    return l.counts[i] < l.capacity ? l.counts[i] : l.capacity;
  }

  WEFT_HD ForceHessian vertexTriangle(int slot, int v, int t) const {
    const Int3 tri = triangles[t];
    return vertexTriangleContactForceHessian(slot, positions[v], positions[tri.x], positions[tri.y],
                                             positions[tri.z], stepStart[v], stepStart[tri.x],
                                             stepStart[tri.y], stepStart[tri.z], params);
  }

  /// Self-contact pairs particle v belongs to, in gather order: its own vertex–triangle list,
  /// the lists of its triangles, the edge–edge lists of the edges it is an endpoint of.
  WEFT_HD int contactCount(int v) const {
    if (totals) return totals[v];
    int total = stored(vertexTriangles, v);
    for (int a = triangleOffsets[v]; a < triangleOffsets[v + 1]; a += 2)
      total += stored(triangleVertices, triangleEntries[a]);
    for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1]; a += 2)
      if (edgeEntries[a + 1] >= 2) total += stored(edgeEdges, edgeEntries[a]);
    return total;
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

  /// The sum over contacts [k·run, (k+1)·run) of particle v's gather order.
  WEFT_HD ForceHessian part(int v, int k) const {
    const int run = runLength(contactCount(v));
    const int begin = k * run, end = begin + run;
    ForceHessian sum;
    int index = 0;  // gather-order index of the first contact of the current list
    // 1. v against the triangles near it.
    {
      const int n = stored(vertexTriangles, v);
      for (int j = begin > index ? begin - index : 0; j < n && index + j < end; ++j)
        sum += vertexTriangle(3, v, vertexTriangles.items[v * vertexTriangles.capacity + j]);
      index += n;
    }
    // 2. The vertices near each triangle of v.
    for (int a = triangleOffsets[v]; a < triangleOffsets[v + 1] && index < end; a += 2) {
      const int t = triangleEntries[a], slot = triangleEntries[a + 1];
      const int n = stored(triangleVertices, t);
      for (int j = begin > index ? begin - index : 0; j < n && index + j < end; ++j)
        sum += vertexTriangle(slot, triangleVertices.items[t * triangleVertices.capacity + j], t);
      index += n;
    }
    // 3. The edges near each edge that v is an endpoint of.
    for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1] && index < end; a += 2) {
      const int e = edgeEntries[a], slot = edgeEntries[a + 1];
      if (slot < 2) continue;  // v is a hinge's opposite vertex here, not an endpoint
      const Int4 own = edges[e];
      const int n = stored(edgeEdges, e);
      for (int j = begin > index ? begin - index : 0; j < n && index + j < end; ++j) {
        const Int4 other = edges[edgeEdges.items[e * edgeEdges.capacity + j]];
        sum += edgeEdgeContactForceHessian(
            slot - 2, positions[own.z], positions[own.w], positions[other.z], positions[other.w],
            stepStart[own.z], stepStart[own.w], stepStart[other.z], stepStart[other.w], params);
      }
      index += n;
    }
    return sum;
  }
};

/// totals[v] = the number of self-contact pairs of particle v (SelfContactGather::contactCount),
/// once per detection, so that each part of the gather finds its run without first counting the
/// particle's lists. `gather.totals` must be null.
struct CountParticleSelfContacts {
  static constexpr KernelId kId = KernelId::count_particle_self_contacts;
  SelfContactGather gather;
  int* __restrict__ totals;  // (numParticles) out
  WEFT_HD void operator()(int v) const { totals[v] = gather.contactCount(v); }
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
