// Vertex adjacency CSR (solver/adjacency.h): equal to a brute-force scan over the elements, in
// element order, on random meshes and on grids from the builder, for sizes 0, 1, small and large.
#include "solver/adjacency.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/runtime/errors.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

// The (element id, slot) pairs of vertex v, collected by scanning every element in order.
std::vector<int> bruteForceTriangleEntries(int v, const std::vector<Int3>& triangles) {
  std::vector<int> entries;
  for (size_t t = 0; t < triangles.size(); ++t)
    for (int slot = 0; slot < 3; ++slot)
      if (triangles[t][slot] == v) entries.insert(entries.end(), {int(t), slot});
  return entries;
}
std::vector<int> bruteForceEdgeEntries(int v, const std::vector<Int4>& edges) {
  std::vector<int> entries;
  for (size_t e = 0; e < edges.size(); ++e)
    for (int slot = 0; slot < 4; ++slot)
      if (edges[e][slot] == v) entries.insert(entries.end(), {int(e), slot});
  return entries;
}

void expectMatchesBruteForce(int numParticles, const std::vector<Int3>& triangles,
                             const std::vector<Int4>& edges, const VertexAdjacency& adjacency) {
  ASSERT_EQ(adjacency.triangleOffsets.size(), size_t(numParticles) + 1);
  ASSERT_EQ(adjacency.edgeOffsets.size(), size_t(numParticles) + 1);
  EXPECT_EQ(adjacency.triangleOffsets.front(), 0);
  EXPECT_EQ(adjacency.edgeOffsets.front(), 0);
  EXPECT_EQ(size_t(adjacency.triangleOffsets.back()), adjacency.triangleEntries.size());
  EXPECT_EQ(size_t(adjacency.edgeOffsets.back()), adjacency.edgeEntries.size());
  for (int v = 0; v < numParticles; ++v) {
    const std::vector<int> triangleEntries(
        adjacency.triangleEntries.begin() + adjacency.triangleOffsets[size_t(v)],
        adjacency.triangleEntries.begin() + adjacency.triangleOffsets[size_t(v) + 1]);
    ASSERT_EQ(triangleEntries, bruteForceTriangleEntries(v, triangles)) << "vertex " << v;
    const std::vector<int> edgeEntries(
        adjacency.edgeEntries.begin() + adjacency.edgeOffsets[size_t(v)],
        adjacency.edgeEntries.begin() + adjacency.edgeOffsets[size_t(v) + 1]);
    ASSERT_EQ(edgeEntries, bruteForceEdgeEntries(v, edges)) << "vertex " << v;
    EXPECT_EQ(adjacentElementCount(adjacency, v),
              int(triangleEntries.size() + edgeEntries.size()) / 2);
  }
}

// Random triangles (three distinct vertices) and random hinges whose opposite vertices are -1
// now and then, as on boundary edges.
struct RandomMesh {
  int numParticles = 0;
  std::vector<Int3> triangles;
  std::vector<Int4> edges;
};
RandomMesh randomMesh(std::mt19937& rng, int numParticles, int numTriangles, int numEdges) {
  RandomMesh mesh;
  mesh.numParticles = numParticles;
  std::uniform_int_distribution<int> vertex(0, numParticles - 1);
  std::bernoulli_distribution boundary(0.2);
  const auto distinct = [&](int count) {
    std::vector<int> ids;
    while (int(ids.size()) < count) {
      const int v = vertex(rng);
      if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
    }
    return ids;
  };
  for (int t = 0; t < numTriangles; ++t) {
    const std::vector<int> ids = distinct(3);
    mesh.triangles.push_back({ids[0], ids[1], ids[2]});
  }
  for (int e = 0; e < numEdges; ++e) {
    const std::vector<int> ids = distinct(4);
    mesh.edges.push_back({ids[0], boundary(rng) ? -1 : ids[1], ids[2], ids[3]});
  }
  return mesh;
}

TEST(VertexAdjacency, EmptyModelHasOnlyTheLeadingOffset) {
  const VertexAdjacency adjacency = buildVertexAdjacency(0, {}, {});
  EXPECT_EQ(adjacency.triangleOffsets, std::vector<int>{0});
  EXPECT_EQ(adjacency.edgeOffsets, std::vector<int>{0});
  EXPECT_TRUE(adjacency.triangleEntries.empty());
  EXPECT_TRUE(adjacency.edgeEntries.empty());
}

TEST(VertexAdjacency, ParticlesWithoutElementsHaveEmptyRanges) {
  const VertexAdjacency adjacency = buildVertexAdjacency(1, {}, {});
  EXPECT_EQ(adjacency.triangleOffsets, (std::vector<int>{0, 0}));
  EXPECT_EQ(adjacency.edgeOffsets, (std::vector<int>{0, 0}));
  EXPECT_EQ(adjacentElementCount(adjacency, 0), 0);
}

TEST(VertexAdjacency, SingleHingeListsEverySlotAndSkipsMissingOpposite) {
  const std::vector<Int3> triangles{{0, 1, 2}};
  const std::vector<Int4> edges{{2, -1, 0, 1}, {3, 2, 0, 1}};
  const VertexAdjacency adjacency = buildVertexAdjacency(4, triangles, edges);
  EXPECT_EQ(adjacency.triangleOffsets, (std::vector<int>{0, 2, 4, 6, 6}));
  EXPECT_EQ(adjacency.triangleEntries, (std::vector<int>{0, 0, 0, 1, 0, 2}));
  // Vertex 0: v0 of both edges; 1: v1 of both; 2: o0 of edge 0, o1 of edge 1; 3: o0 of edge 1.
  EXPECT_EQ(adjacency.edgeOffsets, (std::vector<int>{0, 4, 8, 12, 14}));
  EXPECT_EQ(adjacency.edgeEntries, (std::vector<int>{0, 2, 1, 2, 0, 3, 1, 3, 0, 0, 1, 1, 1, 0}));
}

TEST(VertexAdjacency, RandomMeshesMatchBruteForceInElementOrder) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const auto& [particles, triangles, edges] :
       {std::tuple{4, 0, 0}, {4, 1, 1}, {5, 7, 3}, {31, 64, 97}, {2000, 5000, 7000}}) {
    SCOPED_TRACE(std::to_string(particles) + " particles");
    const RandomMesh mesh = randomMesh(rng, particles, triangles, edges);
    expectMatchesBruteForce(mesh.numParticles, mesh.triangles, mesh.edges,
                            buildVertexAdjacency(mesh.numParticles, mesh.triangles, mesh.edges));
  }
}

TEST(VertexAdjacency, GridsFromTheBuilderMatchBruteForce) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 40);
  for (int trial = 0; trial < 4; ++trial) {
    ClothGridParams grid;
    grid.dimX = trial == 0 ? 1 : dim(rng);
    grid.dimY = trial == 0 ? 1 : dim(rng);
    SCOPED_TRACE(std::to_string(grid.dimX) + " x " + std::to_string(grid.dimY));
    ClothBuilder builder;
    builder.addClothGrid(grid);
    const ModelDesc model = builder.finalize();
    expectMatchesBruteForce(model.numParticles(), model.triangles, model.edges, model.adjacency);
  }
}

TEST(VertexAdjacency, InteriorGridVertexTouchesSixTrianglesAndTwelveEdges) {
  // In the builder's grid every interior vertex has valence 6: 6 triangles, 6 incident edges
  // (as v0/v1) and 6 hinges where it is the opposite vertex.
  ClothGridParams grid;
  grid.dimX = 4;
  grid.dimY = 4;
  ClothBuilder builder;
  builder.addClothGrid(grid);
  const ModelDesc model = builder.finalize();
  const int center = 2 * 5 + 2;
  EXPECT_EQ(adjacentElementCount(model.adjacency, center), 6 + 12);
}

TEST(VertexAdjacency, OutOfRangeIndexNamesTheElement) {
  try {
    buildVertexAdjacency(3, std::vector<Int3>{{0, 1, 2}, {0, 1, 3}}, {});
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("triangle 1"));
    EXPECT_THAT(e.what(), HasSubstr("particle 3"));
  }
  try {
    buildVertexAdjacency(3, {}, std::vector<Int4>{{0, 1, -1, 2}});
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bending edge 0"));
  }
  EXPECT_THROW(buildVertexAdjacency(3, std::vector<Int3>{{0, -1, 2}}, {}), Error);
}

}  // namespace
}  // namespace weft
