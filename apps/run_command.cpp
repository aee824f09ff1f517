// weft run SCENE: build a scene, simulate it frame by frame (one CUDA graph replay per frame on
// CUDA), write the frames, check the result, and summarize.
//
// Order matters for "nothing written half-way": every input is validated and the simulation is
// built before the first file is created. If the state becomes non-finite, the run stops at that
// frame, says which particle, keeps the frames written so far (they are what one wants to look
// at) and exits with code 1.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/common.h"
#include "apps/convergence_report.h"
#include "apps/frame_writer.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "scenes/worlds.h"
#include "solver/rigid_simulation.h"
#include "solver/simulation.h"
#include "weft_version.h"

namespace weft {
namespace {

/// Candidate pairs one list build found, averaged over the last frame's builds (0 without any).
long long lastFramePairsPerBuild(const Simulation::ContactReport& contacts) {
  const ContactStatus& last = contacts.lastFrame;
  return last.listBuilds > 0 ? static_cast<long long>(last.totalPairs) / last.listBuilds : 0;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// A value in 3 significant digits (1.23e-04).
std::string formatShort(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2e", value);
  return buffer;
}

/// The fields every `weft run` summary starts with.
nlohmann::json summaryHeader(const Scene& scene, const Device& device, const TableSelection& table,
                             bool graphs, long long framesDone, int frames) {
  nlohmann::json j;
  j["scene"] = scene.name;
  j["device"] = device.describe();
  j["backend"] = std::string(backendName(device.backend()));
  if (device.isCuda()) {
    j["gpu"] = device.gpu().identity.name;
    j["driver"] = device.gpu().driverVersion;
    j["cuda_runtime"] = device.gpu().runtimeVersion;
  }
  j["commit"] = WEFT_GIT_COMMIT;
  j["launch_table"] = {{"in_use", describeTableInUse(table)}, {"reason", table.reason}};
  j["cuda_graph_per_frame"] = graphs;
  j["frames"] = framesDone;
  j["frames_requested"] = frames;
  j["fps"] = scene.fps;
  j["substeps_per_frame"] = scene.substeps;
  return j;
}

/// Timing, per-check results and the verdict of a run.
void addTimingAndChecks(nlohmann::json& j, double usPerSubstep, double msPerFrame,
                        const std::vector<double>& frameMs, double wallSeconds,
                        const std::vector<CheckResult>& checks, bool allPass) {
  j["us_per_substep_median"] = usPerSubstep;
  j["ms_per_frame_median"] = msPerFrame;
  j["frame_ms"] = frameMs;
  j["wall_seconds"] = wallSeconds;
  nlohmann::json checkPass = nlohmann::json::object(), checkDetail = nlohmann::json::object(),
                 information = nlohmann::json::object();
  for (const CheckResult& c : checks) {
    if (c.informational) {
      information[c.name] = c.detail;
      continue;
    }
    checkPass[c.name] = c.pass;
    checkDetail[c.name] = c.detail;
  }
  j["checks"] = checkPass;
  j["check_details"] = checkDetail;
  j["information"] = information;
  j["all_checks_pass"] = allPass;
}

/// Every check passed (information never fails a run).
bool allChecksPass(const std::vector<CheckResult>& checks) {
  return std::all_of(checks.begin(), checks.end(),
                     [](const CheckResult& c) { return c.pass || c.informational; });
}

void printChecks(std::ostream& out, const std::vector<CheckResult>& checks) {
  for (const CheckResult& c : checks)
    out << (c.informational ? "  info          "
            : c.pass        ? "  check         pass "
                            : "  check         FAIL ")
        << c.name << ": " << c.detail << "\n";
}

/// The last lines of a run: how a signal stopped it, if one did, and the verdict.
void printOutcome(std::ostream& out, int signal, long long framesDone, int frames, bool allPass) {
  if (signal)
    out << "  interrupted   by " << signalName(signal) << " after frame " << framesDone << " of "
        << frames << "; the outputs hold frames 0-" << framesDone << ", complete; checks not run\n";
  out << "  result        "
      << (signal    ? "interrupted"
          : allPass ? "all checks pass"
                    : "FAILED")
      << "\n";
}

/// Bytes of every buffer allocated on `device` now.
size_t liveDeviceBytes(const Device& device) {
  size_t bytes = 0;
  for (const auto& [pointer, size] : device.allocations()) bytes += size;
  return bytes;
}

/// Per frame, the largest joint gap (`gaps`) or capsule overlap fraction over the worlds' records
/// (NaN only where no world measured one).
std::vector<float> largestPerFrame(const std::vector<CableIntegrityRecord>& worlds, bool gaps) {
  std::vector<float> out;
  for (const CableIntegrityRecord& r : worlds) {
    const std::vector<float> f = gaps ? r.gapFractions() : r.overlapFractions();
    if (out.empty()) {
      out = f;
      continue;
    }
    for (size_t i = 0; i < f.size() && i < out.size(); ++i)
      out[i] = std::isnan(out[i]) ? f[i] : std::isnan(f[i]) ? out[i] : std::max(out[i], f[i]);
  }
  return out;
}

struct Divergence {
  long long frame;
  int particle;
};

/// What a run of several worlds reports beside the scene's own lines (both paths).
struct WorldsReport {
  int count = 1;
  Vec3 spacing;
  double deviceMegabytes = 0.0;
  int tunedWorlds = 0;  // the batch entries' size used (0: one world's launch sizes)
  std::vector<SceneOptions> values;
  std::vector<WorldCheckSummary> checks;

  std::string launchSizes(const Scene& scene) const {
    return tunedWorlds > 0 ? batchSceneKey(scene.name, tunedWorlds) : std::string("one world's");
  }

  /// The "launch sizes", "worlds" and "sweep" lines (nothing for one world).
  void print(std::ostream& out, const Scene& scene, const SceneOptions& options,
             const Device& device) const {
    if (count < 2) return;
    if (device.isCuda())
      out << "  launch sizes  "
          << (tunedWorlds > 0 ? "the table's entries for " + std::to_string(tunedWorlds) +
                                    " worlds (" + launchSizes(scene) + ")"
                              : "one world's (no batch entries for " + scene.name +
                                    "; `weft tune-launch --scenes " + scene.name + " --worlds " +
                                    std::to_string(count) + "` measures them)")
          << "\n";
    out << "  worlds        " << count << " in one model, world k moved by k x (" << spacing.x
        << ", " << spacing.y << ", " << spacing.z << ") m\n";
    if (optionsVaryOverWorlds(options))
      out << "  sweep         " << describeWorldVariation(options) << "\n";
  }

  /// The "memory" line.
  void printMemory(std::ostream& out, const Device& device) const {
    out << "  memory        " << formatFixed(deviceMegabytes, 1) << " MB of "
        << (device.isCuda() ? "GPU" : "solver") << " buffers"
        << (count > 1 ? ", " + formatFixed(deviceMegabytes / count, 3) + " MB per world" : "")
        << "\n";
  }

  /// The summary's "worlds" object.
  nlohmann::json json(const Scene& scene, const SceneOptions& options, const Device& device) const {
    nlohmann::json j = {{"count", count},
                        {"spacing_m", {spacing.x, spacing.y, spacing.z}},
                        {"megabytes_per_world", deviceMegabytes / count},
                        {"launch_sizes", device.isCuda() ? launchSizes(scene) : std::string("-")}};
    if (optionsVaryOverWorlds(options)) {
      nlohmann::json each = nlohmann::json::array();
      for (const SceneOptions& o : values) each.push_back(o.values);
      j["sweep"] = describeWorldVariation(options);
      j["scene_options_per_world"] = each;
    }
    if (!checks.empty()) {
      nlohmann::json passing = nlohmann::json::object(), failing = nlohmann::json::object();
      for (const WorldCheckSummary& c : checks) {
        passing[c.name] = c.passing;
        failing[c.name] = c.failing;
      }
      j["checks_passing"] = passing;
      j["checks_failing_worlds"] = failing;
    }
    return j;
  }
};

/// The report of `worlds` run on `device` with `table`, its buffers taking `deviceBytes`.
template <class Worlds>
WorldsReport worldsReport(const Worlds& worlds, const Scene& scene, const Device& device,
                          const TableSelection& table, size_t deviceBytes) {
  WorldsReport r;
  r.count = worlds.count();
  r.spacing = worlds.spacing;
  r.deviceMegabytes = double(deviceBytes) / 1e6;
  r.values = worlds.values;
  // Launch sizes of a batch: the table's entries for the largest tuned batch it fills, if any.
  if (r.count > 1 && device.isCuda() && table.table)
    batchEntries(*table.table, scene.name, r.count, &r.tunedWorlds);
  return r;
}

/// weft run for a cable scene (RigidSimulation): the same flow as the cloth path below, with
/// bodies instead of particles, and any number of worlds (scenes/worlds.h).
int runCableScene(const RunOptions& options, const Scene& scene, const SceneOptions& sceneOptions,
                  int frames, FrameFormat format, Device& device, const TableSelection& table,
                  std::ostream& out) {
  if (!options.meshPath.empty()) throw Error("scene " + scene.name + " has no cloth for --mesh");
  if (options.profile)
    throw Error("--profile is for cloth scenes; use `weft bench` for a cable scene's breakdown");
  if (options.intersectionsEveryFrame)
    throw Error("--intersections-every-frame is for cloth scenes");
  const size_t deviceBytes = device.isCuda() ? device.gpu().totalMemoryBytes : 0;
  const RigidWorlds worlds = buildRigidWorlds(scene, sceneOptions, deviceBytes);
  const RigidDesc& desc = worlds.desc;
  const int numWorlds = worlds.count();
  RigidSolverOptions solverOptions = scene.rigidSolver;
  if (options.iterations > 0) solverOptions.iterations = options.iterations;
  if (options.chebyshevRho >= 0.0f) solverOptions.chebyshevRho = options.chebyshevRho;
  const bool recordsConvergence = options.convergence || !options.convergencePlot.empty();
  solverOptions.recordConvergence = recordsConvergence;
  const size_t bytesBefore = liveDeviceBytes(device);
  RigidSimulation sim(device, desc, solverOptions, 1.0 / scene.fps, scene.substeps,
                      options.useGraphs);
  std::unique_ptr<RigidFrameWriter> writer =
      makeRigidFrameWriter(format, options.outDir, scene.name, desc, scene.fps);
  std::vector<Transform> poses = sim.poses();
  std::vector<Vec3> linear = sim.linearVelocities(), angular = sim.angularVelocities();
  if (writer) writer->writeFrame(0, poses);

  std::vector<double> frameMs;
  std::optional<Divergence> divergence;
  // Joint gaps and capsule overlaps of every frame, one record per world.
  std::vector<CableIntegrityRecord> integrity(static_cast<size_t>(numWorlds));
  std::vector<std::vector<Transform>> history;  // every frame's poses, for checks of the motion
  int framesRun = 0;                            // fewer than `frames` when a signal stopped the run
  ProgressBar progress("weft run " + scene.name, frames);
  const auto wallStart = std::chrono::steady_clock::now();
  for (int frame = 1; frame <= frames && !interruptSignal(); ++frame) {
    sim.advanceFrame();
    framesRun = frame;
    frameMs.push_back(sim.lastFrameMs());
    poses = sim.poses();
    if (numWorlds == 1) {
      integrity.front().record(desc, poses, frame);
    } else {
      for (int k = 0; k < numWorlds; ++k)
        integrity[size_t(k)].record(worlds.model(k), worlds.placedAlone(poses, k), frame);
    }
    if (scene.rigidChecksUseHistory) history.push_back(poses);
    linear = sim.linearVelocities();
    angular = sim.angularVelocities();
    const RigidCheckInput probe{desc,    poses, linear, angular, frame, frame / scene.fps,
                                nullptr, {}};
    if (!checkBodiesFinite(probe).pass) {
      int bad = 0;
      for (size_t b = 0; b < poses.size(); ++b)
        if (!std::isfinite(poses[b].p.x + poses[b].p.y + poses[b].p.z + linear[b].x + linear[b].y +
                           linear[b].z)) {
          bad = int(b);
          break;
        }
      divergence = Divergence{frame, bad};
      break;
    }
    if (writer) writer->writeFrame(frame, poses);
    progress.update(frame,
                    formatFixed(1000.0 * frameMs.back() / scene.substeps, 1) + " us/substep");
  }
  progress.finish();
  const double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (writer) writer->finish();

  const int signal = divergence ? 0 : interruptSignal();
  const size_t bytesAfter = liveDeviceBytes(device);  // with any growth of the contact buffers
  WorldsReport report = worldsReport(worlds, scene, device, table,
                                     bytesAfter > bytesBefore ? bytesAfter - bytesBefore : 0);
  std::vector<CheckResult> checks;
  if (divergence) {
    const int world = worlds.worldOf(divergence->particle);
    checks.push_back({"finite", false,
                      "body " + std::to_string(divergence->particle) +
                          (numWorlds > 1 ? " (world " + std::to_string(world) + ")" : "") +
                          " became non-finite at frame " + std::to_string(divergence->frame)});
  } else if (!signal && numWorlds == 1) {
    checks = scene.rigidChecks(RigidCheckInput{desc, poses, linear, angular, frames,
                                               frames / scene.fps, &integrity.front(), history});
  } else if (!signal) {
    // Each world judged on its own bodies, where it would be alone.
    std::vector<std::vector<CheckResult>> perWorld(static_cast<size_t>(numWorlds));
    for (int k = 0; k < numWorlds; ++k) {
      const std::vector<Transform> p = worlds.placedAlone(poses, k);
      const std::vector<Vec3> v = worlds.part(linear, k), w = worlds.part(angular, k);
      std::vector<std::vector<Transform>> h;
      for (const std::vector<Transform>& frame : history) h.push_back(worlds.placedAlone(frame, k));
      perWorld[size_t(k)] = scene.rigidChecks(RigidCheckInput{
          worlds.model(k), p, v, w, frames, frames / scene.fps, &integrity[size_t(k)], h});
    }
    report.checks = summarizeWorldChecks(perWorld);
    checks = worldCheckResults(report.checks);
  }
  if (!divergence && !signal) {
    const RigidSimulation::ContactReport& r = sim.contactReport();
    const bool complete = r.lastFrameRows <= r.rowCapacity;
    checks.push_back({"contacts_complete", complete,
                      complete ? "every contact row of the last frame was stored (" +
                                     std::to_string(r.lastFrameRows) + " rows, capacity " +
                                     std::to_string(r.rowCapacity) + ")"
                               : "the last frame's contact rows overflowed"});
  }
  const bool allPass = !signal && allChecksPass(checks);
  const double msPerFrame = median(frameMs);
  const double usPerSubstep = 1000.0 * msPerFrame / scene.substeps;
  const long long framesDone = divergence ? divergence->frame : framesRun;
  const RigidSimulation::ContactReport& contacts = sim.contactReport();

  out << "weft run " << scene.name << "\n";
  out << "  device        " << device.describe()
      << (sim.usesGraphs() ? ", one CUDA graph per frame" : "") << "\n";
  out << "  launch table  " << describeTableInUse(table) << " (" << table.reason << ")\n";
  report.print(out, scene, sceneOptions, device);
  const std::string sweeps = solverOptions.chebyshevRho > 0.0f
                                 ? "Chebyshev rho " + formatFixed(solverOptions.chebyshevRho, 2)
                                 : "plain sweeps";
  out << "  model         " << desc.numBodies() << " bodies, " << desc.numJoints() << " joints, "
      << desc.numShapes() << " shapes, " << sim.model().numColors << " colors"
      << (sim.model().hasDahl ? ", Dahl friction on" : "") << "\n";
  report.printMemory(out, device);
  out << "  simulated     " << framesDone << " frames x " << scene.substeps << " substeps x "
      << solverOptions.iterations << " iterations"
      << (solverOptions.chebyshevRho > 0.0f ? " (" + sweeps + ")" : "") << " at " << scene.fps
      << " fps, in " << formatFixed(wallSeconds, 2) << " s wall\n";
  out << "  timing        " << formatFixed(usPerSubstep, 1) << " us/substep, "
      << formatFixed(msPerFrame, 3) << " ms/frame (median over " << frameMs.size() << " frames, "
      << (device.isCuda() ? "CUDA events" : "host clock") << ")\n";
  out << "  contacts      largest detection " << contacts.largestRows << " rows (capacity "
      << contacts.rowCapacity << "), at most " << contacts.largestPartners
      << " broad-phase partners per shape; partner lists built in " << contacts.pairListBuilds
      << " of " << contacts.detections << " detections\n";
  for (const std::string& r : contacts.regrowths) out << "  grew          " << r << "\n";
  const RigidSimulation::ConvergenceReport& convergence = sim.convergenceReport();
  const ConvergenceSummary steps = summarizeConvergence(convergence);
  if (recordsConvergence) {
    out << "  convergence   largest body step per iteration, median over " << steps.substeps
        << " substeps:\n";
    auto row = [&](const char* label, const std::vector<double>& values, const char* unit) {
      out << "                " << label;
      for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : " ") << formatShort(values[i]);
      out << " " << unit << "\n";
    };
    row("|dx|    ", steps.medianTranslation, "m");
    row("|dtheta|", steps.medianRotation, "rad");
    if (!options.convergencePlot.empty()) {
      writeFileAtomically(options.convergencePlot,
                          convergenceSvg(scene.name + ": convergence of the rigid solve (" +
                                             std::to_string(solverOptions.iterations) +
                                             " iterations, " + sweeps + ")",
                                         steps),
                          "convergence plot");
      out << "                plot " << options.convergencePlot << "\n";
    }
  }
  printChecks(out, checks);
  if (writer)
    for (const std::string& f : writer->files()) out << "  output        " << f << "\n";
  printOutcome(out, signal, framesDone, frames, allPass);

  if (!options.summaryPath.empty()) {
    nlohmann::json j = summaryHeader(scene, device, table, sim.usesGraphs(), framesDone, frames);
    j["scene_options"] = sceneOptions.values;
    j["iterations"] = solverOptions.iterations;
    j["device_buffer_megabytes"] = report.deviceMegabytes;
    j["worlds"] = report.json(scene, sceneOptions, device);
    j["chebyshev_rho"] = solverOptions.chebyshevRho;
    j["bodies"] = desc.numBodies();
    j["joints"] = desc.numJoints();
    j["shapes"] = desc.numShapes();
    j["colors"] = sim.model().numColors;
    addTimingAndChecks(j, usPerSubstep, msPerFrame, frameMs, wallSeconds, checks, allPass);
    j["diverged"] =
        divergence ? nlohmann::json{{"frame", divergence->frame}, {"body", divergence->particle}}
                   : nlohmann::json(nullptr);
    j["outputs"] = writer ? writer->files() : std::vector<std::string>{};
    j["contacts"] = {
        {"largest_rows", contacts.largestRows}, {"last_frame_rows", contacts.lastFrameRows},
        {"row_capacity", contacts.rowCapacity}, {"largest_partners", contacts.largestPartners},
        {"detections", contacts.detections},    {"pair_list_builds", contacts.pairListBuilds},
        {"regrowths", contacts.regrowths}};
    // Per frame from frame 1 (null where nothing could be measured): the largest joint anchor
    // gap over its joint's reference length, and the deepest capsule overlap over the pair's
    // smaller radius (negative: apart), as the integrity checks judge them; with worlds, the
    // largest over the worlds.
    j["integrity"] = {{"joint_gap_fraction_per_frame", largestPerFrame(integrity, true)},
                      {"overlap_fraction_per_frame", largestPerFrame(integrity, false)}};
    if (recordsConvergence) {
      // Per substep of the run (frames in order), one value per iteration.
      const size_t n = size_t(convergence.iterations);
      nlohmann::json translation = nlohmann::json::array(), rotation = nlohmann::json::array();
      for (size_t s = 0; s * n < convergence.translation.size(); ++s) {
        translation.push_back(std::vector<float>(convergence.translation.begin() + s * n,
                                                 convergence.translation.begin() + (s + 1) * n));
        rotation.push_back(std::vector<float>(convergence.rotation.begin() + s * n,
                                              convergence.rotation.begin() + (s + 1) * n));
      }
      j["convergence"] = {{"iterations", convergence.iterations},
                          {"substeps", steps.substeps},
                          {"median_translation_step_m", steps.medianTranslation},
                          {"median_rotation_step_rad", steps.medianRotation},
                          {"translation_step_m", translation},
                          {"rotation_step_rad", rotation}};
    }
    j["interrupted"] = signal ? nlohmann::json(signalName(signal)) : nlohmann::json(nullptr);
    writeFileAtomically(options.summaryPath, j.dump(2) + "\n", "summary");
    out << "  summary       " << options.summaryPath << "\n";
  }
  out.flush();
  if (signal) return interruptExitCode(signal);
  return allPass ? kExitOk : kExitCheckFailed;
}

int runScene(const RunOptions& options, std::ostream& out, std::ostream& err) {
  // ---- Validate everything before anything is written -----------------------------------
  const Scene& scene = findScene(options.scene);
  const FrameFormat format = parseFrameFormat(options.format);
  if (options.frames < 0) throw Error("--frames must be positive");
  const int frames = options.frames > 0 ? options.frames : scene.defaultFrames;
  auto device = openDevice(options.device, options.debugLaunches);
  const TableSelection table =
      applyLaunchTable(*device, options.launchTable, scene.name, err, options.worlds);

  SceneOptions sceneOptions;
  sceneOptions.meshPath = options.meshPath;
  sceneOptions.meshScale = options.meshScale;
  if (options.meshRotate.size() == 3)
    sceneOptions.meshRotationDegrees = {options.meshRotate[0], options.meshRotate[1],
                                        options.meshRotate[2]};
  if (options.meshTranslate.size() == 3)
    sceneOptions.meshTranslation = {options.meshTranslate[0], options.meshTranslate[1],
                                    options.meshTranslate[2]};
  sceneOptions.meshTransformGiven =
      options.meshScale != 1.0f || !options.meshRotate.empty() || !options.meshTranslate.empty();
  if (sceneOptions.meshTransformGiven && options.meshPath.empty())
    throw Error("--mesh-scale, --mesh-rotate and --mesh-translate need --mesh FILE.obj");
  for (const std::string& kv : options.sceneOptions) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--scene-option wants KEY=VALUE, got '" + kv + "'");
    sceneOptions.values[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  sceneOptions.worlds = options.worlds;
  if (options.worldSpacing.size() == 3)
    sceneOptions.worldSpacing = {options.worldSpacing[0], options.worldSpacing[1],
                                 options.worldSpacing[2]};
  if (!options.worldSpacing.empty() && options.worlds < 2)
    throw Error("--world-spacing needs --worlds N (N > 1)");
  checkOutputFile(options.summaryPath, "--summary");  // before the simulation, not after it
  if (format != FrameFormat::None) checkOutputFolder(options.outDir, "--out");
  const size_t deviceBytes = device->isCuda() ? device->gpu().totalMemoryBytes : 0;
  checkSceneFits(scene, sceneOptions, availableHostMemory(), deviceBytes);
  if (options.reuseSlack >= 0.0f && (scene.cable || !scene.solver.selfContact.enabled))
    throw Error("--reuse-slack: " + scene.name + " has no cloth self-contact");
  checkOutputFile(options.convergencePlot, "--convergence-plot");
  if (options.chebyshevRho >= 0.0f && !scene.cable)
    throw Error("--chebyshev-rho is for cable scenes (it accelerates the rigid solver's sweeps); " +
                scene.name + " is a cloth scene");
  if ((options.convergence || !options.convergencePlot.empty()) && !scene.cable)
    throw Error("--convergence is for cable scenes (it records the rigid solver's body steps); " +
                scene.name + " is a cloth scene");
  if (scene.cable)
    return runCableScene(options, scene, sceneOptions, frames, format, *device, table, out);
  SolverOptions solverOptions = scene.solver;
  if (options.reuseSlack >= 0.0f) solverOptions.selfContact.reuseSlack = options.reuseSlack;
  if (options.iterations > 0) solverOptions.iterations = options.iterations;
  const ClothWorlds worlds = buildClothWorlds(scene, sceneOptions, deviceBytes);
  const ModelDesc& desc = worlds.desc;
  const int numWorlds = worlds.count();
  if (!options.meshPath.empty())  // a mesh's size is known once it is read
    checkElementsFit(scene.name + " with --mesh " + options.meshPath, desc.numParticles(), false,
                     availableHostMemory(), deviceBytes);
  const size_t bytesBefore = liveDeviceBytes(*device);
  Simulation sim(*device, desc, solverOptions, 1.0 / scene.fps, scene.substeps,
                 options.useGraphs && !options.profile);
  StepProfile profile;
  if (options.profile) sim.solver().setProfile(&profile);

  // ---- Simulate ------------------------------------------------------------------------------
  std::unique_ptr<FrameWriter> writer =
      makeFrameWriter(format, options.outDir, scene.name, desc, scene.fps, frames);
  if (writer) writer->writeFrame(0, 0.0, desc.positions);

  IntersectionCounter intersections(*device, desc.numParticles(), desc.triangles, desc.edges,
                                    desc.worlds, desc.worldRanges.triangles);
  std::vector<int> intersectionsPerFrame;
  std::vector<double> frameMs;
  std::optional<Divergence> divergence;
  std::vector<Vec3> positions = desc.positions, velocities = desc.velocities;
  int framesRun = 0;  // fewer than `frames` when a signal stopped the run
  ProgressBar progress("weft run " + scene.name, frames);
  const auto wallStart = std::chrono::steady_clock::now();
  for (int frame = 1; frame <= frames && !interruptSignal(); ++frame) {
    sim.advanceFrame();
    framesRun = frame;
    frameMs.push_back(sim.lastFrameMs());
    positions = sim.positions();
    velocities = sim.velocities();
    if (const auto bad = firstNonFiniteParticle(positions, velocities)) {
      divergence = Divergence{frame, *bad};
      break;
    }
    if (writer) writer->writeFrame(frame, frame / scene.fps, positions);
    if (options.intersectionsEveryFrame)
      intersectionsPerFrame.push_back(intersections.count(sim.state().positions.data()));
    progress.update(frame,
                    formatFixed(1000.0 * frameMs.back() / scene.substeps, 1) + " us/substep");
  }
  progress.finish();
  const double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (writer) writer->finish();

  // ---- Checks ----------------------------------------------------------------------------
  // Each world's intersections apart (one entry for one world).
  const std::vector<int> intersectionsPerWorld =
      divergence ? std::vector<int>{} : intersections.countPerWorld(sim.state().positions.data());
  int selfIntersections = divergence ? -1 : 0;
  for (int c : intersectionsPerWorld) selfIntersections += c;
  const size_t bytesAfter = liveDeviceBytes(*device);  // with any growth of the candidate lists
  WorldsReport report = worldsReport(worlds, scene, *device, table,
                                     bytesAfter > bytesBefore ? bytesAfter - bytesBefore : 0);
  const int signal = divergence ? 0 : interruptSignal();
  std::vector<CheckResult> checks;
  if (divergence) {
    checks.push_back(
        {"finite", false,
         "particle " + std::to_string(divergence->particle) +
             (numWorlds > 1
                  ? " (world " + std::to_string(worlds.worldOf(divergence->particle)) + ")"
                  : "") +
             " became non-finite at frame " + std::to_string(divergence->frame)});
  } else if (!signal && numWorlds == 1) {
    checks = scene.checks(CheckInput{desc, positions, velocities, frames});
    if (scene.checksSelfIntersections)
      checks.push_back(checkNoSelfIntersections(selfIntersections));
  } else if (!signal) {
    // Each world judged on its own particles, where it would be alone.
    std::vector<std::vector<CheckResult>> perWorld(static_cast<size_t>(numWorlds));
    for (int k = 0; k < numWorlds; ++k) {
      const std::vector<Vec3> x = worlds.placedAlone(positions, k), v = worlds.part(velocities, k);
      perWorld[size_t(k)] = scene.checks(CheckInput{worlds.model(k), x, v, frames});
      if (scene.checksSelfIntersections)
        perWorld[size_t(k)].push_back(checkNoSelfIntersections(intersectionsPerWorld[size_t(k)]));
    }
    report.checks = summarizeWorldChecks(perWorld);
    checks = worldCheckResults(report.checks);
  }
  if (!divergence && !signal) {
    if (scene.solver.selfContact.enabled) {
      // The regrowth loop guarantees this; the check makes a broken guarantee visible.
      const Simulation::ContactReport& r = sim.contactReport();
      const bool complete = r.lastFrame.maxVertexTriangle <= r.vertexTriangleCapacity &&
                            r.lastFrame.maxEdgeEdge <= r.edgeEdgeCapacity &&
                            r.lastFrame.maxTriangleVertex <= r.triangleVertexCapacity;
      checks.push_back({"contacts_complete", complete,
                        complete ? "every candidate pair of the last frame was stored"
                                 : "the last frame's candidate lists overflowed"});
    }
  }
  const bool allPass = !signal && allChecksPass(checks);
  const double msPerFrame = median(frameMs);
  const double usPerSubstep = 1000.0 * msPerFrame / scene.substeps;
  const long long framesDone = divergence ? divergence->frame : framesRun;

  // ---- Summary -------------------------------------------------------------------------------
  out << "weft run " << scene.name << "\n";
  out << "  device        " << device->describe()
      << (sim.usesGraphs() ? ", one CUDA graph per frame" : "") << "\n";
  out << "  launch table  " << describeTableInUse(table) << " (" << table.reason << ")\n";
  report.print(out, scene, sceneOptions, *device);
  out << "  model         " << desc.numParticles() << " particles, " << desc.numTriangles()
      << " triangles, " << desc.numEdges() << " edges, " << desc.coloring.numColors() << " colors, "
      << desc.shapes.size() << " shapes\n";
  for (const std::string& w : desc.warnings) out << "  warning       " << w << "\n";
  report.printMemory(out, *device);
  out << "  simulated     " << framesDone << " frames x " << scene.substeps << " substeps x "
      << solverOptions.iterations << " iterations at " << scene.fps << " fps, in "
      << formatFixed(wallSeconds, 2) << " s wall\n";
  out << "  timing        " << formatFixed(usPerSubstep, 1) << " us/substep, "
      << formatFixed(msPerFrame, 3) << " ms/frame (median over " << frameMs.size() << " frames, "
      << (device->isCuda() ? "CUDA events" : "host clock") << ")\n";
  if (selfIntersections >= 0)
    out << "  intersections " << selfIntersections << " edge-triangle self-intersections at the end"
        << (numWorlds > 1 ? " (" +
                                std::to_string(std::count_if(intersectionsPerWorld.begin(),
                                                             intersectionsPerWorld.end(),
                                                             [](int c) { return c > 0; })) +
                                " of " + std::to_string(numWorlds) + " worlds have any)"
                          : "")
        << (options.intersectionsEveryFrame && !intersectionsPerFrame.empty()
                ? ", at most " +
                      std::to_string(*std::max_element(intersectionsPerFrame.begin(),
                                                       intersectionsPerFrame.end())) +
                      " in any frame"
                : "")
        << "\n";
  const Simulation::ContactReport& contacts = sim.contactReport();
  if (scene.solver.selfContact.enabled) {
    out << "  self-contact  largest candidate lists: " << contacts.largest.maxVertexTriangle
        << " triangles per vertex, " << contacts.largest.maxEdgeEdge << " edges per edge, "
        << contacts.largest.maxTriangleVertex << " vertices per triangle\n";
    out << "  lists         built in " << contacts.listBuilds << " of " << contacts.detections
        << " detections" << (numWorlds > 1 ? " by world 0" : "");
    if (solverOptions.selfContact.reuseSlack > 0.0f)
      out << " (kept while particles moved less than " << solverOptions.selfContact.reuseSlack
          << "; queries at margin + 2 x that, "
          << solverOptions.selfContact.margin + 2.0f * solverOptions.selfContact.reuseSlack << ")";
    out << "\n";
    out << "  pairs         " << lastFramePairsPerBuild(contacts)
        << " candidate pairs per list build in the last frame (vertex-triangle, plus edge-edge "
           "from both edges)\n";
    for (const std::string& r : contacts.regrowths) out << "  grew          " << r << "\n";
  }
  if (options.profile && profile.substeps > 0) {
    out << "  profile       stage                     calls/substep   us/substep   share\n";
    double total = 0.0;
    for (double ms : profile.milliseconds) total += ms;
    for (int s = 0; s < StepProfile::kNumStages; ++s) {
      if (profile.calls[s] == 0) continue;
      char line[160];
      std::snprintf(line, sizeof(line), "                %-26s %9.1f %12.1f %7.1f%%\n",
                    std::string(StepProfile::stageName(s)).c_str(),
                    double(profile.calls[s]) / profile.substeps,
                    1000.0 * profile.milliseconds[s] / profile.substeps,
                    100.0 * profile.milliseconds[s] / total);
      out << line;
    }
  }
  printChecks(out, checks);
  if (writer)
    for (const std::string& f :
         writer->files().size() > 3
             ? std::vector<std::string>{writer->files().front(), "...", writer->files().back()}
             : writer->files())
      out << "  output        " << f << "\n";
  printOutcome(out, signal, framesDone, frames, allPass);

  if (!options.summaryPath.empty()) {
    nlohmann::json j = summaryHeader(scene, *device, table, sim.usesGraphs(), framesDone, frames);
    j["scene_options"] = sceneOptions.values;
    j["iterations"] = solverOptions.iterations;
    j["device_buffer_megabytes"] = report.deviceMegabytes;
    j["worlds"] = report.json(scene, sceneOptions, *device);
    j["particles"] = desc.numParticles();
    j["triangles"] = desc.numTriangles();
    j["edges"] = desc.numEdges();
    j["colors"] = desc.coloring.numColors();
    j["warnings"] = desc.warnings;
    addTimingAndChecks(j, usPerSubstep, msPerFrame, frameMs, wallSeconds, checks, allPass);
    j["diverged"] = divergence ? nlohmann::json{{"frame", divergence->frame},
                                                {"particle", divergence->particle}}
                               : nlohmann::json(nullptr);
    j["outputs"] = writer ? writer->files() : std::vector<std::string>{};
    j["self_intersections"] =
        selfIntersections >= 0 ? nlohmann::json(selfIntersections) : nlohmann::json(nullptr);
    if (options.intersectionsEveryFrame) j["self_intersections_per_frame"] = intersectionsPerFrame;
    if (numWorlds > 1 && !divergence) j["self_intersections_per_world"] = intersectionsPerWorld;
    if (scene.solver.selfContact.enabled) {
      j["self_contact"] = {{"largest_vertex_triangle", contacts.largest.maxVertexTriangle},
                           {"largest_edge_edge", contacts.largest.maxEdgeEdge},
                           {"largest_triangle_vertex", contacts.largest.maxTriangleVertex},
                           {"capacity_vertex_triangle", contacts.vertexTriangleCapacity},
                           {"capacity_edge_edge", contacts.edgeEdgeCapacity},
                           {"capacity_triangle_vertex", contacts.triangleVertexCapacity},
                           {"detections", contacts.detections},
                           {"list_builds", contacts.listBuilds},
                           {"last_frame_pairs_per_build", lastFramePairsPerBuild(contacts)},
                           {"reuse_slack", solverOptions.selfContact.reuseSlack},
                           {"regrowths", contacts.regrowths}};
    }
    j["interrupted"] = signal ? nlohmann::json(signalName(signal)) : nlohmann::json(nullptr);
    writeFileAtomically(options.summaryPath, j.dump(2) + "\n", "summary");
    out << "  summary       " << options.summaryPath << "\n";
  }
  out.flush();
  if (signal) return interruptExitCode(signal);
  return allPass ? kExitOk : kExitCheckFailed;
}

}  // namespace

int runCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  const InterruptScope interrupts;
  try {
    return runScene(options, out, err);
  } catch (const Error& e) {
    err << "weft run: error: " << e.what() << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    err << "weft run: unexpected error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace weft
