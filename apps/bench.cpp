#include "apps/bench.h"

#include <algorithm>
#include <new>

#include "apps/common.h"
#include "apps/interrupt.h"
#include "kernels/graph_node_latency_probe.cuh"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/graph.h"
#include "kernels/runtime/launch.h"
#include "kernels/runtime/timer.h"
#include "scenes/scene.h"
#include "scenes/scene_runner.h"
#include "solver/simulation.h"
#include "tuning/tuner.h"

namespace weft {
namespace {

Spread spreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.min = v.front();
  s.max = v.back();
  return s;
}

}  // namespace

double measureGraphNodeLatency(Device& device, int nodes, int repetitions) {
  if (!device.isCuda()) return 0.0;
  FrameGraph graph(device);
  graph.capture([&] {
    for (int i = 0; i < nodes; ++i) launch(device, 1, GraphNodeLatencyProbe{});
  });
  graph.replay();  // warm-up
  DeviceTimer timer(device);
  std::vector<double> perNode;
  for (int r = 0; r < repetitions; ++r) {
    timer.start();
    graph.replay();
    timer.stop();
    perNode.push_back(1000.0 * timer.elapsedMs() / nodes);
  }
  return spreadOf(perNode).median;
}

WindowTiming timeWindow(Device& device, const std::string& sceneName,
                        const std::map<std::string, std::string>& sceneOptions) {
  const Scene& scene = findScene(sceneName);
  WindowTiming w;
  if (scene.benchWindowEnd <= scene.benchWindowFirst) return w;
  w.firstFrame = scene.benchWindowFirst;
  w.endFrame = scene.benchWindowEnd;
  SceneOptions options;
  options.values = sceneOptions;
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(device, scene, options);
  w.size = sim->sizeLabel();
  std::vector<double> us;
  for (int frame = 0; frame < w.endFrame; ++frame) {
    throwIfInterrupted();
    sim->advanceFrame();
    if (frame >= w.firstFrame) us.push_back(1000.0 * sim->lastFrameMs() / scene.substeps);
  }
  w.usPerSubstep = spreadOf(us);
  return w;
}

ConvergenceSummary windowConvergence(const Device& device, const std::string& sceneName) {
  const Scene& scene = findScene(sceneName);
  if (!scene.hasRigid() || scene.benchWindowEnd <= scene.benchWindowFirst) return {};
  RigidSolverOptions options = scene.rigid.solver;
  options.recordConvergence = true;
  Simulation sim(device, scene.rigid.build({}), options, 1.0 / scene.fps, scene.substeps);
  for (int frame = 0; frame < scene.benchWindowEnd; ++frame) {
    throwIfInterrupted();
    sim.advanceFrame();
  }
  // The record holds every frame from the first: keep the window's.
  RigidPart::ConvergenceReport window = sim.rigid().convergenceReport();
  const size_t before =
      size_t(scene.benchWindowFirst) * size_t(scene.substeps) * size_t(window.iterations);
  window.translation.erase(window.translation.begin(), window.translation.begin() + before);
  window.rotation.erase(window.rotation.begin(), window.rotation.begin() + before);
  return summarizeConvergence(window);
}

std::vector<WorldsTiming> timeWorlds(Device& device, const std::string& sceneName,
                                     const std::vector<int>& worlds, const LaunchTable* table,
                                     int warmFrames, int timedFrames) {
  const Scene& scene = findScene(sceneName);
  const size_t deviceBytes = device.isCuda() ? device.gpu().totalMemoryBytes : 0;
  std::vector<WorldsTiming> out;
  bool stop = false;
  std::string skipReason = "not tried: a smaller batch did not fit";
  // A batch whose frame takes longer than this ends the series (a user asking for 1,...,4096 of
  // a 4000-body scene would otherwise wait minutes per point).
  constexpr double kLongestFrameUs = 2e6;
  for (int n : worlds) {
    WorldsTiming t;
    t.worlds = n;
    if (stop) {
      t.skipped = skipReason;
      out.push_back(t);
      continue;
    }
    if (const GpuIdentity* gpu = device.gpuIdentity()) {
      device.setLaunchPolicy(
          LaunchPolicy::resolve(table, sceneName, gpu->ccMajor, gpu->ccMinor, n));
      if (table) batchEntries(*table, sceneName, n, &t.tunedWorlds);
    }
    SceneOptions options;
    options.worlds = n;
    try {
      checkSceneFits(scene, options, availableHostMemory(), deviceBytes);
      std::unique_ptr<SceneRunner> sim = makeSceneRunner(device, scene, options);
      t.elements = sim->elementCount();
      t.size = sim->sizeLabel();
      t.iteratesPerWorld = sim->iteratesPerWorld();
      for (int f = 0; f < warmFrames; ++f) {
        throwIfInterrupted();
        sim->advanceFrame();
      }
      std::vector<double> us;
      for (int f = 0; f < timedFrames; ++f) {
        throwIfInterrupted();
        sim->advanceFrame();
        us.push_back(1000.0 * sim->lastFrameMs() / scene.substeps);
      }
      t.usPerSubstep = spreadOf(us);
      t.worldSubstepsPerSecond = 1e6 * n / t.usPerSubstep.median;
      if (t.usPerSubstep.median * scene.substeps > kLongestFrameUs) {
        stop = true;  // the next, larger batch would take too long to time
        skipReason = "not timed: the batch of " + std::to_string(n) + " took " +
                     formatFixed(t.usPerSubstep.median * scene.substeps * 1e-6, 2) +
                     " s per frame already";
      }
    } catch (const Error& e) {
      t.skipped = e.what();
      stop = true;
    } catch (const std::bad_alloc&) {
      t.skipped = "the host ran out of memory";
      stop = true;
    }
    out.push_back(t);
  }
  return out;
}

BenchResult benchScene(Device& device, const BenchOptions& options, const std::string& tableLabel) {
  const Scene& scene = findScene(options.scene);
  WindowTiming window, variantWindow;
  std::string variantLabel;
  if (options.window) {
    window = timeWindow(device, options.scene);
    if (!scene.benchVariant.empty()) {
      for (const auto& [key, value] : scene.benchVariant)
        variantLabel += (variantLabel.empty() ? "" : ", ") + key + "=" + value;
      variantWindow = timeWindow(device, options.scene, scene.benchVariant);
    }
  }
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(device, scene);

  BenchResult r;
  r.scene = scene.name;
  r.table = tableLabel;
  r.backend = std::string(backendName(device.backend()));
  r.size = sim->sizeLabel();
  r.elements = sim->elementCount();
  r.substeps = scene.substeps;
  r.iterations = sim->iterations();
  r.window = window;
  r.variantLabel = variantLabel;
  r.variantWindow = variantWindow;

  // Warm up to the measurement frame (the tuner's), and keep that state.
  MeasurementState start = runToMeasurementFrame(device, *sim, scene.tuneWindowFrames);
  r.measurementFrame = start.frame;

  // Each substep of a frame as its own graph (on the CPU: the same calls, run directly): cable
  // scenes detect contacts only in some substeps, so "a substep" is the average over a frame.
  std::vector<std::unique_ptr<FrameGraph>> substeps;
  for (int s = 0; s < scene.substeps; ++s) {
    substeps.push_back(std::make_unique<FrameGraph>(device));
    substeps.back()->capture([&sim, s] { sim->launchSubstep(s); });
  }
  DeviceTimer timer(device);
  std::vector<double> substepUs, frameUs;
  for (int rep = 0; rep < std::max(options.repetitions, 1); ++rep) {
    throwIfInterrupted();
    start.snapshot->restore();
    double sum = 0.0;
    for (int s = 0; s < scene.substeps; ++s) {
      timer.start();
      substeps[size_t(s)]->replay();
      timer.stop();
      sum += 1000.0 * timer.elapsedMs();
    }
    substepUs.push_back(sum / scene.substeps);
    start.snapshot->restore();
    sim->advanceFrame();  // the frame graph (captured on the first repetition)
    frameUs.push_back(1000.0 * sim->lastFrameMs());
  }
  start.snapshot->restore();
  r.usPerSubstep = spreadOf(substepUs);
  r.usPerFrame = spreadOf(frameUs);

  // Launches of one substep, each timed alone at the size in effect.
  if (device.isCuda()) {
    const std::vector<RecordedLaunch> launches = recordStep(device, *sim);
    std::map<KernelId, KernelShare> shares;
    for (const RecordedLaunch& l : launches) {
      r.launchesPerSubstep += l.timesPerStep;
      KernelShare& k = shares[l.record.id];
      k.kernel = std::string(kernelName(l.record.id));
      k.launchesPerStep += l.timesPerStep;
      if (options.breakdown) {
        const SizeTiming t = timeLaunchAt(device, l.record, l.record.size, 5.0, 10);
        k.microsecondsPerStep += l.timesPerStep * t.microsecondsPerLaunch;
      }
    }
    start.snapshot->restore();
    for (const auto& [id, k] : shares) r.breakdown.push_back(k);
    std::sort(r.breakdown.begin(), r.breakdown.end(),
              [](const KernelShare& a, const KernelShare& b) {
                return a.microsecondsPerStep > b.microsecondsPerStep;
              });
  }
  return r;
}

}  // namespace weft
