// RigidContactDetector: the body–body contact rows of a rigid (cable) model and each moving body's
// list of them (rigid_avbd_spec §6; kernels in kernels/rigid_broad_phase.cuh, narrow phase in
// kernels/rigid_narrow_phase.h, row layout in kernels/rigid_contact.h).
//
// detect(bodyPoses, tree) runs, all on the device's stream:
//   shape world poses and boxes → LBVH build or refit (`tree`) over the non-plane shapes → each
//   shape's partner list (tree query, then every plane; with at most allPairsShapes tree shapes
//   no tree: every box against every box, in batches of allPairsRunsFromWorlds worlds or more by
//   runs of 32 of a world's shapes) → narrow phase counts → exclusive sum over shapes
//   → rows (and each body's row count) → exclusive sum over bodies → per-body lists (fill, sort).
// It allocates nothing and reads nothing back, so it can run inside a captured CUDA graph, and
// its output is deterministic: rows are grouped by the querying shape (the lower-indexed one of a
// pair, the non-plane one of a plane pair) in shape order, within a shape by partner shape (tree
// partners, then planes), within a pair in candidate order; each body's list is its rows in
// ascending order. Nothing depends on the tree's shape, so a rebuilt and a refit tree (and the
// all-pairs broad phase) give the same rows. The same on both backends, bit for bit (the device
// code is compiled without FMA contraction).
//
// Capacities never lose anything silently: each shape owns `pairCapacity` partner slots and the
// rows have `rowCapacity` slots; the true counts are always computed and their maxima go to the
// status. Between frames the owner asks growIfOverflowed() (ContactDetector,
// collision/contact_detector.h), which reads the status and reallocates what overflowed
// (invalidating captured graphs and any per-row solver state sized to rowCapacity);
// the frame is then run again. Only stored pairs reach the narrow phase, so after a pair overflow
// maxContacts counts the rows of the stored pairs only and the rerun may overflow the rows in
// turn: grow and rerun until fits(). The per-body lists hold 2 × rowCapacity entries, so they
// always fit.
//
// Shapes' geometry types are read once at construction (to split planes from tree shapes) and
// must not change afterwards; poses, margins, gaps, inverse masses and filters are read on
// every detect().
//
// Worlds (RigidShapesView::world, replicateWorlds): shapes of different worlds are never partners.
// The worlds' shapes come in ascending order of world, so each world's tree slots and planes are
// contiguous: the all-pairs broad phase and the plane pass visit only the shape's own world, the
// tree is a forest (each world's slots a subtree of their own, kernels/lbvh.cuh "Worlds") whose
// queries start at the shape's world's root, the choice between all pairs and the tree is made by
// the largest world's shape count, each world keeps or rebuilds its partner lists on its own (one
// stale flag per world), and a world's rows come out in the order they have when it runs alone
// (partners are listed in ascending order whatever the tree's shape).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collision/contact_detector.h"
#include "collision/exclusive_sum.h"
#include "collision/lbvh.h"
#include "kernels/rigid_broad_phase.cuh"
#include "kernels/rigid_contact.h"
#include "kernels/runtime/buffer.h"

namespace weft {

/// Device views of the bodies the detector reads.
struct RigidBodiesView {
  int numBodies = 0;
  const float* invMass = nullptr;  // (numBodies) effective inverse mass; 0: static or kinematic
};

/// The filter keys of `pairs` (either order within a pair), sorted and unique, for upload
/// (ShapePairFilterView, kernels/rigid_broad_phase.cuh).
std::vector<std::uint64_t> shapePairFilterKeys(const std::vector<std::pair<int, int>>& pairs);
/// Where each shape's keys start among ascending `keys` (numShapes + 1 entries: the keys whose
/// smaller shape is a lie at [starts[a], starts[a + 1])), for ShapePairFilterView::starts.
std::vector<int> shapePairFilterStarts(const std::vector<std::uint64_t>& keys, int numShapes);

struct RigidContactDetectorSettings {
  int pairCapacity = 16;              // initial partner slots per shape
  int rowCapacity = 0;                // initial rows; 0: max(256, 4 × shapes)
  bool cooperativeBroadPhase = true;  // a group of lanes per shape query (lanes from the
                                      // launch table); false: one thread per shape. Same lists.
  int allPairsShapes = 512;           // at most this many tree shapes: every shape tests every box
                             // (rigid_broad_phase_all_pairs) instead of building and querying
                             // the LBVH; the same pairs, listed in shape order. 0: always the tree
  int allPairsRunsFromWorlds = 1024;  // all pairs in a batch of at least this many worlds: a
                                      // group of lanes per run of 32 of a world's tree slots
                                      // (rigid_broad_phase_all_pairs_runs) instead of one per
                                      // shape; the same lists
  float pairReuseMargin = 0.0f;  // [m] > 0: the partner lists are built from boxes grown by this
                                 // much and kept by later detect(…, Refit) calls while every
                                 // shape's box stays inside its grown box (the same rows as
                                 // fresh lists; ShapePairBoxes says why). 0: lists every time.
                                 // Tree only: all-pairs detections always build their lists
};

class RigidContactDetector final : public ContactDetector {
 public:
  /// Reads the shape types (synchronously), allocates everything and builds the tree at
  /// `initialBodyPoses` (device, numBodies). Throws weft::Error for a negative shape or body
  /// count, or for 2^30 or more of either.
  RigidContactDetector(const Device& device, const RigidShapesView& shapes,
                       const RigidBodiesView& bodies, const ShapePairFilterView& filter,
                       const RigidContactDetectorSettings& settings,
                       const Transform* initialBodyPoses);

  /// How detect() brings the tree to the new boxes: a full build, or a refit of the last build's
  /// topology (cheaper; the pairs are the same, only the queries slow down as the shapes move
  /// away from where the tree was built, so the owner rebuilds now and then).
  enum class TreeUpdate { Rebuild, Refit };

  /// Rows and per-body lists at `bodyPoses` (device, numBodies); graph-capturable. Rebuild
  /// always builds new partner lists; Refit keeps the previous ones when pairReuseMargin allows
  /// (decided on the device: nothing is read back), else refits the tree and builds new ones.
  void detect(const Transform* bodyPoses, TreeUpdate tree = TreeUpdate::Rebuild);
  /// A full tree build at `bodyPoses` (detect() does one itself unless told to refit); the next
  /// detect() builds new partner lists.
  void rebuildTree(const Transform* bodyPoses);

  RigidContactsView view() const {
    return {rowCapacity_, rows_.data(), rowCount_.data(), bodyOffsets_.data(), bodyRows_.data()};
  }
  const RigidContact* rows() const { return rows_.data(); }  // (rowCapacity)
  RigidContact* rows() { return rows_.data(); }              // rewritten in place by sticky replay
  const int* rowCount() const { return rowCount_.data(); }   // (1) rows stored, ≤ rowCapacity
  const int* bodyContactOffsets() const { return bodyOffsets_.data(); }  // (numBodies + 1)
  const int* bodyContactRows() const { return bodyRows_.data(); }        // (2 x rowCapacity)
  /// (numShapes + 1) first row of each lower shape's rows (rows are grouped by shape0; entries
  /// may exceed the stored count when rows overflowed).
  const int* shapeRowOffsets() const { return rowOffsets_.data(); }
  ShapePairLists shapePairs() { return {pairCapacity_, pairItems_.data(), pairCounts_.data()}; }
  const Transform* shapeWorldPoses() const { return worldPoses_.data(); }  // (numShapes)
  RigidContactStatus* status() { return status_.data(); }

  // ContactDetector: the shapes' partner lists and the contact rows.
  void resetStatus() override { status_.zero(); }
  std::vector<ContactCount> counts() const override { return counts(readStatus()); }
  /// Waits for the device and returns the status maxima since the last reset.
  RigidContactStatus readStatus() const { return status_.download()[0]; }
  std::vector<ContactCount> counts(const RigidContactStatus& status) const;
  bool fits(const RigidContactStatus& status) const { return allFit(counts(status)); }
  /// Grows what `status` overflowed (ContactDetector's rule). Returns what grew, e.g.
  /// "shape pairs 16 -> 40", or "" if everything fit. Invalidates captured graphs.
  std::string growToFit(const RigidContactStatus& status) {
    return ContactDetector::growToFit(counts(status));
  }

  int pairCapacity() const { return pairCapacity_; }
  int rowCapacity() const { return rowCapacity_; }
  int numShapes() const { return shapes_.numShapes; }
  int numBodies() const { return bodies_.numBodies; }
  int numPlanes() const { return int(planeShapes_.size()); }
  int numTreeShapes() const { return int(leafLowers_.size()); }
  /// Whether detect() uses the all-pairs broad phase (few shapes per world: each shape tests its
  /// world's boxes) instead of the tree. Decided per world, so that a world of a batch takes the
  /// path it takes alone.
  bool usesAllPairs() const { return largestWorldTreeShapes_ <= settings_.allPairsShapes; }
  /// Whether the all-pairs broad phase takes a group per run of a world's slots.
  bool usesAllPairsRuns() const {
    return usesAllPairs() && numWorlds_ >= std::max(settings_.allPairsRunsFromWorlds, 1);
  }

 private:
  void resize(std::span<const int> capacities) override;
  /// World poses and boxes; `refreshPairBoxes`: the list boxes too (else, when lists may be
  /// reused, each box is checked against its list box); `listsBuilt`: count a list build.
  void computeShapeBoxes(const Transform* bodyPoses, bool refreshPairBoxes, bool listsBuilt);
  /// Lists are kept only with the tree: the all-pairs broad phase costs about what the check and
  /// the skipped launches do (measured on cable_y_junction, docs/PERFORMANCE.md).
  bool reusesPairs() const { return settings_.pairReuseMargin > 0.0f && !usesAllPairs(); }
  /// The boxes the tree and the partner lists are built from.
  const Vec3* pairLowers() const { return reusesPairs() ? pairLowers_.data() : leafLowers_.data(); }
  const Vec3* pairUppers() const { return reusesPairs() ? pairUppers_.data() : leafUppers_.data(); }
  void allocateRows();
  /// The list boxes and their stale flags, for the kernels that fill or check them.
  ShapePairBoxes pairBoxesView(bool refresh);

  const Device& device_;
  RigidShapesView shapes_;
  RigidBodiesView bodies_;
  ShapePairFilterView filter_;
  RigidContactDetectorSettings settings_;
  int pairCapacity_ = 0, rowCapacity_ = 0;

  DeviceBuffer<int> shapeLeaf_;                 // (numShapes) tree slot, −1 for planes
  DeviceBuffer<int> leafShape_;                 // (numTreeShapes)
  DeviceBuffer<int> planeShapes_;               // (numPlanes)
  DeviceBuffer<Transform> worldPoses_;          // (numShapes)
  DeviceBuffer<Vec3> leafLowers_, leafUppers_;  // (numTreeShapes)
  DeviceBuffer<Vec3> pairLowers_, pairUppers_;  // (numTreeShapes) list boxes (pairReuseMargin > 0)
  DeviceBuffer<int> stale_;  // (numWorlds + 1) a shape of world w / any shape left its list box;
                             // zero between uses
  DeviceBuffer<int> worldLeafBegin_;   // (numWorlds + 1) tree slots per world; empty: one world
  DeviceBuffer<int> worldPlaneBegin_;  // (numWorlds + 1) planes per world; empty: one world
  int largestWorldTreeShapes_ = 0;     // the most tree shapes of one world
  int numWorlds_ = 1;
  DeviceBuffer<int> leafWorld_;   // (numTreeShapes) with several worlds; else empty
  DeviceBuffer<int> runFirst_;    // (runs) first tree slot of each run of ≤ kAllPairsRunSlots
                                  // slots of one world; empty unless usesAllPairsRuns()
  bool freshListsNeeded_ = true;  // no lists yet, or their capacity grew: the next detect builds
  std::unique_ptr<Lbvh> bvh_;
  DeviceBuffer<int> pairItems_, pairCounts_;    // (numShapes x pairCapacity), (numShapes)
  DeviceBuffer<int> pairHits_;                  // (numShapes x pairCapacity) cooperative scratch
  DeviceBuffer<int> rowCounts_, rowOffsets_;    // (numShapes + 1) each
  DeviceBuffer<RigidContact> rows_;             // (rowCapacity)
  DeviceBuffer<int> rowCount_;                  // (1)
  DeviceBuffer<int> bodyCounts_;                // (numBodies + 1) list lengths; zero between uses
  DeviceBuffer<int> bodyOffsets_;               // (numBodies + 1)
  DeviceBuffer<int> bodyRows_;                  // (2 x rowCapacity)
  std::unique_ptr<ExclusiveSum> exclusiveSum_;  // the sums over shapes and over bodies
  DeviceBuffer<RigidContactStatus> status_;     // (1)
};

}  // namespace weft
