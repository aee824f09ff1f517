// SelfContactDetector: the self-contact candidate pairs of a cloth mesh, found with two LBVHs
// (triangles, edges) and kept in fixed-capacity lists that grow between frames, never silently
// truncated (cloth_vbd_spec §6; kernels/self_contact_detection.cuh).
//
// detect() refits both trees to the current positions and rebuilds the three lists:
//   vertex → triangles   (each vertex's nearby triangles, in BVH preorder)
//   edge → edges         (each edge's nearby edges; every pair appears in both edges' lists,
//                         except that quiet edges (held; topology.quietEdges) list nothing)
//   triangle → vertices  (the transpose of the first, sorted by vertex id)
// It allocates nothing and reads nothing back, so it can run inside a captured CUDA graph.
// Each list primitive owns `capacity` slots; kernels always write the true count and raise the
// ContactStatus maxima. With the vertex adjacency in the topology, detect() also writes every
// particle's pairs as one flat list of records in gather order (particleRecordOffsets(),
// particleRecords(); kernels/particle_contact_records.cuh), and the truncation's pairs
// (truncationPairs()), each sized from the capacities so that it always fits. Between frames the
// owner asks growIfOverflowed() (ContactDetector, collision/contact_detector.h), which reads the
// status and reallocates any list that overflowed; the frame is then run again.
//
// rebuild() rebuilds both trees from scratch (refit-only trees degrade under large motion; the
// reference rebuilds cloth_twist's trees every 10 frames).
//
// Kept lists (settings.reuseSlack s > 0): the queries use margin + 2s, and a detection that may
// keep the lists (detect(x, true)) first measures on the device how far every particle moved
// since they were found; if none moved more than s, every launch of the detection returns at
// once and the lists stand (they hold every pair nearer than the margin now:
// kernels/self_contact_detection.cuh). In a batch this is decided per world (kernels/
// list_gate.h). The caller asks for a real detection whenever the positions may have changed
// outside its own substeps (the first detection of every frame).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collision/contact_detector.h"
#include "collision/lbvh.h"
#include "kernels/particle_contact_records.cuh"
#include "kernels/runtime/buffer.h"
#include "kernels/self_contact_detection.cuh"

namespace weft {

/// Device views of the mesh the detector works on (owned by the solver's Model).
struct SelfContactTopology {
  int numParticles = 0, numTriangles = 0, numEdges = 0;
  const Int3* triangles = nullptr;           // (numTriangles)
  const Int4* edges = nullptr;               // (numEdges) (o0, o1, v0, v1)
  const Vec3* restPositions = nullptr;       // (numParticles) for the rest-shape exclusion
  const int* worlds = nullptr;               // (numParticles) world ids, or null (one world)
  const int* vertexFilterOffsets = nullptr;  // (numParticles + 1) topological filter
  const int* vertexFilterValues = nullptr;
  const int* edgeFilterOffsets = nullptr;  // (numEdges + 1)
  const int* edgeFilterValues = nullptr;
  // (numEdges) 1: the edge queries nothing and its list stays empty (held edges whose pairs are
  // all in other edges' lists: solver/contact_filter.h, quietEdges), or null (every edge queries).
  const unsigned char* quietEdges = nullptr;
  // Vertex adjacency for the per-particle records (all four null: no records are written).
  const int* triangleOffsets = nullptr;  // (numParticles + 1) vertex → (triangle, slot) pairs
  const int* triangleEntries = nullptr;
  const int* edgeOffsets = nullptr;  // (numParticles + 1) vertex → (edge, slot 0..3) pairs
  const int* edgeEntries = nullptr;
  // A batch of worlds (ModelDesc::worldRanges; host arrays, empty: one world): world k's
  // triangles and edges are [begin[k], begin[k + 1]); `worlds` then holds each particle's world.
  // The trees become forests and every query stays in its own world's subtree.
  std::vector<int> triangleWorldBegin, edgeWorldBegin;
  int numWorlds() const {
    return triangleWorldBegin.empty() ? 1 : int(triangleWorldBegin.size()) - 1;
  }
};

/// How a detection query walks its tree (kernels/self_contact_detection.cuh); all three give
/// identical lists.
enum class DetectionTraversal {
  Cooperative,  // a group of lanes per query (lanes per query from the launch table)
  Stackless,    // one thread per query, escape indices
  SharedStack,  // one thread per query, the reference's shared-memory stack
};
/// "cooperative", "stackless", "shared-stack".
const char* traversalName(DetectionTraversal traversal);

struct SelfContactDetectorSettings {
  float margin = 0.2f;            // detection distance [m]
  float restExclusion = 0.0f;     // rest-shape exclusion radius [m]
  float parallelEpsilon = 1e-5f;  // degenerate-edge threshold for edge–edge distances
  DetectionTraversal traversal = DetectionTraversal::Cooperative;
  int vertexTriangleCapacity = 16;  // initial slots per vertex
  int edgeEdgeCapacity = 32;        // initial slots per edge
  int triangleVertexCapacity = 16;  // initial slots per triangle
  float reuseSlack = 0.0f;  // s: lists kept while no particle moved more than s [m]; 0: never
};

class SelfContactDetector final : public ContactDetector {
 public:
  /// Builds both trees on `initialPositions` (device pointer) and allocates the lists.
  SelfContactDetector(const Device& device, const SelfContactTopology& topology,
                      const SelfContactDetectorSettings& settings, const Vec3* initialPositions);

  /// Refit and query; graph-capturable. With `mayKeepLists` and a reuse slack, the device
  /// decides whether the lists found last still hold (then nothing is rebuilt).
  void detect(const Vec3* positions, bool mayKeepLists = false);
  /// The query distance: the margin, plus twice the reuse slack.
  float queryDistance() const { return settings_.margin + 2.0f * settings_.reuseSlack; }
  /// Full rebuild of both trees at `positions` (then detect() as usual).
  void rebuild(const Vec3* positions);

  CandidateLists vertexTriangles() { return {vtCapacity_, vtItems_.data(), vtCounts_.data()}; }
  CandidateLists triangleVertices() { return {tvCapacity_, tvItems_.data(), tvCounts_.data()}; }
  CandidateLists edgeEdges() { return {eeCapacity_, eeItems_.data(), eeCounts_.data()}; }
  ContactStatus* status() { return status_.data(); }
  /// Every particle's pairs in gather order (empty without the adjacency in the topology):
  /// particle v's run is [offsets[v], offsets[v + 1]).
  const int* particleRecordOffsets() const { return particleOffsets_.data(); }
  const ContactRecord* particleRecords() const { return records_.data(); }
  long long particleRecordSlots() const { return static_cast<long long>(records_.size()); }
  /// The records' scan with the truncation pairs' (kernels/particle_contact_records.cuh), on the
  /// device: where each particle's records and pairs start, and their totals.
  ParticleContactOffsets particleContactOffsets() const {
    return {particleOffsets_.data(), topology_.numParticles};
  }
  /// The truncation's pairs: every vertex–triangle list entry (kind 3), then every edge–edge
  /// list entry (kind 4), each once; their counts are particleContactOffsets()'.
  const ContactRecord* truncationPairs() const { return truncationPairs_.data(); }
  long long truncationPairSlots() const { return static_cast<long long>(truncationPairs_.size()); }
  bool writesParticleRecords() const { return topology_.triangleOffsets != nullptr; }
  const Lbvh& triangleBvh() const { return *triangleBvh_; }
  const Lbvh& edgeBvh() const { return *edgeBvh_; }
  const SelfContactDetectorSettings& settings() const { return settings_; }

  // ContactDetector: the vertex-triangle, edge-edge and triangle-vertex lists.
  void resetStatus() override { status_.zero(); }
  /// Throws Error if a detection's records wrapped their 32-bit offsets (recordsWrapped).
  std::vector<ContactCount> counts() const override;
  /// Waits for the device and returns the status maxima since the last reset.
  ContactStatus readStatus() const { return status_.download()[0]; }
  std::vector<ContactCount> counts(const ContactStatus& status) const;
  bool fits(const ContactStatus& status) const { return allFit(counts(status)); }
  /// Grows every list that `status` overflowed (ContactDetector's rule). Returns what grew, e.g.
  /// "vertex-triangle 16 -> 40", or "" if everything fit. Invalidates captured graphs.
  std::string growToFit(const ContactStatus& status) {
    return ContactDetector::growToFit(counts(status));
  }

  int vertexTriangleCapacity() const { return vtCapacity_; }
  int edgeEdgeCapacity() const { return eeCapacity_; }
  int triangleVertexCapacity() const { return tvCapacity_; }

 private:
  void resize(std::span<const int> capacities) override;
  /// `gate`: which worlds' boxes are computed (default: all).
  void computeLeafBoxes(const Vec3* positions, const ListGate& gate = {});
  void writeParticleRecords(const ListGate& gate);
  bool keepsLists() const { return settings_.reuseSlack > 0.0f; }
  /// Records that always fit: every list full, for every particle it contributes to.
  size_t recordCapacity() const;
  /// Truncation pairs that always fit: every vertex and every edge list full.
  size_t truncationPairCapacity() const;

  const Device& device_;
  SelfContactTopology topology_;
  SelfContactDetectorSettings settings_;
  DeviceBuffer<Vec3> triangleLowers_, triangleUppers_;  // (numTriangles) leaf boxes
  DeviceBuffer<Vec3> edgeLowers_, edgeUppers_;          // (numEdges)
  std::unique_ptr<Lbvh> triangleBvh_, edgeBvh_;
  int vtCapacity_, eeCapacity_, tvCapacity_;
  DeviceBuffer<int> vtItems_, vtCounts_;  // (numParticles x vtCapacity_), (numParticles)
  DeviceBuffer<int> eeItems_, eeCounts_;  // (numEdges x eeCapacity_), (numEdges)
  // Unsorted hits of the cooperative traversal, the shape of the item lists (empty otherwise).
  DeviceBuffer<int> vtHits_, eeHits_;
  DeviceBuffer<int> tvItems_, tvCounts_;  // (numTriangles x tvCapacity_), (numTriangles)
  DeviceBuffer<ContactStatus> status_;    // (1)
  // Per-particle records (kernels/particle_contact_records.cuh).
  // (3 (numParticles + 1)) per particle: its records, its kind-3 and its kind-4 pairs (each
  // run's last 0); their one exclusive scan (ParticleContactOffsets)
  DeviceBuffer<int> particleTotals_, particleOffsets_;
  DeviceBuffer<ContactRecord> records_;          // (recordCapacity())
  DeviceBuffer<ContactRecord> truncationPairs_;  // (truncationPairCapacity())
  DeviceBuffer<unsigned char> scanStorage_;      // CUB's scratch for the scan
  // Kept lists (reuseSlack > 0; empty otherwise).
  DeviceBuffer<Vec3> listPositions_;  // (numParticles) where the lists were found
  // (worlds + 1): build world w's lists again?, then: any world's? (the trees' refit)
  DeviceBuffer<int> stale_, ones_;  // ones_: the same shape, all 1
};

}  // namespace weft
