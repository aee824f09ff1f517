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
      useGraphs_(useGraphs && device.isCuda()),
      graph_(device),
      rebuildGraph_(device),
      frameTimer_(device),
      selfContact_(options.selfContact.enabled),
      rebuildInterval_(options.selfContact.bvhRebuildInterval) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  if (selfContact_) {
    int perSubstep = 1;  // before the forward step, then per the detection interval
    for (int i = 0; i < options.iterations; ++i)
      perSubstep += selfContactDetectionDue(options.selfContact.detectionInterval, i) ? 1 : 0;
    detectionsPerFrame_ = perSubstep * substepsPerFrame;
    savedPositions_ = DeviceBuffer<Vec3>(device, size_t(model_.numParticles));
    savedVelocities_ = DeviceBuffer<Vec3>(device, size_t(model_.numParticles));
    savedSubstep_ = DeviceBuffer<long long>(device, size_t(1));
  }
}

void Simulation::runFrameBody(bool rebuild) {
  if (selfContact_) {
    savedPositions_.copyFrom(state_.positions);
    savedVelocities_.copyFrom(state_.velocities);
    savedSubstep_.copyFrom(state_.substep);
    scratch_.selfContact->resetStatus();
    if (rebuild) scratch_.selfContact->rebuild(state_.positions.data());
  }
  for (int s = 0; s < substeps_; ++s) solver_.step(state_, scratch_, s);
}

void Simulation::runFrameOnce(bool rebuild) {
  FrameGraph& graph = rebuild ? rebuildGraph_ : graph_;
  if (useGraphs_ && !graph.captured()) graph.capture([this, rebuild] { runFrameBody(rebuild); });
  frameTimer_.start();
  if (useGraphs_)
    graph.replay();
  else
    runFrameBody(rebuild);
  frameTimer_.stop();
  lastFrameMs_ = frameTimer_.elapsedMs();  // waits for the frame
  device_.synchronize();                   // surfaces asynchronous errors here, with a message
}

void Simulation::advanceFrame() {
  const bool rebuild =
      selfContact_ && rebuildInterval_ > 0 && frames_ > 0 && frames_ % rebuildInterval_ == 0;
  runFrameOnce(rebuild);
  if (selfContact_) {
    SelfContactDetector& detector = *scratch_.selfContact;
    for (ContactStatus status = detector.readStatus(); !detector.fits(status);
         status = detector.readStatus()) {
      // Something did not fit: restore the frame's start, grow, capture again, run again.
      state_.positions.copyFrom(savedPositions_);
      state_.velocities.copyFrom(savedVelocities_);
      state_.substep.copyFrom(savedSubstep_);
      const std::string grew = detector.growToFit(status);
      contactReport_.regrowths.push_back("frame " + std::to_string(frames_ + 1) + ": " + grew +
                                         " (frame run again)");
      graph_.reset();
      rebuildGraph_.reset();
      runFrameOnce(rebuild);
    }
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
  ++frames_;
}

}  // namespace weft
