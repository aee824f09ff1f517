// Rigid contact generation (rigid_avbd_spec §6.2–6.5): shape boxes, LBVH pairs, the analytic
// narrow phase and per-body contact lists. collision/rigid_contacts.h runs these in order:
//
//   compute_shape_aabbs             one thread per shape. Reads body poses, shape local poses and
//       geometry; writes the world pose of every shape and, for non-plane shapes, the leaf box of
//       the shape's tree slot: capsule half extent (r,r,r) + |axis|·halfHeight, sphere (r,r,r),
//       box |R|·halfExtents, each grown by the shape's margin + gap (so boxes of two shapes
//       overlap whenever their admission test can pass).
//   rigid_broad_phase               one thread per shape a. Queries the tree with a's box and
//       keeps partners b > a, sorted by shape; then tests a against every plane (planes are not
//       in the tree). Partners come out in shape order whatever the tree (rebuilt or refit), so
//       the rows below do not depend on when the tree was built. A pair is kept when the shapes are
//       on different bodies, at least one body moves (effective inverse mass > 0), and the pair is
//       not in the sorted filter keys. Writes a's partner list (capacity slots, true count always)
//       and raises the status maximum.
//   rigid_broad_phase_cooperative   the same lists, a group of lanes walking each shape's query
//       together (the default; RigidContactDetectorSettings::cooperativeBroadPhase).
//   rigid_broad_phase_all_pairs     the same pairs without a tree for scenes of at most
//       RigidContactDetectorSettings::allPairsShapes tree shapes (partners in shape order).
//   rigid_broad_phase_all_pairs_runs  the same, for batches of at least
//       RigidContactDetectorSettings::allPairsRunsFromWorlds worlds: a group per run of 32 of a
//       world's slots, the world's boxes staged in group memory.
//   rigid_narrow_phase_count        a group of lanes per shape: the narrow phase on each of its
//       pairs, counting admitted candidates (distance − (margin_a + margin_b) ≤ gap_a + gap_b).
//   (exclusive sum of the counts over shapes → each shape's first row)
//   rigid_narrow_phase              a group of lanes per shape that has rows to store (the
//       count gave it some, within the capacity): the same candidates, written as rows
//       from its first row on (pair-list order, then candidate order), so the row order is fixed
//       by the shape order alone and never by thread timing, the group size or the tree. Item 0
//       writes the stored row count (≤ capacity) and raises the true total in the status.
//       It also counts each moving body's stored rows (atomic adds: counts, not slots).
//   (exclusive sum of the counts over bodies → each body's first list entry)
//   fill_body_body_contact_lists    one thread per row slot: the row into its moving bodies'
//       lists, at slots claimed by atomics (timing-dependent).
//   sort_body_body_contact_lists    one thread per body: its list ascending, which makes it the
//       same on every run.
// Every output is therefore the same on every run, block size and backend (the detector compiles
// its device code without FMA contraction). The lists replaced a radix sort of (body, row) keys
// over every row slot (docs/PERFORMANCE.md, "The cable detection").
#pragma once

#include <cstdint>

#include "kernels/lbvh.cuh"
#include "kernels/math.h"
#include "kernels/rigid_contact.h"
#include "kernels/rigid_narrow_phase.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"
#include "kernels/shape_geometry.h"
#include "kernels/small_sort.h"

namespace weft {

/// Maxima the detection kernels raise (atomic max) and the host reads after a frame.
struct RigidContactStatus {
  int maxShapePairs = 0;   // largest partner count of one shape
  int maxContacts = 0;     // largest true row total of one detection
  int pairListBuilds = 0;  // detections whose broad phase ran (the others reused its lists)
};

/// The boxes the partner lists were built from, when lists may be reused across detections:
/// each shape's box at list time grown by `margin` on every side. While every shape's current
/// box lies inside its list box, every pair whose current boxes overlap is in the lists (two
/// boxes inside two disjoint boxes are disjoint), so the narrow phase finds the rows a fresh
/// broad phase would give it: a listed pair whose boxes no longer overlap yields no row, because
/// the boxes hold the shapes grown by margin + gap and admission needs the grown shapes to touch.
/// (Only a pair exactly at the admission limit, which a fresh broad phase could miss by the
/// rounding of its boxes, might give a row from kept lists that fresh lists drop; a box test in
/// the narrow phase would close that, and cost the pile 5 µs per substep: docs/PERFORMANCE.md.)
/// lowers == nullptr: no reuse, lists are built at every detection.
struct ShapePairBoxes {
  Vec3* __restrict__ lowers = nullptr;  // (numTreeShapes) [m]
  Vec3* __restrict__ uppers = nullptr;
  float margin = 0.0f;                // [m] growth beyond the shape's own box
  bool refresh = false;               // this detection builds new lists (from the current boxes)
  int* __restrict__ stale = nullptr;  // (numWorlds + 1): [w] raised when a shape of world w left
                                      // its list box, [numWorlds] when any shape did
  const int* __restrict__ leafWorld = nullptr;  // (numTreeShapes) or null: one world
  int numWorlds = 1;

  WEFT_HD int worldOf(int leaf) const { return leafWorld ? leafWorld[leaf] : 0; }
};

/// Device views of the shapes (owned by the solver's model).
struct RigidShapesView {
  int numShapes = 0;
  const int* __restrict__ body = nullptr;                // (numShapes) owning body, −1 static
  const ShapeGeometry* __restrict__ geometry = nullptr;  // (numShapes)
  const Transform* __restrict__ localPose = nullptr;     // (numShapes) in the body frame [m]
  const float* __restrict__ margin = nullptr;            // (numShapes) shape margin [m]
  const float* __restrict__ gap = nullptr;               // (numShapes) speculative gap [m]
  const int* __restrict__ world = nullptr;               // (numShapes) or null: one world
};

/// A fixed-stride partner list per shape: slots [a·capacity, a·capacity + capacity).
struct ShapePairLists {
  int capacity = 0;
  int* __restrict__ items = nullptr;   // (numShapes x capacity) partner shape ids
  int* __restrict__ counts = nullptr;  // (numShapes) true counts (may exceed capacity)
};

/// Key of an unordered shape pair: (min << 32) | max.
WEFT_HD inline std::uint64_t shapePairKey(int a, int b) {
  const int lo = a < b ? a : b, hi = a < b ? b : a;
  return (std::uint64_t(std::uint32_t(lo)) << 32) | std::uint64_t(std::uint32_t(hi));
}

/// True when `key` is among the ascending keys[0, count).
WEFT_HD inline bool sortedKeysContain(const std::uint64_t* keys, int count, std::uint64_t key) {
  int lo = 0, hi = count;  // first index with keys[i] >= key lies in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count && keys[lo] == key;
}

/// Pairs of shapes that never collide, as ascending unique shapePairKey values (in the memory the
/// launch reads). `starts`, when given, indexes the keys by their smaller shape (key k of shape a
/// in [starts[a], starts[a + 1]): shapePairFilterStarts), so that a query searches that shape's
/// few keys instead of all of them: a batch holds its worlds' keys, and at 4096 y_junction worlds a
/// search over all of them is 18 dependent loads.
struct ShapePairFilterView {
  int count = 0;
  const std::uint64_t* keys = nullptr;  // (count)
  const int* starts = nullptr;          // (numShapes + 1), or null: every key is searched

  /// Whether the pair (a, b) is filtered.
  WEFT_HD bool contains(int a, int b) const {
    const std::uint64_t key = shapePairKey(a, b);
    if (!starts) return sortedKeysContain(keys, count, key);
    const int lo = a < b ? a : b;
    return sortedKeysContain(keys + starts[lo], starts[lo + 1] - starts[lo], key);
  }
};

/// World pose of a shape: bodyPose ∘ localPose.
WEFT_HD inline Transform shapeWorldPose(const Transform& bodyPose, const Transform& localPose) {
  return {bodyPose.p + rotate(bodyPose.q, localPose.p), bodyPose.q * localPose.q};
}

/// Whether `body` moves: a body (not the world, −1) whose effective inverse mass is positive.
WEFT_HD inline bool bodyMoves(int body, const float* bodyInvMass) {
  return body >= 0 && bodyInvMass[body] > 0.0f;
}

/// The pair rule of the broad phase: one world (shapeWorld null: a single one), different bodies,
/// at least one moving, not filtered.
WEFT_HD inline bool shapesMayCollide(int a, int b, const int* shapeBody, const float* bodyInvMass,
                                     const ShapePairFilterView& filter,
                                     const int* shapeWorld = nullptr) {
  if (shapeWorld && shapeWorld[a] != shapeWorld[b]) return false;
  const int ba = shapeBody[a], bb = shapeBody[b];
  if (ba == bb) return false;
  if (!bodyMoves(ba, bodyInvMass) && !bodyMoves(bb, bodyInvMass)) return false;
  return !filter.contains(a, b);
}

/// The row of candidate `c` between shapes a (its A) and b: shape0 = min(a, b), points and
/// offsets in the owning bodies' frames (world for static shapes), margins r_eff + shape margin.
WEFT_HD inline RigidContact makeRigidContact(int a, int b, const ContactCandidate& candidate,
                                             const RigidShapesView& shapes,
                                             const Transform* bodyPoses) {
  const ContactCandidate c = a < b ? candidate : flipped(candidate);
  RigidContact row;
  row.shape0 = a < b ? a : b;
  row.shape1 = a < b ? b : a;
  row.body0 = shapes.body[row.shape0];
  row.body1 = shapes.body[row.shape1];
  row.normal = c.normal;
  row.margin0 = c.radiusA + shapes.margin[row.shape0];
  row.margin1 = c.radiusB + shapes.margin[row.shape1];
  const Vec3 offset0 = row.margin0 * c.normal, offset1 = -row.margin1 * c.normal;
  row.point0 = c.pointA;
  row.offset0 = offset0;
  if (row.body0 >= 0) {
    const Transform pose = bodyPoses[row.body0];
    row.point0 = inverseTransformPoint(pose, c.pointA);
    row.offset0 = rotateInverse(pose.q, offset0);
  }
  row.point1 = c.pointB;
  row.offset1 = offset1;
  if (row.body1 >= 0) {
    const Transform pose = bodyPoses[row.body1];
    row.point1 = inverseTransformPoint(pose, c.pointB);
    row.offset1 = rotateInverse(pose.q, offset1);
  }
  return row;
}

// ---- compute_shape_aabbs
// -------------------------------------------------------------------------

struct ComputeShapeAabbs {
  static constexpr KernelId kId = KernelId::compute_shape_aabbs;

  RigidShapesView shapes;
  const Transform* __restrict__ bodyPoses;  // (numBodies) origin poses [m]
  const int* __restrict__ shapeLeaf;        // (numShapes) tree slot, −1 for planes
  Transform* __restrict__ worldPoses;       // (numShapes) out [m]
  Vec3* __restrict__ leafLowers;            // (numTreeShapes) out [m]
  Vec3* __restrict__ leafUppers;            // (numTreeShapes) out [m]
  ShapePairBoxes pairBoxes;                 // refreshed, or checked against the new boxes
  RigidContactStatus* __restrict__ status;  // pairListBuilds += 1 when this detection builds
                                            // lists (nullptr: a tree build without a query)

  WEFT_HD void operator()(int s) const {
    const int body = shapes.body[s];
    const Transform pose =
        body >= 0 ? shapeWorldPose(bodyPoses[body], shapes.localPose[s]) : shapes.localPose[s];
    worldPoses[s] = pose;
    const bool builds = !pairBoxes.lowers || pairBoxes.refresh;
    if (s == 0 && builds && status) atomicAddInt(&status->pairListBuilds, 1);
    const int leaf = shapeLeaf[s];
    if (leaf < 0) return;
    Vec3 lower, upper;
    shapeBounds(shapes.geometry[s], pose, shapes.margin[s] + shapes.gap[s], lower, upper);
    leafLowers[leaf] = lower;
    leafUppers[leaf] = upper;
    if (!pairBoxes.lowers) return;
    const Vec3 grow{pairBoxes.margin, pairBoxes.margin, pairBoxes.margin};
    if (pairBoxes.refresh) {
      pairBoxes.lowers[leaf] = lower - grow;
      pairBoxes.uppers[leaf] = upper + grow;
    } else if (!boxContains(pairBoxes.lowers[leaf], pairBoxes.uppers[leaf], lower, upper)) {
      atomicMaxInt(&pairBoxes.stale[pairBoxes.worldOf(leaf)], 1);
      atomicMaxInt(&pairBoxes.stale[pairBoxes.numWorlds], 1);
    }
  }

  /// Whether [lower, upper] lies inside [outerLower, outerUpper].
  WEFT_HD static bool boxContains(const Vec3& outerLower, const Vec3& outerUpper, const Vec3& lower,
                                  const Vec3& upper) {
    return outerLower.x <= lower.x && outerLower.y <= lower.y && outerLower.z <= lower.z &&
           upper.x <= outerUpper.x && upper.y <= outerUpper.y && upper.z <= outerUpper.z;
  }
};

// ---- refresh_shape_pair_boxes
// --------------------------------------------------------------------

/// One thread per tree shape, after compute_shape_aabbs of a detection that may reuse the lists:
/// if some shape of its world left its list box (stale), every list box of that world becomes the
/// shape's current box grown by the margin, and the broad phase that follows (told by the same
/// flag) rebuilds that world's lists. Otherwise it does nothing. Worlds decide alone, so a world
/// of a batch keeps or rebuilds its lists exactly when it would alone.
struct RefreshShapePairBoxes {
  static constexpr KernelId kId = KernelId::refresh_shape_pair_boxes;

  ShapePairBoxes pairBoxes;
  const Vec3* __restrict__ leafLowers;  // (numTreeShapes) current boxes
  const Vec3* __restrict__ leafUppers;
  RigidContactStatus* __restrict__ status;  // pairListBuilds += 1 when stale

  WEFT_HD void operator()(int leaf) const {
    if (leaf == 0 && pairBoxes.stale[pairBoxes.numWorlds] != 0)
      atomicAddInt(&status->pairListBuilds, 1);
    if (pairBoxes.stale[pairBoxes.worldOf(leaf)] == 0) return;
    const Vec3 grow{pairBoxes.margin, pairBoxes.margin, pairBoxes.margin};
    pairBoxes.lowers[leaf] = leafLowers[leaf] - grow;
    pairBoxes.uppers[leaf] = leafUppers[leaf] + grow;
  }
};

// ---- rigid_broad_phase
// ---------------------------------------------------------------------------

struct RigidBroadPhase {
  static constexpr KernelId kId = KernelId::rigid_broad_phase;

  BvhView bvh;                                 // over the non-plane shapes' tree slots
  const int* __restrict__ shapeBody;           // (numShapes)
  const ShapeGeometry* __restrict__ geometry;  // (numShapes)
  const float* __restrict__ bodyInvMass;       // (numBodies) effective; 0 = does not move
  const int* __restrict__ shapeLeaf;           // (numShapes) tree slot, −1 for planes
  const int* __restrict__ leafShape;           // (numTreeShapes) shape of a tree slot
  const Vec3* __restrict__ leafLowers;         // (numTreeShapes) the boxes the lists are built
  const Vec3* __restrict__ leafUppers;         // from (the list boxes when lists are reused)
  const int* __restrict__ planeShapes;         // (numPlanes) ascending
  int numPlanes;
  ShapePairFilterView filter;
  ShapePairLists pairs;  // out
  RigidContactStatus* __restrict__ status;
  const int* __restrict__ onlyIf = nullptr;      // (numWorlds + 1) when given, a shape's list is
                                                 // rebuilt only if its world's flag is ≠ 0 (stale
                                                 // list boxes) and kept otherwise
  const int* __restrict__ shapeWorld = nullptr;  // (numShapes) or null: one world
  const int* __restrict__ worldLeafBegin = nullptr;   // (numWorlds + 1) each world's tree slots
                                                      // (world-major), or null: one world
  const int* __restrict__ worldPlaneBegin = nullptr;  // (numWorlds + 1) each world's planes in
                                                      // planeShapes, or null: one world

  /// Whether this detection keeps shape a's previous list (uniform over a world, so over the
  /// lanes of a group, which serve one shape).
  WEFT_HD bool keepsLists(int a) const {
    return onlyIf && onlyIf[shapeWorld ? shapeWorld[a] : 0] == 0;
  }

  /// Where shape a's query starts: its world's subtree (kernels/lbvh.cuh, "Worlds").
  WEFT_HD int root(int a) const { return bvh.rootOf(shapeWorld ? shapeWorld[a] : 0); }

  /// Shape a's tree slot, or −1 for a plane (planes query nothing: their empty list is stored
  /// here; every lane of a group may call it).
  WEFT_HD int queryLeaf(int a) const {
    const int leaf = shapeLeaf[a];
    if (leaf < 0) pairs.counts[a] = 0;
    return leaf;
  }

  /// Whether tree slot `other` is a partner of shape a (b > a, and the pair may collide).
  WEFT_HD bool accepts(int a, int other) const {
    const int b = leafShape[other];
    return b > a && shapesMayCollide(a, b, shapeBody, bodyInvMass, filter, shapeWorld);
  }

  /// Appends the planes a may touch after its `count` tree partners; stores the count and raises
  /// the status maximum. Returns the final count.
  WEFT_HD int finish(int a, int count) const {
    const int w = shapeWorld ? shapeWorld[a] : 0;
    const int first = worldPlaneBegin ? worldPlaneBegin[w] : 0;
    const int end = worldPlaneBegin ? worldPlaneBegin[w + 1] : numPlanes;
    for (int k = first; k < end; ++k) {
      const int b = planeShapes[k];
      if (!shapesMayCollide(a, b, shapeBody, bodyInvMass, filter, shapeWorld)) continue;
      if (count < pairs.capacity) pairs.items[a * pairs.capacity + count] = b;
      ++count;
    }
    pairs.counts[a] = count;
    if (count > 0) atomicMaxInt(&status->maxShapePairs, count);
    return count;
  }

  WEFT_HD void operator()(int a) const {
    if (keepsLists(a)) return;
    const int leaf = queryLeaf(a);
    if (leaf < 0) return;
    int count = 0;
    bvhQueryStacklessFrom(bvh, root(a), leafLowers[leaf], leafUppers[leaf], [&](int other) {
      if (!accepts(a, other)) return;
      if (count < pairs.capacity) pairs.items[a * pairs.capacity + count] = leafShape[other];
      ++count;
    });
    sortAscending(pairs.items + a * pairs.capacity,
                  count < pairs.capacity ? count : pairs.capacity);
    finish(a, count);
  }
};

/// rigid_broad_phase_all_pairs: the same pairs without a tree, for scenes of few shapes (the
/// detector's allPairsShapes setting), a group of lanes per shape (launch.h, Group shape): each
/// round the lanes test the leaf boxes of the next size() tree slots after a's own (slots are in
/// shape order and a partner b has b > a, so no earlier slot can be one), and the accepted ones are
/// written in slot order (ballot + prefix count), so a's partners come out in shape order, as
/// from the tree queries, for every group size; then the planes. One kernel instead
/// of the tree build and query (≈ 7 launches), whose fixed costs dominate for few shapes.
struct RigidBroadPhaseAllPairs {
  static constexpr KernelId kId = KernelId::rigid_broad_phase_all_pairs;
  static constexpr int kSharedIntsPerLane = 0;  // no group memory: ballots only

  RigidBroadPhase query;  // its bvh is not read
  int numTreeShapes;

  template <class Group>
  WEFT_HD void operator()(const Group& g, int a) const {
    if (query.keepsLists(a)) return;
    const int leaf = query.queryLeaf(a);
    if (leaf < 0) return;  // uniform over the group
    const Vec3 lower = query.leafLowers[leaf], upper = query.leafUppers[leaf];
    const unsigned below = (1u << g.rank()) - 1u;
    // Only shape a's world's slots (worlds are world-major): the same slots, in the same order,
    // as when its world runs alone; those after a's own, which is in that world.
    const int w = query.shapeWorld ? query.shapeWorld[a] : 0;
    const int end = query.worldLeafBegin ? query.worldLeafBegin[w + 1] : numTreeShapes;
    int count = 0;  // uniform over the group
    for (int first = leaf + 1; first < end; first += g.size()) {
      const int other = first + g.rank();
      const bool take =
          other < end &&
          boxesOverlap(query.leafLowers[other], query.leafUppers[other], lower, upper) &&
          query.accepts(a, other);
      const unsigned bits = g.ballot(take);
      const int slot = count + lbvh_detail::popCount(bits & below);
      if (take && slot < query.pairs.capacity)
        query.pairs.items[a * query.pairs.capacity + slot] = query.leafShape[other];
      count += lbvh_detail::popCount(bits);
    }
    if (g.rank() == 0) query.finish(a, count);
  }
};

/// Tree slots of one world that an item of rigid_broad_phase_all_pairs_runs takes together.
inline constexpr int kAllPairsRunSlots = 32;

/// rigid_broad_phase_all_pairs_runs: the lists of rigid_broad_phase_all_pairs for batches of many
/// worlds, an item per run of up to kAllPairsRunSlots consecutive tree slots of one world
/// (RigidContactDetector's runs; a group of lanes from the launch table). The group's lanes take
/// the run's shapes (lane r slots first + r, first + r + G, …), and the world's boxes from the
/// run's first slot on pass through group memory G at a time: each lane tests its shape against
/// every later slot in slot order, so its partners come out in shape order, as from the other
/// broad phases, and lane r appends its planes. Per shape, rigid_broad_phase_all_pairs loads
/// every later box of the world from global memory and asks the whole pair rule (world, bodies,
/// inverse masses, a search of the filter) of each overlapping one; here a box is loaded once per
/// run, its shape, body and whether that moves sit beside it, and the filter is a cursor over the
/// shape's own keys, which ascend as the partners do (ShapePairFilterView::starts; without it, the
/// search). The same lists for every group size and on both backends.
struct RigidBroadPhaseAllPairsRuns {
  static constexpr KernelId kId = KernelId::rigid_broad_phase_all_pairs_runs;
  /// A staged slot: its box, its shape, the shape's body and whether that moves (1) or not (0).
  struct Staged {
    Vec3 lower, upper;
    int shape, body, moves;
  };
  static constexpr int kSharedIntsPerLane = int(sizeof(Staged) / sizeof(int));
  /// 32 registers (40 uncapped; a few bytes spilled) let every warp of 4096 y_junction worlds'
  /// runs be resident at once: 1.01× a substep (docs/PERFORMANCE.md).
  static constexpr int kMaxRegisters = 32;

  RigidBroadPhase query;             // its bvh is not read
  const int* __restrict__ runFirst;  // (runs) first tree slot of each run
  int numTreeShapes;

  template <class Group>
  WEFT_HD void operator()(const Group& g, int run) const {
    const int first = runFirst[run];
    const int firstShape = query.leafShape[first];
    if (query.keepsLists(firstShape)) return;  // uniform over the world
    const int w = query.shapeWorld ? query.shapeWorld[firstShape] : 0;
    const int end = query.worldLeafBegin ? query.worldLeafBegin[w + 1] : numTreeShapes;
    const int runEnd = first + kAllPairsRunSlots < end ? first + kAllPairsRunSlots : end;
    Staged* staged = reinterpret_cast<Staged*>(g.shared());
    const ShapePairFilterView& filter = query.filter;
    for (int base = first; base < runEnd; base += g.size()) {  // the lanes' shapes, G at a time
      const int leaf = base + g.rank();
      const bool mine = leaf < runEnd;
      Staged self{};
      int count = 0;
      // The filter cursor: the shape's next filtered partner and the one after it, read ahead so
      // that passing a filtered partner waits for no load.
      constexpr int kNone = 0x7fffffff;
      int key = 0, keyEnd = 0, nextFiltered = kNone, afterThat = kNone;
      if (mine) {
        self = stage(leaf);
        if (filter.starts) {
          key = filter.starts[self.shape];
          keyEnd = filter.starts[self.shape + 1];
          if (key < keyEnd) nextFiltered = int(filter.keys[key] & 0xffffffffu);
          if (key + 1 < keyEnd) afterThat = int(filter.keys[key + 1] & 0xffffffffu);
        }
      }
      for (int chunk = base; chunk < end; chunk += g.size()) {  // the world's later slots
        g.sync();                                               // the previous chunk is read
        if (chunk + g.rank() < end) staged[g.rank()] = stage(chunk + g.rank());
        g.sync();
        if (!mine) continue;
        const int n = end - chunk < g.size() ? end - chunk : g.size();
        for (int k = leaf - chunk + 1 > 0 ? leaf - chunk + 1 : 0; k < n; ++k) {
          const Staged& other = staged[k];
          if (!boxesOverlap(other.lower, other.upper, self.lower, self.upper)) continue;
          if (other.body == self.body || !(self.moves || other.moves)) continue;
          const int b = other.shape;  // > self.shape: slots are in shape order
          if (filter.starts) {
            while (nextFiltered < b) {
              nextFiltered = afterThat;
              ++key;
              afterThat = key + 1 < keyEnd ? int(filter.keys[key + 1] & 0xffffffffu) : kNone;
            }
            if (nextFiltered == b) continue;
          } else if (filter.contains(self.shape, b)) {
            continue;
          }
          if (count < query.pairs.capacity)
            query.pairs.items[self.shape * query.pairs.capacity + count] = b;
          ++count;
        }
      }
      if (mine) query.finish(self.shape, count);
    }
  }

  /// Tree slot s as staged: its box, shape and body.
  WEFT_HD Staged stage(int s) const {
    Staged out;
    out.lower = query.leafLowers[s];
    out.upper = query.leafUppers[s];
    out.shape = query.leafShape[s];
    out.body = query.shapeBody[out.shape];
    out.moves = bodyMoves(out.body, query.bodyInvMass) ? 1 : 0;
    return out;
  }
};

/// rigid_broad_phase_cooperative: the same lists, a group of lanes per shape (launch.h, Group
/// shape; lanes from the launch table). The group walks the tree together (bvhQueryGroup), tests
/// the overlapping slots in parallel, and writes the accepted ones in slot order
/// (bvhWritePrimitivesAscending), then maps slots to shapes (slots are in shape order, so the
/// partners are too); lane 0 appends the planes. Lists are identical to rigid_broad_phase's
/// (and rigid_broad_phase_all_pairs') for every group size and every tree.
struct RigidBroadPhaseCooperative {
  static constexpr KernelId kId = KernelId::rigid_broad_phase_cooperative;
  static constexpr int kSharedIntsPerLane = kCooperativeStackIntsPerLane;

  RigidBroadPhase query;
  int* __restrict__ hits;  // (numShapes x pairs.capacity) scratch

  template <class Group>
  WEFT_HD void operator()(const Group& g, int a) const {
    if (query.keepsLists(a)) return;
    const int leaf = query.queryLeaf(a);
    if (leaf < 0) return;  // uniform over the group
    const int capacity = query.pairs.capacity;
    int* mine = hits + a * capacity;
    int* out = query.pairs.items + a * capacity;
    const int count = bvhQueryGroupFrom(g, query.bvh, query.root(a), query.leafLowers[leaf],
                                        query.leafUppers[leaf], mine, capacity,
                                        [&](int other) { return query.accepts(a, other); });
    bvhWritePrimitivesAscending(g, query.bvh, mine, count, capacity, out);
    g.sync();  // the slots are in place
    const int stored = count < capacity ? count : capacity;
    for (int k = g.rank(); k < stored; k += g.size()) out[k] = query.leafShape[out[k]];
    if (g.rank() == 0) query.finish(a, count);
  }
};

// ---- rigid_narrow_phase_count / rigid_narrow_phase
// -------------------------------------------------

/// What both narrow-phase kernels read: shape a's k-th partner and the admitted candidates of
/// that pair (candidates with distance − (margin_a + margin_b) ≤ gap_a + gap_b, in candidate
/// order).
struct RigidNarrowPhaseInputs {
  RigidShapesView shapes;
  const Transform* __restrict__ worldPoses;  // (numShapes) from compute_shape_aabbs
  ShapePairLists pairs;                      // from rigid_broad_phase

  /// Partners of shape a in the lists (at most the capacity).
  WEFT_HD int storedPairs(int a) const {
    return pairs.counts[a] < pairs.capacity ? pairs.counts[a] : pairs.capacity;
  }

  /// The partner of shape a's k-th pair.
  WEFT_HD int partner(int a, int k) const { return pairs.items[a * pairs.capacity + k]; }

  /// Hands each admitted candidate of the pair (a, b), in candidate order, to `admit`: of the
  /// first kMaxContactCandidates candidates (as ContactCandidates keeps them), those whose
  /// distance − (margin_a + margin_b) ≤ gap_a + gap_b (NaN distances are not). No candidate array:
  /// the candidates go from forEachCandidate straight to `admit`, in registers.
  template <class Admit>
  WEFT_HD void forEachAdmitted(int a, int b, Admit&& admit) const {
    struct Sink {
      float margins, gaps;
      Admit& admit;
      int seen;
      WEFT_HD void add(const ContactCandidate& c) {
        if (seen++ >= kMaxContactCandidates) return;
        if (c.distance - margins <= gaps) admit(c);
      }
    } sink{shapes.margin[a] + shapes.margin[b], shapes.gap[a] + shapes.gap[b], admit, 0};
    forEachCandidate(shapes.geometry[a], worldPoses[a], shapes.geometry[b], worldPoses[b], sink);
  }

  /// How many candidates of the pair (a, b) are admitted.
  WEFT_HD int admittedCount(int a, int b) const {
    int n = 0;
    forEachAdmitted(a, b, [&n](const ContactCandidate&) { ++n; });
    return n;
  }
};

/// Inclusive prefix sum of `value` over the group's ranks (Hillis–Steele with shuffles; every
/// lane calls it).
template <class Group>
WEFT_HD int groupInclusiveSum(const Group& g, int value) {
  for (int d = 1; d < g.size(); d *= 2) {
    const int below = g.shuffle(value, g.rank() >= d ? g.rank() - d : 0);
    if (g.rank() >= d) value += below;
  }
  return value;
}

/// rigid_narrow_phase_count, a group of lanes per shape (launch.h, Group shape): the lanes take
/// the shape's pairs in turn and add their admitted candidates; rank 0 stores the sum. Launched
/// over max(numShapes, numBodies + 1) items: item a also zeroes body a's list length
/// (rigid_narrow_phase counts the lists afresh).
struct RigidNarrowPhaseCount {
  static constexpr KernelId kId = KernelId::rigid_narrow_phase_count;
  static constexpr int kSharedIntsPerLane = 0;

  RigidNarrowPhaseInputs in;
  int* __restrict__ rowCounts;  // (numShapes + 1) out; the last entry stays 0
  int numBodies;
  int* __restrict__ bodyCounts;            // (numBodies + 1) out: zeroed
  int* __restrict__ staleFlags = nullptr;  // (numStaleFlags) cleared (every broad-phase launch
  int numStaleFlags = 0;                   // has read them)

  template <class Group>
  WEFT_HD void operator()(const Group& g, int a) const {
    if (g.rank() == 0) {
      if (a < numStaleFlags) staleFlags[a] = 0;
      if (a <= numBodies) bodyCounts[a] = 0;
    }
    if (a >= in.shapes.numShapes) return;  // uniform over the group
    const int stored = in.storedPairs(a);
    int count = 0;
    for (int k = g.rank(); k < stored; k += g.size())
      count += in.admittedCount(a, in.partner(a, k));
    const int total = g.shuffle(groupInclusiveSum(g, count), g.size() - 1);
    if (g.rank() == 0) rowCounts[a] = total;
  }
};

/// rigid_narrow_phase, a group of lanes per shape: each round the lanes evaluate the next size()
/// pairs, place their rows by a prefix sum of their counts (pair order, then candidate order:
/// the same rows in the same slots for every group size) and write them from the shape's first
/// row on, counting each moving body's stored rows (atomic adds: counts, not slots).
struct RigidNarrowPhase {
  static constexpr KernelId kId = KernelId::rigid_narrow_phase;
  static constexpr int kSharedIntsPerLane = 0;

  RigidNarrowPhaseInputs in;
  const Transform* __restrict__ bodyPoses;  // (numBodies)
  const int* __restrict__ rowOffsets;       // (numShapes + 1) exclusive sums of the counts
  int rowCapacity;
  RigidContact* __restrict__ rows;  // (rowCapacity) out
  int* __restrict__ rowCount;       // (1) out: rows stored, min(total, rowCapacity)
  RigidContactStatus* __restrict__ status;
  const float* __restrict__ bodyInvMass;  // (numBodies) effective; 0 = does not move
  int* __restrict__ bodyCounts;           // (numBodies) in/out: + each stored row of the body

  template <class Group>
  WEFT_HD void operator()(const Group& g, int a) const {
    if (a == 0 && g.rank() == 0) {
      const int total = rowOffsets[in.shapes.numShapes];
      *rowCount = total < rowCapacity ? total : rowCapacity;
      atomicMaxInt(&status->maxContacts, total);
    }
    // A shape whose rows the count found none of, or whose rows all lie past the capacity, writes
    // nothing and counts no body's row: the candidates again would only find that out (uniform
    // over the group).
    if (rowOffsets[a + 1] == rowOffsets[a] || rowOffsets[a] >= rowCapacity) return;
    const int stored = in.storedPairs(a);
    int next = rowOffsets[a];  // the round's first row (uniform)
    for (int first = 0; first < stored; first += g.size()) {
      const int k = first + g.rank();
      const int b = k < stored ? in.partner(a, k) : -1;
      // The pair's candidates twice: counted (for the slots), then written where they go. Both
      // passes are the same function of the same inputs, as the count launch before this one is
      // (its totals place each shape's rows), so they agree on every candidate.
      const int count = b >= 0 ? in.admittedCount(a, b) : 0;
      const int through = groupInclusiveSum(g, count);
      int slot = next + through - count;
      if (b >= 0)
        in.forEachAdmitted(a, b, [&](const ContactCandidate& c) {
          if (slot < rowCapacity) {
            const RigidContact row = makeRigidContact(a, b, c, in.shapes, bodyPoses);
            rows[slot] = row;
            const int bodies[2] = {row.body0, row.body1};
            for (int body : bodies)
              if (bodyMoves(body, bodyInvMass)) atomicAddInt(&bodyCounts[body], 1);
          }
          ++slot;
        });
      next += g.shuffle(through, g.size() - 1);
    }
  }
};

// ---- fill_body_body_contact_lists / sort_body_body_contact_lists
// ---------------------------------

/// One thread per row slot: each stored row goes into the list of each of its moving bodies, at
/// a slot claimed by counting the body's remaining length down (so the lengths end at zero). The
/// slots depend on timing; sort_body_body_contact_lists makes the lists ascending. A slot outside
/// the body's list is dropped: that happens only when the launch is replayed on its own output
/// (the tuner does), never in a detection, and keeps every write inside the list.
struct FillBodyBodyContactLists {
  static constexpr KernelId kId = KernelId::fill_body_body_contact_lists;

  const RigidContact* __restrict__ rows;  // (rowCapacity)
  const int* __restrict__ rowCount;       // (1)
  const float* __restrict__ bodyInvMass;  // (numBodies)
  const int* __restrict__ bodyOffsets;    // (numBodies + 1) exclusive sums of the lengths
  int* __restrict__ bodyCounts;           // (numBodies) in: lengths; out: zero
  int* __restrict__ bodyRows;             // (2 x rowCapacity) out

  WEFT_HD void operator()(int i) const {
    if (i >= *rowCount) return;
    const int bodies[2] = {rows[i].body0, rows[i].body1};
    for (int body : bodies) {
      if (!bodyMoves(body, bodyInvMass)) continue;
      const int slot = atomicAddInt(&bodyCounts[body], -1) - 1;
      if (slot < 0 || slot >= bodyOffsets[body + 1] - bodyOffsets[body]) continue;
      bodyRows[bodyOffsets[body] + slot] = i;
    }
  }
};

/// One thread per body: its rows ascending (each row at most once per body, so the order is
/// unique and the same on every run, launch size and backend).
struct SortBodyBodyContactLists {
  static constexpr KernelId kId = KernelId::sort_body_body_contact_lists;

  const int* __restrict__ bodyOffsets;  // (numBodies + 1)
  int* __restrict__ bodyRows;           // (2 x rowCapacity) in/out

  WEFT_HD void operator()(int b) const {
    sortAscending(bodyRows + bodyOffsets[b], bodyOffsets[b + 1] - bodyOffsets[b]);
  }
};

}  // namespace weft
