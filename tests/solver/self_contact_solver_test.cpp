// Cloth with self-contact, whole runs: cloth that folds onto itself and sheets that slide on each
// other never pass through themselves; contact lists that grow mid-run change nothing; runs are
// bit-identical run to run, for both traversals and for every launch size of every self-contact
// kernel; CUDA agrees with the CPU; kept candidate lists (a reuse slack) change the run little,
// are built less often and keep it free of intersections.
#include <gtest/gtest.h>

#include <vector>

#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "math_test_support.h"
#include "scenes/scene.h"
#include "solver/cloth_builder.h"
#include "solver/simulation.h"
#include "solver/solver_vbd.h"
#include "test_support.h"

namespace weft {
namespace {

using test::bitIdentical;   // math_test_support.h
using test::maxDifference;  // math_test_support.h

/// Runs `frames` frames, checking after each that the mesh does not intersect itself and that no
/// particle is below the ground; returns the final positions.
std::vector<Vec3> runIntersectionFree(const Device& device, const ModelDesc& desc,
                                      const SolverOptions& options, int frames,
                                      float groundTolerance) {
  Simulation sim(device, desc, options, 1.0 / 60.0, 10);
  IntersectionCounter counter(device, desc.numParticles(), desc.triangles, desc.edges);
  for (int f = 1; f <= frames; ++f) {
    sim.advanceFrame();
    EXPECT_EQ(counter.count(sim.cloth().state().positions.data()), 0) << "frame " << f;
    const std::vector<Vec3> x = sim.cloth().positions();
    for (const Vec3& p : x) {
      if (p.z < -groundTolerance) {
        ADD_FAILURE() << "particle below the ground at frame " << f << ": z = " << p.z;
        return x;
      }
    }
  }
  return sim.cloth().positions();
}

TEST(SelfContactSolver, FoldedClothStaysIntersectionFreeOnCpu) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  runIntersectionFree(*cpu, desc, scene.cloth.solver, 40, 0.005f);
}

TEST(SelfContactSolver, FoldedClothStaysIntersectionFreeOnCudaForItsDefaultLength) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  runIntersectionFree(*gpu, desc, scene.cloth.solver, scene.defaultFrames, 0.005f);
}

/// Two sheets lying on the ground, one 8 mm above the other; the top one slides off at 1 m/s.
ModelDesc stackedSheets(int cells) {
  ClothBuilder builder;
  for (int layer = 0; layer < 2; ++layer) {
    ClothGridParams g;
    g.dimX = g.dimY = cells;
    g.cellX = g.cellY = 0.4f / cells;
    g.position = {-0.2f, -0.2f, 0.005f + 0.008f * layer};
    g.velocity = {layer == 1 ? 1.0f : 0.0f, 0.0f, 0.0f};
    g.mass = 0.002f;
    g.triangleMaterial = {1.0e3f, 1.0e3f, 1.0e1f};
    g.edgeMaterial = {1.0e-1f, 0.0f};
    g.particleRadius = 0.005f;
    builder.addClothGrid(g);
  }
  ShapeDesc ground;
  ground.geometry.type = ShapeType::Plane;
  builder.addShape(ground);
  return builder.finalize();
}

SolverOptions sheetOptions() {
  SolverOptions o;
  o.particleContact = {1.0e3f, 1.0f, 0.5f};
  o.selfContact.enabled = true;
  o.selfContact.radius = 0.006f;
  o.selfContact.margin = 0.01f;
  return o;
}

void expectSheetsSlide(const Device& device, int cells, int frames) {
  const ModelDesc desc = stackedSheets(cells);
  const std::vector<Vec3> x = runIntersectionFree(device, desc, sheetOptions(), frames, 0.005f);
  // The top sheet moved over the bottom one, and friction slowed it below its start speed.
  const int n = desc.numParticles() / 2;
  double top = 0.0, bottom = 0.0;
  for (int i = 0; i < n; ++i) {
    bottom += x[i].x - desc.positions[i].x;
    top += x[n + i].x - desc.positions[n + i].x;
  }
  top /= n;
  bottom /= n;
  EXPECT_GT(top - bottom, 0.02) << "the top sheet should slide";
  EXPECT_LT(top, frames / 60.0) << "friction should slow it";
  for (int i = n; i < 2 * n; ++i) EXPECT_GT(x[i].z, x[i % n].z - 0.01f);
}

TEST(SelfContactSolver, StackedSheetsSlideWithoutIntersecting) {
  expectSheetsSlide(*test::openCpu(), 12, 20);
}

TEST(SelfContactSolver, LargerStackedSheetsSlideWithoutIntersectingOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectSheetsSlide(*gpu, 40, 60);
}

// Lists that start with one slot and grow (running frames again) give the very same run as
// lists that were big enough from the start: nothing was lost.
TEST(SelfContactSolver, GrowingListsMidRunChangesNothing) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  SolverOptions small = scene.cloth.solver, big = scene.cloth.solver;
  small.selfContact.vertexTriangleCapacity = 1;
  small.selfContact.edgeEdgeCapacity = 1;
  small.selfContact.triangleVertexCapacity = 1;
  big.selfContact.vertexTriangleCapacity = 128;
  big.selfContact.edgeEdgeCapacity = 256;
  big.selfContact.triangleVertexCapacity = 128;
  Simulation a(*cpu, desc, small, 1.0 / 60.0, 10), b(*cpu, desc, big, 1.0 / 60.0, 10);
  for (int f = 0; f < 25; ++f) {
    a.advanceFrame();
    b.advanceFrame();
  }
  EXPECT_FALSE(a.regrowths().empty());
  EXPECT_TRUE(b.regrowths().empty());
  EXPECT_GT(a.cloth().contactReport().largest.maxVertexTriangle, 1);
  EXPECT_TRUE(bitIdentical(a.cloth().positions(), b.cloth().positions()));
}

std::vector<Vec3> simulateFold(const Device& device, SolverOptions o, int frames,
                               bool graphs = true, ClothPart::ContactReport* report = nullptr) {
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  Simulation sim(device, desc, o, 1.0 / 60.0, scene.substeps, graphs);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  if (report) *report = sim.cloth().contactReport();
  return sim.cloth().positions();
}

/// cloth_fold's settings with kept lists: a slack of a quarter of the margin.
SolverOptions foldWithKeptLists() {
  SolverOptions o = findScene("cloth_fold").cloth.solver;
  o.selfContact.reuseSlack = 0.25f * o.selfContact.margin;
  return o;
}

// Kept lists hold every pair a detection would find (collision/self_contact_detector_test.cpp),
// so the fold stays free of intersections; they are built at every frame's first detection and
// far less often than detections run; the extra (farther) pairs exert no force and hardly ever
// truncate, so the run stays close to the one that builds them every time.
TEST(SelfContactSolver, KeptListsAreBuiltLessOftenAndKeepTheFoldIntersectionFree) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  const int frames = 40;
  Simulation sim(*cpu, desc, foldWithKeptLists(), 1.0 / 60.0, scene.substeps);
  IntersectionCounter counter(*cpu, desc.numParticles(), desc.triangles, desc.edges);
  for (int f = 1; f <= frames; ++f) {
    sim.advanceFrame();
    ASSERT_EQ(counter.count(sim.cloth().state().positions.data()), 0) << "frame " << f;
  }
  const ClothPart::ContactReport& r = sim.cloth().contactReport();
  EXPECT_EQ(r.detections, 2LL * scene.substeps * frames);  // interval 0: two per substep
  EXPECT_GE(r.listBuilds, frames);
  EXPECT_LT(r.listBuilds, r.detections / 2);
  ClothPart::ContactReport every;
  simulateFold(*cpu, scene.cloth.solver, 1, true, &every);
  EXPECT_EQ(every.listBuilds, every.detections) << "without a slack every detection builds";
  EXPECT_LT(maxDifference(simulateFold(*cpu, scene.cloth.solver, 10),
                          simulateFold(*cpu, foldWithKeptLists(), 10)),
            1e-3f);
}

TEST(SelfContactSolver, KeptListsKeepSlidingSheetsIntersectionFree) {
  SolverOptions o = sheetOptions();
  o.selfContact.reuseSlack = 0.2f * o.selfContact.margin;
  const std::vector<Vec3> x =
      runIntersectionFree(*test::openCpu(), stackedSheets(12), o, 20, 0.005f);
  EXPECT_EQ(x.size(), size_t(2 * 13 * 13));
}

TEST(SelfContactSolver, CpuRunsAreDeterministicForBothTraversals) {
  auto cpu = test::openCpu();
  SolverOptions o = findScene("cloth_fold").cloth.solver;
  const auto a = simulateFold(*cpu, o, 25);
  EXPECT_TRUE(bitIdentical(a, simulateFold(*cpu, o, 25)));
  for (DetectionTraversal traversal :
       {DetectionTraversal::Cooperative, DetectionTraversal::Stackless,
        DetectionTraversal::SharedStack}) {
    o.selfContact.traversal = traversal;
    EXPECT_TRUE(bitIdentical(a, simulateFold(*cpu, o, 25))) << traversalName(traversal);
  }
}

// With the tile solve the contact runs are summed in the solve's own tile
// (solve_elasticity_self_contact_tile); without it, by accumulate_self_contact_force_and_hessian
// and a one-thread solve. The same physics, summed in another order: the drop onto the bar
// agrees closely before contact makes the motion chaotic.
TEST(SelfContactSolver, FusedContactSolveAgreesWithSeparateAccumulation) {
  auto cpu = test::openCpu();
  SolverOptions fused = findScene("cloth_fold").cloth.solver, separate = fused;
  fused.tileSolve = true;
  separate.tileSolve = false;
  EXPECT_LT(maxDifference(simulateFold(*cpu, fused, 10), simulateFold(*cpu, separate, 10)), 1e-3f);
}

// The reference's current schedule (Newton 1.8.0): PRE_INIT, PRE_POST_INIT, ITERATIONS every n.
TEST(SelfContactSolver, DetectionScheduleIsTheReferences) {
  auto due = [](int interval, int iterations) {
    std::vector<int> at;
    for (int i = 0; i < iterations; ++i)
      if (selfContactDetectionDue(interval, i)) at.push_back(i);
    return at;
  };
  EXPECT_EQ(due(-1, 10), std::vector<int>{});
  EXPECT_EQ(due(0, 10), std::vector<int>{0});
  EXPECT_EQ(due(1, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(due(5, 12), (std::vector<int>{4, 9}));  // cloth_rollers: 3 detections a substep
  EXPECT_EQ(due(3, 10), (std::vector<int>{2, 5, 8}));
  EXPECT_EQ(due(20, 12), std::vector<int>{});
}

TEST(SelfContactSolver, DetectionScheduleVariantsStayIntersectionFree) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_fold");
  const ModelDesc desc = scene.cloth.build({});
  for (int interval : {-1, 0, 3}) {
    SCOPED_TRACE("interval " + std::to_string(interval));
    SolverOptions o = scene.cloth.solver;
    o.selfContact.detectionInterval = interval;
    o.selfContact.bvhRebuildInterval = 5;
    runIntersectionFree(*cpu, desc, o, 30, 0.005f);
  }
}

TEST(SelfContactSolver, CudaIsBitIdenticalForEveryLaunchSizeOfEverySelfContactKernel) {
  WEFT_REQUIRE_CUDA(gpu);
  const SolverOptions o = findScene("cloth_fold").cloth.solver;
  gpu->setLaunchPolicy(LaunchPolicy{});
  const auto reference = simulateFold(*gpu, o, 30);
  EXPECT_TRUE(bitIdentical(reference, simulateFold(*gpu, o, 30))) << "run to run";
  SolverOptions stack = o, stackless = o;
  stack.selfContact.traversal = DetectionTraversal::SharedStack;
  stackless.selfContact.traversal = DetectionTraversal::Stackless;
  EXPECT_TRUE(bitIdentical(reference, simulateFold(*gpu, stack, 30))) << "stack traversal";
  EXPECT_TRUE(bitIdentical(reference, simulateFold(*gpu, stackless, 30))) << "stackless traversal";
  // A size a kernel cannot launch with (too many registers per thread for 1024 threads, or the
  // shared-memory stack over 48 KB) must fail with a clear error before anything runs; every
  // size up to 256 must launch.
  auto expectSameOrCannotLaunch = [&](KernelId id, int size, const SolverOptions& options) {
    LaunchPolicy policy;
    policy.setOverride(id, size);
    gpu->setLaunchPolicy(policy);
    try {
      EXPECT_TRUE(bitIdentical(reference, simulateFold(*gpu, options, 30)))
          << kernelName(id) << " at " << size;
    } catch (const CudaError& e) {
      EXPECT_GT(size, 256) << e.what();
    }
  };
  for (KernelId id :
       {KernelId::compute_tri_aabbs, KernelId::compute_edge_aabbs, KernelId::lbvh_refit_leaves,
        KernelId::lbvh_refit_nodes, KernelId::vertex_triangle_collision_detection_cooperative,
        KernelId::edge_colliding_edges_detection_cooperative,
        KernelId::collect_triangle_colliding_vertices, KernelId::sort_triangle_colliding_vertices,
        KernelId::solve_elasticity_self_contact_tile, KernelId::count_particle_self_contacts,
        KernelId::write_particle_self_contacts, KernelId::apply_planar_truncation_by_record,
        KernelId::apply_truncation_ts})
    for (int size : launchSizes(id)) expectSameOrCannotLaunch(id, size, o);
  // Kept lists: every kernel of the detection reads the device's decision, which must not depend
  // on the launch size either.
  const SolverOptions kept = foldWithKeptLists();
  gpu->setLaunchPolicy(LaunchPolicy{});
  const auto keptReference = simulateFold(*gpu, kept, 30);
  EXPECT_TRUE(bitIdentical(keptReference, simulateFold(*gpu, kept, 30))) << "kept, run to run";
  for (KernelId id :
       {KernelId::measure_list_drift, KernelId::compute_tri_aabbs, KernelId::lbvh_refit_nodes,
        KernelId::edge_colliding_edges_detection_cooperative,
        KernelId::collect_triangle_colliding_vertices, KernelId::write_particle_self_contacts})
    for (int size : launchSizes(id)) {
      LaunchPolicy policy;
      policy.setOverride(id, size);
      gpu->setLaunchPolicy(policy);
      EXPECT_TRUE(bitIdentical(keptReference, simulateFold(*gpu, kept, 30)))
          << "kept lists: " << kernelName(id) << " at " << size;
    }
  // The separate accumulation (the solve without tiles) for every tile size.
  SolverOptions separate = o;
  separate.tileSolve = false;
  const auto separateReference = simulateFold(*gpu, separate, 30);
  for (int size : launchSizes(KernelId::accumulate_self_contact_force_and_hessian)) {
    LaunchPolicy policy;
    policy.setOverride(KernelId::accumulate_self_contact_force_and_hessian, size);
    gpu->setLaunchPolicy(policy);
    EXPECT_TRUE(bitIdentical(separateReference, simulateFold(*gpu, separate, 30)))
        << "accumulate_self_contact_force_and_hessian at " << size;
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
  for (KernelId id : {KernelId::vertex_triangle_collision_detection_stackless,
                      KernelId::edge_colliding_edges_detection_stackless})
    for (int size : kBlockSizes) expectSameOrCannotLaunch(id, size, stackless);
  for (KernelId id :
       {KernelId::vertex_triangle_collision_detection, KernelId::edge_colliding_edges_detection})
    for (int size : kBlockSizes) expectSameOrCannotLaunch(id, size, stack);
  gpu->setLaunchPolicy(LaunchPolicy{});
}

TEST(SelfContactSolver, CudaGraphReplayEqualsDirectLaunches) {
  WEFT_REQUIRE_CUDA(gpu);
  const SolverOptions o = findScene("cloth_fold").cloth.solver;
  EXPECT_TRUE(bitIdentical(simulateFold(*gpu, o, 20, true), simulateFold(*gpu, o, 20, false)));
  const SolverOptions kept = foldWithKeptLists();
  EXPECT_TRUE(
      bitIdentical(simulateFold(*gpu, kept, 20, true), simulateFold(*gpu, kept, 20, false)));
}

TEST(SelfContactSolver, CudaAgreesWithCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const SolverOptions o = findScene("cloth_fold").cloth.solver;
  // 10 frames: the sheet has fallen onto the bar; contact makes later frames chaotic, so the
  // comparison is made before small rounding differences (GPU FMA) can grow.
  EXPECT_LT(maxDifference(simulateFold(*cpu, o, 10), simulateFold(*gpu, o, 10)), 1e-3f);
  const SolverOptions kept = foldWithKeptLists();
  ClothPart::ContactReport onCpu, onGpu;
  EXPECT_LT(maxDifference(simulateFold(*cpu, kept, 10, true, &onCpu),
                          simulateFold(*gpu, kept, 10, true, &onGpu)),
            1e-3f);
  EXPECT_EQ(onCpu.detections, onGpu.detections);
  EXPECT_LT(onGpu.listBuilds, onGpu.detections);
}

}  // namespace
}  // namespace weft
