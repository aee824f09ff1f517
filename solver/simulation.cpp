#include "solver/simulation.h"

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

double checkedSubstep(double frameSeconds, int substepsPerFrame) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  return frameSeconds / substepsPerFrame;
}

/// The parts present, cloth first; weft::Error when there is none.
std::vector<SolverPart*> partsOf(ClothPart* cloth, RigidPart* rigid) {
  std::vector<SolverPart*> parts;
  if (cloth) parts.push_back(cloth);
  if (rigid) parts.push_back(rigid);
  if (parts.empty()) throw Error("a simulation needs a cloth, a rigid model or both");
  return parts;
}

/// Every combination of the parts' kinds of frame gets its own graph.
int frameKindsOf(const std::vector<SolverPart*>& parts) {
  int kinds = 1;
  for (const SolverPart* part : parts) kinds *= part->frameKinds();
  return kinds;
}

}  // namespace

Simulation::Simulation(const Device& device, const ModelDesc* cloth,
                       const SolverOptions& clothOptions, const RigidDesc* rigid,
                       const RigidSolverOptions& rigidOptions, double frameSeconds,
                       int substepsPerFrame, bool useGraphs)
    : device_(device),
      substeps_(substepsPerFrame),
      substepSeconds_(checkedSubstep(frameSeconds, substepsPerFrame)),
      cloth_(cloth ? std::make_unique<ClothPart>(device, *cloth, clothOptions, substepSeconds_,
                                                 substeps_)
                   : nullptr),
      rigid_(rigid ? std::make_unique<RigidPart>(device, *rigid, rigidOptions, substepSeconds_,
                                                 substeps_)
                   : nullptr),
      parts_(partsOf(cloth_.get(), rigid_.get())),
      frames_(device, frameKindsOf(parts_), useGraphs) {
  for (SolverPart* part : parts_)
    for (BufferRange& range : part->carried()) frames_.carry(std::move(range));
}

ClothPart& Simulation::cloth() {
  if (!cloth_) throw Error("this simulation has no cloth");
  return *cloth_;
}
const ClothPart& Simulation::cloth() const {
  return const_cast<Simulation*>(this)->cloth();
}
RigidPart& Simulation::rigid() {
  if (!rigid_) throw Error("this simulation has no rigid model");
  return *rigid_;
}
const RigidPart& Simulation::rigid() const {
  return const_cast<Simulation*>(this)->rigid();
}

int Simulation::frameKind(long long frame) const {
  int kind = 0, stride = 1;
  for (const SolverPart* part : parts_) {
    kind += stride * part->frameKind(frame);
    stride *= part->frameKinds();
  }
  return kind;
}

void Simulation::runFrameBody(int kind) {
  for (SolverPart* part : parts_) {
    part->beginFrame(kind % part->frameKinds());
    kind /= part->frameKinds();
  }
  for (int s = 0; s < substeps_; ++s) launchSubstep(s);
}

void Simulation::launchSubstep(int substepInFrame) {
  for (SolverPart* part : parts_) part->substep(substepInFrame);
}

void Simulation::advanceFrame() {
  const int kind = frameKind(frames_.framesDone());
  frames_.advance(
      kind, [this, kind] { runFrameBody(kind); },
      [this]() -> std::optional<std::string> {
        std::optional<std::string> grew;
        for (SolverPart* part : parts_)
          if (std::optional<std::string> g = part->growIfOverflowed())
            grew = grew ? *grew + ", " + *g : *g;
        return grew;
      });
  bool launchesChanged = false;
  for (SolverPart* part : parts_) launchesChanged |= part->endFrame();
  if (launchesChanged) frames_.resetGraphs();
}

}  // namespace weft
