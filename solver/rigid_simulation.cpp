#include "solver/rigid_simulation.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

RigidSimulation::RigidSimulation(const Device& device, const RigidDesc& desc,
                                 const RigidSolverOptions& options, double frameSeconds,
                                 int substepsPerFrame, bool useGraphs)
    : device_(device),
      model_(device, desc),
      state_(device, desc),
      scratch_(device, model_, state_, options),
      solver_(device, model_, options, frameSeconds / std::max(substepsPerFrame, 1)),
      substeps_(substepsPerFrame),
      frames_(device, 1, useGraphs) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  if (substepsPerFrame % options.collideInterval != 0)
    throw Error("the rigid solver's collideInterval (" + std::to_string(options.collideInterval) +
                ") must divide the substeps per frame (" + std::to_string(substepsPerFrame) +
                "), so that every frame starts with a contact detection");
  // Without contacts nothing can overflow, and no frame runs again.
  if (scratch_.detector)
    for (BufferRange& range : state_.carried()) frames_.carry(std::move(range));
  if (options.recordConvergence) {
    convergence_.iterations = options.iterations;
    scratch_.iterationSteps =
        DeviceBuffer<float>(device_, 2 * size_t(substeps_) * size_t(options.iterations));
  }
}

void RigidSimulation::runFrameBody() {
  if (scratch_.detector) scratch_.detector->resetStatus();
  if (!scratch_.iterationSteps.empty()) scratch_.iterationSteps.zero();
  for (int s = 0; s < substeps_; ++s) solver_.step(state_, scratch_, s);
}

void RigidSimulation::advanceFrame() {
  frames_.advance(
      0, [this] { runFrameBody(); },
      [this]() -> std::optional<std::string> {
        if (!scratch_.detector) return std::nullopt;
        RigidContactDetector& detector = *scratch_.detector;
        const RigidContactStatus status = detector.readStatus();
        if (detector.fits(status)) return std::nullopt;
        std::string grew = detector.growToFit(status);
        scratch_.resizeRows(state_);  // the per-row buffers and the history follow the rows
        return grew;
      });
  contactReport_.regrowths = frames_.regrowths();
  if (scratch_.detector) {
    const RigidContactDetector& detector = *scratch_.detector;
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
}

}  // namespace weft
