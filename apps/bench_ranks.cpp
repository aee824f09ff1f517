#include "apps/bench_ranks.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "apps/bench.h"
#include "apps/common.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "apps/ranks.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "kernels/runtime/table_selection.h"

namespace weft {
namespace {

/// What one rank measured of one batch (or why it could not), as JSON for the gather.
nlohmann::json timingJson(const std::optional<WorldsTiming>& t, const std::string& scene) {
  if (!t) return nlohmann::json{{"idle", true}};
  if (!t->skipped.empty()) return nlohmann::json{{"skipped", t->skipped}, {"count", t->worlds}};
  return {{"count", t->worlds},
          {"size", t->size},
          {"us_per_substep", t->usPerSubstep.median},
          {"spread_percent", t->usPerSubstep.spreadPercent()},
          {"world_substeps_per_s", t->worldSubstepsPerSecond},
          {"launch_sizes",
           t->tunedWorlds > 0 ? batchSceneKey(scene, t->tunedWorlds) : std::string("one world's")}};
}

/// Every rank's `mine` on every rank; a rank's {"error": …} ends the command on all of them.
std::vector<nlohmann::json> exchange(const nlohmann::json& mine) {
  std::vector<nlohmann::json> all;
  for (const std::string& s : ranks().allGather(mine.dump()))
    all.push_back(nlohmann::json::parse(s));
  return all;
}

struct RankFailed {
  std::string message;
};

void throwIfAnyFailed(const std::vector<nlohmann::json>& all) {
  std::string message;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r].contains("error"))
      message += (message.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
                 all[r].at("error").get<std::string>();
  if (!message.empty()) throw RankFailed{message};
}

/// Runs `work` on this rank, catching what it throws into {"error": …}.
template <class Work>
nlohmann::json guarded(Work&& work) {
  try {
    return work();
  } catch (const Interrupted& e) {
    return {{"error", std::string(e.what())}, {"signal", e.signal}};
  } catch (const std::exception& e) {
    return {{"error", std::string(e.what())}};
  }
}

}  // namespace

int benchOnRanks(const BenchOptionsCli& options, std::ostream& out, std::ostream& err) {
  Ranks& r = ranks();
  const int size = r.size(), rank = r.rank();
  if (rank != 0) ProgressBar::silence(true);
  std::unique_ptr<Device> device;
  std::optional<LaunchTable> table;
  std::vector<std::string> scenes;
  std::vector<int> counts;
  char line[320];
  try {
    // Inputs, and every rank's device and table (each rank uses its own GPU model's table).
    const std::vector<nlohmann::json> ready = exchange(guarded([&]() -> nlohmann::json {
      if (options.worlds.empty())
        throw Error(
            "under mpirun, weft bench times batches of worlds spread over the ranks: give "
            "--worlds N1,N2,... (docs/SCALING.md)");
      if (!options.markdownPath.empty() || !options.mergePath.empty())
        throw Error("under mpirun, weft bench writes --json only (no --markdown or --merge)");
      if (options.repetitions < 1) throw Error("--repetitions must be at least 1");
      scenes = resolveSceneList(options.scenes, "benchmark");
      counts = parseWorldCounts(options.worlds);
      checkBenchTable(options.table);
      if (rank == 0) checkOutputFile(options.jsonPath, "--json");
      device = openDevice(options.device, false);
      if (device->isCuda() && options.table != "default") {
        const std::string path =
            options.table == "tuned" || options.table == "both" ? "" : options.table;
        TableSelection selection =
            selectLaunchTable(path, device->gpuIdentity(), defaultTablesDir());
        if (selection.table)
          table = selection.table;
        else if (options.table != "both" && options.table != "tuned")
          throw Error("the table " + options.table + " cannot be used on " + device->describe());
      }
      return {{"host", r.host()},
              {"device", device->describe()},
              {"gpu", device->isCuda() ? device->gpu().identity.describe() : std::string("-")},
              {"gpu_slot",
               r.host() + "/" +
                   (device->isCuda() ? std::to_string(cudaOrdinalOfRank(r, visibleCudaDevices()))
                                     : "cpu of rank " + std::to_string(rank))},
              {"table", table ? table->sourcePath : std::string("built-in defaults")}};
    }));
    throwIfAnyFailed(ready);
    std::set<std::string> slots;  // distinct GPUs (host and device) the ranks use
    for (const nlohmann::json& j : ready) slots.insert(j.at("gpu_slot").get<std::string>());
    const int gpus = int(slots.size());

    nlohmann::json all = benchResultsHeader();
    all["mpi"] = {{"ranks", size}, {"gpus", gpus}, {"per_rank", ready}};
    all["scenes"] = nlohmann::json::array();
    if (rank == 0) {
      out << "weft bench across " << size << " ranks (MPI) on " << gpus
          << (gpus == 1 ? " device" : " devices") << "\n";
      for (int k = 0; k < size; ++k)
        out << "  rank " << k << "        " << ready[size_t(k)].at("host").get<std::string>()
            << ", " << ready[size_t(k)].at("device").get<std::string>() << "; launch table "
            << ready[size_t(k)].at("table").get<std::string>() << "\n";
      std::snprintf(line, sizeof(line), "  %-24s %7s %16s %18s %16s %18s %11s\n", "scene", "worlds",
                    "slowest us/sub", "world-substeps/s", "per device", "one rank alone",
                    "efficiency");
      out << line;
    }
    const auto timeShare = [&](const std::string& scene, int worlds) {
      return timeWorlds(*device, scene, {worlds}, table ? &*table : nullptr, 3,
                        std::max(options.repetitions, 1))
          .front();
    };
    for (const std::string& scene : scenes) {
      nlohmann::json series = nlohmann::json::array();
      for (const int n : counts) {
        if (n < size) {
          if (rank == 0) {
            std::snprintf(line, sizeof(line), "  %-24s %7d   skipped: fewer worlds than ranks\n",
                          scene.c_str(), n);
            out << line;
          }
          series.push_back({{"count", n}, {"skipped", "fewer worlds than ranks"}});
          continue;
        }
        const WorldSlice mine = worldSliceOf(n, rank, size);
        if (rank == 0) {  // progress, for logs: a batch of many worlds takes a while to build
          err << "weft bench: measuring " << scene << ", " << n << " worlds over " << size
              << " ranks\n";
          err.flush();
        }
        // Rank 0's share alone (the others wait), then every rank's at once.
        r.barrier();
        const std::vector<nlohmann::json> alone = exchange(guarded([&]() -> nlohmann::json {
          return rank == 0 ? timingJson(timeShare(scene, mine.count), scene)
                           : nlohmann::json{{"idle", true}};
        }));
        throwIfAnyFailed(alone);
        r.barrier();
        const std::vector<nlohmann::json> together = exchange(guarded(
            [&]() -> nlohmann::json { return timingJson(timeShare(scene, mine.count), scene); }));
        throwIfAnyFailed(together);
        nlohmann::json j = {{"count", n}};
        std::string skipped;
        for (const nlohmann::json& t : together)
          if (t.contains("skipped")) skipped = t.at("skipped").get<std::string>();
        if (alone.front().contains("skipped"))
          skipped = alone.front().at("skipped").get<std::string>();
        if (!skipped.empty()) {
          j["skipped"] = skipped;
          if (rank == 0) {
            std::snprintf(line, sizeof(line), "  %-24s %7d   skipped: %s\n", scene.c_str(), n,
                          skipped.c_str());
            out << line;
          }
          series.push_back(j);
          continue;
        }
        double slowest = 0.0;
        for (const nlohmann::json& t : together)
          slowest = std::max(slowest, t.at("us_per_substep").get<double>());
        const double overall = n * 1e6 / slowest;
        const double oneRank = alone.front().at("world_substeps_per_s").get<double>();
        const double efficiency = overall / (size * oneRank);
        nlohmann::json perRank = nlohmann::json::array();
        for (int k = 0; k < size; ++k) {
          nlohmann::json e = together[size_t(k)];
          e["rank"] = k;
          perRank.push_back(e);
        }
        j["us_per_substep"] = slowest;
        j["world_substeps_per_s"] = overall;
        j["world_substeps_per_s_per_gpu"] = overall / gpus;
        j["one_rank"] = {{"worlds", worldSliceOf(n, 0, size).count},
                         {"us_per_substep", alone.front().at("us_per_substep")},
                         {"world_substeps_per_s", oneRank}};
        j["scaling_efficiency"] = efficiency;
        j["per_rank"] = perRank;
        series.push_back(j);
        if (rank == 0) {
          std::snprintf(line, sizeof(line), "  %-24s %7d %16.1f %18.0f %16.0f %18.0f %10.2f\n",
                        scene.c_str(), n, slowest, overall, overall / gpus, oneRank, efficiency);
          out << line;
          out.flush();
        }
      }
      all["scenes"].push_back({{"scene", scene}, {"worlds", series}});
    }
    if (rank == 0 && !options.jsonPath.empty()) {
      writeFileAtomically(options.jsonPath, all.dump(2) + "\n");
      out << "  json          " << options.jsonPath << "\n";
    }
  } catch (const RankFailed& e) {
    if (rank == 0) err << "weft bench: error: " << e.message << "\n";
    return kExitError;
  } catch (const std::exception& e) {  // rank 0 writing its files
    err << "weft bench: " << r.describe() << ": error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace weft
