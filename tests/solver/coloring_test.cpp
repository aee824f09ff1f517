// Graph coloring (solver/coloring.h): valid (no two particles of one color share a triangle or,
// with bending, a hinge stencil), balanced, deterministic, and fast, on grids, jittered meshes
// with random diagonals, disconnected meshes and isolated vertices.
#include "solver/coloring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/runtime/errors.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using Order = ColoringOptions::Order;

ModelDesc gridModel(int dimX, int dimY) {
  ClothGridParams grid;
  grid.dimX = dimX;
  grid.dimY = dimY;
  ClothBuilder builder;
  builder.addClothGrid(grid);
  return builder.finalize();
}

// A (dimX × dimY)-cell grid whose vertices are jittered and whose cells take a random diagonal,
// so vertex valences vary from 4 to 8; `isolated` unreferenced vertices are appended.
ClothMeshParams jitteredMesh(std::mt19937& rng, int dimX, int dimY, int isolated = 0) {
  std::uniform_real_distribution<float> jitter(-0.3f, 0.3f);
  std::bernoulli_distribution flip(0.5);
  ClothMeshParams mesh;
  const int row = dimX + 1;
  for (int y = 0; y <= dimY; ++y)
    for (int x = 0; x <= dimX; ++x)
      mesh.vertices.push_back({float(x) + jitter(rng), float(y) + jitter(rng), 0.1f * jitter(rng)});
  for (int y = 1; y <= dimY; ++y)
    for (int x = 1; x <= dimX; ++x) {
      const int v0 = (y - 1) * row + x - 1, v1 = v0 + 1, v2 = y * row + x, v3 = v2 - 1;
      if (flip(rng)) {
        mesh.triangles.push_back({v0, v1, v2});
        mesh.triangles.push_back({v0, v2, v3});
      } else {
        mesh.triangles.push_back({v0, v1, v3});
        mesh.triangles.push_back({v1, v2, v3});
      }
    }
  for (int i = 0; i < isolated; ++i) mesh.vertices.push_back({-5.0f - float(i), -5.0f, 0.0f});
  return mesh;
}

ModelDesc meshModel(const ClothMeshParams& mesh) {
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  return builder.finalize();
}

Coloring color(const ModelDesc& m, const ColoringOptions& options) {
  return colorParticles(m.numParticles(), m.triangles, m.triangleMaterials, m.edges,
                        m.edgeMaterials, options);
}

std::vector<int> colorSizes(const Coloring& c) {
  std::vector<int> sizes;
  for (int k = 0; k < c.numColors(); ++k)
    sizes.push_back(c.colorOffsets[size_t(k) + 1] - c.colorOffsets[size_t(k)]);
  return sizes;
}

bool isBalanced(const std::vector<int>& sizes, float ratio) {
  if (sizes.empty()) return true;
  const int smallest = *std::min_element(sizes.begin(), sizes.end());
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  return double(largest) <= double(ratio) * double(smallest) || largest - smallest <= 2;
}

// Checks validity independently of findColoringConflict: element pairs and the three arrays.
void expectValidColoring(const ModelDesc& m, const Coloring& c, bool includeBending) {
  const std::vector<int>& colorOf = c.colorOfParticle;
  ASSERT_EQ(colorOf.size(), size_t(m.numParticles()));
  for (size_t t = 0; t < m.triangles.size(); ++t) {
    const Int3& tri = m.triangles[t];
    ASSERT_NE(colorOf[size_t(tri.x)], colorOf[size_t(tri.y)]) << "triangle " << t;
    ASSERT_NE(colorOf[size_t(tri.y)], colorOf[size_t(tri.z)]) << "triangle " << t;
    ASSERT_NE(colorOf[size_t(tri.z)], colorOf[size_t(tri.x)]) << "triangle " << t;
  }
  if (includeBending)
    for (size_t e = 0; e < m.edges.size(); ++e) {
      const Int4& s = m.edges[e];
      const int ids[4] = {s.x, s.y, s.z, s.w};
      for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b)
          if (ids[a] >= 0 && ids[b] >= 0)
            ASSERT_NE(colorOf[size_t(ids[a])], colorOf[size_t(ids[b])]) << "hinge " << e;
    }
  // particlesByColor = for each color, its particles in ascending order.
  ASSERT_EQ(c.colorOffsets.size(), size_t(c.numColors()) + 1);
  std::vector<int> expected;
  std::vector<int> offsets{0};
  for (int k = 0; k < c.numColors(); ++k) {
    for (int v = 0; v < m.numParticles(); ++v)
      if (colorOf[size_t(v)] == k) expected.push_back(v);
    offsets.push_back(int(expected.size()));
  }
  EXPECT_EQ(c.particlesByColor, expected);
  EXPECT_EQ(c.colorOffsets, offsets);
  for (int size : colorSizes(c)) EXPECT_GT(size, 0) << "empty color";
  EXPECT_EQ(findColoringConflict(c, m.triangles, m.edges, includeBending), "");
}

std::vector<ColoringOptions> allOptionCombinations() {
  std::vector<ColoringOptions> all;
  for (bool bending : {false, true})
    for (bool balance : {false, true})
      for (Order order : {Order::MaximumCardinalitySearch, Order::DescendingDegree}) {
        ColoringOptions options;
        options.includeBending = bending;
        options.balance = balance;
        options.order = order;
        all.push_back(options);
      }
  return all;
}

std::string describe(const ColoringOptions& o) {
  return std::string("bending ") + (o.includeBending ? "on" : "off") + ", balance " +
         (o.balance ? "on" : "off") + ", " +
         (o.order == Order::MaximumCardinalitySearch ? "MCS" : "descending degree");
}

// Rebuilds colorOffsets / particlesByColor after a test edits colorOfParticle.
void regroup(Coloring& c) {
  const int numColors = *std::max_element(c.colorOfParticle.begin(), c.colorOfParticle.end()) + 1;
  c.colorOffsets.assign(1, 0);
  c.particlesByColor.clear();
  for (int k = 0; k < numColors; ++k) {
    for (size_t v = 0; v < c.colorOfParticle.size(); ++v)
      if (c.colorOfParticle[v] == k) c.particlesByColor.push_back(int(v));
    c.colorOffsets.push_back(int(c.particlesByColor.size()));
  }
}

TEST(Coloring, EmptyModelHasNoColors) {
  const Coloring c = colorParticles(0, {}, {}, {}, {}, {});
  EXPECT_EQ(c.numColors(), 0);
  EXPECT_EQ(c.colorOffsets, std::vector<int>{0});
  EXPECT_TRUE(c.colorOfParticle.empty());
  EXPECT_TRUE(c.particlesByColor.empty());
}

TEST(Coloring, ParticlesWithoutElementsAllGetColorZero) {
  for (int n : {1, 7}) {
    for (bool balance : {false, true}) {
      ColoringOptions options;
      options.balance = balance;
      const Coloring c = colorParticles(n, {}, {}, {}, {}, options);
      EXPECT_EQ(c.numColors(), 1);
      EXPECT_EQ(c.colorOfParticle, std::vector<int>(size_t(n), 0));
    }
  }
}

TEST(Coloring, ValidOnGridsOfSeveralSizes) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 60);
  std::vector<std::pair<int, int>> dims{{1, 1}, {1, 7}, {2, 3}, {7, 5}, {50, 50}};
  dims.push_back({dim(rng), dim(rng)});
  for (const auto& [dimX, dimY] : dims) {
    SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY) + " grid");
    const ModelDesc model = gridModel(dimX, dimY);
    for (const ColoringOptions& options : allOptionCombinations()) {
      SCOPED_TRACE(describe(options));
      expectValidColoring(model, color(model, options), options.includeBending);
    }
  }
}

TEST(Coloring, ValidOnJitteredMeshesWithRandomDiagonals) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const auto& [dimX, dimY] : {std::pair{1, 1}, {3, 2}, {17, 23}, {80, 60}}) {
    SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY) + " mesh");
    const ModelDesc model = meshModel(jitteredMesh(rng, dimX, dimY));
    for (const ColoringOptions& options : allOptionCombinations()) {
      SCOPED_TRACE(describe(options));
      expectValidColoring(model, color(model, options), options.includeBending);
    }
  }
}

TEST(Coloring, ValidOnDisconnectedMeshWithIsolatedVertices) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  ClothBuilder builder;
  ClothGridParams grid;
  grid.dimX = 6;
  grid.dimY = 4;
  builder.addClothGrid(grid);
  const int isolatedFirst = builder.numParticles() + 13 * 11;
  builder.addClothMesh(jitteredMesh(rng, 12, 10, /*isolated=*/9));
  grid.position = {20.0f, 0.0f, 0.0f};
  builder.addClothGrid(grid);
  const ModelDesc model = builder.finalize();
  for (const ColoringOptions& options : allOptionCombinations()) {
    SCOPED_TRACE(describe(options));
    const Coloring c = color(model, options);
    expectValidColoring(model, c, options.includeBending);
    if (!options.balance)
      for (int v = isolatedFirst; v < isolatedFirst + 9; ++v)
        EXPECT_EQ(c.colorOfParticle[size_t(v)], 0) << "isolated particle " << v;
  }
}

TEST(Coloring, BalancedOnLargeGridsAndMeshes) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const ColoringOptions options;
  const Coloring grid = color(gridModel(50, 50), options);
  EXPECT_TRUE(isBalanced(colorSizes(grid), options.targetMaxMinRatio))
      << ::testing::PrintToString(colorSizes(grid));
  const Coloring mesh = color(meshModel(jitteredMesh(rng, 40, 40)), options);
  EXPECT_TRUE(isBalanced(colorSizes(mesh), options.targetMaxMinRatio))
      << ::testing::PrintToString(colorSizes(mesh));
}

TEST(Coloring, BalancingSpreadsIsolatedVerticesOverAllColors) {
  // 400 isolated vertices all land in color 0 without balancing; balancing must even that out
  // while keeping the mesh part valid.
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const ModelDesc model = meshModel(jitteredMesh(rng, 10, 10, /*isolated=*/400));
  ColoringOptions options;
  options.balance = false;
  const std::vector<int> unbalanced = colorSizes(color(model, options));
  ASSERT_FALSE(isBalanced(unbalanced, options.targetMaxMinRatio));
  options.balance = true;
  const Coloring balanced = color(model, options);
  expectValidColoring(model, balanced, options.includeBending);
  EXPECT_EQ(balanced.numColors(), int(unbalanced.size()));
  EXPECT_TRUE(isBalanced(colorSizes(balanced), options.targetMaxMinRatio))
      << ::testing::PrintToString(colorSizes(balanced));
}

TEST(Coloring, SameInputGivesSameOutput) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rngA(seed), rngB(seed);
  const ModelDesc a = meshModel(jitteredMesh(rngA, 30, 20, 5));
  const ModelDesc b = meshModel(jitteredMesh(rngB, 30, 20, 5));
  for (const ColoringOptions& options : allOptionCombinations()) {
    SCOPED_TRACE(describe(options));
    const Coloring first = color(a, options), second = color(b, options);
    EXPECT_EQ(first.colorOfParticle, second.colorOfParticle);
    EXPECT_EQ(first.colorOffsets, second.colorOffsets);
    EXPECT_EQ(first.particlesByColor, second.particlesByColor);
    EXPECT_EQ(color(a, options).colorOfParticle, first.colorOfParticle);
  }
}

TEST(Coloring, MaximumCardinalitySearchNeedsNoMoreColorsThanDescendingDegree) {
  for (const auto& [dimX, dimY] : {std::pair{1, 1}, {2, 2}, {5, 3}, {20, 20}, {64, 31}}) {
    for (bool bending : {false, true}) {
      SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY) + ", bending " +
                   (bending ? "on" : "off"));
      const ModelDesc model = gridModel(dimX, dimY);
      ColoringOptions mcs, degree;
      mcs.includeBending = degree.includeBending = bending;
      degree.order = Order::DescendingDegree;
      EXPECT_LE(color(model, mcs).numColors(), color(model, degree).numColors());
    }
  }
  // On a grid with bending, the graph contains K4s (a cell's 4 corners), so 4 is optimal.
  ColoringOptions options;
  EXPECT_EQ(color(gridModel(20, 20), options).numColors(), 4);
  // Without bending a grid triangulation is 3-colorable, and MCS finds it.
  options.includeBending = false;
  EXPECT_EQ(color(gridModel(20, 20), options).numColors(), 3);
}

TEST(Coloring, ShearOnlyTrianglesAreStillInTheGraph) {
  // The reference tests ke·ka ≠ 0 and would leave these triangles uncolored; we must not.
  ModelDesc model = gridModel(8, 8);
  for (TriangleMaterial& m : model.triangleMaterials) m.ka = 0.0f;
  ColoringOptions options;
  options.includeBending = false;
  const Coloring c = color(model, options);
  EXPECT_GE(c.numColors(), 3);
  expectValidColoring(model, c, false);
  // Area-only triangles too.
  for (TriangleMaterial& m : model.triangleMaterials) m = {0.0f, 50.0f, 0.0f};
  expectValidColoring(model, color(model, options), false);
}

TEST(Coloring, ElementsWithoutEnergyAreLeftOutOfTheGraph) {
  // 1 x 1 grid: triangles (0, 1, 2), (1, 3, 2), interior hinge (0, 3, 1, 2). With bending energy
  // all four corners are mutually adjacent (4 colors); without it 0 and 3 may share (3 colors).
  ModelDesc model = gridModel(1, 1);
  const ColoringOptions options;
  EXPECT_EQ(color(model, options).numColors(), 4);
  for (EdgeMaterial& m : model.edgeMaterials) m = {0.0f, 0.0f};
  EXPECT_EQ(color(model, options).numColors(), 3);
  for (EdgeMaterial& m : model.edgeMaterials) m = {0.0f, 1.0f};  // damping alone couples too
  EXPECT_EQ(color(model, options).numColors(), 4);
  for (EdgeMaterial& m : model.edgeMaterials) m = {0.0f, 0.0f};
  for (TriangleMaterial& m : model.triangleMaterials) m = {0.0f, 0.0f, 5.0f};
  EXPECT_EQ(color(model, options).numColors(), 1);
}

TEST(Coloring, RejectsInconsistentInputs) {
  const ModelDesc model = gridModel(2, 2);
  const ColoringOptions options;
  try {
    colorParticles(model.numParticles(), model.triangles,
                   std::span(model.triangleMaterials).first(3), model.edges, model.edgeMaterials,
                   options);
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("triangle materials"));
  }
  EXPECT_THROW(colorParticles(model.numParticles(), model.triangles, model.triangleMaterials,
                              model.edges, std::span(model.edgeMaterials).first(1), options),
               Error);
  try {
    colorParticles(4, model.triangles, model.triangleMaterials, {}, {}, options);
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("triangle 1"));
  }
  ColoringOptions badRatio;
  badRatio.targetMaxMinRatio = 0.5f;
  EXPECT_THROW(color(model, badRatio), Error);
}

TEST(Coloring, FindColoringConflictNamesTheParticlesAndTheElement) {
  const ModelDesc model = gridModel(1, 1);
  const ColoringOptions options;
  Coloring c = color(model, options);
  ASSERT_EQ(findColoringConflict(c, model.triangles, model.edges, true), "");

  // Particles 0 and 3 share only the hinge (0, 3, 1, 2).
  Coloring hinge = c;
  hinge.colorOfParticle[3] = hinge.colorOfParticle[0];
  regroup(hinge);
  EXPECT_EQ(findColoringConflict(hinge, model.triangles, model.edges, false), "");
  const std::string message = findColoringConflict(hinge, model.triangles, model.edges, true);
  EXPECT_THAT(message, HasSubstr("particles 0 and 3"));
  EXPECT_THAT(message, HasSubstr("bending hinge 1"));

  Coloring triangle = c;
  triangle.colorOfParticle[1] = triangle.colorOfParticle[0];
  regroup(triangle);
  EXPECT_THAT(findColoringConflict(triangle, model.triangles, model.edges, false),
              HasSubstr("particles 0 and 1 share triangle 0"));

  // Arrays that disagree are reported too.
  Coloring broken = c;
  std::swap(broken.particlesByColor[0], broken.particlesByColor[3]);
  EXPECT_NE(findColoringConflict(broken, model.triangles, model.edges, true), "");
  broken = c;
  broken.colorOffsets.pop_back();
  EXPECT_NE(findColoringConflict(broken, model.triangles, model.edges, true), "");
}

TEST(Coloring, FiftyThousandVerticesColorQuickly) {
  // A jittered mesh rather than a regular grid: it needs ~8 colors and real balancing work.
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const ModelDesc model = meshModel(jitteredMesh(rng, 223, 223));  // 50176 vertices
  const ColoringOptions options;
  const auto start = std::chrono::steady_clock::now();
  const Coloring c = color(model, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("coloring %d vertices, %d hinges: %.1f ms, %d colors\n", model.numParticles(),
              model.numEdges(), ms, c.numColors());
  EXPECT_LT(ms, 250.0);  // ~35 ms on the 2-core dev machine; the bound only catches blow-ups
  EXPECT_EQ(findColoringConflict(c, model.triangles, model.edges, true), "");
  EXPECT_TRUE(isBalanced(colorSizes(c), options.targetMaxMinRatio))
      << ::testing::PrintToString(colorSizes(c));
}

}  // namespace
}  // namespace weft
