// launch(): the one way Weft runs a kernel, on either backend.
//
// A kernel is a trivially copyable functor (its arguments: counts and `T* __restrict__` views)
// that names its KernelId. Two shapes exist:
//
//   Elementwise   struct K { static constexpr KernelId kId = ...;
//                            WEFT_HD void operator()(int i) const; };
//                 launch(device, n, K{...}) runs operator()(i) for every i in [0, n).
//                 A kernel that needs per-thread scratch in shared memory (the reference's BVH
//                 traversal stack) also declares `static constexpr int kSharedBytesPerThread`
//                 and takes `operator()(int i, unsigned char* scratch)`; on CUDA the scratch is
//                 the thread's slice of block × kSharedBytesPerThread bytes of dynamic shared
//                 memory (so large blocks can fail to launch, which the tuner records), on the
//                 CPU a buffer on the stack.
//
//   Tile          struct K { static constexpr KernelId kId = ...; using Part = ...;
//                            int maxParts() const;                    // host: max partCount
//                            WEFT_HD int partCount(int item) const;
//                            WEFT_HD Part part(int item, int k) const;
//                            WEFT_HD void finish(int item, const Part& sum) const; };
//                 Optional: `static constexpr int kOneLaneSharedLevels` (> 0) with a member
//                 `OneLaneSpill oneLaneSpill;` (kernel_ids.h), global memory for the tree levels
//                 of one-lane tiles beyond the first kOneLaneSharedLevels (launch_cuda.cuh), and
//                 `static constexpr int kOneLaneMaxRegisters` (> 0: the one-lane entry's cap),
//                 `static constexpr int kOneLaneBlocksPerSm` (> 0: the blocks of one-lane tiles
//                 an SM's shared memory is sized for, the rest left to L1; carveSharedFor),
//                 `static constexpr int kOneLaneTilesPerBlock` (> 0: at most that many one-lane
//                 tiles a block; tileLayout). A Part may name the words a tree keeps of it
//                 (`kTreeWords`; one_lane_tree.h, TreeWords).
//                 launchTile(device, n, K{...}) gives every item one cooperative tile: the
//                 tile's lanes evaluate the item's parts in parallel, a fixed-shape pairwise
//                 tree (over part indices, padded to a power of two) sums them (each lane its
//                 own slots, then shuffles; block-wide tiles in shared memory), and lane 0
//                 calls finish(). Because the tree depends only on the part
//                 count, the sum is bit-identical for every tile size the tuner may pick; the CPU
//                 backend runs the same tree with one lane per item. Tiles of up to 32 lanes
//                 are packed several to a block (launch_cuda.cuh).
//
//   Group         struct K { static constexpr KernelId kId = ...;
//                            static constexpr int kSharedIntsPerLane = ...;  // may be 0
//                            template <class Group>
//                            WEFT_HD void operator()(const Group& g, int item) const; };
//                 launchGroup(device, n, K{...}) gives every item a group of G lanes of one warp
//                 (G = the table's lanes per item: 1, 2, 4, ..., 32) that run operator() together
//                 and cooperate through the group handle: size(), rank(), sync(), ballot(bool)
//                 (bit r = rank r's value), shuffle(value, rank) and G × kSharedIntsPerLane ints
//                 of group-shared memory (shared(), sharedInts()). Every lane must make the same
//                 sequence of sync/ballot/shuffle calls. The CPU backend runs each item with
//                 SerialGroup, a group of one lane. A group kernel's result must not depend on
//                 G (the tests check that it is bit-identical for every G).
//
// Any shape's kernel may declare `static constexpr int kMaxRegisters` (> 0): its CUDA entry points
// are compiled with that register cap (__maxnreg__), for a kernel whose occupancy its registers
// limit (launch_cuda.cuh, entryRegisterCap).
//
// On CUDA the block (or tile) size comes from the device's LaunchPolicy, i.e. the launch table
// (never a literal at a call site; a tile launch of a batch no tuned batch covers runs at half
// that size where this takes it from two waves to one, LaunchPolicy::narrowsToOneWave); each launch
// is checked and, in debug mode, synchronized and logged (Device::checkLaunch). On the CPU the
// items run as an OpenMP loop.
//
// Files that call launch() must be compiled as CUDA when the build has CUDA (CMake:
// weft_cuda_sources), because that is where the __global__ wrappers are instantiated.
#pragma once

#include <algorithm>
#include <source_location>
#include <type_traits>

#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/platform.h"

#if defined(__CUDACC__)
#include "kernels/runtime/launch_cuda.cuh"
#endif

namespace weft {

/// Largest part count a tile item may have (shared memory holds one Part per part, padded to a
/// power of two). Model building rejects meshes whose vertices exceed it.
inline constexpr int kMaxTileParts = 256;

namespace detail {

/// Below this many items the CPU loop runs on one thread: OpenMP's fork costs more.
inline constexpr int kCpuSerialThreshold = 256;

WEFT_HD inline int nextPowerOfTwo(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

template <class K>
concept WithSharedScratch = requires {
  K::kSharedBytesPerThread;
};

template <class K>
WEFT_HD inline void runElement(const K& kernel, int i) {
  if constexpr (WithSharedScratch<K>) {
    alignas(16) unsigned char scratch[K::kSharedBytesPerThread];
    kernel(i, scratch);
  } else {
    kernel(i);
  }
}

template <class K>
void runElementsOnCpu(int count, const K& kernel) {
  if (count < kCpuSerialThreshold) {
    for (int i = 0; i < count; ++i) runElement(kernel, i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i) runElement(kernel, i);
}

/// The tile algorithm for one item with one lane: the same parts and the same pairwise tree as
/// the CUDA tile kernel (launch_cuda.cuh), so both backends add in the same order.
template <class K>
WEFT_HD typename K::Part reducePartsSerially(const K& kernel, int item, typename K::Part* slots) {
  using Part = typename K::Part;
  const int count = kernel.partCount(item);
  const int width = nextPowerOfTwo(count);
  for (int s = 0; s < width; ++s) slots[s] = s < count ? kernel.part(item, s) : Part{};
  for (int stride = width / 2; stride > 0; stride /= 2)
    for (int s = 0; s < stride; ++s) slots[s] += slots[s + stride];
  return count > 0 ? slots[0] : Part{};
}

template <class K>
void runTilesOnCpu(int count, const K& kernel) {
  using Part = typename K::Part;
#pragma omp parallel if (count >= kCpuSerialThreshold)
  {
    Part slots[kMaxTileParts];
#pragma omp for schedule(static)
    for (int item = 0; item < count; ++item)
      kernel.finish(item, reducePartsSerially(kernel, item, slots));
  }
}

/// The CPU backend's group (launch.h, Group shape): one lane, memory on the caller's stack.
struct SerialGroup {
  int* memory;
  int memoryInts;
  WEFT_HD int size() const { return 1; }
  WEFT_HD int rank() const { return 0; }
  WEFT_HD void sync() const {}
  WEFT_HD unsigned ballot(bool value) const { return value ? 1u : 0u; }
  template <class T>
  WEFT_HD T shuffle(T value, int /*source*/) const {
    return value;
  }
  WEFT_HD int* shared() const { return memory; }
  WEFT_HD int sharedInts() const { return memoryInts; }
};

template <class K>
void runGroupsOnCpu(int count, const K& kernel) {
#pragma omp parallel if (count >= kCpuSerialThreshold)
  {
    // kSharedIntsPerLane may be 0 (a group that only votes and shuffles); an array cannot.
    int memory[K::kSharedIntsPerLane > 0 ? K::kSharedIntsPerLane : 1];
#pragma omp for schedule(static)
    for (int item = 0; item < count; ++item)
      kernel(SerialGroup{memory, K::kSharedIntsPerLane}, item);
  }
}

template <class>
inline constexpr bool kAlwaysFalse = false;

}  // namespace detail

namespace detail {

// What differs between the three launch shapes: how the CPU backend runs them, the block size the
// debug log reports there, and (CUDA) how they launch and what resources they use.
struct ElementsShape {
  template <class K>
  static void runOnCpu(int count, const K& kernel) {
    runElementsOnCpu(count, kernel);
  }
  static int cpuLoggedSize(int count) { return count; }
#if defined(__CUDACC__)
  template <class K>
  static int launchOnCuda(void* stream, int count, int size, const K& kernel) {
    return launchElementsOnCuda(stream, count, size, kernel);
  }
  template <class K>
  static KernelResources resources(const K& kernel, int /*count*/, int size) {
    return elementsKernelResources(kernel, size);
  }
#endif
};

struct TileShape {
  template <class K>
  static void runOnCpu(int count, const K& kernel) {
    runTilesOnCpu(count, kernel);
  }
  static int cpuLoggedSize(int) { return 1; }
#if defined(__CUDACC__)
  template <class K>
  static int launchOnCuda(void* stream, int count, int size, const K& kernel) {
    return launchTilesOnCuda(stream, count, size, kernel);
  }
  /// The size the launch runs at (LaunchPolicy::narrowsToOneWave).
  template <class K>
  static int sizeFor(const Device& device, int count, const K& kernel) {
    const LaunchPolicy& policy = device.launchPolicy();
    const int size = policy.size(K::kId);
    if (!policy.narrowsToOneWave(K::kId)) return size;
    const int sms = device.gpu().identity.smCount;
    return oneWaveTileSize(size,
                           [&](int tile) { return tileLaunchWaves(kernel, count, tile, sms); });
  }
  template <class K>
  static KernelResources resources(const K& kernel, int count, int size) {
    return tilesKernelResources(kernel, count, size);
  }
#endif
};

struct GroupShape {
  template <class K>
  static void runOnCpu(int count, const K& kernel) {
    runGroupsOnCpu(count, kernel);
  }
  static int cpuLoggedSize(int) { return 1; }
#if defined(__CUDACC__)
  template <class K>
  static int launchOnCuda(void* stream, int count, int size, const K& kernel) {
    return launchGroupsOnCuda(stream, count, size, kernel);
  }
  template <class K>
  static KernelResources resources(const K& kernel, int /*count*/, int size) {
    return groupsKernelResources(kernel, size);
  }
#endif
};

/// The launch every shape shares: the CPU loop, or the CUDA launch at the policy's size, the
/// launch check, and the record for a launch observer (the tuner).
template <class Shape, class K>
void launchShape(const Device& device, int count, const K& kernel,
                 const std::source_location& where) {
  static_assert(std::is_trivially_copyable_v<K>, "kernel arguments must be trivially copyable");
  constexpr KernelId id = K::kId;
  if (count <= 0) return;
  if (device.backend() == Backend::Cpu) {
    Shape::runOnCpu(count, kernel);
    if (device.debugLaunches())
      device.checkLaunch(id, count, 1, Shape::cpuLoggedSize(count), where);
    return;
  }
#if defined(__CUDACC__)
  int size = device.launchPolicy().size(id);
  if constexpr (std::is_same_v<Shape, TileShape>) size = Shape::sizeFor(device, count, kernel);
  const int grid = Shape::launchOnCuda(device.stream(), count, size, kernel);
  device.checkLaunch(id, count, grid, size, where);
  if (LaunchObserver* observer = device.observer()) {
    observer->onLaunch(
        {id, count, size, grid,
         [kernel, count](void* stream, int s) { Shape::launchOnCuda(stream, count, s, kernel); },
         [kernel, count](int s) { return Shape::resources(kernel, count, s); }});
  }
#elif defined(WEFT_WITH_CUDA)
  static_assert(kAlwaysFalse<K>,
                "this file launches kernels: list it in weft_cuda_sources() so nvcc compiles it");
#else
  throw Error("internal error: CUDA launch in a build without CUDA");
#endif
}

}  // namespace detail

/// Runs an elementwise kernel over [0, count) on `device`. See the file comment.
template <class K>
void launch(const Device& device, int count, const K& kernel,
            const std::source_location& where = std::source_location::current()) {
  static_assert(launchKindOf(K::kId) == LaunchKind::Elementwise,
                "use launchTile() / launchGroup() for tile / group kernels");
  detail::launchShape<detail::ElementsShape>(device, count, kernel, where);
}

/// Runs a tile kernel over `count` items on `device`. See the file comment.
template <class K>
void launchTile(const Device& device, int count, const K& kernel,
                const std::source_location& where = std::source_location::current()) {
  static_assert(launchKindOf(K::kId) == LaunchKind::Tile, "not a tile kernel");
  if (count <= 0) return;
  if (kernel.maxParts() > kMaxTileParts)
    throw Error("kernel " + std::string(kernelName(K::kId)) + ": an item has " +
                std::to_string(kernel.maxParts()) + " parts, more than the tile limit of " +
                std::to_string(kMaxTileParts));
  detail::launchShape<detail::TileShape>(device, count, kernel, where);
}

/// Runs a group kernel over `count` items on `device`. See the file comment.
template <class K>
void launchGroup(const Device& device, int count, const K& kernel,
                 const std::source_location& where = std::source_location::current()) {
  static_assert(launchKindOf(K::kId) == LaunchKind::Group, "not a group kernel");
  detail::launchShape<detail::GroupShape>(device, count, kernel, where);
}

}  // namespace weft
