#include "collision/self_contact_detector.h"

#include <algorithm>

#include "kernels/compute_aabbs.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"

namespace weft {

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
  if (settings.traversal == DetectionTraversal::Cooperative) {
    vtHits_ = DeviceBuffer<int>(device, vtItems_.size());
    eeHits_ = DeviceBuffer<int>(device, eeItems_.size());
  }
  if (!(settings.margin > 0.0f)) throw Error("the self-contact margin must be positive");
  rebuild(initialPositions);
}

void SelfContactDetector::computeLeafBoxes(const Vec3* positions) {
  launch(device_, topology_.numTriangles,
         ComputeTriangleAabbs{positions, topology_.triangles, triangleLowers_.data(),
                              triangleUppers_.data()});
  launch(device_, topology_.numEdges,
         ComputeEdgeAabbs{positions, topology_.edges, edgeLowers_.data(), edgeUppers_.data()});
}

void SelfContactDetector::rebuild(const Vec3* positions) {
  computeLeafBoxes(positions);
  triangleBvh_->build(triangleLowers_.data(), triangleUppers_.data());
  edgeBvh_->build(edgeLowers_.data(), edgeUppers_.data());
}

void SelfContactDetector::detect(const Vec3* positions) {
  // Refit the trees to the current positions (the leaf boxes are exact; queries are inflated).
  computeLeafBoxes(positions);
  triangleBvh_->refit(triangleLowers_.data(), triangleUppers_.data());
  edgeBvh_->refit(edgeLowers_.data(), edgeUppers_.data());

  // Vertex → triangles.
  const VertexTriangleQuery vt{triangleBvh_->view(),
                               settings_.margin,
                               settings_.restExclusion,
                               positions,
                               topology_.restPositions,
                               topology_.worlds,
                               topology_.triangles,
                               topology_.vertexFilterOffsets,
                               topology_.vertexFilterValues,
                               vertexTriangles(),
                               status()};
  switch (settings_.traversal) {
    case DetectionTraversal::Cooperative:
      launchGroup(device_, topology_.numParticles,
                  VertexTriangleCollisionDetectionCooperative{vt, vtHits_.data()});
      break;
    case DetectionTraversal::Stackless:
      launch(device_, topology_.numParticles, VertexTriangleCollisionDetectionStackless{vt});
      break;
    case DetectionTraversal::SharedStack:
      launch(device_, topology_.numParticles, VertexTriangleCollisionDetection{vt});
      break;
  }

  // Edge → edges.
  const EdgeEdgeQuery ee{edgeBvh_->view(),           settings_.margin, settings_.restExclusion,
                         settings_.parallelEpsilon,  positions,        topology_.restPositions,
                         topology_.worlds,           topology_.edges,  topology_.edgeFilterOffsets,
                         topology_.edgeFilterValues, edgeEdges(),      status()};
  switch (settings_.traversal) {
    case DetectionTraversal::Cooperative:
      launchGroup(device_, topology_.numEdges,
                  EdgeCollidingEdgesDetectionCooperative{ee, eeHits_.data()});
      break;
    case DetectionTraversal::Stackless:
      launch(device_, topology_.numEdges, EdgeCollidingEdgesDetectionStackless{ee});
      break;
    case DetectionTraversal::SharedStack:
      launch(device_, topology_.numEdges, EdgeCollidingEdgesDetection{ee});
      break;
  }

  // Triangle → vertices: transpose, then order each list.
  tvCounts_.zero();
  launch(device_, topology_.numParticles,
         CollectTriangleCollidingVertices{vertexTriangles(), triangleVertices()});
  launch(device_, topology_.numTriangles,
         SortTriangleCollidingVertices{triangleVertices(), status()});
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
  if (settings_.traversal == DetectionTraversal::Cooperative) {
    if (vtHits_.size() != vtItems_.size()) vtHits_ = DeviceBuffer<int>(device_, vtItems_.size());
    if (eeHits_.size() != eeItems_.size()) eeHits_ = DeviceBuffer<int>(device_, eeItems_.size());
  }
  grow("triangle-vertex", s.maxTriangleVertex, tvCapacity_, tvItems_, topology_.numTriangles);
  return grew;
}

}  // namespace weft
