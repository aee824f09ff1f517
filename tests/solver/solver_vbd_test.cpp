// SolverVBD on whole models: analytic cases (free fall, resting contact, Coulomb sliding),
// convergence to rest, energy, kinematic drivers, determinism, GPU == CPU and graph == direct.
#include "solver/solver_vbd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "math_test_support.h"
#include "scenes/scene.h"
#include "solver/cloth_builder.h"
#include "solver/energy.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

constexpr double kFps = 60.0;

/// A dimX × dimY grid in the z = height plane; material-free unless `elastic`.
ClothGridParams gridParams(int dimX, int dimY, float cell, float height, bool elastic) {
  ClothGridParams g;
  g.position = {0.0f, 0.0f, height};
  g.dimX = dimX;
  g.dimY = dimY;
  g.cellX = g.cellY = cell;
  g.mass = 0.01f;
  g.particleRadius = 0.01f;
  if (elastic) {
    g.triangleMaterial = {1.0e3f, 1.0e3f, 0.0f};
    g.edgeMaterial = {1.0f, 0.0f};
  } else {
    g.triangleMaterial = {0.0f, 0.0f, 0.0f};
    g.edgeMaterial = {0.0f, 0.0f};
  }
  return g;
}

ShapeDesc groundPlane(float mu = 1.0f) {
  ShapeDesc ground;
  ground.name = "ground";
  ground.geometry.type = ShapeType::Plane;
  ground.material.mu = mu;
  return ground;
}

/// Runs `frames` frames and returns the final positions.
std::vector<Vec3> simulate(const Device& device, const ModelDesc& desc, const SolverOptions& o,
                           int substeps, int frames, bool graphs = true) {
  Simulation sim(device, desc, o, 1.0 / kFps, substeps, graphs);
  for (int f = 0; f < frames; ++f) sim.advanceFrame();
  return sim.cloth().positions();
}

using test::bitIdentical;   // math_test_support.h
using test::maxDifference;  // math_test_support.h

// Implicit Euler free fall: v_{k+1} = v_k + g·dt, x_{k+1} = x_k + v_{k+1}·dt, so after n substeps
// x_n = x_0 + n·dt·v_0 + g·dt²·n(n+1)/2 — exactly what VBD must produce with no elastic forces.
// A stiff cloth at rest falls the same way (its elastic forces vanish under translation).
void expectImplicitEulerFreeFall(const Device& device, bool elastic) {
  ClothBuilder builder;
  ClothGridParams g =
      gridParams(3, 2, 0.1f, 0.0f, elastic);  // near 0: float32 resolves small steps
  g.velocity = {0.3f, -0.2f, 1.0f};
  builder.addClothGrid(g);
  const ModelDesc desc = builder.finalize();
  SolverOptions o;
  const int substeps = 10, frames = 30;
  const std::vector<Vec3> x = simulate(device, desc, o, substeps, frames);
  const double dt = 1.0 / kFps / substeps;
  const double n = double(substeps) * frames;
  for (int i = 0; i < desc.numParticles(); ++i) {
    for (int a = 0; a < 3; ++a) {
      const double expected =
          desc.positions[i][a] + n * dt * g.velocity[a] + o.gravity[a] * dt * dt * n * (n + 1) / 2;
      EXPECT_NEAR(x[i][a], expected, 2e-4) << "particle " << i << " axis " << a;
    }
    // And the continuous solution ½gt² to first order in dt.
    const double t = n * dt;
    EXPECT_NEAR(x[i].z, desc.positions[i].z + t * g.velocity.z + 0.5 * o.gravity.z * t * t,
                std::abs(o.gravity.z) * dt * t);
  }
}

TEST(SolverVbd, FreeFallMatchesImplicitEulerOnCpu) {
  auto cpu = test::openCpu();
  expectImplicitEulerFreeFall(*cpu, false);
  expectImplicitEulerFreeFall(*cpu, true);
}

TEST(SolverVbd, FreeFallMatchesImplicitEulerOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectImplicitEulerFreeFall(*gpu, false);
  expectImplicitEulerFreeFall(*gpu, true);
}

// A particle resting on a plane under the penalty law sits at depth φ = m·g/ke (ke mixed from the
// particle and shape sides), i.e. z = radius − m·g/ke.
TEST(SolverVbd, RestingParticlesSinkByWeightOverStiffness) {
  auto cpu = test::openCpu();
  ClothBuilder builder;
  builder.addClothGrid(gridParams(1, 1, 0.2f, 0.05f, false));
  builder.addShape(groundPlane());
  const ModelDesc desc = builder.finalize();
  SolverOptions o;
  o.particleContact = {1.0e3f, 10.0f, 0.5f};
  const std::vector<Vec3> x = simulate(*cpu, desc, o, 10, 120);
  const double ke = 0.5 * (o.particleContact.ke + desc.shapes[0].material.ke);
  const double expected = 0.01 - 0.01 * 9.81 / ke;
  for (const Vec3& p : x) EXPECT_NEAR(p.z, expected, 2e-3 * 0.01 * 9.81 / ke * 100) << p.z;
}

// A particle sliding on the ground with friction coefficient μ decelerates at μ·g (Coulomb), so it
// stops after v0/(μ·g) seconds having travelled v0²/(2μg).
TEST(SolverVbd, SlidingParticleStopsAtCoulombDistance) {
  auto cpu = test::openCpu();
  ClothBuilder builder;
  ClothGridParams g = gridParams(1, 1, 0.5f, 0.01f - 0.01f * 9.81f / 1.75e3f, false);
  const float v0 = 1.0f;
  g.velocity = {v0, 0.0f, 0.0f};
  builder.addClothGrid(g);
  builder.addShape(groundPlane(0.5f));
  const ModelDesc desc = builder.finalize();
  SolverOptions o;
  o.particleContact = {1.0e3f, 10.0f, 0.5f};  // μ = sqrt(0.5 · 0.5) = 0.5
  const std::vector<Vec3> x = simulate(*cpu, desc, o, 10, 60);
  const double mu = 0.5, expected = v0 * v0 / (2.0 * mu * 9.81);
  for (int i = 0; i < desc.numParticles(); ++i)
    EXPECT_NEAR(x[i].x - desc.positions[i].x, expected, 0.1 * expected) << "particle " << i;
}

// A cloth hanging vertically from its two top corners sags under gravity, oscillates, and the
// membrane damping brings it to rest: the largest speed falls from metres to millimetres per
// second.
TEST(SolverVbd, HangingClothComesToRest) {
  auto cpu = test::openCpu();
  ClothBuilder builder;
  ClothGridParams g = gridParams(10, 10, 0.05f, 1.0f, true);
  g.rotation = quatFromAxisAngle({1.0f, 0.0f, 0.0f}, 0.5f * 3.14159265f);  // grid y -> world z
  g.triangleMaterial.kd = 10.0f;
  const int first = builder.addClothGrid(g);
  builder.fixParticle(first + 10 * 11);  // top row: (0, 10) and (10, 10)
  builder.fixParticle(first + 10 * 11 + 10);
  const ModelDesc desc = builder.finalize();
  Simulation sim(*cpu, desc, SolverOptions{}, 1.0 / kFps, 10);
  auto fastest = [&] {
    float m = 0.0f;
    for (const Vec3& v : sim.cloth().velocities()) m = std::max(m, length(v));
    return m;
  };
  float peak = 0.0f;
  for (int f = 1; f <= 30; ++f) {
    sim.advanceFrame();
    peak = std::max(peak, fastest());
  }
  for (int f = 31; f <= 300; ++f) sim.advanceFrame();
  EXPECT_GT(peak, 0.1f) << "the cloth should first sag";
  EXPECT_LT(fastest(), 1e-3f) << "max speed after 5 s";
  // At rest the free bottom corners hang below the held top.
  const std::vector<Vec3> x = sim.cloth().positions();
  EXPECT_LT(x[first].z, 1.0f);
}

// Implicit Euler dissipates; without damping, contact or driving, VBD must not create energy.
TEST(SolverVbd, UndampedSwingCreatesNoEnergy) {
  auto cpu = test::openCpu();
  ClothBuilder builder;
  ClothGridParams g = gridParams(8, 8, 0.05f, 1.0f, true);
  const int first = builder.addClothGrid(g);
  builder.fixParticle(first);
  builder.fixParticle(first + 8);
  const ModelDesc desc = builder.finalize();
  SolverOptions o;
  Simulation sim(*cpu, desc, o, 1.0 / kFps, 10);
  const double initial = clothEnergy(desc, desc.positions, desc.velocities, o.gravity).total();
  double scale = 0.0;  // energy scale: the potential energy the swing can release
  for (int i = 0; i < desc.numParticles(); ++i) scale += desc.masses[i] * 9.81 * 0.4;
  for (int f = 1; f <= 120; ++f) {
    sim.advanceFrame();
    const double e =
        clothEnergy(desc, sim.cloth().positions(), sim.cloth().velocities(), o.gravity).total();
    ASSERT_LE(e, initial + 1e-3 * scale) << "frame " << f;
  }
}

// Driven particles follow their driver exactly: a rotation about an axis, stopping at stopTime.
TEST(SolverVbd, DrivenParticlesFollowTheirDriver) {
  auto cpu = test::openCpu();
  ClothBuilder builder;
  const int first = builder.addClothGrid(gridParams(4, 4, 0.1f, 1.0f, true));
  DriverDesc d;
  d.driver.axisPoint = {0.2f, 0.0f, 1.0f};
  d.driver.axisDirection = {0.0f, 1.0f, 0.0f};
  d.driver.angularSpeed = 1.0f;
  d.driver.stopTime = 0.25f;
  for (int x = 0; x <= 4; ++x) {
    builder.fixParticle(first + x);
    d.particles.push_back(first + x);
  }
  builder.addDriver(d);
  const ModelDesc desc = builder.finalize();
  Simulation sim(*cpu, desc, SolverOptions{}, 1.0 / kFps, 10);
  for (int f = 0; f < 30; ++f) sim.advanceFrame();  // 0.5 s, past stopTime
  const std::vector<Vec3> x = sim.cloth().positions();
  for (int p : d.particles) {
    const Vec3 expected = drivenPosition(d.driver, desc.positions[p], 0.5f);
    EXPECT_LT(length(x[p] - expected), 1e-5f) << "particle " << p;
  }
  EXPECT_EQ(sim.cloth().substepCounter(), 300);
}

// The same run twice gives the same bits, on the CPU (OpenMP) backend.
TEST(SolverVbd, CpuRunIsDeterministic) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.cloth.build({});
  const auto a = simulate(*cpu, desc, scene.cloth.solver, scene.substeps, 3);
  const auto b = simulate(*cpu, desc, scene.cloth.solver, scene.substeps, 3);
  EXPECT_TRUE(bitIdentical(a, b));
}

TEST(SolverVbd, TileAndPerThreadSolvesAgree) {
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.cloth.build({});
  SolverOptions tile = scene.cloth.solver, thread = scene.cloth.solver;
  tile.tileSolve = true;
  thread.tileSolve = false;
  const auto a = simulate(*cpu, desc, tile, scene.substeps, 5);
  const auto b = simulate(*cpu, desc, thread, scene.substeps, 5);
  EXPECT_LT(maxDifference(a, b), 1e-4f);
}

TEST(SolverVbd, CudaMatchesCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.cloth.build({});
  for (bool tile : {true, false}) {
    SolverOptions o = scene.cloth.solver;
    o.tileSolve = tile;
    const auto a = simulate(*cpu, desc, o, scene.substeps, 10);
    const auto b = simulate(*gpu, desc, o, scene.substeps, 10);
    // Float rounding differs (FMA contraction on the GPU); after 100 substeps the states agree to
    // well under a millimetre on a 1.6 m cloth moving at metres per second.
    EXPECT_LT(maxDifference(a, b), 1e-4f) << (tile ? "tile" : "per-thread");
  }
}

TEST(SolverVbd, CudaGraphReplayEqualsDirectLaunches) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.cloth.build({});
  const auto graph = simulate(*gpu, desc, scene.cloth.solver, scene.substeps, 5, true);
  const auto direct = simulate(*gpu, desc, scene.cloth.solver, scene.substeps, 5, false);
  EXPECT_TRUE(bitIdentical(graph, direct));
}

// Every launch size the tuner may pick gives the same bits: elementwise kernels are per-element
// pure functions, and the tile solve sums in a tree that does not depend on the tile size.
TEST(SolverVbd, CudaResultIsIdenticalForEveryLaunchSize) {
  WEFT_REQUIRE_CUDA(gpu);
  const Scene& scene = findScene("cloth_hanging");
  const ModelDesc desc = scene.cloth.build({});
  gpu->setLaunchPolicy(LaunchPolicy{});
  const auto reference = simulate(*gpu, desc, scene.cloth.solver, scene.substeps, 3);
  const auto again = simulate(*gpu, desc, scene.cloth.solver, scene.substeps, 3);
  EXPECT_TRUE(bitIdentical(reference, again)) << "run to run";
  for (KernelId id : allKernels()) {
    for (int size : launchSizes(id)) {
      LaunchPolicy policy;
      policy.setOverride(id, size);
      gpu->setLaunchPolicy(policy);
      EXPECT_TRUE(
          bitIdentical(reference, simulate(*gpu, desc, scene.cloth.solver, scene.substeps, 3)))
          << kernelName(id) << " at " << size;
    }
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

}  // namespace
}  // namespace weft
