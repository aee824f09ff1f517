// Running the weft command line in-process from a test: its exit code, what it printed, and how
// long it took.
#pragma once

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/commands.h"

namespace weft::test {

struct CliResult {
  int code;
  std::string out, err;
  double seconds;
};

/// `weft args...` through runCli, as main() runs it.
inline CliResult cli(std::vector<std::string> args) {
  args.insert(args.begin(), "weft");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const auto start = std::chrono::steady_clock::now();
  const int code = runCli(int(argv.size()), argv.data(), out, err);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {code, out.str(), err.str(), seconds};
}

/// The whole text of a file ("" when it cannot be read).
inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace weft::test
