// Running the weft command line in-process from a test (its exit code, what it printed, how long
// it took), and a fixture with a temporary folder for what it writes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
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

/// Writes `text` to `path` (the test's own input files).
inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// A fixture with a fresh folder of its own under the system's temporary folder, removed after
/// the test; path(name) names a file in it.
class TempFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weft_test_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace weft::test
