// `weft bench --worlds` across the ranks of an mpirun (docs/SCALING.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.h"

namespace weft {

/// The fields every `weft bench --json` starts with: today's date (UTC) and the commit.
nlohmann::json benchResultsHeader();

/// The counts of a --worlds list ("1,16,256"): ascending whole numbers from 1 to 1000000; throws
/// weft::Error otherwise.
std::vector<int> parseWorldCounts(const std::string& spec);

/// --table: default, tuned, both, or a table FILE, which must load (on the CPU backend too, where
/// no table applies); throws weft::Error naming the file otherwise.
void checkBenchTable(const std::string& table);

/// `weft bench --worlds N1,N2,…` as one rank of several: for each scene and each N, the ranks
/// split the N worlds (apps/ranks.h, contiguous ranges) and time their batches at the same time
/// (timeWorlds of apps/bench.h, after a barrier); before that, rank 0 times its own share alone.
/// Rank 0 prints and writes (--json) world-substeps per second overall (N worlds at the slowest
/// rank's pace), per GPU and for the one rank alone, and the scaling efficiency: overall over
/// ranks × one rank alone. Every rank returns rank 0's exit code.
int benchOnRanks(const BenchOptionsCli& options, std::ostream& out, std::ostream& err);

}  // namespace weft
