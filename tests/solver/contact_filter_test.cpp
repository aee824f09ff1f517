// Topological contact filter (solver/contact_filter.h, cloth_vbd_spec §6.4): equal to a
// brute-force construction from sets (breadth-first rings, the triangles of the ring minus those
// of the vertex, the edges touching the rings minus every hinge whose stencil holds a or b) on
// grids and jittered meshes with random diagonals and holes, for thresholds 0..3; rows sorted;
// the reference's quirk (an edge opposite b in a triangle at b stays a candidate at n = 2); the
// row lookup (kernels/contact_filter_lookup.h) against std::binary_search; 10k vertices at n = 3
// well under a second.
#include "solver/contact_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/contact_filter_lookup.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

// ---- Brute force from sets --------------------------------------------------------------------

/// N_depth(v), v included: repeated expansion over the v0–v1 pairs of the edge rows.
std::set<int> ring(const ModelDesc& desc, int v, int depth) {
  std::set<int> reached{v};
  for (int level = 0; level < depth; ++level) {
    std::set<int> next = reached;
    for (const Int4& e : desc.edges) {
      if (reached.count(e.z)) next.insert(e.w);
      if (reached.count(e.w)) next.insert(e.z);
    }
    reached = next;
  }
  return reached;
}

bool triangleHas(const Int3& t, int v) {
  return t.x == v || t.y == v || t.z == v;
}
bool stencilHas(const Int4& e, int v) {
  return e.x == v || e.y == v || e.z == v || e.w == v;  // -1 never matches a vertex
}

std::vector<int> bruteForceVertexRow(const ModelDesc& desc, int v, int threshold) {
  if (threshold <= 1) return {};
  std::set<int> ringVertices = ring(desc, v, threshold - 1);
  ringVertices.erase(v);
  std::vector<int> row;
  for (int t = 0; t < desc.numTriangles(); ++t) {
    const Int3& tri = desc.triangles[size_t(t)];
    if (triangleHas(tri, v)) continue;
    for (const int u : ringVertices)
      if (triangleHas(tri, u)) {
        row.push_back(t);
        break;
      }
  }
  return row;
}

std::vector<int> bruteForceEdgeRow(const ModelDesc& desc, int e, int threshold) {
  if (threshold <= 1) return {};
  const int a = desc.edges[size_t(e)].z, b = desc.edges[size_t(e)].w;
  std::set<int> ringVertices = ring(desc, a, threshold - 1);
  for (const int u : ring(desc, b, threshold - 1)) ringVertices.insert(u);
  ringVertices.erase(a);
  ringVertices.erase(b);
  std::vector<int> row;
  for (int f = 0; f < desc.numEdges(); ++f) {
    const Int4& other = desc.edges[size_t(f)];
    // The reference's subtraction: every hinge listing a or b in any slot (v_adj_edges).
    if (stencilHas(other, a) || stencilHas(other, b)) continue;
    if (ringVertices.count(other.z) || ringVertices.count(other.w)) row.push_back(f);
  }
  return row;
}

std::vector<int> rowOf(const std::vector<int>& offsets, const std::vector<int>& values, int i) {
  return {values.begin() + offsets[size_t(i)], values.begin() + offsets[size_t(i) + 1]};
}

void expectMatchesBruteForce(const ModelDesc& desc, int threshold) {
  SCOPED_TRACE("threshold " + std::to_string(threshold));
  const ContactFilter filter = buildContactFilter(desc, threshold);
  ASSERT_EQ(filter.vertexTriangleOffsets.size(), size_t(desc.numParticles()) + 1);
  ASSERT_EQ(filter.edgeEdgeOffsets.size(), size_t(desc.numEdges()) + 1);
  EXPECT_EQ(filter.vertexTriangleOffsets.front(), 0);
  EXPECT_EQ(filter.edgeEdgeOffsets.front(), 0);
  EXPECT_EQ(size_t(filter.vertexTriangleOffsets.back()), filter.vertexTriangles.size());
  EXPECT_EQ(size_t(filter.edgeEdgeOffsets.back()), filter.edgeEdges.size());
  for (int v = 0; v < desc.numParticles(); ++v) {
    const std::vector<int> row = rowOf(filter.vertexTriangleOffsets, filter.vertexTriangles, v);
    ASSERT_TRUE(std::is_sorted(row.begin(), row.end())) << "vertex " << v;
    ASSERT_EQ(row, bruteForceVertexRow(desc, v, threshold)) << "vertex " << v;
  }
  for (int e = 0; e < desc.numEdges(); ++e) {
    const std::vector<int> row = rowOf(filter.edgeEdgeOffsets, filter.edgeEdges, e);
    ASSERT_TRUE(std::is_sorted(row.begin(), row.end())) << "edge " << e;
    ASSERT_EQ(row, bruteForceEdgeRow(desc, e, threshold)) << "edge " << e;
  }
}

// ---- Meshes -----------------------------------------------------------------------------------

ModelDesc grid(int dimX, int dimY) {
  ClothGridParams params;
  params.dimX = dimX;
  params.dimY = dimY;
  ClothBuilder builder;
  builder.addClothGrid(params);
  return builder.finalize();
}

/// A (dimX+1)×(dimY+1) vertex grid with jittered positions, a random diagonal per quad and a
/// fraction of its triangles removed (holes, boundary loops, loose vertices); optionally twice,
/// as two separate cloths.
ModelDesc jitteredMesh(std::mt19937& rng, int dimX, int dimY, double holeFraction, int copies) {
  std::uniform_real_distribution<double> jitter(-0.3, 0.3), unit(0.0, 1.0);
  ClothBuilder builder;
  for (int copy = 0; copy < copies; ++copy) {
    ClothMeshParams mesh;
    mesh.position = {0, 0, float(copy)};
    for (int y = 0; y <= dimY; ++y)
      for (int x = 0; x <= dimX; ++x)
        mesh.vertices.push_back({float(x + jitter(rng)), float(y + jitter(rng)), 0.0f});
    const auto id = [&](int x, int y) { return y * (dimX + 1) + x; };
    for (int y = 0; y < dimY; ++y)
      for (int x = 0; x < dimX; ++x) {
        const int v00 = id(x, y), v10 = id(x + 1, y), v01 = id(x, y + 1), v11 = id(x + 1, y + 1);
        std::vector<Int3> quad = unit(rng) < 0.5
                                     ? std::vector<Int3>{{v00, v10, v11}, {v00, v11, v01}}
                                     : std::vector<Int3>{{v00, v10, v01}, {v10, v11, v01}};
        for (const Int3& t : quad)
          if (unit(rng) >= holeFraction) mesh.triangles.push_back(t);
      }
    builder.addClothMesh(mesh);
  }
  return builder.finalize();
}

TEST(ContactFilter, GridsMatchBruteForce) {
  for (const auto& [dimX, dimY] : {std::pair{1, 1}, {1, 4}, {3, 2}, {6, 5}}) {
    SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY));
    const ModelDesc desc = grid(dimX, dimY);
    for (int threshold = 0; threshold <= 3; ++threshold) expectMatchesBruteForce(desc, threshold);
  }
}

TEST(ContactFilter, JitteredMeshesWithHolesMatchBruteForce) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 7);
  for (int trial = 0; trial < 6; ++trial) {
    const int dimX = dim(rng), dimY = dim(rng);
    const double holes = trial % 3 == 0 ? 0.0 : 0.25;
    const int copies = trial % 2 ? 2 : 1;
    SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY) + " holes " +
                 std::to_string(holes) + " copies " + std::to_string(copies));
    const ModelDesc desc = jitteredMesh(rng, dimX, dimY, holes, copies);
    for (int threshold = 0; threshold <= 3; ++threshold) expectMatchesBruteForce(desc, threshold);
  }
}

TEST(ContactFilter, EmptyAndTinyModels) {
  const ModelDesc empty;
  for (int threshold = -1; threshold <= 3; ++threshold) {
    const ContactFilter filter = buildContactFilter(empty, threshold);
    EXPECT_EQ(filter.vertexTriangleOffsets, std::vector<int>{0});
    EXPECT_EQ(filter.edgeEdgeOffsets, std::vector<int>{0});
    EXPECT_TRUE(filter.vertexTriangles.empty());
    EXPECT_TRUE(filter.edgeEdges.empty());
  }
  // One triangle: everything near is its own, so every row is empty.
  ModelDesc one;
  one.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  one.triangles = {{0, 1, 2}};
  one.edges = {{2, -1, 0, 1}, {0, -1, 1, 2}, {1, -1, 2, 0}};
  for (int threshold = 0; threshold <= 3; ++threshold) {
    const ContactFilter filter = buildContactFilter(one, threshold);
    EXPECT_EQ(filter.vertexTriangleOffsets, (std::vector<int>{0, 0, 0, 0}));
    EXPECT_EQ(filter.edgeEdgeOffsets, (std::vector<int>{0, 0, 0, 0}));
  }
}

TEST(ContactFilter, ThresholdOneOrLessLeavesEveryRowEmpty) {
  const ModelDesc desc = grid(4, 4);
  for (const int threshold : {-3, 0, 1}) {
    const ContactFilter filter = buildContactFilter(desc, threshold);
    EXPECT_EQ(filter.vertexTriangleOffsets, std::vector<int>(size_t(desc.numParticles()) + 1, 0));
    EXPECT_EQ(filter.edgeEdgeOffsets, std::vector<int>(size_t(desc.numEdges()) + 1, 0));
    EXPECT_TRUE(filter.vertexTriangles.empty());
    EXPECT_TRUE(filter.edgeEdges.empty());
  }
}

TEST(ContactFilter, EdgeOppositeAnEndpointStaysACandidateAtThresholdTwo) {
  // §6.4: for edge (a, b), the edge (c, d) opposite b in a triangle (b, c, d) that does not
  // touch a has both endpoints in N_1(b), yet it is subtracted with b's hinges (b is its
  // opposite vertex), so it is not excluded; another edge at c that no hinge of a or b lists is.
  const ModelDesc desc = grid(4, 4);
  const ContactFilter filter = buildContactFilter(desc, 2);
  int checked = 0;
  for (int e = 0; e < desc.numEdges(); ++e) {
    const int a = desc.edges[size_t(e)].z, b = desc.edges[size_t(e)].w;
    const std::vector<int> row = rowOf(filter.edgeEdgeOffsets, filter.edgeEdges, e);
    for (const Int3& t : desc.triangles) {
      if (!triangleHas(t, b) || triangleHas(t, a)) continue;
      const int c = t.x == b ? t.y : t.x, d = t.z == b ? t.y : t.z;
      for (int f = 0; f < desc.numEdges(); ++f) {
        const Int4& other = desc.edges[size_t(f)];
        const bool isOpposite = (other.z == c && other.w == d) || (other.z == d && other.w == c);
        if (isOpposite) {
          ASSERT_TRUE(stencilHas(other, b));  // b is its o0 or o1
          EXPECT_FALSE(std::binary_search(row.begin(), row.end(), f))
              << "edge " << e << " (" << a << ", " << b << ") excludes " << f;
          ++checked;
        } else if ((other.z == c || other.w == c) && !stencilHas(other, a) &&
                   !stencilHas(other, b)) {
          EXPECT_TRUE(std::binary_search(row.begin(), row.end(), f))
              << "edge " << e << " (" << a << ", " << b << ") keeps " << f;
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(ContactFilter, TenThousandVerticesAtThresholdThreeTakeWellUnderASecond) {
  const ModelDesc desc = grid(100, 100);  // 10201 vertices, 20000 triangles, 30200 edges
  const auto start = std::chrono::steady_clock::now();
  const ContactFilter filter = buildContactFilter(desc, 3);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
  EXPECT_LT(seconds, 0.5);
  // Spot check: an interior vertex's row against the brute force.
  const int center = 50 * 101 + 50;
  EXPECT_EQ(filter.vertexTriangleOffsets[size_t(center) + 1] -
                filter.vertexTriangleOffsets[size_t(center)],
            int(bruteForceVertexRow(desc, center, 3).size()));
}

// ---- Row lookup -------------------------------------------------------------------------------

TEST(SortedRowContains, AgreesWithBinarySearch) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 2000; ++trial) {
    std::uniform_int_distribution<int> size(0, 40), value(-5, 100);
    std::vector<int> values(size_t(size(rng)));
    for (int& v : values) v = value(rng);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    // A row in the middle of the array, as in CSR.
    const int begin =
        values.empty() ? 0 : std::uniform_int_distribution<int>(0, int(values.size()))(rng);
    const int end = std::uniform_int_distribution<int>(begin, int(values.size()))(rng);
    for (int key = -7; key <= 102; ++key) {
      const bool expected = std::binary_search(values.begin() + begin, values.begin() + end, key);
      ASSERT_EQ(sortedRowContains(values.data(), begin, end, key), expected)
          << "trial " << trial << " key " << key << " row [" << begin << ", " << end << ")";
    }
  }
}

}  // namespace
}  // namespace weft
