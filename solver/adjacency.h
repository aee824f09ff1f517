// Vertex → element adjacency (reference MeshAdjacency.init_vertex_adjacency, cloth_vbd_spec §3.1).
//
// The per-vertex VBD solve gathers the forces and Hessians of every element that touches its
// vertex, so it needs, for each particle, the triangles and bending hinges it belongs to and in
// which slot. Both tables are CSR (VertexAdjacency in model_desc.h): offsets count int32 entries,
// and each entry is a pair (element id, local slot). They are built on the host once, serially
// (count, prefix sum, fill), so the entries of a vertex follow element order: the same mesh always
// gives the same tables, and gathers over them sum in a fixed order (bit-identical results).
//
// A hinge's opposite vertex is -1 on a boundary edge; such a slot has no vertex and is skipped.
#pragma once

#include <span>

#include "kernels/math.h"
#include "solver/model_desc.h"

namespace weft {

/// Most elements (adjacent triangles + adjacent bending edges) one vertex may touch: the tile
/// solve (solve_elasticity_tile) gives each vertex one block and has room for this many.
inline constexpr int kMaxElementsPerVertex = 256;

/// Vertex → triangle and vertex → bending-edge CSR (reference MeshAdjacency): serial count then
/// fill in element order; entries are (element id, local slot) pairs; an edge's o1 = -1 is skipped.
/// Throws weft::Error if an element names a particle outside [0, numParticles).
VertexAdjacency buildVertexAdjacency(int numParticles, std::span<const Int3> triangles,
                                     std::span<const Int4> edges);

/// Number of triangles plus bending edges that touch `particle`.
int adjacentElementCount(const VertexAdjacency& adjacency, int particle);

}  // namespace weft
