// Lbvh: a linear BVH (Karras 2012) over N axis-aligned boxes, built and refit on the device.
//
// Owns every buffer of the tree; kernels see it through BvhView (kernels/lbvh.cuh, which also
// describes the node layout and the build kernels). Everything is allocated in the constructor,
// including CUB's temporary storage for the radix sort, so build() and refit() allocate nothing,
// never wait for the device, and can be captured into a CUDA graph.
//
//   build(lowers, uppers)  scene bounds → Morton keys → sort → hierarchy → escape indices → refit.
//                          Keys are (morton << b) | primitive, unique, so equal Morton codes are
//                          ordered by primitive id and the tree is the same on every backend
//                          and every run (bit-identical node arrays).
//   refit(lowers, uppers)  same topology, new boxes (cheap; quality degrades under large motion,
//                          so the owner rebuilds now and then): two launches, leaf chunks then
//                          every internal node from its leaf range, with no bottom-up chain.
// Leaf boxes are given in primitive order (box p belongs to primitive p) as device pointers; the
// tree copies them, so the caller may overwrite them afterwards.
//
// Sorting is the only backend-specific step: cub::DeviceRadixSort on CUDA (only the key bits
// that can be non-zero are sorted), std::sort on the CPU backend, whose buffers are host memory.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/lbvh.cuh"
#include "kernels/math.h"
#include "kernels/runtime/buffer.h"
#include "kernels/runtime/device.h"

namespace weft {

/// A host copy of every node array of an Lbvh (tests, validation, diagnostics).
struct LbvhHostCopy {
  int numLeaves = 0;
  std::vector<Vec3> nodeLowers;        // (2N − 1)
  std::vector<Vec3> nodeUppers;        // (2N − 1)
  std::vector<BvhNodeHalf> nodeBoxes;  // (2 · (2N − 1)) node records
  std::vector<int> nodeLeft;           // (N − 1)
  std::vector<int> nodeRight;          // (N − 1)
  std::vector<int> nodeParent;         // (2N − 1), root −1
  std::vector<int> nodeEscape;         // (2N − 1)
  std::vector<int> nodeRangeEnd;       // (N − 1) node i's leaves are those between i and this
  std::vector<int> leafPrimitive;      // (N)
  std::vector<int> worldRoot;          // (worlds) with worlds, else empty
};

class Lbvh {
 public:
  /// Allocates a tree for `numLeaves` boxes (0 allowed: every query then visits nothing).
  /// `worldBegin` (worlds + 1 ascending primitive ids, from 0 to numLeaves; empty: one world)
  /// makes it a forest in one tree (kernels/lbvh.cuh, "Worlds"): world w's primitives
  /// [worldBegin[w], worldBegin[w + 1]) get a subtree of their own, rooted at
  /// view().rootOf(w), of the shape they would have alone. Throws weft::Error for a malformed
  /// `worldBegin` or more worlds than the keys hold.
  Lbvh(const Device& device, int numLeaves, const std::vector<int>& worldBegin = {});
  Lbvh(Lbvh&&) noexcept = default;
  Lbvh& operator=(Lbvh&&) noexcept = default;

  /// Full build from leaf boxes in primitive order: leafLowers[p], leafUppers[p] are device
  /// pointers of numLeaves() boxes. Asynchronous on the device's stream; graph-capturable.
  void build(const Vec3* leafLowers, const Vec3* leafUppers);
  /// Same topology, new leaf boxes: copies them in and recomputes every internal box as the
  /// union of its leaf range.
  /// Deterministic (min/max only); graph-capturable. Requires a prior build(). With `onlyIf` (a
  /// device int) the launches happen but do nothing unless *onlyIf ≠ 0 when they run: a refit
  /// decided on the device, inside a captured graph.
  void refit(const Vec3* leafLowers, const Vec3* leafUppers, const int* onlyIf = nullptr);

  BvhView view() const;
  int numLeaves() const { return numLeaves_; }
  int numNodes() const { return numLeaves_ > 0 ? 2 * numLeaves_ - 1 : 0; }
  int numWorlds() const { return numWorlds_; }
  /// Waits for the device and copies every node array to the host.
  LbvhHostCopy download() const;

 private:
  const Device* device_;
  int numLeaves_ = 0;
  int primitiveBits_ = 1;  // key bits below the Morton code
  int numWorlds_ = 1;
  int worldBits_ = 0;  // key bits above the Morton code (0: one world)

  DeviceBuffer<Vec3> nodeLowers_;        // (2N − 1)
  DeviceBuffer<Vec3> nodeUppers_;        // (2N − 1)
  DeviceBuffer<BvhNodeHalf> nodeBoxes_;  // (2 · (2N − 1)) node records (kernels/lbvh.cuh)
  DeviceBuffer<int> nodeLeft_;           // (N − 1)
  DeviceBuffer<int> nodeRight_;          // (N − 1)
  DeviceBuffer<int> nodeParent_;         // (2N − 1)
  DeviceBuffer<int> nodeEscape_;         // (2N − 1)
  DeviceBuffer<int> leafPrimitive_;      // (N)
  DeviceBuffer<int> nodeRangeEnd_;       // (N − 1) other end of each node's leaf range
  DeviceBuffer<Vec3> chunkLowers_;       // (⌈N / kLbvhRefitChunk⌉) refit chunk boxes
  DeviceBuffer<Vec3> chunkUppers_;
  DeviceBuffer<unsigned> sceneBounds_;       // (6) ordered codes of −min and max of the centres
  DeviceBuffer<std::uint64_t> keys_;         // (N) in primitive order
  DeviceBuffer<std::uint64_t> sortedKeys_;   // (N)
  DeviceBuffer<unsigned char> sortStorage_;  // CUB temporary storage (CUDA only)
  // With worlds (else empty):
  DeviceBuffer<int> worldBegin_;      // (worlds + 1) first primitive of each world
  DeviceBuffer<int> primitiveWorld_;  // (N) world of each primitive
  DeviceBuffer<int> worldRoot_;       // (worlds) subtree roots (−1: a world without primitives)
};

}  // namespace weft
