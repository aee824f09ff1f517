// cloth_twist (scenes_spec §2): the scene runs the reference's own mesh (assets/square_cloth.obj,
// compiled in, equal to the file), placed as the reference places it, with its counts, lumped
// masses and settings and a valid coloring; the two held columns turn in opposite senses exactly
// as the reference turns them (θ = ω·(k−1)·dt at substep k, stopping at 10 s); a few frames on
// the CPU and the whole default run on CUDA pass the scene's checks with no self-intersection in
// any frame and no candidate list left overflowing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <numbers>

#include "collision/intersection_check.h"
#include "kernels/runtime/errors.h"
#include "scene_test_support.h"
#include "scenes/obj_loader.h"
#include "scenes/scene.h"
#include "scenes/shipped_assets.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using test::expectNear;  // scene_test_support.h

constexpr int kSide = 50;
constexpr double kColumnSpacing = 1.5 / 49.0;  // [m] along a row (world y)
constexpr double kRowSpacing = 1.0 / 49.0;     // [m] across the rows (world z)
constexpr double kSubstepSeconds = 1.0 / 600.0;
constexpr double kOmega = std::numbers::pi / 3.0;  // [rad/s]

std::string assetPath() {
  return std::string(WEFT_SOURCE_DIR) + "/assets/square_cloth.obj";
}

/// Where the reference puts held vertex (row i, column j), initially at `initial`, during
/// substep k (from 1): its kernel turns by θ = ω·t with the time t = (k−1)·dt, and stops once
/// t > 10 s. Column 49 (y = +0.75) turns about +y to (z₀ sin θ, y₀, z₀ cos θ), column 0 about −y
/// to (−z₀ sin θ, y₀, z₀ cos θ).
Vec3 referenceHeldPosition(const Vec3& initial, int j, long long k) {
  const double t = std::min(double(k - 1) * kSubstepSeconds, 10.0);
  const double theta = kOmega * t;
  const double y0 = initial.y, z0 = initial.z;
  const double sign = j == kSide - 1 ? 1.0 : -1.0;
  return {float(sign * z0 * std::sin(theta)), float(y0), float(z0 * std::cos(theta))};
}

TEST(ClothTwist, TheCompiledInMeshIsTheShippedFile) {
  std::ifstream file(assetPath(), std::ios::binary);
  ASSERT_TRUE(file) << assetPath();
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const auto shipped = shippedAsset("square_cloth.obj");
  ASSERT_TRUE(shipped.has_value());
  EXPECT_TRUE(*shipped == text) << "rebuild: CMake regenerates the compiled-in copy";
  EXPECT_FALSE(shippedAsset("no_such_mesh.obj").has_value());
  EXPECT_THROW(loadShippedObjMesh("no_such_mesh.obj"), Error);
}

TEST(ClothTwist, NamesAndAliasesResolve) {
  EXPECT_EQ(findScene("twist").name, "cloth_twist");
  EXPECT_EQ(findScene("cloth_twist").name, "cloth_twist");
}

TEST(ClothTwist, BuildsTheReferenceCountsWithAValidColoring) {
  const ModelDesc desc = findScene("cloth_twist").cloth.build({});
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
  EXPECT_TRUE(scene.cloth.checksSelfIntersections);
  const SolverOptions& o = scene.cloth.solver;
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
  EXPECT_EQ(o.selfContact.reuseSlack, 0.0035f);  // Weft's own: lists kept within 3.5 mm
}

// The reference's placement of its mesh: world = R_z(π/2)·(0.01·local), i.e. (0, x/100, z/100).
TEST(ClothTwist, SheetIsTheReferenceMeshPlacedInTheYzPlaneWithColumnsAlongY) {
  const ModelDesc desc = findScene("cloth_twist").cloth.build({});
  const MeshData file = loadObjMesh(assetPath());
  ASSERT_EQ(desc.numParticles(), int(file.vertices.size()));
  ASSERT_EQ(desc.triangles.size(), file.triangles.size());
  for (size_t t = 0; t < file.triangles.size(); ++t) {
    const Int3 a = desc.triangles[t], b = file.triangles[t];
    ASSERT_TRUE(a.x == b.x && a.y == b.y && a.z == b.z) << "triangle " << t;
  }
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j) {
      const size_t v = size_t(i * kSide + j);
      const Vec3& x = desc.positions[v];
      ASSERT_NEAR(x.x, 0.0, 1e-6) << i << ", " << j;
      ASSERT_NEAR(x.y, 0.01 * file.vertices[v].x, 1e-6) << i << ", " << j;
      ASSERT_NEAR(x.z, 0.01 * file.vertices[v].z, 1e-6) << i << ", " << j;
      // The file's grid: 1.5 m along a row, 1.0 m across the rows.
      ASSERT_NEAR(x.y, -0.75 + j * kColumnSpacing, 1e-6) << i << ", " << j;
      ASSERT_NEAR(x.z, -0.5 + i * kRowSpacing, 1e-6) << i << ", " << j;
      ASSERT_EQ(length(desc.velocities[v]), 0.0f);
    }
}

// Area lumping as the reference's add_cloth_mesh: each triangle gives a third of its mass to each
// corner (the mesh's diagonals alternate, so interior vertices touch 4 or 8 triangles and get
// 2/3 or 4/3 of a cell's mass).
TEST(ClothTwist, MassesAreLumpedFromTheDensityAndTheSideColumnsAreHeld) {
  const ModelDesc desc = findScene("cloth_twist").cloth.build({});
  std::vector<double> expected(desc.positions.size(), 0.0);
  double total = 0.0;
  for (const Int3& t : desc.triangles) {
    const Vec3 a = desc.positions[t.x], b = desc.positions[t.y], c = desc.positions[t.z];
    const double mass = 0.2 * 0.5 * double(length(cross(b - a, c - a)));
    total += mass;
    for (int v : {t.x, t.y, t.z}) expected[size_t(v)] += mass / 3.0;
  }
  EXPECT_NEAR(total, 0.2 * 1.5 * 1.0, 1e-6);  // 0.2 kg/m² × 1.5 m²
  double freeMass = 0.0;
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j) {
      const size_t v = size_t(i * kSide + j);
      if (j == 0 || j == kSide - 1) {
        ASSERT_EQ(desc.masses[v], 0.0f) << i << ", " << j;
        continue;
      }
      ASSERT_NEAR(desc.masses[v], expected[v], 1e-3 * expected[v]) << i << ", " << j;
      freeMass += desc.masses[v];
    }
  // The held columns' strips (half a column of cells each, on average) carry the rest.
  EXPECT_NEAR(freeMass, 0.3 * 48.0 / 49.0, 0.3 * 0.25 / 49.0);
}

TEST(ClothTwist, HeldColumnsTurnInOppositeSensesAsTheReferenceTurnsThem) {
  const ModelDesc desc = findScene("cloth_twist").cloth.build({});
  ASSERT_EQ(desc.drivers.size(), 2u);
  int checked = 0;
  for (const DriverDesc& d : desc.drivers) {
    ASSERT_EQ(d.particles.size(), size_t(kSide));
    EXPECT_EQ(d.driver.angularSpeed, float(kOmega));
    expectNear(d.driver.axisPoint, 0.0, 0.0, 0.0, 0.0);
    for (int p : d.particles) {
      const int j = p % kSide;
      ASSERT_TRUE(j == 0 || j == kSide - 1) << "particle " << p;
      expectNear(d.driver.axisDirection, 0.0, j == 0 ? -1.0 : 1.0, 0.0, 0.0);
      // Substep k's positions are evaluated at its end time k·dt; 6001 reaches t = 10 s, after
      // which the columns hold still.
      for (long long k : {1LL, 2LL, 10LL, 1000LL, 6001LL, 9000LL}) {
        const Vec3 actual =
            drivenPosition(d.driver, desc.positions[size_t(p)], float(double(k) * kSubstepSeconds));
        const Vec3 expected = referenceHeldPosition(desc.positions[size_t(p)], j, k);
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
  const ModelDesc desc = scene.cloth.build({});
  Simulation sim(device, desc, scene.cloth.solver, 1.0 / scene.fps, scene.substeps);
  test::advanceFramesWithoutSelfIntersection(sim, device, desc, scene.name, frames);
  const std::vector<Vec3> x =
      test::expectChecksWithoutSelfIntersection(device, scene, desc, sim, frames);

  const long long k = sim.cloth().substepCounter();
  EXPECT_EQ(k, (long long)frames * scene.substeps);
  for (int i = 0; i < kSide; ++i)
    for (int j : {0, kSide - 1}) {
      const Vec3 expected = referenceHeldPosition(desc.positions[size_t(i * kSide + j)], j, k);
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
