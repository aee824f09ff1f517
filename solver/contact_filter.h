// Topological filter of self-contact pairs (cloth_vbd_spec §6.4): for every vertex, the triangles
// it may not collide with, and for every edge, the edges it may not collide with, because they
// are too close in the mesh for a contact between them to mean anything but the cloth's own
// shape. Built once on the host at solver construction; the detection kernels binary-search the
// rows (kernels/contact_filter_lookup.h, §6.2 step 2).
//
// The mesh graph is the rows of ModelDesc::edges, linking v0–v1; N_k(v) is the set of vertices
// within k edge-rings of v (breadth-first search). With threshold n >= 2:
//   vertex v excludes every triangle incident to a vertex of N_{n−1}(v) \ {v}, minus the
//     triangles incident to v (the kernel already skips those: v is one of their corners);
//   edge (a, b) excludes every edge with an endpoint (v0 or v1) in the set
//     N_{n−1}(a) ∪ N_{n−1}(b) minus {a, b}, minus every edge in the vertex → edge adjacency of a
//     or of b (§3.1). That adjacency lists every hinge whose stencil (o0, o1, v0, v1) contains a
//     or b, so the subtraction also removes the edges for which a or b is an opposite vertex:
//     e.g. the edge opposite b in a triangle incident to b stays a candidate even at n = 2. This
//     is the reference's rule, reproduced exactly (§6.4, §9) so that the candidate sets match.
// With n <= 1 every row is empty and only the kernels' own adjacency tests remain (a vertex is
// not a corner of the triangle; the edges share no endpoint). The reference's optional external
// maps are not supported. Cost: O(V·|N_{n−1}|·valence); ~10k vertices at n = 3 take milliseconds.
#pragma once

#include <vector>

#include "kernels/contact_filter_lookup.h"
#include "solver/model_desc.h"

namespace weft {

struct ContactFilter {
  std::vector<int> vertexTriangleOffsets;  // (numParticles + 1) int, into vertexTriangles
  std::vector<int> vertexTriangles;        // (sum of rows) int: triangles excluded for each vertex,
                                           // sorted ascending per vertex
  std::vector<int> edgeEdgeOffsets;        // (numEdges + 1) int, into edgeEdges
  std::vector<int> edgeEdges;              // (sum of rows) int: edges excluded for each edge,
                                           // sorted ascending per edge
};

/// The filter of §6.4 for `threshold` n (the reference default is 2). Throws weft::Error if an
/// element of `desc` names a particle that does not exist.
ContactFilter buildContactFilter(const ModelDesc& desc, int threshold);

/// Edges that need not look for their neighbours (1) among the edges of `desc`: both endpoints
/// held (`held[v]`), and every pair such an edge has with an edge that moves is in the moving
/// edge's own list. Edge–edge pairs come in both edges' lists, so the held edge's list adds
/// nothing, except where the filter rows are not symmetric (the moving edge excludes the held
/// one, the held one does not exclude it): then the held edge's list holds a pair no other list
/// does, and it keeps querying.
std::vector<unsigned char> quietEdges(const ModelDesc& desc, const ContactFilter& filter,
                                      const std::vector<bool>& held);

}  // namespace weft
