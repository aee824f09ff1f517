#include "solver/frame_driver.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

namespace weft {

FrameDriver::FrameDriver(const Device& device, int variants, bool useGraphs)
    : device_(device), useGraphs_(useGraphs && device.isCuda()), timer_(device) {
  if (variants < 1) throw Error("a frame driver needs at least one frame graph");
  for (int v = 0; v < variants; ++v) graphs_.push_back(std::make_unique<FrameGraph>(device));
}

void FrameDriver::carry(BufferRange where) {
  const size_t bytes = where().second;
  carried_.push_back(Carried{std::move(where), DeviceBuffer<unsigned char>(device_, bytes)});
}

void FrameDriver::allocateSaved() {
  for (Carried& c : carried_) c.saved = DeviceBuffer<unsigned char>(device_, c.where().second);
}

void FrameDriver::save() {
  for (Carried& c : carried_) {
    const auto [ptr, bytes] = c.where();
    detail::copyBytesAsync(device_, c.saved.data(), ptr, bytes);
  }
}

void FrameDriver::restore() {
  for (Carried& c : carried_) {
    const auto [ptr, bytes] = c.where();
    detail::copyBytesAsync(device_, ptr, c.saved.data(), std::min(bytes, c.saved.size()));
  }
}

void FrameDriver::resetGraphs() {
  for (auto& g : graphs_) g->reset();
}

void FrameDriver::runOnce(int variant, const std::function<void()>& body) {
  FrameGraph& graph = *graphs_.at(size_t(variant));
  const auto frame = [this, body] {  // a copy: a CPU "graph" keeps it
    save();
    body();
  };
  if (useGraphs_ && !graph.captured()) graph.capture(frame);
  timer_.start();
  if (useGraphs_)
    graph.replay();
  else
    frame();
  timer_.stop();
  lastFrameMs_ = timer_.elapsedMs();  // waits for the frame
  device_.synchronize();              // surfaces asynchronous errors here, with a message
}

void FrameDriver::advance(int variant, const std::function<void()>& body,
                          const GrowIfOverflowed& growIfOverflowed) {
  runOnce(variant, body);
  for (std::optional<std::string> grew = growIfOverflowed(); grew; grew = growIfOverflowed()) {
    // Something did not fit and has grown: put the frame's start back, capture again, run again.
    restore();
    device_.synchronize();
    allocateSaved();  // the carried ranges may have grown with the buffers
    regrowths_.push_back("frame " + std::to_string(frames_ + 1) + ": " + *grew +
                         " (frame run again)");
    resetGraphs();
    runOnce(variant, body);
  }
  ++frames_;
}

}  // namespace weft
