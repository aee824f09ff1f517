// Choosing launch sizes from measured timings (the decision half of `weft tune-launch`; the
// measuring half replays recorded launches on the GPU and fills these structures).
//
// Inputs, per scene: every distinct launch of one solver step (kernel, item count, how many times
// per step), each timed at every candidate size (median µs per launch), or skipped with the reason
// it could not launch. From them:
//   per-scene cost   cost(kernel, size) = Σ over the kernel's launches of times·µs(size); a size
//                    skipped by any launch of the kernel is not a candidate for it;
//   per-scene pick   the size of least cost;
//   overall pick     the size of least summed cost over the scenes (or least geometric mean of the
//                    per-scene costs normalized by each scene's default, which weighs scenes
//                    equally however long their steps are).
// Ties within a noise band (default 2%) go to the current default, then to the larger size, so
// that re-running the tuner on the same machine picks the same answer.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/runtime/kernel_ids.h"

namespace weft {

struct SizeTiming {
  int size = 0;
  bool skipped = false;
  std::string reason;                  // why the size could not launch (when skipped)
  double microsecondsPerLaunch = 0.0;  // median over the timed replays
};

/// One distinct launch of a step, timed at every candidate size.
struct LaunchTiming {
  KernelId id{};
  int count = 0;         // items of the launch
  int timesPerStep = 1;  // identical launches per step (e.g. once per color and iteration)
  std::vector<SizeTiming> sizes;
};

struct SceneTimings {
  std::string scene;
  std::vector<LaunchTiming> launches;
};

/// Per-step cost [µs] of every kernel of a scene at every size that all its launches could use.
std::map<KernelId, std::map<int, double>> perStepCost(const SceneTimings& timings);

struct SizeChoice {
  int size = 0;               // the chosen size
  double microseconds = 0.0;  // its cost (per step, or the objective for overall picks)
  double defaultMicroseconds = 0.0;
  double speedup = 1.0;  // default cost / chosen cost
};

/// The least-cost size of `costs` (size → cost), with ties — within `noiseBand` (relative) or
/// within `absoluteTie` (in cost units) of the best — going to `incumbent` (the size the table
/// being replaced holds; 0: none), then to `defaultSize`, then to the larger size. Preferring the
/// incumbent is hysteresis: a re-tuning changes an entry only when another size is faster beyond
/// the noise, not when noise reorders near-equal sizes. Throws weft::Error if `costs` is empty.
SizeChoice pickSize(const std::map<int, double>& costs, int defaultSize, double noiseBand = 0.02,
                    double absoluteTie = 0.0, int incumbent = 0);

enum class Objective { SummedTime, GeometricMeanSpeedup };

/// One size for `id` across scenes: only sizes every scene could use are candidates.
/// `perScene` maps scene → (size → per-step cost); scenes without the kernel are ignored.
/// `absoluteTie` [µs per step] is converted to the objective's units with the scenes' mean
/// reference cost.
/// Ties go to `incumbent` first, as in pickSize.
SizeChoice pickOverallSize(const std::map<std::string, std::map<int, double>>& perScene,
                           int defaultSize, Objective objective, double noiseBand = 0.02,
                           double absoluteTie = 0.0, int incumbent = 0);

/// A kernel of a batch whose sweep optimum differs from the size the batch had before, with the
/// sizes worth timing end to end, best first (batchCandidateSizes).
struct BatchCandidate {
  KernelId id{};
  std::vector<int> sizes;
};

/// The sizes of one kernel worth timing alone end to end in a batch: its sweep optimum, then up to
/// `most` − 1 runner-ups in order of sweep cost among the sizes the sweep found faster than
/// `before` beyond the sweep's `noiseBand`. None when the kernel's whole cost at `before` is under
/// half of `stepBand`'s share of the step (`beforeStepUs`): no size of it can then win alone
/// beyond the end-to-end band. `costs`: size → per-step cost from the sweep [µs].
std::vector<int> batchCandidateSizes(const std::map<int, double>& costs, int optimum, int before,
                                     double beforeStepUs, double noiseBand, double stepBand,
                                     int most = 3);

/// Which sizes of a batch's kernels a table keeps, decided end to end (whole frames, µs per
/// substep). `beforeUs`: the batch with the sizes before; `allUs`: with every kernel's sweep
/// optimum. A set wins when it is faster than `beforeUs` beyond `band` (TunerOptions::
/// endToEndBand; a set inside the band is not a win: the batch entries exist to be faster, and a
/// slower-but-within-noise set can hide one size that wins alone behind others that lose). Every
/// optimum is kept when `allUs` wins; otherwise each candidate kernel's sizes are timed alone in
/// their order (`timeWith({{id, size}})`) until one wins, and of the kernels that win alone,
/// either all of them together (`timeWith(winners)`) or the fastest alone is kept, whichever is
/// faster and still wins; none when nothing wins alone (the sizes before stay).
struct BatchEntriesChoice {
  bool all = false;               // every optimum kept (`sizes` empty then)
  std::map<KernelId, int> sizes;  // else the sizes kept (empty: none)
  double microseconds = 0.0;      // end to end with what is kept (`allUs` when nothing is)
};
BatchEntriesChoice chooseBatchEntries(
    const std::vector<BatchCandidate>& candidates, double beforeUs, double allUs, double band,
    const std::function<double(const std::map<KernelId, int>&)>& timeWith);

}  // namespace weft
