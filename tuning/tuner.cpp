#include "tuning/tuner.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/graph.h"
#include "kernels/runtime/snapshot.h"
#include "kernels/runtime/timer.h"
#include "scenes/scene.h"
#include "solver/simulation.h"

namespace weft {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buffer[16];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d", std::gmtime(&now));
  return buffer;
}

/// Times one recorded launch at one size: median µs per launch over graph replays.
SizeTiming timeLaunchWith(const Device& device, const LaunchRecord& record, int size,
                          double budgetMs, int replays) {
  SizeTiming timing;
  timing.size = size;
  FrameGraph graph(device);
  try {
    graph.capture([&] {
      for (int r = 0; r < replays; ++r) {
        record.replay(device.stream(), size);
        device.checkLaunch(record.id, record.count, 0, size, std::source_location::current());
      }
    });
    graph.replay();  // warm-up (and the first error, if the launch fails at run time)
    device.synchronize();
  } catch (const CudaError& e) {
    timing.skipped = true;
    timing.reason = e.what();
    device.synchronize();
    return timing;
  }
  DeviceTimer timer(device);
  std::vector<double> perLaunchUs;
  double spentMs = 0.0;
  while (spentMs < budgetMs || perLaunchUs.size() < 5) {
    timer.start();
    graph.replay();
    timer.stop();
    const double ms = timer.elapsedMs();
    spentMs += ms;
    perLaunchUs.push_back(1000.0 * ms / replays);
    if (perLaunchUs.size() >= 2000) break;
  }
  timing.microsecondsPerLaunch = median(perLaunchUs);
  return timing;
}

/// Median µs per substep of whole frames (graph replays) under `policy`, from the snapshot.
double timeEndToEnd(Device& device, SceneRunner& sim, const DeviceSnapshot& start,
                    const LaunchPolicy& policy, int frames) {
  start.restore();
  device.setLaunchPolicy(policy);
  sim.resetGraphs();
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {
    sim.advanceFrame();
    ms.push_back(sim.lastFrameMs());
  }
  start.restore();
  return 1000.0 * median(ms) / sim.substepsPerFrame();
}

std::vector<int> candidatesFor(KernelId id, const TunerOptions& options) {
  const std::span<const int> all = launchSizes(id);
  switch (launchKind(id)) {
    case LaunchKind::Tile:
      if (!options.tileSizes.empty()) return options.tileSizes;
      break;
    case LaunchKind::Group:
      if (!options.groupSizes.empty()) return options.groupSizes;
      break;
    case LaunchKind::Elementwise:
      if (!options.blockSizes.empty()) return options.blockSizes;
      break;
  }
  return std::vector<int>(all.begin(), all.end());
}

/// The size the incumbent table gives kernel `id` in `scene` ("" for the overall entry): the
/// scene's own entry, else the overall one; 0 when there is no incumbent or no entry.
int incumbentSize(const TunerOptions& options, const std::string& scene, KernelId id) {
  if (!options.incumbent) return 0;
  const LaunchTable& t = *options.incumbent;
  if (!scene.empty())
    if (auto s = t.scenes.find(scene); s != t.scenes.end())
      if (auto e = s->second.find(id); e != s->second.end()) return e->second.size;
  if (auto e = t.kernels.find(id); e != t.kernels.end()) return e->second.size;
  return 0;
}

SceneTuning tuneScene(Device& device, const Scene& scene, const TunerOptions& options) {
  SceneTuning result;
  result.scene = scene.name;
  auto report = [&](const std::string& what, int done, int total) {
    if (options.progress) options.progress(scene.name + ": " + what, done, total);
  };
  const LaunchPolicy defaults = LaunchPolicy::resolve(nullptr, "", device.gpu().identity.ccMajor,
                                                      device.gpu().identity.ccMinor);
  device.setLaunchPolicy(defaults);
  SceneOptions batch;
  batch.worlds = options.worlds;
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(device, scene, batch);
  const std::string key =
      options.worlds > 1 ? batchSceneKey(scene.name, options.worlds) : scene.name;

  // 1. Warm up over the tuning window; keep the densest self-contact frame's state (cloth) or the
  //    window's last frame (cables).
  MeasurementState state =
      runToMeasurementFrame(device, *sim, scene.tuneWindowFrames,
                            [&](int done, int total) { report("warming up", done, total); });
  result.measurementFrame = state.frame;
  result.contactPairs = state.contactPairs;
  const DeviceSnapshot* measurement = state.snapshot.get();

  // 2. Record one step.
  std::vector<RecordedLaunch> recorded = recordStep(device, *sim);
  measurement->restore();
  recorded.erase(std::remove_if(recorded.begin(), recorded.end(),
                                [&](const RecordedLaunch& g) {
                                  return !options.kernels.empty() &&
                                         std::find(options.kernels.begin(), options.kernels.end(),
                                                   g.record.id) == options.kernels.end();
                                }),
                 recorded.end());

  // 3. Sweep every recorded launch over the candidate sizes (restoring the measurement frame after
  //    each).
  result.timings.scene = scene.name;
  result.timings.launches = sweepLaunches(device, recorded, *measurement, options, report);
  for (size_t i = 0; i < recorded.size(); ++i) {
    const LaunchRecord& record = recorded[i].record;
    KernelTuning& k = result.kernels[record.id];
    k.launchesPerStep += recorded[i].timesPerStep;
    k.resourcesAtDefault = record.resources(defaults.size(record.id));
    for (const SizeTiming& t : result.timings.launches[i].sizes)
      if (t.skipped) k.skipped[t.size] = t.reason;
  }
  int points = 0;  // (launch, size) points swept: the sweep's progress total
  for (const LaunchTiming& launch : result.timings.launches) points += int(launch.sizes.size());

  // 4. Per-scene optima.
  for (const auto& [id, costs] : perStepCost(result.timings)) {
    KernelTuning& k = result.kernels[id];
    k.costs = costs;
    k.optimum = pickSize(costs, defaults.size(id), options.noiseBand, options.tieMicroseconds,
                         incumbentSize(options, key, id));
  }
  report("done sweeping", points, points);
  return result;
}

}  // namespace

SizeTiming timeLaunchAt(const Device& device, const LaunchRecord& record, int size, double budgetMs,
                        int replaysPerGraph) {
  return timeLaunchWith(device, record, size, budgetMs, replaysPerGraph);
}

MeasurementState runToMeasurementFrame(Device& device, SceneRunner& sim, int windowFrames,
                                       const std::function<void(int, int)>& progress) {
  MeasurementState state;
  long long densest = -1;
  const bool densestFrame = sim.measuresDensestFrame();
  for (int frame = 1; frame <= windowFrames; ++frame) {
    if (progress) progress(frame, windowFrames);
    sim.advanceFrame();
    const long long pairs = sim.lastFrameContacts();
    if (!densestFrame || pairs > densest) {
      densest = pairs;
      state.frame = frame;
      state.contactPairs = pairs;
      state.snapshot.reset();  // free the old copy first
      state.snapshot = std::make_unique<DeviceSnapshot>(device);
    }
  }
  if (!state.snapshot) state.snapshot = std::make_unique<DeviceSnapshot>(device);
  state.snapshot->restore();
  return state;
}

std::vector<RecordedLaunch> recordStep(Device& device, SceneRunner& sim) {
  class Recorder final : public LaunchObserver {
   public:
    void onLaunch(const LaunchRecord& record) override {
      for (RecordedLaunch& g : groups)
        if (g.record.id == record.id && g.record.count == record.count) {
          ++g.timesPerStep;
          return;
        }
      groups.push_back({record, 1});
    }
    std::vector<RecordedLaunch> groups;
  } recorder;
  device.setObserver(&recorder);
  // Every detection of the recorded substep builds its lists (and leaves the device flag that
  // says so raised for the replays), so each detection launch is timed doing its full work.
  sim.setListReuse(false);
  try {
    sim.launchSubstep(0);
    device.synchronize();
  } catch (...) {
    device.setObserver(nullptr);
    sim.setListReuse(true);
    throw;
  }
  device.setObserver(nullptr);
  sim.setListReuse(true);
  return recorder.groups;
}

std::vector<LaunchTiming> sweepLaunches(
    Device& device, const std::vector<RecordedLaunch>& launches, const DeviceSnapshot& untouched,
    const TunerOptions& options,
    const std::function<void(const std::string&, int, int)>& progress) {
  int points = 0, done = 0;
  for (const RecordedLaunch& g : launches)
    points += int(candidatesFor(g.record.id, options).size());
  std::vector<LaunchTiming> timings;
  for (const RecordedLaunch& g : launches) {
    LaunchTiming launch;
    launch.id = g.record.id;
    launch.count = g.record.count;
    launch.timesPerStep = g.timesPerStep;
    for (int size : candidatesFor(g.record.id, options)) {
      if (progress)
        progress(std::string(kernelName(g.record.id)) + " n=" + std::to_string(g.record.count) +
                     " size " + std::to_string(size),
                 done++, points);
      launch.sizes.push_back(timeLaunchWith(device, g.record, size, options.budgetMsPerPoint,
                                            options.replaysPerGraph));
    }
    untouched.restore();  // replays write into the scene's buffers: put them back
    timings.push_back(launch);
  }
  return timings;
}

std::map<KernelId, TableEntry> tunedEntries(const std::map<KernelId, TableEntry>* incumbent,
                                            const std::set<KernelId>& measured,
                                            const std::map<KernelId, TableEntry>& chosen) {
  std::map<KernelId, TableEntry> entries;
  if (incumbent)
    for (const auto& [id, entry] : *incumbent)
      if (!measured.count(id)) entries[id] = entry;
  for (const auto& [id, entry] : chosen)
    if (measured.count(id)) entries[id] = entry;
  return entries;
}

std::vector<std::string> staleBatches(const LaunchTable& before, const LaunchTable& after,
                                      const std::string& scene, int worlds) {
  const auto sizes = [](const std::map<KernelId, TableEntry>* entries) {
    std::map<KernelId, int> s;
    if (entries)
      for (const auto& [id, entry] : *entries) s[id] = entry.size;
    return s;
  };
  std::vector<std::string> stale;
  for (const std::string& key : after.provenance.scenes) {
    const int w = batchKeyWorlds(key, scene);
    if (w > worlds && !after.scenes.count(key) &&
        sizes(batchEntries(after, scene, w)) != sizes(batchEntries(before, scene, w)))
      stale.push_back(key);
  }
  return stale;
}

namespace {

/// Sets `scenes[key]` to `entries`, or removes the key where they are empty.
void setSceneEntries(std::map<std::string, std::map<KernelId, TableEntry>>& scenes,
                     const std::string& key, std::map<KernelId, TableEntry> entries) {
  if (entries.empty())
    scenes.erase(key);
  else
    scenes[key] = std::move(entries);
}

/// The kernels scene tuning `s` measured (those with costs), and their optima as table entries.
struct MeasuredOptima {
  std::set<KernelId> measured;
  std::map<KernelId, TableEntry> optima;
};
MeasuredOptima measuredOptima(const SceneTuning& s, const GpuIdentity& gpu) {
  MeasuredOptima m;
  for (const auto& [id, k] : s.kernels)
    if (!k.costs.empty()) {
      m.measured.insert(id);
      m.optima[id] = {k.optimum.size, builtInLaunchSize(id, gpu.ccMajor, gpu.ccMinor),
                      k.optimum.speedup};
    }
  return m;
}

/// A scene (or batch) at its measurement frame, ready for end-to-end timing with the built-in
/// sizes set. A first run goes through the frames the verification times, so that the scene it
/// then snapshots starts with the contact capacities those frames need: a list that grew inside
/// them would reallocate buffers the snapshot holds. (Capacities change no result.)
struct EndToEndStart {
  std::unique_ptr<Scene> sized;  // the runner refers to it: declared first, destroyed last
  std::unique_ptr<SceneRunner> sim;
  std::unique_ptr<DeviceSnapshot> snapshot;
};
EndToEndStart startEndToEnd(Device& device, const Scene& scene, const SceneOptions& options,
                            int measurementFrame, int frames) {
  const GpuIdentity& gpu = device.gpu().identity;
  device.setLaunchPolicy(LaunchPolicy::resolve(nullptr, "", gpu.ccMajor, gpu.ccMinor));
  EndToEndStart start;
  start.sized = std::make_unique<Scene>(scene);
  {
    std::unique_ptr<SceneRunner> probe = makeSceneRunner(device, scene, options);
    for (int f = 0; f < measurementFrame + frames; ++f) probe->advanceFrame();
    probe->carryCapacitiesInto(*start.sized);
  }
  start.sim = makeSceneRunner(device, *start.sized, options);
  for (int f = 0; f < measurementFrame; ++f) start.sim->advanceFrame();
  start.snapshot = std::make_unique<DeviceSnapshot>(device);
  return start;
}

/// The end of a batch tuning (TunerOptions::worlds > 1): the incumbent table (or an empty one for
/// this GPU) with each scene's batch entries set to its optima where, end to end, they are faster
/// beyond TunerOptions::endToEndBand than the sizes the table gives the batch without them (a
/// smaller batch's entries, else one world's sizes). Where all of them together are not, those
/// that win end to end on their own (chooseBatchEntries).
/// The entry's sizes for kernels the run did not measure stay throughout (tunedEntries).
void verifyBatchEntries(Device& device, const TunerOptions& options, TuneResult& result) {
  const GpuIdentity& gpu = device.gpu().identity;
  LaunchTable& table = result.table;
  if (options.incumbent) {
    table = *options.incumbent;
  } else {
    table.gpu = gpu;
    table.provenance.driver = device.gpu().driverVersion;
    table.provenance.cudaRuntime = device.gpu().runtimeVersion;
    table.provenance.date = today();
    table.provenance.commit = options.commit;
    table.provenance.generator = "weft tune-launch";
  }
  SceneOptions batch;
  batch.worlds = options.worlds;
  for (SceneTuning& s : result.scenes) {
    s.worlds = options.worlds;
    const Scene& scene = findScene(s.scene);
    const std::string key = batchSceneKey(s.scene, options.worlds);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 0, 3);
    // The batch's entries as this run leaves them: the incumbent's for the kernels it did not
    // measure (tunedEntries), `chosen` for those it did.
    std::optional<std::map<KernelId, TableEntry>> incumbentEntries;
    if (auto it = table.scenes.find(key); it != table.scenes.end()) incumbentEntries = it->second;
    auto [measured, optima] = measuredOptima(s, gpu);
    const auto entriesWith = [&](const std::map<KernelId, TableEntry>& chosen) {
      return tunedEntries(incumbentEntries ? &*incumbentEntries : nullptr, measured, chosen);
    };
    // What the batch gets without entries of its own for the kernels measured here.
    LaunchTable oneWorld = table;
    setSceneEntries(oneWorld.scenes, key, entriesWith({}));
    const LaunchPolicy defaults = LaunchPolicy::resolve(nullptr, "", gpu.ccMajor, gpu.ccMinor);
    const LaunchPolicy without =
        LaunchPolicy::resolve(&oneWorld, s.scene, gpu.ccMajor, gpu.ccMinor, options.worlds);
    const EndToEndStart start =
        startEndToEnd(device, scene, batch, s.measurementFrame, options.endToEndFrames);
    SceneRunner& sim = *start.sim;
    const DeviceSnapshot& measurement = *start.snapshot;
    const int frames = options.endToEndFrames;
    // End to end with `entries` for the measured kernels' batch entries (beside the entry's
    // unmeasured ones; the one-world chain for the rest).
    const auto timeWithEntries = [&](const std::map<KernelId, TableEntry>& entries) {
      LaunchTable with = oneWorld;
      setSceneEntries(with.scenes, key, entriesWith(entries));
      return timeEndToEnd(
          device, sim, measurement,
          LaunchPolicy::resolve(&with, s.scene, gpu.ccMajor, gpu.ccMinor, options.worlds), frames);
    };
    s.stepUsDefault = timeEndToEnd(device, sim, measurement, defaults, frames);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 1, 3);
    s.stepUsOverall = timeEndToEnd(device, sim, measurement, without, frames);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 2, 3);
    s.stepUsPerScene = timeWithEntries(optima);
    s.batchEntriesMeasured = int(optima.size());
    // Kept only where they win beyond the end-to-end band: all together, else what wins alone, each
    // kernel's optimum first, then its runner-ups (chooseBatchEntries).
    std::vector<BatchCandidate> candidates;
    for (const auto& [id, entry] : optima)
      if (entry.size != without.size(id))
        if (std::vector<int> sizes =
                batchCandidateSizes(s.kernels.at(id).costs, entry.size, without.size(id),
                                    s.stepUsOverall, options.noiseBand, options.endToEndBand);
            !sizes.empty())
          candidates.push_back({id, std::move(sizes)});
    const auto entriesAt = [&](const std::map<KernelId, int>& sizes) {
      std::map<KernelId, TableEntry> entries;
      for (const auto& [id, size] : sizes) {
        const std::map<int, double>& costs = s.kernels.at(id).costs;
        const int builtIn = optima.at(id).defaultSize;
        const auto atDefault = costs.find(builtIn);
        entries[id] = {size, builtIn,
                       atDefault != costs.end() ? atDefault->second / costs.at(size) : 0.0};
      }
      return entries;
    };
    // Progress over the timings the fallback may take: each candidate size alone, then the
    // winners together (fewer when a kernel's first size wins or nothing does).
    int timed = 0, mostTimings = 1;
    for (const BatchCandidate& c : candidates) mostTimings += int(c.sizes.size());
    const auto timeSizes = [&](const std::map<KernelId, int>& sizes) {
      if (options.progress) {
        const std::string what = sizes.size() == 1
                                     ? std::string(kernelName(sizes.begin()->first)) + " at " +
                                           std::to_string(sizes.begin()->second) + " alone"
                                     : "the winners together";
        options.progress(s.scene + ": end to end, " + what, timed, mostTimings);
      }
      ++timed;
      return timeWithEntries(entriesAt(sizes));
    };
    const BatchEntriesChoice kept = chooseBatchEntries(
        candidates, s.stepUsOverall, s.stepUsPerScene, options.endToEndBand, timeSizes);
    s.keepsSceneEntries = kept.all || !kept.sizes.empty();
    s.stepUsPerScene = kept.microseconds;
    if (!kept.all) optima = entriesAt(kept.sizes);
    s.batchEntriesKept = s.keepsSceneEntries ? int(optima.size()) : 0;
    setSceneEntries(table.scenes, key,
                    entriesWith(s.keepsSceneEntries ? optima : std::map<KernelId, TableEntry>{}));
    // Listed whether or not it keeps entries: a tuned batch without one runs what it inherits
    // because nothing won (staleBatches relies on it).
    if (std::find(table.provenance.scenes.begin(), table.provenance.scenes.end(), key) ==
        table.provenance.scenes.end())
      table.provenance.scenes.push_back(key);
  }
  device.setLaunchPolicy(LaunchPolicy::resolve(nullptr, "", gpu.ccMajor, gpu.ccMinor));
}

}  // namespace

TuneResult tuneLaunches(Device& device, const TunerOptions& options) {
  if (!device.isCuda()) throw Error("weft tune-launch needs a CUDA GPU (--device cuda)");
  const auto start = std::chrono::steady_clock::now();
  TuneResult result;
  result.noiseBand = options.noiseBand;
  result.tieMicroseconds = options.tieMicroseconds;
  result.incumbent = options.incumbent.has_value();
  const GpuIdentity& gpu = device.gpu().identity;

  // A batch that runs may still not fit beside what tuning it holds (a snapshot of every buffer
  // and copies to replay launches on in the sweep; in the verification, the batch run again with
  // the capacities it grew to, beside its snapshot): say so, and what to do.
  const auto tooBigToTune = [&](const std::string& scenes, const Error& e) {
    return Error(scenes + " as " + std::to_string(options.worlds) +
                 " worlds does not fit the GPU's memory while it is tuned (the tuner keeps a "
                 "snapshot of every buffer beside the batch): tune a smaller batch; runs of more "
                 "worlds use the entries of the largest tuned batch they fill (" +
                 e.what() + ")");
  };
  const auto outOfMemory = [&](const Error& e) {
    return options.worlds > 1 && std::string(e.what()).find("out of memory") != std::string::npos;
  };
  for (const std::string& name : options.scenes) {
    try {
      result.scenes.push_back(tuneScene(device, findScene(name), options));
    } catch (const Error& e) {
      if (outOfMemory(e)) throw tooBigToTune(name, e);
      throw;
    }
  }
  if (options.worlds > 1) {
    try {
      verifyBatchEntries(device, options, result);
    } catch (const Error& e) {
      std::string names;
      for (const std::string& name : options.scenes) names += (names.empty() ? "" : ", ") + name;
      if (outOfMemory(e)) throw tooBigToTune(names, e);
      throw;
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

  // Overall picks: one size per kernel across the scenes that launch it.
  std::map<KernelId, std::map<std::string, std::map<int, double>>> byKernel;
  for (const SceneTuning& s : result.scenes)
    for (const auto& [id, k] : s.kernels)
      if (!k.costs.empty()) byKernel[id][s.scene] = k.costs;
  for (const auto& [id, perScene] : byKernel)
    result.overall[id] = pickOverallSize(perScene, builtInLaunchSize(id, gpu.ccMajor, gpu.ccMinor),
                                         options.objective, options.noiseBand,
                                         options.tieMicroseconds, incumbentSize(options, "", id));

  // The table: overall picks over the replaced table's entries (tunedEntries); provenance. The
  // entries of scenes this run did not tune and the batch entries ("scene@W", measured by batch
  // tunings, TunerOptions::worlds, which a one-world run does not repeat) stay as they were.
  LaunchTable& table = result.table;
  const LaunchTable* incumbent = options.incumbent ? &*options.incumbent : nullptr;
  if (incumbent) table.scenes = incumbent->scenes;
  table.gpu = gpu;
  table.provenance.driver = device.gpu().driverVersion;
  table.provenance.cudaRuntime = device.gpu().runtimeVersion;
  table.provenance.date = today();
  table.provenance.commit = options.commit;
  table.provenance.scenes = options.scenes;
  if (incumbent)
    for (const std::string& key : incumbent->provenance.scenes)
      if (std::find(table.provenance.scenes.begin(), table.provenance.scenes.end(), key) ==
          table.provenance.scenes.end())
        table.provenance.scenes.push_back(key);
  table.provenance.generator = "weft tune-launch";
  std::set<KernelId> measuredAnywhere;
  std::map<KernelId, TableEntry> picks;
  for (const auto& [id, choice] : result.overall) {
    measuredAnywhere.insert(id);
    picks[id] = {choice.size, builtInLaunchSize(id, gpu.ccMajor, gpu.ccMinor),
                 choice.speedup > 0.0 ? choice.speedup : 0.0};
  }
  table.kernels = tunedEntries(incumbent ? &incumbent->kernels : nullptr, measuredAnywhere, picks);

  // 5. End-to-end verification per scene: defaults, overall table, per-scene optima.
  for (SceneTuning& s : result.scenes) {
    const Scene& scene = findScene(s.scene);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 0, 3);
    const EndToEndStart start =
        startEndToEnd(device, scene, {}, s.measurementFrame, options.endToEndFrames);
    SceneRunner& sim = *start.sim;
    const DeviceSnapshot& measurement = *start.snapshot;

    // The scene's optima for the kernels it measured, the table's sizes for the others.
    const auto [measured, optima] = measuredOptima(s, gpu);
    LaunchTable sceneOnly = table;
    sceneOnly.kernels = tunedEntries(&table.kernels, measured, optima);
    const int frames = options.endToEndFrames;
    s.stepUsDefault =
        timeEndToEnd(device, sim, measurement,
                     LaunchPolicy::resolve(nullptr, "", gpu.ccMajor, gpu.ccMinor), frames);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 1, 3);
    s.stepUsOverall =
        timeEndToEnd(device, sim, measurement,
                     LaunchPolicy::resolve(&table, "", gpu.ccMajor, gpu.ccMinor), frames);
    if (options.progress) options.progress(s.scene + ": end-to-end verification", 2, 3);
    s.stepUsPerScene =
        timeEndToEnd(device, sim, measurement,
                     LaunchPolicy::resolve(&sceneOnly, "", gpu.ccMajor, gpu.ccMinor), frames);
    // The overall table must not make a scene slower than the defaults, nor leave it clearly
    // slower than its own optima; where it does (beyond the noise band), keep the scene's optima.
    s.keepsSceneEntries = s.stepUsOverall > s.stepUsDefault * (1.0 + options.noiseBand) ||
                          s.stepUsOverall > s.stepUsPerScene * (1.0 + options.noiseBand);
    const std::map<KernelId, TableEntry>* replaced = nullptr;  // the scene's entries before
    if (incumbent)
      if (auto it = incumbent->scenes.find(s.scene); it != incumbent->scenes.end())
        replaced = &it->second;
    setSceneEntries(table.scenes, s.scene,
                    tunedEntries(replaced, measured,
                                 s.keepsSceneEntries ? optima : std::map<KernelId, TableEntry>{}));
  }
  device.setLaunchPolicy(LaunchPolicy::resolve(nullptr, "", gpu.ccMajor, gpu.ccMinor));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace weft
