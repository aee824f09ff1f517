// accumulate_self_contact_force_and_hessian: the self-contact force and Hessian block of every
// particle of one color (cloth_vbd_spec §5.7), by gather.
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
// Each particle is written by exactly one thread, and the sum order depends only on the lists,
// so the result is the same for every block size and run to run.
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

struct AccumulateSelfContactForceAndHessian {
  static constexpr KernelId kId = KernelId::accumulate_self_contact_force_and_hessian;

  const int* __restrict__ colorParticles;   // (count) particle ids of this color
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
  Vec3* __restrict__ contactForces;     // (numParticles) [N]
  Mat33* __restrict__ contactHessians;  // (numParticles) [N/m]

  WEFT_HD static int stored(const CandidateLists& l, int i) {
    return l.counts[i] < l.capacity ? l.counts[i] : l.capacity;
  }

  WEFT_HD ForceHessian vertexTriangle(int slot, int v, int t) const {
    const Int3 tri = triangles[t];
    return vertexTriangleContactForceHessian(slot, positions[v], positions[tri.x], positions[tri.y],
                                             positions[tri.z], stepStart[v], stepStart[tri.x],
                                             stepStart[tri.y], stepStart[tri.z], params);
  }

  WEFT_HD void operator()(int i) const {
    const int v = colorParticles[i];
    ForceHessian sum;
    if (invMasses[v] != 0.0f) {
      // 1. v against the triangles near it.
      for (int k = 0, n = stored(vertexTriangles, v); k < n; ++k)
        sum += vertexTriangle(3, v, vertexTriangles.items[v * vertexTriangles.capacity + k]);
      // 2. The vertices near each triangle of v.
      for (int a = triangleOffsets[v]; a < triangleOffsets[v + 1]; a += 2) {
        const int t = triangleEntries[a], slot = triangleEntries[a + 1];
        for (int k = 0, n = stored(triangleVertices, t); k < n; ++k)
          sum += vertexTriangle(slot, triangleVertices.items[t * triangleVertices.capacity + k], t);
      }
      // 3. The edges near each edge that v is an endpoint of.
      for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1]; a += 2) {
        const int e = edgeEntries[a], slot = edgeEntries[a + 1];
        if (slot < 2) continue;  // v is a hinge's opposite vertex here, not an endpoint
        const Int4 own = edges[e];
        for (int k = 0, n = stored(edgeEdges, e); k < n; ++k) {
          const Int4 other = edges[edgeEdges.items[e * edgeEdges.capacity + k]];
          sum += edgeEdgeContactForceHessian(
              slot - 2, positions[own.z], positions[own.w], positions[other.z], positions[other.w],
              stepStart[own.z], stepStart[own.w], stepStart[other.z], stepStart[other.w], params);
        }
      }
    }
    contactForces[v] = sum.force;
    contactHessians[v] = sum.hessian;
  }
};

}  // namespace weft
