#include "solver/simulation.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

double checkedSubstep(double frameSeconds, int substepsPerFrame) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
  return frameSeconds / substepsPerFrame;
}

int kindsOf(const ModelDesc* cloth, const RigidDesc* rigid) {
  if (!cloth && !rigid) throw Error("a simulation needs a cloth, a rigid model or both");
  return cloth ? 2 : 1;  // ClothPart::frameKinds(), times RigidPart's one
}

}  // namespace

Simulation::Simulation(const Device& device, const ModelDesc* cloth,
                       const SolverOptions& clothOptions, const RigidDesc* rigid,
                       const RigidSolverOptions& rigidOptions, double frameSeconds,
                       int substepsPerFrame, bool useGraphs)
    : device_(device),
      substeps_(substepsPerFrame),
      substepSeconds_(checkedSubstep(frameSeconds, substepsPerFrame)),
      frames_(device, kindsOf(cloth, rigid), useGraphs) {
  if (cloth) {
    cloth_ = std::make_unique<ClothPart>(device, *cloth, clothOptions, substepSeconds_, substeps_);
    parts_.push_back(cloth_.get());
  }
  if (rigid) {
    rigid_ = std::make_unique<RigidPart>(device, *rigid, rigidOptions, substepSeconds_, substeps_);
    parts_.push_back(rigid_.get());
  }
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
  for (SolverPart* part : parts_) part->endFrame();
}

}  // namespace weft
