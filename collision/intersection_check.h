// IntersectionCounter: does a cloth pass through itself? Counts the (mesh edge, triangle) pairs
// that share no vertex and intersect (closed sets: touching counts), for the scenes' final
// "no self-intersection" checks and for diagnostics.
//
// Each call computes the triangles' exact boxes at the given positions, builds an LBVH over them
// and queries it with every edge's segment box (kernels/count_edge_triangle_intersections.cuh,
// which also says what the double-precision predicate guarantees and where it can be wrong). The
// count is an integer atomic add, so it is the same on both backends and every run. The
// constructor allocates; count() and pairs() wait for the device (they return host values), so
// they belong outside a captured step.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "collision/lbvh.h"
#include "kernels/math.h"
#include "kernels/runtime/buffer.h"
#include "kernels/runtime/device.h"

namespace weft {

class IntersectionCounter {
 public:
  /// Copies the topology to the device. Edges are (o0, o1, v0, v1) rows; the segment is v0–v1.
  /// A batch of worlds (ModelDesc::worldRanges) gives each particle's world and where each
  /// world's triangles begin (worlds + 1 entries): an edge then meets only its own world's
  /// triangles, and each world's pairs are counted apart. Throws weft::Error if an index is
  /// outside [0, numParticles).
  IntersectionCounter(const Device& device, int numParticles, std::span<const Int3> triangles,
                      std::span<const Int4> edges, std::span<const int> worlds = {},
                      const std::vector<int>& triangleWorldBegin = {});

  /// Number of intersecting (edge, triangle) pairs at `positions` (device pointer,
  /// numParticles entries), over every world.
  int count(const Vec3* positions);
  /// The same per world (one entry without worlds).
  std::vector<int> countPerWorld(const Vec3* positions);
  /// The (edge, triangle) pairs of the first `maxPairs` intersections found, sorted. Which ones
  /// are found first depends on timing on CUDA when there are more than maxPairs.
  std::vector<std::pair<int, int>> pairs(const Vec3* positions, int maxPairs = 100);

  int numTriangles() const { return numTriangles_; }
  int numEdges() const { return numEdges_; }
  int numWorlds() const { return numWorlds_; }

 private:
  /// Boxes, tree and the counting launch; returns the count.
  int run(const Vec3* positions, int maxPairs, int* d_pairs);

  const Device* device_;
  int numParticles_ = 0;
  int numTriangles_ = 0;
  int numEdges_ = 0;
  int numWorlds_ = 1;
  DeviceBuffer<Int3> triangles_;       // (numTriangles)
  DeviceBuffer<int> worlds_;           // (numParticles) with worlds, else empty
  DeviceBuffer<Int4> edges_;           // (numEdges)
  DeviceBuffer<Vec3> triangleLowers_;  // (numTriangles)
  DeviceBuffer<Vec3> triangleUppers_;  // (numTriangles)
  Lbvh triangleBvh_;
  DeviceBuffer<int> count_;  // (1 + worlds with worlds, else 1): the total, then each world's
};

}  // namespace weft
