// `weft run` across the ranks of an mpirun (docs/SCALING.md): each rank simulates a contiguous
// range of the batch's worlds on its own GPU (apps/ranks.h), rank 0 gathers the ranks' reports and
// prints and writes one summary. Also the pieces of a run's report that run_command.cpp shares.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/ranks.h"
#include "scenes/checks.h"
#include "scenes/worlds.h"

namespace weft {

/// Every check passed (information never fails a run).
bool allChecksPass(const std::vector<CheckResult>& checks);
/// The "check" and "info" lines of a run.
void printChecks(std::ostream& out, const std::vector<CheckResult>& checks);
/// The last lines of a run: how a signal stopped it, if one did, and the verdict.
void printOutcome(std::ostream& out, int signal, long long framesDone, int frames, bool allPass);

/// A summary's "checks", "check_details", "information" and "all_checks_pass".
void addChecks(nlohmann::json& j, const std::vector<CheckResult>& checks, bool allPass);
/// A summary's "worlds" object's "checks_passing" and "checks_failing_worlds" (nothing when
/// `checks` is empty).
void addWorldCheckCounts(nlohmann::json& worlds, const std::vector<WorldCheckSummary>& checks);
/// Checks as a JSON list of {name, pass, detail, informational}, and back (the ranks' reports).
nlohmann::json checksToJson(const std::vector<CheckResult>& checks);
std::vector<CheckResult> checksFromJson(const nlohmann::json& j);

/// One rank's part of a run: worlds slice.first … of the batch `options` describes, simulated and
/// checked as `weft run` does; its summary (with each world's checks, "checks_per_world") goes to
/// `report` instead of the terminal. Returns the rank's exit code; throws weft::Error for bad
/// input.
int runSlice(const RunOptions& options, const WorldSlice& slice, nlohmann::json& report,
             std::ostream& err);

/// `weft run` as one rank of several: runs this rank's slice, gathers every rank's report on
/// rank 0, which prints the batch's summary (per-world checks as counts over all worlds, timing
/// per rank and overall) and writes --summary. Every rank returns rank 0's exit code. A rank that
/// fails (bad input, an error on its GPU) reports its error instead, and rank 0 prints it.
int runOnRanks(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace weft
