// The weft command-line tool's commands. Each returns the process exit code:
//   0  success (for run: every final check passed)
//   1  the simulation ran but a final check failed or the state became non-finite
//   2  bad input or an error (unknown scene, device, malformed table or mesh, I/O failure)
// Library code throws weft::Error; these functions are where errors become messages and codes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace weft {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitError = 2;

struct RunOptions {
  std::string scene;
  int frames = 0;                 // 0: the scene's default
  int iterations = 0;             // --iterations: solver iterations per substep (0: the scene's)
  float chebyshevRho = -1.0f;     // --chebyshev-rho (cable scenes; < 0: the scene's)
  std::string iterationLaunches;  // --iteration-launches (cable scenes; "": the scene's)
  std::string device = "auto";    // auto | cuda | cpu
  std::string outDir = "out";
  std::string format = "usda";  // usda | obj | none
  std::string summaryPath;      // JSON summary ("" = none)
  std::string launchTable;  // --launch-table FILE ("" = $WEFT_LAUNCH_TABLE, kernels/runtime/tables)
  std::string meshPath;     // --mesh FILE.obj for scenes with a garment
  float meshScale = 1.0f;   // --mesh-scale
  std::vector<float> meshRotate;          // --mesh-rotate RX RY RZ [deg]
  std::vector<float> meshTranslate;       // --mesh-translate X Y Z
  std::vector<std::string> sceneOptions;  // --scene-option KEY=VALUE (repeatable)
  int worlds = 1;                         // --worlds N: copies of the scene in one model
  std::vector<float> worldSpacing;        // --world-spacing X Y Z: world k moved by k · this
  bool debugLaunches = false;
  bool useGraphs = true;
  bool intersectionsEveryFrame = false;  // count self-intersections after every frame
  bool profile = false;      // time every stage (synchronizes per stage; implies no graphs)
  float reuseSlack = -1.0f;  // --reuse-slack: self-contact list reuse slack (< 0: the scene's)
  bool convergence = false;  // --convergence: record every iteration's largest body step (cables)
  std::string convergencePlot;  // --convergence-plot FILE.svg (implies --convergence)
};
int runCommand(const RunOptions& options, std::ostream& out, std::ostream& err);

struct InfoOptions {
  std::string device = "auto";
  std::string launchTable;
  std::string scene;  // per-scene table entries apply when given
  int worlds = 1;     // --worlds N: the sizes a batch of N worlds of the scene would use
};
int infoCommand(const InfoOptions& options, std::ostream& out, std::ostream& err);

int scenesCommand(std::ostream& out, std::ostream& err);

struct TuneOptions {
  std::string scenes = "all";  // comma-separated names, or cloth | cable | all
  std::string kernels;         // comma-separated kernel names ("" = every kernel of a step)
  std::string blockDims;       // comma-separated sizes ("" = 8..1024, tiles 8..256)
  double budgetMs = 40.0;      // timing budget per (launch, size) [ms]
  std::string out;             // table path ("" = kernels/runtime/tables/<gpu>.json)
  std::string report;          // report folder ("" = none)
  bool quick = false;
  bool fresh = false;  // ignore the existing table's sizes when breaking near-ties
  int worlds = 1;      // --worlds N: tune batches of N worlds (writes the "scene@N" entries)
  // For callers in the same process (the Python module): receives the outcome as JSON text,
  // {"table": path written, "report": [files], "worlds": N, "seconds": s, "scenes": [{"scene",
  // "default_us", "tuned_us", "per_scene_us", "keeps_scene_entries"}]}, µs per substep as
  // SceneTuning (tuning/tuner.h) holds them (with worlds > 1: tuned_us is the table's sizes before,
  // per_scene_us the batch's own).
  std::string* resultJson = nullptr;
};
int tuneCommand(const TuneOptions& options, std::ostream& out, std::ostream& err);

struct BenchOptionsCli {
  std::string scenes = "all";   // names, or cloth | cable | all
  std::string device = "auto";  // auto | cuda | cpu
  std::string table = "both";   // default | tuned | both | FILE
  std::string jsonPath;         // --json
  std::string markdownPath;     // --markdown (the benchmarks page, generated)
  int repetitions = 10;
  std::string worlds;       // --worlds 1,16,256: also time each scene as batches of these sizes
  bool worldsOnly = false;  // --worlds-only: the batches alone (no single-scene runs)
  std::string mergePath;    // --merge: an earlier --json of this GPU and commit, laid under this
                            // run's results (its single-scene runs with this run's batches)
};
int benchCommand(const BenchOptionsCli& options, std::ostream& out, std::ostream& err);

struct ViewOptions {
  std::string input;   // a .usda weft run wrote, or a folder of its OBJ frames
  std::string output;  // -o: the HTML page
  double fps = 60.0;   // --fps: of OBJ frames (a .usda holds its own)
};
int viewCommand(const ViewOptions& options, std::ostream& out, std::ostream& err);

/// Parses argv and runs the command (what main() does).
int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace weft
