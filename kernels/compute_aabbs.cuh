// compute_tri_aabbs / compute_edge_aabbs: the leaf boxes of the triangle and edge LBVHs
// (reference compute_tri_aabbs / compute_edge_aabbs).
//
// Reads:  positions, triangles (Int3) or edges (Int4 (o0, o1, v0, v1): the segment v0–v1).
// Writes: lowers, uppers, one box per primitive; compute_tri_aabbs also zeroes the triangles'
//         vertex counts when given (the transpose of the detection then appends to them).
// With a gate (kept lists, kernels/list_gate.h) only the primitives of worlds whose lists are built
// again get new boxes.
// The boxes are the exact bounds of the primitive (component-wise select, no rounding, no
// inflation); queries inflate their own box by the contact margin, as the reference does.
#pragma once

#include "kernels/lbvh.cuh"
#include "kernels/list_gate.h"
#include "kernels/math.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct ComputeTriangleAabbs {
  static constexpr KernelId kId = KernelId::compute_tri_aabbs;

  const Vec3* __restrict__ positions;       // (numParticles) [m]
  const Int3* __restrict__ triangles;       // (numTriangles)
  Vec3* __restrict__ lowers;                // (numTriangles) out [m]
  Vec3* __restrict__ uppers;                // (numTriangles) out [m]
  int* __restrict__ clearCounts = nullptr;  // (numTriangles) zeroed, or null
  ListGate gate = {};                       // default: every triangle

  WEFT_HD void operator()(int t) const {
    const Int3 tri = triangles[t];
    if (!gate.builds(tri.x)) return;
    if (clearCounts) clearCounts[t] = 0;
    const Vec3 a = positions[tri.x], b = positions[tri.y], c = positions[tri.z];
    lowers[t] = selectMin(selectMin(a, b), c);
    uppers[t] = selectMax(selectMax(a, b), c);
  }
};

struct ComputeEdgeAabbs {
  static constexpr KernelId kId = KernelId::compute_edge_aabbs;

  const Vec3* __restrict__ positions;  // (numParticles) [m]
  const Int4* __restrict__ edges;      // (numEdges) (o0, o1, v0, v1)
  Vec3* __restrict__ lowers;           // (numEdges) out [m]
  Vec3* __restrict__ uppers;           // (numEdges) out [m]
  ListGate gate = {};                  // default: every edge

  WEFT_HD void operator()(int e) const {
    const Int4 edge = edges[e];
    if (!gate.builds(edge.z)) return;
    const Vec3 a = positions[edge.z], b = positions[edge.w];
    lowers[e] = selectMin(a, b);
    uppers[e] = selectMax(a, b);
  }
};

}  // namespace weft
