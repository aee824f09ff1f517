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
      triangleBvh_(std::make_unique<Lbvh>(device, topology.numTriangles)),
      edgeBvh_(std::make_unique<Lbvh>(device, topology.numEdges)),
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
    const size_t n = size_t(topology.numParticles) + 1;
    recordTotals_ = DeviceBuffer<int>(device, n);
    recordTotals_.zero();
    recordOffsets_ = DeviceBuffer<int>(device, n);
    recordOffsets_.zero();
    records_ = DeviceBuffer<ContactRecord>(device, recordCapacity());
    if (device.isCuda()) {
#if defined(__CUDACC__)
      size_t bytes = 0;
      WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, recordTotals_.data(),
                                                    recordOffsets_.data(), int(n),
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
  if (keepsLists()) {
    listPositions_ = DeviceBuffer<Vec3>(device, size_t(topology.numParticles));
    listPositions_.zero();
    stale_ = DeviceBuffer<int>(device, size_t(1));
    stale_.zero();
    one_ = DeviceBuffer<int>(device, std::vector<int>{1});
  }
  rebuild(initialPositions);
}

void SelfContactDetector::computeLeafBoxes(const Vec3* positions, const int* onlyIf) {
  launch(device_, topology_.numTriangles,
         ComputeTriangleAabbs{positions, topology_.triangles, triangleLowers_.data(),
                              triangleUppers_.data(), tvCounts_.data(), onlyIf});
  launch(
      device_, topology_.numEdges,
      ComputeEdgeAabbs{positions, topology_.edges, edgeLowers_.data(), edgeUppers_.data(), onlyIf});
}

void SelfContactDetector::rebuild(const Vec3* positions) {
  computeLeafBoxes(positions);
  triangleBvh_->build(triangleLowers_.data(), triangleUppers_.data());
  edgeBvh_->build(edgeLowers_.data(), edgeUppers_.data());
}

void SelfContactDetector::detect(const Vec3* positions, bool mayKeepLists) {
  // With a reuse slack, the device decides whether this detection builds the lists (stale_ ≠ 0)
  // or keeps them; every launch below then reads the flag.
  const int* onlyIf = nullptr;
  if (keepsLists()) {
    if (mayKeepLists) {
      stale_.zero();
      launch(device_, topology_.numParticles,
             MeasureListDrift{settings_.reuseSlack * settings_.reuseSlack, positions,
                              listPositions_.data(), stale_.data()});
    } else {
      stale_.copyFrom(one_);
    }
    onlyIf = stale_.data();
  }

  // Refit the trees to the current positions (the leaf boxes are exact; queries are inflated).
  // compute_tri_aabbs also zeroes the triangle lists' counts for the transpose below.
  computeLeafBoxes(positions, onlyIf);
  triangleBvh_->refit(triangleLowers_.data(), triangleUppers_.data(), onlyIf);
  edgeBvh_->refit(edgeLowers_.data(), edgeUppers_.data(), onlyIf);

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
                               onlyIf};
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
                         onlyIf};
  launchQueries<EdgeCollidingEdgesDetectionCooperative, EdgeCollidingEdgesDetectionStackless,
                EdgeCollidingEdgesDetection>(device_, settings_.traversal, topology_.numEdges, ee,
                                             eeHits_.data());

  // Triangle → vertices: transpose (the counts were zeroed with the boxes), then order each list.
  // The transpose also records where the lists were found.
  launch(device_, topology_.numParticles,
         CollectTriangleCollidingVertices{vertexTriangles(), triangleVertices(), onlyIf, positions,
                                          listPositions_.data()});
  launch(device_, topology_.numTriangles,
         SortTriangleCollidingVertices{triangleVertices(), status(), onlyIf});
  if (writesParticleRecords()) writeParticleRecords(onlyIf);
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

void SelfContactDetector::writeParticleRecords(const int* onlyIf) {
  const ParticleContactLists lists{topology_.triangleOffsets,
                                   topology_.triangleEntries,
                                   topology_.edgeOffsets,
                                   topology_.edgeEntries,
                                   vertexTriangles(),
                                   triangleVertices(),
                                   edgeEdges()};
  const int n = topology_.numParticles;
  // Kept lists leave the totals as they were, so the scan (not gated) gives the same offsets.
  launch(device_, n, CountParticleSelfContacts{lists, recordTotals_.data(), onlyIf});
  if (device_.isCuda()) {
#if defined(__CUDACC__)
    size_t bytes = scanStorage_.size();
    WEFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scanStorage_.data(), bytes, recordTotals_.data(),
                                                  recordOffsets_.data(), n + 1,
                                                  static_cast<cudaStream_t>(device_.stream())));
#endif
  } else {
    std::exclusive_scan(recordTotals_.data(), recordTotals_.data() + n + 1, recordOffsets_.data(),
                        0);
  }
  launch(device_, n,
         WriteParticleSelfContacts{lists, recordOffsets_.data(), records_.data(), onlyIf});
}

bool SelfContactDetector::fits(const ContactStatus& s) const {
  return s.maxVertexTriangle <= vtCapacity_ && s.maxEdgeEdge <= eeCapacity_ &&
         s.maxTriangleVertex <= tvCapacity_;
}

std::string SelfContactDetector::growToFit(const ContactStatus& s) {
  std::string grew;
  auto grow = [&](const char* name, int needed, int& capacity, DeviceBuffer<int>& items,
                  int primitives) {
    if (needed <= capacity) return;
    const int next = std::max(2 * capacity, needed + needed / 4);
    grew += std::string(grew.empty() ? "" : ", ") + name + " " + std::to_string(capacity) + " -> " +
            std::to_string(next);
    capacity = next;
    items = DeviceBuffer<int>(device_, size_t(primitives) * size_t(capacity));
  };
  grow("vertex-triangle", s.maxVertexTriangle, vtCapacity_, vtItems_, topology_.numParticles);
  grow("edge-edge", s.maxEdgeEdge, eeCapacity_, eeItems_, topology_.numEdges);
  grow("triangle-vertex", s.maxTriangleVertex, tvCapacity_, tvItems_, topology_.numTriangles);
  if (writesParticleRecords() && records_.size() < recordCapacity())
    records_ = DeviceBuffer<ContactRecord>(device_, recordCapacity());
  if (settings_.traversal == DetectionTraversal::Cooperative) {
    if (vtHits_.size() != vtItems_.size()) vtHits_ = DeviceBuffer<int>(device_, vtItems_.size());
    if (eeHits_.size() != eeItems_.size()) eeHits_ = DeviceBuffer<int>(device_, eeItems_.size());
  }
  return grew;
}

}  // namespace weft
