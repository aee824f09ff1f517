#include "solver/adjacency.h"

#include <string>
#include <vector>

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

// One CSR table: count the slots of every vertex, prefix-sum, then fill in element order.
// `numSlots` is 3 for triangles and 4 for hinges. The first `numOptionalSlots` slots may be -1
// (a hinge's opposite vertices on a boundary edge) and are then skipped; any other index outside
// [0, numParticles) is an error.
template <typename Element, int numSlots, int numOptionalSlots>
void buildTable(int numParticles, std::span<const Element> elements, const char* kind,
                std::vector<int>& offsets, std::vector<int>& entries) {
  offsets.assign(size_t(numParticles) + 1, 0);
  for (size_t e = 0; e < elements.size(); ++e) {
    for (int slot = 0; slot < numSlots; ++slot) {
      const int v = elements[e][slot];
      if (v == -1 && slot < numOptionalSlots) continue;
      if (v < 0 || v >= numParticles)
        throw Error(std::string(kind) + " " + std::to_string(e) + " uses particle " +
                    std::to_string(v) + ", which does not exist (the model has " +
                    std::to_string(numParticles) + " particles); fix its indices.");
      offsets[size_t(v) + 1] += 2;
    }
  }
  for (int v = 0; v < numParticles; ++v) offsets[size_t(v) + 1] += offsets[size_t(v)];

  entries.assign(size_t(offsets.back()), 0);
  std::vector<int> cursor(offsets.begin(), offsets.end() - 1);
  for (size_t e = 0; e < elements.size(); ++e) {
    for (int slot = 0; slot < numSlots; ++slot) {
      const int v = elements[e][slot];
      if (v == -1 && slot < numOptionalSlots) continue;
      entries[size_t(cursor[size_t(v)]++)] = int(e);
      entries[size_t(cursor[size_t(v)]++)] = slot;
    }
  }
}

}  // namespace

VertexAdjacency buildVertexAdjacency(int numParticles, std::span<const Int3> triangles,
                                     std::span<const Int4> edges) {
  if (numParticles < 0)
    throw Error("buildVertexAdjacency: the particle count is negative (" +
                std::to_string(numParticles) + ").");
  VertexAdjacency adjacency;
  buildTable<Int3, 3, 0>(numParticles, triangles, "triangle", adjacency.triangleOffsets,
                         adjacency.triangleEntries);
  buildTable<Int4, 4, 2>(numParticles, edges, "bending edge", adjacency.edgeOffsets,
                         adjacency.edgeEntries);
  return adjacency;
}

int adjacentElementCount(const VertexAdjacency& adjacency, int particle) {
  const size_t v = size_t(particle);
  return (adjacency.triangleOffsets[v + 1] - adjacency.triangleOffsets[v]) / 2 +
         (adjacency.edgeOffsets[v + 1] - adjacency.edgeOffsets[v]) / 2;
}

}  // namespace weft
