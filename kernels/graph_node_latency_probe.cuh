// graph_node_latency_probe: a kernel that does nothing. A CUDA graph of many of them, back to
// back, measures what one dependent phase costs on this GPU (the design's performance model: the
// floor of a step is its number of phases times this latency). Used by `weft bench`.
// Reads nothing; writes nothing.
#pragma once

#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct GraphNodeLatencyProbe {
  static constexpr KernelId kId = KernelId::graph_node_latency_probe;
  WEFT_HD void operator()(int) const {}
};

}  // namespace weft
