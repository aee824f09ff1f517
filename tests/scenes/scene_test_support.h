// Shared helpers for the scene suites: running a scene for some frames on a device and expecting
// its own checks to pass with zero self-intersections and no overflowing contact list, in the two
// forms the suites use, and a component-wise comparison of positions. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "collision/intersection_check.h"
#include "scenes/scene.h"
#include "solver/simulation.h"

namespace weft::test {

/// Expects each component of `actual` to be within `tolerance` of (x, y, z).
inline void expectNear(const Vec3& actual, double x, double y, double z, double tolerance) {
  EXPECT_NEAR(actual.x, x, tolerance);
  EXPECT_NEAR(actual.y, y, tolerance);
  EXPECT_NEAR(actual.z, z, tolerance);
}

/// Advances `sim` by `frames` frames, counting the mesh's self-intersections after every frame
/// and expecting none (a pass-through that a later frame undoes would escape a final-state
/// check); reports the first frame that intersects and how many pairs, and how long it took.
inline void advanceFramesWithoutSelfIntersection(Simulation& sim, const Device& device,
                                                 const ModelDesc& desc, const std::string& name,
                                                 int frames) {
  IntersectionCounter counter(device, desc.numParticles(), desc.triangles, desc.edges, desc.worlds,
                              desc.worldRanges.triangles);
  const auto start = std::chrono::steady_clock::now();
  int worst = 0, firstBad = -1;
  for (int f = 0; f < frames; ++f) {
    sim.advanceFrame();
    const int n = counter.count(sim.cloth().state().positions.data());
    if (n > 0 && firstBad < 0) firstBad = f;
    worst = std::max(worst, n);
  }
  std::printf("[ info     ] %s: %d frames on %s in %.2f s, intersections checked every frame\n",
              name.c_str(), frames, device.describe().c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(worst, 0) << "self-intersections from frame " << firstBad << " (at most " << worst
                      << " edge-triangle pairs in a frame)";
}

/// Runs `frames` frames of `desc` with `options` at the scene's rate, and expects every scene
/// check (each printed), zero self-intersections after every frame and complete contact lists (the
/// last frame's largest counts within the capacities). Returns the final positions.
inline std::vector<Vec3> expectRunPassesChecks(const Device& device, const Scene& scene,
                                               const ModelDesc& desc, const SolverOptions& options,
                                               int frames) {
  Simulation sim(device, desc, options, 1.0 / scene.fps, scene.substeps);
  advanceFramesWithoutSelfIntersection(sim, device, desc, scene.name, frames);
  const std::vector<Vec3> x = sim.cloth().positions(), v = sim.cloth().velocities();
  for (const CheckResult& c : scene.cloth.checks({desc, x, v, frames})) {
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
    std::printf("  %s %s: %s\n", c.pass ? "pass" : "FAIL", c.name.c_str(), c.detail.c_str());
  }
  const ClothPart::ContactReport& contacts = sim.cloth().contactReport();
  EXPECT_LE(contacts.lastFrame.maxVertexTriangle, contacts.vertexTriangleCapacity);
  EXPECT_LE(contacts.lastFrame.maxEdgeEdge, contacts.edgeEdgeCapacity);
  EXPECT_LE(contacts.lastFrame.maxTriangleVertex, contacts.triangleVertexCapacity);
  return x;
}

/// After `frames` frames of `sim` (a run of `desc`, built by `scene`), expects the scene's checks
/// to pass, the mesh not to intersect itself and every self-contact candidate list to fit.
/// Returns the final positions.
inline std::vector<Vec3> expectChecksWithoutSelfIntersection(const Device& device,
                                                             const Scene& scene,
                                                             const ModelDesc& desc, Simulation& sim,
                                                             int frames) {
  const std::vector<Vec3> x = sim.cloth().positions(), v = sim.cloth().velocities();
  for (const CheckResult& c : scene.cloth.checks({desc, x, v, frames}))
    EXPECT_TRUE(c.pass) << c.name << ": " << c.detail;
  IntersectionCounter counter(device, desc.numParticles(), desc.triangles, desc.edges, desc.worlds,
                              desc.worldRanges.triangles);
  EXPECT_EQ(counter.count(sim.cloth().state().positions.data()), 0);
  SelfContactDetector& detector = *sim.cloth().scratch().selfContact;
  EXPECT_TRUE(detector.fits(detector.readStatus()));
  return x;
}

}  // namespace weft::test
