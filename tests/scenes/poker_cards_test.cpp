// poker_cards (scenes_spec §1): the scene builds the reference's counts with a valid coloring and
// holds the reference's settings; cards 0 and 51 start at their seeded corners; the sphere is at
// x = −0.35 + 0.5·k·dt after substep k, as the reference places it; a few frames on the CPU and
// the whole default run on CUDA pass the scene's checks with no self-intersection and no
// candidate list left overflowing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "collision/intersection_check.h"
#include "scene_test_support.h"
#include "scenes/scene.h"
#include "solver/coloring.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

using test::expectNear;  // scene_test_support.h

constexpr int kNumCards = 52;
constexpr int kParticlesPerCard = 35;  // 5 × 7
constexpr double kSubstepSeconds = 1.0 / 1200.0;

/// The sphere's centre after substep k in the reference: its x advances by 0.5·dt before each
/// substep, from −0.35.
double referenceSphereX(long long k) {
  return -0.35 + 0.5 * double(k) * kSubstepSeconds;
}

TEST(PokerCards, NamesAndAliasesResolve) {
  EXPECT_EQ(findScene("poker").name, "poker_cards");
  EXPECT_EQ(findScene("cloth_poker_cards").name, "poker_cards");
}

TEST(PokerCards, BuildsTheReferenceCountsWithAValidColoring) {
  const ModelDesc desc = findScene("poker_cards").cloth.build({});
  EXPECT_EQ(desc.numParticles(), 1820);
  EXPECT_EQ(desc.numTriangles(), 2496);
  EXPECT_EQ(desc.numEdges(), 4264);
  EXPECT_EQ(desc.shapes.size(), 3u);
  EXPECT_TRUE(desc.drivers.empty());
  EXPECT_EQ(findColoringConflict(desc.coloring, desc.triangles, desc.edges, true), "");
  std::printf("[ info     ] poker_cards: %d colors (coloring with bending)\n",
              desc.coloring.numColors());
  // Every particle is free and carries 1/35 of a 1.8 g card.
  for (int i = 0; i < desc.numParticles(); ++i) {
    ASSERT_NEAR(desc.masses[size_t(i)], 1.8e-3 / 35.0, 1e-10) << "particle " << i;
    ASSERT_EQ(desc.radii[size_t(i)], 0.003f) << "particle " << i;
  }
  for (const TriangleMaterial& m : desc.triangleMaterials) {
    ASSERT_EQ(m.ke, 1.0e4f);
    ASSERT_EQ(m.ka, 1.0e4f);
    ASSERT_EQ(m.kd, 1.0f);
  }
  for (const EdgeMaterial& m : desc.edgeMaterials) {
    ASSERT_EQ(m.ke, 1.0e2f);
    ASSERT_EQ(m.kd, 1.0f);
  }
}

TEST(PokerCards, HoldsTheReferenceSolverSettings) {
  const Scene& scene = findScene("poker_cards");
  EXPECT_EQ(scene.fps, 60.0);
  EXPECT_EQ(scene.substeps, 20);
  EXPECT_EQ(scene.defaultFrames, 30);
  EXPECT_TRUE(scene.cloth.checksSelfIntersections);
  const SolverOptions& o = scene.cloth.solver;
  EXPECT_EQ(o.iterations, 10);
  EXPECT_EQ(o.gravity.z, -9.8f);
  EXPECT_EQ(o.gravity.x, 0.0f);
  EXPECT_EQ(o.gravity.y, 0.0f);
  EXPECT_EQ(o.particleContact.ke, 1.0e5f);
  EXPECT_EQ(o.particleContact.kd, 1.0e2f);
  EXPECT_EQ(o.particleContact.mu, 0.3f);
  EXPECT_EQ(o.shapeContactMargin, 0.005f);
  EXPECT_EQ(o.frictionEpsilon, 1.0e-2f);
  EXPECT_TRUE(o.selfContact.enabled);
  EXPECT_EQ(o.selfContact.radius, 0.001f);
  EXPECT_EQ(o.selfContact.margin, 0.0015f);
  EXPECT_EQ(o.selfContact.detectionInterval, 0);
  EXPECT_EQ(o.selfContact.topologicalFilter, 2);
  EXPECT_EQ(o.selfContact.restExclusion, 0.0f);
  EXPECT_EQ(o.selfContact.relaxation, 0.85f);
  EXPECT_EQ(o.selfContact.bvhRebuildInterval, 0);
}

TEST(PokerCards, ShapesHaveTheReferenceGeometryMaterialsAndPlacement) {
  const ModelDesc desc = findScene("poker_cards").cloth.build({});
  ASSERT_EQ(desc.shapes.size(), 3u);
  const ShapeDesc &cube = desc.shapes[0], &sphere = desc.shapes[1], &ground = desc.shapes[2];

  EXPECT_EQ(cube.geometry.type, ShapeType::Box);
  expectNear(cube.geometry.halfExtents, 0.1, 0.1, 0.1, 1e-7);
  EXPECT_EQ(cube.motion.type, MotionType::Static);
  expectNear(cube.motion.pose0.p, 0.0, 0.0, 0.1, 1e-7);
  EXPECT_EQ(cube.material.ke, 5.0e6f);
  EXPECT_EQ(cube.material.kd, 1.0e4f);
  EXPECT_EQ(cube.material.mu, 0.1f);

  EXPECT_EQ(sphere.geometry.type, ShapeType::Sphere);
  EXPECT_EQ(sphere.geometry.radius, 0.02f);
  EXPECT_EQ(sphere.material.ke, 1.0e5f);
  EXPECT_EQ(sphere.material.kd, 1.0e1f);
  EXPECT_EQ(sphere.material.mu, 0.3f);

  EXPECT_EQ(ground.geometry.type, ShapeType::Plane);
  expectNear(ground.motion.pose0.p, 0.0, 0.0, 0.0, 0.0);
  EXPECT_EQ(ground.material.ke, 1.0e5f);
  EXPECT_EQ(ground.material.kd, 1.0e2f);
  EXPECT_EQ(ground.material.mu, 0.3f);

  for (const ShapeDesc& s : desc.shapes) EXPECT_EQ(s.margin, 0.0f) << s.name;
}

TEST(PokerCards, CardsStartAtTheirSeededCornersOneMillimetreApart) {
  const ModelDesc desc = findScene("poker_cards").cloth.build({});
  // (ox, oy, a) of cards 0 and 51: NumPy default_rng(42) draws, scenes_spec §1.
  struct Draw {
    int card;
    double ox, oy, angle;
  };
  for (const Draw& d : {Draw{0, 0.002739560, -0.000611216, 0.071719584},
                        Draw{51, 0.000540361, -0.003914243, 0.034448019}}) {
    SCOPED_TRACE("card " + std::to_string(d.card));
    const int first = d.card * kParticlesPerCard;
    const double x0 = -0.03175 + d.ox, y0 = -0.04445 + d.oy, z0 = 0.25 + 0.001 * d.card;
    expectNear(desc.positions[size_t(first)], x0, y0, z0, 1e-6);
    // The opposite corner, vertex (4, 6): R_z(a)·(0.0635, 0.0889, 0) about the first corner.
    const double c = std::cos(d.angle), s = std::sin(d.angle);
    expectNear(desc.positions[size_t(first + kParticlesPerCard - 1)], x0 + c * 0.0635 - s * 0.0889,
               y0 + s * 0.0635 + c * 0.0889, z0, 1e-6);
  }
  // Every card is flat, 1 mm above the previous one, all at rest.
  for (int card = 0; card < kNumCards; ++card)
    for (int v = 0; v < kParticlesPerCard; ++v) {
      const size_t i = size_t(card * kParticlesPerCard + v);
      ASSERT_NEAR(desc.positions[i].z, 0.25 + 0.001 * card, 1e-6) << "card " << card;
      ASSERT_EQ(length(desc.velocities[i]), 0.0f);
    }
}

TEST(PokerCards, SphereMotionPlacesItWhereTheReferenceDoesAtEachSubstep) {
  const ModelDesc desc = findScene("poker_cards").cloth.build({});
  const ShapeMotion& motion = desc.shapes[1].motion;
  // The solver evaluates poses at the end time k·dt of substep k (counting from 1).
  for (long long k : {0LL, 1LL, 2LL, 20LL, 600LL, 1200LL}) {
    SCOPED_TRACE("substep " + std::to_string(k));
    const Transform pose = poseAt(motion, float(double(k) * kSubstepSeconds), nullptr);
    expectNear(pose.p, referenceSphereX(k), 0.0, 0.22, 1e-6);
    EXPECT_NEAR(std::abs(pose.q.w), 1.0, 1e-7);
  }
}

/// Runs `frames` frames; expects the scene's checks to pass, the mesh not to intersect itself,
/// every candidate list to fit, and the sphere to be where the reference puts it.
void runAndCheck(const Device& device, int frames) {
  const Scene& scene = findScene("poker_cards");
  const ModelDesc desc = scene.cloth.build({});
  Simulation sim(device, desc, scene.cloth.solver, 1.0 / scene.fps, scene.substeps);
  test::advanceFramesWithoutSelfIntersection(sim, device, desc, scene.name, frames);
  test::expectChecksWithoutSelfIntersection(device, scene, desc, sim, frames);

  // The last substep's end pose (slot 1) and start pose (slot numShapes + 1) of the sphere.
  const long long k = sim.cloth().substepCounter();
  EXPECT_EQ(k, (long long)frames * scene.substeps);
  const std::vector<Transform> poses = sim.cloth().scratch().shapePoses.download();
  expectNear(poses[1].p, referenceSphereX(k), 0.0, 0.22, 1e-6);
  expectNear(poses[desc.shapes.size() + 1].p, referenceSphereX(k - 1), 0.0, 0.22, 1e-6);
}

// The reference's CPU test length; the cards are still falling (0.33 m/s, below the 0.5 m/s
// settling limit) and 1 mm apart.
TEST(PokerCards, TwoFramesOnTheCpuPassTheChecksWithoutSelfIntersection) {
  runAndCheck(*test::openCpu(), 2);
}

TEST(PokerCards, DefaultLengthOnCudaPassesTheChecksWithoutSelfIntersection) {
  WEFT_REQUIRE_CUDA(gpu);
  runAndCheck(*gpu, findScene("poker_cards").defaultFrames);
}

}  // namespace
}  // namespace weft
