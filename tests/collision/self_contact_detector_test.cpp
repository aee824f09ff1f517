// SelfContactDetector: candidate lists equal a brute-force search (margin, topological filter,
// rest-shape exclusion, worlds), for both traversals and both backends; overflow is counted
// exactly and grown lists then hold everything; the triangle lists are the sorted transpose; the
// three traversals give the same lists in the same order (on CUDA for every lanes-per-query);
// quiet (held) edges query nothing, and their pairs stay in the lists of the edges that move;
// kept lists (a reuse slack) hold every pair within the margin while no particle moved past the
// slack, and are built again as soon as one did.
#include "collision/self_contact_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <random>
#include <set>

#include "kernels/apply_planar_truncation.cuh"
#include "kernels/closest_point.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"
#include "solver/cloth_builder.h"
#include "solver/contact_filter.h"
#include "test_support.h"

namespace weft {
namespace {

using Lists = std::vector<std::vector<int>>;

constexpr DetectionTraversal kTraversals[] = {DetectionTraversal::Cooperative,
                                              DetectionTraversal::Stackless,
                                              DetectionTraversal::SharedStack};

struct Mesh {
  ModelDesc desc;                         // topology and rest shape (flat grid)
  std::vector<Vec3> current;              // crumpled configuration
  std::vector<unsigned char> quietEdges;  // (numEdges) 1: queries nothing, or empty (none)
};

/// A grid folded over on itself and jittered: many vertex–triangle and edge–edge candidates.
Mesh crumpledGrid(int cells, unsigned seed) {
  ClothBuilder builder;
  ClothGridParams g;
  g.dimX = g.dimY = cells;
  g.cellX = g.cellY = 1.0f / cells;
  builder.addClothGrid(g);
  Mesh m{builder.finalize(), {}, {}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> jitter(-0.2f / cells, 0.2f / cells);
  for (const Vec3& p : m.desc.positions) {
    // Fold the sheet at x = 0.5 so its right half lies 0.02 above its left half.
    Vec3 q = p.x <= 0.5f ? p : Vec3{1.0f - p.x, p.y, 0.02f};
    q += Vec3{jitter(rng), jitter(rng), jitter(rng)};
    m.current.push_back(q);
  }
  return m;
}

struct Settings {
  float margin = 0.05f;
  float restExclusion = 0.0f;
  int filter = 2;
  DetectionTraversal traversal = DetectionTraversal::Cooperative;
  int capacity = 64;
  float slack = 0.0f;  // the detector's reuse slack
};

/// Brute force over all pairs with the kernels' own predicates.
void bruteForce(const Mesh& m, const Settings& s, Lists& vt, Lists& ee, Lists& tv) {
  const ModelDesc& d = m.desc;
  const ContactFilter filter = buildContactFilter(d, s.filter);
  const auto& x = m.current;
  const auto& r = d.positions;
  auto sameWorld = [&](int a, int b) {
    return d.worlds.empty() || d.worlds[a] == d.worlds[b] || d.worlds[a] < 0 || d.worlds[b] < 0;
  };
  vt.assign(d.numParticles(), {});
  tv.assign(d.numTriangles(), {});
  for (int v = 0; v < d.numParticles(); ++v) {
    for (int t = 0; t < d.numTriangles(); ++t) {
      const Int3 tri = d.triangles[t];
      if (tri.x == v || tri.y == v || tri.z == v || !sameWorld(v, tri.x)) continue;
      if (std::binary_search(filter.vertexTriangles.begin() + filter.vertexTriangleOffsets[v],
                             filter.vertexTriangles.begin() + filter.vertexTriangleOffsets[v + 1],
                             t))
        continue;
      const auto c = closestPointOnTriangle(x[v], x[tri.x], x[tri.y], x[tri.z]);
      if (!(length(x[v] - c.point) < s.margin)) continue;
      if (s.restExclusion > 0.0f) {
        const auto rc = closestPointOnTriangle(r[v], r[tri.x], r[tri.y], r[tri.z]);
        if (length(r[v] - rc.point) < s.restExclusion) continue;
      }
      vt[v].push_back(t);
      tv[t].push_back(v);
    }
  }
  ee.assign(d.numEdges(), {});
  for (int e = 0; e < d.numEdges(); ++e) {
    if (!m.quietEdges.empty() && m.quietEdges[size_t(e)]) continue;  // queries nothing
    const Int4 a = d.edges[e];
    for (int f = 0; f < d.numEdges(); ++f) {
      const Int4 b = d.edges[f];
      if (f == e || b.z == a.z || b.z == a.w || b.w == a.z || b.w == a.w) continue;
      if (!sameWorld(a.z, b.z)) continue;
      if (std::binary_search(filter.edgeEdges.begin() + filter.edgeEdgeOffsets[e],
                             filter.edgeEdges.begin() + filter.edgeEdgeOffsets[e + 1], f))
        continue;
      if (!(closestPointEdgeEdge(x[a.z], x[a.w], x[b.z], x[b.w], 1e-5f).distance < s.margin))
        continue;
      if (s.restExclusion > 0.0f &&
          closestPointEdgeEdge(r[a.z], r[a.w], r[b.z], r[b.w], 1e-5f).distance < s.restExclusion)
        continue;
      ee[e].push_back(f);
    }
  }
}

/// The detector with everything it reads, on one device.
struct Fixture {
  Fixture(const Device& device, const Mesh& m, const Settings& s)
      : filter(buildContactFilter(m.desc, s.filter)),
        triangles(device, m.desc.triangles),
        edges(device, m.desc.edges),
        rest(device, m.desc.positions),
        current(device, m.current),
        worlds(device, m.desc.worlds),
        vOffsets(device, filter.vertexTriangleOffsets),
        vValues(device, filter.vertexTriangles),
        eOffsets(device, filter.edgeEdgeOffsets),
        eValues(device, filter.edgeEdges),
        triangleOffsets(device, m.desc.adjacency.triangleOffsets),
        triangleEntries(device, m.desc.adjacency.triangleEntries),
        edgeOffsets(device, m.desc.adjacency.edgeOffsets),
        edgeEntries(device, m.desc.adjacency.edgeEntries),
        quietEdges(device, m.quietEdges) {
    SelfContactTopology t;
    t.numParticles = m.desc.numParticles();
    t.numTriangles = m.desc.numTriangles();
    t.numEdges = m.desc.numEdges();
    t.triangles = triangles.data();
    t.edges = edges.data();
    t.restPositions = rest.data();
    t.worlds = m.desc.worlds.empty() ? nullptr : worlds.data();
    t.vertexFilterOffsets = vOffsets.data();
    t.vertexFilterValues = vValues.data();
    t.edgeFilterOffsets = eOffsets.data();
    t.edgeFilterValues = eValues.data();
    t.quietEdges = m.quietEdges.empty() ? nullptr : quietEdges.data();
    t.triangleOffsets = triangleOffsets.data();
    t.triangleEntries = triangleEntries.data();
    t.edgeOffsets = edgeOffsets.data();
    t.edgeEntries = edgeEntries.data();
    SelfContactDetectorSettings ds;
    ds.margin = s.margin;
    ds.restExclusion = s.restExclusion;
    ds.traversal = s.traversal;
    ds.vertexTriangleCapacity = ds.edgeEdgeCapacity = ds.triangleVertexCapacity = s.capacity;
    ds.reuseSlack = s.slack;
    detector = std::make_unique<SelfContactDetector>(device, t, ds, current.data());
  }

  static Lists read(const CandidateLists& l, int primitives, const Device& device,
                    std::vector<int>* countsOut = nullptr) {
    std::vector<int> counts(static_cast<size_t>(primitives)),
        items(size_t(primitives) * l.capacity);
    detail::downloadBytes(device, counts.data(), l.counts, counts.size() * sizeof(int));
    detail::downloadBytes(device, items.data(), l.items, items.size() * sizeof(int));
    Lists out(static_cast<size_t>(primitives));
    for (int i = 0; i < primitives; ++i)
      for (int k = 0; k < std::min(counts[i], l.capacity); ++k)
        out[i].push_back(items[size_t(i) * l.capacity + k]);
    if (countsOut) *countsOut = counts;
    return out;
  }

  ContactFilter filter;
  DeviceBuffer<Int3> triangles;
  DeviceBuffer<Int4> edges;
  DeviceBuffer<Vec3> rest, current;
  DeviceBuffer<int> worlds, vOffsets, vValues, eOffsets, eValues;
  DeviceBuffer<int> triangleOffsets, triangleEntries, edgeOffsets, edgeEntries;
  DeviceBuffer<unsigned char> quietEdges;
  std::unique_ptr<SelfContactDetector> detector;
};

Lists sortedCopy(Lists l) {
  for (auto& row : l) std::sort(row.begin(), row.end());
  return l;
}

void expectMatchesBruteForce(const Device& device, const Mesh& m, const Settings& s) {
  Lists vt, ee, tv;
  bruteForce(m, s, vt, ee, tv);
  Fixture f(device, m, s);
  f.detector->detect(f.current.data());
  const ModelDesc& d = m.desc;
  std::vector<int> vtCounts, eeCounts, tvCounts;
  const Lists gotVt =
      Fixture::read(f.detector->vertexTriangles(), d.numParticles(), device, &vtCounts);
  const Lists gotEe = Fixture::read(f.detector->edgeEdges(), d.numEdges(), device, &eeCounts);
  const Lists gotTv =
      Fixture::read(f.detector->triangleVertices(), d.numTriangles(), device, &tvCounts);
  EXPECT_EQ(sortedCopy(gotVt), vt);
  EXPECT_EQ(sortedCopy(gotEe), ee);
  EXPECT_EQ(gotTv, tv) << "triangle lists are sorted by vertex";
  for (size_t i = 0; i < vt.size(); ++i) ASSERT_EQ(vtCounts[i], int(vt[i].size()));
  for (size_t i = 0; i < ee.size(); ++i) ASSERT_EQ(eeCounts[i], int(ee[i].size()));
  size_t pairs = 0;
  for (const auto& row : vt) pairs += row.size();
  EXPECT_GT(pairs, 100u) << "the test mesh should have many candidates";
}

void runBruteForceCases(const Device& device) {
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const Mesh mesh = crumpledGrid(12, seed);
  for (DetectionTraversal traversal : kTraversals) {
    for (int filter : {0, 1, 2, 3}) {
      SCOPED_TRACE(std::string(traversalName(traversal)) + ", filter " + std::to_string(filter));
      expectMatchesBruteForce(device, mesh, {0.05f, 0.0f, filter, traversal, 64});
    }
  }
  // Rest-shape exclusion: pairs that were close in the flat sheet are skipped.
  expectMatchesBruteForce(device, mesh, {0.05f, 0.1f, 2, DetectionTraversal::Cooperative, 64});
  // Worlds: pairs across worlds are skipped unless one side is global (-1).
  Mesh worlds = mesh;
  std::mt19937 rng(seed);
  for (int i = 0; i < worlds.desc.numParticles(); ++i)
    worlds.desc.worlds.push_back(int(rng() % 3) - 1);
  expectMatchesBruteForce(device, worlds, {0.05f, 0.0f, 2, DetectionTraversal::Cooperative, 64});
  // Quiet edges (held: here those of the fold's lower layer, less the few whose pairs an
  // asymmetric filter row leaves in their list alone) query nothing; every pair they have with an
  // edge that moves is in that edge's list.
  Mesh held = mesh;
  std::vector<bool> heldParticles;
  for (const Vec3& p : held.desc.positions) heldParticles.push_back(p.x < 0.5f);
  held.quietEdges = quietEdges(held.desc, buildContactFilter(held.desc, 2), heldParticles);
  int heldButQuerying = 0;
  for (size_t e = 0; e < held.quietEdges.size(); ++e)
    heldButQuerying += heldParticles[size_t(held.desc.edges[e].z)] &&
                       heldParticles[size_t(held.desc.edges[e].w)] && !held.quietEdges[e];
  EXPECT_GT(heldButQuerying, 0) << "the fold should have asymmetric filter rows";
  for (DetectionTraversal traversal : kTraversals) {
    SCOPED_TRACE(std::string("quiet edges, ") + traversalName(traversal));
    expectMatchesBruteForce(device, held, {0.05f, 0.0f, 2, traversal, 64});
  }
  Lists vt, ee, tv, heldEe;
  bruteForce(mesh, {}, vt, ee, tv);
  bruteForce(held, {}, vt, heldEe, tv);
  int heldPairs = 0;
  for (size_t e = 0; e < ee.size(); ++e) {
    if (!held.quietEdges[e]) continue;
    EXPECT_TRUE(heldEe[e].empty());
    for (int f : ee[e]) {
      if (held.quietEdges[size_t(f)]) continue;
      ++heldPairs;
      EXPECT_TRUE(std::count(heldEe[size_t(f)].begin(), heldEe[size_t(f)].end(), int(e)))
          << "edge " << f << " lost its pair with quiet edge " << e;
    }
  }
  EXPECT_GT(heldPairs, 20) << "the quiet edges should meet moving ones";
}

TEST(SelfContactDetector, CandidatesEqualBruteForceOnCpu) {
  runBruteForceCases(*test::openCpu());
}

TEST(SelfContactDetector, CandidatesEqualBruteForceOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  runBruteForceCases(*gpu);
}

void expectOverflowCountedAndGrown(const Device& device, const Mesh& mesh, const Settings& s) {
  Lists vt, ee, tv;
  bruteForce(mesh, s, vt, ee, tv);
  Fixture f(device, mesh, s);
  f.detector->resetStatus();
  f.detector->detect(f.current.data());
  const ContactStatus status = f.detector->readStatus();
  size_t largestVt = 0, largestEe = 0, largestTv = 0;
  for (const auto& r : vt) largestVt = std::max(largestVt, r.size());
  for (const auto& r : ee) largestEe = std::max(largestEe, r.size());
  for (const auto& r : tv) largestTv = std::max(largestTv, r.size());
  // With one slot each, the counts are still exact; the transpose only saw what was stored.
  EXPECT_EQ(status.maxVertexTriangle, int(largestVt));
  EXPECT_EQ(status.maxEdgeEdge, int(largestEe));
  EXPECT_FALSE(f.detector->fits(status));
  // Grow until everything fits (the transpose can only overflow once the vertex lists hold all
  // their pairs, so this takes two rounds at most), then compare with brute force.
  for (int round = 0; round < 3 && !f.detector->fits(f.detector->readStatus()); ++round) {
    EXPECT_FALSE(f.detector->growToFit(f.detector->readStatus()).empty());
    f.detector->resetStatus();
    f.detector->detect(f.current.data());
  }
  const ContactStatus after = f.detector->readStatus();
  EXPECT_TRUE(f.detector->fits(after));
  EXPECT_EQ(after.maxTriangleVertex, int(largestTv));
  EXPECT_EQ(
      sortedCopy(Fixture::read(f.detector->vertexTriangles(), mesh.desc.numParticles(), device)),
      vt);
  EXPECT_EQ(sortedCopy(Fixture::read(f.detector->edgeEdges(), mesh.desc.numEdges(), device)), ee);
  EXPECT_EQ(Fixture::read(f.detector->triangleVertices(), mesh.desc.numTriangles(), device), tv);
}

void expectOverflowCountedAndGrown(const Device& device) {
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const Mesh mesh = crumpledGrid(10, seed);
  for (DetectionTraversal traversal : kTraversals) {
    SCOPED_TRACE(traversalName(traversal));
    expectOverflowCountedAndGrown(device, mesh, {0.08f, 0.0f, 2, traversal, 1});
  }
}

TEST(SelfContactDetector, OverflowIsCountedExactlyAndGrownListsHoldEverythingOnCpu) {
  expectOverflowCountedAndGrown(*test::openCpu());
}

TEST(SelfContactDetector, OverflowIsCountedExactlyAndGrownListsHoldEverythingOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectOverflowCountedAndGrown(*gpu);
}

/// The crumpled sheet of the test seed with its lists found once (room for every pair), and its
/// vertex–triangle and edge–edge lists as read back.
struct DetectedSheet {
  explicit DetectedSheet(const Device& device)
      : seed(test::testSeed()),
        mesh(crumpledGrid(10, seed)),
        fixture(device, mesh, {0.06f, 0.0f, 2, DetectionTraversal::Cooperative, 64}) {
    fixture.detector->detect(fixture.current.data());
    vt = Fixture::read(fixture.detector->vertexTriangles(), mesh.desc.numParticles(), device);
    ee = Fixture::read(fixture.detector->edgeEdges(), mesh.desc.numEdges(), device);
  }
  unsigned seed;
  Mesh mesh;
  Fixture fixture;
  Lists vt, ee;
};

// The detector's one scan of record and truncation-pair counts (ParticleContactOffsets), on the
// host.
std::vector<int> downloadParticleScan(const Device& device, const SelfContactDetector& detector,
                                      int numParticles) {
  std::vector<int> scan(3 * (size_t(numParticles) + 1));
  detail::downloadBytes(device, scan.data(), detector.particleContactOffsets().scan,
                        scan.size() * sizeof(int));
  return scan;
}

// Random displacements of up to twice the test sheet's margin, so that many of its pairs
// truncate and many do not.
std::vector<Vec3> sheetDisplacements(unsigned seed, int numParticles) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> step(-0.12f, 0.12f);
  std::vector<Vec3> displacements(static_cast<size_t>(numParticles));
  for (Vec3& dx : displacements) dx = {step(rng), step(rng), step(rng)};
  return displacements;
}

// The per-particle records list every pair of each particle, in gather order: its own
// vertex–triangle list (kind 3), its triangles' vertex lists (kind = its corner), the edge–edge
// lists of the edges it is an endpoint of (kind 4 + endpoint), rebuilt here from the lists. The
// truncation's pairs are the kind-3 records of every particle, then the kind-4 ones.
void expectRecordsInGatherOrder(const Device& device) {
  const DetectedSheet sheet(device);
  SCOPED_TRACE("seed " + std::to_string(sheet.seed) + " (WEFT_TEST_SEED replays it)");
  const Fixture& f = sheet.fixture;
  ASSERT_TRUE(f.detector->fits(f.detector->readStatus()));
  const ModelDesc& d = sheet.mesh.desc;
  const int n = d.numParticles();
  const Lists& vt = sheet.vt;
  const Lists& ee = sheet.ee;
  const Lists tv = Fixture::read(f.detector->triangleVertices(), d.numTriangles(), device);
  std::vector<int> offsets(size_t(n) + 1);
  detail::downloadBytes(device, offsets.data(), f.detector->particleRecordOffsets(),
                        offsets.size() * sizeof(int));
  std::vector<ContactRecord> records(static_cast<size_t>(offsets[size_t(n)]));
  detail::downloadBytes(device, records.data(), f.detector->particleRecords(),
                        records.size() * sizeof(ContactRecord));
  ASSERT_EQ(offsets[0], 0);
  // The truncation's pairs: every particle's kind-3 records, then every particle's kind-4 ones.
  // Their counts come from the one scan of records, kind-3 and kind-4 counts, read on the host.
  const std::vector<int> scan = downloadParticleScan(device, *f.detector, n);
  const ParticleContactOffsets scanned{scan.data(), n};
  ASSERT_EQ(scanned.records(), offsets[size_t(n)]);
  const int pairCounts[2] = {scanned.vertexTrianglePairs(),
                             scanned.pairs() - scanned.vertexTrianglePairs()};
  std::vector<ContactRecord> pairs(size_t(scanned.pairs()));
  detail::downloadBytes(device, pairs.data(), f.detector->truncationPairs(),
                        pairs.size() * sizeof(ContactRecord));
  std::vector<std::array<int, 3>> expectedPairs[2];  // kind 3, kind 4: (kind, id, partner)
  size_t total = 0;
  for (int v = 0; v < n; ++v) {
    std::vector<std::array<int, 3>> expected;  // (kind, id, partner)
    for (int t : vt[size_t(v)]) expected.push_back({3, v, t});
    const auto& a = d.adjacency;
    for (int k = a.triangleOffsets[size_t(v)]; k < a.triangleOffsets[size_t(v) + 1]; k += 2)
      for (int u : tv[size_t(a.triangleEntries[size_t(k)])])
        expected.push_back({a.triangleEntries[size_t(k) + 1], a.triangleEntries[size_t(k)], u});
    for (int k = a.edgeOffsets[size_t(v)]; k < a.edgeOffsets[size_t(v) + 1]; k += 2)
      if (a.edgeEntries[size_t(k) + 1] >= 2)
        for (int e2 : ee[size_t(a.edgeEntries[size_t(k)])])
          expected.push_back({4 + a.edgeEntries[size_t(k) + 1] - 2, a.edgeEntries[size_t(k)], e2});
    ASSERT_EQ(offsets[size_t(v) + 1] - offsets[size_t(v)], int(expected.size()))
        << "particle " << v;
    for (size_t j = 0; j < expected.size(); ++j) {
      const ContactRecord& r = records[size_t(offsets[size_t(v)]) + j];
      ASSERT_EQ((std::array<int, 3>{r.kind(), r.id(), r.partner}), expected[j])
          << "particle " << v << ", record " << j;
      if (expected[j][0] == 3 || expected[j][0] == 4)
        expectedPairs[expected[j][0] - 3].push_back(expected[j]);
    }
    total += expected.size();
  }
  EXPECT_GT(total, 1000u) << "the test mesh should have many pairs";
  ASSERT_EQ(pairCounts[0], int(expectedPairs[0].size()));
  ASSERT_EQ(pairCounts[1], int(expectedPairs[1].size()));
  EXPECT_GT(pairCounts[0], 100) << "the test mesh should have many vertex-triangle pairs";
  EXPECT_GT(pairCounts[1], 100) << "the test mesh should have many edge-edge pairs";
  for (size_t j = 0; j < pairs.size(); ++j) {
    const size_t vt = expectedPairs[0].size();
    const std::array<int, 3>& e = j < vt ? expectedPairs[0][j] : expectedPairs[1][j - vt];
    ASSERT_EQ((std::array<int, 3>{pairs[j].kind(), pairs[j].id(), pairs[j].partner}), e)
        << "truncation pair " << j;
  }
}

TEST(SelfContactDetector, ParticleRecordsListEveryPairInGatherOrderOnCpu) {
  expectRecordsInGatherOrder(*test::openCpu());
}

TEST(SelfContactDetector, ParticleRecordsListEveryPairInGatherOrderOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectRecordsInGatherOrder(*gpu);
}

// The truncation over the detector's pairs gives every vertex the smallest factor of all pairs of
// the lists, each vertex–triangle entry and each edge–edge entry evaluated (so every edge–edge
// pair from both edges, as the reference), found here by walking the lists themselves; every
// thread count gives the same factors.
void expectTruncationOverEveryListPair(const Device& device) {
  const DetectedSheet sheet(device);
  SCOPED_TRACE("seed " + std::to_string(sheet.seed) + " (WEFT_TEST_SEED replays it)");
  const Fixture& f = sheet.fixture;
  ASSERT_TRUE(f.detector->fits(f.detector->readStatus()));
  const Mesh& mesh = sheet.mesh;
  const ModelDesc& d = mesh.desc;
  const int n = d.numParticles();
  const Lists& vt = sheet.vt;
  const Lists& ee = sheet.ee;
  const std::vector<Vec3> displacements = sheetDisplacements(sheet.seed + 1, n);
  const float relaxation = 0.85f, parallelEpsilon = 1e-5f;
  std::vector<float> expected(static_cast<size_t>(n), 1.0f);
  for (int v = 0; v < n; ++v)
    for (int t : vt[size_t(v)])
      truncateVertexTriangle(v, d.triangles[size_t(t)], mesh.current.data(), displacements.data(),
                             relaxation, parallelEpsilon, expected.data());
  for (int e = 0; e < d.numEdges(); ++e)
    for (int other : ee[size_t(e)])
      truncateEdgeEdge(d.edges[size_t(e)], d.edges[size_t(other)], mesh.current.data(),
                       displacements.data(), relaxation, parallelEpsilon, expected.data());
  const long long truncated =
      std::count_if(expected.begin(), expected.end(), [](float t) { return t < 1.0f; });
  EXPECT_GT(truncated, 20) << "the test should truncate many vertices";
  EXPECT_LT(truncated, n) << "the test should leave some vertices untruncated";
  const DeviceBuffer<Vec3> dx(device, displacements);
  // Bit for bit the host's walk at every thread count, on either backend: this file is compiled
  // without FMA contraction on CUDA (tests/collision/CMakeLists.txt), as the host code always is
  // (-ffp-contract=off). With it, the factors' plane distances cancel, and on the H100
  // (2026-12-05) a factor of 0.00137 came out 6% smaller.
  for (int threads : {1, 7, 256, 1 << 16}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    DeviceBuffer<float> factors(device, std::vector<float>(static_cast<size_t>(n), 1.0f));
    launch(device, threads,
           ApplyPlanarTruncationByRecord{
               threads, relaxation, parallelEpsilon, f.current.data(), dx.data(),
               f.triangles.data(), f.edges.data(), f.detector->particleContactOffsets(),
               f.detector->truncationPairs(), f.detector->truncationPairSlots(), factors.data()});
    const std::vector<float> got = factors.download();
    for (int v = 0; v < n; ++v)
      ASSERT_EQ(std::bit_cast<int>(got[size_t(v)]), std::bit_cast<int>(expected[size_t(v)]))
          << "vertex " << v << ": " << got[size_t(v)] << " vs " << expected[size_t(v)];
  }
}

TEST(SelfContactDetector, TruncationOverItsPairsIsTheMinimumOverEveryListPairOnCpu) {
  expectTruncationOverEveryListPair(*test::openCpu());
}

TEST(SelfContactDetector, TruncationOverItsPairsIsTheMinimumOverEveryListPairOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectTruncationOverEveryListPair(*gpu);
}

// A scan whose total passes 2^31 wraps its 32-bit offsets. The write then leaves every particle
// whose run it cannot place (from where the scan wrapped on) unwritten, raises recordsWrapped,
// and the detector's counts (what the frame driver asks after every frame) throw; the
// truncation reads no pairs from wrapped counts.
void expectWrappedRecordsStopTheRun(const Device& device) {
  DetectedSheet sheet(device);
  const Fixture& f = sheet.fixture;
  const ModelDesc& d = sheet.mesh.desc;
  const int n = d.numParticles();
  std::vector<int> offsets(size_t(n) + 1);
  detail::downloadBytes(device, offsets.data(), f.detector->particleRecordOffsets(),
                        offsets.size() * sizeof(int));
  const int total = offsets[size_t(n)];
  ASSERT_GT(total, 1000);
  // As if particle m's records had been preceded by 2^31 - offsets[m + 1] + 1 more: from m + 1 on,
  // the scan is past 2^31, taken mod 2^32 as the device's int addition does.
  const int m = n / 2;
  const long long shift = (1LL << 31) - offsets[size_t(m) + 1] + 1;
  std::vector<int> wrapped = offsets;
  for (size_t v = size_t(m) + 1; v <= size_t(n); ++v)
    wrapped[v] = static_cast<int>(static_cast<unsigned>(offsets[v] + shift));
  ASSERT_LT(wrapped[size_t(m) + 1], 0);
  const DeviceBuffer<int> wrappedOffsets(device, wrapped);
  constexpr int kUnwritten = 0x7eadbeef;
  DeviceBuffer<ContactRecord> records(
      device, std::vector<ContactRecord>(size_t(total), {kUnwritten, kUnwritten}));
  DeviceBuffer<ContactStatus> status(device, std::vector<ContactStatus>(1));
  const ParticleContactLists lists{f.triangleOffsets.data(),      f.triangleEntries.data(),
                                   f.edgeOffsets.data(),          f.edgeEntries.data(),
                                   f.detector->vertexTriangles(), f.detector->triangleVertices(),
                                   f.detector->edgeEdges()};
  launch(device, n,
         WriteParticleSelfContacts{lists, wrappedOffsets.data(), records.data(),
                                   static_cast<long long>(total), status.data()});
  EXPECT_EQ(status.download()[0].recordsWrapped, 1);
  const std::vector<ContactRecord> got = records.download();
  std::vector<ContactRecord> expected(static_cast<size_t>(total));
  detail::downloadBytes(device, expected.data(), f.detector->particleRecords(),
                        expected.size() * sizeof(ContactRecord));
  for (int k = 0; k < total; ++k) {
    const bool placed = k < offsets[size_t(m)];  // the runs of particles 0 .. m - 1
    const ContactRecord& r = got[size_t(k)];
    if (placed)
      ASSERT_TRUE(r.code == expected[size_t(k)].code && r.partner == expected[size_t(k)].partner)
          << "record " << k << " of a particle before the wrap";
    else
      ASSERT_TRUE(r.code == kUnwritten && r.partner == kUnwritten)
          << "record " << k << " written from a wrapped offset";
  }

  // The truncation reads nothing from a wrapped records' total, nor from more pairs than fit.
  const std::vector<int> scan = downloadParticleScan(device, *f.detector, n);
  // With the detector's own scan these displacements truncate some vertex (asserted below).
  const DeviceBuffer<Vec3> dx(device, sheetDisplacements(sheet.seed + 1, n));
  const auto truncates = [&](const std::vector<int>& counts) {
    const DeviceBuffer<int> deviceCounts(device, counts);
    DeviceBuffer<float> factors(device, std::vector<float>(size_t(n), 1.0f));
    launch(device, 64,
           ApplyPlanarTruncationByRecord{
               64, 0.85f, 1e-5f, f.current.data(), dx.data(), f.triangles.data(), f.edges.data(),
               ParticleContactOffsets{deviceCounts.data(), n}, f.detector->truncationPairs(),
               f.detector->truncationPairSlots(), factors.data()});
    const std::vector<float> got = factors.download();
    return std::any_of(got.begin(), got.end(), [](float t) { return t < 1.0f; });
  };
  ASSERT_TRUE(truncates(scan)) << "the displacements should truncate some pair";
  std::vector<int> wrappedTotal = scan;
  wrappedTotal[size_t(n)] = -5;
  EXPECT_FALSE(truncates(wrappedTotal)) << "pairs read from a wrapped records' total";
  std::vector<int> tooMany = scan;
  tooMany.back() = static_cast<int>(scan[size_t(n)] + f.detector->truncationPairSlots() + 1);
  EXPECT_FALSE(truncates(tooMany)) << "pairs read past the pairs' buffer";

  // The host stops the run.
  ContactStatus raised = f.detector->readStatus();
  raised.recordsWrapped = 1;
  detail::uploadBytes(device, f.detector->status(), &raised, sizeof(ContactStatus));
  try {
    f.detector->counts();
    ADD_FAILURE() << "counts() should throw once the records wrapped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2^31"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.detector->growIfOverflowed(), Error);
}

TEST(SelfContactDetector, WrappedRecordOffsetsWriteNothingAndStopTheRunOnCpu) {
  expectWrappedRecordsStopTheRun(*test::openCpu());
}

TEST(SelfContactDetector, WrappedRecordOffsetsWriteNothingAndStopTheRunOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectWrappedRecordsStopTheRun(*gpu);
}

// The status sums the candidate pairs of every detection of a frame; a large batch's frame passes
// 2^31 (cloth_rollers × 1024: about 3.7 G), so the sum is 64 bits wide and does not wrap.
void expectPairSumPastTwoToThe31(const Device& device) {
  DetectedSheet sheet(device);
  const Fixture& f = sheet.fixture;
  long long pairs = 0;
  for (const auto& l : sheet.vt) pairs += static_cast<long long>(l.size());
  for (const auto& l : sheet.ee) pairs += static_cast<long long>(l.size());
  ASSERT_GT(pairs, 100);
  ContactStatus start = f.detector->readStatus();
  ASSERT_EQ(start.totalPairs, pairs);
  start.totalPairs = (1LL << 31) - 10;  // as if earlier detections of the frame had found these
  detail::uploadBytes(device, f.detector->status(), &start, sizeof(ContactStatus));
  f.detector->detect(f.current.data());
  EXPECT_EQ(f.detector->readStatus().totalPairs, (1LL << 31) - 10 + pairs);
}

TEST(SelfContactDetector, PairSumOfAFramePassesTwoToThe31WithoutWrappingOnCpu) {
  expectPairSumPastTwoToThe31(*test::openCpu());
}

TEST(SelfContactDetector, PairSumOfAFramePassesTwoToThe31WithoutWrappingOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectPairSumPastTwoToThe31(*gpu);
}

/// Every pair of `sub` is in `super` (row by row).
size_t missingPairs(const Lists& sub, const Lists& super) {
  size_t missing = 0;
  for (size_t i = 0; i < sub.size(); ++i)
    for (int j : sub[i])
      if (std::find(super[i].begin(), super[i].end(), j) == super[i].end()) ++missing;
  return missing;
}

size_t pairCount(const Lists& l) {
  size_t n = 0;
  for (const auto& row : l) n += row.size();
  return n;
}

// Kept lists. Found at margin + 2s, they must hold every pair nearer than the margin at any
// positions within s of where they were found — including pairs that were farther than the margin
// there — and a detection that may keep them must keep them exactly then, and build them again
// (at margin + 2s, exactly as brute force) once a single particle moved farther.
void expectKeptListsHoldEveryPairWithinTheMargin(const Device& device) {
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const Mesh mesh = crumpledGrid(12, seed);
  const ModelDesc& d = mesh.desc;
  const int n = d.numParticles(), e = d.numEdges(), t = d.numTriangles();
  const float margin = 0.04f, slack = 0.01f;
  const Settings kept{margin, 0.0f, 2, DetectionTraversal::Cooperative, 128, slack};
  Settings wide = kept;
  wide.margin = margin + 2.0f * slack;
  Fixture f(device, mesh, kept);
  auto readAll = [&](Lists& vt, Lists& ee, Lists& tv) {
    vt = sortedCopy(Fixture::read(f.detector->vertexTriangles(), n, device));
    ee = sortedCopy(Fixture::read(f.detector->edgeEdges(), e, device));
    tv = Fixture::read(f.detector->triangleVertices(), t, device);
  };
  f.detector->resetStatus();
  f.detector->detect(f.current.data(), /*mayKeepLists=*/false);
  Lists vt0, ee0, tv0, bvt, bee, btv;
  readAll(vt0, ee0, tv0);
  bruteForce(mesh, wide, bvt, bee, btv);
  EXPECT_EQ(vt0, bvt);
  EXPECT_EQ(ee0, bee);
  EXPECT_EQ(tv0, btv);
  ASSERT_TRUE(f.detector->fits(f.detector->readStatus()));

  // Every particle moves by up to 0.99 s in a random direction: the lists are kept.
  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 0.99f * slack);
  Mesh moved = mesh;
  for (Vec3& p : moved.current) {
    const Vec3 dir{normal(rng), normal(rng), normal(rng)};
    p += dir * (uniform(rng) / length(dir));
  }
  DeviceBuffer<Vec3> x1(device, moved.current);
  f.detector->detect(x1.data(), /*mayKeepLists=*/true);
  EXPECT_EQ(f.detector->readStatus().listBuilds, 1) << "the lists should have been kept";
  Lists vt1, ee1, tv1;
  readAll(vt1, ee1, tv1);
  EXPECT_EQ(vt1, vt0);
  EXPECT_EQ(ee1, ee0);
  EXPECT_EQ(tv1, tv0);
  // The guarantee: every pair nearer than the margin now is in the kept lists...
  Lists nvt, nee, ntv, ovt, oee, otv;
  bruteForce(moved, kept, nvt, nee, ntv);
  EXPECT_EQ(missingPairs(nvt, vt1), 0u);
  EXPECT_EQ(missingPairs(nee, ee1), 0u);
  EXPECT_EQ(missingPairs(ntv, tv1), 0u);
  // ... among them pairs that lists found at the margin alone would have missed.
  bruteForce(mesh, kept, ovt, oee, otv);
  EXPECT_GT(missingPairs(nvt, ovt) + missingPairs(nee, oee), 0u)
      << "the motion should bring pairs within the margin that were not";
  EXPECT_GT(pairCount(nvt), 100u);

  // One particle a little farther than s: the lists are built again, at the new positions.
  Mesh far = moved;
  far.current[size_t(n / 2)] += Vec3{0.0f, 0.0f, 1.02f * slack};
  DeviceBuffer<Vec3> x2(device, far.current);
  f.detector->detect(x2.data(), /*mayKeepLists=*/true);
  EXPECT_EQ(f.detector->readStatus().listBuilds, 2) << "the lists should have been built";
  Lists vt2, ee2, tv2;
  readAll(vt2, ee2, tv2);
  bruteForce(far, wide, bvt, bee, btv);
  EXPECT_EQ(vt2, bvt);
  EXPECT_EQ(ee2, bee);
  EXPECT_EQ(tv2, btv);
  // A detection that may not keep them builds them whatever moved (here: nothing).
  f.detector->detect(x2.data(), /*mayKeepLists=*/false);
  EXPECT_EQ(f.detector->readStatus().listBuilds, 3);
  f.detector->detect(x2.data(), /*mayKeepLists=*/true);
  EXPECT_EQ(f.detector->readStatus().listBuilds, 3);
}

TEST(SelfContactDetector, KeptListsHoldEveryPairWithinTheMarginOnCpu) {
  expectKeptListsHoldEveryPairWithinTheMargin(*test::openCpu());
}

TEST(SelfContactDetector, KeptListsHoldEveryPairWithinTheMarginOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  expectKeptListsHoldEveryPairWithinTheMargin(*gpu);
}

TEST(SelfContactDetector, NegativeReuseSlackIsRejected) {
  auto cpu = test::openCpu();
  const Mesh mesh = crumpledGrid(4, 1);
  const Settings negative{0.05f, 0.0f, 2, DetectionTraversal::Cooperative, 16, -1e-3f};
  EXPECT_THROW(Fixture(*cpu, mesh, negative), Error);
}

// The one-thread traversals visit the BVH in the same preorder, and the cooperative one writes
// its lists in that order, so all three give identical lists, in order.
TEST(SelfContactDetector, TraversalsGiveIdenticalListsInOrder) {
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const Mesh mesh = crumpledGrid(12, seed);
  Fixture a(*cpu, mesh, {0.05f, 0.0f, 2, DetectionTraversal::Stackless, 64});
  a.detector->detect(a.current.data());
  const int n = mesh.desc.numParticles(), e = mesh.desc.numEdges();
  for (DetectionTraversal traversal :
       {DetectionTraversal::Cooperative, DetectionTraversal::SharedStack}) {
    SCOPED_TRACE(traversalName(traversal));
    Fixture b(*cpu, mesh, {0.05f, 0.0f, 2, traversal, 64});
    b.detector->detect(b.current.data());
    EXPECT_EQ(Fixture::read(a.detector->vertexTriangles(), n, *cpu),
              Fixture::read(b.detector->vertexTriangles(), n, *cpu));
    EXPECT_EQ(Fixture::read(a.detector->edgeEdges(), e, *cpu),
              Fixture::read(b.detector->edgeEdges(), e, *cpu));
  }
}

// On CUDA the cooperative traversal gives, for every number of lanes per query, the lists and
// counts of the one-thread traversal on the CPU, in the same order.
TEST(SelfContactDetector, CooperativeListsOnCudaEqualCpuListsForEveryGroupSize) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = test::testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (WEFT_TEST_SEED replays it)");
  const Mesh mesh = crumpledGrid(24, seed);
  const int n = mesh.desc.numParticles(), e = mesh.desc.numEdges();
  Fixture a(*cpu, mesh, {0.04f, 0.0f, 2, DetectionTraversal::Stackless, 256});
  a.detector->detect(a.current.data());
  std::vector<int> vtCounts, eeCounts;
  const Lists vt = Fixture::read(a.detector->vertexTriangles(), n, *cpu, &vtCounts);
  const Lists ee = Fixture::read(a.detector->edgeEdges(), e, *cpu, &eeCounts);
  ASSERT_TRUE(a.detector->fits(a.detector->readStatus())) << "the lists must hold every pair";
  for (int lanes : kGroupSizes) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    LaunchPolicy policy;
    policy.setOverride(KernelId::vertex_triangle_collision_detection_cooperative, lanes);
    policy.setOverride(KernelId::edge_colliding_edges_detection_cooperative, lanes);
    gpu->setLaunchPolicy(policy);
    Fixture b(*gpu, mesh, {0.04f, 0.0f, 2, DetectionTraversal::Cooperative, 256});
    b.detector->detect(b.current.data());
    std::vector<int> gotVtCounts, gotEeCounts;
    EXPECT_EQ(Fixture::read(b.detector->vertexTriangles(), n, *gpu, &gotVtCounts), vt);
    EXPECT_EQ(Fixture::read(b.detector->edgeEdges(), e, *gpu, &gotEeCounts), ee);
    EXPECT_EQ(gotVtCounts, vtCounts);
    EXPECT_EQ(gotEeCounts, eeCounts);
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

}  // namespace
}  // namespace weft
