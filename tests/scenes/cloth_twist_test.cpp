// cloth_twist (scenes_spec §2): the procedural sheet has the reference's counts, layout (vertex
// i·50 + j, j along +y, in the YZ plane), lumped masses and settings, with a valid coloring; the
// two held columns turn in opposite senses exactly as the reference turns them (θ = ω·(k−1)·dt
// at substep k, stopping at 10 s); a few frames on the CPU and the whole default run on CUDA
// pass the scene's checks with no self-intersection and no candidate list left overflowing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "collision/intersection_check.h"
#include "scene_test_support.h"
#include "scenes/scene.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using test::expectNear;  // scene_test_support.h

constexpr int kSide = 50;
constexpr double kSpacing = 0.5 / 49.0;  // [m]
constexpr double kSubstepSeconds = 1.0 / 600.0;
constexpr double kOmega = std::numbers::pi / 3.0;  // [rad/s]

/// Where the reference puts held vertex (i, j) during substep k (from 1): its kernel turns by
/// θ = ω·t with the time t = (k−1)·dt, and stops once t > 10 s. Column 49 (y = +0.25) turns
/// about +y to (z₀ sin θ, y₀, z₀ cos θ), column 0 about −y to (−z₀ sin θ, y₀, z₀ cos θ).
Vec3 referenceHeldPosition(int i, int j, long long k) {
  const double t = std::min(double(k - 1) * kSubstepSeconds, 10.0);
  const double theta = kOmega * t;
  const double y0 = -0.25 + j * kSpacing, z0 = -0.25 + i * kSpacing;
  const double sign = j == kSide - 1 ? 1.0 : -1.0;
  return {float(sign * z0 * std::sin(theta)), float(y0), float(z0 * std::cos(theta))};
}

TEST(ClothTwist, NamesAndAliasesResolve) {
  EXPECT_EQ(findScene("twist").name, "cloth_twist");
  EXPECT_EQ(findScene("cloth_twist").name, "cloth_twist");
}

TEST(ClothTwist, BuildsTheReferenceCountsWithAValidColoring) {
  const ModelDesc desc = findScene("cloth_twist").build({});
  EXPECT_EQ(desc.numParticles(), 2500);
  EXPECT_EQ(desc.numTriangles(), 4802);
  EXPECT_EQ(desc.numEdges(), 7301);
  EXPECT_TRUE(desc.shapes.empty());
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, false), "");
  std::printf("[ info     ] cloth_twist: %d colors (coloring without bending)\n",
              desc.coloring.numColors());
  for (const TriangleMaterial& m : desc.triangleMaterials) {
    ASSERT_EQ(m.ke, 1.0e3f);
    ASSERT_EQ(m.ka, 1.0e3f);
    ASSERT_EQ(m.kd, 2.0e-4f);
  }
  for (const EdgeMaterial& m : desc.edgeMaterials) {
    ASSERT_EQ(m.ke, 1.0e-3f);
    ASSERT_EQ(m.kd, 1.0e-2f);
  }
}

TEST(ClothTwist, HoldsTheReferenceSolverSettings) {
  const Scene& scene = findScene("cloth_twist");
  EXPECT_EQ(scene.fps, 60.0);
  EXPECT_EQ(scene.substeps, 10);
  EXPECT_EQ(scene.defaultFrames, 100);
  EXPECT_TRUE(scene.checksSelfIntersections);
  const SolverOptions& o = scene.solver;
  EXPECT_EQ(o.iterations, 4);
  EXPECT_EQ(length(o.gravity), 0.0f);
  EXPECT_EQ(o.particleContact.ke, 1.0e3f);
  EXPECT_EQ(o.particleContact.kd, 1.0e-1f);
  EXPECT_EQ(o.particleContact.mu, 0.2f);
  EXPECT_EQ(o.frictionEpsilon, 1.0e-2f);
  EXPECT_TRUE(o.selfContact.enabled);
  EXPECT_EQ(o.selfContact.radius, 0.002f);
  EXPECT_EQ(o.selfContact.margin, 0.0035f);
  EXPECT_EQ(o.selfContact.detectionInterval, 0);
  EXPECT_EQ(o.selfContact.topologicalFilter, 2);
  EXPECT_EQ(o.selfContact.restExclusion, 0.0f);
  EXPECT_EQ(o.selfContact.relaxation, 0.85f);
  EXPECT_EQ(o.selfContact.bvhRebuildInterval, 10);
}

TEST(ClothTwist, SheetSpansHalfAMetreInTheYzPlaneWithColumnsAlongY) {
  const ModelDesc desc = findScene("cloth_twist").build({});
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j) {
      const Vec3& x = desc.positions[size_t(i * kSide + j)];
      ASSERT_NEAR(x.x, 0.0, 1e-6) << i << ", " << j;
      ASSERT_NEAR(x.y, -0.25 + j * kSpacing, 1e-6) << i << ", " << j;
      ASSERT_NEAR(x.z, -0.25 + i * kSpacing, 1e-6) << i << ", " << j;
      ASSERT_EQ(length(desc.velocities[size_t(i * kSide + j)]), 0.0f);
    }
}

TEST(ClothTwist, MassesAreLumpedFromTheDensityAndTheSideColumnsAreHeld) {
  const ModelDesc desc = findScene("cloth_twist").build({});
  const double interior = 0.2 * kSpacing * kSpacing;  // density × the area around a vertex
  double freeMass = 0.0;
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j) {
      const float m = desc.masses[size_t(i * kSide + j)];
      if (j == 0 || j == kSide - 1) {
        ASSERT_EQ(m, 0.0f) << i << ", " << j;
        continue;
      }
      freeMass += m;
      const bool boundaryRow = i == 0 || i == kSide - 1;
      ASSERT_NEAR(m, boundaryRow ? 0.5 * interior : interior, 1e-3 * interior) << i << ", " << j;
    }
  // 0.2 kg/m² × 0.25 m² = 0.05 kg, less the half-cell strip lumped onto each held column.
  EXPECT_NEAR(freeMass, 0.05 * 48.0 / 49.0, 1e-6);
}

TEST(ClothTwist, HeldColumnsTurnInOppositeSensesAsTheReferenceTurnsThem) {
  const ModelDesc desc = findScene("cloth_twist").build({});
  ASSERT_EQ(desc.drivers.size(), 2u);
  int checked = 0;
  for (const DriverDesc& d : desc.drivers) {
    ASSERT_EQ(d.particles.size(), size_t(kSide));
    EXPECT_EQ(d.driver.angularSpeed, float(kOmega));
    expectNear(d.driver.axisPoint, 0.0, 0.0, 0.0, 0.0);
    for (int p : d.particles) {
      const int i = p / kSide, j = p % kSide;
      ASSERT_TRUE(j == 0 || j == kSide - 1) << "particle " << p;
      expectNear(d.driver.axisDirection, 0.0, j == 0 ? -1.0 : 1.0, 0.0, 0.0);
      // Substep k's positions are evaluated at its end time k·dt; 6001 reaches t = 10 s, after
      // which the columns hold still.
      for (long long k : {1LL, 2LL, 10LL, 1000LL, 6001LL, 9000LL}) {
        const Vec3 actual =
            drivenPosition(d.driver, desc.positions[size_t(p)], float(double(k) * kSubstepSeconds));
        const Vec3 expected = referenceHeldPosition(i, j, k);
        ASSERT_NEAR(actual.x, expected.x, 2e-6) << "particle " << p << ", substep " << k;
        ASSERT_NEAR(actual.y, expected.y, 2e-6) << "particle " << p << ", substep " << k;
        ASSERT_NEAR(actual.z, expected.z, 2e-6) << "particle " << p << ", substep " << k;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * kSide);
}

/// Runs `frames` frames; expects the scene's checks to pass, the mesh not to intersect itself,
/// every candidate list to fit, and the held columns to be where the reference puts them.
void runAndCheck(const Device& device, int frames) {
  const Scene& scene = findScene("cloth_twist");
  const ModelDesc desc = scene.build({});
  Simulation sim(device, desc, scene.solver, 1.0 / scene.fps, scene.substeps);
  test::advanceFramesTimed(sim, device, scene.name, frames);
  const std::vector<Vec3> x =
      test::expectChecksWithoutSelfIntersection(device, scene, desc, sim, frames);

  const long long k = sim.substepCounter();
  EXPECT_EQ(k, (long long)frames * scene.substeps);
  for (int i = 0; i < kSide; ++i)
    for (int j : {0, kSide - 1}) {
      const Vec3 expected = referenceHeldPosition(i, j, k);
      const Vec3& actual = x[size_t(i * kSide + j)];
      ASSERT_LT(length(actual - expected), 2e-6f) << "vertex (" << i << ", " << j << ")";
    }
}

TEST(ClothTwist, FourFramesOnTheCpuPassTheChecksWithoutSelfIntersection) {
  runAndCheck(*test::openCpu(), 4);
}

TEST(ClothTwist, DefaultLengthOnCudaPassesTheChecksWithoutSelfIntersection) {
  WEFT_REQUIRE_CUDA(gpu);
  runAndCheck(*gpu, findScene("cloth_twist").defaultFrames);
}

}  // namespace
}  // namespace weft
