// compute_tri_aabbs / compute_edge_aabbs: the leaf boxes of the triangle and edge LBVHs
// (reference compute_tri_aabbs / compute_edge_aabbs).
//
// Reads:  positions, triangles (Int3) or edges (Int4 (o0, o1, v0, v1): the segment v0–v1).
// Writes: lowers, uppers, one box per primitive.
// The boxes are the exact bounds of the primitive (component-wise select, no rounding, no
// inflation); queries inflate their own box by the contact margin, as the reference does.
#pragma once

#include "kernels/lbvh.cuh"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"
#include "tuning/kernel_ids.h"

namespace weft {

struct ComputeTriangleAabbs {
  static constexpr KernelId kId = KernelId::compute_tri_aabbs;

  const Vec3* __restrict__ positions;  // (numParticles) [m]
  const Int3* __restrict__ triangles;  // (numTriangles)
  Vec3* __restrict__ lowers;           // (numTriangles) out [m]
  Vec3* __restrict__ uppers;           // (numTriangles) out [m]

  WEFT_HD void operator()(int t) const {
    const Int3 tri = triangles[t];
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

  WEFT_HD void operator()(int e) const {
    const Int4 edge = edges[e];
    const Vec3 a = positions[edge.z], b = positions[edge.w];
    lowers[e] = selectMin(a, b);
    uppers[e] = selectMax(a, b);
  }
};

}  // namespace weft
