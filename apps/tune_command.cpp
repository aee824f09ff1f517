// weft tune-launch: measure a launch table for this GPU (tuning/tuner.h) and write it, with its
// report. Unknown scene names are errors that list the valid ones, unknown kernel names errors
// that name the closest; sizes that cannot launch are results, not errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/common.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "apps/ranks.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "scenes/scene.h"
#include "tuning/tuner.h"
#include "tuning/tuning_report.h"
#include "weft_version.h"

namespace weft {
namespace {

std::vector<KernelId> resolveKernels(const std::string& spec) {
  std::vector<KernelId> ids;
  for (const std::string& name : splitList(spec, "--kernels")) {
    const auto id = kernelFromName(name);
    if (!id) throw Error(unknownKernelMessage(name));
    ids.push_back(*id);
  }
  return ids;
}

std::vector<int> resolveSizes(const std::string& spec) {
  std::vector<int> sizes;
  for (const std::string& item : splitList(spec, "--block-dims")) {
    int size = 0;
    if (std::sscanf(item.c_str(), "%d", &size) != 1 || size < 1 || size > 1024 ||
        (size & (size - 1)) != 0)
      throw Error("--block-dims: '" + item + "' is not a power of two from 1 to 1024");
    sizes.push_back(size);
  }
  return sizes;
}

int tune(const TuneOptions& options, std::ostream& out) {
  TunerOptions t;
  t.scenes = resolveSceneList(options.scenes, "tune");
  t.kernels = resolveKernels(options.kernels);
  const std::vector<int> sizes = resolveSizes(options.blockDims);
  for (int s : sizes) {
    if (s >= 8) t.blockSizes.push_back(s);
    if ((s == 1 || s >= 8) && s <= 256) t.tileSizes.push_back(s);
    if (s <= 32) t.groupSizes.push_back(s);
  }
  if (!sizes.empty() && t.blockSizes.empty())
    throw Error("--block-dims: no size from 8 to 1024 given");
  if (!(options.budgetMs > 0.0)) throw Error("--budget-ms must be positive");
  t.budgetMsPerPoint = options.quick ? std::min(options.budgetMs, 6.0) : options.budgetMs;
  if (options.quick) {
    t.replaysPerGraph = 10;
    t.endToEndFrames = 4;
  }
  t.commit = WEFT_GIT_COMMIT;
  t.worlds = options.worlds;
  if (t.worlds > 1 && options.fresh)
    throw Error("--fresh is for one-world tuning; --worlds adds batch entries to the table");
  if (t.worlds > 1 && !options.report.empty())
    throw Error("--report is for one-world tuning (docs/TUNING.md); --worlds prints its result");

  if (visibleCudaDevices() == 0)
    throw Error("tuning measures launch sizes on a CUDA GPU, but " + cudaUnavailableReason());
  auto device = openDevice("cuda", false);
  const std::string tablePath =
      options.out.empty()
          ? defaultTablesDir() + "/" + tableFileStem(device->gpu().identity.name) + ".json"
          : options.out;
  checkOutputFile(tablePath, "--out");  // before the measurements, not after them
  if (!options.report.empty()) checkOutputFolder(options.report, "--report");

  // The table being replaced wins near-ties (tuner.h), unless --fresh; one for another GPU, or
  // one that does not parse, is ignored with a note.
  if (!options.fresh && std::filesystem::exists(tablePath)) {
    try {
      LaunchTable incumbent = LaunchTable::load(tablePath);
      const TableMatch match = matchTable(incumbent, device->gpu().identity);
      if (match.applies) {
        t.incumbent = std::move(incumbent);
        out << (t.worlds > 1
                    ? "  batch entries are added to " + tablePath + "\n"
                    : "  near-ties go to the sizes of " + tablePath + " (--fresh ignores it)\n");
      } else {
        out << "  note: tuning without " << tablePath << ": it was " << match.reason << "\n";
      }
    } catch (const Error& e) {
      out << "  note: tuning without the existing table (" << e.what() << ")\n";
    }
  }

  std::unique_ptr<ProgressBar> bar;
  std::string phase;
  int phaseTotal = 0;
  t.progress = [&](const std::string& what, int done, int total) {
    throwIfInterrupted();  // between measurements: the tuner unwinds, no table is written
    // A bar per scene and stage (warm-up frames, sweep points, verification timings): each has
    // its own total, so its count and time left stay true.
    const std::string scenePhase = what.substr(0, what.find(':'));
    if (!bar || scenePhase != phase || total != phaseTotal) {
      if (bar) bar->finish();
      phase = scenePhase;
      phaseTotal = total;
      bar = std::make_unique<ProgressBar>("tune " + phase, total);
    }
    bar->update(done, what.substr(what.find(':') + 2));
  };
  out << "weft tune-launch on " << device->describe() << ": " << t.scenes.size() << " scenes"
      << (t.worlds > 1 ? " as batches of " + std::to_string(t.worlds) + " worlds" : "") << ", "
      << t.budgetMsPerPoint << " ms per point\n";
  const TuneResult result = tuneLaunches(*device, t);
  if (bar) bar->finish();

  result.table.save(tablePath);
  out << "  table         " << tablePath << "\n";
  std::vector<std::string> reportFiles;
  if (!options.report.empty())
    for (const std::string& f : writeTuningReport(result, options.report, tablePath)) {
      out << "  report        " << f << "\n";
      reportFiles.push_back(f);
    }
  if (options.resultJson) {
    nlohmann::json j = {{"table", tablePath},
                        {"report", reportFiles},
                        {"worlds", t.worlds},
                        {"seconds", result.seconds},
                        {"scenes", nlohmann::json::array()}};
    for (const SceneTuning& s : result.scenes)
      j["scenes"].push_back({{"scene", s.scene},
                             {"default_us", s.stepUsDefault},
                             {"tuned_us", s.stepUsOverall},
                             {"per_scene_us", s.stepUsPerScene},
                             {"keeps_scene_entries", s.keepsSceneEntries}});
    *options.resultJson = j.dump();
  }
  char line[200];
  if (t.worlds > 1) {
    out << "  kept where    faster than before by more than "
        << int(std::lround(100.0 * t.endToEndBand)) << "% end to end\n";
    out << "  scene@worlds                  default us     before us  batch us  speed-up\n";
    for (const SceneTuning& s : result.scenes) {
      const std::string outcome =
          !s.keepsSceneEntries ? "not faster: no entries, the sizes before stay"
          : s.batchEntriesKept < s.batchEntriesMeasured
              ? std::to_string(s.batchEntriesKept) + " of " +
                    std::to_string(s.batchEntriesMeasured) +
                    " entries written: what wins alone; all together were not faster"
              : "entries written";
      std::snprintf(line, sizeof(line), "  %-28s %10.1f %13.1f %9.1f %8.2fx",
                    batchSceneKey(s.scene, s.worlds).c_str(), s.stepUsDefault, s.stepUsOverall,
                    s.stepUsPerScene, s.stepUsOverall / s.stepUsPerScene);
      out << line << "  (" << outcome << ")\n";
    }
    if (t.incumbent)
      for (const SceneTuning& s : result.scenes)
        for (const std::string& key : staleBatches(*t.incumbent, result.table, s.scene, t.worlds))
          out << "  note          " << key << " has no entry of its own and now runs other sizes ("
              << batchSceneKey(s.scene, t.worlds)
              << "'s changed) than it was verified with: tune it again (weft tune-launch --scenes "
              << s.scene << " --worlds " << batchKeyWorlds(key, s.scene) << ")\n";
    out << "  took          " << int(result.seconds) << " s\n";
    return kExitOk;
  }
  out << "  scene                     default us  tuned us  speed-up  per-scene us\n";
  for (const SceneTuning& s : result.scenes) {
    std::snprintf(line, sizeof(line), "  %-24s %11.1f %9.1f %8.2fx %13.1f%s\n", s.scene.c_str(),
                  s.stepUsDefault, s.stepUsOverall, s.stepUsDefault / s.stepUsOverall,
                  s.stepUsPerScene, s.keepsSceneEntries ? "  (per-scene entries kept)" : "");
    out << line;
  }
  out << "  took          " << int(result.seconds) << " s\n";
  return kExitOk;
}

/// tune-launch as one rank of several (docs/SCALING.md): the lowest rank of each distinct GPU
/// model tunes (the others wait), then the tables go to every rank, and a rank of that model on
/// another machine writes it there too, so each rank finds its own model's table. Rank 0 prints
/// every tuning rank's lines and every rank's error.
int tuneOnRanks(const TuneOptions& options, std::ostream& out, std::ostream& err) {
  Ranks& r = ranks();
  const int size = r.size(), rank = r.rank();
  if (rank != 0) ProgressBar::silence(true);
  // Which GPU model each rank has ("" and the reason when it has none).
  nlohmann::json mine = {{"host", r.host()}};
  if (visibleCudaDevices() == 0) {
    mine["error"] = "tuning measures launch sizes on a CUDA GPU, but " + cudaUnavailableReason();
  } else {
    try {
      mine["model"] = openDevice("cuda", false)->gpu().identity.name;
    } catch (const std::exception& e) {
      mine["error"] = std::string(e.what());
    }
  }
  std::vector<nlohmann::json> ranksInfo;
  for (const std::string& g : r.allGather(mine.dump()))
    ranksInfo.push_back(nlohmann::json::parse(g));
  std::map<std::string, int> tuner;  // model → the rank that tunes it
  std::string failures;
  for (int k = 0; k < size; ++k) {
    const nlohmann::json& info = ranksInfo[size_t(k)];
    if (info.contains("error"))
      failures += "  rank " + std::to_string(k) + " (" + info.at("host").get<std::string>() +
                  "): " + info.at("error").get<std::string>() + "\n";
    else
      tuner.try_emplace(info.at("model").get<std::string>(), k);
  }
  if (failures.empty() && !options.out.empty() && tuner.size() > 1)
    failures = "  --out names one table, but the ranks have " + std::to_string(tuner.size()) +
               " GPU models: leave --out out to write each model's table under the tables folder\n";
  if (!failures.empty()) {
    if (rank == 0) err << "weft tune-launch: error on the ranks:\n" << failures;
    return kExitError;
  }

  // The tuning ranks tune; their lines and tables go to every rank.
  const bool tunes = std::any_of(tuner.begin(), tuner.end(),
                                 [&](const auto& entry) { return entry.second == rank; });
  nlohmann::json result = {{"tunes", tunes}};
  if (tunes) {
    std::ostringstream lines, errors;
    std::string json;
    TuneOptions o = options;
    o.resultJson = &json;
    int code = kExitError;
    try {
      code = tune(o, rank == 0 ? out : lines);
    } catch (const Interrupted& e) {
      errors << "weft tune-launch: " << e.what() << "; stopped before writing the table\n";
      code = interruptExitCode(e.signal);
    } catch (const Error& e) {
      errors << "weft tune-launch: error: " << e.what() << "\n";
    }
    result["code"] = code;
    result["lines"] = lines.str();
    result["errors"] = errors.str();
    if (code == kExitOk) {
      const std::string path = nlohmann::json::parse(json).at("table");
      result["table_path"] = path;
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      result["table"] = text.str();
    }
  }
  std::vector<nlohmann::json> results;
  for (const std::string& g : r.allGather(result.dump()))
    results.push_back(nlohmann::json::parse(g));
  int code = kExitOk;
  for (int k = 0; k < size; ++k) {
    const nlohmann::json& res = results[size_t(k)];
    if (!res.at("tunes").get<bool>()) continue;
    if (res.at("code").get<int>() != kExitOk) code = res.at("code").get<int>();
    if (rank != 0) continue;
    if (k != 0 && !res.at("lines").get<std::string>().empty())
      out << "rank " << k << " (" << ranksInfo[size_t(k)].at("host").get<std::string>() << ", "
          << ranksInfo[size_t(k)].at("model").get<std::string>() << "):\n"
          << res.at("lines").get<std::string>();
    err << res.at("errors").get<std::string>();
  }
  // A rank of a tuned model on another machine writes that model's table there too.
  const std::string model = ranksInfo[size_t(rank)].at("model");
  const int source = tuner.at(model);
  const nlohmann::json& tuned = results[size_t(source)];
  if (code == kExitOk && source != rank &&
      ranksInfo[size_t(source)].at("host") != ranksInfo[size_t(rank)].at("host")) {
    bool firstOnHost = true;  // one writer per machine: the lowest rank of this model there
    for (int k = 0; k < rank; ++k)
      if (ranksInfo[size_t(k)].at("host") == ranksInfo[size_t(rank)].at("host") &&
          ranksInfo[size_t(k)].value("model", "") == model)
        firstOnHost = false;
    if (firstOnHost)
      writeFileAtomically(tuned.at("table_path").get<std::string>(),
                          tuned.at("table").get<std::string>(), "launch table");
  }
  if (rank == 0 && code == kExitOk)
    out << "  ranks         " << size << ": " << tuner.size() << " GPU model"
        << (tuner.size() == 1 ? "" : "s")
        << " tuned once each, the tables shared with every rank\n";
  return std::stoi(r.broadcast(std::to_string(code), 0));
}

}  // namespace

int tuneCommand(const TuneOptions& options, std::ostream& out, std::ostream& err) {
  const InterruptScope interrupts;
  if (ranks().several()) return tuneOnRanks(options, out, err);
  try {
    return tune(options, out);
  } catch (const Interrupted& e) {
    err << "weft tune-launch: " << e.what()
        << "; stopped before writing the table (the existing one, if any, is unchanged)\n";
    return interruptExitCode(e.signal);
  } catch (const Error& e) {
    err << "weft tune-launch: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace weft
