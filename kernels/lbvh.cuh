// LBVH (linear BVH, Karras 2012, "Maximizing Parallelism in the Construction of BVHs, Octrees,
// and k-d Trees"): the node layout, the per-element build and refit kernels, and the two
// traversals every detection kernel uses. collision/lbvh.h owns the buffers and runs the build.
//
// Layout (BvhView): N leaves, 2N−1 nodes. Internal nodes are 0..N−2 and node 0 is the root;
// leaf i (the i-th box in Morton order) is node N−1+i and holds primitive leafPrimitive[i]. With
// N = 1 the root is the single leaf. Every node has a box and an escape index: the next node in
// preorder (left child first) after its subtree, −1 after the last. Preorder meets the leaves in
// sorted order (leaf 0, 1, …, N−1), so query results come out in that order for both traversals.
//
// Build stages (one kernel each, in this order; the sort between them is CUB or std::sort):
//   lbvh_scene_bounds     reads leaf boxes; writes the bounds of their centres as order-preserving
//                         integer encodings, raised with atomic max (exact, so deterministic)
//   lbvh_morton_codes     reads leaf boxes and bounds; writes key = morton30(centre) << b | p,
//                         with b bits for any primitive id p: unique keys, a deterministic sort
//   lbvh_build_hierarchy  reads sorted keys; writes the leaf → primitive map, children and parents
//                         (Karras 2012, Fig. 4: range direction, range end, split by binary search)
//   lbvh_escape_indices   reads children and parents; writes each node's escape (walk up until the
//                         node is a left child: its sibling; the root's is −1)
//   lbvh_refit_leaves     reads leaf boxes and the leaf → primitive map; writes the leaf nodes'
//                         boxes and records and the union of every chunk of 32 consecutive
//                         sorted leaves
//   lbvh_refit_nodes      reads each internal node's leaf range [first, last], the chunk and leaf
//                         boxes; writes the node's box, the union of the range, and its record
//                         (no bottom-up chain: every node independent)
// Worlds (a forest in one tree): when the primitives belong to worlds (contiguous ranges of
// primitive ids, Lbvh's worldBegin), each world's centres are normalized in its own bounds and the
// key is world << (30 + b) | morton30 << b | (p − the world's first primitive): the world is the
// key's top, so world w's sorted leaves are contiguous and the nodes over them form a subtree of
// exactly the shape its primitives alone would give (the same keys below the world bits), whose
// root the hierarchy kernel records (BvhView::worldRoot). A query started there visits only its
// world, in the order of the world's own tree.
// Node records (BvhView::nodeBoxes, written by the refit beside nodeLowers/nodeUppers): node n's
// box and links in two 16-byte halves, [2n] = (lower corner, left child or, for a leaf, its
// primitive) and [2n + 1] = (upper corner, right child or −1), so the cooperative traversal tests
// both children of a popped node with four vector loads of two records and already holds their
// children for the next round (bvhQueryGroupFrom): one dependent global load per level instead of
// two (the children, then their four scattered corners).
// Every box operation is a comparison (selectMin/selectMax), never arithmetic, so boxes are exact
// and bit-identical on both backends. Centres are taken as lower+upper (the ½ cancels in the
// normalization), which leaves no a·b+c that nvcc could contract into an FMA on one backend only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/math.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

#if !WEFT_DEVICE_PASS
#include <bit>
#endif

namespace weft {

// ---- Exact box helpers ------------------------------------------------------------------------

/// a < b ? a : b per component. Unlike fminf, the result for −0/+0 depends only on the argument
/// order, so it is the same on every backend.
WEFT_HD inline Vec3 selectMin(const Vec3& a, const Vec3& b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.z < b.z ? a.z : b.z};
}
WEFT_HD inline Vec3 selectMax(const Vec3& a, const Vec3& b) {
  return {a.x > b.x ? a.x : b.x, a.y > b.y ? a.y : b.y, a.z > b.z ? a.z : b.z};
}
/// Closed boxes [lowerA, upperA] and [lowerB, upperB] share a point.
WEFT_HD inline bool boxesOverlap(const Vec3& lowerA, const Vec3& upperA, const Vec3& lowerB,
                                 const Vec3& upperB) {
  return lowerA.x <= upperB.x && lowerB.x <= upperA.x && lowerA.y <= upperB.y &&
         lowerB.y <= upperA.y && lowerA.z <= upperB.z && lowerB.z <= upperA.z;
}

// ---- Bit tricks the build needs (same results on both backends; atomics: runtime/atomics.h) ----

namespace lbvh_detail {

WEFT_HD inline unsigned floatBits(float f) {
#if WEFT_DEVICE_PASS
  return __float_as_uint(f);
#else
  return std::bit_cast<unsigned>(f);
#endif
}
WEFT_HD inline float bitsFloat(unsigned u) {
#if WEFT_DEVICE_PASS
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}
/// Monotone map float → unsigned (a < b ⇒ code(a) < code(b), −0 below +0). 0 is below every
/// float's code, so a zeroed buffer is the identity of max.
WEFT_HD inline unsigned orderedCode(float f) {
  const unsigned b = floatBits(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
WEFT_HD inline float fromOrderedCode(unsigned u) {
  return bitsFloat((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}
WEFT_HD inline int countLeadingZeros(std::uint64_t x) {
#if WEFT_DEVICE_PASS
  return __clzll(static_cast<long long>(x));
#else
  return std::countl_zero(x);
#endif
}
WEFT_HD inline int popCount(unsigned x) {
#if WEFT_DEVICE_PASS
  return __popc(x);
#else
  return std::popcount(x);
#endif
}
/// Index of the lowest set bit (x != 0).
WEFT_HD inline int lowestBit(unsigned x) {
#if WEFT_DEVICE_PASS
  return __ffs(int(x)) - 1;
#else
  return std::countr_zero(x);
#endif
}
/// Spreads the low 10 bits of v to every third bit (bit k → bit 3k).
WEFT_HD inline unsigned spreadBits3(unsigned v) {
  v = (v * 0x00010001u) & 0xFF0000FFu;
  v = (v * 0x00000101u) & 0x0F00F00Fu;
  v = (v * 0x00000011u) & 0xC30C30C3u;
  v = (v * 0x00000005u) & 0x49249249u;
  return v;
}
/// Cell 0..1023 of u ∈ [0, 1024] (NaN → 0).
WEFT_HD inline unsigned mortonCell(float u) {
  return u >= 1023.0f ? 1023u : (u > 0.0f ? unsigned(u) : 0u);
}

}  // namespace lbvh_detail

// ---- Layout and traversal ----------------------------------------------------------------------

/// Half of a node record (file comment, "Node records"): a box corner and a link, 16 bytes.
struct alignas(16) BvhNodeHalf {
  Vec3 corner;
  int link;
};

/// What traversal kernels take: plain views of a built Lbvh (collision/lbvh.h). See the file
/// comment for the layout.
struct BvhView {
  int numLeaves = 0;
  const Vec3* __restrict__ nodeLowers = nullptr;    // (2·numLeaves − 1) box lower corners
  const Vec3* __restrict__ nodeUppers = nullptr;    // (2·numLeaves − 1) box upper corners
  const int* __restrict__ nodeLeft = nullptr;       // (numLeaves − 1) left child node
  const int* __restrict__ nodeRight = nullptr;      // (numLeaves − 1) right child node
  const int* __restrict__ nodeEscape = nullptr;     // (2·numLeaves − 1) next node after subtree
  const int* __restrict__ leafPrimitive = nullptr;  // (numLeaves) primitive of sorted leaf i
  const int* __restrict__ worldRoot = nullptr;      // (worlds) root node of world w's subtree,
                                                    // −1 for a world without primitives; null:
                                                    // one world, rooted at node 0
  const BvhNodeHalf* __restrict__ nodeBoxes = nullptr;  // (2 · (2·numLeaves − 1)) node records
  WEFT_HD bool isLeaf(int node) const { return node >= numLeaves - 1; }
  /// Where a query of world `world` starts (node 0 without worlds).
  WEFT_HD int rootOf(int world) const { return worldRoot ? worldRoot[world] : 0; }
  /// Half h (0: lower corner and left child or primitive, 1: upper corner and right child) of
  /// node's record: one 16-byte load on CUDA.
  WEFT_HD BvhNodeHalf nodeHalf(int node, int h) const {
#if WEFT_DEVICE_PASS
    const float4 v = __ldg(reinterpret_cast<const float4*>(nodeBoxes) + (2 * node + h));
    return {{v.x, v.y, v.z}, __float_as_int(v.w)};
#else
    return nodeBoxes[2 * node + h];
#endif
  }
};

namespace lbvh_detail {
/// Calls visit(primitive); false if a bool-returning visitor asked to stop.
template <class Visit>
WEFT_HD bool visitLeaf(Visit& visit, int primitive) {
  if constexpr (std::is_same_v<std::invoke_result_t<Visit&, int>, bool>) {
    return visit(primitive);
  } else {
    visit(primitive);
    return true;
  }
}
}  // namespace lbvh_detail

/// Calls visit(primitive) for every leaf whose box overlaps the closed box [lower, upper], in
/// preorder, left child first. Needs no memory: a rejected node or a leaf continues at its escape
/// index, an accepted internal node at its left child. If visit returns bool, false stops.
/// From `root` (BvhView::rootOf), the leaves of its subtree only.
template <class Visit>
WEFT_HD void bvhQueryStacklessFrom(const BvhView& bvh, int root, const Vec3& lower,
                                   const Vec3& upper, Visit&& visit) {
  if (bvh.numLeaves <= 0 || root < 0) return;
  int node = root;
  const int stop = bvh.nodeEscape[root];  // −1 for node 0
  while (node != stop) {
    if (boxesOverlap(bvh.nodeLowers[node], bvh.nodeUppers[node], lower, upper)) {
      if (!bvh.isLeaf(node)) {
        node = bvh.nodeLeft[node];
        continue;
      }
      if (!lbvh_detail::visitLeaf(visit, bvh.leafPrimitive[node - (bvh.numLeaves - 1)])) return;
    }
    node = bvh.nodeEscape[node];
  }
}
template <class Visit>
WEFT_HD void bvhQueryStackless(const BvhView& bvh, const Vec3& lower, const Vec3& upper,
                               Visit&& visit) {
  bvhQueryStacklessFrom(bvh, 0, lower, upper, visit);
}

/// The same visits in the same order, with a short stack of `stackCapacity` ints at `stack` (the
/// caller's memory, e.g. 33 ints of shared memory as the reference). The stack caches escape
/// indices: descending into a left child pushes the right child, which is exactly the left
/// child's escape, so the top of the stack is always the current node's escape. A full stack
/// overwrites its oldest entry (a ring buffer); an empty one reads nodeEscape instead. Either way
/// the next node is the true escape, so the query is complete for any capacity (0 = stackless).
/// From `root` (BvhView::rootOf), the leaves of its subtree only.
template <class Visit>
WEFT_HD void bvhQueryShortStackFrom(const BvhView& bvh, int root, const Vec3& lower,
                                    const Vec3& upper, int* stack, int stackCapacity,
                                    Visit&& visit) {
  if (bvh.numLeaves <= 0 || root < 0) return;
  int top = 0;    // ring-buffer slot of the next push
  int count = 0;  // valid entries, at most stackCapacity
  int node = root;
  const int stop = bvh.nodeEscape[root];  // −1 for node 0
  while (node != stop) {
    if (boxesOverlap(bvh.nodeLowers[node], bvh.nodeUppers[node], lower, upper)) {
      if (!bvh.isLeaf(node)) {
        if (stackCapacity > 0) {
          stack[top] = bvh.nodeRight[node];
          top = top + 1 == stackCapacity ? 0 : top + 1;
          count = count < stackCapacity ? count + 1 : count;
        }
        node = bvh.nodeLeft[node];
        continue;
      }
      if (!lbvh_detail::visitLeaf(visit, bvh.leafPrimitive[node - (bvh.numLeaves - 1)])) return;
    }
    if (count > 0) {
      top = top == 0 ? stackCapacity - 1 : top - 1;
      --count;
      node = stack[top];
    } else {
      node = bvh.nodeEscape[node];
    }
  }
}
template <class Visit>
WEFT_HD void bvhQueryShortStack(const BvhView& bvh, const Vec3& lower, const Vec3& upper,
                                int* stack, int stackCapacity, Visit&& visit) {
  bvhQueryShortStackFrom(bvh, 0, lower, upper, stack, stackCapacity, visit);
}

/// The leaves of node's subtree that overlap [lower, upper], walked by one lane along the escape
/// indices (the subtree ends where its escape index leads); accept(primitive) says whether a leaf
/// counts. Accepted sorted-leaf indices go to hits[first + k] while first + k < capacity.
/// Returns how many were accepted.
template <class Accept>
WEFT_HD int bvhWalkSubtree(const BvhView& bvh, int node, const Vec3& lower, const Vec3& upper,
                           int* hits, int first, int capacity, Accept& accept) {
  const int firstLeaf = bvh.numLeaves - 1;
  const int stop = bvh.nodeEscape[node];
  int found = 0;
  while (node != stop) {
    if (boxesOverlap(bvh.nodeLowers[node], bvh.nodeUppers[node], lower, upper)) {
      if (node < firstLeaf) {
        node = bvh.nodeLeft[node];
        continue;
      }
      if (accept(bvh.leafPrimitive[node - firstLeaf])) {
        if (first + found < capacity) hits[first + found] = node - firstLeaf;
        ++found;
      }
    }
    node = bvh.nodeEscape[node];
  }
  return found;
}

/// Stack entries per lane of a cooperative traversal (bvhQueryGroup's group-shared stack): 32 ints
/// = 128 B of shared memory per lane, about the reference's 132 B per thread.
inline constexpr int kCooperativeStackIntsPerLane = 32;

/// A query walked by a group of lanes (launch.h, Group shape): the group keeps a stack, in its
/// shared memory (g.shared(), g.sharedInts() / 2 entries), of internal nodes whose boxes overlap
/// the query, each entry the node's two children (from its record, file comment "Node records").
/// Each round its lanes pop up to one entry each from the top and load both children's records
/// (four independent 16-byte loads per lane, which need nothing but the entry); overlapping leaves
/// are accepted or not by accept(primitive) in parallel, overlapping internal children are pushed
/// with the children their records hold (ballots + prefix counts: no atomics). A non-overlapping
/// node is never pushed, so a round is one level of useful work for every busy lane. If a round's
/// pushes would not fit on the stack, each lane that holds such children walks those subtrees
/// alone along the escape indices (bvhWalkSubtree), one lane after another, so the query is
/// complete for any stack size (a stack without room for one entry walks the root's subtree so).
/// Accepted leaves (sorted-leaf indices) go to hits[0, capacity) in the order found, which
/// depends on the group size; bvhWriteSortedPrimitives turns them into the canonical order.
/// Returns the number of accepted leaves (which may exceed capacity). Uniform over the group.
/// From `root` (BvhView::rootOf), the leaves of its subtree only.
template <class Group, class Accept>
WEFT_HD int bvhQueryGroupFrom(const Group& g, const BvhView& bvh, int root, const Vec3& lower,
                              const Vec3& upper, int* hits, int capacity, Accept&& accept) {
  using lbvh_detail::popCount;
  if (bvh.numLeaves <= 0 || root < 0) return 0;
  const int firstLeaf = bvh.numLeaves - 1;
  const int rank = g.rank();
  const unsigned below = (1u << rank) - 1u;  // ranks under this lane
  int count = 0;                             // accepted leaves so far (uniform)
  // Records this round's accepted leaves: `leaf` where `take` (one ballot per call).
  auto record = [&](bool take, int node) {
    const unsigned bits = g.ballot(take);
    if (take && count + popCount(bits & below) < capacity)
      hits[count + popCount(bits & below)] = node - firstLeaf;
    count += popCount(bits);
  };
  const BvhNodeHalf rootLower = bvh.nodeHalf(root, 0), rootUpper = bvh.nodeHalf(root, 1);
  const bool rootOverlaps = boxesOverlap(rootLower.corner, rootUpper.corner, lower, upper);
  if (root >= firstLeaf) {  // a single leaf
    record(rank == 0 && rootOverlaps && accept(rootLower.link), root);
    return count;
  }
  if (!rootOverlaps) return 0;
  int* stack = g.shared();  // entry k: the children of a node, at 2k and 2k + 1
  const int stackCapacity = g.sharedInts() / 2;
  if (stackCapacity < 1) {  // no room for the root's entry
    const int found =
        rank == 0 ? bvhWalkSubtree(bvh, root, lower, upper, hits, 0, capacity, accept) : 0;
    return g.shuffle(found, 0);
  }
  if (rank == 0) {
    stack[0] = rootLower.link;
    stack[1] = rootUpper.link;
  }
  g.sync();
  int size = 1;  // stack entries (uniform)
  while (size > 0) {
    const int lanes = g.size();
    const int n = size < lanes ? size : lanes;
    int left = -1, right = -1;
    if (rank < n) {
      left = stack[2 * (size - 1 - rank)];
      right = stack[2 * (size - 1 - rank) + 1];
    }
    size -= n;
    g.sync();  // every pop is read before this round's pushes overwrite those entries
    BvhNodeHalf leftLower{}, leftUpper{}, rightLower{}, rightUpper{};
    bool leftOverlaps = false, rightOverlaps = false;
    if (left >= 0) {
      leftLower = bvh.nodeHalf(left, 0);
      leftUpper = bvh.nodeHalf(left, 1);
      rightLower = bvh.nodeHalf(right, 0);
      rightUpper = bvh.nodeHalf(right, 1);
      leftOverlaps = boxesOverlap(leftLower.corner, leftUpper.corner, lower, upper);
      rightOverlaps = boxesOverlap(rightLower.corner, rightUpper.corner, lower, upper);
    }
    record(leftOverlaps && left >= firstLeaf && accept(leftLower.link), left);
    record(rightOverlaps && right >= firstLeaf && accept(rightLower.link), right);
    const bool pushLeft = leftOverlaps && left < firstLeaf;
    const bool pushRight = rightOverlaps && right < firstLeaf;
    const unsigned leftBits = g.ballot(pushLeft), rightBits = g.ballot(pushRight);
    const int pushes = popCount(leftBits) + popCount(rightBits);
    if (size + pushes <= stackCapacity) {
      int at = size + popCount(leftBits & below) + popCount(rightBits & below);
      if (pushRight) {
        stack[2 * at] = rightLower.link;
        stack[2 * at + 1] = rightUpper.link;
        ++at;
      }
      if (pushLeft) {
        stack[2 * at] = leftLower.link;
        stack[2 * at + 1] = leftUpper.link;
      }
      size += pushes;
    } else {
      for (unsigned bits = leftBits | rightBits; bits != 0; bits &= bits - 1) {
        const int owner = lbvh_detail::lowestBit(bits);
        int found = 0;
        if (rank == owner) {
          if (pushLeft)
            found += bvhWalkSubtree(bvh, left, lower, upper, hits, count, capacity, accept);
          if (pushRight)
            found +=
                bvhWalkSubtree(bvh, right, lower, upper, hits, count + found, capacity, accept);
        }
        count += g.shuffle(found, owner);
      }
    }
    g.sync();  // pushes are visible before the next round's pops
  }
  return count;
}
template <class Group, class Accept>
WEFT_HD int bvhQueryGroup(const Group& g, const BvhView& bvh, const Vec3& lower, const Vec3& upper,
                          int* hits, int capacity, Accept&& accept) {
  return bvhQueryGroupFrom(g, bvh, 0, lower, upper, hits, capacity, accept);
}

namespace lbvh_detail {

/// Writes the primitives of the first min(count, capacity) hits of bvhQueryGroup to out in
/// increasing key(hit) order. Each lane ranks its hits by counting the smaller keys (hits are
/// distinct leaves and the keys distinct, so ranks are distinct).
template <class Group, class Key>
WEFT_HD void writeRankedPrimitives(const Group& g, const BvhView& bvh, const int* hits, int count,
                                   int capacity, int* out, Key&& key) {
  const int n = count < capacity ? count : capacity;
  g.sync();  // every lane's hits are written
  for (int k = g.rank(); k < n; k += g.size()) {
    const int mine = key(hits[k]);
    int rank = 0;
    for (int m = 0; m < n; ++m) rank += key(hits[m]) < mine ? 1 : 0;
    out[rank] = bvh.leafPrimitive[hits[k]];
  }
}

}  // namespace lbvh_detail

/// Writes the primitives of the first min(count, capacity) hits of bvhQueryGroup to out in
/// increasing sorted-leaf order, i.e. BVH preorder: the order of the one-thread traversals above,
/// whatever the group size.
template <class Group>
WEFT_HD void bvhWriteSortedPrimitives(const Group& g, const BvhView& bvh, const int* hits,
                                      int count, int capacity, int* out) {
  lbvh_detail::writeRankedPrimitives(g, bvh, hits, count, capacity, out,
                                     [](int leaf) { return leaf; });
}

/// The same in increasing primitive id: an order that depends only on which primitives were
/// accepted, not on the tree, so lists from a rebuilt and a refit tree (or from a walk without a
/// tree) are the same.
template <class Group>
WEFT_HD void bvhWritePrimitivesAscending(const Group& g, const BvhView& bvh, const int* hits,
                                         int count, int capacity, int* out) {
  lbvh_detail::writeRankedPrimitives(g, bvh, hits, count, capacity, out,
                                     [&](int leaf) { return bvh.leafPrimitive[leaf]; });
}

// ---- Build and refit kernels -------------------------------------------------------------------

/// Leaves each lbvh_scene_bounds item reduces before its atomics (fewer atomics on 6 addresses).
inline constexpr int kLbvhLeavesPerBoundsItem = 16;

/// Bounds of the leaf centres (as lower+upper). Item k reduces leaves k, k + numItems, … and
/// raises bounds[0..2] = code(−min), bounds[3..5] = code(max), which must start zeroed. With
/// worlds, each world's own bounds (bounds[6w …]): item k reduces the consecutive leaves
/// [k·kLbvhLeavesPerBoundsItem, …) and raises each world's at the end of its run.
struct LbvhSceneBounds {
  static constexpr KernelId kId = KernelId::lbvh_scene_bounds;

  int numLeaves;
  int numItems;                         // launch size: ceil(numLeaves / kLbvhLeavesPerBoundsItem)
  const Vec3* __restrict__ leafLowers;  // (numLeaves) in primitive order
  const Vec3* __restrict__ leafUppers;  // (numLeaves)
  unsigned* __restrict__ bounds;        // (6 · worlds) in/out: ordered codes of −min and max
  const int* __restrict__ primitiveWorld = nullptr;  // (numLeaves) or null: one world

  WEFT_HD void raise(int world, const Vec3& lo, const Vec3& hi) const {
    for (int a = 0; a < 3; ++a) {
      atomicMaxUnsigned(&bounds[6 * world + a], lbvh_detail::orderedCode(-lo[a]));
      atomicMaxUnsigned(&bounds[6 * world + 3 + a], lbvh_detail::orderedCode(hi[a]));
    }
  }

  WEFT_HD void operator()(int item) const {
    if (primitiveWorld) {
      const int begin = item * kLbvhLeavesPerBoundsItem;
      const int end = begin + kLbvhLeavesPerBoundsItem < numLeaves
                          ? begin + kLbvhLeavesPerBoundsItem
                          : numLeaves;
      int world = primitiveWorld[begin];
      Vec3 lo = leafLowers[begin] + leafUppers[begin], hi = lo;
      for (int p = begin + 1; p < end; ++p) {
        const Vec3 c = leafLowers[p] + leafUppers[p];
        if (primitiveWorld[p] != world) {
          raise(world, lo, hi);
          world = primitiveWorld[p];
          lo = hi = c;
          continue;
        }
        lo = selectMin(lo, c);
        hi = selectMax(hi, c);
      }
      raise(world, lo, hi);
      return;
    }
    Vec3 lo = leafLowers[item] + leafUppers[item];
    Vec3 hi = lo;
    for (int p = item + numItems; p < numLeaves; p += numItems) {
      const Vec3 c = leafLowers[p] + leafUppers[p];
      lo = selectMin(lo, c);
      hi = selectMax(hi, c);
    }
    for (int a = 0; a < 3; ++a) {
      atomicMaxUnsigned(&bounds[a], lbvh_detail::orderedCode(-lo[a]));
      atomicMaxUnsigned(&bounds[3 + a], lbvh_detail::orderedCode(hi[a]));
    }
  }
};

/// key[p] = (30-bit Morton code of the centre in the scene bounds) << primitiveBits | p; with
/// worlds, world << (30 + primitiveBits) | (the code in the world's bounds) << primitiveBits |
/// (p − the world's first primitive).
struct LbvhMortonCodes {
  static constexpr KernelId kId = KernelId::lbvh_morton_codes;

  int primitiveBits;                    // bits below the Morton code (hold any primitive id of a
                                        // world)
  const Vec3* __restrict__ leafLowers;  // (numLeaves)
  const Vec3* __restrict__ leafUppers;  // (numLeaves)
  const unsigned* __restrict__ bounds;  // (6 · worlds) from lbvh_scene_bounds
  std::uint64_t* __restrict__ keys;     // (numLeaves) out
  const int* __restrict__ primitiveWorld = nullptr;  // (numLeaves) or null: one world
  const int* __restrict__ worldBegin = nullptr;      // (worlds + 1) first primitive of each world

  WEFT_HD void operator()(int p) const {
    using namespace lbvh_detail;
    const int world = primitiveWorld ? primitiveWorld[p] : 0;
    const unsigned* b = bounds + 6 * world;
    const Vec3 c = leafLowers[p] + leafUppers[p];
    unsigned code = 0;
    for (int a = 0; a < 3; ++a) {
      const float lo = -fromOrderedCode(b[a]);
      const float extent = fromOrderedCode(b[3 + a]) - lo;
      const float scale = extent > 0.0f ? 1024.0f / extent : 0.0f;
      code |= spreadBits3(mortonCell((c[a] - lo) * scale)) << (2 - a);
    }
    const int local = primitiveWorld ? p - worldBegin[world] : p;
    keys[p] = (std::uint64_t(world) << (30 + primitiveBits)) |
              (std::uint64_t(code) << primitiveBits) | std::uint64_t(local);
  }
};

/// Karras 2012, Fig. 4. Item i < N−1 builds internal node i from the sorted unique keys: the
/// direction d of its key range, the range's other end j (exponential then binary search on the
/// common-prefix length δ), and the split γ (binary search); its children are γ and γ+1 (leaves
/// when the range is one key wide on that side). Every item i < N writes leafPrimitive[i]; item 0
/// writes the root's parent (−1). The range's other end j is kept for the refit (node i's subtree
/// holds exactly the sorted leaves between i and j).
struct LbvhBuildHierarchy {
  static constexpr KernelId kId = KernelId::lbvh_build_hierarchy;

  int numLeaves;
  std::uint64_t primitiveMask;                   // (1 << primitiveBits) − 1
  const std::uint64_t* __restrict__ sortedKeys;  // (numLeaves)
  int* __restrict__ leafPrimitive;               // (numLeaves) out
  int* __restrict__ nodeLeft;                    // (numLeaves − 1) out
  int* __restrict__ nodeRight;                   // (numLeaves − 1) out
  int* __restrict__ nodeParent;                  // (2·numLeaves − 1) out, root −1
  int* __restrict__ nodeRangeEnd;                // (numLeaves − 1) out: j
  // Worlds (null: one world): the key bits below the world, each world's first primitive, and
  // out, each world's root: the internal node whose range is exactly the world's leaves, or the
  // leaf of a world of one primitive.
  int worldShift = 0;                            // 30 + primitiveBits
  const int* __restrict__ worldBegin = nullptr;  // (worlds + 1)
  int* __restrict__ worldRoot = nullptr;         // (worlds) out

  /// δ(i, j): common prefix length of keys i and j, −1 outside [0, N).
  WEFT_HD int prefix(int i, int j) const {
    if (j < 0 || j >= numLeaves) return -1;
    return lbvh_detail::countLeadingZeros(sortedKeys[i] ^ sortedKeys[j]);
  }
  WEFT_HD int worldOf(int leaf) const { return int(sortedKeys[leaf] >> worldShift); }
  /// Whether sorted leaves [first, last] are all of their world's.
  WEFT_HD bool wholeWorld(int first, int last) const {
    const int w = worldOf(first);
    return worldOf(last) == w && (first == 0 || worldOf(first - 1) != w) &&
           (last == numLeaves - 1 || worldOf(last + 1) != w);
  }

  WEFT_HD void operator()(int i) const {
    if (worldBegin) {
      leafPrimitive[i] = worldBegin[worldOf(i)] + int(sortedKeys[i] & primitiveMask);
      if (wholeWorld(i, i)) worldRoot[worldOf(i)] = numLeaves - 1 + i;
    } else {
      leafPrimitive[i] = int(sortedKeys[i] & primitiveMask);
    }
    if (i == 0) nodeParent[0] = -1;
    if (i >= numLeaves - 1) return;

    const int d = prefix(i, i + 1) > prefix(i, i - 1) ? 1 : -1;
    const int minPrefix = prefix(i, i - d);
    int maxLength = 2;
    while (prefix(i, i + maxLength * d) > minPrefix) maxLength *= 2;
    int length = 0;
    for (int step = maxLength / 2; step >= 1; step /= 2)
      if (prefix(i, i + (length + step) * d) > minPrefix) length += step;
    const int j = i + length * d;
    nodeRangeEnd[i] = j;
    if (worldBegin && wholeWorld(i < j ? i : j, i < j ? j : i)) worldRoot[worldOf(i)] = i;

    const int nodePrefix = prefix(i, j);
    int split = 0;
    int step = length;
    do {
      step = (step + 1) / 2;
      if (prefix(i, i + (split + step) * d) > nodePrefix) split += step;
    } while (step > 1);
    const int gamma = i + split * d + (d < 0 ? -1 : 0);

    const int firstLeaf = numLeaves - 1;
    const int left = (i < j ? i : j) == gamma ? firstLeaf + gamma : gamma;
    const int right = (i > j ? i : j) == gamma + 1 ? firstLeaf + gamma + 1 : gamma + 1;
    nodeLeft[i] = left;
    nodeRight[i] = right;
    nodeParent[left] = i;
    nodeParent[right] = i;
  }
};

/// escape[n] = the right sibling of n's lowest ancestor-or-self that is a left child; −1 if none.
struct LbvhEscapeIndices {
  static constexpr KernelId kId = KernelId::lbvh_escape_indices;

  const int* __restrict__ nodeLeft;    // (numLeaves − 1)
  const int* __restrict__ nodeRight;   // (numLeaves − 1)
  const int* __restrict__ nodeParent;  // (2·numLeaves − 1)
  int* __restrict__ nodeEscape;        // (2·numLeaves − 1) out

  WEFT_HD void operator()(int node) const {
    int child = node;
    for (int parent = nodeParent[child]; parent >= 0; parent = nodeParent[parent]) {
      if (nodeLeft[parent] == child) {
        nodeEscape[node] = nodeRight[parent];
        return;
      }
      child = parent;
    }
    nodeEscape[node] = -1;
  }
};

/// Sorted leaves per refit chunk: lbvh_refit_leaves reduces each run of kLbvhRefitChunk
/// consecutive leaves to one box, so that lbvh_refit_nodes reads at most 2·(chunk − 1) leaf boxes
/// and ⌈range / chunk⌉ chunk boxes for any node.
inline constexpr int kLbvhRefitChunk = 32;

namespace lbvh_detail {

/// +0 for ±0: the union of a set holding both is then the same bits whatever order formed it.
WEFT_HD inline Vec3 canonicalZeros(const Vec3& a) {
  return {a.x == 0.0f ? 0.0f : a.x, a.y == 0.0f ? 0.0f : a.y, a.z == 0.0f ? 0.0f : a.z};
}

/// Every lane of the group ends with the union of all lanes' boxes (a butterfly of shuffles;
/// a lane that saw nothing holds the empty box +∞ / −∞, which selectMin/selectMax ignore), with
/// zeros made +0: the exact set union, bit-identical for every group size.
template <class Group>
WEFT_HD void groupBoxUnion(const Group& g, Vec3& lower, Vec3& upper) {
  for (int offset = 1; offset < g.size(); offset *= 2) {
    const int other = g.rank() ^ offset;
    const Vec3 l{g.shuffle(lower.x, other), g.shuffle(lower.y, other), g.shuffle(lower.z, other)};
    const Vec3 u{g.shuffle(upper.x, other), g.shuffle(upper.y, other), g.shuffle(upper.z, other)};
    lower = selectMin(lower, l);
    upper = selectMax(upper, u);
  }
  lower = canonicalZeros(lower);
  upper = canonicalZeros(upper);
}

WEFT_HD inline Vec3 emptyLower() {
  return {INFINITY, INFINITY, INFINITY};
}
WEFT_HD inline Vec3 emptyUpper() {
  return {-INFINITY, -INFINITY, -INFINITY};
}

}  // namespace lbvh_detail

/// Refit, stage 1 (a group per chunk of kLbvhRefitChunk sorted leaves): copies each leaf's box
/// into its node and writes the chunk's union. The lanes take leaves rank, rank + G, … (at the
/// default G = 32, one leaf per lane: consecutive leaf nodes, coalesced writes).
struct LbvhRefitLeaves {
  static constexpr KernelId kId = KernelId::lbvh_refit_leaves;
  static constexpr int kSharedIntsPerLane = 0;

  int numLeaves;
  const Vec3* __restrict__ leafLowers;    // (numLeaves) in primitive order
  const Vec3* __restrict__ leafUppers;    // (numLeaves)
  const int* __restrict__ leafPrimitive;  // (numLeaves)
  Vec3* __restrict__ nodeLowers;          // (2·numLeaves − 1) out: the leaf nodes
  Vec3* __restrict__ nodeUppers;          // (2·numLeaves − 1)
  Vec3* __restrict__ chunkLowers;         // (⌈numLeaves / kLbvhRefitChunk⌉) out
  Vec3* __restrict__ chunkUppers;
  BvhNodeHalf* __restrict__ nodeBoxes;  // (2 · (2·numLeaves − 1)) out: the leaf nodes' records
  const int* __restrict__ onlyIf = nullptr;  // (1) when given, the refit runs only if it is ≠ 0

  template <class Group>
  WEFT_HD void operator()(const Group& g, int chunk) const {
    if (onlyIf && *onlyIf == 0) return;  // uniform over the launch
    const int begin = chunk * kLbvhRefitChunk;
    const int end = begin + kLbvhRefitChunk < numLeaves ? begin + kLbvhRefitChunk : numLeaves;
    Vec3 lower = lbvh_detail::emptyLower(), upper = lbvh_detail::emptyUpper();
    for (int leaf = begin + g.rank(); leaf < end; leaf += g.size()) {
      const int primitive = leafPrimitive[leaf];
      const Vec3 lo = leafLowers[primitive], hi = leafUppers[primitive];
      nodeLowers[numLeaves - 1 + leaf] = lo;
      nodeUppers[numLeaves - 1 + leaf] = hi;
      nodeBoxes[2 * (numLeaves - 1 + leaf)] = {lo, primitive};
      nodeBoxes[2 * (numLeaves - 1 + leaf) + 1] = {hi, -1};
      lower = selectMin(lower, lo);
      upper = selectMax(upper, hi);
    }
    lbvh_detail::groupBoxUnion(g, lower, upper);
    if (g.rank() == 0) {
      chunkLowers[chunk] = lower;
      chunkUppers[chunk] = upper;
    }
  }
};

/// Refit, stage 2 (a group per internal node): a node's subtree holds the sorted leaves
/// [first, last] (Karras: node i's key range, one end of which is i), so its box is the union of
/// those leaves' boxes, needing no other internal node. The group reads the whole chunks inside
/// the range from stage 1 and the leaves outside them (at most 2·(kLbvhRefitChunk − 1)), in
/// parallel, and unites them (groupBoxUnion). There is no bottom-up chain: every node is
/// independent, where the arrival-counter refit this replaces walked ~30 dependent levels.
struct LbvhRefitNodes {
  static constexpr KernelId kId = KernelId::lbvh_refit_nodes;
  static constexpr int kSharedIntsPerLane = 0;

  int numLeaves;
  const int* __restrict__ nodeRangeEnd;  // (numLeaves − 1) the other end of node i's leaf range
  const Vec3* __restrict__ chunkLowers;  // (⌈numLeaves / kLbvhRefitChunk⌉) from stage 1
  const Vec3* __restrict__ chunkUppers;
  Vec3* __restrict__ nodeLowers;  // (2·numLeaves − 1) in: leaf nodes (stage 1); out: internal
  Vec3* __restrict__ nodeUppers;
  const int* __restrict__ nodeLeft;     // (numLeaves − 1)
  const int* __restrict__ nodeRight;    // (numLeaves − 1)
  BvhNodeHalf* __restrict__ nodeBoxes;  // (2 · (2·numLeaves − 1)) out: internal nodes' records
  const int* __restrict__ onlyIf = nullptr;  // as LbvhRefitLeaves::onlyIf

  template <class Group>
  WEFT_HD void operator()(const Group& g, int node) const {
    if (onlyIf && *onlyIf == 0) return;
    constexpr int C = kLbvhRefitChunk;
    const int end = nodeRangeEnd[node];
    const int first = node < end ? node : end, last = node < end ? end : node;
    // Whole chunks [firstChunk, endChunk); leaves [first, headEnd) before and [tailStart, last]
    // after them (all of [first, last] when no chunk fits inside).
    const int firstChunk = (first + C - 1) / C, endChunk = (last + 1) / C;
    const int chunks = endChunk > firstChunk ? endChunk - firstChunk : 0;
    const int headEnd = chunks > 0 ? firstChunk * C : last + 1;
    const int tailStart = chunks > 0 ? endChunk * C : last + 1;
    const int heads = headEnd - first, items = heads + chunks + (last + 1 - tailStart);
    const Vec3* leafLowers = nodeLowers + (numLeaves - 1);
    const Vec3* leafUppers = nodeUppers + (numLeaves - 1);
    Vec3 lower = lbvh_detail::emptyLower(), upper = lbvh_detail::emptyUpper();
    for (int k = g.rank(); k < items; k += g.size()) {
      Vec3 lo, hi;
      if (k < heads) {
        lo = leafLowers[first + k];
        hi = leafUppers[first + k];
      } else if (k < heads + chunks) {
        lo = chunkLowers[firstChunk + k - heads];
        hi = chunkUppers[firstChunk + k - heads];
      } else {
        lo = leafLowers[tailStart + k - heads - chunks];
        hi = leafUppers[tailStart + k - heads - chunks];
      }
      lower = selectMin(lower, lo);
      upper = selectMax(upper, hi);
    }
    lbvh_detail::groupBoxUnion(g, lower, upper);
    if (g.rank() == 0) {
      nodeLowers[node] = lower;
      nodeUppers[node] = upper;
      nodeBoxes[2 * node] = {lower, nodeLeft[node]};
      nodeBoxes[2 * node + 1] = {upper, nodeRight[node]};
    }
  }
};

}  // namespace weft
