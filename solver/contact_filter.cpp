#include "solver/contact_filter.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "solver/adjacency.h"

namespace weft {
namespace {

/// A CSR list of int rows.
struct Rows {
  std::vector<int> offsets;  // (numRows + 1) int, into values
  std::vector<int> values;
  std::span<const int> row(int i) const {
    return {values.data() + offsets[size_t(i)],
            size_t(offsets[size_t(i) + 1] - offsets[size_t(i)])};
  }
};

/// Rows of `numRows` lists filled from (row, value) pairs in the order `forEachPair` gives them:
/// count, prefix sum, fill.
template <typename ForEachPair>
Rows buildRows(int numRows, ForEachPair forEachPair) {
  Rows rows;
  rows.offsets.assign(size_t(numRows) + 1, 0);
  forEachPair([&](int row, int) { ++rows.offsets[size_t(row) + 1]; });
  for (int i = 0; i < numRows; ++i) rows.offsets[size_t(i) + 1] += rows.offsets[size_t(i)];
  rows.values.resize(size_t(rows.offsets.back()));
  std::vector<int> cursor(rows.offsets.begin(), rows.offsets.end() - 1);
  forEachPair([&](int row, int value) { rows.values[size_t(cursor[size_t(row)]++)] = value; });
  return rows;
}

/// N_depth(v) \ {v} for every v: breadth-first search over the mesh-edge graph.
Rows buildRings(const Rows& neighbors, int numVertices, int depth) {
  Rows rings;
  rings.offsets.assign(size_t(numVertices) + 1, 0);
  std::vector<int> seenBy(size_t(numVertices), -1);  // last v whose search reached the vertex
  std::vector<int> frontier, next;
  for (int v = 0; v < numVertices; ++v) {
    seenBy[size_t(v)] = v;
    frontier.assign(1, v);
    for (int level = 0; level < depth && !frontier.empty(); ++level) {
      next.clear();
      for (const int u : frontier)
        for (const int w : neighbors.row(u))
          if (seenBy[size_t(w)] != v) {
            seenBy[size_t(w)] = v;
            next.push_back(w);
            rings.values.push_back(w);
          }
      frontier.swap(next);
    }
    rings.offsets[size_t(v) + 1] = int(rings.values.size());
  }
  return rings;
}

}  // namespace

ContactFilter buildContactFilter(const ModelDesc& desc, int threshold) {
  const int numVertices = desc.numParticles(), numTriangles = desc.numTriangles(),
            numEdges = desc.numEdges();
  // Validates every index, so the loops below may trust them.
  const VertexAdjacency adjacency = buildVertexAdjacency(numVertices, desc.triangles, desc.edges);

  ContactFilter filter;
  filter.vertexTriangleOffsets.assign(size_t(numVertices) + 1, 0);
  filter.edgeEdgeOffsets.assign(size_t(numEdges) + 1, 0);
  if (threshold <= 1) return filter;

  // The mesh graph (v0–v1 of every edge row) and each vertex's edges as an endpoint.
  const auto forEachEndpoint = [&](auto&& visit) {
    for (int e = 0; e < numEdges; ++e) {
      const Int4& edge = desc.edges[size_t(e)];
      visit(edge.z, edge.w, e);
      visit(edge.w, edge.z, e);
    }
  };
  const Rows neighbors = buildRows(numVertices, [&](auto&& add) {
    forEachEndpoint([&](int v, int other, int) { add(v, other); });
  });
  const Rows endpointEdges = buildRows(
      numVertices, [&](auto&& add) { forEachEndpoint([&](int v, int, int e) { add(v, e); }); });
  const Rows rings = buildRings(neighbors, numVertices, threshold - 1);

  // Vertex → triangles: the triangles of the ring's vertices that v is not a corner of. A
  // triangle is stamped with v once it is either v's own or already in the row.
  std::vector<int> triangleStamp(size_t(numTriangles), -1);
  const auto trianglesOf = [&](int v) {
    const int begin = adjacency.triangleOffsets[size_t(v)],
              end = adjacency.triangleOffsets[size_t(v) + 1];
    return std::span<const int>(adjacency.triangleEntries.data() + begin, size_t(end - begin));
  };
  for (int v = 0; v < numVertices; ++v) {
    const std::span<const int> own = trianglesOf(v);
    for (size_t i = 0; i < own.size(); i += 2) triangleStamp[size_t(own[i])] = v;
    const size_t rowBegin = filter.vertexTriangles.size();
    for (const int u : rings.row(v)) {
      const std::span<const int> entries = trianglesOf(u);
      for (size_t i = 0; i < entries.size(); i += 2) {
        const int triangle = entries[i];
        if (triangleStamp[size_t(triangle)] == v) continue;
        triangleStamp[size_t(triangle)] = v;
        filter.vertexTriangles.push_back(triangle);
      }
    }
    std::sort(filter.vertexTriangles.begin() + std::ptrdiff_t(rowBegin),
              filter.vertexTriangles.end());
    filter.vertexTriangleOffsets[size_t(v) + 1] = int(filter.vertexTriangles.size());
  }

  // Edge → edges: the edges with an endpoint in the rings of a and b (a, b themselves left out),
  // minus the hinges whose stencil contains a or b (the reference's v_adj_edges subtraction).
  std::vector<int> edgeStamp(size_t(numEdges), -1), vertexStamp(size_t(numVertices), -1);
  for (int e = 0; e < numEdges; ++e) {
    const int a = desc.edges[size_t(e)].z, b = desc.edges[size_t(e)].w;
    for (const int endpoint : {a, b}) {
      vertexStamp[size_t(endpoint)] = e;
      const int begin = adjacency.edgeOffsets[size_t(endpoint)],
                end = adjacency.edgeOffsets[size_t(endpoint) + 1];
      for (int i = begin; i < end; i += 2) edgeStamp[size_t(adjacency.edgeEntries[size_t(i)])] = e;
    }
    const size_t rowBegin = filter.edgeEdges.size();
    for (const int endpoint : {a, b})
      for (const int u : rings.row(endpoint)) {
        if (vertexStamp[size_t(u)] == e) continue;
        vertexStamp[size_t(u)] = e;
        for (const int other : endpointEdges.row(u)) {
          if (edgeStamp[size_t(other)] == e) continue;
          edgeStamp[size_t(other)] = e;
          filter.edgeEdges.push_back(other);
        }
      }
    std::sort(filter.edgeEdges.begin() + std::ptrdiff_t(rowBegin), filter.edgeEdges.end());
    filter.edgeEdgeOffsets[size_t(e) + 1] = int(filter.edgeEdges.size());
  }
  return filter;
}

std::vector<unsigned char> quietEdges(const ModelDesc& desc, const ContactFilter& filter,
                                      const std::vector<bool>& held) {
  const size_t numEdges = desc.edges.size();
  if (held.size() != desc.positions.size())
    throw Error("quietEdges: got " + std::to_string(held.size()) + " held flags for " +
                std::to_string(desc.positions.size()) + " particles");
  if (filter.edgeEdgeOffsets.size() != numEdges + 1)
    throw Error("quietEdges: the filter was built for another mesh");
  std::vector<unsigned char> quiet(numEdges);
  for (size_t e = 0; e < numEdges; ++e)
    quiet[e] = held[size_t(desc.edges[e].z)] && held[size_t(desc.edges[e].w)];
  auto row = [&](size_t e) {
    return std::pair{filter.edgeEdges.begin() + filter.edgeEdgeOffsets[e],
                     filter.edgeEdges.begin() + filter.edgeEdgeOffsets[e + 1]};
  };
  // A moving edge f that excludes a held edge e which does not exclude f: only e's list has the
  // pair, so e keeps querying.
  for (size_t f = 0; f < numEdges; ++f) {
    if (quiet[f]) continue;
    const auto [begin, end] = row(f);
    for (auto it = begin; it != end; ++it) {
      const size_t e = size_t(*it);
      if (!quiet[e]) continue;
      const auto [eBegin, eEnd] = row(e);
      if (!std::binary_search(eBegin, eEnd, int(f))) quiet[e] = 0;
    }
  }
  return quiet;
}

}  // namespace weft
