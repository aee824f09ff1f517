// Per-step timing of a scene: the measurement behind `weft bench` and the Google Benchmark
// executable (apps/benchmarks.cpp).
//
// Method: build the scene, run it to its measurement frame (the tuner's: the densest self-contact
// frame of its tuning window), snapshot the device, capture one substep and one whole frame as
// CUDA graphs, and time graph replays with CUDA events: each repetition restores the snapshot and
// replays the substep graph once per substep of a frame, then the frame graph once; the results
// are the median and spread over repetitions. On the CPU backend the same steps run directly and
// the host clock times them (labelled as such). A per-kernel breakdown of one step comes from the
// launch recorder (each launch timed at the size in effect), and the floor of the design —
// launches per substep × the GPU's measured graph-node latency — is measured here too.
// The user-visible figure is the window: a fresh run of the scene's own frame pipeline (one
// graph replay per frame, CUDA events around each), the median frame time over the scene's
// window of frames [benchWindowFirst, benchWindowEnd) divided by substeps — how the reference
// is timed (docs/BENCHMARKS.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "apps/convergence_report.h"
#include "kernels/runtime/device.h"
#include "kernels/runtime/launch_table.h"

namespace weft {

struct Spread {
  double median = 0.0, min = 0.0, max = 0.0;
  double spreadPercent() const { return median > 0.0 ? 100.0 * (max - min) / median : 0.0; }
};

struct KernelShare {
  std::string kernel;
  int launchesPerStep = 0;
  double microsecondsPerStep = 0.0;  // launches × median µs per launch, isolated replays
};

/// The window measurement: frames [firstFrame, endFrame) of a fresh run.
struct WindowTiming {
  int firstFrame = 0, endFrame = 0;  // end 0: the scene has no window
  Spread usPerSubstep;               // frame time / substeps over the window's frames
  std::string size;                  // "5824 particles"
};

struct BenchResult {
  std::string scene;
  std::string table;  // "built-in defaults" or the table file
  std::string backend;
  std::string size;  // "1820 particles" or "4000 bodies"
  int elements = 0;  // particles or bodies
  int substeps = 0, iterations = 0;
  int measurementFrame = 0;
  int launchesPerSubstep = 0;          // kernel launches of one substep (CUDA; 0 on the CPU)
  Spread usPerSubstep;                 // one substep graph replay
  Spread usPerFrame;                   // one frame graph replay
  std::vector<KernelShare> breakdown;  // most expensive first (CUDA only)
  WindowTiming window;
  std::string variantLabel;  // "welded=0" when the scene has a bench variant
  WindowTiming variantWindow;
};

struct BenchOptions {
  std::string scene;
  int repetitions = 10;
  bool breakdown = true;  // time each launch of a step (CUDA only)
  bool window = true;     // time the scene's window of frames from a fresh run
};

/// Frames [scene.benchWindowFirst, scene.benchWindowEnd) of a fresh run of `sceneName` with the
/// launch policy on `device`: µs per substep, median and spread over the window's frames.
WindowTiming timeWindow(Device& device, const std::string& sceneName,
                        const std::map<std::string, std::string>& sceneOptions = {});

/// Cable scenes: the largest body step of every iteration over the window's frames of a fresh run
/// (RigidSolverOptions::recordConvergence), summarized per iteration (apps/convergence_report.h);
/// a summary of 0 substeps for cloth scenes and scenes without a window. Launch sizes change no
/// bit of it, so one run per scene serves every table.
ConvergenceSummary windowConvergence(const Device& device, const std::string& sceneName);

/// One batch size of a many-worlds scaling run.
struct WorldsTiming {
  int worlds = 0;
  int elements = 0;                   // bodies or particles of the whole batch
  std::string size;                   // "4096 bodies", "1820 particles"
  Spread usPerSubstep;                // frame time / substeps over the timed frames
  double worldSubstepsPerSecond = 0;  // worlds × substeps / median frame time
  int tunedWorlds = 0;                // the table's batch entries used ("scene@W"); 0: none
  bool iteratesPerWorld = false;      // the cable iterations launched per world
  std::string skipped;                // why this size was not measured ("" = measured)
};

/// Scene `sceneName` as a batch of each count in `worlds` (ascending): built with that many
/// worlds, the launch sizes `table` gives a batch of that size (its "scene@W" entries, else the
/// one-world sizes), `warmFrames` frames run, then `timedFrames` frames timed (one graph replay
/// each, CUDA events; host clock on the CPU). The worlds sit where the scene puts them (they never
/// touch, and each world's broad phase visits only its own shapes). A count that would not fit the
/// GPU's memory (or fails to allocate) is recorded as skipped, and larger ones are not tried; so
/// are those after a batch whose frame took more than 2 s.
std::vector<WorldsTiming> timeWorlds(Device& device, const std::string& sceneName,
                                     const std::vector<int>& worlds, const LaunchTable* table,
                                     int warmFrames = 3, int timedFrames = 10);

/// Times one scene with the launch policy currently set on `device`.
BenchResult benchScene(Device& device, const BenchOptions& options, const std::string& tableLabel);

/// Median latency [µs] of one kernel node in a CUDA graph of `nodes` back-to-back empty launches
/// (the design's "phase" cost); 0 on the CPU backend.
double measureGraphNodeLatency(Device& device, int nodes = 200, int repetitions = 20);

}  // namespace weft
