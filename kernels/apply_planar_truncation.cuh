// apply_planar_truncation_by_record: the penetration-free displacement limit of every detected
// pair (planar divide-and-truncate, cloth_vbd_spec §5.9; kernels/planar_truncation.h). The
// reference's apply_planar_truncation_parallel_by_collision, one thread per pair.
//
// For each pair, a plane between the two primitives splits their gap in proportion to how far each
// side moves towards the other; every vertex whose accumulated displacement Δ would cross it gets
// a factor t < 1, and each vertex keeps the smallest factor of all its pairs (atomic min, which is
// order-independent, so the result is deterministic). apply_truncation_ts then scales Δ by it.
// Like the reference, every pair is evaluated each time, whatever the color: Δ of one color
// changes the planes of all pairs it belongs to. Pairs whose sides move too little to reach any
// plane leave after a few dot products (vertexTriangleMayTruncate, edgeEdgeMayTruncate).
//
// The pairs are the truncation pairs of the last detection (particle_contact_records.cuh): every
// vertex–triangle list entry once as a kind-3 record (id = the vertex), then every edge–edge list
// entry once as a kind-4 record (id = the owner edge): exactly the pairs of the lists (each
// edge–edge pair twice, once from each edge's list, as the reference). Their count is known only
// on the device, so a bounded number of threads strides over them; any thread count and any block
// size give the same factors.
// Reads:  anchors p_cd, displacements Δ, the truncation pairs.
// Writes: truncation factors ts (atomic min; apply_truncation_ts resets them to 1 after use).
#pragma once

#include "kernels/particle_contact_records.cuh"
#include "kernels/planar_truncation.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// Lowers the factors of the vertex–triangle pair (v; tri) (atomic min); pairs that cannot
/// truncate (vertexTriangleMayTruncate) leave at once.
WEFT_HD inline void truncateVertexTriangle(int v, const Int3& tri, const Vec3* __restrict__ anchors,
                                           const Vec3* __restrict__ displacements, float relaxation,
                                           float parallelEpsilon, float* __restrict__ factors) {
  const Vec3 pv = anchors[v], pa = anchors[tri.x], pb = anchors[tri.y], pc = anchors[tri.z];
  const Vec3 dv = displacements[v], da = displacements[tri.x], db = displacements[tri.y],
             dc = displacements[tri.z];
  if (!vertexTriangleMayTruncate(pv, pa, pb, pc, dv, da, db, dc)) return;
  const PairTruncation t =
      vertexTriangleTruncation(pv, pa, pb, pc, dv, da, db, dc, relaxation, parallelEpsilon);
  const int stencil[4] = {tri.x, tri.y, tri.z, v};
  for (int j = 0; j < 4; ++j)
    if (t.t[j] < 1.0f) atomicMinNonNegativeFloat(&factors[stencil[j]], t.t[j]);
}

/// Lowers the factors of the edge–edge pair (own, other) (atomic min); pairs that cannot
/// truncate (edgeEdgeMayTruncate) leave at once.
WEFT_HD inline void truncateEdgeEdge(const Int4& own, const Int4& other,
                                     const Vec3* __restrict__ anchors,
                                     const Vec3* __restrict__ displacements, float relaxation,
                                     float parallelEpsilon, float* __restrict__ factors) {
  const Vec3 p1 = anchors[own.z], q1 = anchors[own.w], p2 = anchors[other.z], q2 = anchors[other.w];
  const Vec3 dp1 = displacements[own.z], dq1 = displacements[own.w], dp2 = displacements[other.z],
             dq2 = displacements[other.w];
  if (!edgeEdgeMayTruncate(p1, q1, p2, q2, dp1, dq1, dp2, dq2)) return;
  const PairTruncation t =
      edgeEdgeTruncation(p1, q1, p2, q2, dp1, dq1, dp2, dq2, relaxation, parallelEpsilon);
  const int stencil[4] = {own.z, own.w, other.z, other.w};
  for (int j = 0; j < 4; ++j)
    if (t.t[j] < 1.0f) atomicMinNonNegativeFloat(&factors[stencil[j]], t.t[j]);
}

struct ApplyPlanarTruncationByRecord {
  static constexpr KernelId kId = KernelId::apply_planar_truncation_by_record;

  int threads;                             // the launch's thread count (the stride)
  float relaxation;                        // γ (0.85)
  float parallelEpsilon;                   // (1e-5)
  const Vec3* __restrict__ anchors;        // (numParticles) p_cd [m]
  const Vec3* __restrict__ displacements;  // (numParticles) Δ [m]
  const Int3* __restrict__ triangles;      // (numTriangles)
  const Int4* __restrict__ edges;          // (numEdges)
  ParticleContactOffsets offsets;          // the pairs' counts: kind-3 ones, then kind-4
  const ContactRecord* __restrict__ pairs;
  long long pairSlots;          // the pairs' buffer
  float* __restrict__ factors;  // (numParticles) ts, atomic min

  WEFT_HD void operator()(int thread) const {
    // Counts of a scan that wrapped (ContactStatus::recordsWrapped stops the run): none read.
    if (offsets.records() < 0) return;
    const int vertexTriangle = offsets.vertexTrianglePairs(), total = offsets.pairs();
    if (vertexTriangle < 0 || total < vertexTriangle || total > pairSlots) return;
    for (int k = thread; k < total; k += threads) {
      const ContactRecord r = pairs[k];
      if (k < vertexTriangle)
        truncateVertexTriangle(r.id(), triangles[r.partner], anchors, displacements, relaxation,
                               parallelEpsilon, factors);
      else
        truncateEdgeEdge(edges[r.id()], edges[r.partner], anchors, displacements, relaxation,
                         parallelEpsilon, factors);
    }
  }
};

}  // namespace weft
