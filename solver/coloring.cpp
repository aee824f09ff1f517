#include "solver/coloring.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

/// Undirected simple graph in CSR form; each neighbour list is sorted ascending.
struct Graph {
  std::vector<int> offsets;    // (numNodes + 1) int, into neighbors
  std::vector<int> neighbors;  // (2 x numGraphEdges) int
  int numNodes() const { return int(offsets.size()) - 1; }
  int degree(int v) const { return offsets[size_t(v) + 1] - offsets[size_t(v)]; }
  std::span<const int> neighborsOf(int v) const {
    return {neighbors.data() + offsets[size_t(v)], size_t(degree(v))};
  }
};

void checkInputs(int numParticles, std::span<const Int3> triangles,
                 std::span<const TriangleMaterial> triangleMaterials, std::span<const Int4> edges,
                 std::span<const EdgeMaterial> edgeMaterials) {
  if (numParticles < 0)
    throw Error("colorParticles: the particle count is negative (" + std::to_string(numParticles) +
                ").");
  if (triangleMaterials.size() != triangles.size())
    throw Error("colorParticles: got " + std::to_string(triangles.size()) + " triangles but " +
                std::to_string(triangleMaterials.size()) +
                " triangle materials; pass one material per triangle.");
  if (edgeMaterials.size() != edges.size())
    throw Error("colorParticles: got " + std::to_string(edges.size()) + " bending edges but " +
                std::to_string(edgeMaterials.size()) +
                " edge materials; pass one material per edge.");
  const auto badIndex = [&](const char* kind, size_t element, int v) {
    return Error("colorParticles: " + std::string(kind) + " " + std::to_string(element) +
                 " uses particle " + std::to_string(v) + ", which does not exist (the model has " +
                 std::to_string(numParticles) + " particles); fix its indices.");
  };
  for (size_t t = 0; t < triangles.size(); ++t)
    for (int slot = 0; slot < 3; ++slot)
      if (triangles[t][slot] < 0 || triangles[t][slot] >= numParticles)
        throw badIndex("triangle", t, triangles[t][slot]);
  // Opposite vertices (slots 0, 1) may be -1 on a boundary edge; the edge itself may not.
  for (size_t e = 0; e < edges.size(); ++e)
    for (int slot = 0; slot < 4; ++slot) {
      const int v = edges[e][slot];
      if (v == -1 && slot < 2) continue;
      if (v < 0 || v >= numParticles) throw badIndex("bending edge", e, v);
    }
}

/// Builds the CSR graph of `numNodes` nodes from `forEachPair(visit)`, which calls visit(a, b)
/// for every pair of nodes that must differ (in any order, duplicates and self-pairs allowed:
/// both are dropped). Pairs are stored in both directions with duplicates, then each node's list
/// is deduplicated and sorted; lists are short (a dozen entries on a cloth), so this is much
/// faster than sorting one global list of edge keys.
template <typename ForEachPair>
Graph buildGraph(int numNodes, ForEachPair&& forEachPair) {
  // Both directions of every distinct-node pair.
  const auto forEachDirectedPair = [&](auto&& visit) {
    forEachPair([&](int a, int b) {
      if (a == b) return;
      visit(a, b);
      visit(b, a);
    });
  };
  std::vector<int> rawOffsets(size_t(numNodes) + 1, 0);
  forEachDirectedPair([&](int a, int) { ++rawOffsets[size_t(a) + 1]; });
  for (int v = 0; v < numNodes; ++v) rawOffsets[size_t(v) + 1] += rawOffsets[size_t(v)];
  std::vector<int> raw(size_t(rawOffsets.back()));
  {
    std::vector<int> cursor(rawOffsets.begin(), rawOffsets.end() - 1);
    forEachDirectedPair([&](int a, int b) { raw[size_t(cursor[size_t(a)]++)] = b; });
  }

  // Deduplicate in place per node (a stamp per neighbour), then sort the short survivor list.
  Graph graph;
  graph.offsets.assign(size_t(numNodes) + 1, 0);
  graph.neighbors.reserve(raw.size() / 2);
  std::vector<int> seenBy(size_t(numNodes), -1);
  for (int v = 0; v < numNodes; ++v) {
    const size_t begin = graph.neighbors.size();
    for (int k = rawOffsets[size_t(v)]; k < rawOffsets[size_t(v) + 1]; ++k) {
      const int u = raw[size_t(k)];
      if (seenBy[size_t(u)] == v) continue;
      seenBy[size_t(u)] = v;
      graph.neighbors.push_back(u);
    }
    std::sort(graph.neighbors.begin() + std::ptrdiff_t(begin), graph.neighbors.end());
    graph.offsets[size_t(v) + 1] = int(graph.neighbors.size());
  }
  return graph;
}

/// The particle coloring graph (see coloring.h): the sides of every triangle with energy and,
/// with includeBending, the six pairs of every hinge stencil with energy.
Graph buildParticleGraph(int numParticles, std::span<const Int3> triangles,
                         std::span<const TriangleMaterial> triangleMaterials,
                         std::span<const Int4> edges, std::span<const EdgeMaterial> edgeMaterials,
                         bool includeBending) {
  // A triangle is in the graph if it has any membrane energy. The reference tests ke·ka ≠ 0,
  // which leaves triangles with ka = 0 (pure shear) out of the graph although they still couple
  // their vertices; we use ke > 0 || ka > 0 so such triangles are colored correctly.
  const auto triangleHasEnergy = [&](size_t t) {
    return triangleMaterials[t].ke > 0.0f || triangleMaterials[t].ka > 0.0f;
  };
  const auto hingeHasEnergy = [&](size_t e) {
    return includeBending && (edgeMaterials[e].ke > 0.0f || edgeMaterials[e].kd > 0.0f);
  };
  return buildGraph(numParticles, [&](auto&& visit) {
    // Boundary hinges have -1 opposite vertices: no pair.
    const auto pair = [&](int a, int b) {
      if (a >= 0 && b >= 0) visit(a, b);
    };
    for (size_t t = 0; t < triangles.size(); ++t) {
      if (!triangleHasEnergy(t)) continue;
      const Int3& tri = triangles[t];
      pair(tri.x, tri.y);
      pair(tri.y, tri.z);
      pair(tri.z, tri.x);
    }
    for (size_t e = 0; e < edges.size(); ++e) {
      if (!hingeHasEnergy(e)) continue;
      const Int4& s = edges[e];
      pair(s.x, s.y);
      pair(s.x, s.z);
      pair(s.x, s.w);
      pair(s.y, s.z);
      pair(s.y, s.w);
      pair(s.z, s.w);
    }
  });
}

/// Maximum cardinality search (Pereira & Palsberg 2005): repeatedly visit the unvisited vertex
/// with the most visited neighbours. Greedy coloring in this order is optimal on chordal graphs
/// and close to it on cloth meshes. Bucket queue by weight; each bucket is a min-heap of particle
/// ids, so ties go to the lowest id. A vertex whose weight grows is pushed again into its new
/// bucket and its stale entries are skipped when popped. All vertices start in bucket 0, so when a
/// component is exhausted the search restarts from the lowest unvisited id.
std::vector<int> maximumCardinalityOrder(const Graph& graph) {
  const int n = graph.numNodes();
  int maxDegree = 0;
  for (int v = 0; v < n; ++v) maxDegree = std::max(maxDegree, graph.degree(v));

  std::vector<std::vector<int>> buckets(size_t(maxDegree) + 1);  // (maxDegree + 1) min-heaps
  buckets[0].resize(size_t(n));
  for (int v = 0; v < n; ++v) buckets[0][size_t(v)] = v;  // ascending ids form a valid min-heap
  std::vector<int> weight(size_t(n), 0);                  // (n) visited-neighbour count
  std::vector<char> visited(size_t(n), 0);                // (n)
  std::vector<int> order;
  order.reserve(size_t(n));

  int top = 0;  // highest bucket that may hold a live entry
  while (int(order.size()) < n) {
    std::vector<int>& bucket = buckets[size_t(top)];
    if (bucket.empty()) {
      --top;
      continue;
    }
    std::pop_heap(bucket.begin(), bucket.end(), std::greater<int>());
    const int v = bucket.back();
    bucket.pop_back();
    if (visited[size_t(v)] || weight[size_t(v)] != top) continue;  // stale entry

    visited[size_t(v)] = 1;
    order.push_back(v);
    for (int u : graph.neighborsOf(v)) {
      if (visited[size_t(u)]) continue;
      const int w = ++weight[size_t(u)];
      buckets[size_t(w)].push_back(u);
      std::push_heap(buckets[size_t(w)].begin(), buckets[size_t(w)].end(), std::greater<int>());
      top = std::max(top, w);
    }
  }
  return order;
}

/// Vertices by descending degree, ties by ascending id (Warp's GREEDY ordering, made stable).
std::vector<int> descendingDegreeOrder(const Graph& graph) {
  std::vector<int> order(size_t(graph.numNodes()));
  for (int v = 0; v < graph.numNodes(); ++v) order[size_t(v)] = v;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return graph.degree(a) > graph.degree(b); });
  return order;
}

/// Greedy coloring: in `order`, each vertex takes the smallest color none of its colored
/// neighbours has. Returns the number of colors used (0 for an empty graph).
int greedyColor(const Graph& graph, const std::vector<int>& order, std::vector<int>& color) {
  const int n = graph.numNodes();
  color.assign(size_t(n), -1);
  int maxDegree = 0;
  for (int v = 0; v < n; ++v) maxDegree = std::max(maxDegree, graph.degree(v));
  // takenBy[c] == v marks color c as used by a neighbour of v (a stamp avoids clearing).
  std::vector<int> takenBy(size_t(maxDegree) + 2, -1);
  int numColors = 0;
  for (int v : order) {
    for (int u : graph.neighborsOf(v))
      if (color[size_t(u)] >= 0) takenBy[size_t(color[size_t(u)])] = v;
    int c = 0;
    while (takenBy[size_t(c)] == v) ++c;
    color[size_t(v)] = c;
    numColors = std::max(numColors, c + 1);
  }
  return numColors;
}

/// Evens out the color sizes (the idea of Warp's graph_coloring_balance, cloth_vbd_spec §7): move
/// vertices from larger colors into colors below the average size, each move only where no
/// neighbour of the vertex already has the new color, so the coloring stays valid.
/// Warp moves one vertex at a time from the largest to the smallest color; found by a scan, that
/// costs a pass over the graph per move (seconds on 50k vertices). We move batches instead: each
/// pass fills every color below ⌊n/k⌋ (smallest first) from the others (largest first), from each
/// source only while it stays at least 2 larger than the sink. Taking from colors near the average
/// too lets a blocked surplus travel in steps (large → average → small) over later passes. Every
/// move shrinks the sum of squared sizes, so the loop ends. Stops when max/min <= targetRatio, when
/// the sizes differ by at most 2, or when a pass moves nothing. Vertices are visited in ascending
/// id order and ties between colors go to the lower id, so the result is deterministic.
void balanceColors(const Graph& graph, int numColors, float targetRatio, std::vector<int>& color) {
  if (numColors < 2) return;
  const int n = graph.numNodes();
  const int floorAverage = n / numColors;
  std::vector<int> sizes(static_cast<size_t>(numColors), 0);
  for (int v = 0; v < n; ++v) ++sizes[size_t(color[size_t(v)])];

  const auto hasNeighborWithColor = [&](int v, int c) {
    for (int u : graph.neighborsOf(v))
      if (color[size_t(u)] == c) return true;
    return false;
  };
  const auto isBalanced = [&] {
    const int smallest = *std::min_element(sizes.begin(), sizes.end());
    const int largest = *std::max_element(sizes.begin(), sizes.end());
    return largest - smallest <= 2 || double(largest) <= double(targetRatio) * double(smallest);
  };

  std::vector<std::vector<int>> members(static_cast<size_t>(numColors));  // ascending ids
  std::vector<int> bySize(static_cast<size_t>(numColors));
  // Cloth meshes settle in a handful of passes; the bound only caps the time on odd graphs.
  constexpr int kMaxPasses = 100;
  for (int pass = 0; pass < kMaxPasses && !isBalanced(); ++pass) {
    for (auto& list : members) list.clear();
    for (int v = 0; v < n; ++v) members[size_t(color[size_t(v)])].push_back(v);
    for (int c = 0; c < numColors; ++c) bySize[size_t(c)] = c;
    std::stable_sort(bySize.begin(), bySize.end(),
                     [&](int a, int b) { return sizes[size_t(a)] < sizes[size_t(b)]; });

    bool moved = false;
    for (int sink : bySize) {
      if (sizes[size_t(sink)] >= floorAverage) break;
      for (auto source = bySize.rbegin(); source != bySize.rend(); ++source) {
        // Vertices that moved earlier in this pass are still listed under their old color.
        for (const int v : members[size_t(*source)]) {
          if (sizes[size_t(sink)] >= floorAverage ||
              sizes[size_t(*source)] - sizes[size_t(sink)] < 2)
            break;
          if (color[size_t(v)] != *source || hasNeighborWithColor(v, sink)) continue;
          color[size_t(v)] = sink;
          --sizes[size_t(*source)];
          ++sizes[size_t(sink)];
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
}

/// Orders, colors greedily, balances (per the options) and groups the nodes of `graph`.
Coloring colorBuiltGraph(const Graph& graph, const ColoringOptions& options) {
  const int numNodes = graph.numNodes();
  const std::vector<int> order = options.order == ColoringOptions::Order::DescendingDegree
                                     ? descendingDegreeOrder(graph)
                                     : maximumCardinalityOrder(graph);
  Coloring coloring;
  const int numColors = greedyColor(graph, order, coloring.colorOfParticle);
  if (options.balance)
    balanceColors(graph, numColors, options.targetMaxMinRatio, coloring.colorOfParticle);

  // Group by color with a counting sort; scanning ids in order keeps each group ascending.
  coloring.colorOffsets.assign(size_t(numColors) + 1, 0);
  for (int c : coloring.colorOfParticle) ++coloring.colorOffsets[size_t(c) + 1];
  for (int c = 0; c < numColors; ++c)
    coloring.colorOffsets[size_t(c) + 1] += coloring.colorOffsets[size_t(c)];
  coloring.particlesByColor.resize(size_t(numNodes));
  std::vector<int> cursor(coloring.colorOffsets.begin(), coloring.colorOffsets.end() - 1);
  for (int v = 0; v < numNodes; ++v)
    coloring.particlesByColor[size_t(cursor[size_t(coloring.colorOfParticle[size_t(v)])]++)] = v;
  return coloring;
}

void checkTargetRatio(const char* caller, const ColoringOptions& options) {
  if (!(options.targetMaxMinRatio >= 1.0f))
    throw Error(std::string(caller) + ": targetMaxMinRatio is " +
                std::to_string(options.targetMaxMinRatio) + "; it must be at least 1.");
}

/// Empty if the three Coloring arrays describe one partition of `n` nodes (each group
/// ascending), otherwise a sentence; `noun` names a node ("particle", "node").
std::string findPartitionError(const Coloring& coloring, const std::string& noun) {
  const int n = int(coloring.colorOfParticle.size());
  const int numColors = coloring.numColors();
  if (coloring.colorOffsets.empty() || coloring.colorOffsets.front() != 0 ||
      coloring.colorOffsets.back() != int(coloring.particlesByColor.size()) ||
      int(coloring.particlesByColor.size()) != n)
    return "the coloring's arrays disagree: " + std::to_string(n) + " " + noun + "s, " +
           std::to_string(coloring.particlesByColor.size()) +
           " entries in particlesByColor, and colorOffsets does not span them from 0.";
  std::vector<char> listed(size_t(n), 0);
  for (int c = 0; c < numColors; ++c) {
    const int begin = coloring.colorOffsets[size_t(c)], end = coloring.colorOffsets[size_t(c) + 1];
    if (end < begin) return "colorOffsets decreases at color " + std::to_string(c) + ".";
    for (int k = begin; k < end; ++k) {
      const int v = coloring.particlesByColor[size_t(k)];
      if (v < 0 || v >= n)
        return "particlesByColor lists " + noun + " " + std::to_string(v) +
               ", which does not exist.";
      if (coloring.colorOfParticle[size_t(v)] != c)
        return noun + " " + std::to_string(v) + " is listed under color " + std::to_string(c) +
               " but colorOfParticle says " + std::to_string(coloring.colorOfParticle[size_t(v)]) +
               ".";
      if (listed[size_t(v)]) return noun + " " + std::to_string(v) + " is listed twice.";
      listed[size_t(v)] = 1;
      if (k > begin && coloring.particlesByColor[size_t(k) - 1] > v)
        return "the " + noun + "s of color " + std::to_string(c) + " are not in ascending order.";
    }
  }
  return {};
}

}  // namespace

Coloring colorParticles(int numParticles, std::span<const Int3> triangles,
                        std::span<const TriangleMaterial> triangleMaterials,
                        std::span<const Int4> edges, std::span<const EdgeMaterial> edgeMaterials,
                        const ColoringOptions& options) {
  checkInputs(numParticles, triangles, triangleMaterials, edges, edgeMaterials);
  checkTargetRatio("colorParticles", options);
  Coloring coloring =
      colorBuiltGraph(buildParticleGraph(numParticles, triangles, triangleMaterials, edges,
                                         edgeMaterials, options.includeBending),
                      options);
  coloring.includesBending = options.includeBending;
  return coloring;
}

Coloring colorGraph(int numNodes, std::span<const std::pair<int, int>> edges,
                    const ColoringOptions& options) {
  if (numNodes < 0)
    throw Error("colorGraph: the node count is negative (" + std::to_string(numNodes) + ").");
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [a, b] = edges[e];
    if (a < 0 || a >= numNodes || b < 0 || b >= numNodes)
      throw Error("colorGraph: edge " + std::to_string(e) + " (" + std::to_string(a) + ", " +
                  std::to_string(b) + ") uses a node that does not exist (the graph has " +
                  std::to_string(numNodes) + " nodes); fix its indices.");
  }
  checkTargetRatio("colorGraph", options);
  return colorBuiltGraph(buildGraph(numNodes,
                                    [&](auto&& visit) {
                                      for (const auto& [a, b] : edges) visit(a, b);
                                    }),
                         options);
}

std::string findGraphColoringConflict(const Coloring& coloring,
                                      std::span<const std::pair<int, int>> edges) {
  if (std::string error = findPartitionError(coloring, "node"); !error.empty()) return error;
  const int n = int(coloring.colorOfParticle.size());
  for (size_t e = 0; e < edges.size(); ++e) {
    const auto [a, b] = edges[e];
    if (a == b) continue;
    if (a < 0 || b < 0 || a >= n || b >= n)
      return "edge " + std::to_string(e) + " uses node " + std::to_string(a < 0 || a >= n ? a : b) +
             ", which the coloring does not cover (it has " + std::to_string(n) + " nodes).";
    if (coloring.colorOfParticle[size_t(a)] == coloring.colorOfParticle[size_t(b)])
      return "nodes " + std::to_string(a) + " and " + std::to_string(b) + " share edge " +
             std::to_string(e) + " but both have color " +
             std::to_string(coloring.colorOfParticle[size_t(a)]) + ".";
  }
  return {};
}

std::string findColoringConflict(const Coloring& coloring, std::span<const Int3> triangles,
                                 std::span<const Int4> edges, bool includeBending) {
  // The three arrays must describe the same partition.
  if (std::string error = findPartitionError(coloring, "particle"); !error.empty()) return error;
  const int n = int(coloring.colorOfParticle.size());

  // Returns a sentence if particles a and b of element `id` (of the given kind) conflict.
  const auto conflict = [&](int a, int b, const char* kind, size_t id) -> std::string {
    if (a < 0 || b < 0 || a == b) return {};
    const std::string element = std::string(kind) + " " + std::to_string(id);
    if (a >= n || b >= n)
      return element + " uses particle " + std::to_string(std::max(a, b)) +
             ", which the coloring does not cover (it has " + std::to_string(n) + " particles).";
    if (coloring.colorOfParticle[size_t(a)] != coloring.colorOfParticle[size_t(b)]) return {};
    return "particles " + std::to_string(a) + " and " + std::to_string(b) + " share " + element +
           " but both have color " + std::to_string(coloring.colorOfParticle[size_t(a)]) + ".";
  };
  for (size_t t = 0; t < triangles.size(); ++t) {
    const Int3& tri = triangles[t];
    for (const auto& [a, b] : {std::pair{tri.x, tri.y}, {tri.y, tri.z}, {tri.z, tri.x}})
      if (std::string msg = conflict(a, b, "triangle", t); !msg.empty()) return msg;
  }
  if (!includeBending) return {};
  for (size_t e = 0; e < edges.size(); ++e) {
    const Int4& s = edges[e];
    for (const auto& [a, b] :
         {std::pair{s.x, s.y}, {s.x, s.z}, {s.x, s.w}, {s.y, s.z}, {s.y, s.w}, {s.z, s.w}})
      if (std::string msg = conflict(a, b, "bending hinge", e); !msg.empty()) return msg;
  }
  return {};
}

}  // namespace weft
