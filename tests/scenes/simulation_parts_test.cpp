// One Simulation over both solver parts (solver/simulation.h): a cloth and a rigid model in one
// simulation share its frames, graphs and regrowth, and each comes out bit for bit as it does
// alone. Both parts start with storage too small, so both grow, and each growth runs the whole
// frame again: the other part's state must come back from the frame's start as well. The cloth's
// trees are rebuilt every third frame, so the frames alternate between kinds (graphs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "solver/simulation.h"
#include "test_support.h"

namespace weft {
namespace {

constexpr double kFrameSeconds = 1.0 / 60.0;
constexpr int kSubsteps = 10;

struct Parts {
  ModelDesc cloth;
  SolverOptions clothSolver;
  RigidDesc rigid;
  RigidSolverOptions rigidSolver;
};

/// cloth_fold and a one-layer cable_pile with one slot per list: on the CPU the pile's rows first
/// overflow at frame 15, the fold's lists at frame 24.
Parts smallParts() {
  Parts p;
  const Scene& fold = findScene("cloth_fold");
  p.cloth = fold.cloth.build({});
  p.clothSolver = fold.cloth.solver;
  p.clothSolver.selfContact.vertexTriangleCapacity = 1;
  p.clothSolver.selfContact.edgeEdgeCapacity = 1;
  p.clothSolver.selfContact.triangleVertexCapacity = 1;
  p.clothSolver.selfContact.bvhRebuildInterval = 3;
  const Scene& pile = findScene("cable_pile");
  SceneOptions layers;
  layers.values["layers"] = "1";
  p.rigid = pile.rigid.build(layers);
  p.rigidSolver = pile.rigid.solver;
  p.rigidSolver.contactCapacity = 1;
  p.rigidSolver.pairCapacity = 1;
  return p;
}

template <class T>
bool sameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& line : lines)
    if (line.find(what) != std::string::npos) return true;
  return false;
}

void expectPartsRunAsAlone(const Device& device, int frames) {
  const Parts p = smallParts();
  Simulation both(device, &p.cloth, p.clothSolver, &p.rigid, p.rigidSolver, kFrameSeconds,
                  kSubsteps);
  Simulation cloth(device, p.cloth, p.clothSolver, kFrameSeconds, kSubsteps);
  Simulation rigid(device, p.rigid, p.rigidSolver, kFrameSeconds, kSubsteps);
  ASSERT_TRUE(both.hasCloth() && both.hasRigid());
  EXPECT_FALSE(cloth.hasRigid());
  EXPECT_FALSE(rigid.hasCloth());
  for (int f = 0; f < frames; ++f) {
    both.advanceFrame();
    cloth.advanceFrame();
    rigid.advanceFrame();
  }
  EXPECT_TRUE(sameBits(both.cloth().positions(), cloth.cloth().positions()));
  EXPECT_TRUE(sameBits(both.cloth().velocities(), cloth.cloth().velocities()));
  EXPECT_TRUE(sameBits(both.rigid().poses(), rigid.rigid().poses()));
  EXPECT_TRUE(sameBits(both.rigid().linearVelocities(), rigid.rigid().linearVelocities()));
  EXPECT_TRUE(sameBits(both.rigid().angularVelocities(), rigid.rigid().angularVelocities()));
  EXPECT_EQ(both.cloth().substepCounter(), frames * kSubsteps);
  EXPECT_EQ(both.rigid().substepCounter(), frames * kSubsteps);
  // Both parts grew, and every growth of either ran the frame of both again.
  EXPECT_TRUE(mentions(both.regrowths(), "vertex-triangle") ||
              mentions(both.regrowths(), "edge-edge"));
  EXPECT_TRUE(mentions(both.regrowths(), "contact rows") ||
              mentions(both.regrowths(), "shape pairs"));
  EXPECT_GE(both.regrowths().size(), std::max(cloth.regrowths().size(), rigid.regrowths().size()));
  EXPECT_EQ(both.cloth().contactReport().vertexTriangleCapacity,
            cloth.cloth().contactReport().vertexTriangleCapacity);
  EXPECT_EQ(both.rigid().contactReport().rowCapacity, rigid.rigid().contactReport().rowCapacity);
}

TEST(SimulationParts, ClothAndRigidTogetherComeOutAsEachAloneOnCpu) {
  auto cpu = test::openCpu();
  expectPartsRunAsAlone(*cpu, 25);
}

TEST(SimulationParts, ClothAndRigidTogetherComeOutAsEachAloneOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectPartsRunAsAlone(*gpu, 60);
}

TEST(SimulationParts, AbsentPartsAreRefused) {
  auto cpu = test::openCpu();
  EXPECT_THROW(Simulation(*cpu, nullptr, SolverOptions{}, nullptr, RigidSolverOptions{},
                          kFrameSeconds, kSubsteps),
               Error);
  const Parts p = smallParts();
  Simulation cloth(*cpu, p.cloth, p.clothSolver, kFrameSeconds, kSubsteps);
  EXPECT_THROW(cloth.rigid(), Error);
  Simulation rigid(*cpu, p.rigid, p.rigidSolver, kFrameSeconds, kSubsteps);
  EXPECT_THROW(rigid.cloth(), Error);
}

}  // namespace
}  // namespace weft
