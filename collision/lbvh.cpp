#include "collision/lbvh.h"

#include <algorithm>
#include <bit>
#include <string>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

#if defined(__CUDACC__)
#include <cub/device/device_radix_sort.cuh>
#endif

namespace weft {

namespace {

size_t nodeCount(int numLeaves) {
  return numLeaves > 0 ? size_t(2 * numLeaves - 1) : 0;
}
size_t internalCount(int numLeaves) {
  return numLeaves > 1 ? size_t(numLeaves - 1) : 0;
}
size_t chunkCount(int numLeaves) {
  return numLeaves > 0 ? size_t((numLeaves + kLbvhRefitChunk - 1) / kLbvhRefitChunk) : 0;
}
/// Bits that hold any primitive id 0..numLeaves−1 (at least 1).
int bitsForPrimitives(int numLeaves) {
  return std::max(1, int(std::bit_width(unsigned(std::max(numLeaves - 1, 0)))));
}
/// Node ids are ints, so 2N − 1 must fit.
int checkedLeafCount(int numLeaves) {
  if (numLeaves < 0 || numLeaves >= (1 << 30))
    throw Error("an LBVH holds 0 to 2^30 - 1 leaves; got " + std::to_string(numLeaves));
  return numLeaves;
}
/// Morton codes have 30 bits; the keys' top 34 − primitiveBits bits are zero and need no sorting.
constexpr int kMortonBits = 30;

}  // namespace

namespace {

/// The worlds' layout checked: ascending from 0 to numLeaves.
const std::vector<int>& checkedWorlds(const std::vector<int>& worldBegin, int numLeaves) {
  if (worldBegin.empty()) return worldBegin;
  if (worldBegin.size() < 2 || worldBegin.front() != 0 || worldBegin.back() != numLeaves ||
      !std::is_sorted(worldBegin.begin(), worldBegin.end()))
    throw Error("an LBVH's worlds must be ascending primitive ranges from 0 to " +
                std::to_string(numLeaves));
  return worldBegin;
}

/// Bits that hold any primitive id within the largest world (all of them with one world).
int bitsForWorldPrimitives(const std::vector<int>& worldBegin, int numLeaves) {
  int largest = numLeaves;
  if (!worldBegin.empty()) {
    largest = 0;
    for (size_t w = 0; w + 1 < worldBegin.size(); ++w)
      largest = std::max(largest, worldBegin[w + 1] - worldBegin[w]);
  }
  return bitsForPrimitives(largest);
}

}  // namespace

Lbvh::Lbvh(const Device& device, int numLeaves, const std::vector<int>& worldBegin)
    : device_(&device),
      numLeaves_(checkedLeafCount(numLeaves)),
      primitiveBits_(bitsForWorldPrimitives(checkedWorlds(worldBegin, numLeaves), numLeaves)),
      numWorlds_(worldBegin.empty() ? 1 : int(worldBegin.size()) - 1),
      worldBits_(worldBegin.empty() ? 0 : int(std::bit_width(unsigned(numWorlds_ - 1)))),
      nodeLowers_(device, nodeCount(numLeaves)),
      nodeUppers_(device, nodeCount(numLeaves)),
      nodeBoxes_(device, 2 * nodeCount(numLeaves)),
      nodeLeft_(device, internalCount(numLeaves)),
      nodeRight_(device, internalCount(numLeaves)),
      nodeParent_(device, nodeCount(numLeaves)),
      nodeEscape_(device, nodeCount(numLeaves)),
      leafPrimitive_(device, size_t(std::max(numLeaves, 0))),
      nodeRangeEnd_(device, internalCount(numLeaves)),
      chunkLowers_(device, chunkCount(numLeaves)),
      chunkUppers_(device, chunkCount(numLeaves)),
      sceneBounds_(device, size_t(6) * size_t(worldBegin.empty() ? 1 : worldBegin.size() - 1)),
      keys_(device, size_t(std::max(numLeaves, 0))),
      sortedKeys_(device, size_t(std::max(numLeaves, 0))) {
  if (kMortonBits + primitiveBits_ + worldBits_ > 64)
    throw Error("an LBVH of " + std::to_string(numWorlds_) + " worlds of up to 2^" +
                std::to_string(primitiveBits_) + " primitives needs more than 64 key bits");
  if (!worldBegin.empty()) {
    std::vector<int> primitiveWorld(size_t(std::max(numLeaves, 0)));
    std::vector<int> roots(size_t(numWorlds_), -1);  // worlds without primitives stay −1
    for (int w = 0; w < numWorlds_; ++w)
      for (int p = worldBegin[size_t(w)]; p < worldBegin[size_t(w) + 1]; ++p)
        primitiveWorld[size_t(p)] = w;
    worldBegin_ = DeviceBuffer<int>(device, worldBegin);
    primitiveWorld_ = DeviceBuffer<int>(device, primitiveWorld);
    worldRoot_ = DeviceBuffer<int>(device, roots);
  }
  if (device.isCuda() && numLeaves > 1) {
#if defined(__CUDACC__)
    size_t bytes = 0;
    WEFT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
        nullptr, bytes, keys_.data(), sortedKeys_.data(), numLeaves, 0,
        kMortonBits + primitiveBits_ + worldBits_, static_cast<cudaStream_t>(device.stream())));
    sortStorage_ = DeviceBuffer<unsigned char>(device, bytes);
#else
    throw Error("internal error: collision/lbvh.cpp was not compiled as CUDA");
#endif
  }
}

void Lbvh::build(const Vec3* leafLowers, const Vec3* leafUppers) {
  const int n = numLeaves_;
  if (n == 0) return;

  sceneBounds_.zero();
  const int boundsItems = (n + kLbvhLeavesPerBoundsItem - 1) / kLbvhLeavesPerBoundsItem;
  const int* primitiveWorld = primitiveWorld_.empty() ? nullptr : primitiveWorld_.data();
  const int* worldBegin = worldBegin_.empty() ? nullptr : worldBegin_.data();
  launch(
      *device_, boundsItems,
      LbvhSceneBounds{n, boundsItems, leafLowers, leafUppers, sceneBounds_.data(), primitiveWorld});
  launch(*device_, n,
         LbvhMortonCodes{primitiveBits_, leafLowers, leafUppers, sceneBounds_.data(), keys_.data(),
                         primitiveWorld, worldBegin});

  // Keys are unique, so every correct sort gives the same order.
  if (n == 1) {
    sortedKeys_.copyFrom(keys_);
  } else if (device_->isCuda()) {
#if defined(__CUDACC__)
    size_t bytes = sortStorage_.size();
    WEFT_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
        sortStorage_.data(), bytes, keys_.data(), sortedKeys_.data(), n, 0,
        kMortonBits + primitiveBits_ + worldBits_, static_cast<cudaStream_t>(device_->stream())));
#endif
  } else {
    std::copy(keys_.data(), keys_.data() + n, sortedKeys_.data());
    std::sort(sortedKeys_.data(), sortedKeys_.data() + n);
  }

  launch(*device_, n,
         LbvhBuildHierarchy{n, (std::uint64_t(1) << primitiveBits_) - 1, sortedKeys_.data(),
                            leafPrimitive_.data(), nodeLeft_.data(), nodeRight_.data(),
                            nodeParent_.data(), nodeRangeEnd_.data(), kMortonBits + primitiveBits_,
                            worldBegin, worldRoot_.empty() ? nullptr : worldRoot_.data()});
  launch(*device_, int(nodeCount(n)),
         LbvhEscapeIndices{nodeLeft_.data(), nodeRight_.data(), nodeParent_.data(),
                           nodeEscape_.data()});
  refit(leafLowers, leafUppers);
}

void Lbvh::refit(const Vec3* leafLowers, const Vec3* leafUppers, const int* onlyIf) {
  const int n = numLeaves_;
  if (n == 0) return;
  launchGroup(*device_, int(chunkCount(n)),
              LbvhRefitLeaves{n, leafLowers, leafUppers, leafPrimitive_.data(), nodeLowers_.data(),
                              nodeUppers_.data(), chunkLowers_.data(), chunkUppers_.data(),
                              nodeBoxes_.data(), onlyIf});
  if (n > 1)
    launchGroup(*device_, n - 1,
                LbvhRefitNodes{n, nodeRangeEnd_.data(), chunkLowers_.data(), chunkUppers_.data(),
                               nodeLowers_.data(), nodeUppers_.data(), nodeLeft_.data(),
                               nodeRight_.data(), nodeBoxes_.data(), onlyIf});
}

BvhView Lbvh::view() const {
  return BvhView{numLeaves_,
                 nodeLowers_.data(),
                 nodeUppers_.data(),
                 nodeLeft_.data(),
                 nodeRight_.data(),
                 nodeEscape_.data(),
                 leafPrimitive_.data(),
                 worldRoot_.empty() ? nullptr : worldRoot_.data(),
                 nodeBoxes_.data()};
}

LbvhHostCopy Lbvh::download() const {
  LbvhHostCopy host;
  host.numLeaves = numLeaves_;
  host.nodeLowers = nodeLowers_.download();
  host.nodeUppers = nodeUppers_.download();
  host.nodeBoxes = nodeBoxes_.download();
  host.nodeLeft = nodeLeft_.download();
  host.nodeRight = nodeRight_.download();
  host.nodeParent = nodeParent_.download();
  host.nodeEscape = nodeEscape_.download();
  host.nodeRangeEnd = nodeRangeEnd_.download();
  host.leafPrimitive = leafPrimitive_.download();
  if (!worldRoot_.empty()) host.worldRoot = worldRoot_.download();
  return host;
}

}  // namespace weft
