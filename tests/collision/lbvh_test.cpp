// Lbvh on both backends: tree validity against a host reference, both traversals against brute
// force (in the same order, for every stack capacity), refit, determinism and CPU == CUDA.
// Inputs are fresh random soups and cloth grids (flat, crumpled, folded through itself), sizes
// 0, 1, 2, 3, block ± 1 and large, and degenerate sets (all centres equal). Set WEFT_TEST_SEED to
// replay a failure; every randomized check traces its seed.
#include "collision/lbvh.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kernels/compute_aabbs.cuh"
#include "kernels/lbvh.cuh"
#include "kernels/runtime/buffer.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/launch.h"
#include "math_test_support.h"
#include "test_support.h"

namespace weft {
namespace {

using test::testSeed;  // math_test_support.h

// ---- Inputs ------------------------------------------------------------------------------------

struct Boxes {
  std::vector<Vec3> lowers, uppers;  // (n) each
  int size() const { return int(lowers.size()); }
};

struct Mesh {
  std::vector<Vec3> positions;  // (numVertices)
  std::vector<Int3> triangles;  // (numTriangles)
};

float uniform(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}
Vec3 uniformVec(std::mt19937& rng, float lo, float hi) {
  return {uniform(rng, lo, hi), uniform(rng, lo, hi), uniform(rng, lo, hi)};
}

/// n independent triangles with centres in [0, spread]³ and vertices within ±size of them.
Mesh triangleSoup(std::mt19937& rng, int n, float spread, float size) {
  Mesh m;
  for (int t = 0; t < n; ++t) {
    const Vec3 c = uniformVec(rng, 0.0f, spread);
    for (int k = 0; k < 3; ++k) m.positions.push_back(c + uniformVec(rng, -size, size));
    m.triangles.push_back({3 * t, 3 * t + 1, 3 * t + 2});
  }
  return m;
}

/// A cloth grid of (nx+1)×(ny+1) vertices in the plane z = 0, two triangles per cell (the layout
/// of ClothBuilder::addClothGrid: vertex (x, y) = y·(nx+1) + x).
Mesh gridMesh(int nx, int ny, float cell) {
  Mesh m;
  for (int y = 0; y <= ny; ++y)
    for (int x = 0; x <= nx; ++x) m.positions.push_back({float(x) * cell, float(y) * cell, 0.0f});
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      const int v00 = y * (nx + 1) + x, v10 = v00 + 1, v01 = v00 + nx + 1, v11 = v01 + 1;
      m.triangles.push_back({v00, v10, v11});
      m.triangles.push_back({v00, v11, v01});
    }
  }
  return m;
}

/// The grid with every vertex displaced randomly by up to `amplitude` (crumpled).
Mesh crumpledGrid(std::mt19937& rng, int nx, int ny, float cell, float amplitude) {
  Mesh m = gridMesh(nx, ny, cell);
  for (Vec3& p : m.positions) p += uniformVec(rng, -amplitude, amplitude);
  return m;
}

/// The grid rolled along y into a prolate cycloid, a curve with loops, so the cloth passes
/// through itself; slightly tilted so that no crossing is axis-aligned.
Mesh foldedGrid(int nx, int ny, float cell) {
  Mesh m = gridMesh(nx, ny, cell);
  const float length = float(ny) * cell;
  for (Vec3& p : m.positions) {
    const float t = 4.0f * std::numbers::pi_v<float> * p.y / length;
    const float radius = 0.35f * length / (2.0f * std::numbers::pi_v<float>);
    p = {p.x,
         0.25f * length * t / (2.0f * std::numbers::pi_v<float>)-radius * std::sin(t) + 0.03f * p.x,
         -radius * std::cos(t) + 0.02f * p.x};
  }
  return m;
}

Boxes hostTriangleBoxes(const Mesh& m) {
  Boxes b;
  for (const Int3& t : m.triangles) {
    const Vec3 a = m.positions[t.x], c = m.positions[t.y], d = m.positions[t.z];
    b.lowers.push_back(
        {std::min({a.x, c.x, d.x}), std::min({a.y, c.y, d.y}), std::min({a.z, c.z, d.z})});
    b.uppers.push_back(
        {std::max({a.x, c.x, d.x}), std::max({a.y, c.y, d.y}), std::max({a.z, c.z, d.z})});
  }
  return b;
}

/// n boxes whose centres are all `centre`, of random sizes (all Morton codes equal).
Boxes sameCentreBoxes(std::mt19937& rng, int n, Vec3 centre, bool zeroSize) {
  Boxes b;
  for (int i = 0; i < n; ++i) {
    const Vec3 h = zeroSize ? Vec3{} : uniformVec(rng, 0.0f, 1.0f);
    b.lowers.push_back(centre - h);
    b.uppers.push_back(centre + h);
  }
  return b;
}

/// Random query boxes around the scene, of sizes from 1e-4 to 0.6 of its extent, plus queries
/// equal to leaf boxes and to single leaf corners (closed intervals: they must touch).
Boxes randomQueries(std::mt19937& rng, const Boxes& leaves, int count) {
  Boxes q;
  if (leaves.size() == 0) {
    for (int i = 0; i < count; ++i) {
      q.lowers.push_back(uniformVec(rng, -1.0f, 0.0f));
      q.uppers.push_back(uniformVec(rng, 0.0f, 1.0f));
    }
    return q;
  }
  Vec3 lo = leaves.lowers[0], hi = leaves.uppers[0];
  for (int i = 0; i < leaves.size(); ++i) {
    lo = selectMin(lo, leaves.lowers[i]);
    hi = selectMax(hi, leaves.uppers[i]);
  }
  const float extent = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, 1e-3f});
  std::uniform_int_distribution<int> pick(0, leaves.size() - 1);
  for (int i = 0; i < count; ++i) {
    const int kind = i % 4;
    if (kind == 0) {
      const int p = pick(rng);
      q.lowers.push_back(leaves.lowers[p]);
      q.uppers.push_back(leaves.uppers[p]);
    } else if (kind == 1) {
      const int p = pick(rng);
      q.lowers.push_back(leaves.uppers[p]);
      q.uppers.push_back(leaves.uppers[p]);
    } else {
      const Vec3 c = lo + Vec3{uniform(rng, -0.1f, 1.1f) * (hi.x - lo.x),
                               uniform(rng, -0.1f, 1.1f) * (hi.y - lo.y),
                               uniform(rng, -0.1f, 1.1f) * (hi.z - lo.z)};
      const float h = extent * std::pow(10.0f, uniform(rng, -4.0f, std::log10(0.6f)));
      const Vec3 half{h * uniform(rng, 0.2f, 1.0f), h * uniform(rng, 0.2f, 1.0f),
                      h * uniform(rng, 0.2f, 1.0f)};
      q.lowers.push_back(c - half);
      q.uppers.push_back(c + half);
    }
  }
  return q;
}

/// Boxes uploaded to a device (the tree takes device pointers).
struct DeviceBoxes {
  DeviceBuffer<Vec3> lowers, uppers;
  DeviceBoxes(const Device& device, const Boxes& b)
      : lowers(device, b.lowers), uppers(device, b.uppers) {}
};

// ---- Tree validity against a host reference -----------------------------------------------------

bool sameBits(const Vec3& a, const Vec3& b) {
  return std::memcmp(&a, &b, sizeof(Vec3)) == 0;
}

testing::AssertionResult isValidTree(const LbvhHostCopy& t, const Boxes& boxes) {
  const int n = boxes.size();
  const size_t nodes = n > 0 ? size_t(2 * n - 1) : 0, internal = n > 1 ? size_t(n - 1) : 0;
  if (t.numLeaves != n) return testing::AssertionFailure() << "numLeaves " << t.numLeaves;
  if (t.nodeLowers.size() != nodes || t.nodeUppers.size() != nodes ||
      t.nodeParent.size() != nodes || t.nodeEscape.size() != nodes ||
      t.nodeLeft.size() != internal || t.nodeRight.size() != internal ||
      t.leafPrimitive.size() != size_t(n) || t.nodeBoxes.size() != 2 * nodes)
    return testing::AssertionFailure() << "array sizes do not match " << n << " leaves";
  if (n == 0) return testing::AssertionSuccess();

  // Node records (what the cooperative traversal reads): the node's box, bit for bit, with its
  // children (internal node) or its primitive and −1 (leaf).
  for (size_t node = 0; node < nodes; ++node) {
    const BvhNodeHalf lo = t.nodeBoxes[2 * node], hi = t.nodeBoxes[2 * node + 1];
    const bool leaf = node >= internal;
    const int wantLo = leaf ? t.leafPrimitive[node - internal] : t.nodeLeft[node];
    const int wantHi = leaf ? -1 : t.nodeRight[node];
    if (!sameBits(lo.corner, t.nodeLowers[node]) || !sameBits(hi.corner, t.nodeUppers[node]) ||
        lo.link != wantLo || hi.link != wantHi)
      return testing::AssertionFailure() << "node " << node << " record differs from its box or "
                                         << "links (" << lo.link << ", " << hi.link << ")";
  }

  // Leaf i holds a primitive; together they are a permutation; leaf boxes are the inputs.
  std::vector<int> seen(n, 0);
  for (int i = 0; i < n; ++i) {
    const int p = t.leafPrimitive[i];
    if (p < 0 || p >= n || seen[p]++)
      return testing::AssertionFailure() << "leafPrimitive is not a permutation at leaf " << i;
    const size_t node = size_t(n - 1 + i);
    if (!sameBits(t.nodeLowers[node], boxes.lowers[p]) ||
        !sameBits(t.nodeUppers[node], boxes.uppers[p]))
      return testing::AssertionFailure() << "leaf " << i << " box differs from primitive " << p;
  }

  // Preorder from the root, left first: every node exactly once; children valid and distinct
  // from the root; parents consistent; boxes are the exact union of the children.
  if (t.nodeParent[0] != -1)
    return testing::AssertionFailure() << "root parent " << t.nodeParent[0];
  std::vector<int> visits(nodes, 0), preorder, stack{0};
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    if (visits[node]++) return testing::AssertionFailure() << "node " << node << " reached twice";
    preorder.push_back(node);
    if (node >= n - 1) continue;
    const int l = t.nodeLeft[node], r = t.nodeRight[node];
    for (int c : {l, r}) {
      if (c <= 0 || c >= int(nodes) || c == node)
        return testing::AssertionFailure() << "node " << node << " has child " << c;
      if (t.nodeParent[c] != node)
        return testing::AssertionFailure()
               << "node " << c << " has parent " << t.nodeParent[c] << ", expected " << node;
    }
    const Vec3 lo = t.nodeLowers[node], hi = t.nodeUppers[node];
    const Vec3 unionLo = selectMin(t.nodeLowers[l], t.nodeLowers[r]);
    const Vec3 unionHi = selectMax(t.nodeUppers[l], t.nodeUppers[r]);
    if (!(lo == unionLo) || !(hi == unionHi))
      return testing::AssertionFailure() << "node " << node << " box is not its children's union";
    stack.push_back(r);
    stack.push_back(l);
  }
  for (size_t node = 0; node < nodes; ++node)
    if (visits[node] != 1) return testing::AssertionFailure() << "node " << node << " unreachable";

  // Leaves appear in preorder in sorted order; escape = next preorder node after the subtree.
  std::vector<int> subtreeSize(nodes, 1), position(nodes);
  for (size_t k = 0; k < preorder.size(); ++k) position[preorder[k]] = int(k);
  for (auto it = preorder.rbegin(); it != preorder.rend(); ++it)
    if (*it < n - 1)
      subtreeSize[*it] = 1 + subtreeSize[t.nodeLeft[*it]] + subtreeSize[t.nodeRight[*it]];
  int lastLeaf = -1;
  for (int node : preorder) {
    if (node >= n - 1) {
      if (node - (n - 1) != lastLeaf + 1)
        return testing::AssertionFailure() << "leaf " << node - (n - 1) << " out of order";
      lastLeaf = node - (n - 1);
    }
    const int next = position[node] + subtreeSize[node];
    const int expected = next < int(nodes) ? preorder[next] : -1;
    if (t.nodeEscape[node] != expected)
      return testing::AssertionFailure()
             << "node " << node << " escape " << t.nodeEscape[node] << ", expected " << expected;
  }

  // Each internal node's range (itself and nodeRangeEnd) is exactly its subtree's leaves: the
  // refit computes boxes from these ranges alone.
  if (t.nodeRangeEnd.size() != internal)
    return testing::AssertionFailure() << "nodeRangeEnd has " << t.nodeRangeEnd.size();
  std::vector<int> subtreeFirst(nodes), subtreeLast(nodes);
  for (auto it = preorder.rbegin(); it != preorder.rend(); ++it) {
    const int node = *it;
    if (node >= n - 1) {
      subtreeFirst[node] = subtreeLast[node] = node - (n - 1);
    } else {
      subtreeFirst[node] = subtreeFirst[t.nodeLeft[node]];
      subtreeLast[node] = subtreeLast[t.nodeRight[node]];
    }
  }
  for (int node = 0; node < n - 1; ++node) {
    const int end = t.nodeRangeEnd[node];
    if (std::min(node, end) != subtreeFirst[node] || std::max(node, end) != subtreeLast[node])
      return testing::AssertionFailure()
             << "node " << node << " range [" << std::min(node, end) << ", " << std::max(node, end)
             << "], subtree [" << subtreeFirst[node] << ", " << subtreeLast[node] << "]";
  }
  return testing::AssertionSuccess();
}

// ---- Queries on the device ----------------------------------------------------------------------

struct QueryArgs {
  BvhView bvh;
  int stopAfter;                    // stop each query after this many hits (< 0: never)
  const Vec3* __restrict__ lowers;  // (numQueries)
  const Vec3* __restrict__ uppers;  // (numQueries)
  const int* __restrict__ offsets;  // (numQueries + 1) into hits, or null (count only)
  int* __restrict__ counts;         // (numQueries) out
  int* __restrict__ hits;           // (offsets[numQueries]) out, in visit order
  int* __restrict__ scratch;        // (offsets[numQueries]) the group traversal's unsorted hits
  int root = 0;                     // where every query starts (BvhView::rootOf)

  template <class Traverse>
  WEFT_HD void run(int q, Traverse&& traverse) const {
    int n = 0;
    traverse(lowers[q], uppers[q], [&](int primitive) -> bool {
      if (offsets) hits[offsets[q] + n] = primitive;
      ++n;
      return stopAfter < 0 || n < stopAfter;
    });
    counts[q] = n;
  }
};

struct StacklessQuery {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection_stackless;
  QueryArgs args;
  WEFT_HD void operator()(int q) const {
    args.run(q, [&](const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryStacklessFrom(args.bvh, args.root, lo, hi, visit);
    });
  }
};

struct ZeroCapacityStackQuery {
  static constexpr KernelId kId = KernelId::edge_colliding_edges_detection_stackless;
  QueryArgs args;
  WEFT_HD void operator()(int q) const {
    args.run(q, [&](const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryShortStackFrom(args.bvh, args.root, lo, hi, nullptr, 0, visit);
    });
  }
};

template <int kCapacity>
struct ShortStackQuery {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection;
  static constexpr int kSharedBytesPerThread = kCapacity * int(sizeof(int));
  QueryArgs args;
  WEFT_HD void operator()(int q, unsigned char* scratch) const {
    args.run(q, [&](const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryShortStackFrom(args.bvh, args.root, lo, hi, reinterpret_cast<int*>(scratch),
                             kCapacity, visit);
    });
  }
};

/// bvhQueryGroup with kIntsPerLane stack entries per lane (1: the stack cannot even hold the
/// root's children, so every query falls back to the one-lane subtree walk), then the hits in
/// preorder (bvhWriteSortedPrimitives). Lanes per query: the policy's entry for the kernel id.
template <int kIntsPerLane>
struct GroupQuery {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection_cooperative;
  static constexpr int kSharedIntsPerLane = kIntsPerLane;
  QueryArgs args;
  template <class Group>
  WEFT_HD void operator()(const Group& g, int q) const {
    const int capacity = args.offsets ? args.offsets[q + 1] - args.offsets[q] : 0;
    int* scratch = args.offsets ? args.scratch + args.offsets[q] : nullptr;
    const int n = bvhQueryGroupFrom(g, args.bvh, args.root, args.lowers[q], args.uppers[q], scratch,
                                    capacity, [](int) { return true; });
    if (args.offsets)
      bvhWriteSortedPrimitives(g, args.bvh, scratch, n, capacity, args.hits + args.offsets[q]);
    if (g.rank() == 0) args.counts[q] = n;
  }
};

enum class Traversal { Stackless, Stack0, Stack1, Stack2, Stack33, Group1, Group2, Group32 };
constexpr Traversal kTraversals[] = {Traversal::Stackless, Traversal::Stack0,  Traversal::Stack1,
                                     Traversal::Stack2,    Traversal::Stack33, Traversal::Group1,
                                     Traversal::Group2,    Traversal::Group32};
/// The traversals that support stopping early (a visitor returning false).
constexpr Traversal kStoppableTraversals[] = {Traversal::Stackless, Traversal::Stack0,
                                              Traversal::Stack1, Traversal::Stack2,
                                              Traversal::Stack33};
const char* traversalName(Traversal t) {
  switch (t) {
    case Traversal::Stackless:
      return "stackless";
    case Traversal::Stack0:
      return "stack capacity 0";
    case Traversal::Stack1:
      return "stack capacity 1";
    case Traversal::Stack2:
      return "stack capacity 2";
    case Traversal::Stack33:
      return "stack capacity 33";
    case Traversal::Group1:
      return "group, 1 stack entry per lane";
    case Traversal::Group2:
      return "group, 2 stack entries per lane";
    case Traversal::Group32:
      return "group, 32 stack entries per lane";
  }
  return "?";
}

void launchQuery(const Device& device, Traversal t, int n, const QueryArgs& args) {
  switch (t) {
    case Traversal::Stackless:
      launch(device, n, StacklessQuery{args});
      break;
    case Traversal::Stack0:
      launch(device, n, ZeroCapacityStackQuery{args});
      break;
    case Traversal::Stack1:
      launch(device, n, ShortStackQuery<1>{args});
      break;
    case Traversal::Stack2:
      launch(device, n, ShortStackQuery<2>{args});
      break;
    case Traversal::Stack33:
      launch(device, n, ShortStackQuery<33>{args});
      break;
    case Traversal::Group1:
      launchGroup(device, n, GroupQuery<1>{args});
      break;
    case Traversal::Group2:
      launchGroup(device, n, GroupQuery<2>{args});
      break;
    case Traversal::Group32:
      launchGroup(device, n, GroupQuery<32>{args});
      break;
  }
}

/// Every query's hits in visit order: a counting pass, then a writing pass.
std::vector<std::vector<int>> runQueries(const Device& device, const Lbvh& bvh,
                                         const Boxes& queries, Traversal t, int stopAfter = -1,
                                         int root = 0) {
  const int n = queries.size();
  DeviceBuffer<Vec3> lowers(device, queries.lowers), uppers(device, queries.uppers);
  DeviceBuffer<int> counts(device, size_t(n));
  launchQuery(device, t, n,
              {bvh.view(), stopAfter, lowers.data(), uppers.data(), nullptr, counts.data(), nullptr,
               nullptr, root});
  const std::vector<int> c = counts.download();
  std::vector<int> offsets(n + 1, 0);
  for (int q = 0; q < n; ++q) offsets[q + 1] = offsets[q] + c[q];
  DeviceBuffer<int> d_offsets(device, offsets);
  DeviceBuffer<int> hits(device, size_t(std::max(offsets[n], 1)));
  DeviceBuffer<int> scratch(device, size_t(std::max(offsets[n], 1)));
  launchQuery(device, t, n,
              {bvh.view(), stopAfter, lowers.data(), uppers.data(), d_offsets.data(), counts.data(),
               hits.data(), scratch.data(), root});
  const std::vector<int> h = hits.download();
  std::vector<std::vector<int>> result(n);
  for (int q = 0; q < n; ++q) result[q].assign(h.begin() + offsets[q], h.begin() + offsets[q + 1]);
  return result;
}

/// Brute force: every box overlapping the query, in the order the traversal must visit them
/// (preorder = sorted leaf order).
std::vector<std::vector<int>> bruteForce(const Boxes& leaves, const Boxes& queries,
                                         const LbvhHostCopy& tree) {
  std::vector<int> leafOf(leaves.size());
  for (int i = 0; i < leaves.size(); ++i) leafOf[tree.leafPrimitive[i]] = i;
  std::vector<std::vector<int>> result(queries.size());
  for (int q = 0; q < queries.size(); ++q) {
    for (int p = 0; p < leaves.size(); ++p) {
      const Vec3 a = leaves.lowers[p], b = leaves.uppers[p];
      const Vec3 c = queries.lowers[q], d = queries.uppers[q];
      if (a.x <= d.x && c.x <= b.x && a.y <= d.y && c.y <= b.y && a.z <= d.z && c.z <= b.z)
        result[q].push_back(p);
    }
    std::sort(result[q].begin(), result[q].end(),
              [&](int x, int y) { return leafOf[x] < leafOf[y]; });
  }
  return result;
}

void expectQueriesMatchBruteForce(const Device& device, const Lbvh& bvh, const Boxes& leaves,
                                  const Boxes& queries) {
  const LbvhHostCopy tree = bvh.download();
  const auto expected = bruteForce(leaves, queries, tree);
  for (Traversal t : kTraversals) {
    SCOPED_TRACE(traversalName(t));
    const auto got = runQueries(device, bvh, queries, t);
    for (int q = 0; q < queries.size(); ++q)
      ASSERT_EQ(got[q], expected[q]) << "query " << q << " of " << queries.size();
  }
}

/// Builds a tree over `boxes` on `device`, checks it and its queries.
void expectBuildAndQueriesCorrect(const Device& device, const Boxes& boxes, std::mt19937& rng,
                                  int numQueries = 200) {
  SCOPED_TRACE(std::to_string(boxes.size()) + " leaves");
  DeviceBoxes d(device, boxes);
  Lbvh bvh(device, boxes.size());
  bvh.build(d.lowers.data(), d.uppers.data());
  ASSERT_TRUE(isValidTree(bvh.download(), boxes));
  expectQueriesMatchBruteForce(device, bvh, boxes, randomQueries(rng, boxes, numQueries));
}

// ---- Tests (each check runs on the CPU and, where a GPU is visible, on CUDA) --------------------

void checkComputeAabbs(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Mesh& m :
       {triangleSoup(rng, 1000, 5.0f, 0.5f), crumpledGrid(rng, 20, 17, 0.1f, 0.2f)}) {
    const int nt = int(m.triangles.size());
    DeviceBuffer<Vec3> positions(device, m.positions);
    DeviceBuffer<Int3> triangles(device, m.triangles);
    DeviceBuffer<Vec3> lowers(device, size_t(nt)), uppers(device, size_t(nt));
    launch(device, nt,
           ComputeTriangleAabbs{positions.data(), triangles.data(), lowers.data(), uppers.data()});
    const Boxes expected = hostTriangleBoxes(m);
    const auto lo = lowers.download(), hi = uppers.download();
    for (int t = 0; t < nt; ++t) {
      ASSERT_TRUE(lo[t] == expected.lowers[t] && hi[t] == expected.uppers[t]) << "triangle " << t;
    }
    // Edges: each triangle's first side as (o0, o1, v0, v1) with the segment v0–v1.
    std::vector<Int4> edges;
    for (const Int3& t : m.triangles) edges.push_back({t.z, -1, t.x, t.y});
    DeviceBuffer<Int4> d_edges(device, edges);
    launch(device, nt,
           ComputeEdgeAabbs{positions.data(), d_edges.data(), lowers.data(), uppers.data()});
    const auto elo = lowers.download(), ehi = uppers.download();
    for (int e = 0; e < nt; ++e) {
      const Vec3 a = m.positions[edges[e].z], b = m.positions[edges[e].w];
      const Vec3 l{std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
      const Vec3 u{std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
      ASSERT_TRUE(elo[e] == l && ehi[e] == u) << "edge " << e;
    }
  }
}

void checkSizes(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int n : {0, 1, 2, 3, 4, 5, 17, 255, 256, 257, 20000}) {
    expectBuildAndQueriesCorrect(device, hostTriangleBoxes(triangleSoup(rng, n, 10.0f, 0.3f)), rng,
                                 n > 5000 ? 100 : 200);
  }
}

void checkDegenerateSets(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int n : {2, 3, 256, 257, 3000}) {
    {
      SCOPED_TRACE("all centres equal");
      expectBuildAndQueriesCorrect(device, sameCentreBoxes(rng, n, {0.5f, -2.0f, 1.0f}, false),
                                   rng);
    }
    {
      SCOPED_TRACE("all boxes the same point");
      expectBuildAndQueriesCorrect(device, sameCentreBoxes(rng, n, {0.0f, 0.0f, 0.0f}, true), rng);
    }
  }
  // Two tight clusters far apart: many equal Morton codes within each.
  Boxes two = sameCentreBoxes(rng, 500, {-100.0f, 0.0f, 0.0f}, false);
  const Boxes other = sameCentreBoxes(rng, 501, {100.0f, 5.0f, 0.0f}, false);
  two.lowers.insert(two.lowers.end(), other.lowers.begin(), other.lowers.end());
  two.uppers.insert(two.uppers.end(), other.uppers.begin(), other.uppers.end());
  expectBuildAndQueriesCorrect(device, two, rng);
}

void checkClothMeshes(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  {
    SCOPED_TRACE("flat grid");
    expectBuildAndQueriesCorrect(device, hostTriangleBoxes(gridMesh(40, 31, 0.05f)), rng, 400);
  }
  {
    SCOPED_TRACE("crumpled grid");
    expectBuildAndQueriesCorrect(device, hostTriangleBoxes(crumpledGrid(rng, 40, 31, 0.05f, 0.08f)),
                                 rng, 400);
  }
  {
    SCOPED_TRACE("folded grid");
    expectBuildAndQueriesCorrect(device, hostTriangleBoxes(foldedGrid(30, 80, 0.05f)), rng, 400);
  }
}

/// Sets a tenth of the box coordinates to −0 or +0 (both signs within a node): a union's zero
/// sign depends on the order it is formed in, so this checks that the refit's does not.
void withSignedZeros(std::mt19937& rng, Boxes& boxes) {
  for (int i = 0; i < boxes.size(); ++i)
    for (int a = 0; a < 3; ++a)
      if (uniform(rng, 0.0f, 1.0f) < 0.1f) {
        const float zero = uniform(rng, 0.0f, 1.0f) < 0.5f ? -0.0f : 0.0f;
        boxes.lowers[i][a] = std::min(boxes.lowers[i][a], zero);
        boxes.uppers[i][a] = std::max(boxes.uppers[i][a], zero);
        if (boxes.lowers[i][a] == 0.0f) boxes.lowers[i][a] = zero;
        if (boxes.uppers[i][a] == 0.0f) boxes.uppers[i][a] = zero;
      }
}

void checkEarlyStop(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Boxes boxes = hostTriangleBoxes(triangleSoup(rng, 2000, 4.0f, 0.4f));
  DeviceBoxes d(device, boxes);
  Lbvh bvh(device, boxes.size());
  bvh.build(d.lowers.data(), d.uppers.data());
  const Boxes queries = randomQueries(rng, boxes, 200);
  for (Traversal t : kStoppableTraversals) {
    SCOPED_TRACE(traversalName(t));
    const auto all = runQueries(device, bvh, queries, t);
    const auto firstThree = runQueries(device, bvh, queries, t, 3);
    for (int q = 0; q < queries.size(); ++q) {
      const std::vector<int> prefix(all[q].begin(),
                                    all[q].begin() + std::min<size_t>(3, all[q].size()));
      ASSERT_EQ(firstThree[q], prefix) << "query " << q;
    }
  }
}

void checkRefit(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  // Sizes around the refit's 32-leaf chunks, and large.
  for (int n : {1, 2, 31, 32, 33, 63, 64, 65, 257, 1025, 5000}) {
    SCOPED_TRACE(std::to_string(n) + " triangles");
    Mesh mesh = triangleSoup(rng, n, 6.0f, 0.3f);
    const Boxes before = hostTriangleBoxes(mesh);
    DeviceBoxes d(device, before);
    Lbvh bvh(device, n);
    bvh.build(d.lowers.data(), d.uppers.data());
    const LbvhHostCopy built = bvh.download();

    for (Vec3& p : mesh.positions) p += uniformVec(rng, -0.5f, 0.5f);
    Boxes after = hostTriangleBoxes(mesh);
    withSignedZeros(rng, after);
    d.lowers.upload(after.lowers);
    d.uppers.upload(after.uppers);
    bvh.refit(d.lowers.data(), d.uppers.data());
    const LbvhHostCopy refitted = bvh.download();
    // Same topology, and boxes that are exactly the bottom-up unions of the new leaf boxes.
    EXPECT_EQ(refitted.nodeLeft, built.nodeLeft);
    EXPECT_EQ(refitted.nodeRight, built.nodeRight);
    EXPECT_EQ(refitted.nodeParent, built.nodeParent);
    EXPECT_EQ(refitted.nodeEscape, built.nodeEscape);
    EXPECT_EQ(refitted.leafPrimitive, built.leafPrimitive);
    ASSERT_TRUE(isValidTree(refitted, after));
    expectQueriesMatchBruteForce(device, bvh, after, randomQueries(rng, after, 200));

    // A second refit gives the same bits.
    bvh.refit(d.lowers.data(), d.uppers.data());
    const LbvhHostCopy again = bvh.download();
    ASSERT_EQ(std::memcmp(again.nodeLowers.data(), refitted.nodeLowers.data(),
                          refitted.nodeLowers.size() * sizeof(Vec3)),
              0);
    ASSERT_EQ(std::memcmp(again.nodeUppers.data(), refitted.nodeUppers.data(),
                          refitted.nodeUppers.size() * sizeof(Vec3)),
              0);
  }
}

void expectIdentical(const LbvhHostCopy& a, const LbvhHostCopy& b) {
  ASSERT_EQ(a.numLeaves, b.numLeaves);
  ASSERT_EQ(a.nodeLowers.size(), b.nodeLowers.size());
  EXPECT_EQ(
      std::memcmp(a.nodeLowers.data(), b.nodeLowers.data(), a.nodeLowers.size() * sizeof(Vec3)), 0);
  EXPECT_EQ(
      std::memcmp(a.nodeUppers.data(), b.nodeUppers.data(), a.nodeUppers.size() * sizeof(Vec3)), 0);
  ASSERT_EQ(a.nodeBoxes.size(), b.nodeBoxes.size());
  EXPECT_EQ(
      std::memcmp(a.nodeBoxes.data(), b.nodeBoxes.data(), a.nodeBoxes.size() * sizeof(BvhNodeHalf)),
      0);
  EXPECT_EQ(a.nodeLeft, b.nodeLeft);
  EXPECT_EQ(a.nodeRight, b.nodeRight);
  EXPECT_EQ(a.nodeParent, b.nodeParent);
  EXPECT_EQ(a.nodeEscape, b.nodeEscape);
  EXPECT_EQ(a.nodeRangeEnd, b.nodeRangeEnd);
  EXPECT_EQ(a.leafPrimitive, b.leafPrimitive);
}

LbvhHostCopy buildOn(const Device& device, const Boxes& boxes) {
  DeviceBoxes d(device, boxes);
  Lbvh bvh(device, boxes.size());
  bvh.build(d.lowers.data(), d.uppers.data());
  return bvh.download();
}

/// Input sets for the determinism checks: a soup, a flat and a crumpled cloth, equal centres.
std::vector<Boxes> determinismInputs(std::mt19937& rng) {
  return {hostTriangleBoxes(triangleSoup(rng, 257, 3.0f, 0.2f)),
          hostTriangleBoxes(triangleSoup(rng, 20000, 10.0f, 0.1f)),
          hostTriangleBoxes(gridMesh(50, 40, 0.02f)),
          hostTriangleBoxes(crumpledGrid(rng, 50, 40, 0.02f, 0.03f)),
          sameCentreBoxes(rng, 1000, {1.0f, 2.0f, 3.0f}, false)};
}

void checkDeterminism(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Boxes& boxes : determinismInputs(rng)) {
    SCOPED_TRACE(std::to_string(boxes.size()) + " leaves");
    expectIdentical(buildOn(device, boxes), buildOn(device, boxes));
  }
}

/// A forest in one tree: worlds of different sizes (one empty, one of a single box, two identical
/// worlds in the same place). A query from world w's root visits exactly what the same query
/// visits in a tree of world w's boxes alone, in the same order, for every traversal; a tree with
/// one world given explicitly is the tree without worlds.
void checkForest(const Device& device) {
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Boxes soup = hostTriangleBoxes(triangleSoup(rng, 300, 2.0f, 0.2f));
  std::vector<Boxes> worlds = {soup, Boxes{}, soup,
                               sameCentreBoxes(rng, 1, {0.5f, 0.5f, 0.5f}, false),
                               hostTriangleBoxes(crumpledGrid(rng, 20, 15, 0.1f, 0.05f))};
  Boxes all;
  std::vector<int> begin = {0};
  for (const Boxes& w : worlds) {
    all.lowers.insert(all.lowers.end(), w.lowers.begin(), w.lowers.end());
    all.uppers.insert(all.uppers.end(), w.uppers.begin(), w.uppers.end());
    begin.push_back(all.size());
  }
  DeviceBoxes d(device, all);
  Lbvh forest(device, all.size(), begin);
  forest.build(d.lowers.data(), d.uppers.data());
  const LbvhHostCopy tree = forest.download();
  ASSERT_TRUE(isValidTree(tree, all));
  ASSERT_EQ(tree.worldRoot.size(), worlds.size());
  EXPECT_EQ(tree.worldRoot[1], -1);              // no primitives
  EXPECT_GE(tree.worldRoot[3], all.size() - 1);  // one primitive: a leaf
  for (size_t w = 0; w < worlds.size(); ++w) {
    if (worlds[w].size() == 0) continue;
    SCOPED_TRACE("world " + std::to_string(w));
    DeviceBoxes own(device, worlds[w]);
    Lbvh alone(device, worlds[w].size());
    alone.build(own.lowers.data(), own.uppers.data());
    const Boxes queries = randomQueries(rng, worlds[w], 150);
    for (Traversal t : kTraversals) {
      SCOPED_TRACE(traversalName(t));
      auto got = runQueries(device, forest, queries, t, -1, tree.worldRoot[w]);
      const auto expected = runQueries(device, alone, queries, t);
      for (auto& hits : got)
        for (int& p : hits) p -= begin[w];
      for (int q = 0; q < queries.size(); ++q) ASSERT_EQ(got[q], expected[q]) << "query " << q;
    }
  }
  // One world given explicitly builds the same tree as no worlds.
  const Boxes& last = worlds.back();
  DeviceBoxes l(device, last);
  Lbvh one(device, last.size(), {0, last.size()});
  one.build(l.lowers.data(), l.uppers.data());
  LbvhHostCopy a = one.download();
  EXPECT_EQ(a.worldRoot, std::vector<int>{0});
  a.worldRoot.clear();
  expectIdentical(a, buildOn(device, last));
  EXPECT_THROW(Lbvh(device, 10, {0, 5}), Error);
  EXPECT_THROW(Lbvh(device, 10, {0, 6, 4, 10}), Error);
}

TEST(Lbvh, ForestQueriesFromAWorldsRootMatchItsOwnTreeOnCpu) {
  checkForest(*test::openCpu());
}
TEST(Lbvh, ForestQueriesFromAWorldsRootMatchItsOwnTreeOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkForest(*gpu);
}

TEST(Lbvh, ComputeAabbsAreExactBoundsOnCpu) {
  checkComputeAabbs(*test::openCpu());
}
TEST(Lbvh, ComputeAabbsAreExactBoundsOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkComputeAabbs(*gpu);
}

TEST(Lbvh, BuildIsValidAndQueriesMatchBruteForceForEverySizeOnCpu) {
  checkSizes(*test::openCpu());
}
TEST(Lbvh, BuildIsValidAndQueriesMatchBruteForceForEverySizeOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkSizes(*gpu);
}

TEST(Lbvh, DegenerateSetsBuildAndQueryCorrectlyOnCpu) {
  checkDegenerateSets(*test::openCpu());
}
TEST(Lbvh, DegenerateSetsBuildAndQueryCorrectlyOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkDegenerateSets(*gpu);
}

TEST(Lbvh, ClothMeshQueriesMatchBruteForceOnCpu) {
  checkClothMeshes(*test::openCpu());
}
TEST(Lbvh, ClothMeshQueriesMatchBruteForceOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkClothMeshes(*gpu);
}

TEST(Lbvh, VisitorReturningFalseStopsTheQueryOnCpu) {
  checkEarlyStop(*test::openCpu());
}
TEST(Lbvh, VisitorReturningFalseStopsTheQueryOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkEarlyStop(*gpu);
}

TEST(Lbvh, RefitKeepsTopologyAndGivesExactBoxesOnCpu) {
  checkRefit(*test::openCpu());
}
TEST(Lbvh, RefitKeepsTopologyAndGivesExactBoxesOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkRefit(*gpu);
}

TEST(Lbvh, TwoBuildsAreBitIdenticalOnCpu) {
  checkDeterminism(*test::openCpu());
}
TEST(Lbvh, TwoBuildsAreBitIdenticalOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  checkDeterminism(*gpu);
}

TEST(Lbvh, CudaBuildIsBitIdenticalToCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Boxes& boxes : determinismInputs(rng)) {
    SCOPED_TRACE(std::to_string(boxes.size()) + " leaves");
    expectIdentical(buildOn(*gpu, boxes), buildOn(*cpu, boxes));
  }
}

// Every launch size the tuner may pick gives the same tree (the build has no block-size
// dependence: atomics are min/max and arrival counters).
TEST(Lbvh, CudaBuildIsIdenticalForEveryBlockSize) {
  WEFT_REQUIRE_CUDA(gpu);
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Boxes boxes = hostTriangleBoxes(triangleSoup(rng, 5000, 5.0f, 0.2f));
  const LbvhHostCopy reference = buildOn(*gpu, boxes);
  for (int block : kBlockSizes) {
    SCOPED_TRACE("block " + std::to_string(block));
    LaunchPolicy policy;
    for (KernelId id : {KernelId::lbvh_scene_bounds, KernelId::lbvh_morton_codes,
                        KernelId::lbvh_build_hierarchy, KernelId::lbvh_escape_indices})
      policy.setOverride(id, block);
    gpu->setLaunchPolicy(policy);
    expectIdentical(buildOn(*gpu, boxes), reference);
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

// The refit's two group kernels give the same bits for every number of lanes per item, equal to
// the CPU's one-lane refit, on boxes with zeros of both signs (whose union's sign would depend
// on the reduction order if the refit did not make it +0).
TEST(Lbvh, CudaRefitIsIdenticalForEveryGroupSizeAndToCpu) {
  WEFT_REQUIRE_CUDA(gpu);
  auto cpu = test::openCpu();
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  Boxes boxes = hostTriangleBoxes(triangleSoup(rng, 5000, 5.0f, 0.2f));
  withSignedZeros(rng, boxes);
  const LbvhHostCopy reference = buildOn(*cpu, boxes);
  ASSERT_TRUE(isValidTree(reference, boxes));
  for (int lanes : kGroupSizes) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    LaunchPolicy policy;
    policy.setOverride(KernelId::lbvh_refit_leaves, lanes);
    policy.setOverride(KernelId::lbvh_refit_nodes, lanes);
    gpu->setLaunchPolicy(policy);
    expectIdentical(buildOn(*gpu, boxes), reference);
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

// The group traversal finds every overlapping leaf, in preorder, for every number of lanes per
// query and every stack size (including stacks too small for the root's children, where each
// lane walks its subtrees alone).
TEST(Lbvh, GroupQueriesMatchBruteForceForEveryGroupSizeOnCuda) {
  WEFT_REQUIRE_CUDA(gpu);
  const unsigned seed = testSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Boxes boxes = hostTriangleBoxes(triangleSoup(rng, 3000, 4.0f, 0.4f));
  DeviceBoxes d(*gpu, boxes);
  Lbvh bvh(*gpu, boxes.size());
  bvh.build(d.lowers.data(), d.uppers.data());
  const Boxes queries = randomQueries(rng, boxes, 300);
  const auto expected = bruteForce(boxes, queries, bvh.download());
  for (int lanes : kGroupSizes) {
    LaunchPolicy policy;
    policy.setOverride(KernelId::vertex_triangle_collision_detection_cooperative, lanes);
    gpu->setLaunchPolicy(policy);
    for (Traversal t : {Traversal::Group1, Traversal::Group2, Traversal::Group32}) {
      SCOPED_TRACE(std::string(traversalName(t)) + ", lanes " + std::to_string(lanes));
      const auto got = runQueries(*gpu, bvh, queries, t);
      for (int q = 0; q < queries.size(); ++q) ASSERT_EQ(got[q], expected[q]) << "query " << q;
    }
  }
  gpu->setLaunchPolicy(LaunchPolicy{});
}

TEST(Lbvh, RejectsNegativeLeafCount) {
  auto cpu = test::openCpu();
  EXPECT_THROW(Lbvh(*cpu, -1), Error);
}

}  // namespace
}  // namespace weft
