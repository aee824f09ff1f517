#include "tuning/selection.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/runtime/errors.h"

namespace weft {

std::map<KernelId, std::map<int, double>> perStepCost(const SceneTimings& timings) {
  std::map<KernelId, std::map<int, double>> cost;
  std::map<KernelId, std::set<int>> unusable;
  for (const LaunchTiming& launch : timings.launches) {
    for (const SizeTiming& t : launch.sizes) {
      if (t.skipped) {
        unusable[launch.id].insert(t.size);
        continue;
      }
      cost[launch.id][t.size] += launch.timesPerStep * t.microsecondsPerLaunch;
    }
  }
  // A size that some launch of the kernel could not use (skipped, or never timed) is out.
  std::map<KernelId, int> launchesPerKernel;
  std::map<KernelId, std::map<int, int>> timedLaunches;
  for (const LaunchTiming& launch : timings.launches) {
    ++launchesPerKernel[launch.id];
    for (const SizeTiming& t : launch.sizes)
      if (!t.skipped) ++timedLaunches[launch.id][t.size];
  }
  for (auto& [id, sizes] : cost) {
    for (auto it = sizes.begin(); it != sizes.end();) {
      const bool complete = timedLaunches[id][it->first] == launchesPerKernel[id];
      it = (!complete || unusable[id].count(it->first)) ? sizes.erase(it) : std::next(it);
    }
  }
  return cost;
}

SizeChoice pickSize(const std::map<int, double>& costs, int defaultSize, double noiseBand,
                    double absoluteTie, int incumbent) {
  if (costs.empty()) throw Error("no launch size could be timed");
  double best = costs.begin()->second;
  for (const auto& [size, c] : costs) best = std::min(best, c);
  const double limit = std::max(best * (1.0 + noiseBand), best + absoluteTie);
  // Within the band: the incumbent if it is there, else the default, else the largest size.
  int chosen = -1;
  if (auto it = costs.find(incumbent); incumbent > 0 && it != costs.end() && it->second <= limit) {
    chosen = incumbent;
  } else if (auto it = costs.find(defaultSize); it != costs.end() && it->second <= limit) {
    chosen = defaultSize;
  } else {
    for (const auto& [size, c] : costs)
      if (c <= limit) chosen = std::max(chosen, size);
  }
  SizeChoice choice;
  choice.size = chosen;
  choice.microseconds = costs.at(chosen);
  const auto def = costs.find(defaultSize);
  choice.defaultMicroseconds = def != costs.end() ? def->second : 0.0;
  choice.speedup = def != costs.end() ? def->second / choice.microseconds : 0.0;
  return choice;
}

SizeChoice pickOverallSize(const std::map<std::string, std::map<int, double>>& perScene,
                           int defaultSize, Objective objective, double noiseBand,
                           double absoluteTie, int incumbent) {
  // Candidates: sizes every scene could use.
  std::set<int> candidates;
  bool first = true;
  for (const auto& [scene, costs] : perScene) {
    std::set<int> sizes;
    for (const auto& [size, c] : costs) sizes.insert(size);
    if (first) {
      candidates = sizes;
      first = false;
    } else {
      std::set<int> both;
      std::set_intersection(candidates.begin(), candidates.end(), sizes.begin(), sizes.end(),
                            std::inserter(both, both.begin()));
      candidates = both;
    }
  }
  if (candidates.empty()) throw Error("no launch size could be timed in every scene");

  std::map<int, double> objectiveValue, summed;
  double referenceSum = 0.0;  // the scenes' reference costs, to express absoluteTie as a ratio
  for (int size : candidates) {
    double sum = 0.0, logRatio = 0.0;
    for (const auto& [scene, costs] : perScene) {
      sum += costs.at(size);
      // Normalize by the scene's default (or its best size if the default could not run there).
      double reference = 0.0;
      if (auto it = costs.find(defaultSize); it != costs.end()) {
        reference = it->second;
      } else {
        reference = costs.begin()->second;
        for (const auto& [s, c] : costs) reference = std::min(reference, c);
      }
      logRatio += std::log(costs.at(size) / reference);
      if (size == *candidates.begin()) referenceSum += reference;
    }
    summed[size] = sum;
    objectiveValue[size] =
        objective == Objective::SummedTime ? sum : std::exp(logRatio / double(perScene.size()));
  }
  const double scenes = double(perScene.size());
  const double tie = objective == Objective::SummedTime
                         ? absoluteTie * scenes
                         : (referenceSum > 0.0 ? absoluteTie / (referenceSum / scenes) : 0.0);
  SizeChoice choice = pickSize(objectiveValue, defaultSize, noiseBand, tie, incumbent);
  choice.microseconds = summed.at(choice.size);
  const auto def = summed.find(defaultSize);
  choice.defaultMicroseconds = def != summed.end() ? def->second : 0.0;
  if (objective == Objective::SummedTime)
    choice.speedup = def != summed.end() ? def->second / choice.microseconds : 0.0;
  else
    choice.speedup = def != summed.end() ? 1.0 / objectiveValue.at(choice.size) : 0.0;
  return choice;
}

std::vector<int> batchCandidateSizes(const std::map<int, double>& costs, int optimum, int before,
                                     double beforeStepUs, double noiseBand, double stepBand,
                                     int most) {
  const auto at = costs.find(before);
  if (at != costs.end() && at->second < 0.5 * stepBand * beforeStepUs) return {};
  std::vector<int> sizes = {optimum};
  std::vector<std::pair<double, int>> others;
  for (const auto& [size, cost] : costs)
    if (size != optimum && size != before &&
        (at == costs.end() || cost < at->second * (1.0 - noiseBand)))
      others.push_back({cost, size});
  std::sort(others.begin(), others.end());
  for (const auto& [cost, size] : others)
    if (int(sizes.size()) < most) sizes.push_back(size);
  return sizes;
}

BatchEntriesChoice chooseBatchEntries(
    const std::vector<BatchCandidate>& candidates, double beforeUs, double allUs, double band,
    const std::function<double(const std::map<KernelId, int>&)>& timeWith) {
  const double winsBelow = beforeUs * (1.0 - band);
  if (allUs < winsBelow) return {.all = true, .sizes = {}, .microseconds = allUs};
  BatchEntriesChoice choice{.all = false, .sizes = {}, .microseconds = allUs};
  std::map<KernelId, int> winners;
  std::map<KernelId, int> fastest;
  double fastestUs = winsBelow;
  for (const BatchCandidate& c : candidates)
    for (int size : c.sizes) {
      const double us = timeWith({{c.id, size}});
      if (us >= winsBelow) continue;
      winners[c.id] = size;
      if (us < fastestUs) fastest = {{c.id, size}}, fastestUs = us;
      break;  // this kernel's first winning size
    }
  if (winners.empty()) return choice;
  choice.sizes = fastest;
  choice.microseconds = fastestUs;
  if (winners.size() > 1) {
    const double together = timeWith(winners);
    if (together < fastestUs) choice.sizes = winners, choice.microseconds = together;
  }
  return choice;
}

}  // namespace weft
