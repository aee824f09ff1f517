// weft._weft: the command-line tool's commands from Python. Each calls the same function `weft`
// calls (apps/commands.h) with the GIL released, prints its lines to Python's sys.stdout /
// sys.stderr as they come (or nowhere, quiet=True), and returns what the command writes as JSON
// (the run summary, the bench results, the tuning outcome) as a dict. A command's error (exit code
// 2) raises weft.Error with the message the tool prints; Ctrl-C stops it at its next safe point
// and raises KeyboardInterrupt.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "apps/commands.h"
#include "apps/progress.h"
#include "apps/python/bindings.h"
#include "kernels/runtime/errors.h"
#include "scenes/scene.h"

namespace weft::python {
namespace {

/// Lines written to a C++ stream, handed to a Python file object (sys.stdout / sys.stderr) one
/// line at a time, the GIL taken for each; and kept, so an error can quote them.
class PythonLines : public std::streambuf {
 public:
  PythonLines(const char* file, bool echo) : file_(file), echo_(echo) {}
  ~PythonLines() override { flushLine(); }
  const std::string& text() const { return text_; }
  void flushLine() {
    if (line_.empty()) return;
    text_ += line_;
    // The command's error line becomes the exception's message instead of being printed too.
    if (echo_ && line_.find(": error: ") == std::string::npos) {
      nb::gil_scoped_acquire gil;
      nb::object stream = nb::module_::import_("sys").attr(file_);
      if (!stream.is_none()) {
        stream.attr("write")(line_);
        stream.attr("flush")();
      }
    }
    line_.clear();
  }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    line_ += char(c);
    if (c == '\n' || c == '\r') flushLine();
    return c;
  }
  int sync() override {
    flushLine();
    return 0;
  }

 private:
  const char* file_;
  bool echo_;
  std::string line_, text_;
};

/// A file in the temporary folder, removed when this goes away.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& suffix) {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() / ("weft-python-" + std::to_string(::getpid()) +
                                                       "-" + std::to_string(counter++) + suffix))
                .string();
  }
  ~TemporaryFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::string& path() const { return path_; }
  bool exists() const { return std::filesystem::exists(path_); }

 private:
  std::string path_;
};

nb::object parseJson(const std::string& text) {
  return nb::module_::import_("json").attr("loads")(text);
}
nb::object readJson(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return parseJson(text.str());
}

/// Runs a command with both streams sent to Python; raises for its errors and interruptions.
template <class Command>
int runWithStreams(const char* what, bool quiet, Command&& command) {
  PythonLines outLines("stdout", !quiet), errLines("stderr", !quiet);
  int code = 0;
  {
    std::ostream out(&outLines), err(&errLines);
    struct Silence {  // the bars write to the process's stderr directly
      explicit Silence(bool on) { ProgressBar::silence(on); }
      ~Silence() { ProgressBar::silence(false); }
    } silence(quiet);
    nb::gil_scoped_release release;
    code = command(out, err);
    out.flush();
    err.flush();
  }
  outLines.flushLine();
  errLines.flushLine();
  if (code == 130 || code == 143) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  if (code == kExitError) {
    std::string message = errLines.text();
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
    throw Error(message.empty() ? std::string(what) + " failed" : message);
  }
  return code;
}

std::vector<std::string> sceneOptionList(const nb::dict& options) {
  std::vector<std::string> out;
  for (auto [key, value] : options) out.push_back(optionKey(key) + "=" + optionValue(value));
  return out;
}

std::string worldList(nb::handle worlds) {
  if (worlds.is_none()) return "";
  if (nb::isinstance<nb::str>(worlds)) return nb::cast<std::string>(worlds);
  return optionValue(worlds);
}

}  // namespace

std::string optionKey(nb::handle key) {
  if (!nb::isinstance<nb::str>(key))
    throw nb::type_error(("options: the keys are scene option names (str), not " +
                          nb::cast<std::string>(nb::repr(key)))
                             .c_str());
  return nb::cast<std::string>(key);
}

std::string optionValue(nb::handle value) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    std::string joined;
    for (nb::handle item : value) joined += (joined.empty() ? "" : ",") + optionValue(item);
    return joined;
  }
  return nb::cast<std::string>(nb::str(value));
}
void bindCommands(nb::module_& m) {
  m.def(
      "scenes",
      [] {
        nb::list out;
        for (const Scene& s : allScenes()) {
          nb::dict d;
          d["name"] = s.name;
          d["aliases"] = s.aliases;
          d["description"] = s.description;
          d["units"] = s.units;
          d["fps"] = s.fps;
          d["substeps"] = s.substeps;
          d["default_frames"] = s.defaultFrames;
          d["cloth"] = s.hasCloth();
          d["cables"] = s.hasRigid();
          d["benchmark"] = s.benchmark;
          nb::list options;
          for (const SceneOptionInfo& o : s.options) {
            nb::dict option;
            option["key"] = o.key;
            option["default"] = o.defaultValue;
            option["meaning"] = o.meaning;
            options.append(option);
          }
          d["options"] = options;
          d["takes_mesh"] = s.cloth.takesMesh;
          out.append(d);
        }
        return out;
      },
      "Every registered scene: name, description, units, fps, substeps, default frames, its scene "
      "options (key, default, meaning) and whether run_scene's mesh= replaces its cloth.");

  m.def(
      "run_scene",
      [](const std::string& scene, int frames, const std::string& device, int worlds,
         const nb::dict& options, const std::string& outDir, const std::string& format,
         const std::string& launchTable, int iterations, const std::string& mesh, bool useGraphs,
         bool quiet) {
        RunOptions o;
        o.scene = scene;
        o.frames = frames;
        o.device = device;
        o.worlds = worlds;
        o.sceneOptions = sceneOptionList(options);
        o.outDir = outDir.empty() ? "out" : outDir;
        o.format = outDir.empty() && format.empty() ? "none" : (format.empty() ? "usda" : format);
        o.launchTable = launchTable;
        o.iterations = iterations;
        o.meshPath = mesh;
        o.useGraphs = useGraphs;
        const TemporaryFile summary(".json");
        o.summaryPath = summary.path();
        runWithStreams("run_scene", quiet, [&](std::ostream& out, std::ostream& err) {
          return runCommand(o, out, err);
        });
        if (!summary.exists()) throw Error("run_scene: the run wrote no summary");
        return readJson(summary.path());
      },
      nb::arg("scene"), nb::arg("frames") = 0, nb::arg("device") = "auto", nb::arg("worlds") = 1,
      nb::arg("options") = nb::dict(), nb::arg("out_dir") = "", nb::arg("format") = "",
      nb::arg("launch_table") = "", nb::arg("iterations") = 0, nb::arg("mesh") = "",
      nb::arg("use_graphs") = true, nb::arg("quiet") = false,
      "weft run: simulates a registered scene with all its checks and returns its summary as a "
      "dict (summary['all_checks_pass'] is True when every check passed). Frames go to out_dir "
      "(format 'usda' by default, 'obj' or 'html': the player page) only when out_dir is given.");

  m.def(
      "bench",
      [](const std::string& scenes, const std::string& device, const std::string& table,
         int repetitions, nb::handle worlds, bool worldsOnly, const std::string& markdown,
         bool quiet) {
        BenchOptionsCli o;
        o.scenes = scenes;
        o.device = device;
        o.table = table;
        o.repetitions = repetitions;
        o.worlds = worldList(worlds);
        o.worldsOnly = worldsOnly;
        o.markdownPath = markdown;
        const TemporaryFile results(".json");
        o.jsonPath = results.path();
        runWithStreams("bench", quiet, [&](std::ostream& out, std::ostream& err) {
          return benchCommand(o, out, err);
        });
        return readJson(results.path());
      },
      nb::arg("scenes") = "all", nb::arg("device") = "auto", nb::arg("table") = "both",
      nb::arg("repetitions") = 10, nb::arg("worlds") = nb::none(), nb::arg("worlds_only") = false,
      nb::arg("markdown") = "", nb::arg("quiet") = false,
      "weft bench: µs per substep of each scene (names, or 'cloth', 'cable', 'all'), with the "
      "built-in and tuned launch sizes; worlds=[1, 16, 256] also times batches. Returns the "
      "results weft bench --json writes, as a dict.");

  m.def(
      "tune_launch",
      [](const std::string& scenes, const std::string& kernels, nb::handle blockDims,
         double budgetMs, const std::string& out, const std::string& report, bool quick, bool fresh,
         int worlds, bool quiet) {
        TuneOptions o;
        o.scenes = scenes;
        o.kernels = kernels;
        o.blockDims = worldList(blockDims);
        o.budgetMs = budgetMs;
        o.out = out;
        o.report = report;
        o.quick = quick;
        o.fresh = fresh;
        o.worlds = worlds;
        std::string outcome;
        o.resultJson = &outcome;
        runWithStreams("tune_launch", quiet, [&](std::ostream& out, std::ostream& err) {
          return tuneCommand(o, out, err);
        });
        nb::object result = parseJson(outcome);
        result["table_contents"] = readJson(nb::cast<std::string>(result["table"]));
        return result;
      },
      nb::arg("scenes") = "all", nb::arg("kernels") = "", nb::arg("block_dims") = nb::none(),
      nb::arg("budget_ms") = 40.0, nb::arg("out") = "", nb::arg("report") = "",
      nb::arg("quick") = false, nb::arg("fresh") = false, nb::arg("worlds") = 1,
      nb::arg("quiet") = false,
      "weft tune-launch (CUDA): measures each kernel's best launch size and writes a table. "
      "Returns {'table': path, 'table_contents': the table, 'scenes': [...], 'seconds', ...}.");

  m.def(
      "info",
      [](const std::string& device, const std::string& launchTable, const std::string& scene,
         int worlds) {
        InfoOptions o;
        o.device = device;
        o.launchTable = launchTable;
        o.scene = scene;
        o.worlds = worlds;
        std::string text;
        runWithStreams("info", true, [&](std::ostream& out, std::ostream& err) {
          std::ostringstream captured;
          const int code = infoCommand(o, captured, err);
          text = captured.str();
          out << text;
          return code;
        });
        return text;
      },
      nb::arg("device") = "auto", nb::arg("launch_table") = "", nb::arg("scene") = "",
      nb::arg("worlds") = 1,
      "weft info as text: the backend, GPU, the launch table in effect and why, every kernel's "
      "launch size.");
}

}  // namespace weft::python
