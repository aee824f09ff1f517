// apply_planar_truncation_parallel_by_collision: the penetration-free displacement limit of every
// detected pair (planar divide-and-truncate, cloth_vbd_spec §5.9; kernels/planar_truncation.h).
//
// For each pair, a plane between the two primitives splits their gap in proportion to how far each
// side moves towards the other; every vertex whose accumulated displacement Δ would cross it gets
// a factor t < 1, and each vertex keeps the smallest factor of all its pairs (atomic min, which is
// order-independent, so the result is deterministic). apply_truncation_ts then scales Δ by it.
// Like the reference, every pair is evaluated each time, whatever the color: Δ of one color
// changes the planes of all pairs it belongs to.
//
// A group kernel (launch.h): items are the vertices (their vertex–triangle pairs), then the edges
// (their edge–edge pairs); the group's G lanes take a primitive's pairs k = rank, rank + G, ...
// (the reference uses 4 threads per primitive; G comes from the launch table).
// Reads:  anchors p_cd, displacements Δ, candidate lists.
// Writes: truncation factors ts (atomic min; apply_truncation_ts resets them to 1 after use).
#pragma once

#include "kernels/planar_truncation.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/platform.h"
#include "kernels/self_contact_detection.cuh"
#include "tuning/kernel_ids.h"

namespace weft {

struct ApplyPlanarTruncationParallelByCollision {
  static constexpr KernelId kId = KernelId::apply_planar_truncation_parallel_by_collision;
  static constexpr int kSharedIntsPerLane = 1;  // (unused)

  int numParticles;
  float relaxation;                        // γ (0.85)
  float parallelEpsilon;                   // (1e-5)
  const Vec3* __restrict__ anchors;        // (numParticles) p_cd [m]
  const Vec3* __restrict__ displacements;  // (numParticles) Δ [m]
  const Int3* __restrict__ triangles;      // (numTriangles)
  const Int4* __restrict__ edges;          // (numEdges)
  CandidateLists vertexTriangles;          // per vertex: triangle ids
  CandidateLists edgeEdges;                // per edge: edge ids
  float* __restrict__ factors;             // (numParticles) ts, atomic min

  WEFT_HD void lower(int particle, float t) const {
    if (t < 1.0f) atomicMinNonNegativeFloat(&factors[particle], t);
  }

  template <class Group>
  WEFT_HD void operator()(const Group& g, int primitive) const {
    const int lane = g.rank(), lanes = g.size();
    if (primitive < numParticles) {
      const int v = primitive;
      const int n = vertexTriangles.counts[v] < vertexTriangles.capacity ? vertexTriangles.counts[v]
                                                                         : vertexTriangles.capacity;
      for (int k = lane; k < n; k += lanes) {
        const Int3 tri = triangles[vertexTriangles.items[v * vertexTriangles.capacity + k]];
        const PairTruncation t =
            vertexTriangleTruncation(anchors[v], anchors[tri.x], anchors[tri.y], anchors[tri.z],
                                     displacements[v], displacements[tri.x], displacements[tri.y],
                                     displacements[tri.z], relaxation, parallelEpsilon);
        lower(tri.x, t.t[0]);
        lower(tri.y, t.t[1]);
        lower(tri.z, t.t[2]);
        lower(v, t.t[3]);
      }
      return;
    }
    const int e = primitive - numParticles;
    const Int4 own = edges[e];
    const int n =
        edgeEdges.counts[e] < edgeEdges.capacity ? edgeEdges.counts[e] : edgeEdges.capacity;
    for (int k = lane; k < n; k += lanes) {
      const Int4 other = edges[edgeEdges.items[e * edgeEdges.capacity + k]];
      const PairTruncation t =
          edgeEdgeTruncation(anchors[own.z], anchors[own.w], anchors[other.z], anchors[other.w],
                             displacements[own.z], displacements[own.w], displacements[other.z],
                             displacements[other.w], relaxation, parallelEpsilon);
      lower(own.z, t.t[0]);
      lower(own.w, t.t[1]);
      lower(other.z, t.t[2]);
      lower(other.w, t.t[3]);
    }
  }
};

}  // namespace weft
