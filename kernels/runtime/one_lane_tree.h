// The tile tree of one item evaluated by one lane (launch.h, Tile shape): the one-lane tiles of
// launch_cuda.cuh (TilesBody<1>) and kernels that solve tile items inside a kernel of their own
// (kernels/avbd.cuh, SolveRigidWorldIterations) sum an item's parts with this one function, so
// both inline the same source (docs/DESIGN_NOTES.md, "FMA contraction in the tile kernels").
#pragma once

#include "kernels/runtime/platform.h"

namespace weft {

/// The sum of item `item`'s parts in the tile's tree order (Part{} for an item without parts).
/// The tree pairs slot s with s + stride for stride = width/2 … 1, which is the tree of adjacent
/// pairs over the slots in bit-reversed order; taking the leaves in that order, a binary counter
/// of partial sums (one per level) adds each pair as soon as both halves exist, so log2(width)
/// partial sums wait instead of width slots (the root is never stored). `storeLevel(level, part)`
/// and `loadLevel(level)` keep the partial sum of a level wherever the caller chose.
template <class K, class StoreLevel, class LoadLevel>
WEFT_HD WEFT_FORCEINLINE typename K::Part sumPartsOneLane(const K& kernel, int item,
                                                          const StoreLevel& storeLevel,
                                                          const LoadLevel& loadLevel) {
  using Part = typename K::Part;
  const int parts = kernel.partCount(item);
  int bits = 0;
  while ((1 << bits) < parts) ++bits;
  Part sum{};
  for (int i = 0; i < (1 << bits); ++i) {
    int s = 0;  // i with its `bits` low bits reversed
    for (int b = 0; b < bits; ++b) s |= ((i >> b) & 1) << (bits - 1 - b);
    sum = s < parts ? kernel.part(item, s) : Part{};
    int level = 0;
    for (; (i >> level) & 1; ++level) {
      Part left = loadLevel(level);
      left += sum;
      sum = left;
    }
    if (i + 1 < (1 << bits)) storeLevel(level, sum);  // the last sum is the root
  }
  return parts > 0 ? sum : Part{};
}

}  // namespace weft
