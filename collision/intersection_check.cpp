#include "collision/intersection_check.h"

#include <algorithm>
#include <string>

#include "kernels/compute_aabbs.cuh"
#include "kernels/count_edge_triangle_intersections.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

namespace {

void checkIndex(int index, int numParticles, const char* what, size_t item) {
  if (index < 0 || index >= numParticles)
    throw Error(std::string("intersection check: ") + what + " " + std::to_string(item) +
                " refers to particle " + std::to_string(index) + ", but there are " +
                std::to_string(numParticles) + " particles");
}

}  // namespace

IntersectionCounter::IntersectionCounter(const Device& device, int numParticles,
                                         std::span<const Int3> triangles,
                                         std::span<const Int4> edges, std::span<const int> worlds,
                                         const std::vector<int>& triangleWorldBegin)
    : device_(&device),
      numParticles_(numParticles),
      numTriangles_(int(triangles.size())),
      numEdges_(int(edges.size())),
      numWorlds_(triangleWorldBegin.empty() ? 1 : int(triangleWorldBegin.size()) - 1),
      triangles_(device, triangles),
      edges_(device, edges),
      triangleLowers_(device, triangles.size()),
      triangleUppers_(device, triangles.size()),
      triangleBvh_(device, int(triangles.size()), triangleWorldBegin),
      count_(device, size_t(numWorlds_ > 1 ? 1 + numWorlds_ : 1)) {
  if (numWorlds_ > 1) {
    if (int(worlds.size()) != numParticles)
      throw Error("intersection check: a batch of worlds needs each particle's world");
    for (size_t i = 0; i < worlds.size(); ++i)
      if (worlds[i] < 0 || worlds[i] >= numWorlds_)
        throw Error("intersection check: particle " + std::to_string(i) + " is in world " +
                    std::to_string(worlds[i]) + ", but there are " + std::to_string(numWorlds_));
    worlds_ = DeviceBuffer<int>(device, worlds);
  }
  for (size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k) checkIndex(triangles[t][k], numParticles, "triangle", t);
  for (size_t e = 0; e < edges.size(); ++e) {
    checkIndex(edges[e].z, numParticles, "edge", e);
    checkIndex(edges[e].w, numParticles, "edge", e);
  }
}

int IntersectionCounter::run(const Vec3* positions, int maxPairs, int* d_pairs) {
  if (numTriangles_ == 0 || numEdges_ == 0) return 0;
  launch(*device_, numTriangles_,
         ComputeTriangleAabbs{positions, triangles_.data(), triangleLowers_.data(),
                              triangleUppers_.data()});
  triangleBvh_.build(triangleLowers_.data(), triangleUppers_.data());
  count_.zero();
  const bool batch = numWorlds_ > 1;
  launch(*device_, numEdges_,
         CountEdgeTriangleIntersections{triangleBvh_.view(), maxPairs, positions, triangles_.data(),
                                        edges_.data(), batch ? worlds_.data() : nullptr,
                                        batch ? count_.data() + 1 : count_.data(), count_.data(),
                                        d_pairs});
  return count_.download()[0];
}

int IntersectionCounter::count(const Vec3* positions) {
  return run(positions, 0, nullptr);
}

std::vector<int> IntersectionCounter::countPerWorld(const Vec3* positions) {
  const int total = run(positions, 0, nullptr);
  if (numWorlds_ == 1) return {total};
  if (total == 0) return std::vector<int>(size_t(numWorlds_), 0);  // nothing was counted
  const std::vector<int> all = count_.download();
  return {all.begin() + 1, all.end()};
}

std::vector<std::pair<int, int>> IntersectionCounter::pairs(const Vec3* positions, int maxPairs) {
  maxPairs = std::max(maxPairs, 0);
  DeviceBuffer<int> found(*device_, size_t(2) * size_t(maxPairs));
  const int total = run(positions, maxPairs, found.data());
  const std::vector<int> host = found.download();
  std::vector<std::pair<int, int>> result;
  for (int k = 0; k < std::min(total, maxPairs); ++k)
    result.emplace_back(host[2 * k], host[2 * k + 1]);
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace weft
