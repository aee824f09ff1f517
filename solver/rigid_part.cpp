#include "solver/rigid_part.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

RigidPart::RigidPart(const Device& device, const RigidDesc& desc, const RigidSolverOptions& options,
                     double substepSeconds, int substepsPerFrame)
    : model_(device, desc),
      state_(device, desc),
      scratch_(device, model_, state_, options),
      solver_(device, model_, options, substepSeconds),
      substeps_(substepsPerFrame) {
  if (substepsPerFrame % options.collideInterval != 0)
    throw Error("the rigid solver's collideInterval (" + std::to_string(options.collideInterval) +
                ") must divide the substeps per frame (" + std::to_string(substepsPerFrame) +
                "), so that every frame starts with a contact detection");
  if (options.recordConvergence) {
    convergence_.iterations = options.iterations;
    scratch_.iterationSteps =
        DeviceBuffer<float>(device, 2 * size_t(substeps_) * size_t(options.iterations));
  }
}

std::vector<BufferRange> RigidPart::carried() {
  if (!scratch_.detector) return {};  // without contacts nothing can overflow: no frame runs again
  return state_.carried();
}

void RigidPart::beginFrame(int /*kind*/) {
  if (scratch_.detector) scratch_.detector->resetStatus();
  if (!scratch_.iterationSteps.empty()) scratch_.iterationSteps.zero();
}

std::optional<std::string> RigidPart::growIfOverflowed() {
  if (!scratch_.detector) return std::nullopt;
  std::optional<std::string> grew = scratch_.detector->growIfOverflowed();
  if (grew) scratch_.resizeRows(state_);  // the per-row buffers and the history follow the rows
  return grew;
}

bool RigidPart::endFrame() {
  bool launchesChanged = false;
  if (scratch_.twoSharedLevels) ++contactReport_.framesTwoSharedLevels;
  if (scratch_.detector) {
    const RigidContactDetector& detector = *scratch_.detector;
    const RigidContactStatus status = detector.readStatus();
    // OneLaneLevels::Auto: two shared tree levels while contacts are few (a body with at most
    // one row never reaches a third), with a gap between the two thresholds so that the graphs
    // are not captured again every frame.
    if (solver_.options().oneLaneLevels == OneLaneLevels::Auto && !solver_.jointDualsInBlocks()) {
      const long long rows = status.maxContacts, bodies = model_.numBodies;
      const bool two = scratch_.twoSharedLevels ? rows * 4 <= bodies : rows * 8 <= bodies;
      if (two != scratch_.twoSharedLevels) {
        scratch_.twoSharedLevels = two;
        launchesChanged = true;
      }
    }
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
  return launchesChanged;
}

}  // namespace weft
