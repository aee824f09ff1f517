// IntersectionCounter and its predicate: hand-made configurations with known answers (crossing,
// touching, coplanar, degenerate), shared-vertex exclusion, cloth grids (flat: none; folded
// through itself: some) against an all-pairs brute force with the same predicate, CUDA == CPU.
// Set WEFT_TEST_SEED to replay a randomized failure.
#include "collision/intersection_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/count_edge_triangle_intersections.cuh"
#include "kernels/runtime/buffer.h"
#include "kernels/runtime/errors.h"
#include "math_test_support.h"
#include "test_support.h"

namespace weft {
namespace {

using test::testSeed;  // math_test_support.h

using Pairs = std::vector<std::pair<int, int>>;

struct Mesh {
  std::vector<Vec3> positions;  // (numVertices)
  std::vector<Int3> triangles;  // (numTriangles)
  std::vector<Int4> edges;      // (numEdges) (o0, o1, v0, v1), every unique edge once
};

/// Every unique edge of the triangles, as (o0, o1, v0, v1) rows in order of first appearance.
std::vector<Int4> uniqueEdges(const std::vector<Int3>& triangles) {
  std::vector<Int4> edges;
  std::map<std::pair<int, int>, int> index;
  for (const Int3& t : triangles) {
    for (int k = 0; k < 3; ++k) {
      const int a = t[k], b = t[(k + 1) % 3], opposite = t[(k + 2) % 3];
      const auto key = std::minmax(a, b);
      const auto [it, inserted] = index.emplace(key, int(edges.size()));
      if (inserted)
        edges.push_back({opposite, -1, a, b});
      else
        edges[it->second].y = opposite;
    }
  }
  return edges;
}

Mesh meshOf(std::vector<Vec3> positions, std::vector<Int3> triangles) {
  Mesh m{std::move(positions), std::move(triangles), {}};
  m.edges = uniqueEdges(m.triangles);
  return m;
}

/// (nx+1)×(ny+1) vertices in the plane z = 0, two triangles per cell (ClothBuilder's layout).
Mesh gridMesh(int nx, int ny, float cell) {
  std::vector<Vec3> positions;
  std::vector<Int3> triangles;
  for (int y = 0; y <= ny; ++y)
    for (int x = 0; x <= nx; ++x) positions.push_back({float(x) * cell, float(y) * cell, 0.5f});
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      const int v00 = y * (nx + 1) + x, v10 = v00 + 1, v01 = v00 + nx + 1, v11 = v01 + 1;
      triangles.push_back({v00, v10, v11});
      triangles.push_back({v00, v11, v01});
    }
  }
  return meshOf(std::move(positions), std::move(triangles));
}

/// The grid rolled along y into a prolate cycloid (a curve with loops): the cloth passes
/// through itself along lines across it. Tilted slightly so that no crossing is axis-aligned.
Mesh foldedGrid(int nx, int ny, float cell) {
  Mesh m = gridMesh(nx, ny, cell);
  const float length = float(ny) * cell, twoPi = 2.0f * std::numbers::pi_v<float>;
  for (Vec3& p : m.positions) {
    const float t = 2.0f * twoPi * p.y / length;
    const float advance = 0.25f * length / twoPi, radius = 0.35f * length / twoPi;
    p = {p.x, advance * t - radius * std::sin(t) + 0.03f * p.x,
         -radius * std::cos(t) + 0.02f * p.x};
  }
  return m;
}

Mesh crumpledGrid(std::mt19937& rng, int nx, int ny, float cell, float amplitude) {
  Mesh m = gridMesh(nx, ny, cell);
  std::uniform_real_distribution<float> noise(-amplitude, amplitude);
  for (Vec3& p : m.positions) p += Vec3{noise(rng), noise(rng), noise(rng)};
  return m;
}

/// n separate triangles (each with its own three edges) in a box of side `spread`.
Mesh triangleSoup(std::mt19937& rng, int n, float spread, float size) {
  std::uniform_real_distribution<float> centre(0.0f, spread), offset(-size, size);
  std::vector<Vec3> positions;
  std::vector<Int3> triangles;
  for (int t = 0; t < n; ++t) {
    const Vec3 c{centre(rng), centre(rng), centre(rng)};
    for (int k = 0; k < 3; ++k)
      positions.push_back(c + Vec3{offset(rng), offset(rng), offset(rng)});
    triangles.push_back({3 * t, 3 * t + 1, 3 * t + 2});
  }
  return meshOf(std::move(positions), std::move(triangles));
}

/// All (edge, triangle) pairs that share no vertex and intersect, by testing every pair.
Pairs bruteForcePairs(const Mesh& m) {
  Pairs result;
  for (int e = 0; e < int(m.edges.size()); ++e) {
    const Int4 edge = m.edges[e];
    for (int t = 0; t < int(m.triangles.size()); ++t) {
      const Int3 tri = m.triangles[t];
      if (sharesNoVertex(edge, tri) &&
          segmentIntersectsTriangle(m.positions[edge.z], m.positions[edge.w], m.positions[tri.x],
                                    m.positions[tri.y], m.positions[tri.z]))
        result.emplace_back(e, t);
    }
  }
  return result;
}

struct Counted {
  int count;
  Pairs pairs;
};

Counted countOn(const Device& device, const Mesh& m, int maxPairs = 1 << 20) {
  DeviceBuffer<Vec3> positions(device, m.positions);
  IntersectionCounter counter(device, int(m.positions.size()), m.triangles, m.edges);
  const int count = counter.count(positions.data());
  return {count, counter.pairs(positions.data(), maxPairs)};
}

// ---- The predicate on hand-made configurations (exact float inputs) -----------------------------

TEST(SegmentIntersectsTriangle, CrossingAndTouchingCount) {
  const Vec3 a{0, 0, 0}, b{2, 0, 0}, c{0, 2, 0};
  auto hits = [&](Vec3 p, Vec3 q) {
    // Every vertex order and both segment directions give the same answer.
    const bool r = segmentIntersectsTriangle(p, q, a, b, c);
    EXPECT_EQ(segmentIntersectsTriangle(q, p, a, b, c), r);
    EXPECT_EQ(segmentIntersectsTriangle(p, q, b, c, a), r);
    EXPECT_EQ(segmentIntersectsTriangle(p, q, c, b, a), r);
    return r;
  };
  EXPECT_TRUE(hits({0.5f, 0.5f, -1}, {0.5f, 0.5f, 1}));      // through the interior
  EXPECT_TRUE(hits({0.5f, 0.5f, 0}, {0.5f, 0.5f, 1}));       // an end on the interior
  EXPECT_TRUE(hits({1, 0, -1}, {1, 0, 1}));                  // through an edge
  EXPECT_TRUE(hits({1, 1, -1}, {1, 1, 1}));                  // through the hypotenuse
  EXPECT_TRUE(hits({0, 0, -1}, {0, 0, 1}));                  // through a vertex
  EXPECT_TRUE(hits({2, 0, 0}, {3, 1, 5}));                   // an end on a vertex
  EXPECT_TRUE(hits({-0.5f, 0.5f, -1}, {1.5f, 0.5f, 1}));     // oblique, through the interior
  EXPECT_FALSE(hits({1.25f, 1, -1}, {1.25f, 1, 1}));         // just outside the hypotenuse
  EXPECT_FALSE(hits({0.5f, 0.5f, 0.25f}, {0.5f, 0.5f, 1}));  // above, pointing at it
  EXPECT_FALSE(hits({-1, -1, 1}, {3, 3, 1}));                // parallel, off the plane
  EXPECT_FALSE(hits({-1, 3.5f, -1}, {3, -0.5f, 1}));         // crosses the plane outside
}

TEST(SegmentIntersectsTriangle, CoplanarSegmentsAreTestedInThePlane) {
  const Vec3 a{0, 0, 1}, b{2, 0, 1}, c{0, 2, 1};
  EXPECT_TRUE(segmentIntersectsTriangle({0.25f, 0.25f, 1}, {0.5f, 0.5f, 1}, a, b, c));  // inside
  EXPECT_TRUE(segmentIntersectsTriangle({-1, 0.5f, 1}, {3, 0.5f, 1}, a, b, c));         // across
  EXPECT_TRUE(segmentIntersectsTriangle({2, 0, 1}, {4, 0, 1}, a, b, c));         // touches a vertex
  EXPECT_TRUE(segmentIntersectsTriangle({1, 0, 1}, {3, 0, 1}, a, b, c));         // overlaps an edge
  EXPECT_TRUE(segmentIntersectsTriangle({2, 2, 1}, {0, 0, 1}, a, b, c));         // from outside in
  EXPECT_FALSE(segmentIntersectsTriangle({2.5f, 0, 1}, {4, 0, 1}, a, b, c));     // collinear, apart
  EXPECT_FALSE(segmentIntersectsTriangle({1.5f, 1, 1}, {1, 1.5f, 1}, a, b, c));  // beyond
  EXPECT_FALSE(segmentIntersectsTriangle({-1, -1, 1}, {-1, 3, 1}, a, b, c));     // beside
}

TEST(SegmentIntersectsTriangle, DegenerateInputs) {
  // A zero-area triangle is the segment (0,0,0)–(2,0,0) (its third vertex lies on it).
  const Vec3 a{0, 0, 0}, b{2, 0, 0}, m{1, 0, 0};
  EXPECT_TRUE(segmentIntersectsTriangle({1.5f, -1, 0}, {1.5f, 1, 0}, a, b, m));   // crosses it
  EXPECT_TRUE(segmentIntersectsTriangle({0.5f, 0, -1}, {0.5f, 0, 1}, a, b, m));   // crosses it
  EXPECT_FALSE(segmentIntersectsTriangle({1.5f, -1, 1}, {1.5f, 1, 1}, a, b, m));  // skew
  EXPECT_TRUE(segmentIntersectsTriangle({2, 0, 0}, {3, 0, 0}, a, b, m));          // collinear
  EXPECT_FALSE(segmentIntersectsTriangle({2.5f, 0, 0}, {3, 0, 0}, a, b, m));      // collinear
  // A zero-length segment is a point.
  const Vec3 c{0, 2, 0}, inside{0.5f, 0.5f, 0}, above{0.5f, 0.5f, 1};
  EXPECT_TRUE(segmentIntersectsTriangle(inside, inside, a, b, c));
  EXPECT_FALSE(segmentIntersectsTriangle(above, above, a, b, c));
}

// ---- Exactness against 128-bit integer references
// ------------------------------------------------

// Coordinates that are integers (|n| < 2^24) times 2^-10 are exact floats, and their orientation
// determinants are exact in 128-bit integers: a reference for the adaptive predicates.
struct LatticePoint {
  long long x, y, z;
};
Vec3 toFloat(const LatticePoint& p) {
  return {float(p.x) * 0x1p-10f, float(p.y) * 0x1p-10f, float(p.z) * 0x1p-10f};
}
int signOf(__int128 v) {
  return (v > 0) - (v < 0);
}
int orient3dReference(const LatticePoint& a, const LatticePoint& b, const LatticePoint& c,
                      const LatticePoint& d) {
  const __int128 ux = b.x - a.x, uy = b.y - a.y, uz = b.z - a.z;
  const __int128 vx = c.x - a.x, vy = c.y - a.y, vz = c.z - a.z;
  const __int128 wx = d.x - a.x, wy = d.y - a.y, wz = d.z - a.z;
  return signOf((uy * vz - uz * vy) * wx + (uz * vx - ux * vz) * wy + (ux * vy - uy * vx) * wz);
}
int orient2dReference(const LatticePoint& a, const LatticePoint& b, const LatticePoint& c) {
  const __int128 ux = b.x - a.x, uy = b.y - a.y, vx = c.x - a.x, vy = c.y - a.y;
  return signOf(ux * vy - uy * vx);
}

/// Points of a random lattice plane far from the origin (so double evaluation rounds), some
/// moved off it by one lattice unit.
std::vector<LatticePoint> nearlyCoplanarPoints(std::mt19937& rng, int count) {
  // Differences up to ~2^21 lattice units: products of three exceed double's 53 bits.
  std::uniform_int_distribution<long long> base(-(1 << 21), 1 << 21), dir(-3000, 3000),
      step(-400, 400), nudge(-1, 1);
  const LatticePoint o{base(rng), base(rng), base(rng)};
  const LatticePoint u{dir(rng), dir(rng), dir(rng)}, v{dir(rng), dir(rng), dir(rng)};
  std::vector<LatticePoint> points;
  for (int k = 0; k < count; ++k) {
    const long long i = step(rng), j = step(rng);
    const bool off = k % 3 == 0;
    points.push_back({o.x + i * u.x + j * v.x + (off ? nudge(rng) : 0),
                      o.y + i * u.y + j * v.y + (off ? nudge(rng) : 0),
                      o.z + i * u.z + j * v.z + (off ? nudge(rng) : 0)});
  }
  return points;
}

TEST(SegmentIntersectsTriangle, OrientationSignsAreExactOnNearlyDegenerateInputs) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int zeros3 = 0, zeros2 = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<LatticePoint> points = nearlyCoplanarPoints(rng, 24);
    std::uniform_int_distribution<int> pick(0, int(points.size()) - 1);
    for (int k = 0; k < 200; ++k) {
      const LatticePoint a = points[pick(rng)], b = points[pick(rng)], c = points[pick(rng)],
                         d = points[pick(rng)];
      const int expected3 = orient3dReference(a, b, c, d);
      zeros3 += expected3 == 0;
      ASSERT_EQ(predicates::orient3d(toFloat(a), toFloat(b), toFloat(c), toFloat(d)), expected3)
          << "round " << round << " sample " << k;
      // orient2d on the xy projection of three collinear-ish points: a, b and b + (b − a) ± 1.
      const LatticePoint e{2 * b.x - a.x + (k % 3) - 1, 2 * b.y - a.y, 0};
      const int expected2 = orient2dReference(a, b, e);
      if (std::llabs(e.x) < (1 << 23) && std::llabs(e.y) < (1 << 23)) {
        zeros2 += expected2 == 0;
        ASSERT_EQ(predicates::orient2d(predicates::project(toFloat(a), 2),
                                       predicates::project(toFloat(b), 2),
                                       predicates::project(toFloat(e), 2)),
                  expected2)
            << "round " << round << " sample " << k;
      }
    }
  }
  // The inputs did exercise the degenerate cases.
  EXPECT_GT(zeros3, 1000);
  EXPECT_GT(zeros2, 1000);
}

// Coordinates of very different magnitudes: the differences themselves round in double.
TEST(SegmentIntersectsTriangle, OrientationSignsAreExactForMixedMagnitudes) {
  const float tiny = 0x1p-60f;
  using predicates::orient2d;
  using predicates::orient3d;
  // (b − a) × (c − a) = (1 − 2^-60)·2 − 1·(2 − 2^-60) = −2^-60.
  EXPECT_EQ(orient2d({tiny, 0}, {1, 1}, {2, 2}), -1);
  EXPECT_EQ(orient2d({1, 1}, {2, 2}, {tiny, 0}), -1);
  EXPECT_EQ(orient2d({0, 0}, {1, 1}, {2, 2}), 0);
  EXPECT_EQ(orient3d({tiny, 0, 0}, {1, 1, 0}, {2, 2, 0}, {0, 0, 1}), -1);
  EXPECT_EQ(orient3d({tiny, 0, 0}, {1, 1, 0}, {2, 2, 0}, {0, 0, -1}), 1);
  EXPECT_EQ(orient3d({0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {0, 0, 1}), 0);
}

/// A grid on a tilted lattice plane far from the origin: exactly planar, yet no coordinate is
/// constant, so every coplanar pair is decided by the exact predicates.
Mesh tiltedFlatGrid(int nx, int ny) {
  const LatticePoint o{1 << 21, -(1 << 20), 3 << 19}, u{37, 11, -5}, v{-3, 29, 41};
  std::vector<Vec3> positions;
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i)
      positions.push_back(toFloat({o.x + 512 * (i * u.x + j * v.x), o.y + 512 * (i * u.y + j * v.y),
                                   o.z + 512 * (i * u.z + j * v.z)}));
  Mesh m = gridMesh(nx, ny, 1.0f);
  m.positions = std::move(positions);
  return m;
}

// ---- The counter --------------------------------------------------------------------------------

/// Two triangles linked through each other: one edge of each pierces the other.
Mesh linkedTriangles() {
  return meshOf({{-1, -1, 0},
                 {2, -1, 0},
                 {-1, 2, 0},  // triangle 0, plane z = 0
                 {0.2f, 0.2f, -1},
                 {0.2f, 0.2f, 1},
                 {0.2f, 5, 0.5f}},  // triangle 1, plane x = 0.2
                {{0, 1, 2}, {3, 4, 5}});
}

/// Triangle 1 shares vertex 0 with triangle 0; its far edge 3–4 pierces triangle 0, and its
/// edges from vertex 0 touch triangle 0 only there (excluded as sharing a vertex).
Mesh trianglesSharingAVertex() {
  return meshOf({{0, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0.5f, 0.5f, 1}, {0.5f, 0.5f, -1}},
                {{0, 1, 2}, {0, 3, 4}});
}

int edgeIndex(const Mesh& m, int v0, int v1) {
  for (int e = 0; e < int(m.edges.size()); ++e)
    if ((m.edges[e].z == v0 && m.edges[e].w == v1) || (m.edges[e].z == v1 && m.edges[e].w == v0))
      return e;
  return -1;
}

void checkHandMadeMeshes(const Device& device) {
  {
    SCOPED_TRACE("linked triangles");
    const Mesh m = linkedTriangles();
    const Counted c = countOn(device, m);
    EXPECT_EQ(c.count, 2);
    const Pairs expected{{edgeIndex(m, 1, 2), 1}, {edgeIndex(m, 3, 4), 0}};
    EXPECT_EQ(c.pairs, expected);
    EXPECT_EQ(c.pairs, bruteForcePairs(m));
  }
  {
    SCOPED_TRACE("triangles sharing a vertex");
    const Mesh m = trianglesSharingAVertex();
    const Counted c = countOn(device, m);
    EXPECT_EQ(c.count, 1);
    EXPECT_EQ(c.pairs, (Pairs{{edgeIndex(m, 3, 4), 0}}));
  }
  {
    SCOPED_TRACE("flat grid");
    const Counted c = countOn(device, gridMesh(30, 21, 0.1f));
    EXPECT_EQ(c.count, 0);
    EXPECT_TRUE(c.pairs.empty());
  }
  {
    SCOPED_TRACE("tilted flat grid");
    const Mesh m = tiltedFlatGrid(24, 17);
    const Counted c = countOn(device, m);
    EXPECT_EQ(c.count, 0);
    EXPECT_TRUE(c.pairs.empty());
    EXPECT_TRUE(bruteForcePairs(m).empty());
  }
  {
    SCOPED_TRACE("empty meshes");
    EXPECT_EQ(countOn(device, meshOf({}, {})).count, 0);
    EXPECT_EQ(countOn(device, Mesh{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 1, 2}}, {}}).count, 0);
  }
}

void checkAgainstBruteForce(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  struct Case {
    const char* name;
    Mesh mesh;
    bool mustIntersect;
  };
  const Case cases[] = {{"folded grid", foldedGrid(12, 60, 0.05f), true},
                        {"crumpled grid", crumpledGrid(rng, 20, 20, 0.05f, 0.06f), false},
                        {"triangle soup", triangleSoup(rng, 600, 2.0f, 0.3f), true}};
  for (const Case& test : cases) {
    SCOPED_TRACE(test.name);
    const Pairs expected = bruteForcePairs(test.mesh);
    if (test.mustIntersect) {
      EXPECT_GT(expected.size(), 0u);
    }
    const Counted c = countOn(device, test.mesh);
    EXPECT_EQ(c.count, int(expected.size()));
    EXPECT_EQ(c.pairs, expected);
    // A short pair list holds min(count, maxPairs) true intersections.
    const Counted few = countOn(device, test.mesh, 5);
    EXPECT_EQ(few.count, int(expected.size()));
    ASSERT_EQ(few.pairs.size(), std::min<size_t>(5, expected.size()));
    for (const auto& pair : few.pairs)
      EXPECT_TRUE(std::binary_search(expected.begin(), expected.end(), pair))
          << pair.first << ", " << pair.second;
  }
}

TEST(IntersectionCounter, HandMadeMeshesOnCpu) {
  checkHandMadeMeshes(*test::openCpu());
}
TEST(IntersectionCounter, HandMadeMeshesOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkHandMadeMeshes(*gpu);
}

TEST(IntersectionCounter, MatchesBruteForceOnCpu) {
  checkAgainstBruteForce(*test::openCpu());
}
TEST(IntersectionCounter, MatchesBruteForceOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkAgainstBruteForce(*gpu);
}

TEST(IntersectionCounter, CudaCountAndPairsEqualCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Mesh& m : {foldedGrid(40, 200, 0.02f), crumpledGrid(rng, 60, 60, 0.02f, 0.03f),
                        triangleSoup(rng, 5000, 4.0f, 0.3f)}) {
    const Counted onGpu = countOn(*gpu, m), onCpu = countOn(*cpu, m);
    EXPECT_EQ(onGpu.count, onCpu.count);
    EXPECT_EQ(onGpu.pairs, onCpu.pairs);
  }
}

/// Meshes in one batch of worlds, all at the same place: each world's count is its own mesh's, and
/// the overlapping worlds add nothing (an edge meets only its own world's triangles).
void checkWorldsCountApart(const Device& device) {
  const Mesh worlds[] = {foldedGrid(12, 60, 0.05f), gridMesh(12, 60, 0.05f), linkedTriangles(),
                         foldedGrid(12, 60, 0.05f)};
  Mesh all;
  std::vector<int> worldOf, triangleBegin{0};
  for (int k = 0; k < 4; ++k) {
    const Mesh& m = worlds[k];
    const int first = int(all.positions.size());
    all.positions.insert(all.positions.end(), m.positions.begin(), m.positions.end());
    for (const Int3& t : m.triangles)
      all.triangles.push_back({t.x + first, t.y + first, t.z + first});
    for (const Int4& e : m.edges)
      all.edges.push_back({e.x + first, e.y < 0 ? -1 : e.y + first, e.z + first, e.w + first});
    worldOf.insert(worldOf.end(), m.positions.size(), k);
    triangleBegin.push_back(int(all.triangles.size()));
  }
  DeviceBuffer<Vec3> positions(device, all.positions);
  IntersectionCounter counter(device, int(all.positions.size()), all.triangles, all.edges, worldOf,
                              triangleBegin);
  ASSERT_EQ(counter.numWorlds(), 4);
  std::vector<int> expected;
  int total = 0;
  for (const Mesh& m : worlds) {
    expected.push_back(int(bruteForcePairs(m).size()));
    total += expected.back();
  }
  EXPECT_GT(expected[0], 0);
  EXPECT_EQ(expected[1], 0);
  EXPECT_EQ(expected[2], 2);
  EXPECT_EQ(counter.countPerWorld(positions.data()), expected);
  EXPECT_EQ(counter.count(positions.data()), total);
  // The same meshes without worlds: the overlapping copies pierce each other.
  IntersectionCounter together(device, int(all.positions.size()), all.triangles, all.edges);
  EXPECT_GT(together.count(positions.data()), total);
  EXPECT_THROW(IntersectionCounter(device, int(all.positions.size()), all.triangles, all.edges, {},
                                   triangleBegin),
               Error);
}

TEST(IntersectionCounter, WorldsAreCountedApartOnCpu) {
  checkWorldsCountApart(*test::openCpu());
}
TEST(IntersectionCounter, WorldsAreCountedApartOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkWorldsCountApart(*gpu);
}

TEST(IntersectionCounter, RejectsOutOfRangeIndices) {
  auto cpu = test::openCpu();
  const std::vector<Int3> triangles{{0, 1, 3}};
  const std::vector<Int4> edges{{2, -1, 0, 1}};
  EXPECT_THROW(IntersectionCounter(*cpu, 3, triangles, edges), Error);
  const std::vector<Int3> good{{0, 1, 2}};
  const std::vector<Int4> badEdge{{2, -1, 0, 7}};
  EXPECT_THROW(IntersectionCounter(*cpu, 3, good, badEdge), Error);
}

}  // namespace
}  // namespace weft
