// Graph coloring of the particles for the Gauss–Seidel sweeps of VBD (cloth_vbd_spec §7), and of
// any other graph (rigid bodies joined by joints, rigid_avbd_spec §7) through colorGraph().
//
// VBD solves all vertices of one color in parallel, so two vertices that share an element (and
// would read each other's positions inside that element's energy) must get different colors.
// The graph's nodes are all particles; its edges are the three sides of every triangle that has
// energy and, with includeBending, the six pairs of every bending stencil (o0, o1, v0, v1), which
// relative to the triangles adds only o0–o1. Fixed particles are colored like any other.
//
// Pipeline, all host-side and deterministic (same input → same output, no hashing, no threads):
//   1. order the vertices by maximum cardinality search (Pereira & Palsberg) or by descending
//      degree; ties go to the lowest particle id;
//   2. greedy coloring in that order: each vertex takes the smallest color no colored neighbour
//      has;
//   3. balancing: move vertices from larger colors into colors below the average size wherever
//      that keeps the coloring valid, until max/min size <= targetMaxMinRatio or the sizes
//      differ by at most 2 (or nothing can move).
// Smaller, evenly sized colors mean fewer dependent launches per iteration and no straggler color.
// colorGraph() runs the same three steps on an explicit edge list; colorParticles() is colorGraph()
// on the element graph above (the same graph gives the same coloring, bit for bit).
#pragma once

#include <span>
#include <string>
#include <utility>

#include "kernels/materials.h"
#include "kernels/math.h"
#include "solver/model_desc.h"

namespace weft {

struct ColoringOptions {
  bool includeBending = true;  // add the o0–o1 pair of every bending hinge (all 6 stencil pairs)
  bool balance = true;         // move vertices from the largest to smaller colors
  float targetMaxMinRatio = 1.1f;  // balancing stops once max/min color size is at most this
  enum class Order {
    MaximumCardinalitySearch,
    DescendingDegree
  } order = Order::MaximumCardinalitySearch;
};

/// Colors the particles so that no two of one color share an element of the graph described
/// above: triangles with ke > 0 or ka > 0, and, with includeBending, hinges with ke > 0 or kd > 0.
/// Fills all three Coloring arrays (particlesByColor ascending within each color). Particles that
/// touch no element get color 0 before balancing. Throws weft::Error on mismatched array sizes or
/// out-of-range indices.
Coloring colorParticles(int numParticles, std::span<const Int3> triangles,
                        std::span<const TriangleMaterial> triangleMaterials,
                        std::span<const Int4> edges, std::span<const EdgeMaterial> edgeMaterials,
                        const ColoringOptions& options);

/// Colors the nodes 0…numNodes−1 of an undirected graph so that the two ends of every edge differ,
/// by the pipeline above (includeBending is ignored). Duplicate edges and self-loops (a, a) are
/// allowed and add nothing; nodes without edges get color 0 before balancing. The Coloring's
/// arrays are indexed by node (colorOfParticle = color of node, particlesByColor = nodes grouped
/// by color, ascending within each). Throws weft::Error on a negative count or an edge with a
/// node outside [0, numNodes).
Coloring colorGraph(int numNodes, std::span<const std::pair<int, int>> edges,
                    const ColoringOptions& options);

/// Empty if valid, otherwise a sentence naming the first edge whose two ends share a color, or
/// the first inconsistency between the three Coloring arrays. Self-loops are skipped.
std::string findGraphColoringConflict(const Coloring& coloring,
                                      std::span<const std::pair<int, int>> edges);

/// Empty if valid, otherwise a sentence naming the first two same-colored particles that share an
/// element. Checks every triangle and, with includeBending, every hinge stencil, whatever its
/// material; also checks that the three Coloring arrays agree with each other.
std::string findColoringConflict(const Coloring& coloring, std::span<const Int3> triangles,
                                 std::span<const Int4> edges, bool includeBending);

}  // namespace weft
