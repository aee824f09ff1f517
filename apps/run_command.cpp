// weft run SCENE: build a scene, simulate it frame by frame (one CUDA graph replay per frame on
// CUDA), write the frames, check the result, and summarize — one path for every scene, with what
// a cloth and a rigid model each add in ClothRun and RigidRun.
//
// Order matters for "nothing written half-way": every input is validated and the simulation is
// built before the first file is created. If the state becomes non-finite, the run stops at that
// frame, says which particle, keeps the frames written so far (they are what one wants to look
// at) and exits with code 1.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/common.h"
#include "apps/convergence_report.h"
#include "apps/frame_writer.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "apps/ranks.h"
#include "apps/run_ranks.h"
#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/files.h"
#include "scenes/cable_checks.h"
#include "scenes/scene.h"
#include "scenes/worlds.h"
#include "solver/simulation.h"
#include "weft_version.h"

namespace weft {
namespace {

/// Candidate pairs one list build found, averaged over the last frame's builds (0 without any).
long long lastFramePairsPerBuild(const ClothPart::ContactReport& contacts) {
  const ContactStatus& last = contacts.lastFrame;
  return last.listBuilds > 0 ? last.totalPairs / last.listBuilds : 0;
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
  addChecks(j, checks, allPass);
}

/// FNV-1a (64 bit) of `bytes` bytes, continuing from `hash`.
uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
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

/// Where a run stopped because the state became non-finite.
struct Divergence {
  long long frame;
  const char* what;  // "particle" or "body"
  int index;         // of the combined model
  int world;
};

/// What a run of several worlds reports beside the scene's own lines.
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
    addWorldCheckCounts(j, checks);
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

// ---- The parts of a run ---------------------------------------------------------------------
// `weft run` has one path for every scene: validate, build, simulate frame by frame, check,
// summarize. What differs between a cloth and a rigid model (what is read after a frame, how a
// world is checked, the summary's lines) is each part's, below; a scene with both parts runs both.

/// The cloth of a run: its worlds and solver options, the state read after each frame, its
/// self-intersections, checks and summary lines.
class ClothRun {
 public:
  ClothRun(const RunOptions& options, const Scene& scene, const SceneOptions& sceneOptions,
           size_t deviceBytes)
      : scene_(scene),
        options_(options),
        worlds_(buildClothWorlds(scene, sceneOptions, deviceBytes)),
        solver_(scene.cloth.solver),
        positions_(desc().positions),
        velocities_(desc().velocities) {
    if (options.reuseSlack >= 0.0f) solver_.selfContact.reuseSlack = options.reuseSlack;
    if (options.iterations > 0) solver_.iterations = options.iterations;
    if (!options.meshPath.empty())  // a mesh's size is known once it is read
      checkElementsFit(scene.name + " with --mesh " + options.meshPath, desc().numParticles(),
                       false, availableHostMemory(), deviceBytes);
  }

  const ClothWorlds& worlds() const { return worlds_; }
  const ModelDesc& desc() const { return worlds_.desc; }
  const SolverOptions& solverOptions() const { return solver_; }
  std::span<const Vec3> positions() const { return positions_; }
  /// Once the simulation is built: the profile, and the self-intersection counter (allocated
  /// after the simulation's buffers were counted from, so the memory line includes it).
  void attach(Simulation& sim) {
    if (options_.profile) sim.cloth().solver().setProfile(&profile_);
    const ModelDesc& d = desc();
    counter_.emplace(sim.device(), d.numParticles(), d.triangles, d.edges, d.worlds,
                     d.worldRanges.triangles);
  }

  /// After frame `frame`: the state, and the first non-finite particle if any.
  std::optional<Divergence> readFrame(Simulation& sim, long long frame) {
    positions_ = sim.cloth().positions();
    velocities_ = sim.cloth().velocities();
    const std::optional<int> bad = firstNonFiniteParticle(positions_, velocities_);
    if (!bad) return std::nullopt;
    return Divergence{frame, "particle", *bad, worlds_.worldOf(*bad)};
  }
  /// After the frame is written: its self-intersections (--intersections-every-frame).
  void afterWrite(Simulation& sim) {
    if (!options_.intersectionsEveryFrame) return;
    const Vec3* positions = sim.cloth().state().positions.data();
    perFrame_.push_back(counter_->count(positions));
    if (perFrame_.back() > 0)
      pairs_[int(perFrame_.size())] = counter_->pairs(positions, kPairsKept);
  }
  static constexpr int kPairsKept = 256;
  /// Self-intersections after each frame 1, 2, … (--intersections-every-frame; else empty).
  const std::vector<int>& intersectionsPerFrame() const { return perFrame_; }
  /// At the end of a run that did not diverge: each world's self-intersections.
  void countIntersections(Simulation& sim, long long frame) {
    perWorld_ = counter_->countPerWorld(sim.cloth().state().positions.data());
    total_ = 0;
    for (int c : perWorld_) total_ += c;
    if (total_ > 0 && !pairs_.count(int(frame)))
      pairs_[int(frame)] = counter_->pairs(sim.cloth().state().positions.data(), kPairsKept);
  }
  /// Frame → the (edge, triangle) pairs that intersect there (at most kPairsKept a frame): every
  /// frame with --intersections-every-frame, else the last one; frames without any are absent.
  const std::map<int, std::vector<std::pair<int, int>>>& intersectingPairs() const {
    return pairs_;
  }

  /// World k's checks, judged on its own particles where it would be alone (the whole model for
  /// one world that is the whole batch).
  std::vector<CheckResult> checks(int k, int frames) const {
    std::vector<CheckResult> out;
    if (worlds_.wholeModel())
      out = scene_.cloth.checks(CheckInput{desc(), positions_, velocities_, frames});
    else
      out = scene_.cloth.checks(CheckInput{worlds_.model(k), worlds_.placedAlone(positions_, k),
                                           worlds_.part(velocities_, k), frames});
    if (scene_.cloth.checksSelfIntersections)
      out.push_back(checkNoSelfIntersections(perWorld_[size_t(k)]));
    return out;
  }
  /// World k's final positions and velocities, as bytes into `hash` (world_state_hashes).
  uint64_t hashWorld(int k, uint64_t hash) const {
    const size_t first = size_t(worlds_.begin[size_t(k)]), n = size_t(worlds_.size(k));
    hash = fnv1a(positions_.data() + first, n * sizeof(Vec3), hash);
    return fnv1a(velocities_.data() + first, n * sizeof(Vec3), hash);
  }
  /// That the last frame's candidate lists held every pair: the regrowth loop guarantees it, the
  /// check makes a broken guarantee visible.
  std::optional<CheckResult> contactsComplete(const Simulation& sim) const {
    if (!solver_.selfContact.enabled) return std::nullopt;
    const ClothPart::ContactReport& r = sim.cloth().contactReport();
    const bool complete = r.lastFrame.maxVertexTriangle <= r.vertexTriangleCapacity &&
                          r.lastFrame.maxEdgeEdge <= r.edgeEdgeCapacity &&
                          r.lastFrame.maxTriangleVertex <= r.triangleVertexCapacity;
    return CheckResult{"contacts_complete", complete,
                       complete ? "every candidate pair of the last frame was stored"
                                : "the last frame's candidate lists overflowed"};
  }

  std::string iterations() const { return std::to_string(solver_.iterations) + " iterations"; }
  void printModel(std::ostream& out) const {
    const ModelDesc& d = desc();
    out << "  model         " << d.numParticles() << " particles, " << d.numTriangles()
        << " triangles, " << d.numEdges() << " edges, " << d.coloring.numColors() << " colors, "
        << d.shapes.size() << " shapes\n";
    for (const std::string& w : d.warnings) out << "  warning       " << w << "\n";
  }
  /// The intersections and self-contact lines (`diverged`: no intersection count).
  void printContacts(std::ostream& out, const Simulation& sim, bool diverged) const {
    const int numWorlds = worlds_.count();
    if (!diverged)
      out << "  intersections " << total_ << " edge-triangle self-intersections at the end"
          << (numWorlds > 1 ? " (" +
                                  std::to_string(std::count_if(perWorld_.begin(), perWorld_.end(),
                                                               [](int c) { return c > 0; })) +
                                  " of " + std::to_string(numWorlds) + " worlds have any)"
                            : "")
          << (options_.intersectionsEveryFrame && !perFrame_.empty()
                  ? ", at most " +
                        std::to_string(*std::max_element(perFrame_.begin(), perFrame_.end())) +
                        " in any frame"
                  : "")
          << "\n";
    if (!solver_.selfContact.enabled) return;
    const ClothPart::ContactReport& contacts = sim.cloth().contactReport();
    out << "  self-contact  largest candidate lists: " << contacts.largest.maxVertexTriangle
        << " triangles per vertex, " << contacts.largest.maxEdgeEdge << " edges per edge, "
        << contacts.largest.maxTriangleVertex << " vertices per triangle\n";
    out << "  lists         built in " << contacts.listBuilds << " of " << contacts.detections
        << " detections" << (numWorlds > 1 ? " by world 0" : "");
    const SelfContactOptions& sc = solver_.selfContact;
    if (sc.reuseSlack > 0.0f)
      out << " (kept while particles moved less than " << sc.reuseSlack
          << "; queries at margin + 2 x that, " << sc.margin + 2.0f * sc.reuseSlack << ")";
    out << "\n";
    out << "  pairs         " << lastFramePairsPerBuild(contacts)
        << " candidate pairs per list build in the last frame (vertex-triangle, plus edge-edge "
           "from both edges)\n";
  }
  /// The per-stage profile (--profile).
  void printExtras(std::ostream& out) const {
    if (!options_.profile || profile_.substeps == 0) return;
    out << "  profile       stage                     calls/substep   us/substep   share\n";
    double total = 0.0;
    for (double ms : profile_.milliseconds) total += ms;
    for (int s = 0; s < StepProfile::kNumStages; ++s) {
      if (profile_.calls[s] == 0) continue;
      char line[160];
      std::snprintf(line, sizeof(line), "                %-26s %9.1f %12.1f %7.1f%%\n",
                    std::string(StepProfile::stageName(s)).c_str(),
                    double(profile_.calls[s]) / profile_.substeps,
                    1000.0 * profile_.milliseconds[s] / profile_.substeps,
                    100.0 * profile_.milliseconds[s] / total);
      out << line;
    }
  }
  void addJson(nlohmann::json& j, const Simulation& sim, bool diverged) const {
    const ModelDesc& d = desc();
    j["particles"] = d.numParticles();
    j["triangles"] = d.numTriangles();
    j["edges"] = d.numEdges();
    j["colors"] = d.coloring.numColors();
    j["warnings"] = d.warnings;
    j["self_intersections"] = diverged ? nlohmann::json(nullptr) : nlohmann::json(total_);
    if (options_.intersectionsEveryFrame) j["self_intersections_per_frame"] = perFrame_;
    if (worlds_.count() > 1 && !diverged) j["self_intersections_per_world"] = perWorld_;
    if (!solver_.selfContact.enabled) return;
    const ClothPart::ContactReport& contacts = sim.cloth().contactReport();
    j["self_contact"] = {{"largest_vertex_triangle", contacts.largest.maxVertexTriangle},
                         {"largest_edge_edge", contacts.largest.maxEdgeEdge},
                         {"largest_triangle_vertex", contacts.largest.maxTriangleVertex},
                         {"capacity_vertex_triangle", contacts.vertexTriangleCapacity},
                         {"capacity_edge_edge", contacts.edgeEdgeCapacity},
                         {"capacity_triangle_vertex", contacts.triangleVertexCapacity},
                         {"detections", contacts.detections},
                         {"list_builds", contacts.listBuilds},
                         {"last_frame_pairs_per_build", lastFramePairsPerBuild(contacts)},
                         {"reuse_slack", solver_.selfContact.reuseSlack},
                         {"regrowths", sim.regrowths()}};
  }

 private:
  const Scene& scene_;
  const RunOptions& options_;
  ClothWorlds worlds_;
  SolverOptions solver_;
  std::optional<IntersectionCounter> counter_;
  std::vector<Vec3> positions_, velocities_;
  StepProfile profile_;
  std::vector<int> perFrame_;  // self-intersections after every frame (--intersections-every-frame)
  std::map<int, std::vector<std::pair<int, int>>> pairs_;  // intersectingPairs()
  std::vector<int> perWorld_;  // at the end, per world (one entry for one world)
  int total_ = 0;
};

/// The rigid model of a run: its worlds and solver options, the poses and velocities read after
/// each frame, every frame's joint gaps and overlaps per world, its checks and summary lines.
class RigidRun {
 public:
  RigidRun(const RunOptions& options, const Scene& scene, const SceneOptions& sceneOptions,
           size_t deviceBytes)
      : scene_(scene),
        options_(options),
        worlds_(buildRigidWorlds(scene, sceneOptions, deviceBytes)),
        solver_(scene.rigid.solver),
        integrity_(static_cast<size_t>(worlds_.count())) {
    if (options.iterations > 0) solver_.iterations = options.iterations;
    if (options.chebyshevRho >= 0.0f) solver_.chebyshevRho = options.chebyshevRho;
    if (options.iterationLaunches == "per-color")
      solver_.iterationLaunches = IterationLaunches::PerColor;
    else if (options.iterationLaunches == "per-world")
      solver_.iterationLaunches = IterationLaunches::PerWorld;
    else if (options.iterationLaunches == "auto")
      solver_.iterationLaunches = IterationLaunches::Auto;
    solver_.recordConvergence = recordsConvergence();
  }

  const RigidWorlds& worlds() const { return worlds_; }
  const RigidDesc& desc() const { return worlds_.desc; }
  const RigidSolverOptions& solverOptions() const { return solver_; }
  std::span<const Transform> poses() const { return poses_; }
  bool recordsConvergence() const {
    return options_.convergence || !options_.convergencePlot.empty();
  }
  void readInitial(const Simulation& sim) { poses_ = sim.rigid().poses(); }

  /// After frame `frame`: the state and its integrity record, and the first non-finite body if
  /// any.
  std::optional<Divergence> readFrame(Simulation& sim, long long frame) {
    poses_ = sim.rigid().poses();
    const int numWorlds = worlds_.count();
    if (worlds_.wholeModel()) {
      integrity_.front().record(desc(), poses_, int(frame));
    } else {
      for (int k = 0; k < numWorlds; ++k)
        integrity_[size_t(k)].record(worlds_.model(k), worlds_.placedAlone(poses_, k), int(frame));
    }
    if (scene_.rigid.checksUseHistory) history_.push_back(poses_);
    linear_ = sim.rigid().linearVelocities();
    angular_ = sim.rigid().angularVelocities();
    const RigidCheckInput probe{desc(),  poses_, linear_, angular_, frame, frame / scene_.fps,
                                nullptr, {}};
    if (checkBodiesFinite(probe).pass) return std::nullopt;
    int bad = 0;
    for (size_t b = 0; b < poses_.size(); ++b)
      if (!std::isfinite(poses_[b].p.x + poses_[b].p.y + poses_[b].p.z + linear_[b].x +
                         linear_[b].y + linear_[b].z)) {
        bad = int(b);
        break;
      }
    return Divergence{frame, "body", bad, worlds_.worldOf(bad)};
  }

  /// World k's checks, judged on its own bodies where it would be alone (the whole model for one
  /// world that is the whole batch).
  std::vector<CheckResult> checks(int k, int frames) const {
    const double seconds = frames / scene_.fps;
    if (worlds_.wholeModel())
      return scene_.rigid.checks(RigidCheckInput{desc(), poses_, linear_, angular_, frames, seconds,
                                                 &integrity_.front(), history_});
    std::vector<std::vector<Transform>> h;
    for (const std::vector<Transform>& frame : history_) h.push_back(worlds_.placedAlone(frame, k));
    return scene_.rigid.checks(RigidCheckInput{worlds_.model(k), worlds_.placedAlone(poses_, k),
                                               worlds_.part(linear_, k), worlds_.part(angular_, k),
                                               frames, seconds, &integrity_[size_t(k)], h});
  }
  /// World k's final poses and velocities, as bytes into `hash` (world_state_hashes).
  uint64_t hashWorld(int k, uint64_t hash) const {
    const size_t first = size_t(worlds_.begin[size_t(k)]), n = size_t(worlds_.size(k));
    hash = fnv1a(poses_.data() + first, n * sizeof(Transform), hash);
    hash = fnv1a(linear_.data() + first, n * sizeof(Vec3), hash);
    return fnv1a(angular_.data() + first, n * sizeof(Vec3), hash);
  }
  std::optional<CheckResult> contactsComplete(const Simulation& sim) const {
    const RigidPart::ContactReport& r = sim.rigid().contactReport();
    const bool complete = r.lastFrameRows <= r.rowCapacity;
    return CheckResult{"contacts_complete", complete,
                       complete ? "every contact row of the last frame was stored (" +
                                      std::to_string(r.lastFrameRows) + " rows, capacity " +
                                      std::to_string(r.rowCapacity) + ")"
                                : "the last frame's contact rows overflowed"};
  }

  std::string sweeps() const {
    return solver_.chebyshevRho > 0.0f ? "Chebyshev rho " + formatFixed(solver_.chebyshevRho, 2)
                                       : "plain sweeps";
  }
  std::string iterations() const {
    return std::to_string(solver_.iterations) + " iterations" +
           (solver_.chebyshevRho > 0.0f ? " (" + sweeps() + ")" : "");
  }
  void printModel(std::ostream& out, const Simulation& sim) const {
    out << "  model         " << desc().numBodies() << " bodies, " << desc().numJoints()
        << " joints, " << desc().numShapes() << " shapes, " << sim.rigid().model().numColors
        << " colors" << (sim.rigid().model().hasDahl ? ", Dahl friction on" : "")
        << (sim.rigid().solver().iteratesPerWorld() ? ", each world's iterations in one launch"
                                                    : "")
        << "\n";
  }
  void printContacts(std::ostream& out, const Simulation& sim) const {
    const RigidPart::ContactReport& contacts = sim.rigid().contactReport();
    out << "  contacts      largest detection " << contacts.largestRows << " rows (capacity "
        << contacts.rowCapacity << "), at most " << contacts.largestPartners
        << " broad-phase partners per shape; partner lists built in " << contacts.pairListBuilds
        << " of " << contacts.detections << " detections\n";
  }
  /// The convergence lines and plot (--convergence, --convergence-plot).
  void printExtras(std::ostream& out, const Simulation& sim) const {
    if (!recordsConvergence()) return;
    const ConvergenceSummary steps = summarizeConvergence(sim.rigid().convergenceReport());
    out << "  convergence   largest body step per iteration, median over " << steps.substeps
        << " substeps:\n";
    auto row = [&](const char* label, const std::vector<double>& values, const char* unit) {
      out << "                " << label;
      for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : " ") << formatShort(values[i]);
      out << " " << unit << "\n";
    };
    row("|dx|    ", steps.medianTranslation, "m");
    row("|dtheta|", steps.medianRotation, "rad");
    if (!options_.convergencePlot.empty()) {
      writeFileAtomically(
          options_.convergencePlot,
          convergenceSvg(scene_.name + ": convergence of the rigid solve (" +
                             std::to_string(solver_.iterations) + " iterations, " + sweeps() + ")",
                         steps),
          "convergence plot");
      out << "                plot " << options_.convergencePlot << "\n";
    }
  }
  void addJson(nlohmann::json& j, const Simulation& sim) const {
    j["chebyshev_rho"] = solver_.chebyshevRho;
    j["iteration_launches"] = sim.rigid().solver().iteratesPerWorld() ? "per-world" : "per-color";
    j["bodies"] = desc().numBodies();
    j["joints"] = desc().numJoints();
    j["shapes"] = desc().numShapes();
    j["colors"] = sim.rigid().model().numColors;
    const RigidPart::ContactReport& contacts = sim.rigid().contactReport();
    j["contacts"] = {{"largest_rows", contacts.largestRows},
                     {"last_frame_rows", contacts.lastFrameRows},
                     {"row_capacity", contacts.rowCapacity},
                     {"largest_partners", contacts.largestPartners},
                     {"detections", contacts.detections},
                     {"pair_list_builds", contacts.pairListBuilds},
                     {"frames_two_shared_levels", contacts.framesTwoSharedLevels},
                     {"regrowths", sim.regrowths()}};
    // Per frame from frame 1 (null where nothing could be measured): the largest joint anchor
    // gap over its joint's reference length, and the deepest capsule overlap over the pair's
    // smaller radius (negative: apart), as the integrity checks judge them; with worlds, the
    // largest over the worlds.
    j["integrity"] = {{"joint_gap_fraction_per_frame", largestPerFrame(integrity_, true)},
                      {"overlap_fraction_per_frame", largestPerFrame(integrity_, false)}};
    if (!recordsConvergence()) return;
    // Per substep of the run (frames in order), one value per iteration.
    const RigidPart::ConvergenceReport& convergence = sim.rigid().convergenceReport();
    const ConvergenceSummary steps = summarizeConvergence(convergence);
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

 private:
  const Scene& scene_;
  const RunOptions& options_;
  RigidWorlds worlds_;
  RigidSolverOptions solver_;
  std::vector<Transform> poses_;
  std::vector<Vec3> linear_, angular_;
  // Joint gaps and capsule overlaps of every frame, one record per world.
  std::vector<CableIntegrityRecord> integrity_;
  std::vector<std::vector<Transform>> history_;  // every frame's poses, for checks of the motion
};

/// The scene options of `options` (--scene-option, --mesh…, --worlds, --world-spacing).
SceneOptions sceneOptionsOf(const RunOptions& options) {
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
    const std::string key = kv.substr(0, eq);
    if (const auto given = sceneOptions.values.find(key); given != sceneOptions.values.end())
      throw Error("--scene-option " + key + " is given twice (" + key + "=" + given->second +
                  " and " + kv +
                  "); give it once (a list A,B,C or a range FIRST:LAST spreads "
                  "values over --worlds)");
    sceneOptions.values[key] = kv.substr(eq + 1);
  }
  sceneOptions.worlds = options.worlds;
  if (options.worldSpacing.size() == 3)
    sceneOptions.worldSpacing = {options.worldSpacing[0], options.worldSpacing[1],
                                 options.worldSpacing[2]};
  if (!options.worldSpacing.empty() && options.worlds < 2)
    throw Error("--world-spacing needs --worlds N (N > 1)");
  return sceneOptions;
}

/// Flags that only one kind of part reads, refused (with the reason) when the scene lacks it.
void checkPartFlags(const RunOptions& options, const Scene& scene, bool cloth, bool rigid) {
  if (!options.meshPath.empty() && !cloth)
    throw Error("scene " + scene.name + " has no cloth for --mesh");
  if (!options.meshPath.empty() && !scene.cloth.takesMesh) {
    std::string takers;
    for (const Scene& s : allScenes())
      if (s.cloth.takesMesh) takers += (takers.empty() ? "" : ", ") + s.name;
    throw Error("--mesh: " + scene.name +
                " builds its own cloth and takes no mesh (the scenes "
                "that do: " +
                takers + ")");
  }
  if (options.profile && !cloth)
    throw Error("--profile is for cloth scenes; use `weft bench` for a cable scene's breakdown");
  if (options.intersectionsEveryFrame && !cloth)
    throw Error("--intersections-every-frame is for cloth scenes");
  if (options.reuseSlack >= 0.0f && !(cloth && scene.cloth.solver.selfContact.enabled))
    throw Error("--reuse-slack: " + scene.name + " has no cloth self-contact");
  if (!options.iterationLaunches.empty() && !rigid)
    throw Error(
        "--iteration-launches is for cable scenes (how the rigid solver's iterations are "
        "launched); " +
        scene.name + " is a cloth scene");
  if (options.chebyshevRho >= 0.0f && !rigid)
    throw Error("--chebyshev-rho is for cable scenes (it accelerates the rigid solver's sweeps); " +
                scene.name + " is a cloth scene");
  if ((options.convergence || !options.convergencePlot.empty()) && !rigid)
    throw Error("--convergence is for cable scenes (it records the rigid solver's body steps); " +
                scene.name + " is a cloth scene");
}

/// One run: the whole batch of `options`, or (`slice`, one rank of an mpirun) its worlds
/// slice->first … of the batch, whose summary (with every world's checks) then goes to `rankReport`
/// instead of being printed or written (run_ranks.cpp gathers and prints the ranks' reports).
int runScene(const RunOptions& options, std::ostream& out, std::ostream& err,
             const WorldSlice* slice = nullptr, nlohmann::json* rankReport = nullptr) {
  // ---- Validate everything before anything is written -----------------------------------
  const Scene& scene = findScene(options.scene);
  const FrameFormat format = parseFrameFormat(options.format);
  if (options.frames < 0) throw Error("--frames must be positive");
  // The command line's ranges, here too for callers that fill RunOptions themselves (Python).
  if (options.iterations < 0 || options.iterations > 10000)
    throw Error("--iterations must be a whole number from 1 to 10000 (0: the scene's), not " +
                std::to_string(options.iterations));
  if (std::isnan(options.chebyshevRho) || options.chebyshevRho >= 1.0f)
    throw Error("--chebyshev-rho must be in [0, 1) (negative: the scene's), not " +
                std::to_string(options.chebyshevRho));
  checkWorldCount(options.worlds);
  const int frames = options.frames > 0 ? options.frames : scene.defaultFrames;
  auto device = openDevice(options.device, options.debugLaunches);
  const TableSelection table = applyLaunchTable(*device, options.launchTable, scene.name, err,
                                                slice ? slice->count : options.worlds);
  SceneOptions sceneOptions = sceneOptionsOf(options);
  if (slice) {
    sceneOptions.worlds = slice->count;
    sceneOptions.firstWorld = slice->first;
    sceneOptions.batchWorlds = slice->total;
  }
  checkOutputFile(options.summaryPath, "--summary");  // before the simulation, not after it
  if (format != FrameFormat::None) checkOutputFolder(options.outDir, "--out");
  const size_t deviceBytes = device->isCuda() ? device->gpu().totalMemoryBytes : 0;
  checkSceneFits(scene, sceneOptions, availableHostMemory(), deviceBytes);
  checkOutputFile(options.convergencePlot, "--convergence-plot");
  if (!options.convergencePlot.empty() &&
      std::filesystem::path(options.convergencePlot).extension() != ".svg")
    throw Error("--convergence-plot draws an SVG chart: give FILE.svg, not " +
                options.convergencePlot);
  const bool hasCloth = scene.hasCloth(), hasRigid = scene.hasRigid();
  checkPartFlags(options, scene, hasCloth, hasRigid);

  // ---- Build ---------------------------------------------------------------------------------
  std::optional<ClothRun> cloth;
  std::optional<RigidRun> rigid;
  if (hasCloth) cloth.emplace(options, scene, sceneOptions, deviceBytes);
  if (hasRigid) rigid.emplace(options, scene, sceneOptions, deviceBytes);
  const int numWorlds = cloth ? cloth->worlds().count() : rigid->worlds().count();
  const size_t bytesBefore = liveDeviceBytes(*device);
  Simulation sim(*device, cloth ? &cloth->desc() : nullptr,
                 cloth ? cloth->solverOptions() : SolverOptions{}, rigid ? &rigid->desc() : nullptr,
                 rigid ? rigid->solverOptions() : RigidSolverOptions{}, 1.0 / scene.fps,
                 scene.substeps, options.useGraphs && !options.profile);
  if (cloth) cloth->attach(sim);
  if (rigid) rigid->readInitial(sim);

  // ---- Simulate ------------------------------------------------------------------------------
  // A rank's files carry its worlds' numbers, so the ranks of an mpirun share one folder.
  const std::string outputName = slice && slice->count < slice->total
                                     ? scene.name + ".worlds" + std::to_string(slice->first) + "-" +
                                           std::to_string(slice->first + slice->count - 1)
                                     : scene.name;
  std::unique_ptr<FrameWriter> writer =
      makeFrameWriter(format, options.outDir, outputName, cloth ? &cloth->desc() : nullptr,
                      rigid ? &rigid->desc() : nullptr, scene.fps, frames);
  const auto frameState = [&] {
    return FrameState{cloth ? cloth->positions() : std::span<const Vec3>{},
                      rigid ? rigid->poses() : std::span<const Transform>{}};
  };
  if (writer && !writer->notice().empty()) out << "  earlier run   " << writer->notice() << "\n";
  if (writer) writer->writeFrame(0, frameState());

  std::vector<double> frameMs;
  std::optional<Divergence> divergence;
  int framesRun = 0;  // fewer than `frames` when a signal stopped the run
  ProgressBar progress(
      "weft run " + scene.name +
          (slice ? ", " + ranks().describe() + ", worlds " + std::to_string(slice->first) + "-" +
                       std::to_string(slice->first + slice->count - 1)
                 : ""),
      frames, "frame");
  const auto wallStart = std::chrono::steady_clock::now();
  for (int frame = 1; frame <= frames && !interruptSignal(); ++frame) {
    progress.starting(frame);
    sim.advanceFrame();
    framesRun = frame;
    frameMs.push_back(sim.lastFrameMs());
    if (cloth) divergence = cloth->readFrame(sim, frame);
    if (rigid && !divergence) divergence = rigid->readFrame(sim, frame);
    if (divergence) break;
    if (writer) writer->writeFrame(frame, frameState());
    if (cloth) cloth->afterWrite(sim);
    progress.update(frame,
                    formatFixed(1000.0 * frameMs.back() / scene.substeps, 1) + " us/substep");
  }
  progress.finish();
  const double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

  // ---- Checks ----------------------------------------------------------------------------
  if (cloth && !divergence) cloth->countIntersections(sim, framesRun);
  const size_t bytesAfter = liveDeviceBytes(*device);  // with any growth of the contact storage
  WorldsReport report = cloth
                            ? worldsReport(cloth->worlds(), scene, *device, table,
                                           bytesAfter > bytesBefore ? bytesAfter - bytesBefore : 0)
                            : worldsReport(rigid->worlds(), scene, *device, table,
                                           bytesAfter > bytesBefore ? bytesAfter - bytesBefore : 0);
  const int signal = divergence ? 0 : interruptSignal();
  std::vector<CheckResult> checks;
  std::vector<std::vector<CheckResult>> perWorld;  // each world's own checks
  std::vector<CheckResult> completeness;           // that no contact was dropped, per part
  if (divergence) {
    checks.push_back(
        {"finite", false,
         std::string(divergence->what) + " " + std::to_string(divergence->index) +
             (numWorlds > 1 ? " (world " + std::to_string(divergence->world) + ")" : "") +
             " became non-finite at frame " + std::to_string(divergence->frame)});
  } else if (!signal) {
    // Each world judged on its own particles and bodies, where it would be alone.
    perWorld.resize(static_cast<size_t>(numWorlds));
    for (int k = 0; k < numWorlds; ++k) {
      if (cloth) perWorld[size_t(k)] = cloth->checks(k, frames);
      if (rigid) {
        std::vector<CheckResult> r = rigid->checks(k, frames);
        perWorld[size_t(k)].insert(perWorld[size_t(k)].end(), r.begin(), r.end());
      }
    }
    if (numWorlds == 1) {
      checks = perWorld.front();
    } else {
      report.checks = summarizeWorldChecks(perWorld);
      checks = worldCheckResults(report.checks);
    }
    for (std::optional<CheckResult> c : {cloth ? cloth->contactsComplete(sim) : std::nullopt,
                                         rigid ? rigid->contactsComplete(sim) : std::nullopt})
      if (c) completeness.push_back(*c);
    checks.insert(checks.end(), completeness.begin(), completeness.end());
  }
  const bool allPass = !signal && allChecksPass(checks);
  const double msPerFrame = median(frameMs);
  const double usPerSubstep = 1000.0 * msPerFrame / scene.substeps;
  const long long framesDone = divergence ? divergence->frame : framesRun;
  if (writer) {  // complete the frames' output, with the run's outcome for pages that show it
    RunReport runReport;
    runReport.device = device->describe();
    runReport.frameMs = frameMs;
    int judged = 0, passing = 0;
    std::string failing;
    for (const CheckResult& c : checks) {
      if (c.informational) continue;
      ++judged;
      if (c.pass)
        ++passing;
      else
        failing += (failing.empty() ? "" : ", ") + c.name;
    }
    runReport.checks =
        signal ? "stopped by " + signalName(signal) + " after frame " + std::to_string(framesDone)
        : failing.empty()
            ? std::to_string(passing) + " of " + std::to_string(judged) + " checks pass"
            : "FAIL: " + failing + " (" + std::to_string(passing) + " of " +
                  std::to_string(judged) + " pass)";
    if (cloth) {
      runReport.intersections = cloth->intersectionsPerFrame();
      runReport.intersectingPairs = cloth->intersectingPairs();
    }
    std::ostringstream text;
    text << "weft run " << scene.name << " (commit " << WEFT_GIT_COMMIT << ")\n  device        "
         << device->describe() << "\n  timing        " << formatFixed(usPerSubstep, 1)
         << " us/substep (median over " << frameMs.size() << " frames)\n";
    printChecks(text, checks);
    printOutcome(text, signal, framesDone, frames, allPass);
    runReport.text = text.str();
    writer->setRunReport(runReport);
    writer->finish();
  }

  // ---- Summary -------------------------------------------------------------------------------
  nlohmann::json j;
  if (!options.summaryPath.empty() || rankReport) {
    j = summaryHeader(scene, *device, table, sim.usesGraphs(), framesDone, frames);
    j["scene_options"] = sceneOptions.values;
    j["iterations"] = cloth ? cloth->solverOptions().iterations : rigid->solverOptions().iterations;
    if (cloth && rigid) j["rigid_iterations"] = rigid->solverOptions().iterations;
    j["device_buffer_megabytes"] = report.deviceMegabytes;
    j["worlds"] = report.json(scene, sceneOptions, *device);
    if (cloth) cloth->addJson(j, sim, divergence.has_value());
    if (rigid) rigid->addJson(j, sim);
    addTimingAndChecks(j, usPerSubstep, msPerFrame, frameMs, wallSeconds, checks, allPass);
    j["diverged"] = divergence
                        ? nlohmann::json{{"frame", divergence->frame},
                                         {divergence->what, divergence->index},
                                         {"world", sceneOptions.firstWorld + divergence->world}}
                        : nlohmann::json(nullptr);
    j["outputs"] = writer ? writer->files() : std::vector<std::string>{};
    j["interrupted"] = signal ? nlohmann::json(signalName(signal)) : nlohmann::json(nullptr);
    // Each world's final state as a 64-bit FNV-1a of its bytes (positions and velocities, poses
    // and velocities): equal hashes, equal bits (a batch against its worlds alone, run to run,
    // one process against the ranks of an mpirun).
    nlohmann::json hashes = nlohmann::json::array();
    for (int k = 0; k < numWorlds && !divergence; ++k) {
      uint64_t hash = 0xcbf29ce484222325ull;
      if (cloth) hash = cloth->hashWorld(k, hash);
      if (rigid) hash = rigid->hashWorld(k, hash);
      char text[24];
      std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
      hashes.push_back(text);
    }
    j["world_state_hashes"] = hashes;
  }
  if (rankReport) {  // one rank's part: its worlds' own checks for run_ranks.cpp to combine
    nlohmann::json worlds = nlohmann::json::array();
    for (const std::vector<CheckResult>& w : perWorld) worlds.push_back(checksToJson(w));
    j["checks_per_world"] = worlds;
    j["contacts_complete"] = checksToJson(completeness);
    j["model_line"] = [&] {
      std::ostringstream line;
      if (cloth) cloth->printModel(line);
      if (rigid) rigid->printModel(line, sim);
      return line.str();
    }();
    j["regrowths"] = sim.regrowths();
    j["world_slice"] = {{"first", slice->first}, {"count", slice->count}, {"total", slice->total}};
    *rankReport = std::move(j);
    return signal ? interruptExitCode(signal) : allPass ? kExitOk : kExitCheckFailed;
  }
  out << "weft run " << scene.name << "\n";
  out << "  device        " << device->describe()
      << (sim.usesGraphs() ? ", one CUDA graph per frame" : "") << "\n";
  out << "  launch table  " << describeTableInUse(table) << " (" << table.reason << ")\n";
  report.print(out, scene, sceneOptions, *device);
  if (cloth) cloth->printModel(out);
  if (rigid) rigid->printModel(out, sim);
  report.printMemory(out, *device);
  const std::string iterations =
      cloth && rigid ? cloth->iterations() + " (cloth), " + rigid->iterations() + " (rigid)"
      : cloth        ? cloth->iterations()
                     : rigid->iterations();
  out << "  simulated     " << framesDone << " frames x " << scene.substeps << " substeps x "
      << iterations << " at " << scene.fps << " fps, in " << formatFixed(wallSeconds, 2)
      << " s wall\n";
  out << "  timing        " << formatFixed(usPerSubstep, 1) << " us/substep, "
      << formatFixed(msPerFrame, 3) << " ms/frame (median over " << frameMs.size() << " frames, "
      << (device->isCuda() ? "CUDA events" : "host clock") << ")\n";
  if (cloth) cloth->printContacts(out, sim, divergence.has_value());
  if (rigid) rigid->printContacts(out, sim);
  for (const std::string& r : sim.regrowths()) out << "  grew          " << r << "\n";
  if (cloth) cloth->printExtras(out);
  if (rigid) rigid->printExtras(out, sim);
  printChecks(out, checks);
  if (writer)
    for (const std::string& f :
         writer->files().size() > 3
             ? std::vector<std::string>{writer->files().front(), "...", writer->files().back()}
             : writer->files())
      out << "  output        " << f << "\n";
  printOutcome(out, signal, framesDone, frames, allPass);

  if (!options.summaryPath.empty()) {
    writeFileAtomically(options.summaryPath, j.dump(2) + "\n", "summary");
    out << "  summary       " << options.summaryPath << "\n";
  }
  out.flush();
  if (signal) return interruptExitCode(signal);
  return allPass ? kExitOk : kExitCheckFailed;
}

}  // namespace

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

void addChecks(nlohmann::json& j, const std::vector<CheckResult>& checks, bool allPass) {
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

void addWorldCheckCounts(nlohmann::json& worlds, const std::vector<WorldCheckSummary>& checks) {
  if (checks.empty()) return;
  nlohmann::json passing = nlohmann::json::object(), failing = nlohmann::json::object();
  for (const WorldCheckSummary& c : checks) {
    passing[c.name] = c.passing;
    failing[c.name] = c.failing;
  }
  worlds["checks_passing"] = passing;
  worlds["checks_failing_worlds"] = failing;
}

nlohmann::json checksToJson(const std::vector<CheckResult>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const CheckResult& c : checks)
    out.push_back({{"name", c.name},
                   {"pass", c.pass},
                   {"detail", c.detail},
                   {"informational", c.informational}});
  return out;
}

std::vector<CheckResult> checksFromJson(const nlohmann::json& j) {
  std::vector<CheckResult> out;
  for (const nlohmann::json& c : j)
    out.push_back({c.at("name").get<std::string>(), c.at("pass").get<bool>(),
                   c.at("detail").get<std::string>(), c.at("informational").get<bool>()});
  return out;
}

int runSlice(const RunOptions& options, const WorldSlice& slice, nlohmann::json& report,
             std::ostream& err) {
  std::ostringstream ignored;  // the rank's own summary lines: rank 0 prints the combined ones
  return runScene(options, ignored, err, &slice, &report);
}

int runCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  const InterruptScope interrupts;
  if (ranks().several()) return runOnRanks(options, out, err);
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
