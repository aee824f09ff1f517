#include "solver/simulation.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

Simulation::Simulation(const Device& device, const ModelDesc& desc, const SolverOptions& options,
                       double frameSeconds, int substepsPerFrame, bool useGraphs)
    : device_(device),
      model_(device, desc, options),
      state_(device, desc),
      scratch_(device, model_, options),
      solver_(device, model_, options, frameSeconds / std::max(substepsPerFrame, 1)),
      substeps_(substepsPerFrame),
      selfContact_(options.selfContact.enabled),
      rebuildInterval_(options.selfContact.bvhRebuildInterval),
      frames_(device, 2, useGraphs) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  if (selfContact_) {
    int perSubstep = 1;  // before the forward step, then per the detection interval
    for (int i = 0; i < options.iterations; ++i)
      perSubstep += selfContactDetectionDue(options.selfContact.detectionInterval, i) ? 1 : 0;
    detectionsPerFrame_ = perSubstep * substepsPerFrame;
    for (BufferRange& range : state_.carried()) frames_.carry(std::move(range));
  }
}

void Simulation::runFrameBody(bool rebuild) {
  if (selfContact_) {
    scratch_.selfContact->resetStatus();
    if (rebuild) scratch_.selfContact->rebuild(state_.positions.data());
  }
  for (int s = 0; s < substeps_; ++s) solver_.step(state_, scratch_, s);
}

void Simulation::advanceFrame() {
  const long long done = frames_.framesDone();
  const bool rebuild =
      selfContact_ && rebuildInterval_ > 0 && done > 0 && done % rebuildInterval_ == 0;
  frames_.advance(
      rebuild ? 1 : 0, [this, rebuild] { runFrameBody(rebuild); },
      [this]() -> std::optional<std::string> {
        if (!selfContact_) return std::nullopt;
        SelfContactDetector& detector = *scratch_.selfContact;
        const ContactStatus status = detector.readStatus();
        if (detector.fits(status)) return std::nullopt;
        return detector.growToFit(status);
      });
  contactReport_.regrowths = frames_.regrowths();
  if (selfContact_) {
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
  }
}

}  // namespace weft
