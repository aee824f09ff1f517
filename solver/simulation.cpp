#include "solver/simulation.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

Simulation::Simulation(const Device& device, const ModelDesc& desc, const SolverOptions& options,
                       double frameSeconds, int substepsPerFrame, bool useGraphs)
    : device_(device),
      model_(device, desc, options),
      state_(device, desc),
      scratch_(device, model_),
      solver_(device, model_, options, frameSeconds / std::max(substepsPerFrame, 1)),
      substeps_(substepsPerFrame),
      useGraphs_(useGraphs && device.isCuda()),
      graph_(device),
      frameTimer_(device) {
  if (substepsPerFrame < 1) throw Error("a frame needs at least one substep");
  if (!(frameSeconds > 0.0)) throw Error("the frame length must be positive");
}

void Simulation::runSubsteps() {
  for (int s = 0; s < substeps_; ++s) solver_.step(state_, scratch_);
}

void Simulation::advanceFrame() {
  if (useGraphs_ && !graph_.captured()) graph_.capture([this] { runSubsteps(); });
  frameTimer_.start();
  if (useGraphs_)
    graph_.replay();
  else
    runSubsteps();
  frameTimer_.stop();
  lastFrameMs_ = frameTimer_.elapsedMs();  // waits for the frame
  device_.synchronize();                   // surfaces asynchronous errors here, with a message
  ++frames_;
}

}  // namespace weft
