#include "apps/run_ranks.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "apps/common.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "scenes/worlds.h"

namespace weft {
namespace {

/// A rank's failure for the tests of failing ranks (docs/SCALING.md): WEFT_TEST_FAIL_RANK=r makes
/// rank r's run throw before it starts; WEFT_TEST_CRASH_RANK=r makes rank r abort (a crash, which
/// the launcher must turn into the end of the job).
void injectedFailure(int rank) {
  const auto named = [rank](const char* variable) {
    const char* value = std::getenv(variable);
    return value && *value && std::atoi(value) == rank;
  };
  if (named("WEFT_TEST_CRASH_RANK")) std::abort();
  if (named("WEFT_TEST_FAIL_RANK"))
    throw Error("failure injected by WEFT_TEST_FAIL_RANK (the test of a failing rank)");
}

/// "rank 1 of 4 (host)" for report `r` of `size` ranks.
std::string rankName(const nlohmann::json& r, int size) {
  return "rank " + std::to_string(r.at("rank").get<int>()) + " of " + std::to_string(size) + " (" +
         r.at("host").get<std::string>() + ")";
}

std::string worldRange(const nlohmann::json& r) {
  const int first = r.at("world_slice").at("first"), count = r.at("world_slice").at("count");
  return count == 1 ? "world " + std::to_string(first)
                    : "worlds " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

/// Rank 0: the ranks' reports as one run's lines and summary; returns the run's exit code.
int combineReports(const RunOptions& options, const std::vector<nlohmann::json>& reports,
                   std::ostream& out, std::ostream& err) {
  const int size = int(reports.size());
  // Errors first: a rank that could not run its worlds (the same message from every rank once).
  std::map<std::string, std::vector<std::string>> errors;  // message → ranks
  for (const nlohmann::json& r : reports)
    if (r.contains("error")) errors[r.at("error").get<std::string>()].push_back(rankName(r, size));
  if (!errors.empty()) {
    for (const auto& [message, who] : errors)
      err << "weft run: "
          << (int(who.size()) == size ? "every rank"
              : who.size() == 1       ? who.front()
                                      : std::to_string(who.size()) + " ranks")
          << ": error: " << message << "\n";
    return kExitError;
  }

  const nlohmann::json& first = reports.front();
  const int worlds = first.at("world_slice").at("total");
  const int substeps = first.at("substeps_per_frame");
  const int frames = first.at("frames_requested");

  // Checks: each world's own, over all worlds in order; then that no rank dropped a contact.
  std::vector<CheckResult> checks;
  std::vector<WorldCheckSummary> summaries;
  std::optional<std::string> interrupted;
  long long framesDone = frames;
  for (const nlohmann::json& r : reports) {
    framesDone = std::min(framesDone, r.at("frames").get<long long>());
    if (!r.at("interrupted").is_null()) interrupted = r.at("interrupted").get<std::string>();
    const nlohmann::json& d = r.at("diverged");
    if (d.is_null()) continue;
    const std::string what = d.contains("body") ? "body" : "particle";
    checks.push_back(
        {"finite", false,
         rankName(r, size) + ": " + what + " " + std::to_string(d.at(what).get<int>()) +
             " of its model (world " + std::to_string(d.at("world").get<int>()) +
             ") became non-finite at frame " + std::to_string(d.at("frame").get<long long>())});
  }
  if (checks.empty() && !interrupted) {
    std::vector<std::vector<CheckResult>> perWorld;
    for (const nlohmann::json& r : reports)
      for (const nlohmann::json& w : r.at("checks_per_world"))
        perWorld.push_back(checksFromJson(w));
    summaries = summarizeWorldChecks(perWorld);
    checks = worldCheckResults(summaries);
    std::map<std::string, CheckResult> complete;  // name → every rank's, or the first failing one
    std::vector<std::string> order;
    for (const nlohmann::json& r : reports)
      for (const CheckResult& c : checksFromJson(r.at("contacts_complete"))) {
        auto [at, inserted] = complete.try_emplace(c.name, c);
        if (inserted) order.push_back(c.name);
        if (!c.pass && at->second.pass)
          at->second = {c.name, false, rankName(r, size) + ": " + c.detail};
      }
    for (const std::string& name : order) {
      CheckResult c = complete.at(name);
      if (c.pass) c.detail = "on every rank; rank 0: " + c.detail;
      checks.push_back(c);
    }
  }
  const bool allPass = !interrupted && allChecksPass(checks);

  // Timing: the batch advances at its slowest rank's pace.
  double slowest = 0.0, megabytes = 0.0, wall = 0.0;
  std::vector<double> frameMs;
  std::vector<std::string> outputs;
  for (const nlohmann::json& r : reports) {
    slowest = std::max(slowest, r.at("us_per_substep_median").get<double>());
    megabytes += r.at("device_buffer_megabytes").get<double>();
    wall = std::max(wall, r.at("wall_seconds").get<double>());
    const std::vector<double> f = r.at("frame_ms");
    if (frameMs.size() < f.size()) frameMs.resize(f.size(), 0.0);
    for (size_t i = 0; i < f.size(); ++i) frameMs[i] = std::max(frameMs[i], f[i]);
    for (const nlohmann::json& o : r.at("outputs")) outputs.push_back(o.get<std::string>());
  }
  const double worldSubstepsPerSecond = slowest > 0.0 ? worlds * 1e6 / slowest : 0.0;

  out << "weft run " << first.at("scene").get<std::string>() << "\n";
  out << "  ranks         " << size << " (MPI), each simulating a contiguous range of the "
      << worlds << " worlds on its own device\n";
  for (const nlohmann::json& r : reports) {
    const double us = r.at("us_per_substep_median");
    out << "  rank " << r.at("rank").get<int>()
        << std::string(9 - std::to_string(r.at("rank").get<int>()).size(), ' ')
        << r.at("host").get<std::string>() << ", " << r.at("device").get<std::string>() << "; "
        << worldRange(r) << "; " << formatFixed(us, 1) << " us/substep, "
        << formatFixed(r.at("world_slice").at("count").get<int>() * 1e6 / us, 0)
        << " world-substeps/s; launch table "
        << r.at("launch_table").at("in_use").get<std::string>() << "\n";
  }
  const nlohmann::json& w = first.at("worlds");
  if (w.contains("sweep")) out << "  sweep         " << w.at("sweep").get<std::string>() << "\n";
  out << "  model         (rank 0's part) " << first.at("model_line").get<std::string>().substr(16);
  out << "  memory        " << formatFixed(megabytes, 1) << " MB of buffers over the ranks, "
      << formatFixed(megabytes / worlds, 3) << " MB per world\n";
  out << "  simulated     " << framesDone << " frames x " << substeps << " substeps at "
      << first.at("fps").get<double>() << " fps, in " << formatFixed(wall, 2)
      << " s wall (slowest rank)\n";
  out << "  timing        " << formatFixed(slowest, 1)
      << " us/substep on the slowest rank: " << formatFixed(worldSubstepsPerSecond, 0)
      << " world-substeps/s for the " << worlds << " worlds\n";
  for (const nlohmann::json& r : reports)
    for (const nlohmann::json& g : r.at("regrowths"))
      out << "  grew          " << rankName(r, size) << ": " << g.get<std::string>() << "\n";
  printChecks(out, checks);
  for (const std::string& f : outputs.size() > 3
                                  ? std::vector<std::string>{outputs.front(), "...", outputs.back()}
                                  : outputs)
    out << "  output        " << f << "\n";
  if (interrupted) out << "  interrupted   by " << *interrupted << "; checks not run\n";
  out << "  result        "
      << (interrupted ? "interrupted"
          : allPass   ? "all checks pass"
                      : "FAILED")
      << "\n";

  if (!options.summaryPath.empty()) {
    nlohmann::json j = first;
    for (const char* key : {"checks_per_world", "contacts_complete", "model_line", "world_slice",
                            "rank", "host", "exit_code", "regrowths"})
      j.erase(key);
    nlohmann::json perRank = nlohmann::json::array(), perWorldOptions = nlohmann::json::array(),
                   intersections = nlohmann::json::array(), hashes = nlohmann::json::array();
    long long totalIntersections = 0;
    bool counted = true;
    for (const nlohmann::json& r : reports) {
      nlohmann::json e;
      for (const char* key :
           {"rank", "host", "device", "gpu", "launch_table", "us_per_substep_median",
            "ms_per_frame_median", "frame_ms", "wall_seconds", "device_buffer_megabytes", "outputs",
            "regrowths", "diverged", "interrupted"})
        if (r.contains(key)) e[key] = r.at(key);
      e["worlds"] = r.at("world_slice");
      perRank.push_back(e);
      for (const nlohmann::json& h : r.at("world_state_hashes")) hashes.push_back(h);
      if (r.at("worlds").contains("scene_options_per_world"))
        for (const nlohmann::json& o : r.at("worlds").at("scene_options_per_world"))
          perWorldOptions.push_back(o);
      if (r.contains("self_intersections_per_world"))
        for (const nlohmann::json& c : r.at("self_intersections_per_world"))
          intersections.push_back(c);
      else if (r.contains("self_intersections") && r.at("self_intersections").is_number())
        intersections.push_back(r.at("self_intersections"));
      if (r.contains("self_intersections")) {
        if (r.at("self_intersections").is_number())
          totalIntersections += r.at("self_intersections").get<long long>();
        else
          counted = false;
      }
    }
    j["mpi"] = {{"ranks", size}, {"per_rank", perRank}};
    nlohmann::json& jw = j["worlds"];
    jw["count"] = worlds;
    jw["megabytes_per_world"] = megabytes / worlds;
    jw.erase("launch_sizes");  // per rank: each rank's launch table says
    if (!perWorldOptions.empty()) jw["scene_options_per_world"] = perWorldOptions;
    jw.erase("checks_passing");
    jw.erase("checks_failing_worlds");
    addWorldCheckCounts(jw, summaries);
    if (first.contains("self_intersections")) {
      j["self_intersections"] =
          counted ? nlohmann::json(totalIntersections) : nlohmann::json(nullptr);
      j["self_intersections_per_world"] = intersections;
    }
    j["world_state_hashes"] = hashes;  // every world's, in world order
    j["device_buffer_megabytes"] = megabytes;
    j["frames"] = framesDone;
    j["us_per_substep_median"] = slowest;
    j["world_substeps_per_s"] = worldSubstepsPerSecond;
    j["frame_ms"] = frameMs;  // per frame, the slowest rank's
    j["wall_seconds"] = wall;
    addChecks(j, checks, allPass);
    j["outputs"] = outputs;
    j["diverged"] = nullptr;  // the first rank whose state became non-finite, if one did
    for (const nlohmann::json& r : reports)
      if (!r.at("diverged").is_null() && j["diverged"].is_null()) {
        j["diverged"] = r.at("diverged");
        j["diverged"]["rank"] = r.at("rank");
      }
    j["interrupted"] = interrupted ? nlohmann::json(*interrupted) : nlohmann::json(nullptr);
    writeFileAtomically(options.summaryPath, j.dump(2) + "\n", "summary");
    out << "  summary       " << options.summaryPath << "\n";
  }
  out.flush();
  if (interrupted) {
    for (const nlohmann::json& r : reports)
      if (r.at("exit_code").get<int>() != kExitOk &&
          r.at("exit_code").get<int>() != kExitCheckFailed)
        return r.at("exit_code");
  }
  return allPass ? kExitOk : kExitCheckFailed;
}

}  // namespace

int runOnRanks(const RunOptions& options, std::ostream& out, std::ostream& err) {
  Ranks& r = ranks();
  if (r.rank() != 0) ProgressBar::silence(true);  // one bar: rank 0's
  nlohmann::json mine;
  int code = kExitError;
  try {
    if (options.worlds < r.size())
      throw Error("--worlds " + std::to_string(options.worlds) + ": " + std::to_string(r.size()) +
                  " ranks need at least " + std::to_string(r.size()) +
                  " worlds (each rank simulates a contiguous range of them)");
    injectedFailure(r.rank());
    code = runSlice(options, worldSliceOf(options.worlds, r.rank(), r.size()), mine, err);
  } catch (const Error& e) {
    mine = {{"error", e.what()}};
  } catch (const std::exception& e) {
    mine = {{"error", std::string("unexpected error: ") + e.what()}};
  }
  mine["rank"] = r.rank();
  mine["host"] = r.host();
  mine["exit_code"] = code;
  const std::vector<std::string> gathered = r.gather(mine.dump());
  int result = kExitError;
  if (r.rank() == 0) {
    std::vector<nlohmann::json> reports;
    for (const std::string& g : gathered) reports.push_back(nlohmann::json::parse(g));
    try {
      result = combineReports(options, reports, out, err);
    } catch (const std::exception& e) {
      err << "weft run: error: " << e.what() << "\n";
      result = kExitError;
    }
  }
  return std::stoi(r.broadcast(std::to_string(result), 0));
}

}  // namespace weft
