// cloth_rollers (scenes_spec §4): the rolled cloth and the two welded rollers have the expected
// counts, geometry, masses and fixed particles; the last row is moved after finalize while its
// rest shape stays the built one; the settings are the reference's; two frames on the CPU pass
// the scene's checks with zero self-intersections, and every driven particle is where the closed
// form centre + R_y(ω t)·(start offset) puts it; the full default run on CUDA passes the checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "scene_test_support.h"
#include "scenes/scene.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr int kCloth = 4800;      // cloth particles (320 rows × 15)
constexpr int kLastRow = 4785;    // first particle of the attached row
constexpr int kRollerOne = 4800;  // first particle of roller 1
constexpr int kRollerTwo = 5056;  // first particle of roller 2
constexpr int kParticles = 5312;

const Scene& rollers() {
  return findScene("cloth_rollers");
}

const ModelDesc& rollersDesc() {
  static const ModelDesc desc = rollers().cloth.build({});
  return desc;
}

double distanceFromAxis(const Vec3& x, double cx, double cz) {
  return std::hypot(x.x - cx, x.z - cz);
}

TEST(ClothRollers, BuildsWithTheExpectedCounts) {
  const ModelDesc& desc = rollersDesc();
  // Cloth 4800 / 8932 / 13,731 and two welded rollers of 256 / 256 / 512 (the reference's
  // unwelded rollers have 512 / 256 / 640 each: 5824 / 9444 / 15,011 in all).
  EXPECT_EQ(desc.numParticles(), kParticles);
  EXPECT_EQ(desc.numTriangles(), 8932 + 2 * 256);
  EXPECT_EQ(desc.numEdges(), 13731 + 2 * 512);
  int clothTriangles = 0, clothEdges = 0;
  for (const Int3& t : desc.triangles) clothTriangles += std::max({t.x, t.y, t.z}) < kCloth;
  for (const Int4& e : desc.edges) clothEdges += std::max(e.z, e.w) < kCloth;
  EXPECT_EQ(clothTriangles, 8932);
  EXPECT_EQ(clothEdges, 13731);
  EXPECT_EQ(desc.shapes.size(), 0u);
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, false), "");
  std::printf("cloth_rollers: %d colors (coloring without bending)\n", desc.coloring.numColors());
  EXPECT_GE(desc.coloring.numColors(), 3);
  EXPECT_LE(desc.coloring.numColors(), 10);
}

// --scene-option welded=0: the reference's unwelded rollers (5824 / 9444 / 15,011), the same
// surface: every roller vertex lies on its cylinder, and the cloth is unchanged.
TEST(ClothRollers, UnweldedOptionBuildsTheReferencesMesh) {
  SceneOptions options;
  options.values["welded"] = "0";
  const ModelDesc desc = rollers().cloth.build(options);
  EXPECT_EQ(desc.numParticles(), 5824);
  EXPECT_EQ(desc.numTriangles(), 9444);
  EXPECT_EQ(desc.numEdges(), 15011);
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, false), "");
  for (int p = 0; p < kCloth; ++p)
    if (p < kLastRow) ASSERT_EQ(desc.positions[size_t(p)], rollersDesc().positions[size_t(p)]);
  for (int p = kCloth; p < desc.numParticles(); ++p) {
    const bool first = p < kCloth + 512;
    const double r = first ? distanceFromAxis(desc.positions[size_t(p)], -27.2, 7.4)
                           : distanceFromAxis(desc.positions[size_t(p)], 40.0, 0.0);
    ASSERT_NEAR(r, first ? 9.9 : 14.9, 1e-4) << "particle " << p;
    ASSERT_EQ(desc.masses[size_t(p)], 0.0f) << "roller particles are fixed";
  }
  options.values["welded"] = "2";
  EXPECT_THROW(rollers().cloth.build(options), Error);
  options.values.clear();
  options.values["weld"] = "0";
  EXPECT_THROW(rollers().cloth.build(options), Error) << "unknown option";
}

TEST(ClothRollers, ClothIsRolledOnRollerOneAndAttachedToRollerTwo) {
  const ModelDesc& desc = rollersDesc();
  const auto& x = desc.positions;
  // Spiral rows about roller 1's axis (x, z) = (−27.2, 7.4): r = 10 + 0.4·θ/2π, θ = 80·i/299.
  for (int row : {0, 1, 100, 299}) {
    const double theta = 80.0 * row / 299.0;
    const double r = 10.0 + 0.4 / (2 * kPi) * theta;
    for (int j = 0; j < 15; ++j) {
      const Vec3& p = x[size_t(row * 15 + j)];
      ASSERT_NEAR(distanceFromAxis(p, -27.2, 7.4), r, 1e-3) << "row " << row;
      ASSERT_NEAR(p.y, 50.0 + 100.0 * (j / 14.0 - 0.5), 1e-3);
    }
  }
  // The outer spiral end is at world (−28.87, ·, 22.40); world = (−27.2 + x, 50 + z, 7.4 − y).
  EXPECT_NEAR(x[299 * 15].x, -28.866f, 2e-3f);
  EXPECT_NEAR(x[299 * 15].z, 22.401f, 2e-3f);
  // Extension rows step 2.6853 cm along the line toward local (51.5, −7.4).
  EXPECT_NEAR(length(x[301 * 15] - x[300 * 15]), 2.6853f, 1e-3f);
  EXPECT_NEAR(length(x[300 * 15] - x[299 * 15]), 2.6853f, 1e-3f);
  // The last row was moved to x = 24.62, z = 0 (y unchanged); its rest shape was not: the last
  // band's triangles keep the built 2.6853 × 7.1429 / 2 area, while the band is now 15.5 long.
  for (int p = kLastRow; p < kCloth; ++p) {
    EXPECT_EQ(x[size_t(p)].x, 24.62f);
    EXPECT_EQ(x[size_t(p)].z, 0.0f);
    EXPECT_NEAR(x[size_t(p)].y, 50.0 + 100.0 * ((p - kLastRow) / 14.0 - 0.5), 1e-3);
  }
  EXPECT_NEAR(length(x[size_t(kLastRow)] - x[size_t(kLastRow - 15)]), 15.47f, 0.02f);
  for (size_t t = 0; t < desc.triangles.size(); ++t) {
    if (desc.triangles[t].x >= kLastRow - 15 && desc.triangles[t].x < kCloth) {
      EXPECT_NEAR(desc.triangleRestAreas[t], 2.6853f * 100.0f / 14.0f / 2.0f, 1e-3f);
    }
  }
  // The reference test's starting centre of mass: mean x of the cloth is −25.72.
  double sumX = 0.0;
  for (int p = 0; p < kCloth; ++p) sumX += x[size_t(p)].x;
  EXPECT_NEAR(sumX / kCloth, -25.7206, 1e-3);
  // The rest shape is rolled: the hinges along the spiral's rows carry its curvature, one row
  // step (80/299 rad) each; the hinges across the (planar) quads are flat.
  int rowHinges = 0;
  for (int e = 0; e < desc.numEdges(); ++e) {
    const Int4& s = desc.edges[size_t(e)];
    const int a = std::min(s.z, s.w), b = std::max(s.z, s.w);
    if (b >= 299 * 15 || s.y < 0) continue;  // spiral interior hinges only
    if (b == a + 1 && a / 15 >= 1) {         // along a row, between two bands
      EXPECT_NEAR(std::fabs(desc.edgeRestAngles[size_t(e)]), 80.0 / 299.0, 2e-3) << e;
      ++rowHinges;
    } else if (b == a + 14) {  // a quad's diagonal
      EXPECT_NEAR(desc.edgeRestAngles[size_t(e)], 0.0f, 1e-3f) << e;
    }
  }
  EXPECT_EQ(rowHinges, 298 * 14);
}

TEST(ClothRollers, RollersAreWeldedCylindersAndEverythingDrivenIsFixed) {
  const ModelDesc& desc = rollersDesc();
  for (int p = kRollerOne; p < kRollerTwo; ++p)
    ASSERT_NEAR(distanceFromAxis(desc.positions[size_t(p)], -27.2, 7.4), 9.9, 1e-4);
  for (int p = kRollerTwo; p < kParticles; ++p)
    ASSERT_NEAR(distanceFromAxis(desc.positions[size_t(p)], 40.0, 0.0), 14.9, 1e-4);
  for (int p = kRollerOne; p < kParticles; ++p) {
    const float y = desc.positions[size_t(p)].y;
    ASSERT_TRUE(y == -10.0f || y == 110.0f) << y;
  }
  // Fixed: the attached row and every roller particle; the rest of the cloth is free, with
  // area-lumped masses (0.02 g/cm²).
  for (int p = 0; p < kParticles; ++p) {
    if (p >= kLastRow) {
      ASSERT_EQ(desc.masses[size_t(p)], 0.0f) << p;
    } else {
      ASSERT_GT(desc.masses[size_t(p)], 0.0f) << p;
    }
  }
  ASSERT_EQ(desc.drivers.size(), 2u);
  const ParticleDriver& one = desc.drivers[0].driver;
  const ParticleDriver& two = desc.drivers[1].driver;
  EXPECT_EQ(one.axisPoint, (Vec3{-27.2f, 50.0f, 7.4f}));
  EXPECT_EQ(two.axisPoint, (Vec3{40.0f, 50.0f, 0.0f}));
  EXPECT_EQ(one.axisDirection, (Vec3{0.0f, 1.0f, 0.0f}));
  EXPECT_EQ(two.axisDirection, (Vec3{0.0f, 1.0f, 0.0f}));
  EXPECT_NEAR(one.angularSpeed, 2 * kPi, 1e-5);
  EXPECT_NEAR(two.angularSpeed, 2 * kPi * 9.9 / 14.9, 1e-5);
  EXPECT_GT(one.stopTime, 1e6f);  // never stops
  EXPECT_GT(two.stopTime, 1e6f);
  EXPECT_EQ(desc.drivers[0].particles.size(), 256u);
  EXPECT_EQ(desc.drivers[1].particles.size(), 256u + 15u);
  // The same surface speed, 62.2 cm/s.
  EXPECT_NEAR(one.angularSpeed * 9.9, two.angularSpeed * 14.9, 1e-3);
  EXPECT_NEAR(one.angularSpeed * 9.9, 62.20, 0.01);
}

TEST(ClothRollers, SettingsAreTheReferences) {
  const Scene& scene = rollers();
  EXPECT_EQ(scene.units, "cm, g, s");
  EXPECT_EQ(scene.fps, 60.0);
  EXPECT_EQ(scene.substeps, 10);
  EXPECT_EQ(scene.defaultFrames, 200);
  EXPECT_TRUE(scene.cloth.checksSelfIntersections);
  const SolverOptions& o = scene.cloth.solver;
  EXPECT_EQ(o.iterations, 12);
  EXPECT_EQ(o.gravity, (Vec3{0.0f, 0.0f, 0.0f}));
  EXPECT_EQ(o.particleContact.ke, 5.0e5f);
  EXPECT_EQ(o.particleContact.kd, 5.0f);
  EXPECT_EQ(o.particleContact.mu, 0.1f);
  EXPECT_TRUE(o.selfContact.enabled);
  EXPECT_EQ(o.selfContact.radius, 0.3f);
  EXPECT_EQ(o.selfContact.margin, 0.6f);
  EXPECT_EQ(o.selfContact.detectionInterval, 5);
  EXPECT_EQ(o.selfContact.topologicalFilter, 2);
  EXPECT_EQ(o.selfContact.restExclusion, 0.0f);
  EXPECT_EQ(o.selfContact.bvhRebuildInterval, 1);
  EXPECT_EQ(o.selfContact.vertexTriangleCapacity, 48);
  EXPECT_EQ(o.selfContact.edgeEdgeCapacity, 64);
  EXPECT_EQ(o.selfContact.triangleVertexCapacity, 48);
  const ModelDesc& desc = rollersDesc();
  for (int t = 0; t < desc.numTriangles(); ++t) {
    const TriangleMaterial& m = desc.triangleMaterials[size_t(t)];
    ASSERT_EQ(m.ke, 1.0e5f);
    ASSERT_EQ(m.ka, 1.0e5f);
    ASSERT_EQ(m.kd, 1.0f);
  }
  for (int e = 0; e < desc.numEdges(); ++e) {
    const int v = desc.edges[size_t(e)].z;
    const EdgeMaterial& m = desc.edgeMaterials[size_t(e)];
    const EdgeMaterial expected = v < kRollerOne   ? EdgeMaterial{1.0e2f, 10.0f}
                                  : v < kRollerTwo ? EdgeMaterial{1.0e2f, 0.0f}
                                                   : EdgeMaterial{1.0f, 0.01f};
    ASSERT_EQ(m.ke, expected.ke) << e;
    ASSERT_EQ(m.kd, expected.kd) << e;
  }
}

TEST(ClothRollers, StartsFreeOfSelfIntersections) {
  auto cpu = test::openCpu();
  const ModelDesc& desc = rollersDesc();
  IntersectionCounter counter(*cpu, desc.numParticles(), desc.triangles, desc.edges);
  const DeviceBuffer<Vec3> x(*cpu, desc.positions);
  EXPECT_EQ(counter.count(x.data()), 0);
}

/// Runs `frames` frames, expects every scene check, zero self-intersections and complete contact
/// lists, and returns the final positions.
std::vector<Vec3> expectRunPassesChecks(const Device& device, const SolverOptions& options,
                                        int frames) {
  return test::expectRunPassesChecks(device, rollers(), rollersDesc(), options, frames);
}

TEST(ClothRollers, TwoFramesOnCpuPassTheChecksAndTurnTheRollers) {
  // The lists start at the sizes the first frames need, so that no frame runs twice: growing
  // them changes no result (SelfContactSolver.GrowingListsMidRunChangesNothing), only the time.
  SolverOptions options = rollers().cloth.solver;
  options.selfContact.edgeEdgeCapacity = 128;
  constexpr int kFrames = 2;
  const std::vector<Vec3> x = expectRunPassesChecks(*test::openCpu(), options, kFrames);
  // Every driven particle (both rollers and the attached row) is where R_y(ω t) puts it, about
  // its roller's axis, at t = 2/60 s. x' = x cos φ + z sin φ, z' = −x sin φ + z cos φ.
  const ModelDesc& desc = rollersDesc();
  const double t = kFrames / 60.0;
  for (const DriverDesc& d : desc.drivers) {
    const double phi = d.driver.angularSpeed * t;
    const Vec3& c = d.driver.axisPoint;
    for (int p : d.particles) {
      const Vec3& start = desc.positions[size_t(p)];
      const double ox = start.x - c.x, oz = start.z - c.z;
      const double ex = c.x + ox * std::cos(phi) + oz * std::sin(phi);
      const double ez = c.z - ox * std::sin(phi) + oz * std::cos(phi);
      ASSERT_NEAR(x[size_t(p)].x, ex, 1e-4) << "particle " << p;
      ASSERT_NEAR(x[size_t(p)].y, start.y, 1e-5) << "particle " << p;
      ASSERT_NEAR(x[size_t(p)].z, ez, 1e-4) << "particle " << p;
    }
  }
  // The tops move toward +x: roller 1's topmost particle moved by +x.
  int top = kRollerOne;
  for (int p = kRollerOne; p < kRollerTwo; ++p)
    if (desc.positions[size_t(p)].z > desc.positions[size_t(top)].z) top = p;
  EXPECT_GT(x[size_t(top)].x, desc.positions[size_t(top)].x + 1.5f);  // 62.2 cm/s × 1/30 s
}

TEST(ClothRollers, DefaultFramesOnCudaPassTheChecks) {
  WEFT_REQUIRE_CUDA(gpu);
  expectRunPassesChecks(*gpu, rollers().cloth.solver, rollers().defaultFrames);
}

}  // namespace
}  // namespace weft
