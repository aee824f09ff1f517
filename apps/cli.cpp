// Command-line parsing (CLI11) for the weft tool; each subcommand forwards to its command.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include "apps/commands.h"
#include "scenes/scene.h"
#include "weft_version.h"

namespace weft {
namespace {

/// A whole number in [lo, hi], said plainly when it is not (CLI11's own range check prints its
/// bounds as 309-digit floats and calls "abc" out of range).
CLI::Validator wholeNumber(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc() && stop == end && value >= lo && value <= hi) return {};
        return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
               ", not '" + text + "'";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

/// A finite number above 0, or (`zeroAllowed`) at least 0.
CLI::Validator numberFrom(bool zeroAllowed) {
  return CLI::Validator(
      [zeroAllowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(value) &&
            (zeroAllowed ? value >= 0.0 : value > 0.0) && value <= 3.4e38)
          return {};
        return std::string(zeroAllowed ? "must be zero or a positive number"
                                       : "must be a positive number") +
               ", not '" + text + "'";
      },
      zeroAllowed ? "NON-NEGATIVE" : "POSITIVE");
}

/// Any finite number (a coordinate, an angle).
CLI::Validator finiteNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(value) &&
            std::fabs(value) <= 3.4e38)
          return {};
        return "must be a finite number, not '" + text + "'";
      },
      "NUMBER");
}

CLI::Validator positiveNumber() {
  return numberFrom(false);
}
/// 0 allowed: it switches a feature off.
CLI::Validator nonNegativeNumber() {
  return numberFrom(true);
}

}  // namespace

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "weft: Vertex Block Descent cloth and AVBD cables on CUDA and CPU, with tuned launch tables"};
  app.require_subcommand(1);
  app.footer("Run `weft SUBCOMMAND --help` for a subcommand's options.");
  app.set_version_flag("--version", std::string("weft ") + WEFT_GIT_COMMIT,
                       "print the version (the source commit) and exit");

  RunOptions run;
  CLI::App* runCmd = app.add_subcommand("run", "simulate a scene headless and check the result");
  runCmd->add_option("scene", run.scene, "scene to run (see `weft scenes`)")->required();
  runCmd->add_option("--frames", run.frames, "frames to simulate (default: the scene's)")
      ->check(wholeNumber(1, 100000000));
  runCmd
      ->add_option("--iterations", run.iterations,
                   "solver iterations per substep (default: the scene's; e.g. to see how a cable "
                   "scene's result depends on them)")
      ->check(wholeNumber(1, 10000));
  runCmd
      ->add_option("--chebyshev-rho", run.chebyshevRho,
                   "cable scenes: Chebyshev acceleration of the solver's sweeps with this spectral "
                   "radius estimate, in [0, 1) (default: the scene's, 0.7, the bundle 0.5; 0: the "
                   "reference's plain sweeps; above the default it can diverge: 0.75 does on "
                   "cable_y_junction; docs/CONVERGENCE.md)")
      ->check(CLI::Range(0.0, 0.999999));
  runCmd
      ->add_option("--iteration-launches", run.iterationLaunches,
                   "cable scenes: auto | per-color | per-world: a launch per color and iteration, "
                   "or all of a substep's iterations in one launch with a warp's lanes per world "
                   "(faster for batches of 128 or more worlds of at most 32 bodies a color; the "
                   "same bits either way; auto picks: docs/PERFORMANCE.md)")
      ->check(CLI::IsMember({"auto", "per-color", "per-world"}));
  runCmd->add_option("--device", run.device, "auto | cuda | cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  runCmd->add_option("--out", run.outDir, "folder for the frames")->capture_default_str();
  runCmd->add_option("--format", run.format, "usda | obj | html | none")
      ->check(CLI::IsMember({"usda", "obj", "html", "none"}))
      ->capture_default_str();
  runCmd->add_option("--summary", run.summaryPath, "write a JSON summary to this file");
  runCmd->add_option(
      "--launch-table", run.launchTable,
      "launch table JSON (default: $WEFT_LAUNCH_TABLE, then kernels/runtime/tables/)");
  runCmd->add_option("--mesh", run.meshPath, "replace the scene's cloth with this OBJ");
  runCmd->add_option("--mesh-scale", run.meshScale, "scale the --mesh vertices first")
      ->check(positiveNumber());
  // Options of three finite numbers (a vector, or angles).
  const auto threeNumbers = [](CLI::Option* option) { option->expected(3)->check(finiteNumber()); };
  threeNumbers(runCmd->add_option("--mesh-rotate", run.meshRotate,
                                  "then rotate the --mesh about x, y, z by RX RY RZ degrees"));
  threeNumbers(runCmd->add_option("--mesh-translate", run.meshTranslate,
                                  "then translate the --mesh by X Y Z (scene units)"));
  runCmd
      ->add_option("--scene-option", run.sceneOptions,
                   "scene setting KEY=VALUE, repeatable (e.g. cable_pile layers=4; `weft scenes` "
                   "lists each scene's); with --worlds a list A,B,C (world k takes item k mod "
                   "3) or a range FIRST:LAST (linear over the worlds) makes a sweep")
      // One KEY=VALUE each time, so that a scene name after it stays the scene.
      ->allow_extra_args(false);
  runCmd
      ->add_option("--worlds", run.worlds,
                   "simulate N copies of the scene in one model, solved together "
                   "(worlds never touch; checks are judged per world and reported as counts); "
                   "under `mpirun -np K` the N worlds are split over the K ranks, one GPU each "
                   "(docs/SCALING.md)")
      ->check(wholeNumber(1, kMaxWorlds));
  threeNumbers(runCmd->add_option(
      "--world-spacing", run.worldSpacing,
      "with --worlds: move world k by k times X Y Z (default 0 0 0: every world where the scene "
      "puts it, bit-identical to the scene run alone)"));
  runCmd
      ->add_option("--reuse-slack", run.reuseSlack,
                   "cloth self-contact: keep the candidate lists while no particle moved more "
                   "than this since they were found (scene length units; 0: build them at every "
                   "detection; default: the scene's)")
      ->check(nonNegativeNumber());
  runCmd->add_flag("--debug-launches", run.debugLaunches,
                   "synchronize and log every kernel launch (also WEFT_DEBUG_LAUNCHES=1)");
  runCmd->add_flag_callback(
      "--no-graph", [&run] { run.useGraphs = false; },
      "launch substeps directly, without CUDA graphs");
  runCmd->add_flag("--profile", run.profile,
                   "cloth scenes: time every solver stage (synchronizes after each; launches "
                   "without graphs)");
  runCmd->add_flag("--intersections-every-frame", run.intersectionsEveryFrame,
                   "count mesh self-intersections after every frame, not only the last");
  runCmd->add_flag("--convergence", run.convergence,
                   "cable scenes: record every iteration's largest body step (how far each "
                   "Gauss-Seidel sweep still moves the poses) for every substep, into the output "
                   "and the summary");
  runCmd->add_option("--convergence-plot", run.convergencePlot,
                     "cable scenes: also draw the record as an SVG chart (implies --convergence)");

  InfoOptions info;
  CLI::App* infoCmd = app.add_subcommand("info", "backend, GPU and the launch table in effect");
  infoCmd->add_option("--device", info.device, "auto | cuda | cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  infoCmd->add_option("--launch-table", info.launchTable, "launch table JSON to consider");
  infoCmd->add_option("--scene", info.scene, "show the launch sizes this scene would use");
  infoCmd
      ->add_option("--worlds", info.worlds,
                   "with --scene: the sizes a batch of N worlds of it would use (batch entries)")
      ->check(wholeNumber(1, kMaxWorlds));

  app.add_subcommand("scenes", "list the scenes with their sizes, descriptions and options");

  TuneOptions tune;
  CLI::App* tuneCmd =
      app.add_subcommand("tune-launch", "measure every kernel's best launch size on this GPU");
  tuneCmd->add_option("--scenes", tune.scenes, "scene names, or cloth | cable | all")
      ->capture_default_str();
  tuneCmd->add_option(
      "--kernels", tune.kernels,
      "kernel names to tune (default: all); the table's entries for other kernels are kept");
  tuneCmd->add_option("--block-dims", tune.blockDims,
                      "candidate sizes, e.g. 8,16,32,64,128,256,512,1024 (default)");
  tuneCmd->add_option("--budget-ms", tune.budgetMs, "timing budget per (launch, size) [ms]")
      ->check(positiveNumber())
      ->capture_default_str();
  tuneCmd->add_option("--out", tune.out, "table file (default: kernels/runtime/tables/<gpu>.json)");
  tuneCmd->add_option("--report", tune.report, "write TUNING.md and plots into this folder");
  tuneCmd->add_flag("--quick", tune.quick,
                    "a fast, rougher pass (at most 6 ms a size, 4 frames of verification)");
  tuneCmd
      ->add_option("--worlds", tune.worlds,
                   "tune each scene as a batch of N worlds and add its sizes to "
                   "the existing table as entries \"SCENE@N\", used by runs of N or more worlds "
                   "(the other entries are kept)")
      ->check(wholeNumber(1, kMaxWorlds));
  tuneCmd->add_flag("--fresh", tune.fresh,
                    "break near-ties without the existing table's sizes (default: they win)");

  BenchOptionsCli bench;
  CLI::App* benchCmd =
      app.add_subcommand("bench", "µs per substep of each scene, built-in and tuned sizes");
  benchCmd->add_option("--scenes", bench.scenes, "scene names, or cloth | cable | all")
      ->capture_default_str();
  benchCmd->add_option("--device", bench.device, "auto | cuda | cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  benchCmd->add_option("--table", bench.table, "default | tuned | both | FILE")
      ->capture_default_str();
  benchCmd->add_option("--json", bench.jsonPath, "write the results as JSON");
  benchCmd->add_option("--markdown", bench.markdownPath, "write the benchmarks page");
  benchCmd->add_option("--worlds", bench.worlds,
                       "also time each scene as batches of these many worlds, e.g. "
                       "1,16,256,1024,4096 (world-substeps per second; as many as fit); under "
                       "`mpirun -np K` each batch is split over the K ranks and the scaling "
                       "efficiency reported (docs/SCALING.md)");
  benchCmd->add_flag("--worlds-only", bench.worldsOnly,
                     "with --worlds: time only the batches, not each scene's single-world runs");
  benchCmd->add_option("--merge", bench.mergePath,
                       "results of an earlier --json on this GPU and commit: the page shows "
                       "them with this run's (e.g. single-world runs and --worlds-only batches "
                       "measured in two calls)");
  benchCmd->add_option("--repetitions", bench.repetitions, "timed repetitions per scene")
      ->check(wholeNumber(1, 100000))
      ->capture_default_str();

  ViewOptions view;
  CLI::App* viewCmd = app.add_subcommand(
      "view",
      "an HTML player (one file, any browser) of frames written before: a .usda or a "
      "folder of OBJ frames");
  viewCmd->add_option("input", view.input, "RUN.usda or a folder of <scene>_00000.obj, ...")
      ->required();
  viewCmd->add_option("-o,--output", view.output, "the page to write (FILE.html)")->required();
  viewCmd->add_option("--fps", view.fps, "frames per second of OBJ frames (a .usda says its own)")
      ->check(positiveNumber())
      ->capture_default_str();

  // An unknown first word is a mistyped command: say so (CLI11 would only say that a subcommand
  // is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      err << "weft: unknown command '" << argv[1] << "' (commands: " << names
          << "; `weft --help` describes them)\n";
      return kExitError;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // Help for a subcommand is a ParseError with exit code 0 too.
    if (e.get_exit_code() == 0) {
      std::ostringstream help, error;
      app.exit(e, help, error);
      out << help.str() << error.str();
      return kExitOk;
    }
    err << "weft: " << e.what() << "\n";
    return kExitError;
  }
  if (runCmd->parsed()) return runCommand(run, out, err);
  if (infoCmd->parsed()) return infoCommand(info, out, err);
  if (tuneCmd->parsed()) return tuneCommand(tune, out, err);
  if (benchCmd->parsed()) return benchCommand(bench, out, err);
  if (viewCmd->parsed()) return viewCommand(view, out, err);
  return scenesCommand(out, err);
}

}  // namespace weft
