// weft bench: µs per substep and per frame of each scene, for the built-in launch sizes and for
// the tuned table side by side, with the spread over repetitions, a per-kernel breakdown, and the
// floor of the design (launches per substep × the GPU's measured graph-node latency). Writes JSON
// (--json) and, from the same results, the benchmarks page (--markdown).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/bench.h"
#include "apps/bench_ranks.h"
#include "apps/commands.h"
#include "apps/common.h"
#include "apps/interrupt.h"
#include "apps/ranks.h"
#include "apps/reference_figures.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "scenes/scene.h"
#include "weft_version.h"

namespace weft {

nlohmann::json benchResultsHeader() {
  const std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  return {{"date", date}, {"commit", WEFT_GIT_COMMIT}};
}

std::vector<int> parseWorldCounts(const std::string& spec) {
  std::vector<int> counts;
  for (const std::string& item : splitList(spec, "--worlds")) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || n < 1 || n > kMaxWorlds)
      throw Error("--worlds: '" + item + "' is not a world count from 1 to " +
                  std::to_string(kMaxWorlds));
    if (!counts.empty() && n <= counts.back())
      throw Error("--worlds: give the counts in ascending order (" + spec + ")");
    counts.push_back(int(n));
  }
  if (counts.empty() && !spec.empty()) throw Error("--worlds: no world count in '" + spec + "'");
  return counts;
}

void checkBenchTable(const std::string& table) {
  if (table == "default" || table == "tuned" || table == "both") return;
  try {
    LaunchTable::load(table);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (the table named by --table)");
  }
}

namespace {

/// A log-log chart of world-substeps per second against worlds: Weft's measured series (solid)
/// and the reference's (dashed), one colour per scene.
std::string worldsSvg(const nlohmann::json& all) {
  struct Series {
    std::string label;
    std::vector<std::pair<double, double>> points;
    int colour;
    bool dashed;
  };
  std::vector<Series> series;
  int colour = 0;
  for (const auto& s : all["scenes"]) {
    if (!s.contains("worlds")) continue;
    Series mine{s["scene"].get<std::string>(), {}, colour, false};
    for (const auto& w : s["worlds"])
      if (w.contains("world_substeps_per_s"))
        mine.points.push_back({w["count"].get<double>(), w["world_substeps_per_s"].get<double>()});
    if (!mine.points.empty()) series.push_back(mine);
    if (s.contains("worlds_reference")) {
      Series ref{s["scene"].get<std::string>() + " (reference)", {}, colour, true};
      for (const auto& w : s["worlds_reference"])
        ref.points.push_back({w["count"].get<double>(), w["world_substeps_per_s"].get<double>()});
      series.push_back(ref);
    }
    ++colour;
  }
  double xMax = 1.0, yMin = 1e30, yMax = 1.0;
  for (const Series& s : series)
    for (const auto& [x, y] : s.points) {
      xMax = std::max(xMax, x);
      yMin = std::min(yMin, y);
      yMax = std::max(yMax, y);
    }
  const double lx1 = std::ceil(std::log10(xMax)), ly0 = std::floor(std::log10(std::max(yMin, 1.0)));
  const double ly1 = std::ceil(std::log10(yMax));
  const double W = 720, H = 440, left = 80, right = 230, top = 40, bottom = 50;
  const auto px = [&](double x) {
    return left + (W - left - right) * std::log10(x) / std::max(lx1, 1.0);
  };
  const auto py = [&](double y) {
    return H - bottom - (H - top - bottom) * (std::log10(y) - ly0) / std::max(ly1 - ly0, 1.0);
  };
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n<text x=\""
      << left << "\" y=\"22\" font-size=\"14\">World-substeps per second against worlds per GPU ("
      << all.value("gpu", std::string("CPU")) << ")</text>\n";
  for (int e = 0; e <= int(lx1); ++e) {
    const double x = px(std::pow(10.0, e));
    svg << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << H - bottom
        << "\" stroke=\"#ddd\"/><text x=\"" << x << "\" y=\"" << H - bottom + 16
        << "\" text-anchor=\"middle\">" << int(std::pow(10.0, e)) << "</text>\n";
  }
  for (int e = int(ly0); e <= int(ly1); ++e) {
    const double y = py(std::pow(10.0, e));
    svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << W - right << "\" y2=\"" << y
        << "\" stroke=\"#ddd\"/><text x=\"" << left - 6 << "\" y=\"" << y + 4
        << "\" text-anchor=\"end\">1e" << e << "</text>\n";
  }
  svg << "<text x=\"" << (left + W - right) / 2 << "\" y=\"" << H - 12
      << "\" text-anchor=\"middle\">worlds in one model</text>\n";
  int row = 0;
  for (const Series& s : series) {
    const char* c = colours[s.colour % 5];
    svg << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << " points=\"";
    for (const auto& [x, y] : s.points) svg << px(x) << "," << py(y) << " ";
    svg << "\"/>\n";
    for (const auto& [x, y] : s.points)
      svg << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\""
          << (s.dashed ? "white" : c) << "\" stroke=\"" << c << "\"/>\n";
    const double ly = top + 10 + 18 * row++;
    svg << "<line x1=\"" << W - right + 12 << "\" y1=\"" << ly << "\" x2=\"" << W - right + 40
        << "\" y2=\"" << ly << "\" stroke=\"" << c << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,4\"" : "") << "/><text x=\"" << W - right + 46
        << "\" y=\"" << ly + 4 << "\">" << s.label << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

nlohmann::json toJson(const BenchResult& r) {
  auto spread = [](const Spread& s) {
    return nlohmann::json{{"median", s.median},
                          {"min", s.min},
                          {"max", s.max},
                          {"spread_percent", s.spreadPercent()}};
  };
  nlohmann::json j = {{"table", r.table},
                      {"us_per_substep", spread(r.usPerSubstep)},
                      {"us_per_frame", spread(r.usPerFrame)},
                      {"measurement_frame", r.measurementFrame},
                      {"launches_per_substep", r.launchesPerSubstep}};
  nlohmann::json breakdown = nlohmann::json::array();
  for (const KernelShare& k : r.breakdown)
    breakdown.push_back({{"kernel", k.kernel},
                         {"launches_per_substep", k.launchesPerStep},
                         {"us_per_substep_isolated", k.microsecondsPerStep}});
  j["breakdown"] = breakdown;
  if (r.window.endFrame > 0)
    j["window"] = {{"first_frame", r.window.firstFrame},
                   {"end_frame", r.window.endFrame},
                   {"us_per_substep_median", r.window.usPerSubstep.median},
                   {"us_per_substep_min", r.window.usPerSubstep.min},
                   {"us_per_substep_max", r.window.usPerSubstep.max}};
  if (r.variantWindow.endFrame > 0)
    j["variant_window"] = {{"options", r.variantLabel},
                           {"size", r.variantWindow.size},
                           {"first_frame", r.variantWindow.firstFrame},
                           {"end_frame", r.variantWindow.endFrame},
                           {"us_per_substep_median", r.variantWindow.usPerSubstep.median},
                           {"us_per_substep_min", r.variantWindow.usPerSubstep.min},
                           {"us_per_substep_max", r.variantWindow.usPerSubstep.max}};
  return j;
}

/// A scene's single-world runs (none when only its batches were timed: --worlds-only).
const nlohmann::json& runsOf(const nlohmann::json& scene) {
  static const nlohmann::json none = nlohmann::json::array();
  return scene.contains("runs") ? scene["runs"] : none;
}

/// Whether any scene carries the reference's figures (they exist for the GPU models they were
/// measured on only).
bool hasReference(const nlohmann::json& all, const char* key) {
  for (const auto& s : all["scenes"])
    if (s.contains(key)) return true;
  return false;
}

/// Where the results' reference figures come from, as the first scene that has them says: the
/// window figures' ("reference" → "provenance") or the batches' ("worlds_reference_provenance").
std::string referenceProvenance(const nlohmann::json& all, bool worlds) {
  for (const auto& s : all["scenes"]) {
    if (worlds && s.contains("worlds_reference_provenance"))
      return s["worlds_reference_provenance"].get<std::string>();
    if (!worlds && s.contains("reference") && s["reference"].contains("provenance"))
      return s["reference"]["provenance"].get<std::string>();
  }
  return "";
}

/// The single-world sections of the page: the window table, one substep at the densest frame,
/// the per-kernel breakdown.
void singleWorldSections(std::ostream& md, const nlohmann::json& all, bool cpu) {
  const auto cell = [](const nlohmann::json* run, const char* key = "window") -> std::string {
    if (!run || !run->contains(key)) return "–";
    const auto& w = (*run)[key];
    const double median = w["us_per_substep_median"].get<double>();
    const double spread =
        median > 0.0
            ? 100.0 *
                  (w["us_per_substep_max"].get<double>() - w["us_per_substep_min"].get<double>()) /
                  median
            : 0.0;
    return formatFixed(median, 1) + " (±" + formatFixed(spread, 0) + "%)";
  };
  md << "## User-visible cost per substep (the scene's frame pipeline over a window)\n\n"
     << "A fresh run of each scene; every frame is "
     << (cpu ? "timed with the host clock (CPU backend)"
             : "one graph replay timed with CUDA events")
     << "; the figure is the median frame time over the window's frames (0-based, end exclusive) "
        "divided by substeps, with the spread (max − min)/median over those frames (contact "
        "changes from frame to frame, so this spread is the scene's, not noise). ";
  if (hasReference(all, "reference"))
    md << "Reference: " << referenceProvenance(all, false)
       << ". Its window is its example's step() per frame, the same median over the same frames; "
          "\"step()\": its solver.step() alone replayed as a graph (– where not timed). Target: "
          "the performance issues' goal for Weft's window figure.\n\n";
  else
    md << "Reference: none on this GPU (the reference's figures were measured on "
       << referenceGpuModels() << " only, so its columns are empty).\n\n";
  md << "| scene | size | window | µs/substep built-in | µs/substep tuned | reference window µs | "
        "reference step() µs | target µs | vs reference window | target |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : all["scenes"]) {
    const nlohmann::json* def = nullptr;
    const nlohmann::json* tuned = nullptr;
    for (const auto& r : runsOf(s)) (r["table"] == "built-in defaults" ? def : tuned) = &r;
    const nlohmann::json* best = tuned ? tuned : def;
    if (!best || !best->contains("window")) continue;
    const auto& w = (*best)["window"];
    const double mine = w["us_per_substep_median"].get<double>();
    md << "| " << s["scene"].get<std::string>() << " | " << s["size"].get<std::string>() << " | "
       << w["first_frame"].get<int>() << "–" << w["end_frame"].get<int>() << " | " << cell(def)
       << " | " << cell(tuned) << " | ";
    if (s.contains("reference")) {
      const auto& ref = s["reference"];
      const double refWindow = ref["window_us"].get<double>(), step = ref["step_us"].get<double>();
      const double target = ref["target_us"].get<double>();
      const std::string note = ref["note"].get<std::string>();
      md << formatFixed(refWindow, 0) << (note.empty() ? "" : " (" + note + ")") << " | "
         << (step > 0.0 ? formatFixed(step, 0) : "–") << " | ≤ " << formatFixed(target, 0) << " | "
         << formatFixed(refWindow / mine, 2) << "× " << (refWindow >= mine ? "faster" : "slower")
         << " | "
         << (mine <= target ? "met" : "not met (" + formatFixed(mine / target, 1) + "× over)")
         << " |\n";
    } else {
      md << "– | – | – | – | – |\n";
    }
    if (best->contains("variant_window")) {  // e.g. the reference's own mesh, like for like
      const auto& v = (*best)["variant_window"];
      md << "| " << s["scene"].get<std::string>() << " (" << v["options"].get<std::string>()
         << ") | " << v["size"].get<std::string>() << " | " << v["first_frame"].get<int>() << "–"
         << v["end_frame"].get<int>() << " | " << cell(def, "variant_window") << " | "
         << cell(tuned, "variant_window") << " | ";
      if (s.contains("reference")) {
        const double refWindow = s["reference"]["window_us"].get<double>();
        const double mine = v["us_per_substep_median"].get<double>();
        md << formatFixed(refWindow, 0) << " | – | ≤ "
           << formatFixed(s["reference"]["target_us"].get<double>(), 0) << " | "
           << formatFixed(refWindow / mine, 2) << "× " << (refWindow >= mine ? "faster" : "slower")
           << " | " << (mine <= s["reference"]["target_us"].get<double>() ? "met" : "not met")
           << " |\n";
      } else {
        md << "– | – | – | – | – |\n";
      }
    }
  }
  md << "\n## One substep at the densest frame\n\n";
  md << "Method: each scene runs to its measurement frame (the densest self-contact frame of its "
        "tuning window; cable scenes: the last frame of the window, settled); a substep is the "
        "average over the substeps of a frame; "
     << (cpu ? "one substep and one frame are run from that state and timed with the host clock "
               "(CPU backend), "
             : "one substep and one frame are captured as CUDA graphs and replayed from that "
               "state, timed with CUDA events, ")
     << "repeated; medians over repetitions, spread = (max − min)/median. \"Floor\" = kernel "
        "launches per substep × the graph-node latency: what the step would cost if every kernel "
        "did no work. This is the most contact-heavy substep of each scene, the least favourable "
        "figure; the window above is the one compared with the reference.\n\n";
  md << "| scene | size | substeps × iterations | µs/substep built-in | µs/substep tuned | "
        "speed-up | µs/frame tuned | launches/substep | floor µs "
        "|\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : all["scenes"]) {
    const auto& runs = runsOf(s);
    if (runs.empty()) continue;  // batches only (--worlds-only)
    const nlohmann::json* def = nullptr;
    const nlohmann::json* tuned = nullptr;
    for (const auto& r : runs) (r["table"] == "built-in defaults" ? def : tuned) = &r;
    const nlohmann::json* best = tuned ? tuned : def;
    md << "| " << s["scene"].get<std::string>() << " | " << s["size"].get<std::string>() << " | "
       << s["substeps"].get<int>() << " × " << s["iterations"].get<int>() << " | "
       << (def ? formatFixed((*def)["us_per_substep"]["median"].get<double>(), 1) + " (±" +
                     formatFixed((*def)["us_per_substep"]["spread_percent"].get<double>(), 1) + "%)"
               : "–")
       << " | "
       << (tuned ? formatFixed((*tuned)["us_per_substep"]["median"].get<double>(), 1) + " (±" +
                       formatFixed((*tuned)["us_per_substep"]["spread_percent"].get<double>(), 1) +
                       "%)"
                 : "–")
       << " | "
       << (def && tuned ? formatFixed((*def)["us_per_substep"]["median"].get<double>() /
                                          (*tuned)["us_per_substep"]["median"].get<double>(),
                                      2) +
                              "×"
                        : "–")
       << " | " << (best ? formatFixed((*best)["us_per_frame"]["median"].get<double>(), 1) : "–")
       << " | " << (best ? std::to_string((*best)["launches_per_substep"].get<int>()) : "–")
       << " | "
       << (best ? formatFixed((*best)["launches_per_substep"].get<int>() *
                                  all["graph_node_latency_us"].get<double>(),
                              1)
                : "–")
       << " |\n";
  }
  md << "\n## Per-kernel breakdown of one substep (tuned table, each launch replayed alone)\n\n";
  md << "Each self-contact detection is counted as building its candidate lists; with kept lists "
        "(cloth_twist) most detections of a run build nothing, so its detection kernels cost less "
        "than shown (`weft run` prints how many detections built lists).\n\n";
  for (const auto& s : all["scenes"]) {
    const nlohmann::json* best = nullptr;
    for (const auto& r : runsOf(s)) best = &r;  // the last run: tuned if there is one
    if (!best || (*best)["breakdown"].empty()) continue;
    // The table's path from the source tree's root (kernels/runtime/tables/…), not this machine's.
    const std::string table = (*best)["table"].get<std::string>();
    const size_t inTree = table.rfind("/kernels/runtime/tables/");
    md << "**" << s["scene"].get<std::string>() << "** ("
       << (inTree == std::string::npos ? table : table.substr(inTree + 1)) << "): ";
    int shown = 0;
    for (const auto& k : (*best)["breakdown"]) {
      if (shown++ == 6) break;
      md << (shown > 1 ? ", " : "") << k["kernel"].get<std::string>() << " "
         << formatFixed(k["us_per_substep_isolated"].get<double>(), 0) << " µs ×"
         << k["launches_per_substep"].get<int>();
    }
    md << "\n\n";
  }
}

/// docs/BENCHMARKS.md, generated from the results.
std::string markdown(const nlohmann::json& all) {
  std::ostringstream md;
  md << "# Benchmarks\n\n"
     << "Generated by `weft bench --json ... --markdown docs/BENCHMARKS.md` from its own "
        "measurements; every number below comes from that run. Hand-written analysis and the "
        "history of changes are in `docs/PERFORMANCE.md`.\n\n";
  md << "| | |\n|---|---|\n"
     << "| GPU | " << all.value("gpu", std::string("none (CPU backend)")) << " |\n"
     << "| CUDA | driver API " << all.value("cuda_driver", std::string("-")) << ", runtime "
     << all.value("cuda_runtime", std::string("-")) << " |\n"
     << "| date | " << all["date"].get<std::string>() << " |\n"
     << "| commit | " << all["commit"].get<std::string>() << " |\n"
     << "| backend | " << all["backend"].get<std::string>() << " |\n"
     << "| graph-node latency | " << formatFixed(all["graph_node_latency_us"].get<double>(), 2)
     << " µs (median per empty kernel node in a graph of 200) |\n"
     << "| repetitions | " << all["repetitions"].get<int>() << " |\n\n";
  const bool cpu = all["backend"] == "cpu";
  // Single-world sections only when the results hold single-world runs (not after a
  // `--worlds-only` run merged with none): empty tables would read as measured and empty.
  const bool singles = std::any_of(all["scenes"].begin(), all["scenes"].end(),
                                   [](const nlohmann::json& s) { return !runsOf(s).empty(); });
  if (singles)
    singleWorldSections(md, all, cpu);
  else
    md << "Single-world figures: none in these results (a `weft bench --worlds-only` run, "
          "merged with no single-world run); the batches' own one-world rows are below.\n\n";
  bool worldsHeader = false;
  for (const auto& s : all["scenes"]) {
    if (!s.contains("worlds")) continue;
    if (!worldsHeader) {
      md << "## Many worlds per GPU\n\n"
            "Each scene replicated into N worlds in one model (`weft bench --worlds`; "
            "docs/PERFORMANCE.md): built, 3 frames run, then 10 frames timed, each "
         << (cpu ? "with the host clock (CPU backend)" : "one graph replay with CUDA events")
         << "; µs per substep is the median frame time / substeps, "
            "world-substeps per second is N / that. Launch sizes: the table's batch entries "
            "(\"scene@W\", `weft tune-launch --worlds W`) of the largest W ≤ N, else one world's; "
            "\"iterations per world\": the cable solver ran each substep's iterations in one "
            "launch, a warp's lanes per world (`--iteration-launches`, docs/PERFORMANCE.md). "
         << (hasReference(all, "worlds_reference")
                 ? "Reference: " + referenceProvenance(all, true) + "."
                 : "Reference: none on this GPU (measured on " + referenceGpuModels() + " only).")
         << "\n\n![world-substeps per second against worlds](benchmarks_worlds.svg)\n\n"
            "| scene | worlds | size | µs/substep | world-substeps/s | × one world | launch "
            "sizes | "
            "reference world-substeps/s | vs reference |\n"
            "|---|---|---|---|---|---|---|---|---|\n";
      worldsHeader = true;
    }
    double single = 0.0;
    for (const auto& w : s["worlds"]) {
      const int n = w["count"].get<int>();
      md << "| " << s["scene"].get<std::string>() << " | " << n << " | ";
      if (!w.contains("world_substeps_per_s")) {
        md << "– | – | – | – | – | – | " << w.value("skipped", std::string()) << " |\n";
        continue;
      }
      const double rate = w["world_substeps_per_s"].get<double>();
      if (n == 1) single = rate;
      md << w["size"].get<std::string>() << " | "
         << formatFixed(w["us_per_substep"].get<double>(), 1) << " (±"
         << formatFixed(w["spread_percent"].get<double>(), 0) << "%) | " << formatFixed(rate, 0)
         << " | " << (single > 0.0 ? formatFixed(rate / single, 1) + "×" : "–") << " | "
         << w["launch_sizes"].get<std::string>() << " | ";
      double ref = 0.0;
      if (s.contains("worlds_reference"))
        for (const auto& r : s["worlds_reference"])
          if (r["count"].get<int>() == n) ref = r["world_substeps_per_s"].get<double>();
      if (ref > 0.0)
        md << formatFixed(ref, 0) << " | " << formatFixed(rate / ref, 2) << "× |\n";
      else
        md << "– | – |\n";
    }
  }
  if (worldsHeader) md << "\n";
  bool convergenceHeader = false;
  for (const auto& s : all["scenes"]) {
    if (!s.contains("convergence")) continue;
    const auto& c = s["convergence"];
    if (!convergenceHeader) {
      md << "## Convergence of the cable solves over the window\n\n"
            "A fresh run with the convergence record on (`weft run --convergence`; launch sizes "
            "change no bit of it): per iteration of a substep, the largest body translation step, "
            "median over the window's substeps. How fast it falls from sweep to sweep is how far "
            "the reference's iteration count is from converged (docs/CONVERGENCE.md).\n\n"
            "| scene | window | substeps | largest body translation per iteration, median [m] |\n"
            "|---|---|---|---|\n";
      convergenceHeader = true;
    }
    md << "| " << s["scene"].get<std::string>() << " | " << c["first_frame"].get<int>() << "–"
       << c["end_frame"].get<int>() << " | " << c["substeps"].get<long long>() << " | ";
    bool first = true;
    for (const auto& v : c["median_translation_step_m"]) {
      char value[32];
      std::snprintf(value, sizeof(value), "%.3g", v.get<double>());
      md << (first ? "" : ", ") << value;
      first = false;
    }
    md << " |\n";
  }
  if (convergenceHeader) md << "\n";
  return md.str();
}

/// An earlier `--json` (--merge), read before anything is measured; nullopt when none is given.
std::optional<nlohmann::json> readEarlierResults(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw Error("--merge: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error("--merge: " + path + " is not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("scenes") || !j["scenes"].is_array() || !j.contains("commit") ||
      !j.contains("backend"))
    throw Error("--merge: " + path + " is not the --json of a weft bench run");
  return j;
}

/// Results of two runs go on one page only when they measured the same build on the same GPU.
void checkSameMachineAndCommit(const nlohmann::json& earlier, const nlohmann::json& now,
                               const std::string& path) {
  const auto describe = [](const nlohmann::json& j) {
    return j.value("gpu", std::string("the CPU")) + " at commit " + j["commit"].get<std::string>();
  };
  if (earlier.value("gpu", std::string()) != now.value("gpu", std::string()) ||
      earlier["commit"] != now["commit"] || earlier["backend"] != now["backend"])
    throw Error("--merge: " + path + " was measured on " + describe(earlier) + ", this run is on " +
                describe(now) + "; one page shows one build on one GPU");
}

/// The earlier results with this run's laid over them: the earlier page's header (its
/// repetitions and graph-node latency describe its single-scene runs), every scene of either run
/// (the earlier order, then new ones), and in a scene of both, this run's fields replacing the
/// earlier ones of the same name.
nlohmann::json mergedResults(nlohmann::json earlier, const nlohmann::json& now) {
  for (const auto& s : now["scenes"]) {
    nlohmann::json* same = nullptr;
    for (auto& e : earlier["scenes"])
      if (e["scene"] == s["scene"]) same = &e;
    if (!same) {
      earlier["scenes"].push_back(s);
      continue;
    }
    for (const auto& [key, value] : s.items()) (*same)[key] = value;
  }
  return earlier;
}

int bench(const BenchOptionsCli& options, std::ostream& out, std::ostream& err) {
  const std::vector<std::string> scenes = resolveSceneList(options.scenes, "benchmark");
  if (options.repetitions < 1) throw Error("--repetitions must be at least 1");
  checkOutputFile(options.jsonPath, "--json");  // before the measurements, not after them
  checkOutputFile(options.markdownPath, "--markdown");
  checkBenchTable(options.table);
  const std::vector<int> worldCounts = parseWorldCounts(options.worlds);
  if (options.worldsOnly && worldCounts.empty())
    throw Error("--worlds-only needs --worlds (the batches to time)");
  if (!options.mergePath.empty() && options.jsonPath.empty() && options.markdownPath.empty())
    throw Error("--merge adds the results to those of " + options.mergePath +
                ": give --json or --markdown (or both) to write them");
  const std::optional<nlohmann::json> earlier = readEarlierResults(options.mergePath);
  std::string worldsPlot;  // beside the page: the scaling chart it shows
  if (!worldCounts.empty() && !options.markdownPath.empty()) {
    worldsPlot =
        (std::filesystem::path(options.markdownPath).parent_path() / "benchmarks_worlds.svg")
            .string();
    checkOutputFile(worldsPlot, "--markdown's chart");
  }
  auto device = openDevice(options.device, false);
  // The reference's figures measured on this GPU's model, if any (none on the CPU backend).
  const ReferenceGpu* reference =
      referenceGpu(device->isCuda() ? device->gpu().identity.name : std::string());
  if (!device->isCuda() && options.table != "default")
    err << "weft bench: the CPU backend has no block sizes; launch tables do not apply ("
        << (options.table == "tuned" || options.table == "both" ? std::string("the tuned table")
                                                                : "the table " + options.table)
        << " is not used): measuring the built-in defaults\n";

  // Which tables: built-in defaults and the tuned table (when one exists for this GPU), or one.
  struct TableRun {
    std::string label;
    std::optional<LaunchTable> table;
  };
  std::vector<TableRun> tables;
  if (options.table == "default" || options.table == "both" || !device->isCuda())
    tables.push_back({"built-in defaults", std::nullopt});
  if (device->isCuda() && options.table != "default") {
    const std::string path =
        options.table == "tuned" || options.table == "both" ? "" : options.table;
    TableSelection selection = selectLaunchTable(path, device->gpuIdentity(), defaultTablesDir());
    if (selection.table) {
      tables.push_back({selection.table->sourcePath, selection.table});
    } else {
      err << "weft bench: " << selection.reason << "\n";
      if (options.table != "both" && options.table != "tuned")
        throw Error("the table " + options.table + " cannot be used on this GPU");
      if (tables.empty()) tables.push_back({"built-in defaults", std::nullopt});
    }
  }

  nlohmann::json all = benchResultsHeader();
  all["backend"] = std::string(backendName(device->backend()));
  all["repetitions"] = options.repetitions;
  if (device->isCuda()) {
    all["gpu"] = device->gpu().identity.describe();
    all["cuda_driver"] = device->gpu().driverVersion;
    all["cuda_runtime"] = device->gpu().runtimeVersion;
  }
  all["graph_node_latency_us"] = measureGraphNodeLatency(*device);
  if (earlier) checkSameMachineAndCommit(*earlier, all, options.mergePath);
  all["scenes"] = nlohmann::json::array();

  out << "weft bench on " << device->describe() << " (" << options.repetitions
      << " repetitions; graph-node latency "
      << formatFixed(all["graph_node_latency_us"].get<double>(), 2) << " us)\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-16s %-22s %14s %8s %14s %9s %9s %14s\n", "scene", "table",
                "us/substep", "spread", "us/frame", "launches", "floor us", "window us/sub");
  out << line;
  bool noisy = false;
  for (const std::string& name : scenes) {
    nlohmann::json s;
    s["scene"] = name;
    s["runs"] = nlohmann::json::array();
    for (const TableRun& t : options.worldsOnly ? std::vector<TableRun>{} : tables) {
      const GpuIdentity* gpu = device->gpuIdentity();
      if (gpu)
        device->setLaunchPolicy(
            LaunchPolicy::resolve(t.table ? &*t.table : nullptr, name, gpu->ccMajor, gpu->ccMinor));
      err << "weft bench: measuring " << name << " (" << t.label << ")\n";  // progress, for logs
      err.flush();
      BenchOptions b;
      b.scene = name;
      b.repetitions = options.repetitions;
      const BenchResult r = benchScene(*device, b, t.label);
      s["size"] = r.size;
      s["elements"] = r.elements;
      s["substeps"] = r.substeps;
      s["iterations"] = r.iterations;
      s["runs"].push_back(toJson(r));
      const double floor = r.launchesPerSubstep * all["graph_node_latency_us"].get<double>();
      // A scene without a window shows "-" there (its JSON has no "window").
      const std::string window =
          r.window.endFrame > 0 ? formatFixed(r.window.usPerSubstep.median, 1) : std::string("-");
      std::snprintf(line, sizeof(line), "  %-16s %-22s %14.1f %7.1f%% %14.1f %9d %9.1f %14s\n",
                    name.c_str(), t.label.substr(t.label.rfind('/') + 1).substr(0, 22).c_str(),
                    r.usPerSubstep.median, r.usPerSubstep.spreadPercent(), r.usPerFrame.median,
                    r.launchesPerSubstep, floor, window.c_str());
      out << line;
      if (r.usPerSubstep.spreadPercent() > 3.0) noisy = true;
    }
    if (!worldCounts.empty()) {
      const LaunchTable* table = nullptr;
      for (const TableRun& t : tables)
        if (t.table) table = &*t.table;
      err << "weft bench: measuring " << name << " as batches of worlds\n";
      err.flush();
      nlohmann::json series = nlohmann::json::array();
      for (const WorldsTiming& w : timeWorlds(*device, name, worldCounts, table)) {
        nlohmann::json j = {{"count", w.worlds}};
        if (!w.skipped.empty()) {
          j["skipped"] = w.skipped;
          std::snprintf(line, sizeof(line), "  %-16s %7d worlds   skipped: %s\n", name.c_str(),
                        w.worlds, w.skipped.c_str());
        } else {
          j["elements"] = w.elements;
          j["size"] = w.size;
          j["us_per_substep"] = w.usPerSubstep.median;
          j["spread_percent"] = w.usPerSubstep.spreadPercent();
          j["world_substeps_per_s"] = w.worldSubstepsPerSecond;
          j["launch_sizes"] = (w.tunedWorlds > 0 ? batchSceneKey(name, w.tunedWorlds)
                                                 : std::string("one world's")) +
                              (w.iteratesPerWorld ? "; iterations per world" : "");
          if (w.iteratesPerWorld) j["iteration_launches"] = "per-world";
          std::snprintf(line, sizeof(line),
                        "  %-16s %7d worlds %18s %12.1f us/substep (±%.0f%%) %14.0f "
                        "world-substeps/s (%s)\n",
                        name.c_str(), w.worlds, w.size.c_str(), w.usPerSubstep.median,
                        w.usPerSubstep.spreadPercent(), w.worldSubstepsPerSecond,
                        j["launch_sizes"].get<std::string>().c_str());
          if (w.usPerSubstep.spreadPercent() > 3.0) noisy = true;
        }
        out << line;
        series.push_back(j);
      }
      s["worlds"] = series;
      if (reference && reference->worlds.count(name)) {
        nlohmann::json r = nlohmann::json::array();
        for (const auto& [n, rate] : reference->worlds.at(name))
          r.push_back({{"count", n}, {"world_substeps_per_s", rate}});
        s["worlds_reference"] = r;
        s["worlds_reference_provenance"] = reference->worldsProvenance;
      }
    }
    const ConvergenceSummary convergence =
        options.worldsOnly ? ConvergenceSummary{} : windowConvergence(*device, name);
    if (convergence.substeps > 0) {
      const Scene& scene = findScene(name);
      s["convergence"] = {{"first_frame", scene.benchWindowFirst},
                          {"end_frame", scene.benchWindowEnd},
                          {"substeps", convergence.substeps},
                          {"median_translation_step_m", convergence.medianTranslation},
                          {"median_rotation_step_rad", convergence.medianRotation}};
    }
    if (reference && reference->windows.count(name)) {
      const ReferenceWindow& ref = reference->windows.at(name);
      s["reference"] = {{"window_us", ref.windowUs},
                        {"step_us", ref.stepUs},
                        {"target_us", ref.targetUs},
                        {"note", ref.note},
                        {"provenance", reference->windowProvenance}};
    }
    all["scenes"].push_back(s);
  }
  if (options.worldsOnly)
    for (auto& s : all["scenes"]) s.erase("runs");  // measured elsewhere (--merge), or not at all
  if (earlier) all = mergedResults(*earlier, all);
  if (noisy)
    err << "weft bench: warning: the run-to-run spread exceeded 3% on some scene; the medians are "
           "less trustworthy (is something else using the machine?)\n";
  if (!options.jsonPath.empty()) {
    writeFileAtomically(options.jsonPath, all.dump(2) + "\n");
    out << "  json          " << options.jsonPath << "\n";
  }
  if (!options.markdownPath.empty()) {
    writeFileAtomically(options.markdownPath, markdown(all));
    out << "  markdown      " << options.markdownPath << "\n";
    if (!worldsPlot.empty()) {
      writeFileAtomically(worldsPlot, worldsSvg(all));
      out << "  chart         " << worldsPlot << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

int benchCommand(const BenchOptionsCli& options, std::ostream& out, std::ostream& err) {
  const InterruptScope interrupts;
  if (ranks().several()) return benchOnRanks(options, out, err);
  try {
    return bench(options, out, err);
  } catch (const Interrupted& e) {
    err << "weft bench: " << e.what() << "; stopped before writing any results\n";
    return interruptExitCode(e.signal);
  } catch (const Error& e) {
    err << "weft bench: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace weft
