// The reference's figures by GPU model: Newton 1.8.0's SolverVBD, timed through its own example
// scripts (tools/newton_reference.py, docs/BENCHMARKS.md), which `weft bench` puts beside Weft's
// when it runs on a GPU of that model. They are measurements, so they exist only for the models
// they were measured on; elsewhere the page says that it has none.
#pragma once

#include <map>
#include <string>

namespace weft {

/// One scene's single-world figures: the window (its example's step() per frame, median over the
/// scene's window, / substeps) and its solver.step() alone replayed as a graph, with the target
/// the project set for Weft's window figure. 0 = not measured.
struct ReferenceWindow {
  double windowUs = 0.0;  // the reference's own frame pipeline, per substep
  double stepUs = 0.0;    // its solver.step() alone, as a graph
  double targetUs = 0.0;  // Weft's target for the window figure
  const char* note = "";
};

/// Everything measured of the reference on one GPU model.
struct ReferenceGpu {
  const char* model;                               // matched in the GPU's name ("H100", "H200")
  const char* windowProvenance;                    // who measured the windows, where, when
  const char* worldsProvenance;                    // the same for the batches
  std::map<std::string, ReferenceWindow> windows;  // by scene
  std::map<std::string, std::map<int, double>> worlds;  // scene → worlds → world-substeps per s
};

/// The reference's figures for the GPU of this name (`nvidia-smi`'s, e.g. "NVIDIA H200"), or
/// null where none were measured (and on the CPU backend, whose name is empty).
const ReferenceGpu* referenceGpu(const std::string& gpuName);

/// The GPU models with figures, for the page's "none on this GPU" sentence: "an H100 and an H200".
std::string referenceGpuModels();

}  // namespace weft
