// The rigid solver's convergence record (RigidPart::ConvergenceReport, `weft run
// --convergence`) summarized per iteration, and drawn as an SVG line chart on a log scale
// (`--convergence-plot`).
#pragma once

#include <string>
#include <vector>

#include "solver/simulation.h"

namespace weft {

/// Per iteration, over every recorded substep: the median and the 10th and 90th percentiles of
/// the largest body step.
struct ConvergenceSummary {
  long long substeps = 0;
  std::vector<double> medianTranslation, lowTranslation, highTranslation;  // [m]
  std::vector<double> medianRotation, lowRotation, highRotation;           // [rad]
};

ConvergenceSummary summarizeConvergence(const RigidPart::ConvergenceReport& report);

/// A self-contained SVG: the largest |Δx| [m] and |Δθ| [rad] per iteration, medians as lines and
/// the 10th–90th percentiles as bands, on a log scale. `title` heads the chart.
std::string convergenceSvg(const std::string& title, const ConvergenceSummary& summary);

}  // namespace weft
