// weft tune-launch: measure a launch table for this GPU (tuning/tuner.h) and write it, with its
// report. Unknown scene names are errors that list the valid ones, unknown kernel names errors
// that name the closest; sizes that cannot launch are results, not errors.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/common.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "tuning/tuner.h"
#include "tuning/tuning_report.h"
#include "weft_version.h"

namespace weft {
namespace {

std::vector<KernelId> resolveKernels(const std::string& spec) {
  std::vector<KernelId> ids;
  for (const std::string& name : splitList(spec)) {
    const auto id = kernelFromName(name);
    if (!id) throw Error(unknownKernelMessage(name));
    ids.push_back(*id);
  }
  return ids;
}

std::vector<int> resolveSizes(const std::string& spec) {
  std::vector<int> sizes;
  for (const std::string& item : splitList(spec)) {
    int size = 0;
    if (std::sscanf(item.c_str(), "%d", &size) != 1 || size < 1 || size > 1024 ||
        (size & (size - 1)) != 0)
      throw Error("--block-dims: '" + item + "' is not a power of two from 1 to 1024");
    sizes.push_back(size);
  }
  return sizes;
}

std::string slug(const std::string& gpuName) {
  std::string s;
  for (char c : gpuName)
    s += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '_';
  return s;
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
      options.out.empty() ? defaultTablesDir() + "/" + slug(device->gpu().identity.name) + ".json"
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
    out << "  scene@worlds                  default us     before us  batch us  speed-up\n";
    for (const SceneTuning& s : result.scenes) {
      const std::string outcome =
          !s.keepsSceneEntries ? "not faster: no entries, the sizes before stay"
          : s.batchEntriesKept < s.batchEntriesMeasured
              ? std::to_string(s.batchEntriesKept) + " of " +
                    std::to_string(s.batchEntriesMeasured) +
                    " entries written: those that win alone; together all were slower"
              : "entries written";
      std::snprintf(line, sizeof(line), "  %-28s %10.1f %13.1f %9.1f %8.2fx",
                    batchSceneKey(s.scene, s.worlds).c_str(), s.stepUsDefault, s.stepUsOverall,
                    s.stepUsPerScene, s.stepUsOverall / s.stepUsPerScene);
      out << line << "  (" << outcome << ")\n";
    }
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

}  // namespace

int tuneCommand(const TuneOptions& options, std::ostream& out, std::ostream& err) {
  const InterruptScope interrupts;
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
