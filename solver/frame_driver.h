// FrameDriver: the frame loop of Simulation (solver/simulation.h), for either solver part or both.
//
// On CUDA the first frame captures the frame's work into a CUDA graph and every later frame is one
// replay, with no host work per substep; a simulation may keep several graphs ("variants", e.g. the
// cloth's frames that begin with a tree rebuild). On the CPU, and with graphs switched off, the
// work is launched directly. Each frame's device time is measured with CUDA events around it (host
// clock on the CPU).
//
// Nothing is dropped: a frame begins by saving every device range that carries over between frames
// (carry()), inside the graph. After the frame the caller's overflow check reads what the contact
// detection needed; when something did not fit it grows the buffers and says what grew, and the
// driver puts the saved ranges back, captures the graphs again and runs the frame again, until it
// fits. The ranges are looked up at every save and restore, so they may grow with the buffers (a
// restore copies what the saved copy holds).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/buffer.h"
#include "kernels/runtime/graph.h"
#include "kernels/runtime/timer.h"

namespace weft {

class FrameDriver {
 public:
  FrameDriver(const Device& device, int variants, bool useGraphs);

  /// Registers a device range that carries over between frames: saved at the start of every frame,
  /// restored before a frame runs again.
  void carry(BufferRange where);

  /// What an overflow check returns: what grew ("contact rows 256 -> 640"), or nothing when the
  /// frame's contacts fit.
  using GrowIfOverflowed = std::function<std::optional<std::string>()>;

  /// Runs one frame and waits for it: the carried ranges are saved, then `body` launches the
  /// frame's work (captured once as graph `variant`); then `growIfOverflowed` runs on the host, and
  /// while it reports growth the frame runs again from its saved start.
  void advance(int variant, const std::function<void()>& body,
               const GrowIfOverflowed& growIfOverflowed);

  /// Forgets the captured graphs (after the launch policy changed or buffers were reallocated).
  void resetGraphs();
  /// Device time of the last frame run [ms].
  double lastFrameMs() const { return lastFrameMs_; }
  long long framesDone() const { return frames_; }
  bool usesGraphs() const { return useGraphs_; }
  /// "frame 12: vertex-triangle 16 -> 40 (frame run again)", one per growth.
  const std::vector<std::string>& regrowths() const { return regrowths_; }

 private:
  struct Carried {
    BufferRange where;
    DeviceBuffer<unsigned char> saved;
  };
  void runOnce(int variant, const std::function<void()>& body);
  void save();
  void restore();
  void allocateSaved();

  const Device& device_;
  bool useGraphs_;
  std::vector<std::unique_ptr<FrameGraph>> graphs_;
  DeviceTimer timer_;
  double lastFrameMs_ = 0.0;
  long long frames_ = 0;
  std::vector<Carried> carried_;
  std::vector<std::string> regrowths_;
};

}  // namespace weft
