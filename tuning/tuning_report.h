// The report of a tuning run: TUNING.md (per-kernel table, end-to-end table, the resources that
// explain each optimum) and two SVG plots (per-kernel speed-up by scene; end-to-end default vs
// tuned), written into one folder.
#pragma once

#include <string>
#include <vector>

#include "tuning/tuner.h"

namespace weft {

/// Writes `directory`/TUNING.md, tuning_per_kernel.svg and tuning_end_to_end.svg. `tablePath` is
/// where the table was written (named in the report). Returns the files written.
std::vector<std::string> writeTuningReport(const TuneResult& result, const std::string& directory,
                                           const std::string& tablePath);

/// The markdown alone (what TUNING.md holds).
std::string tuningReportMarkdown(const TuneResult& result, const std::string& tablePath);

}  // namespace weft
