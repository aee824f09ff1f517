#include "solver/cloth_part.h"

#include <algorithm>

namespace weft {

ClothPart::ClothPart(const Device& device, const ModelDesc& desc, const SolverOptions& options,
                     double substepSeconds, int substepsPerFrame)
    : model_(device, desc, options),
      state_(device, desc),
      scratch_(device, model_, options),
      solver_(device, model_, options, substepSeconds),
      selfContact_(options.selfContact.enabled),
      rebuildInterval_(options.selfContact.bvhRebuildInterval) {
  if (selfContact_) {
    int perSubstep = 1;  // before the forward step, then per the detection interval
    for (int i = 0; i < options.iterations; ++i)
      perSubstep += selfContactDetectionDue(options.selfContact.detectionInterval, i) ? 1 : 0;
    detectionsPerFrame_ = perSubstep * substepsPerFrame;
  }
}

std::vector<BufferRange> ClothPart::carried() {
  if (!selfContact_) return {};  // nothing can overflow, so no frame runs again
  return state_.carried();
}

int ClothPart::frameKind(long long frame) const {
  const bool rebuild =
      selfContact_ && rebuildInterval_ > 0 && frame > 0 && frame % rebuildInterval_ == 0;
  return rebuild ? 1 : 0;
}

void ClothPart::beginFrame(int kind) {
  if (!selfContact_) return;
  scratch_.selfContact->resetStatus();
  if (kind == 1) scratch_.selfContact->rebuild(state_.positions.data());
}

std::optional<std::string> ClothPart::growIfOverflowed() {
  if (!selfContact_) return std::nullopt;
  return scratch_.selfContact->growIfOverflowed();
}

bool ClothPart::endFrame() {
  if (!selfContact_) return false;
  const SelfContactDetector& detector = *scratch_.selfContact;
  const ContactStatus status = detector.readStatus();
  contactReport_.lastFrame = status;
  ContactStatus& largest = contactReport_.largest;
  largest.maxVertexTriangle = std::max(largest.maxVertexTriangle, status.maxVertexTriangle);
  largest.maxEdgeEdge = std::max(largest.maxEdgeEdge, status.maxEdgeEdge);
  largest.maxTriangleVertex = std::max(largest.maxTriangleVertex, status.maxTriangleVertex);
  contactReport_.vertexTriangleCapacity = detector.vertexTriangleCapacity();
  contactReport_.edgeEdgeCapacity = detector.edgeEdgeCapacity();
  contactReport_.triangleVertexCapacity = detector.triangleVertexCapacity();
  contactReport_.detections += detectionsPerFrame_;
  contactReport_.listBuilds += status.listBuilds;
  return false;
}

}  // namespace weft
