#include "kernels/runtime/graph.h"

#include "kernels/runtime/errors.h"

#if defined(WEFT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace weft {

FrameGraph::~FrameGraph() {
  destroy();
}

void FrameGraph::destroy() {
#if defined(WEFT_WITH_CUDA)
  if (instance_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(instance_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
#endif
  instance_ = nullptr;
  graph_ = nullptr;
  captured_ = false;
  nodeCount_ = 0;
}

void FrameGraph::capture(std::function<void()> body) {
  destroy();
  body_ = std::move(body);
  if (!device_->isCuda()) {
    captured_ = true;
    return;
  }
#if defined(WEFT_WITH_CUDA)
  const auto stream = static_cast<cudaStream_t>(device_->stream());
  WEFT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    body_();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);  // leave the stream usable
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  WEFT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  graph_ = graph;
  cudaGraphExec_t instance = nullptr;
  WEFT_CUDA_CHECK(cudaGraphInstantiate(&instance, graph, 0));
  instance_ = instance;
  size_t nodes = 0;
  WEFT_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  nodeCount_ = int(nodes);
  captured_ = true;
#endif
}

void FrameGraph::replay() {
  if (!captured_) throw Error("internal error: FrameGraph::replay() before capture()");
  if (!device_->isCuda()) {
    body_();
    return;
  }
#if defined(WEFT_WITH_CUDA)
  WEFT_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(instance_),
                                  static_cast<cudaStream_t>(device_->stream())));
#endif
}

}  // namespace weft
