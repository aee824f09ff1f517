#include "tuning/tuning_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"

namespace weft {
namespace {

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", digits, v);
  return b;
}

/// Kernels in the order of their total default cost (the most expensive first).
std::vector<KernelId> kernelsByCost(const TuneResult& r) {
  std::map<KernelId, double> cost;
  for (const SceneTuning& s : r.scenes)
    for (const auto& [id, k] : s.kernels) cost[id] += k.optimum.defaultMicroseconds;
  std::vector<KernelId> ids;
  for (const auto& [id, c] : cost) ids.push_back(id);
  std::sort(ids.begin(), ids.end(), [&](KernelId a, KernelId b) { return cost[a] > cost[b]; });
  return ids;
}

/// A data-derived sentence on what limits a kernel: its resources, its launch widths.
std::string resourceNote(const TuneResult& r, KernelId id) {
  for (const SceneTuning& s : r.scenes) {
    auto it = s.kernels.find(id);
    if (it == s.kernels.end()) continue;
    const KernelResources& res = it->second.resourcesAtDefault;
    std::string note = std::to_string(res.registers) + " regs";
    if (res.localBytes) note += ", " + std::to_string(res.localBytes) + " B local";
    if (res.staticSharedBytes || res.dynamicSharedBytes)
      note +=
          ", " + std::to_string(res.staticSharedBytes + res.dynamicSharedBytes) + " B shared/block";
    if (res.maxThreadsPerBlock && res.maxThreadsPerBlock < 1024)
      note += ", max " + std::to_string(res.maxThreadsPerBlock) + " threads/block";
    return note;
  }
  return "";
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  writeFileAtomically(path.string(), text);
}

const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/// Grouped horizontal bars: one group per label, one bar per series (value; 1 = no change).
std::string barChart(const std::string& title, const std::vector<std::string>& labels,
                     const std::vector<std::string>& series,
                     const std::vector<std::vector<double>>& values,  // [label][series], <0: none
                     const std::string& unit, double reference) {
  const int barH = 9, gap = 8, left = 330, width = 420, top = 40;
  const int groupH = int(series.size()) * barH + gap;
  const int height = top + int(labels.size()) * groupH + 46 + 16 * int(series.size());
  double maxValue = reference;
  for (const auto& row : values)
    for (double v : row) maxValue = std::max(maxValue, v);
  maxValue *= 1.05;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 80 << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"10\" y=\"20\" font-size=\"14\">" << title << "</text>\n";
  const double refX = left + width * reference / maxValue;
  for (size_t i = 0; i < labels.size(); ++i) {
    const int y0 = top + int(i) * groupH;
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y0 + groupH / 2 << "\" text-anchor=\"end\">"
        << labels[i] << "</text>\n";
    for (size_t k = 0; k < series.size(); ++k) {
      const double v = values[i][k];
      if (v < 0.0) continue;
      const int y = y0 + int(k) * barH;
      svg << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\""
          << fixed(width * v / maxValue, 1) << "\" height=\"" << barH - 1 << "\" fill=\""
          << kColors[k % 10] << "\"><title>" << series[k] << ": " << fixed(v, 3) << unit
          << "</title></rect>\n";
      svg << "<text x=\"" << fixed(left + width * v / maxValue + 3, 1) << "\" y=\"" << y + barH - 2
          << "\" font-size=\"8\" fill=\"#444\">" << fixed(v, v < 10.0 ? 2 : 0) << "</text>\n";
    }
  }
  // A value axis with round ticks.
  const double rawStep = maxValue / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rawStep)));
  const double step = rawStep / magnitude < 2.0   ? 2.0 * magnitude
                      : rawStep / magnitude < 5.0 ? 5.0 * magnitude
                                                  : 10.0 * magnitude;
  const int axisY = top + int(labels.size()) * groupH;
  for (double tick = 0.0; tick <= maxValue; tick += step) {
    const double x = left + width * tick / maxValue;
    svg << "<line x1=\"" << fixed(x, 1) << "\" y1=\"" << axisY << "\" x2=\"" << fixed(x, 1)
        << "\" y2=\"" << axisY + 4 << "\" stroke=\"black\"/><text x=\"" << fixed(x, 1) << "\" y=\""
        << axisY + 14 << "\" text-anchor=\"middle\" font-size=\"9\">"
        << fixed(tick, step < 1.0 ? 1 : 0) << unit << "</text>\n";
  }
  if (reference > 0.0)
    svg << "<line x1=\"" << fixed(refX, 1) << "\" y1=\"" << top - 4 << "\" x2=\"" << fixed(refX, 1)
        << "\" y2=\"" << top + int(labels.size()) * groupH << "\" stroke=\"black\" "
        << "stroke-dasharray=\"3,3\"/>\n";
  const int legendY = top + int(labels.size()) * groupH + 32;
  for (size_t k = 0; k < series.size(); ++k)
    svg << "<rect x=\"" << left << "\" y=\"" << legendY + 16 * int(k) - 9 << "\" width=\"10\" "
        << "height=\"10\" fill=\"" << kColors[k % 10] << "\"/><text x=\"" << left + 16 << "\" y=\""
        << legendY + 16 * int(k) << "\">" << series[k] << "</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace

std::string tuningReportMarkdown(const TuneResult& r, const std::string& tablePath) {
  std::ostringstream md;
  const LaunchTable& t = r.table;
  md << "# Launch tuning report\n\n";
  md << "Generated by `weft tune-launch` on " << t.gpu.describe() << ", CUDA driver API "
     << t.provenance.driver << ", runtime " << t.provenance.cudaRuntime << ", " << t.provenance.date
     << ", commit " << t.provenance.commit << "; " << fixed(r.seconds, 0) << " s. Table: `"
     << tablePath << "`.\n\n";
  md << "Method: each scene is run to its measurement frame (cloth: the densest self-contact "
        "frame of its tuning window; cables: the window's last frame, settled), one solver step "
        "is recorded (cables: the first substep of a frame, which detects contacts), and every "
        "recorded launch is replayed "
        "inside a CUDA graph at every candidate size, timed with CUDA events; µs are medians per "
        "launch times launches per step. Sizes that cannot launch are skipped with the reason.\n\n";

  md << "## Scenes measured\n\n| scene | measurement frame | contacts (self-contact candidate "
        "pairs; cables: contact rows) |\n|---|---|---|\n";
  for (const SceneTuning& s : r.scenes)
    md << "| " << s.scene << " | " << s.measurementFrame << " | "
       << (s.contactPairs >= 0 ? std::to_string(s.contactPairs) : "no self-contact") << " |\n";

  md << "\n## Per kernel\n\nFor each scene: the best size, its µs per step, and its speed-up over "
        "the built-in default. Overall: the one size recommended across the scenes (geometric "
        "mean of the per-scene speed-ups). Near-ties, sizes within "
     << int(std::lround(100.0 * r.noiseBand)) << "% or " << r.tieMicroseconds
     << " µs per step of the best, go "
     << (r.incumbent ? "to the size the replaced table held (this run re-tuned an existing "
                       "table), then "
                     : "")
     << "to the default, then to the larger size: a size must beat the "
     << (r.incumbent ? "incumbent" : "default")
     << " by more than the run-to-run noise to replace it, so repeated runs pick the same sizes. "
        "Resources are the compiler's (cudaFuncGetAttributes) at the default size.\n\n";
  md << "| kernel | default |";
  for (const SceneTuning& s : r.scenes) md << " " << s.scene << " |";
  md << " overall | resources |\n|---|---|";
  for (size_t i = 0; i < r.scenes.size(); ++i) md << "---|";
  md << "---|---|\n";
  for (KernelId id : kernelsByCost(r)) {
    const int def = t.kernels.count(id) ? t.kernels.at(id).defaultSize : 0;
    md << "| " << kernelName(id) << " | " << def << " |";
    for (const SceneTuning& s : r.scenes) {
      auto it = s.kernels.find(id);
      if (it == s.kernels.end() || it->second.costs.empty()) {
        md << " – |";
        continue;
      }
      const SizeChoice& c = it->second.optimum;
      md << " " << c.size << ": " << fixed(c.microseconds, 1) << " µs";
      if (c.speedup > 0.0) md << " (" << fixed(c.speedup, 2) << "×)";
      md << " |";
    }
    if (r.overall.count(id)) {
      const SizeChoice& o = r.overall.at(id);
      md << " **" << o.size << "**";
      if (o.speedup > 0.0) md << " (" << fixed(o.speedup, 2) << "×)";
      md << " |";
    } else {
      md << " – |";
    }
    md << " " << resourceNote(r, id) << " |\n";
  }

  md << "\n## Sizes that could not launch\n\n";
  std::set<std::string> lines;
  for (const SceneTuning& s : r.scenes)
    for (const auto& [id, k] : s.kernels)
      for (const auto& [size, reason] : k.skipped)
        lines.insert("- " + std::string(kernelName(id)) + " at " + std::to_string(size) + ": " +
                     reason.substr(0, reason.find(" (")));
  if (lines.empty()) md << "None.\n";
  for (const std::string& l : lines) md << l << "\n";

  md << "\n## End to end (µs per substep, whole frames replayed as CUDA graphs)\n\n";
  md << "| scene | default | overall table | per-scene optima | overall speed-up | note |\n";
  md << "|---|---|---|---|---|---|\n";
  for (const SceneTuning& s : r.scenes)
    md << "| " << s.scene << " | " << fixed(s.stepUsDefault, 1) << " | "
       << fixed(s.stepUsOverall, 1) << " (" << fixed(s.stepUsDefault / s.stepUsOverall, 2)
       << "×) | " << fixed(s.stepUsPerScene, 1) << " ("
       << fixed(s.stepUsDefault / s.stepUsPerScene, 2) << "×) | "
       << fixed(s.stepUsDefault / s.stepUsOverall, 2) << "× | "
       << (s.keepsSceneEntries ? "per-scene entries kept (the overall table was slower than the "
                                 "defaults or than the scene's own optima)"
                               : "")
       << " |\n";
  md << "\n![per-kernel speed-up](tuning_per_kernel.svg)\n\n"
        "![end to end](tuning_end_to_end.svg)\n";
  return md.str();
}

std::vector<std::string> writeTuningReport(const TuneResult& r, const std::string& directory,
                                           const std::string& tablePath) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (!fs::is_directory(directory)) throw Error("cannot create the report folder " + directory);
  const fs::path dir(directory);
  writeText(dir / "TUNING.md", tuningReportMarkdown(r, tablePath));

  // Per-kernel speed-up of each scene's optimum over the default.
  std::vector<std::string> labels, series;
  std::vector<std::vector<double>> values;
  for (const SceneTuning& s : r.scenes) series.push_back(s.scene);
  for (KernelId id : kernelsByCost(r)) {
    labels.push_back(std::string(kernelName(id)));
    std::vector<double> row;
    for (const SceneTuning& s : r.scenes) {
      auto it = s.kernels.find(id);
      row.push_back(it == s.kernels.end() || it->second.optimum.speedup <= 0.0
                        ? -1.0
                        : it->second.optimum.speedup);
    }
    values.push_back(row);
  }
  writeText(dir / "tuning_per_kernel.svg",
            barChart("Per-kernel speed-up of each scene's best size over the default (dashed: 1x)",
                     labels, series, values, "x", 1.0));

  labels.clear();
  values.clear();
  for (const SceneTuning& s : r.scenes) {
    labels.push_back(s.scene);
    values.push_back({s.stepUsDefault, s.stepUsOverall, s.stepUsPerScene});
  }
  writeText(
      dir / "tuning_end_to_end.svg",
      barChart("End to end: us per substep", labels,
               {"built-in defaults", "overall table", "per-scene optima"}, values, " us", 0.0));
  return {(dir / "TUNING.md").string(), (dir / "tuning_per_kernel.svg").string(),
          (dir / "tuning_end_to_end.svg").string()};
}

}  // namespace weft
