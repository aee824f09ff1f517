// The tile tree of one item evaluated by one lane (launch.h, Tile shape): the one-lane tiles of
// launch_cuda.cuh (TilesBody<1>) and kernels that solve tile items inside a kernel of their own
// (kernels/avbd.cuh, SolveRigidWorldIterations) sum an item's parts with this one function, so
// both inline the same source (docs/DESIGN_NOTES.md, "FMA contraction in the tile kernels").
#pragma once

#include <cstring>
#include <type_traits>

#include "kernels/runtime/platform.h"

namespace weft {

/// How a tile's tree keeps a part between its additions (the one-lane levels in shared or global
/// memory, the lanes' shuffles, the block-wide slots): `kWords` words. By default the part's
/// bytes. A part that names `kTreeWords` (and `toTreeWords`, `fromTreeWords`) keeps only the words
/// its kernel's finish reads: BodyBlock keeps its lower triangles, 27 words of 33
/// (kernels/body_block.h). Every tile size and the per-world launch keep the same words, so the
/// dropped ones are dead after part() in each alike (the same arithmetic, the same bits), and the
/// tree stores, loads and shuffles fewer words.
template <class P>
struct TreeWords {
  static constexpr bool kPacked = requires { P::kTreeWords; };
  static constexpr int kWords = [] {
    if constexpr (kPacked)
      return int(P::kTreeWords);
    else
      return int(sizeof(P) / sizeof(unsigned));
  }();
  static_assert(std::is_trivially_copyable_v<P> && sizeof(P) % sizeof(unsigned) == 0);

  WEFT_HD WEFT_FORCEINLINE static void store(const P& p, unsigned (&words)[kWords]) {
    if constexpr (kPacked)
      p.toTreeWords(words);
    else
      memcpy(words, &p, sizeof(P));
  }
  WEFT_HD WEFT_FORCEINLINE static P load(const unsigned (&words)[kWords]) {
    if constexpr (kPacked) {
      return P::fromTreeWords(words);
    } else {
      P p;
      memcpy(&p, words, sizeof(P));
      return p;
    }
  }
};

/// The slot that step i of a walk of a tree of 2^depth leaves takes: i with its `depth` low bits
/// reversed.
WEFT_HD WEFT_FORCEINLINE int oneLaneSlot(int i, int depth) {
  int s = 0;
  for (int b = 0; b < depth; ++b) s |= ((i >> b) & 1) << (depth - 1 - b);
  return s;
}

/// The walk's depth for an item of 2^bits leaves: its own (the CPU, and any caller that walks
/// one item alone).
struct OwnTreeDepth {
  WEFT_HD int operator()(int bits) const { return bits; }
};

#ifdef __CUDACC__
/// The deepest tree of the warp's lanes that walk one here: every lane then takes the same slot
/// at the same step. Only the time depends on it, never a bit: lanes not converged with the
/// others at this point walk the deepest tree of their own set. (Before sm_80, which has no
/// warp-wide integer reduction, each lane walks its own.)
struct WarpTreeDepth {
  __device__ int operator()(int bits) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_max_sync(__activemask(), bits);
#else
    return bits;
#endif
  }
};
#endif

/// The sum of item `item`'s parts in the tile's tree order (Part{} for an item without parts).
/// The tree pairs slot s with s + stride for stride = width/2 … 1, which is the tree of adjacent
/// pairs over the slots in bit-reversed order; taking the leaves in that order, a binary counter
/// of partial sums (one per level) adds each pair as soon as both halves exist, so log2(width)
/// partial sums wait instead of width slots (the root is never stored). `storeLevel(level, part)`
/// and `loadLevel(level)` keep the partial sum of a level wherever the caller chose.
///
/// `depthOf(bits)` (≥ bits) is how deep a tree the walk steps through: 2^depth steps, of which
/// step i = k · 2^(depth − bits) takes the item's leaf k, and the others nothing. Step i's slot
/// reversed over `depth` bits is leaf k's slot reversed over `bits` (the low bits of i are zero),
/// so lanes of one warp that walk the warp's deepest tree (TilesBody<1> but for kernels that
/// name kOneLaneWalksOwnDepth, and the per-world launch's bodies) evaluate the same slot at the
/// same step, the same kind of part (the inertial block, a joint, a contact run), whatever their
/// own part counts; walked at their own depths, lanes of different widths would evaluate different
/// kinds at one step, one after another (docs/PERFORMANCE.md, "One slot per step across a warp").
/// The leaves, the pairs and the order of every addition are the item's own for every depth: the
/// same bits.
template <class K, class StoreLevel, class LoadLevel, class Depth = OwnTreeDepth>
WEFT_HD WEFT_FORCEINLINE typename K::Part sumPartsOneLane(const K& kernel, int item,
                                                          const StoreLevel& storeLevel,
                                                          const LoadLevel& loadLevel,
                                                          const Depth& depthOf = {}) {
  using Part = typename K::Part;
  const int parts = kernel.partCount(item);
  int bits = 0;
  while ((1 << bits) < parts) ++bits;
  const int depth = depthOf(bits), skip = depth - bits;
  Part sum{};
  for (int i = 0; i < (1 << depth); ++i) {
    if (i & ((1 << skip) - 1)) continue;  // not one of this item's leaves
    const int k = i >> skip;              // the leaf
    const int s = oneLaneSlot(i, depth);  // = oneLaneSlot(k, bits)
    sum = s < parts ? kernel.part(item, s) : Part{};
    int level = 0;
    for (; (k >> level) & 1; ++level) {
      Part left = loadLevel(level);
      left += sum;
      sum = left;
    }
    if (k + 1 < (1 << bits)) storeLevel(level, sum);  // the last sum is the root
  }
  return parts > 0 ? sum : Part{};
}

}  // namespace weft
