// The reference's measured figures (apps/reference_figures.h). Where each table came from:
// docs/BENCHMARKS.md (H100) and docs/h200/reference/ (the H200 run's own JSON and log).
#include "apps/reference_figures.h"

#include <vector>

namespace weft {
namespace {

// NVIDIA H100 80GB HBM3, 2026-11-23 (the performance issues' measurements). Targets: the
// performance issues' goals for Weft's window figure.
ReferenceGpu h100() {
  return {"H100",
          "Newton 1.8.0 on Warp 1.19.0, NVIDIA H100 80GB HBM3, measured 2026-11-23 over the same "
          "windows",
          "Newton 1.8.0 replicated the same way on an H100 (2026-11-23, frame graphs, 10 warm "
          "frames, median of 20)",
          {{"poker_cards", {17849.0, 4036.0, 1350.0, "its frame is not graph-captured"}},
           {"cloth_rollers", {7619.0, 8029.0, 2500.0, "its unwelded mesh, 5824 particles"}},
           {"cloth_twist", {787.0, 1313.0, 260.0, "the same mesh"}},
           {"cloth_franka", {2485.0, 0.0, 830.0, "the shirt; its robot as collision meshes"}},
           {"cable_twist", {399.0, 402.0, 133.0, ""}},
           {"cable_pile", {596.0, 392.0, 199.0, ""}},
           {"cable_bundle_hysteresis", {568.0, 561.0, 189.0, ""}},
           {"cable_y_junction", {333.0, 314.0, 111.0, ""}}},
          {{"cable_y_junction", {{1, 3084.0}, {256, 616971.0}, {4096, 1552145.0}}},
           {"cable_twist", {{1, 2484.0}, {64, 111617.0}, {1024, 207595.0}}},
           {"cable_pile", {{1, 1691.0}, {8, 5939.0}, {64, 7274.0}}}}};
}

// NVIDIA H200, 2026-12-01: `python3 tools/newton_reference.py` (docs/PERFORMANCE.md, "The
// reference on the H200"; its output in docs/h200/reference). The cable scenes and the two cloth
// benchmarks whose examples need neither OpenUSD nor a download (cloth_twist and cloth_franka
// do). Targets: the performance issues' rule, a third of the reference's window on the same GPU.
// Its solver.step() alone was not timed (0).
ReferenceGpu h200() {
  const auto third = [](double windowUs, const char* note) {
    return ReferenceWindow{windowUs, 0.0, windowUs / 3.0, note};
  };
  return {"H200",
          "Newton 1.8.0 on Warp 1.19.0, NVIDIA H200, measured 2026-12-01 over the same windows "
          "with tools/newton_reference.py; targets on this GPU: a third of the reference's window",
          "Newton 1.8.0 replicated the same way on an H200 (2026-12-01, tools/newton_reference.py: "
          "frame graphs, 10 warm frames, median of 20)",
          {{"poker_cards", third(13222.0, "its frame is not graph-captured")},
           {"cloth_rollers", third(7504.5, "its unwelded mesh, 5824 particles")},
           {"cable_twist", third(395.5, "")},
           {"cable_pile", third(589.6, "")},
           {"cable_bundle_hysteresis", third(565.2, "")},
           {"cable_y_junction", third(326.3, "")}},
          {{"cable_y_junction",
            {{1, 3103.0}, {16, 47024.0}, {256, 621231.0}, {1024, 1512963.0}, {4096, 1645324.0}}},
           {"cable_twist",
            {{1, 2529.0}, {16, 36847.0}, {64, 115202.0}, {256, 184747.0}, {1024, 224370.0}}},
           {"cable_pile", {{1, 1707.0}, {8, 6055.0}, {16, 7071.0}, {64, 7494.0}}}}};
}

const std::vector<ReferenceGpu>& all() {
  static const std::vector<ReferenceGpu> gpus = {h100(), h200()};
  return gpus;
}

}  // namespace

const ReferenceGpu* referenceGpu(const std::string& gpuName) {
  for (const ReferenceGpu& g : all())
    if (gpuName.find(g.model) != std::string::npos) return &g;
  return nullptr;
}

std::string referenceGpuModels() {
  std::string s;
  const auto& gpus = all();
  for (size_t i = 0; i < gpus.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == gpus.size() ? " and " : ", ") + "an " + gpus[i].model;
  return s;
}

}  // namespace weft
