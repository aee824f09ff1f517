// The launch tuner behind `weft tune-launch`: seed 000's block-size study, automated.
//
// For each scene, on the CUDA backend with the built-in launch sizes:
//   1. warm up: run the scene's tuning window (Scene::tuneWindowFrames) and keep the state of its
//      densest self-contact frame (or the window's last frame for scenes without self-contact);
//   2. record: run one solver step from that state with a LaunchRecorder attached, which groups
//      the step's launches by (kernel, item count) with how many times each occurs;
//   3. sweep: snapshot every device buffer (DeviceSnapshot); for each recorded launch and each
//      candidate size, capture `replaysPerGraph` replays of it into a CUDA graph, warm up, then
//      time graph replays with CUDA events until the time budget is spent and take the median per
//      launch; a size that cannot launch is recorded as skipped with the reason; restore the
//      snapshot after each launch's sweep, so the scene is left exactly as it was;
//   4. pick: per-scene optima and one overall size per kernel (tuning/selection.h);
//   5. verify end to end: from the measurement state, time whole frames (graph replays) with the
//      built-in defaults, the overall picks and the per-scene optima; a scene on which the overall
//      table is slower than the defaults beyond the noise band keeps its per-scene optima as
//      per-scene entries of the table.
// The result is a LaunchTable with provenance and the data for the report (tuning_report.h). Over
// an incumbent table (the one being replaced, same GPU) it sets only the entries this run
// measured: kernels outside --kernels, kernels the run's scenes do not launch, the entries of
// scenes it did not run and every batch entry of a one-world run keep the incumbent's sizes
// (tunedEntries).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels/runtime/device.h"
#include "kernels/runtime/launch_table.h"
#include "kernels/runtime/snapshot.h"
#include "scenes/scene_runner.h"
#include "tuning/selection.h"

namespace weft {

struct TunerOptions {
  std::vector<std::string> scenes;  // scene names (already resolved)
  // Worlds per scene: above 1, each scene is measured as a batch of this many
  // worlds, and the result is the incumbent table (or an empty one) with the batch entries
  // scenes["scene@worlds"] set to the sizes that win end to end over the sizes before beyond
  // endToEndBand (all the batch's optima, else what wins alone: chooseBatchEntries; an entry's
  // kernels the batch did not measure keep their sizes); the overall picks and the other entries
  // are kept as they are.
  int worlds = 1;
  std::vector<KernelId> kernels;   // kernels to tune (empty: every kernel a step launches)
  std::vector<int> blockSizes;     // elementwise candidates (empty: 8..1024)
  std::vector<int> tileSizes;      // tile candidates (empty: 1 and 8..256)
  std::vector<int> groupSizes;     // lanes-per-item candidates of group kernels (empty: 1..32)
  double budgetMsPerPoint = 40.0;  // timing budget per (launch, size) [ms]
  int replaysPerGraph = 20;        // launches captured per timing graph
  int endToEndFrames = 10;         // frames timed per configuration in the verification
  // A size replaces the default only if it is more than this much faster (relative), and ties
  // within it go to the default, then to the larger size. Two runs on one H100 differed by up to
  // ~4% on the smallest kernels, which flipped picks at a 2% band; 5% makes repeated runs agree.
  double noiseBand = 0.05;
  // Sizes whose per-step costs differ by less than this are ties as well [µs]: the smallest
  // kernels (1–10 µs a step) differ by more than 5% from run to run at under a microsecond. At
  // 0.5 µs two regenerations at a929e9d agreed on only 62 of 66 entries (docs/TUNING.md).
  double tieMicroseconds = 1.0;
  // A batch's entries are written only where they make whole frames faster than the sizes
  // before by more than this (relative; TunerOptions::worlds > 1). End to end the timings repeat
  // far better than a kernel's sweep: five batches timed at the same sizes in two calls on an
  // H200 on 2026-11-28 differed by 0.02–0.08% (docs/TUNING.md), so the sweep's 5% band threw
  // away real gains (cable_y_junction@4096's 1.1%). 1% is over ten times that noise.
  double endToEndBand = 0.01;
  // The table this run replaces (same GPU), or none: within the tie band its sizes win, so that
  // repeated tunings change an entry only for a difference beyond the noise (selection.h).
  std::optional<LaunchTable> incumbent;
  Objective objective = Objective::GeometricMeanSpeedup;
  std::string commit;  // provenance
  /// Progress: what is being measured, and how far (done of total steps of the current scene).
  std::function<void(const std::string& what, int done, int total)> progress;
};

/// One kernel's result in one scene.
struct KernelTuning {
  SizeChoice optimum;                  // per-step cost at the scene's best size
  std::map<int, double> costs;         // size → per-step cost [µs]
  std::map<int, std::string> skipped;  // size → why it could not launch
  int launchesPerStep = 0;
  KernelResources resourcesAtDefault;  // registers, local and shared memory (cudaFuncGetAttributes)
};

struct SceneTuning {
  std::string scene;
  int measurementFrame = 0;     // the frame whose state was measured
  long long contactPairs = -1;  // candidate pairs at that frame (-1: no self-contact)
  SceneTimings timings;
  std::map<KernelId, KernelTuning> kernels;
  double stepUsDefault = 0.0;      // end to end [µs per substep], built-in defaults
  double stepUsOverall = 0.0;      //   with the overall table
  double stepUsPerScene = 0.0;     //   with this scene's optima
  bool keepsSceneEntries = false;  // the overall table was slower here: per-scene entries kept
  int worlds = 1;                  // measured as a batch of this many worlds (stepUsOverall: the
                                   // sizes the table gave that batch before; keepsSceneEntries:
                                   // its batch entries written)
  int batchEntriesMeasured = 0;    // a batch's kernel optima
  int batchEntriesKept = 0;        // ... of which written (all, or what wins end to end alone,
                                   // an optimum or a runner-up, when all together do not)
};

struct TuneResult {
  std::vector<SceneTuning> scenes;
  std::map<KernelId, SizeChoice> overall;
  LaunchTable table;
  double seconds = 0.0;          // wall time of the whole run
  double noiseBand = 0.0;        // the band the picks used (TunerOptions::noiseBand)
  double tieMicroseconds = 0.0;  // ... and the absolute tie (TunerOptions::tieMicroseconds)
  bool incumbent = false;        // near-ties went to a replaced table's sizes first
};

/// What a tuning writes for one set of entries (the overall sizes, or one scene's or batch's):
/// the incumbent's entries (null: none) with every kernel of `measured` set as `chosen` says
/// (absent from `chosen`: the run found that it needs no entry there), and every kernel this run
/// did not measure (outside --kernels, or not launched by the scenes it ran) kept as the
/// incumbent had it, so a tuning loses nothing it did not look at.
std::map<KernelId, TableEntry> tunedEntries(const std::map<KernelId, TableEntry>* incumbent,
                                            const std::set<KernelId>& measured,
                                            const std::map<KernelId, TableEntry>& chosen);

/// The batches of `scene` that a batch tuning at `worlds` leaves unverified: those the tuner
/// measured (provenance "scene@W", W > worlds) that have no entry of their own, so run the
/// largest smaller batch's entries (batchEntries), and run other sizes in `after` than in
/// `before` (scene@worlds's new entries, or, where it lost its own, a smaller batch's). Each was
/// checked against what it inherited then; tune it again (a scene's batches are tuned smallest
/// first for this reason).
std::vector<std::string> staleBatches(const LaunchTable& before, const LaunchTable& after,
                                      const std::string& scene, int worlds);

/// The state a scene is measured at: the densest self-contact frame of its tuning window (cloth),
/// or the window's last frame (cloth without self-contact; cables, settled by then), saved as a
/// snapshot of every device buffer.
struct MeasurementState {
  int frame = 0;
  long long contactPairs = -1;  // self-contact pairs or rigid contact rows of that frame
  std::unique_ptr<DeviceSnapshot> snapshot;
};

/// Runs `sim` over `windowFrames` frames and returns its measurement state (restored into the
/// device before returning).
MeasurementState runToMeasurementFrame(Device& device, SceneRunner& sim, int windowFrames,
                                       const std::function<void(int, int)>& progress = {});

/// Median µs per launch of `record` replayed at `size` inside CUDA graphs (skipped with the
/// reason if that size cannot launch).
SizeTiming timeLaunchAt(const Device& device, const LaunchRecord& record, int size, double budgetMs,
                        int replaysPerGraph);

/// One distinct launch of a recorded step and how many times the step makes it.
struct RecordedLaunch {
  LaunchRecord record;
  int timesPerStep = 0;
};

/// Runs one solver step of `sim` (without a graph; for cable scenes the frame's first substep,
/// which detects contacts; for cloth every self-contact detection builds its lists, kept lists
/// or not) and returns its launches grouped by (kernel, item count), in first-launch order.
std::vector<RecordedLaunch> recordStep(Device& device, SceneRunner& sim);

/// Times every launch at every candidate size (graph replays, median per launch). `untouched` must
/// hold the device's buffers as they are at the call (the caller's snapshot: a second one here
/// would copy the first too, four times the model's memory in all); it is restored after each
/// launch's sweep, so the device's memory is left bit-for-bit as it was.
std::vector<LaunchTiming> sweepLaunches(
    Device& device, const std::vector<RecordedLaunch>& launches, const DeviceSnapshot& untouched,
    const TunerOptions& options,
    const std::function<void(const std::string&, int, int)>& progress = {});

/// Runs the tuner on `device` (which must be CUDA). Throws weft::Error on real errors (no GPU,
/// unknown scene); sizes that cannot launch are results, not errors.
TuneResult tuneLaunches(Device& device, const TunerOptions& options);

}  // namespace weft
