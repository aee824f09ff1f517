// The CUDA side of launch() (launch.h): one __global__ entry point per kernel, named after it,
// and the three bodies (elementwise, tile, group) those entry points run. Included only when nvcc
// compiles the translation unit.
//
// Names: every KernelId of kernels/runtime/kernel_ids.h gets its own __global__ function template
// `weft::gpu::<name><Body, K>` (WEFT_KERNELS below), so Nsight Systems and Nsight Compute show
// `solve_elasticity_tile`, `edge_colliding_edges_detection_cooperative`, ... instead of one
// generic wrapper; `ncu --kernel-name solve_elasticity_tile` selects one kernel. The body (how
// items map to threads) is the first template argument, the kernel functor the second.
//
// Shapes:
//   elementwise  one thread per item, block size from the table;
//   tile         one tile of T lanes per item summing the item's parts; tiles of up to 32 lanes
//                are packed kTileBlockThreads / T to a block (fewer if their shared memory would
//                pass 48 KB), each lane summing its own slots with the one-lane walk and the
//                lanes' sums added with shuffles, so a small tile no longer leaves most of a warp
//                and most of the SM's block slots empty, nor keeps a shared slot per part;
//                larger tiles are one block each and synchronize the block; a tile of one lane
//                (for batches that fill the GPU with items) keeps only a partial sum per tree
//                level, in shared memory;
//   group        a group of G lanes of one warp per item (kGroupBlockThreads / G groups a block),
//                with G × K::kSharedIntsPerLane ints of shared memory of its own; at most
//                kMaxGroupBlocks blocks, a group serving items a grid's groups apart.
//
// Every launch is a programmatic dependent launch (awaitPriorGrids below): the same order and the
// same memory as serialized launches, with shorter gaps between them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/one_lane_tree.h"

namespace weft::detail {

/// Lanes [base, base + G) of a warp acting together on one item (launch.h, Group shape): the
/// CUDA counterpart of SerialGroup. Ballot bits and shuffle sources are group ranks.
template <int G>
struct WarpGroup {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "a group is a power of two <= 32");
  unsigned mask;  // the group's lanes in the warp
  int base;       // warp lane of rank 0
  int* memory;    // the group's shared ints
  int memoryInts;

  __device__ static WarpGroup make(int* memory, int memoryInts) {
    const int lane = int(threadIdx.x) & 31;
    const int base = lane & ~(G - 1);
    const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << base;
    return {mask, base, memory, memoryInts};
  }
  __device__ int size() const { return G; }
  __device__ int rank() const { return (int(threadIdx.x) & 31) - base; }
  __device__ void sync() const { __syncwarp(mask); }
  /// Bit r set when rank r's `value` is true.
  __device__ unsigned ballot(bool value) const { return __ballot_sync(mask, value) >> base; }
  /// rank `source`'s `value`.
  template <class T>
  __device__ T shuffle(T value, int source) const {
    return __shfl_sync(mask, value, base + source);
  }
  __device__ int* shared() const { return memory; }
  __device__ int sharedInts() const { return memoryInts; }
};

// ---- Bodies: how a launch's threads map to items ----------------------------------------------

struct ElementsBody {
  template <class K>
  __device__ static void run(const K& kernel, int count, int /*unused*/) {
    const int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (i < count) kernel(i);
  }
};

/// One thread per item, with a per-thread slice of dynamic shared memory.
struct ElementsWithScratchBody {
  template <class K>
  __device__ static void run(const K& kernel, int count, int /*unused*/) {
    extern __shared__ __align__(16) unsigned char sharedScratch[];
    const int i = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (i < count) kernel(i, sharedScratch + threadIdx.x * K::kSharedBytesPerThread);
  }
};

/// Part `value` of the lane `delta` above within the same `width`-lane segment of the warp (lanes
/// of `mask`), shuffled word by word: the words a tile's tree keeps of it (one_lane_tree.h,
/// TreeWords).
template <class P>
__device__ P shuffleDown(const P& value, int delta, unsigned mask, int width) {
  unsigned words[TreeWords<P>::kWords];
  TreeWords<P>::store(value, words);
  for (unsigned& w : words) w = __shfl_down_sync(mask, w, unsigned(delta), width);
  return TreeWords<P>::load(words);
}

/// The tree levels a one-lane tile of kernel K keeps in shared memory when K lends it global
/// memory for the deeper ones (`kOneLaneSharedLevels`, launch.h), or 0: K lends none.
template <class K>
inline constexpr int kOneLaneSharedLevelsOf = [] {
  if constexpr (requires { K::kOneLaneSharedLevels; })
    return K::kOneLaneSharedLevels;
  else
    return 0;
}();

/// Whether kernel K may lend its one-lane tiles global memory.
template <class K>
inline constexpr bool kLendsOneLaneSpill = kOneLaneSharedLevelsOf<K> > 0;

/// The blocks of kernel K's one-lane tiles an SM's shared memory is sized for
/// (`kOneLaneBlocksPerSm`, launch.h), or 0: the driver's default.
template <class K>
inline constexpr int kOneLaneBlocksPerSmOf = [] {
  if constexpr (requires { K::kOneLaneBlocksPerSm; })
    return K::kOneLaneBlocksPerSm;
  else
    return 0;
}();

/// The tiles of a block of kernel K's one-lane launches (`kOneLaneTilesPerBlock`, launch.h), or 0:
/// as many as kTileBlockThreads and the 48 KB default limit allow (tileLayout).
template <class K>
inline constexpr int kOneLaneTilesPerBlockOf = [] {
  if constexpr (requires { K::kOneLaneTilesPerBlock; })
    return K::kOneLaneTilesPerBlock;
  else
    return 0;
}();

/// Whether kernel K names the tiles of its one-lane blocks.
template <class K>
inline constexpr bool kFixesOneLaneTilesPerBlock = kOneLaneTilesPerBlockOf<K> > 0;

/// Whether kernel K sizes its one-lane tiles' shared memory (carveSharedFor).
template <class K>
inline constexpr bool kCarvesOneLaneShared = kOneLaneBlocksPerSmOf<K> > 0;

/// The global memory kernel K lends the deep levels of a one-lane launch of `count` items of at
/// most `slots` parts (kernel_ids.h, OneLaneSpill), or none: the kernel lends none, the tree fits
/// kOneLaneSharedLevelsOf<K>, or the memory is too small. Host (tileLayout) and device
/// (TilesBody<1>) decide alike.
template <class K>
__host__ __device__ OneLaneSpill oneLaneSpillOf(const K& kernel, int slots, int count) {
  if constexpr (kLendsOneLaneSpill<K>) {
    const size_t words = oneLaneSpillWords(slots, count, TreeWords<typename K::Part>::kWords,
                                           kOneLaneSharedLevelsOf<K>);
    const OneLaneSpill spill = kernel.oneLaneSpill;
    if (words > 0 && spill.words && words <= spill.capacityWords) return spill;
  }
  return {};
}

/// Lane `lane`'s slots of a tile of `tile` lanes as the items of a one-lane tree: leaf j is slot
/// lane + j · tile (zero past the item's parts), `leaves` of them (TilesBody).
template <class K>
struct LaneSlots {
  using Part = typename K::Part;
  const K& kernel;
  int lane, tile, leaves, parts;
  WEFT_HD int partCount(int) const { return leaves; }
  WEFT_HD Part part(int item, int j) const {
    const int s = lane + j * tile;
    return s < parts ? kernel.part(item, s) : Part{};
  }
};

/// Tiles of kTile lanes, blockDim.x / kTile of them per block, one item each. A pairwise tree sums
/// the item's parts (zero past the count, up to the next power of two) in an order that depends
/// only on the part count, and rank 0 finishes the item; `slotsPerTile` = maxParts rounded up to a
/// power of two. One lane walks the tree leaf by leaf; 2 to 32 lanes each walk the subtree of
/// their own slots and add the lanes' sums with shuffles; a block-wide tile fills a slot per
/// part in shared memory and sums them there.
template <int kTile>
struct TilesBody {
  template <class K>
  __device__ static void run(const K& kernel, int count, int slotsPerTile) {
    using Part = typename K::Part;
    extern __shared__ __align__(16) unsigned char sharedBytes[];
    const int tilesPerBlock = int(blockDim.x) / kTile;
    const int tileInBlock = int(threadIdx.x) / kTile;
    const int lane = int(threadIdx.x) % kTile;
    const int item = int(blockIdx.x) * tilesPerBlock + tileInBlock;
    if (item >= count) return;  // the whole tile leaves together (its own barrier below)
    if constexpr (kTile == 1) {
      // One lane: the same tree, leaf by leaf, with a partial sum per level (sumPartsOneLane,
      // one_lane_tree.h). The levels are indexed at run time, so they cannot be registers; they
      // live in shared memory (tileLayout: log2(slotsPerTile) per tile), word w of level l of tile
      // t at [(l · words + w) · tiles + t], so a warp's lanes touch 32 consecutive words. In a
      // local array instead, 4096 y_junction worlds stored 211 MB a launch to local memory that L2
      // evicted to DRAM (docs/PERFORMANCE.md, "The one-lane tile's levels"). A kernel that lends
      // global memory (OneLaneSpill) keeps only its first kOneLaneSharedLevelsOf<K> levels here and
      // the deeper ones there, word-major over the items; an item of at most
      // 2^kOneLaneSharedLevelsOf<K> parts never reaches them.
      constexpr int kWords = TreeWords<Part>::kWords;
      const OneLaneSpill spill = oneLaneSpillOf(kernel, slotsPerTile, count);
      const int sharedLevels =
          spill.words ? kOneLaneSharedLevelsOf<K> : oneLaneLevels(slotsPerTile);
      unsigned* const levelWords = reinterpret_cast<unsigned*>(sharedBytes) + tileInBlock;
      // One branch per level, not per word: the shared path's addresses stay constant offsets.
      // A kernel that lends nothing compiles the shared path alone.
      constexpr bool kLends = kLendsOneLaneSpill<K>;
      const auto storeLevel = [&](int level, const Part& p) {
        unsigned words[kWords];
        TreeWords<Part>::store(p, words);
        if (!kLends || level < sharedLevels) {
#pragma unroll
          for (int w = 0; w < kWords; ++w)
            levelWords[(level * kWords + w) * tilesPerBlock] = words[w];
        } else {
          unsigned* const deep =
              spill.words + size_t(level - sharedLevels) * kWords * size_t(count) + size_t(item);
#pragma unroll
          for (int w = 0; w < kWords; ++w) deep[size_t(w) * size_t(count)] = words[w];
        }
      };
      const auto loadLevel = [&](int level) {
        unsigned words[kWords];
        if (!kLends || level < sharedLevels) {
#pragma unroll
          for (int w = 0; w < kWords; ++w)
            words[w] = levelWords[(level * kWords + w) * tilesPerBlock];
        } else {
          const unsigned* const deep =
              spill.words + size_t(level - sharedLevels) * kWords * size_t(count) + size_t(item);
#pragma unroll
          for (int w = 0; w < kWords; ++w) words[w] = deep[size_t(w) * size_t(count)];
        }
        return TreeWords<Part>::load(words);
      };
      if constexpr (requires { requires K::kOneLaneWalksOwnDepth; })
        kernel.finish(item, sumPartsOneLane(kernel, item, storeLevel, loadLevel));
      else
        kernel.finish(item, sumPartsOneLane(kernel, item, storeLevel, loadLevel, WarpTreeDepth{}));
      return;
    }
    if constexpr (kTile <= 32) {
      // Each lane sums its own slots lane, lane + kTile, … (the tree's levels of stride kTile and
      // more pair slots of one lane) with the one-lane walk, its partial sums in shared memory
      // (tileLayout: log2(slots / kTile) levels a lane, word w of level l of thread t at
      // [(l · words + w) · threads + t]), then the levels below kTile are shuffles: the same tree
      // as the slots below, without a shared slot per part.
      constexpr int kWords = TreeWords<Part>::kWords;
      const int threads = int(blockDim.x);
      unsigned* const levelWords = reinterpret_cast<unsigned*>(sharedBytes) + threadIdx.x;
      const auto storeLevel = [&](int level, const Part& p) {
        unsigned words[kWords];
        TreeWords<Part>::store(p, words);
#pragma unroll
        for (int w = 0; w < kWords; ++w) levelWords[(level * kWords + w) * threads] = words[w];
      };
      const auto loadLevel = [&](int level) {
        unsigned words[kWords];
#pragma unroll
        for (int w = 0; w < kWords; ++w) words[w] = levelWords[(level * kWords + w) * threads];
        return TreeWords<Part>::load(words);
      };
      const int parts = kernel.partCount(item);
      int width = 1;
      while (width < parts) width *= 2;
      const LaneSlots<K> mine{kernel, lane, kTile, width > kTile ? width / kTile : 1, parts};
      Part value = sumPartsOneLane(mine, item, storeLevel, loadLevel);
      const int base = int(threadIdx.x) & 31 & ~(kTile - 1);
      const unsigned mask = kTile == 32 ? 0xffffffffu : ((1u << kTile) - 1u) << base;
      for (int stride = (width < kTile ? width : kTile) / 2; stride > 0; stride /= 2) {
        const Part other = shuffleDown(value, stride, mask, kTile);
        if (lane < stride) value += other;
      }
      if (lane == 0) kernel.finish(item, value);
      return;
    }
    // A block-wide tile (one a block): a slot per part in shared memory, its tree words.
    using Words = unsigned[TreeWords<Part>::kWords];
    Words* slots = reinterpret_cast<Words*>(sharedBytes) + tileInBlock * slotsPerTile;
    const int parts = kernel.partCount(item);
    int width = 1;
    while (width < parts) width *= 2;
    for (int s = lane; s < width; s += kTile)
      TreeWords<Part>::store(s < parts ? kernel.part(item, s) : Part{}, slots[s]);
    __syncthreads();
    for (int stride = width / 2; stride > 0; stride /= 2) {
      for (int s = lane; s < stride; s += kTile) {
        Part sum = TreeWords<Part>::load(slots[s]);
        sum += TreeWords<Part>::load(slots[s + stride]);
        TreeWords<Part>::store(sum, slots[s]);
      }
      __syncthreads();
    }
    if (lane == 0) kernel.finish(item, parts > 0 ? TreeWords<Part>::load(slots[0]) : Part{});
  }
};

/// Groups of G lanes, kGroupBlockThreads / G per block (launch.h, Group shape). A group takes
/// items groupIndex, groupIndex + groups, … (groups = the grid's, at most kMaxGroupBlocks blocks:
/// launchGroupsOnCuda), one after another, with a barrier of the group between them (the next
/// item may overwrite the group-shared memory the last one read).
template <int G>
struct GroupsBody {
  template <class K>
  __device__ static void run(const K& kernel, int count, int /*unused*/) {
    extern __shared__ __align__(16) int groupShared[];
    const int groupsPerBlock = int(blockDim.x) / G;
    const int groupInBlock = int(threadIdx.x) / G;
    const int ints = G * K::kSharedIntsPerLane;
    const auto group = WarpGroup<G>::make(groupShared + groupInBlock * ints, ints);
    const int first = int(blockIdx.x) * groupsPerBlock + groupInBlock;
    const int stride = int(gridDim.x) * groupsPerBlock;
    for (int item = first; item < count; item += stride) {  // uniform over the group
      if (item != first) group.sync();
      kernel(group, item);
    }
  }
};

}  // namespace weft::detail

// ---- One named __global__ entry point per kernel ----------------------------------------------

namespace weft::detail {
/// The register cap of kernel K's entry point with `Body` (0: none): a tile kernel may cap its
/// one-lane tiles (`static constexpr int kOneLaneMaxRegisters`), whose occupancy the registers
/// limit once the tree levels' shared memory no longer does (docs/PERFORMANCE.md), and any kernel
/// every entry (`static constexpr int kMaxRegisters`).
template <class Body, class K>
constexpr int entryRegisterCap() {
  if constexpr (std::is_same_v<Body, TilesBody<1>> && requires { K::kOneLaneMaxRegisters; })
    return K::kOneLaneMaxRegisters;  // 0: none
  else if constexpr (requires { K::kMaxRegisters; })
    return K::kMaxRegisters;  // any body
  else
    return 0;
}

/// Programmatic dependent launch (Hopper; docs/PERFORMANCE.md, "Programmatic dependent
/// launch"): every kernel is launched with the attribute that lets the GPU resolve its dependency
/// on the kernel before it in the stream itself (launchEntry), and every entry starts by waiting
/// until the grids it depends on have completed and their memory is visible. No kernel triggers
/// its dependents early (`griddepcontrol.launch_dependents` at entry measured slower), so each
/// kernel runs after the one before has finished, as with serialized launches, and sees the same
/// memory: the same bits. What it buys is a shorter gap between small launches. The wait is a
/// no-op for a launch without the attribute; WEFT_NO_PDL builds plain launches (for before/after
/// measurements).
__device__ __forceinline__ void awaitPriorGrids() {
#if !defined(WEFT_NO_PDL) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
}  // namespace weft::detail

namespace weft::gpu {
// No __launch_bounds__: it would cap the registers of every body (1024 threads: 64 registers),
// and the heavy kernels (solve_rigid_body) need more; a block too large for a kernel's registers
// is caught by checkLaunchFits instead. An entry whose kernel asks for a cap
// (detail::entryRegisterCap) is a second template, constrained to it, with __maxnreg__.
#define WEFT_DEFINE_KERNEL_ENTRY(name, kind)                                             \
  template <class Body, class K>                                                         \
  requires(::weft::detail::entryRegisterCap<Body, K>() == 0) __global__ void name(       \
      const K kernel, int count, int parameter) {                                        \
    ::weft::detail::awaitPriorGrids();                                                   \
    Body::template run<K>(kernel, count, parameter);                                     \
  }                                                                                      \
  template <class Body, class K>                                                         \
  requires(::weft::detail::entryRegisterCap<Body, K>() > 0) __global__ void __maxnreg__( \
      (::weft::detail::entryRegisterCap<Body, K>()))                                     \
      name(const K kernel, int count, int parameter) {                                   \
    ::weft::detail::awaitPriorGrids();                                                   \
    Body::template run<K>(kernel, count, parameter);                                     \
  }
WEFT_KERNELS(WEFT_DEFINE_KERNEL_ENTRY)
#undef WEFT_DEFINE_KERNEL_ENTRY
}  // namespace weft::gpu

namespace weft::detail {

/// KernelEntry<id>::get<Body, K>(): the entry point of kernel `id` for this body and functor.
template <KernelId id>
struct KernelEntry;
#define WEFT_DEFINE_KERNEL_ENTRY_TRAIT(name, kind) \
  template <>                                      \
  struct KernelEntry<KernelId::name> {             \
    template <class Body, class K>                 \
    static constexpr auto get() {                  \
      return &::weft::gpu::name<Body, K>;          \
    }                                              \
  };
WEFT_KERNELS(WEFT_DEFINE_KERNEL_ENTRY_TRAIT)
#undef WEFT_DEFINE_KERNEL_ENTRY_TRAIT

template <class Body, class K>
constexpr auto entryOf() {
  return KernelEntry<K::kId>::template get<Body, K>();
}

/// Shared memory a block may use without opting in to more (cudaFuncSetAttribute), as the
/// reference's kernels do: 48 KB on every GPU since Volta.
inline constexpr size_t kDefaultSharedBytesPerBlock = 48 * 1024;

/// The most threads a block of `function` can have (fewer than 1024 when it uses many registers).
template <class F>
int maxThreadsPerBlock(F* function) {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, function) != cudaSuccess) {
    cudaGetLastError();
    return 1024;
  }
  return attributes.maxThreadsPerBlock;
}

/// Throws CudaError when `block` threads (and `sharedBytes`) cannot launch `function`. Checked on
/// the host before launching, because inside a graph capture a launch that is too large is only
/// reported when the graph is instantiated, far from the cause.
template <auto Function>
void checkLaunchFits(KernelId id, int block, size_t sharedBytes) {
  static const int limit = maxThreadsPerBlock(Function);  // once per kernel instantiation
  if (block > limit)
    throw CudaError("kernel " + std::string(kernelName(id)) + ": a block of " +
                        std::to_string(block) + " threads exceeds its limit of " +
                        std::to_string(limit) + " (registers per thread)",
                    int(cudaErrorLaunchOutOfResources));
  if (sharedBytes > kDefaultSharedBytesPerBlock)
    throw CudaError("kernel " + std::string(kernelName(id)) + ": a block of " +
                        std::to_string(block) + " threads needs " + std::to_string(sharedBytes) +
                        " B of shared memory, more than the 48 KB limit",
                    int(cudaErrorInvalidValue));
}

/// The compiler's resource usage of a kernel instantiation.
template <class F>
KernelResources resourcesOf(F* function, int dynamicSharedBytes) {
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, function) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return {a.numRegs, int(a.localSizeBytes), int(a.sharedSizeBytes), dynamicSharedBytes,
          a.maxThreadsPerBlock};
}

/// Calls f(std::integral_constant<int, size>) for a size of `sizes` known at compile time;
/// throws for any other.
template <int... kSizes, class F>
void dispatchSize(int size, const char* what, F&& f) {
  const bool found =
      ((size == kSizes ? (f(std::integral_constant<int, kSizes>{}), true) : false) || ...);
  if (!found) {
    std::string valid;
    ((valid += (valid.empty() ? "" : ", ") + std::to_string(kSizes)), ...);
    throw Error(std::string(what) + " " + std::to_string(size) +
                " is not instantiated (valid: " + valid + ")");
  }
}

/// Launches `entry` with the programmatic-dependent-launch attribute (awaitPriorGrids); a failed
/// launch is left to Device::checkLaunch, like a failed <<<>>> launch.
template <class K, class Entry>
void launchEntry(Entry entry, int grid, int block, size_t sharedBytes, cudaStream_t stream,
                 const K& kernel, int count, int parameter) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(unsigned(block));
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
#ifndef WEFT_NO_PDL
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
#endif
  (void)cudaLaunchKernelEx(&config, entry, kernel, count, parameter);
}

// ---- Elementwise ------------------------------------------------------------------------------

template <class K>
KernelResources elementsKernelResources(const K&, int block) {
  if constexpr (requires { K::kSharedBytesPerThread; })
    return resourcesOf(entryOf<ElementsWithScratchBody, K>(), block * K::kSharedBytesPerThread);
  else
    return resourcesOf(entryOf<ElementsBody, K>(), 0);
}

template <class K>
int launchElementsOnCuda(void* stream, int count, int block, const K& kernel) {
  const int grid = (count + block - 1) / block;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if constexpr (requires { K::kSharedBytesPerThread; }) {
    constexpr auto entry = entryOf<ElementsWithScratchBody, K>();
    const size_t bytes = size_t(block) * K::kSharedBytesPerThread;
    checkLaunchFits<entry>(K::kId, block, bytes);
    launchEntry(entry, grid, block, bytes, s, kernel, count, 0);
  } else {
    constexpr auto entry = entryOf<ElementsBody, K>();
    checkLaunchFits<entry>(K::kId, block, 0);
    launchEntry(entry, grid, block, 0, s, kernel, count, 0);
  }
  return grid;
}

// ---- Tile -------------------------------------------------------------------------------------

/// Tiles per block and shared bytes per block of a tile launch: up to kTileBlockThreads / tile
/// tiles of at most 32 lanes, fewer when their slots would pass the 48 KB default limit (at
/// least one: a single tile that does not fit is reported by checkLaunchFits).
template <class K>
void tileLayout(const K& kernel, int count, int tile, int& slotsPerTile, int& tilesPerBlock,
                size_t& sharedBytes) {
  slotsPerTile = 1;
  while (slotsPerTile < kernel.maxParts()) slotsPerTile *= 2;
  // A tile of one lane keeps a partial sum per tree level (TilesBody<1>; those from
  // kOneLaneSharedLevelsOf<K> on in the kernel's global memory if it lends enough), others a slot
  // per part.
  const int levels = oneLaneSpillOf(kernel, slotsPerTile, count).words
                         ? kOneLaneSharedLevelsOf<K>
                         : oneLaneLevels(slotsPerTile);
  // Tiles of 2 to 32 lanes keep log2(slots / lanes) partial sums a lane (TilesBody), larger ones
  // a slot per part.
  const int laneLevels = oneLaneLevels(slotsPerTile > tile ? slotsPerTile / tile : 1);
  const size_t perTile = size_t(tile == 1    ? levels
                                : tile <= 32 ? tile * laneLevels
                                             : slotsPerTile) *
                         TreeWords<typename K::Part>::kWords * sizeof(unsigned);
  tilesPerBlock = tile <= 32 ? kTileBlockThreads / tile : 1;
  while (tilesPerBlock > 1 && size_t(tilesPerBlock) * perTile > kDefaultSharedBytesPerBlock)
    tilesPerBlock /= 2;
  if (tile == 1 && kFixesOneLaneTilesPerBlock<K>)
    tilesPerBlock = std::min(tilesPerBlock, kOneLaneTilesPerBlockOf<K>);
  sharedBytes = size_t(tilesPerBlock) * perTile;
}

/// Sizes the shared memory of the SMs that run `Function` for `blocks` blocks of `sharedBytes`
/// dynamic bytes each, and leaves the rest of the SM's 256 KB to L1: the preferred carveout, a
/// hint the driver rounds up to its next configuration (on the H200, 6 blocks of 20,736 B ask for
/// 56% and get 132 KB, Nsight Compute's launch__shared_mem_config_size). By default the driver
/// gives a launch as much shared memory as its registers let blocks in, which can leave L1 too
/// small for the loads those blocks wait on (docs/PERFORMANCE.md, "The motion since the step start
/// from the row's C0"). Set once per shared size and device, before the launch (graph captures
/// keep it); changes no bits.
template <auto Function>
void carveSharedFor(int blocks, size_t sharedBytes) {
  static size_t carvedBytes = ~size_t(0);
  static int carvedDevice = -1;
  int device = 0;
  WEFT_CUDA_CHECK(cudaGetDevice(&device));
  if (carvedBytes == sharedBytes && carvedDevice == device) return;
  int perSm = 0, reserved = 0;
  WEFT_CUDA_CHECK(
      cudaDeviceGetAttribute(&perSm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  WEFT_CUDA_CHECK(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  cudaFuncAttributes attributes{};
  WEFT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, Function));
  const size_t wanted = size_t(blocks) * (sharedBytes + attributes.sharedSizeBytes + reserved);
  const int percent =
      perSm > 0 ? int(std::min<size_t>(100, (100 * wanted + perSm - 1) / perSm)) : 100;
  WEFT_CUDA_CHECK(
      cudaFuncSetAttribute(Function, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
  carvedBytes = sharedBytes;
  carvedDevice = device;
}

template <class K>
KernelResources tilesKernelResources(const K& kernel, int count, int tile) {
  int slotsPerTile = 1, tilesPerBlock = 1;
  size_t sharedBytes = 0;
  tileLayout(kernel, count, tile, slotsPerTile, tilesPerBlock, sharedBytes);
  KernelResources r{};
  dispatchSize<1, 8, 16, 32, 64, 128, 256>(tile, "tile size", [&](auto t) {
    r = resourcesOf(entryOf<TilesBody<decltype(t)::value>, K>(), int(sharedBytes));
  });
  return r;
}

/// How many waves of the GPU (`smCount` SMs) a launch of `count` tiles of `tile` lanes takes: its
/// blocks over the blocks its SMs hold at once (the occupancy calculator, for this instantiation,
/// block and shared memory). 0 if the calculator cannot say.
template <class K>
int tileLaunchWaves(const K& kernel, int count, int tile, int smCount) {
  int slotsPerTile = 1, tilesPerBlock = 1;
  size_t sharedBytes = 0;
  tileLayout(kernel, count, tile, slotsPerTile, tilesPerBlock, sharedBytes);
  const long long grid = (count + tilesPerBlock - 1) / tilesPerBlock;
  int perSm = 0;
  dispatchSize<1, 8, 16, 32, 64, 128, 256>(tile, "tile size", [&](auto t) {
    constexpr auto entry = entryOf<TilesBody<decltype(t)::value>, K>();
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, entry, tile * tilesPerBlock,
                                                      sharedBytes) != cudaSuccess) {
      cudaGetLastError();
      perSm = 0;
    }
  });
  if (perSm <= 0 || smCount <= 0) return 0;
  if (tile == 1 && kCarvesOneLaneShared<K>) perSm = std::min(perSm, kOneLaneBlocksPerSmOf<K>);
  const long long wave = (long long)perSm * smCount;
  return int((grid + wave - 1) / wave);
}

/// Launches `count` tiles; returns the grid (blocks).
template <class K>
int launchTilesOnCuda(void* stream, int count, int tile, const K& kernel) {
  int slotsPerTile = 1, tilesPerBlock = 1;
  size_t sharedBytes = 0;
  tileLayout(kernel, count, tile, slotsPerTile, tilesPerBlock, sharedBytes);
  const int grid = (count + tilesPerBlock - 1) / tilesPerBlock;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  dispatchSize<1, 8, 16, 32, 64, 128, 256>(tile, "tile size", [&](auto t) {
    constexpr auto entry = entryOf<TilesBody<decltype(t)::value>, K>();
    checkLaunchFits<entry>(K::kId, tile * tilesPerBlock, sharedBytes);
    if constexpr (decltype(t)::value == 1 && kCarvesOneLaneShared<K>)
      carveSharedFor<entry>(kOneLaneBlocksPerSmOf<K>, sharedBytes);
    launchEntry(entry, grid, tile * tilesPerBlock, sharedBytes, s, kernel, count, slotsPerTile);
  });
  return grid;
}

// ---- Group ------------------------------------------------------------------------------------

template <class K>
constexpr size_t groupSharedBytes() {
  return size_t(kGroupBlockThreads) * K::kSharedIntsPerLane * sizeof(int);
}

template <class K>
KernelResources groupsKernelResources(const K&, int lanes) {
  KernelResources r{};
  dispatchSize<1, 2, 4, 8, 16, 32>(lanes, "lanes per item", [&](auto g) {
    r = resourcesOf(entryOf<GroupsBody<decltype(g)::value>, K>(), int(groupSharedBytes<K>()));
  });
  return r;
}

/// Launches `count` items with `lanes` lanes each; returns the grid (blocks).
template <class K>
int launchGroupsOnCuda(void* stream, int count, int lanes, const K& kernel) {
  const int itemsPerBlock = kGroupBlockThreads / lanes;
  const int grid = std::min((count + itemsPerBlock - 1) / itemsPerBlock, kMaxGroupBlocks);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  dispatchSize<1, 2, 4, 8, 16, 32>(lanes, "lanes per item", [&](auto g) {
    constexpr auto entry = entryOf<GroupsBody<decltype(g)::value>, K>();
    checkLaunchFits<entry>(K::kId, kGroupBlockThreads, groupSharedBytes<K>());
    launchEntry(entry, grid, kGroupBlockThreads, groupSharedBytes<K>(), s, kernel, count, 0);
  });
  return grid;
}

}  // namespace weft::detail
