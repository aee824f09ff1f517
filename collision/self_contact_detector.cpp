#include "collision/self_contact_detector.h"

#include <algorithm>
#include <numeric>

#if defined(__CUDACC__)
#include <cub/device/device_scan.cuh>
#endif

#include "kernels/compute_aabbs.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

namespace {

/// One detection query per primitive with the chosen traversal (the three kernels of a query
/// kind: cooperative, stackless, shared-memory stack).
template <class Cooperative, class Stackless, class SharedStack, class Query>
void launchQueries(const Device& device, DetectionTraversal traversal, int count,
                   const Query& query, int* hits) {
  switch (traversal) {
    case DetectionTraversal::Cooperative:
      launchGroup(device, count, Cooperative{query, hits});
      break;
    case DetectionTraversal::Stackless:
      launch(device, count, Stackless{query});
      break;
    case DetectionTraversal::SharedStack:
      launch(device, count, SharedStack{query});
      break;
  }
}

}  // namespace

const char* traversalName(DetectionTraversal traversal) {
  switch (traversal) {
    case DetectionTraversal::Cooperative:
      return "cooperative";
    case DetectionTraversal::Stackless:
      return "stackless";
    case DetectionTraversal::SharedStack:
      return "shared-stack";
  }
  return "?";
}

SelfContactDetector::SelfContactDetector(const Device& device, const SelfContactTopology& topology,
                                         const SelfContactDetectorSettings& settings,
                                         const Vec3* initialPositions)
    : device_(device),
      topology_(topology),
      settings_(settings),
      triangleLowers_(device, size_t(topology.numTriangles)),
      triangleUppers_(device, size_t(topology.numTriangles)),
      edgeLowers_(device, size_t(topology.numEdges)),
      edgeUppers_(device, size_t(topology.numEdges)),
      triangleBvh_(
          std::make_unique<Lbvh>(device, topology.numTriangles, topology.triangleWorldBegin)),
      edgeBvh_(std::make_unique<Lbvh>(device, topology.numEdges, topology.edgeWorldBegin)),
      vtCapacity_(std::max(settings.vertexTriangleCapacity, 1)),
      eeCapacity_(std::max(settings.edgeEdgeCapacity, 1)),
      tvCapacity_(std::max(settings.triangleVertexCapacity, 1)),
      vtItems_(device, size_t(topology.numParticles) * vtCapacity_),
      vtCounts_(device, size_t(topology.numParticles)),
      eeItems_(device, size_t(topology.numEdges) * eeCapacity_),
      eeCounts_(device, size_t(topology.numEdges)),
      tvItems_(device, size_t(topology.numTriangles) * tvCapacity_),
      tvCounts_(device, size_t(topology.numTriangles)),
      status_(device, size_t(1)) {
  if (writesParticleRecords()) {
    // Three runs of numParticles + 1 counts, scanned as one (ParticleContactOffsets).
    const size_t n = 3 * (size_t(topology.numParticles) + 1);
    particleTotals_ = DeviceBuffer<int>(device, n);
    particleTotals_.zero();
    particleOffsets_ = DeviceBuffer<int>(device, n);
    particleOffsets_.zero();
    records_ = DeviceBuffer<ContactRecord>(device, recordCapacity());
    truncationPairs_ = DeviceBuffer<ContactRecord>(device, truncationPairCapacity());
    if (device.isCuda()) {
#if defined(__CUDACC__)
      size_t bytes = 0;
      WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, particleTotals_.data(),
                                                    particleOffsets_.data(), int(n),
                                                    static_cast<cudaStream_t>(device.stream())));
      scanStorage_ = DeviceBuffer<unsigned char>(device, std::max<size_t>(bytes, 1));
#else
      throw Error("internal error: collision/self_contact_detector.cpp was not compiled as CUDA");
#endif
    }
  }
  if (settings.traversal == DetectionTraversal::Cooperative) {
    vtHits_ = DeviceBuffer<int>(device, vtItems_.size());
    eeHits_ = DeviceBuffer<int>(device, eeItems_.size());
  }
  if (!(settings.margin > 0.0f)) throw Error("the self-contact margin must be positive");
  if (!(settings.reuseSlack >= 0.0f))
    throw Error("the self-contact list reuse slack must be zero or positive");
  if (topology.numWorlds() > 1 &&
      (!topology.worlds || int(topology.edgeWorldBegin.size()) != topology.numWorlds() + 1))
    throw Error("internal error: a self-contact batch needs world ids and edge ranges");
  if (keepsLists()) {
    listPositions_ = DeviceBuffer<Vec3>(device, size_t(topology.numParticles));
    listPositions_.zero();
    const size_t flags = size_t(topology.numWorlds()) + 1;
    stale_ = DeviceBuffer<int>(device, flags);
    stale_.zero();
    ones_ = DeviceBuffer<int>(device, std::vector<int>(flags, 1));
  }
  rebuild(initialPositions);
}

void SelfContactDetector::computeLeafBoxes(const Vec3* positions, const ListGate& gate) {
  launch(device_, topology_.numTriangles,
         ComputeTriangleAabbs{positions, topology_.triangles, triangleLowers_.data(),
                              triangleUppers_.data(), tvCounts_.data(), gate});
  launch(
      device_, topology_.numEdges,
      ComputeEdgeAabbs{positions, topology_.edges, edgeLowers_.data(), edgeUppers_.data(), gate});
}

void SelfContactDetector::rebuild(const Vec3* positions) {
  computeLeafBoxes(positions);
  triangleBvh_->build(triangleLowers_.data(), triangleUppers_.data());
  edgeBvh_->build(edgeLowers_.data(), edgeUppers_.data());
}

void SelfContactDetector::detect(const Vec3* positions, bool mayKeepLists) {
  // With a reuse slack, the device decides whether this detection builds each world's lists
  // (its flag in stale_ ≠ 0) or keeps them; every launch below then reads the flags.
  ListGate gate;
  const int* anyStale = nullptr;
  if (keepsLists()) {
    const int worlds = topology_.numWorlds();
    if (mayKeepLists) {
      stale_.zero();
      launch(device_, topology_.numParticles,
             MeasureListDrift{settings_.reuseSlack * settings_.reuseSlack, positions,
                              listPositions_.data(), worlds > 1 ? topology_.worlds : nullptr,
                              stale_.data(), stale_.data() + worlds});
    } else {
      stale_.copyFrom(ones_);
    }
    gate = {stale_.data(), worlds > 1 ? topology_.worlds : nullptr};
    anyStale = stale_.data() + worlds;
  }

  // Refit the trees to the current positions (the leaf boxes are exact; queries are inflated).
  // compute_tri_aabbs also zeroes the triangle lists' counts for the transpose below. A world
  // that keeps its lists keeps its leaf boxes too, so refitting its subtree changes nothing.
  computeLeafBoxes(positions, gate);
  triangleBvh_->refit(triangleLowers_.data(), triangleUppers_.data(), anyStale);
  edgeBvh_->refit(edgeLowers_.data(), edgeUppers_.data(), anyStale);

  // Vertex → triangles.
  const VertexTriangleQuery vt{triangleBvh_->view(),
                               queryDistance(),
                               settings_.restExclusion,
                               positions,
                               topology_.restPositions,
                               topology_.worlds,
                               topology_.triangles,
                               topology_.vertexFilterOffsets,
                               topology_.vertexFilterValues,
                               vertexTriangles(),
                               status(),
                               gate};
  launchQueries<VertexTriangleCollisionDetectionCooperative,
                VertexTriangleCollisionDetectionStackless, VertexTriangleCollisionDetection>(
      device_, settings_.traversal, topology_.numParticles, vt, vtHits_.data());

  // Edge → edges.
  const EdgeEdgeQuery ee{edgeBvh_->view(),
                         queryDistance(),
                         settings_.restExclusion,
                         settings_.parallelEpsilon,
                         positions,
                         topology_.restPositions,
                         topology_.worlds,
                         topology_.edges,
                         topology_.edgeFilterOffsets,
                         topology_.edgeFilterValues,
                         topology_.quietEdges,
                         edgeEdges(),
                         status(),
                         gate};
  launchQueries<EdgeCollidingEdgesDetectionCooperative, EdgeCollidingEdgesDetectionStackless,
                EdgeCollidingEdgesDetection>(device_, settings_.traversal, topology_.numEdges, ee,
                                             eeHits_.data());

  // Triangle → vertices: transpose (the counts were zeroed with the boxes), then order each list.
  // The transpose also records where the lists were found.
  launch(device_, topology_.numParticles,
         CollectTriangleCollidingVertices{vertexTriangles(), triangleVertices(), gate, positions,
                                          listPositions_.data()});
  launch(device_, topology_.numTriangles,
         SortTriangleCollidingVertices{triangleVertices(), status(), topology_.triangles, gate});
  // The records are one flat list over every particle, so a world that builds its lists moves
  // the records of the worlds after it: they are all written again whenever any world builds
  // (from the kept lists, the same records).
  if (writesParticleRecords()) writeParticleRecords(ListGate{anyStale, nullptr});
}

size_t SelfContactDetector::recordCapacity() const {
  // A particle's records: its own list, the lists of its triangles, the lists of the edges it
  // is an endpoint of. Summed over particles: every vertex list once, every triangle list three
  // times, every edge list twice.
  return std::max<size_t>(size_t(topology_.numParticles) * size_t(vtCapacity_) +
                              3 * size_t(topology_.numTriangles) * size_t(tvCapacity_) +
                              2 * size_t(topology_.numEdges) * size_t(eeCapacity_),
                          1);
}

size_t SelfContactDetector::truncationPairCapacity() const {
  // Every vertex list once (kind 3), every edge list once (kind 4, under its first endpoint).
  return std::max<size_t>(size_t(topology_.numParticles) * size_t(vtCapacity_) +
                              size_t(topology_.numEdges) * size_t(eeCapacity_),
                          1);
}

void SelfContactDetector::writeParticleRecords(const ListGate& gate) {
  const ParticleContactLists lists{topology_.triangleOffsets,
                                   topology_.triangleEntries,
                                   topology_.edgeOffsets,
                                   topology_.edgeEntries,
                                   vertexTriangles(),
                                   triangleVertices(),
                                   edgeEdges()};
  const int n = topology_.numParticles;
  // Three counts a particle (its records, its kind-3 and its kind-4 records: the truncation's
  // pairs), scanned in one pass (ParticleContactOffsets).
  launch(device_, n, CountParticleSelfContacts{lists, particleTotals_.data(), n, gate});
  // Kept lists leave the totals as they were, so the scan (not gated) gives the same offsets.
  const int count = 3 * (n + 1);
  if (device_.isCuda()) {
#if defined(__CUDACC__)
    size_t bytes = scanStorage_.size();
    WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
        scanStorage_.data(), bytes, particleTotals_.data(), particleOffsets_.data(), count,
        static_cast<cudaStream_t>(device_.stream())));
#endif
  } else {
    // In unsigned arithmetic, so that a total past 2^31 wraps as the device's does (defined).
    std::exclusive_scan(particleTotals_.data(), particleTotals_.data() + count,
                        particleOffsets_.data(), 0u);
  }
  const TruncationPairsOut truncation{particleContactOffsets(), truncationPairs_.data(),
                                      truncationPairSlots()};
  launch(device_, n,
         WriteParticleSelfContacts{lists, particleOffsets_.data(), records_.data(),
                                   static_cast<long long>(records_.size()), status(), gate,
                                   truncation});
}

std::vector<ContactCount> SelfContactDetector::counts() const {
  const ContactStatus s = readStatus();
  if (s.recordsWrapped)
    throw Error(
        "self-contact: one detection found more than 2^31 contact records (their 32-bit offsets "
        "wrapped, so the frame's contacts are incomplete): run fewer worlds or a coarser mesh "
        "(docs/PERFORMANCE.md, \"The truncation's pairs\")");
  return counts(s);
}

std::vector<ContactCount> SelfContactDetector::counts(const ContactStatus& s) const {
  return {{"vertex-triangle", s.maxVertexTriangle, vtCapacity_},
          {"edge-edge", s.maxEdgeEdge, eeCapacity_},
          {"triangle-vertex", s.maxTriangleVertex, tvCapacity_}};
}

void SelfContactDetector::resize(std::span<const int> capacities) {
  auto resizeList = [&](int next, int& capacity, DeviceBuffer<int>& items, int primitives) {
    if (next == capacity) return;
    capacity = next;
    items = DeviceBuffer<int>(device_, size_t(primitives) * size_t(capacity));
  };
  resizeList(capacities[0], vtCapacity_, vtItems_, topology_.numParticles);
  resizeList(capacities[1], eeCapacity_, eeItems_, topology_.numEdges);
  resizeList(capacities[2], tvCapacity_, tvItems_, topology_.numTriangles);
  if (writesParticleRecords() && records_.size() < recordCapacity())
    records_ = DeviceBuffer<ContactRecord>(device_, recordCapacity());
  if (writesParticleRecords() && truncationPairs_.size() < truncationPairCapacity())
    truncationPairs_ = DeviceBuffer<ContactRecord>(device_, truncationPairCapacity());
  if (settings_.traversal == DetectionTraversal::Cooperative) {
    if (vtHits_.size() != vtItems_.size()) vtHits_ = DeviceBuffer<int>(device_, vtItems_.size());
    if (eeHits_.size() != eeItems_.size()) eeHits_ = DeviceBuffer<int>(device_, eeItems_.size());
  }
}

}  // namespace weft
