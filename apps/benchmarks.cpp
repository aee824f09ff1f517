// weft_benchmarks: Google Benchmark timings of Weft's GPU work.
//
// Method (docs/BENCHMARKS.md): the work is captured once into a CUDA graph; each benchmark
// iteration replays it `kReplays` times between two CUDA events and reports the mean time per
// call as the iteration's manual time; run with --benchmark_repetitions=N to get medians and
// spread. Without a GPU the benchmarks skip with a message.
//
//   SceneSubstep/<scene>   one substep of each benchmark scene with the launch table in effect
//       for this GPU (as `weft run` uses), from the scene's measurement frame (the tuner's: its
//       densest self-contact frame); the state is restored to that frame every `substeps`
//       iterations. `weft bench` is the readable front end to the same measurement.
//   SelfContactDetection/<cells>/<traversal>   one self-contact detection (leaf boxes, refit of
//       both trees, vertex–triangle and edge–edge queries, transpose) on a cells × cells grid
//       folded onto itself so that its halves lie within the detection margin;
//       traversal 0 = cooperative (lanes per query from the table), 1 = stackless, 2 =
//       shared-memory stack (the reference's).
//   CableWorlds/<scene>/<worlds>   one frame of `worlds` copies of a cable scene in one model
//       (replicateWorlds, 3 m apart along x) replayed as one graph, after 3 warm frames; counters:
//       world-substeps per second and µs per substep.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "collision/self_contact_detector.h"
#include "kernels/runtime/graph.h"
#include "kernels/runtime/table_selection.h"
#include "kernels/runtime/timer.h"
#include "scenes/scene.h"
#include "scenes/scene_runner.h"
#include "solver/cable_builder.h"
#include "solver/cloth_builder.h"
#include "solver/contact_filter.h"
#include "solver/simulation.h"
#include "tuning/tuner.h"

namespace weft {
namespace {

constexpr int kReplays = 20;

/// A unit square grid folded in half along x = 0.5, the upper half `gap` above the lower one.
ModelDesc foldedGrid(int cells, float gap) {
  ClothBuilder builder;
  ClothGridParams g;
  g.dimX = g.dimY = cells;
  g.cellX = g.cellY = 1.0f / cells;
  builder.addClothGrid(g);
  ModelDesc desc = builder.finalize();
  for (Vec3& p : desc.positions)
    if (p.x > 0.5f) p = {1.0f - p.x, p.y, gap};
  return desc;
}

void SelfContactDetection(benchmark::State& state) {
  if (visibleCudaDevices() == 0) {
    state.SkipWithError("no CUDA GPU visible");
    return;
  }
  const int cells = int(state.range(0));
  const auto traversal = static_cast<DetectionTraversal>(state.range(1));
  auto device = Device::open(DeviceRequest::Cuda);
  // Margin and gap as the cloth scenes: the halves are 0.75 cell apart, the margin one cell.
  const float cell = 1.0f / cells;
  const ModelDesc desc = foldedGrid(cells, 0.75f * cell);
  const ContactFilter filter = buildContactFilter(desc, 2);
  DeviceBuffer<Int3> triangles(*device, desc.triangles);
  DeviceBuffer<Int4> edges(*device, desc.edges);
  DeviceBuffer<Vec3> positions(*device, desc.positions);
  DeviceBuffer<int> vOffsets(*device, filter.vertexTriangleOffsets),
      vValues(*device, filter.vertexTriangles), eOffsets(*device, filter.edgeEdgeOffsets),
      eValues(*device, filter.edgeEdges);
  SelfContactTopology topology;
  topology.numParticles = desc.numParticles();
  topology.numTriangles = desc.numTriangles();
  topology.numEdges = desc.numEdges();
  topology.triangles = triangles.data();
  topology.edges = edges.data();
  topology.restPositions = positions.data();
  topology.vertexFilterOffsets = vOffsets.data();
  topology.vertexFilterValues = vValues.data();
  topology.edgeFilterOffsets = eOffsets.data();
  topology.edgeFilterValues = eValues.data();
  SelfContactDetectorSettings settings;
  settings.margin = cell;
  settings.traversal = traversal;
  SelfContactDetector detector(*device, topology, settings, positions.data());
  // Size the lists once so that no candidate is dropped, then time.
  detector.resetStatus();
  detector.detect(positions.data());
  detector.growToFit(detector.readStatus());
  detector.resetStatus();
  detector.detect(positions.data());
  const ContactStatus status = detector.readStatus();

  FrameGraph graph(*device);
  graph.capture([&] {
    for (int r = 0; r < kReplays; ++r) detector.detect(positions.data());
  });
  DeviceTimer timer(*device);
  graph.replay();  // warm-up
  device->synchronize();
  for (auto _ : state) {
    timer.start();
    graph.replay();
    timer.stop();
    state.SetIterationTime(timer.elapsedMs() * 1e-3 / kReplays);
  }
  state.counters["particles"] = desc.numParticles();
  state.counters["max_vt_per_vertex"] = status.maxVertexTriangle;
  state.counters["max_ee_per_edge"] = status.maxEdgeEdge;
  state.SetLabel(device->gpu().identity.name + ", " + traversalName(traversal));
}

/// The CUDA device with the launch table `weft run` would use for the scene (selected into
/// `table`).
std::unique_ptr<Device> openWithSceneTable(const std::string& sceneName, TableSelection& table) {
  auto device = Device::open(DeviceRequest::Cuda);
  table = applyLaunchTable(*device, "", sceneName);
  return device;
}

void SceneSubstep(benchmark::State& state, const std::string& sceneName) {
  if (visibleCudaDevices() == 0) {
    state.SkipWithError("no CUDA GPU visible");
    return;
  }
  TableSelection table;
  auto device = openWithSceneTable(sceneName, table);
  const Scene& scene = findScene(sceneName);
  std::unique_ptr<SceneRunner> sim = makeSceneRunner(*device, scene);
  MeasurementState start = runToMeasurementFrame(*device, *sim, scene.tuneWindowFrames);
  // One graph per substep of a frame (cable scenes detect contacts in some substeps only).
  std::vector<std::unique_ptr<FrameGraph>> substeps;
  for (int s = 0; s < scene.substeps; ++s) {
    substeps.push_back(std::make_unique<FrameGraph>(*device));
    substeps.back()->capture([&sim, s] { sim->launchSubstep(s); });
  }
  DeviceTimer timer(*device);
  int step = 0;
  for (auto _ : state) {
    const int s = step++ % scene.substeps;
    if (s == 0) {
      state.PauseTiming();
      start.snapshot->restore();
      state.ResumeTiming();
    }
    timer.start();
    substeps[size_t(s)]->replay();
    timer.stop();
    state.SetIterationTime(timer.elapsedMs() * 1e-3);
  }
  state.counters["elements"] = sim->elementCount();
  state.SetLabel(device->gpu().identity.name + ", " + sim->sizeLabel() + ", " +
                 (table.table
                      ? table.table->sourcePath.substr(table.table->sourcePath.rfind('/') + 1)
                      : std::string("built-in sizes")));
}

void CableWorlds(benchmark::State& state, const std::string& sceneName) {
  if (visibleCudaDevices() == 0) {
    state.SkipWithError("no CUDA GPU visible");
    return;
  }
  const int worlds = int(state.range(0));
  TableSelection table;
  auto device = openWithSceneTable(sceneName, table);
  const Scene& scene = findScene(sceneName);
  const RigidDesc desc = replicateWorlds(scene.rigid.build({}), worlds, {3.0f, 0.0f, 0.0f});
  Simulation sim(*device, desc, scene.rigid.solver, 1.0 / scene.fps, scene.substeps);
  for (int f = 0; f < 3; ++f) sim.advanceFrame();
  double seconds = 0.0;
  long long frames = 0;
  for (auto _ : state) {
    sim.advanceFrame();
    state.SetIterationTime(sim.lastFrameMs() * 1e-3);
    seconds += sim.lastFrameMs() * 1e-3;
    ++frames;
  }
  const double substeps = double(frames) * scene.substeps;
  state.counters["worlds"] = worlds;
  state.counters["world_substeps_per_s"] = worlds * substeps / seconds;
  state.counters["us_per_substep"] = 1e6 * seconds / substeps;
  state.SetLabel(device->gpu().identity.name + ", " + std::to_string(desc.numBodies()) + " bodies");
}

/// One SceneSubstep benchmark per benchmark scene.
const bool kScenesRegistered = [] {
  for (const Scene& s : allScenes())
    if (s.benchmark)
      benchmark::RegisterBenchmark(("SceneSubstep/" + s.name).c_str(), SceneSubstep, s.name)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  return true;
}();

const bool kWorldsRegistered = [] {
  const auto add = [](const char* scene, std::vector<long long> worlds) {
    auto* b = benchmark::RegisterBenchmark((std::string("CableWorlds/") + scene).c_str(),
                                           CableWorlds, std::string(scene));
    for (long long n : worlds) b->Arg(n);
    b->ArgName("worlds")->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);
  };
  add("cable_y_junction", {1, 16, 256, 1024, 4096});
  add("cable_twist", {1, 16, 64, 256, 1024});
  add("cable_pile", {1, 2, 8});
  return true;
}();

BENCHMARK(SelfContactDetection)
    ->ArgsProduct({{50, 200}, {0, 1, 2}})
    ->ArgNames({"cells", "traversal"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace weft

BENCHMARK_MAIN();
