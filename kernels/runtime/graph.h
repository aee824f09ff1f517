// FrameGraph: record a sequence of launches once, replay it many times.
//
// On CUDA, capture() records everything issued on the device's stream inside `body` into a CUDA
// graph (stream capture) and instantiates it; replay() launches the graph: one host call for a
// whole frame of substeps. Anything that is not graph-safe inside `body` (an allocation, a
// synchronizing copy) makes capture() throw. On the CPU backend there is nothing to capture:
// replay() simply runs `body` again, so callers need not care which backend they run on.
#pragma once

#include <functional>

#include "kernels/runtime/device.h"

namespace weft {

class FrameGraph {
 public:
  explicit FrameGraph(const Device& device) : device_(&device) {}
  ~FrameGraph();
  FrameGraph(const FrameGraph&) = delete;
  FrameGraph& operator=(const FrameGraph&) = delete;

  /// Records `body` (CUDA) or stores it (CPU). Does not run it on CUDA.
  void capture(std::function<void()> body);
  /// Runs the recorded work once, asynchronously on the device's stream.
  void replay();
  bool captured() const { return captured_; }
  /// Forgets the recording (e.g. after buffers it uses were reallocated).
  void reset() { destroy(); }
  /// Kernel and memory nodes in the captured graph (0 on the CPU backend).
  int nodeCount() const { return nodeCount_; }

 private:
  void destroy();

  const Device* device_;
  std::function<void()> body_;
  void* graph_ = nullptr;     // cudaGraph_t
  void* instance_ = nullptr;  // cudaGraphExec_t
  bool captured_ = false;
  int nodeCount_ = 0;
};

}  // namespace weft
