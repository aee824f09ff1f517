#include "solver/rigid_simulation.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

namespace {

template <class T>
std::pair<void*, size_t> range(DeviceBuffer<T>& b) {
  return {b.data(), b.bytes()};
}

}  // namespace

RigidSimulation::RigidSimulation(const Device& device, const RigidDesc& desc,
                                 const RigidSolverOptions& options, double frameSeconds,
                                 int substepsPerFrame, bool useGraphs)
    : device_(device),
      model_(device, desc),
      state_(device, desc),
      scratch_(device, model_, state_, options),
      solver_(device, model_, options, frameSeconds / std::max(substepsPerFrame, 1)),
      substeps_(substepsPerFrame),
      useGraphs_(useGraphs && device.isCuda()),
      graph_(device),
      frameTimer_(device) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  if (substepsPerFrame % options.collideInterval != 0)
    throw Error("the rigid solver's collideInterval (" + std::to_string(options.collideInterval) +
                ") must divide the substeps per frame (" + std::to_string(substepsPerFrame) +
                "), so that every frame starts with a contact detection");
  using S = RigidSimulation;
  carried_.emplace_back(Carried{[](S& s) { return range(s.state_.poses); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.state_.linearVelocities); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.state_.angularVelocities); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.state_.substep); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.startPoses); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.jointLambda); }, {}});
  carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.dahl); }, {}});
  if (scratch_.detector) {
    carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.previousRows); }, {}});
    carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.previousCount); }, {}});
    carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.previousShapeOffsets); }, {}});
    carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.previousMidpoints); }, {}});
    carried_.emplace_back(Carried{[](S& s) { return range(s.scratch_.previousState); }, {}});
  }
  allocateSaved();
  if (options.recordConvergence) {
    convergence_.iterations = options.iterations;
    scratch_.iterationSteps =
        DeviceBuffer<float>(device_, 2 * size_t(substeps_) * size_t(options.iterations));
  }
}

void RigidSimulation::allocateSaved() {
  for (Carried& c : carried_) c.saved = DeviceBuffer<unsigned char>(device_, c.where(*this).second);
}

void RigidSimulation::runFrameBody() {
  if (scratch_.detector) {
    for (Carried& c : carried_) {
      const auto [ptr, bytes] = c.where(*this);
      detail::copyBytesAsync(device_, c.saved.data(), ptr, bytes);
    }
    scratch_.detector->resetStatus();
  }
  if (!scratch_.iterationSteps.empty()) scratch_.iterationSteps.zero();
  for (int s = 0; s < substeps_; ++s) solver_.step(state_, scratch_, s);
}

void RigidSimulation::runFrameOnce() {
  if (useGraphs_ && !graph_.captured()) graph_.capture([this] { runFrameBody(); });
  frameTimer_.start();
  if (useGraphs_)
    graph_.replay();
  else
    runFrameBody();
  frameTimer_.stop();
  lastFrameMs_ = frameTimer_.elapsedMs();  // waits for the frame
  device_.synchronize();
}

void RigidSimulation::advanceFrame() {
  runFrameOnce();
  if (scratch_.detector) {
    RigidContactDetector& detector = *scratch_.detector;
    for (RigidContactStatus status = detector.readStatus(); !detector.fits(status);
         status = detector.readStatus()) {
      // Something did not fit: grow, put the frame's start back, capture again, run again.
      const std::string grew = detector.growToFit(status);
      scratch_.resizeRows();
      for (Carried& c : carried_) {
        const auto [ptr, bytes] = c.where(*this);
        detail::copyBytesAsync(device_, ptr, c.saved.data(), std::min(bytes, c.saved.size()));
      }
      device_.synchronize();
      allocateSaved();
      contactReport_.regrowths.push_back("frame " + std::to_string(frames_ + 1) + ": " + grew +
                                         " (frame run again)");
      graph_.reset();
      runFrameOnce();
    }
    const RigidContactStatus status = detector.readStatus();
    contactReport_.lastFrameRows = status.maxContacts;
    contactReport_.largestRows = std::max(contactReport_.largestRows, status.maxContacts);
    contactReport_.largestPartners = std::max(contactReport_.largestPartners, status.maxShapePairs);
    contactReport_.rowCapacity = detector.rowCapacity();
    contactReport_.pairCapacity = detector.pairCapacity();
    contactReport_.detections += substeps_ / solver_.options().collideInterval;
    contactReport_.pairListBuilds += status.pairListBuilds;
  }
  if (!scratch_.iterationSteps.empty()) {
    const std::vector<float> steps = scratch_.iterationSteps.download();
    for (size_t i = 0; i + 1 < steps.size(); i += 2) {
      convergence_.translation.push_back(steps[i]);
      convergence_.rotation.push_back(steps[i + 1]);
    }
  }
  ++frames_;
}

}  // namespace weft
