// Bad input, class by class: OBJ files, launch tables, command-line values, scene options, output
// paths, and signals. Every case must fail with a sentence that names the problem, exit non-zero
// and leave no output behind: neither the frames, the summary or the report it was asked for, nor
// a temporary ".tmp" file. The commands run in-process (runCli), except the signal cases, which
// start the real `weft` binary and interrupt it as a user (Ctrl-C) or a scheduler (kill) would.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "apps/commands.h"
#include "cli_support.h"
#include "kernels/runtime/errors.h"
#include "scenes/obj_loader.h"
#include "scenes/scene.h"
#include "test_support.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::cli;
using test::CliResult;
using test::readFile;

class BadInput : public test::TempFolderTest {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }

  /// Runs `weft args...` (for `run` with --out DIR/out and --summary DIR/s.json unless given), and
  /// expects a failure
  /// with exit code 2, quickly, whose message holds every phrase, and no output of any kind.
  void expectRejected(std::vector<std::string> args, const std::vector<std::string>& phrases) {
    const auto given = [&](const char* flag) {
      return std::find(args.begin(), args.end(), flag) != args.end();
    };
    if (!args.empty() && args[0] == "run") {
      if (!given("--out")) args.insert(args.end(), {"--out", path("out")});
      if (!given("--summary")) args.insert(args.end(), {"--summary", path("s.json")});
    }
    const std::set<fs::path> before = files();
    const CliResult r = cli(args);
    std::string command;
    for (const auto& a : args) command += a + " ";
    EXPECT_EQ(r.code, kExitError) << command << "\n" << r.out << r.err;
    for (const std::string& phrase : phrases) EXPECT_THAT(r.err, HasSubstr(phrase)) << command;
    EXPECT_LT(r.err.size(), 600u) << "a message, not a dump: " << r.err;
    EXPECT_LT(r.seconds, 10.0) << command << ": rejected only after simulating";
    EXPECT_EQ(files(), before) << command << ": left files behind";
  }

  /// Every file and folder under the test's folder.
  std::set<fs::path> files() const {
    std::set<fs::path> all;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) all.insert(e.path());
    return all;
  }
};

// ---- OBJ files ---------------------------------------------------------------------------------

TEST_F(BadInput, ObjFilesAreRejectedNamingTheFileAndTheLine) {
  const auto mesh = [&](const std::string& name, const std::string& text) {
    return std::vector<std::string>{"run", "cloth_franka", "--device",
                                    "cpu", "--mesh",       write(name, text)};
  };
  expectRejected({"run", "cloth_franka", "--device", "cpu", "--mesh", path("missing.obj")},
                 {"missing.obj", "does not exist"});
  fs::create_directories(path("folder.obj"));
  expectRejected({"run", "cloth_franka", "--device", "cpu", "--mesh", path("folder.obj")},
                 {"folder.obj", "is a directory"});
  expectRejected(mesh("word.obj", "v 0 0 0\nv 1 abc 0\nv 0 1 0\nf 1 2 3\n"),
                 {"word.obj", "line 2", "'abc' is not a number"});
  expectRejected(mesh("nan.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n"),
                 {"nan.obj", "line 3", "not a finite"});
  expectRejected(mesh("short.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n"),
                 {"line 2", "three coordinates"});
  // Faces and vertices are numbered from 1, as in the file, and the face's line is named.
  expectRejected(mesh("index.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n# a comment\nf 1 2 3\nf 1 2 9\n"),
                 {"index.obj", "face 2 (line 6) refers to vertex 9", "defines 3 vertices"});
  expectRejected(mesh("twice.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\n\nf 2 4 2\n"),
                 {"face 2 (line 7) uses vertex 2 twice"});
  expectRejected(mesh("empty.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"), {"empty.obj", "no faces"});
  expectRejected(mesh("garbage.obj", std::string("\x7f"
                                                 "ELF\x01\x02\x00\x00",
                                                 8)),
                 {"garbage.obj", "no faces"});
  expectRejected(mesh("two.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2\n"),
                 {"two.obj", "face 2 (line 5) has 2 vertices; a face needs at least 3"});
  // Every face of zero area: nothing would be left to simulate.
  expectRejected(mesh("flat.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n"),
                 {"its one triangle has zero area, so no cloth is left"});
  // A scene that builds its own cloth refuses --mesh instead of ignoring it (a missing file too).
  for (const std::string scene : {"cloth_fold", "poker_cards", "cloth_twist", "cloth_rollers"})
    expectRejected({"run", scene, "--device", "cpu", "--mesh", path("missing.obj")},
                   {"--mesh: " + scene + " builds its own cloth and takes no mesh",
                    "cloth_hanging, cloth_franka"});
}

// A file over the size limit is refused from its size, before a byte is read (a sparse file:
// nothing is really written to disk).
TEST_F(BadInput, ObjFileOverTheSizeLimitIsRefusedBeforeReading) {
  const std::string big = path("huge.obj");
  { std::ofstream(big) << "v 0 0 0\n"; }
  fs::resize_file(big, kMaxObjFileBytes + 1);
  expectRejected({"run", "cloth_franka", "--device", "cpu", "--mesh", big},
                 {"huge.obj", "1000 MB", "decimate"});
}

// Not an error: degenerate faces are dropped with a warning that names their lines.
TEST_F(BadInput, DegenerateObjFacesAreDroppedNamingTheirLines) {
  const std::string obj = write(
      "flat.obj", "v 0 0 0\nv 10 0 0\nv 0 10 0\nv 20 0 0\nf 1 2 3\n# next: zero area\nf 1 2 4\n");
  const CliResult r = cli({"run", "cloth_franka", "--device", "cpu", "--frames", "1", "--format",
                           "none", "--mesh", obj, "--summary", path("s.json")});
  EXPECT_NE(r.code, kExitError) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dropped 1 degenerate (zero-area) triangle (the face on line 7)"));
  // The placement of an OBJ without --mesh-* flags is said, with how to change it.
  EXPECT_THAT(r.out, HasSubstr("placed as the reference places its shirt"));
  EXPECT_THAT(r.out, HasSubstr("--mesh-scale, --mesh-rotate and --mesh-translate"));
  const auto summary = nlohmann::json::parse(readFile(path("s.json")));
  ASSERT_EQ(summary["warnings"].size(), 2u);
}

// ---- Launch tables -----------------------------------------------------------------------------

TEST_F(BadInput, LaunchTablesAreRejectedNamingTheFileAndTheField) {
  const std::string head = R"({"format": "weft-launch-table", "version": 1, "gpu": )"
                           R"({"name": "X", "compute_capability": "9.0", "sm_count": 1}, )";
  const auto table = [&](const std::string& name, const std::string& text) {
    return std::vector<std::string>{"run", "cloth_hanging",  "--device",
                                    "cpu", "--launch-table", write(name, text)};
  };
  expectRejected(table("syntax.json", head + R"("kernels": {)"), {"syntax.json"});
  expectRejected(table("name.json", head + R"("kernels": {"forward_stepp": {"block_size": 64}}})"),
                 {"name.json", "forward_stepp", "did you mean forward_step?"});
  expectRejected(
      table("wrap.json", head + R"("kernels": {"forward_step": {"block_size": 4294967424}}})"),
      {"wrap.json", "out of range"});
  expectRejected(table("neg.json", head + R"("kernels": {"forward_step": {"block_size": -64}}})"),
                 {"neg.json", "block_size"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--launch-table", path("none.json")},
                 {"none.json", "--launch-table"});
  const std::string huge = write("huge.json", "{");
  fs::resize_file(huge, 64u << 20);  // sparse
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--launch-table", huge},
                 {"huge.json", "64 MB", "not one"});
  fs::create_directories(path("folder.json"));
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--launch-table", path("folder.json")},
                 {"folder.json", "is a folder"});
  setenv("WEFT_LAUNCH_TABLE", path("env.json").c_str(), 1);
  expectRejected({"run", "cloth_hanging", "--device", "cpu"}, {"env.json", "WEFT_LAUNCH_TABLE"});
  unsetenv("WEFT_LAUNCH_TABLE");
}

// ---- Command-line values -----------------------------------------------------------------------

TEST_F(BadInput, CommandLineValuesAreNamedWithWhatTheyAccept) {
  for (const std::string frames : {"0", "-3", "abc", "1e99", "99999999999", "2.5"})
    expectRejected({"run", "cloth_hanging", "--device", "cpu", "--frames", frames},
                   {"--frames", "whole number from 1 to 100000000", "'" + frames + "'"});
  for (const std::string scale : {"0", "-1", "nan", "inf", "x"})
    expectRejected({"run", "cloth_franka", "--device", "cpu", "--mesh-scale", scale},
                   {"must be a positive number, not '" + scale + "'"});
  expectRejected({"run", "cloth_franka", "--device", "cpu", "--mesh-scale", "2"},
                 {"need --mesh FILE.obj"});
  // Coordinates and angles must be finite: NaN would place world 0 (0 × NaN) or the mesh nowhere.
  const std::string obj = write("tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  for (const std::string flag : {"--mesh-translate", "--mesh-rotate"})
    for (const std::string bad : {"nan", "inf", "1e39", "x"})
      expectRejected(
          {"run", "cloth_hanging", "--device", "cpu", "--mesh", obj, flag, "0", bad, "0"},
          {flag, "must be a finite number, not '" + bad + "'"});
  for (const std::string bad : {"nan", "-inf", "1e39"})
    expectRejected({"run", "cable_y_junction", "--device", "cpu", "--worlds", "2",
                    "--world-spacing", bad, "0", "0"},
                   {"--world-spacing", "must be a finite number, not '" + bad + "'"});
  expectRejected({"run", "cable_y_junction", "--device", "cpu", "--chebyshev-rho", "nan"},
                 {"--chebyshev-rho"});
  expectRejected({"run", "cable_cantilever", "--device", "cpu", "--convergence-plot", "c.png"},
                 {"--convergence-plot draws an SVG chart: give FILE.svg, not c.png"});
  expectRejected({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--worlds", "1,,2"},
                 {"--worlds '1,,2': an item of the list is empty"});
  expectRejected({"bench", "--scenes", "cable_y_junction,", "--device", "cpu"},
                 {"--scenes 'cable_y_junction,': an item of the list is empty"});
  // A --table FILE must be a table, on the CPU backend too (where no table applies).
  expectRejected(
      {"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--table", path("none.json")},
      {"none.json", "(the table named by --table)"});
  expectRejected({"bench", "--scenes", "cable_y_junction", "--device", "cpu", "--table",
                  write("bad.json", "{")},
                 {"bad.json", "(the table named by --table)"});
  expectRejected({"run", "cloth_hanging", "--device", "gpu"}, {"--device", "gpu"});
  expectRejected({"run", "cloth_hanging", "--format", "vtk"}, {"--format", "vtk"});
  expectRejected({"run", "no_such_scene"}, {"unknown scene 'no_such_scene'", "cloth_hanging"});
  expectRejected({"run"}, {"scene"});
  expectRejected({"frobnicate"}, {"unknown command 'frobnicate'", "tune-launch"});
  expectRejected({"bench", "--repetitions", "abc"}, {"whole number from 1 to 100000"});
  expectRejected({"bench", "--scenes", "nope", "--device", "cpu"}, {"unknown scene 'nope'"});
  expectRejected({"tune-launch", "--budget-ms", "0"}, {"must be a positive number, not '0'"});
  expectRejected(
      {"tune-launch", "--kernels", "lbvh_refit"},
      {"unknown kernel 'lbvh_refit' (did you mean lbvh_refit_nodes or lbvh_refit_leaves?"});
  expectRejected({"tune-launch", "--kernels", "no_kernel"},
                 {"no_kernel", "kernels/runtime/kernel_ids.h"});
}

// ---- Scene options -----------------------------------------------------------------------------

TEST_F(BadInput, SceneOptionsAreCheckedBeforeBuilding) {
  const auto pile = [](std::vector<std::string> options) {
    std::vector<std::string> args{"run", "cable_pile", "--device", "cpu"};
    for (const std::string& o : options) args.insert(args.end(), {"--scene-option", o});
    return args;
  };
  expectRejected(pile({"colour=red"}), {"unknown scene option 'colour'", "layers", "lanes"});
  expectRejected(pile({"layers"}), {"KEY=VALUE", "'layers'"});
  expectRejected(pile({"layers=many"}), {"layers=many is not a number"});
  expectRejected(pile({"layers=0"}), {"layers=0", "whole number from 1 to 10000"});
  expectRejected(pile({"layers=2.5"}), {"layers=2.5", "whole number"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--scene-option", "layers=2"},
                 {"unknown scene option 'layers' (this scene knows: none)"});
  expectRejected({"run", "cloth_fold", "--device", "cpu", "--scene-option", "cells=1"},
                 {"cells=1", "from 2 to"});
  expectRejected({"run", "cable_bundle_hysteresis", "--device", "cpu", "--scene-option", "dahl=2"},
                 {"dahl must be 0 (off) or 1 (on)"});
  expectRejected(
      {"run", "cable_bundle_hysteresis", "--device", "cpu", "--scene-option", "materials=soft"},
      {"materials=soft must be held (the default) or reference"});
  expectRejected({"run", "cable_dahl_loop", "--device", "cpu", "--scene-option", "tau=0"},
                 {"tau must be > 0"});
  expectRejected({"run", "cable_cantilever", "--device", "cpu", "--scene-option", "shear=-1"},
                 {"shear", "must be > 0"});
  // Lists and ranges over worlds: each end named, no value that no world would take, no key twice.
  const auto cantilever = [](std::vector<std::string> options) {
    std::vector<std::string> args{"run", "cable_cantilever", "--device", "cpu", "--worlds", "2"};
    for (const std::string& o : options) args.insert(args.end(), {"--scene-option", o});
    return args;
  };
  expectRejected(cantilever({"shear=a:1e5"}), {"range start 'a' is not a number"});
  expectRejected(cantilever({"shear=:1e5"}), {"range start '' is not a number"});
  expectRejected(cantilever({"shear=1e4:b"}), {"range end 'b' is not a number"});
  expectRejected(cantilever({"shear=1e4:1e5:1e6"}), {"a range has one ':'"});
  expectRejected(
      cantilever({"shear=1e4,2e4,3e4"}),
      {"shear=1e4,2e4,3e4 lists 3 values for 2 worlds", "the last 1 would never be used"});
  expectRejected(cantilever({"shear=1e4", "shear=2e4"}),
                 {"--scene-option shear is given twice (shear=1e4 and shear=2e4)"});
  // Chebyshev acceleration: cable scenes only, a radius in [0, 1).
  expectRejected({"run", "cable_twist", "--device", "cpu", "--chebyshev-rho", "1.5"},
                 {"--chebyshev-rho"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--chebyshev-rho", "0.5"},
                 {"--chebyshev-rho is for cable scenes", "cloth_hanging is a cloth scene"});
  // How the iterations are launched: cable scenes only, one of three words.
  expectRejected({"run", "cable_twist", "--device", "cpu", "--iteration-launches", "per-body"},
                 {"--iteration-launches"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--iteration-launches", "per-world"},
                 {"--iteration-launches is for cable scenes", "cloth_hanging is a cloth scene"});
  // The list reuse slack: cloth self-contact scenes only, never negative.
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--iterations", "0"},
                 {"--iterations"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--convergence"},
                 {"--convergence is for cable scenes", "cloth_hanging is a cloth scene"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--convergence-plot", "c.svg"},
                 {"--convergence is for cable scenes"});
  expectRejected({"run", "cable_pile", "--device", "cpu", "--reuse-slack", "0.001"},
                 {"--reuse-slack", "cable_pile has no cloth self-contact"});
  expectRejected({"run", "cloth_hanging", "--device", "cpu", "--reuse-slack", "0.001"},
                 {"cloth_hanging has no cloth self-contact"});
  expectRejected({"run", "cloth_twist", "--device", "cpu", "--reuse-slack", "-1"},
                 {"must be zero or a positive number, not '-1'"});
  // Within each option's range, but far too large together: refused at once, not bad_alloc.
  expectRejected(pile({"layers=10000", "lanes=10000"}),
                 {"4000000000 bodies", "32-bit", "choose a smaller size"});
}

// The memory estimate against what a machine has (the CLI passes the real amounts).
TEST(SceneSize, TooLargeForTheMemoryIsRefusedNamingBoth) {
  const Scene& pile = findScene("cable_pile");
  SceneOptions options;
  options.values = {{"layers", "100"}, {"lanes", "100"}};  // 400,000 bodies, ~1.5 GB
  EXPECT_NO_THROW(checkSceneFits(pile, options, size_t(8) << 30, 0));
  try {
    checkSceneFits(pile, options, size_t(1) << 30, 0);
    ADD_FAILURE() << "400,000 bodies fit in 1 GiB";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("400000 bodies"));
    EXPECT_THAT(e.what(), HasSubstr("1.5 GB"));
    EXPECT_THAT(e.what(), HasSubstr("this machine has 1.1 GB"));
  }
  try {
    checkSceneFits(pile, options, 0, size_t(1) << 30);
    ADD_FAILURE() << "400,000 bodies fit in a 1 GiB GPU";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the GPU has 1.1 GB"));
  }
  // Scenes of fixed size are not estimated before they are built; a mesh is, once read.
  EXPECT_NO_THROW(checkSceneFits(findScene("cloth_rollers"), {}, 1, 1));
  EXPECT_THROW(
      checkElementsFit("cloth_franka with --mesh big.obj", 1000000, false, size_t(1) << 30, 0),
      Error);
  EXPECT_NO_THROW(
      checkElementsFit("cloth_franka with --mesh big.obj", 1000000, false, size_t(8) << 30, 0));
}

// ---- Output paths ------------------------------------------------------------------------------

TEST_F(BadInput, UnwritableOutputPathsFailBeforeAnyWork) {
  write("file.txt", "x");
  const std::vector<std::string> hanging{"run", "cloth_hanging", "--device", "cpu"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = hanging;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expectRejected(with({"--summary", dir_.string()}), {"--summary", "is a folder"});
  expectRejected(with({"--summary", path("file.txt/s.json")}), {"--summary", "not a folder"});
  expectRejected(with({"--out", path("file.txt")}), {"--out", "is a file"});
  expectRejected(with({"--out", path("file.txt/frames")}), {"--out", "not a folder"});
  expectRejected({"bench", "--scenes", "cloth_hanging", "--device", "cpu", "--json", dir_.string()},
                 {"--json", "is a folder"});
  expectRejected({"bench", "--scenes", "cloth_hanging", "--device", "cpu", "--markdown",
                  path("file.txt/BENCHMARKS.md")},
                 {"--markdown", "not a folder"});
  // A folder whose permissions allow writing but where no file can be made (root may write
  // anywhere, but not into /proc): found by making one, before any work.
  if (fs::is_directory("/proc/self")) {
    expectRejected(with({"--summary", "/proc/self/weft-s.json"}),
                   {"--summary /proc/self/weft-s.json cannot be written"});
    expectRejected(
        {"run", "cable_cantilever", "--device", "cpu", "--convergence-plot", "/proc/self/c.svg"},
        {"--convergence-plot /proc/self/c.svg cannot be written"});
    expectRejected(
        {"bench", "--scenes", "cloth_hanging", "--device", "cpu", "--json", "/proc/self/b.json"},
        {"--json /proc/self/b.json cannot be written"});
  }
}

// ---- Signals -----------------------------------------------------------------------------------

#ifdef WEFT_BINARY
/// The real weft binary, started with stdout to a file and stderr to a pipe we read.
class WeftProcess {
 public:
  WeftProcess(const std::vector<std::string>& args, const fs::path& stdoutFile) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      const int out = open(stdoutFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, STDOUT_FILENO);
      close(fds[0]);
      std::vector<char*> argv{const_cast<char*>(WEFT_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(WEFT_BINARY, argv.data());
      _exit(127);
    }
    close(fds[1]);
    errFd_ = fds[0];
  }
  ~WeftProcess() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(errFd_);
  }
  /// Reads stderr until it holds `text`; false after `seconds` or at its end.
  bool waitFor(const std::string& text, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (err_.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{errFd_, POLLIN, 0};
      if (poll(&p, 1, int(left.count())) <= 0) continue;
      char buffer[4096];
      const ssize_t n = read(errFd_, buffer, sizeof(buffer));
      if (n <= 0) return false;
      err_.append(buffer, size_t(n));
    }
    return true;
  }
  void signal(int s) { kill(pid_, s); }
  /// Waits for the exit (at most `seconds`, then kills it); the exit code, or 128 + the signal
  /// that ended it.
  int wait(double seconds) {
    waitFor("\x01never", seconds);  // drain stderr until it closes or time runs out
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  int errFd_ = -1;
  bool reaped_ = false;
  std::string err_;
};

/// No ".tmp" left anywhere under `dir`.
void expectNoTemporaryFiles(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

/// Frames of a .usda file: its endTimeCode, after checking that the file is whole (it closes
/// every block it opens and has one time sample per frame 0..endTimeCode for the cloth).
int checkWholeUsda(const fs::path& path, bool cloth) {
  const std::string text = readFile(path);
  EXPECT_EQ(text.rfind("#usda 1.0", 0), 0u) << path;
  EXPECT_EQ(std::count(text.begin(), text.end(), '{'), std::count(text.begin(), text.end(), '}'))
      << path << " is cut off";
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex("endTimeCode = (\\d+)"))) << path;
  const int end = std::stoi(m[1]);
  if (cloth) {
    const size_t points = text.find("points.timeSamples");
    EXPECT_NE(points, std::string::npos);
    for (int f = 0; f <= end; ++f)
      EXPECT_NE(text.find("\n            " + std::to_string(f) + ": [", points), std::string::npos)
          << "frame " << f << " missing";
  }
  return end;
}

class Signals : public BadInput {
 protected:
  struct Stopped {
    int code;         // exit code (128 + signal when the signal killed it)
    std::string err;  // everything it wrote to stderr
  };
  /// Starts `weft args...` (stdout to stdout.txt), waits for the progress line `progress` (its
  /// first frame or measurement), sends `signal` and waits for the exit.
  Stopped stop(const std::vector<std::string>& args, const std::string& progress, int signal) {
    WeftProcess weft(args, path("stdout.txt"));
    EXPECT_TRUE(weft.waitFor(progress, 120)) << weft.err();
    weft.signal(signal);
    const int code = weft.wait(120);
    return {code, weft.err()};
  }
};

TEST_F(Signals, CtrlCStopsARunAfterItsFrameWithWholeFilesAndExit130) {
  const Stopped r = stop({"run", "cloth_hanging", "--device", "cpu", "--frames", "100000", "--out",
                          path("out"), "--summary", path("s.json")},
                         "weft run cloth_hanging: 1 of 100000", SIGINT);
  EXPECT_EQ(r.code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("stopping after the current step"));
  const std::string out = readFile(path("stdout.txt"));
  EXPECT_THAT(out, HasSubstr("interrupted   by SIGINT after frame"));
  EXPECT_THAT(out, HasSubstr("result        interrupted"));
  const auto summary = nlohmann::json::parse(readFile(path("s.json")));
  EXPECT_EQ(summary["interrupted"], "SIGINT");
  EXPECT_EQ(summary["frames_requested"], 100000);
  const int frames = summary["frames"].get<int>();
  EXPECT_GE(frames, 1);
  EXPECT_LT(frames, 100000);
  EXPECT_EQ(checkWholeUsda(path("out/cloth_hanging.usda"), true), frames);
  expectNoTemporaryFiles(dir_);
}

TEST_F(Signals, KillStopsAnObjRunWithEveryFrameFileWholeAndExit143) {
  const Stopped r = stop({"run", "cloth_hanging", "--device", "cpu", "--frames", "100000",
                          "--format", "obj", "--out", path("out")},
                         "weft run cloth_hanging: 1 of 100000", SIGTERM);
  EXPECT_EQ(r.code, 143) << r.err;
  EXPECT_THAT(readFile(path("stdout.txt")), HasSubstr("interrupted   by SIGTERM"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(path("out"))) {
    ++files;
    const std::string text = readFile(e.path());
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1089 + 2048) << e.path();
  }
  EXPECT_GE(files, 2);  // frame 0 and at least frame 1
  expectNoTemporaryFiles(dir_);
}

TEST_F(Signals, CtrlCStopsACableRunWithAWholeFile) {
  const Stopped r = stop({"run", "cable_pile", "--device", "cpu", "--frames", "100000", "--out",
                          path("out"), "--summary", path("s.json")},
                         "weft run cable_pile: 1 of 100000", SIGINT);
  EXPECT_EQ(r.code, 130) << r.err;
  const auto summary = nlohmann::json::parse(readFile(path("s.json")));
  EXPECT_EQ(summary["interrupted"], "SIGINT");
  EXPECT_EQ(checkWholeUsda(path("out/cable_pile.usda"), false), summary["frames"].get<int>());
  expectNoTemporaryFiles(dir_);
}

// A run killed outright (SIGKILL cannot be caught) leaves no file under the final name that a
// reader could mistake for a whole one: only the temporary.
TEST_F(Signals, AKilledRunLeavesNoTruncatedFile) {
  const Stopped r =
      stop({"run", "cloth_hanging", "--device", "cpu", "--frames", "100000", "--out", path("out")},
           "weft run cloth_hanging: 1 of 100000", SIGKILL);
  EXPECT_EQ(r.code, 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(path("out/cloth_hanging.usda")));
  EXPECT_TRUE(fs::exists(path("out/cloth_hanging.usda.tmp")));
}

TEST_F(Signals, CtrlCStopsABenchmarkWithoutWritingResults) {
  const Stopped r =
      stop({"bench", "--scenes", "cloth_hanging", "--device", "cpu", "--repetitions", "100000",
            "--json", path("bench.json"), "--markdown", path("BENCHMARKS.md")},
           "weft bench: measuring cloth_hanging", SIGINT);
  EXPECT_EQ(r.code, 130) << r.err;
  EXPECT_THAT(r.err, HasSubstr("interrupted by SIGINT; stopped before writing any results"));
  EXPECT_FALSE(fs::exists(path("bench.json")));
  EXPECT_FALSE(fs::exists(path("BENCHMARKS.md")));
  expectNoTemporaryFiles(dir_);
}
#endif  // WEFT_BINARY

}  // namespace
}  // namespace weft
