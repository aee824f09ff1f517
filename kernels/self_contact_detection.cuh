// Self-contact detection (cloth_vbd_spec §6): which triangles each vertex is near, which edges
// each edge is near, and — transposed — which vertices each triangle is near.
//
//   vertex_triangle_collision_detection[_stackless|_cooperative]   per vertex: BVH query of the
//       triangle tree with the box x_v ± margin; a triangle is a candidate when it does not
//       contain v, is not in v's topological filter row, both are in the same world (or either
//       is global, world -1), its closest point is nearer than the margin, and (optionally) it
//       was not nearer than the rest-exclusion radius in the rest shape.
//   edge_colliding_edges_detection[_stackless|_cooperative]        per edge, the same for edges
//       against the edge tree (segment box ± margin; no shared endpoint).
//   collect_triangle_colliding_vertices               one thread per vertex: appends v to the
//       list of each triangle it found (claimed slots are unordered ...)
//   sort_triangle_colliding_vertices                  one thread per triangle: ... so each list
//       is then sorted by vertex id, which makes every list deterministic.
//   measure_list_drift                                one thread per particle: whether the lists
//       found last may be kept (below).
//
// Kept lists (SelfContactDetectorSettings::reuseSlack s > 0): the queries then use the distance
// margin + 2s, and a later detection keeps the lists while no particle has moved more than s since
// they were found. A pair's closest-point distance changes by at most the largest motion of one
// side plus that of the other, so a pair nearer than the margin now was nearer than margin + 2s
// then: the kept lists hold every pair that a detection with the margin would find now (a
// superset; farther pairs exert no force and truncate nothing they need not). measure_list_drift
// raises a device flag when some particle moved farther; every detection kernel reads the flag
// (kernels/list_gate.h) and returns at once when it is clear, so the launches stay in the frame
// graph. In a batch of worlds each world has its own flag and keeps its lists as it would alone.
//
// Worlds (ModelDesc::worldRanges): the trees are forests (collision/lbvh.h) and every query
// starts at its own world's subtree root, so a batch costs each world what it costs alone,
// wherever the worlds are placed, and finds the same candidates in the same order.
//
// Storage never loses a candidate silently: each primitive owns `capacity` slots; the true count
// is always written (it may exceed the capacity), and the largest count seen goes to the contact
// status with an atomic max. The solver compares it with the capacity after each frame and, if
// anything did not fit, grows the buffers and runs the frame again (solver/simulation.cpp).
// Candidate lists are in BVH preorder, which both traversals share, so they are identical for
// every traversal and block size.
//
// The three traversals: the reference keeps a 33-entry stack per thread in shared memory (132 B,
// which is why it prefers tiny blocks); the stackless variant follows the BVH's escape indices
// and needs no stack at all (collision/lbvh.h); the cooperative variant (the default) gives each
// query a group of lanes that walk the tree together and test candidates in parallel
// (bvhQueryGroup in kernels/lbvh.cuh), so a query's chain of dependent loads is divided by the
// group size and the GPU holds that many times more threads. It writes its lists in the same
// preorder as the one-thread traversals, so all three give identical lists.
#pragma once

#include "kernels/closest_point.h"
#include "kernels/contact_filter_lookup.h"
#include "kernels/lbvh.cuh"
#include "kernels/list_gate.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/small_sort.h"

namespace weft {

/// Stack entries of the shared-memory traversal: 33 ints = 132 B per thread, as the reference.
inline constexpr int kTraversalStackEntries = 33;

/// Counters the detection kernels raise (atomic max) and the host reads after a frame.
struct ContactStatus {
  int maxVertexTriangle = 0;  // largest candidate count of a vertex
  int maxEdgeEdge = 0;        // largest candidate count of an edge
  int maxTriangleVertex = 0;  // largest count of vertices near one triangle
  int listBuilds = 0;         // detections that built the lists (the others kept them: reuseSlack)
  // 1: the particle records or the truncation pairs of a detection passed 2^31, so their 32-bit
  // offsets wrapped (nothing was written past the buffers; the run cannot go on).
  int recordsWrapped = 0;
  // Vertex–triangle plus edge–edge candidates, summed over detections: 64 bits, since a frame of
  // a large batch passes 2^31 (cloth_rollers: 121,752 a world and detection, 30 detections).
  long long totalPairs = 0;
};

/// A fixed-stride candidate list per primitive: slots [i·capacity, i·capacity + capacity).
struct CandidateLists {
  int capacity = 0;
  int* __restrict__ items = nullptr;   // (numPrimitives x capacity) candidate ids
  int* __restrict__ counts = nullptr;  // (numPrimitives) true counts (may exceed capacity)
};

/// What both vertex–triangle detection kernels read and write.
struct VertexTriangleQuery {
  BvhView triangleBvh;
  float margin;                            // detection distance [m]
  float restExclusion;                     // rest-shape exclusion radius [m] (0: off)
  const Vec3* __restrict__ positions;      // (numParticles) [m]
  const Vec3* __restrict__ restPositions;  // (numParticles) [m]
  const int* __restrict__ worlds;          // (numParticles) world id, -1 global; or null
                                           // (a forest's queries start at their world's root)
  const Int3* __restrict__ triangles;      // (numTriangles)
  const int* __restrict__ filterOffsets;   // (numParticles + 1) topological filter rows
  const int* __restrict__ filterValues;    //   sorted excluded triangle ids
  CandidateLists out;                      // per vertex: triangle ids
  ContactStatus* __restrict__ status;
  ListGate gate = {};  // kept lists: only the worlds whose lists are built again

  /// Whether this detection keeps vertex v's list (uniform over v's group of lanes).
  WEFT_HD bool keepsLists(int v) const { return !gate.builds(v); }
  /// The node v's query starts at: its world's subtree root in a forest, else the root.
  WEFT_HD int root(int v) const { return worlds ? triangleBvh.rootOf(worlds[v]) : 0; }

  /// Whether triangle t (whose box overlaps v's query box) is a candidate of vertex v at x.
  WEFT_HD bool accepts(int v, const Vec3& x, int t) const {
    const Int3 tri = triangles[t];
    if (tri.x == v || tri.y == v || tri.z == v) return false;
    if (worlds && worlds[v] != worlds[tri.x] && worlds[v] >= 0 && worlds[tri.x] >= 0) return false;
    if (sortedRowContains(filterValues, filterOffsets[v], filterOffsets[v + 1], t)) return false;
    const TriangleClosestPoint c =
        closestPointOnTriangle(x, positions[tri.x], positions[tri.y], positions[tri.z]);
    if (!(length(x - c.point) < margin)) return false;
    if (restExclusion > 0.0f) {
      const TriangleClosestPoint r = closestPointOnTriangle(
          restPositions[v], restPositions[tri.x], restPositions[tri.y], restPositions[tri.z]);
      if (length(restPositions[v] - r.point) < restExclusion) return false;
    }
    return true;
  }

  WEFT_HD void queryBox(int v, Vec3& lower, Vec3& upper) const {
    const Vec3 reach{margin, margin, margin};
    lower = positions[v] - reach;
    upper = positions[v] + reach;
  }

  /// The true count of vertex v, to the list and the status.
  WEFT_HD void record(int v, int count) const {
    out.counts[v] = count;
    atomicMaxInt(&status->maxVertexTriangle, count);
    if (count > 0) atomicAddLongLong(&status->totalPairs, count);
  }

  template <class Traverse>
  WEFT_HD void run(int v, Traverse&& traverse) const {
    if (keepsLists(v)) return;
    const Vec3 x = positions[v];
    Vec3 lower, upper;
    queryBox(v, lower, upper);
    int count = 0;
    traverse(root(v), lower, upper, [&](int t) {
      if (!accepts(v, x, t)) return;
      if (count < out.capacity) out.items[v * out.capacity + count] = t;
      ++count;
    });
    record(v, count);
  }
};

struct VertexTriangleCollisionDetection {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection;
  static constexpr int kSharedBytesPerThread = kTraversalStackEntries * int(sizeof(int));
  VertexTriangleQuery query;
  WEFT_HD void operator()(int v, unsigned char* scratch) const {
    query.run(v, [&](int root, const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryShortStackFrom(query.triangleBvh, root, lo, hi, reinterpret_cast<int*>(scratch),
                             kTraversalStackEntries, visit);
    });
  }
};

struct VertexTriangleCollisionDetectionStackless {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection_stackless;
  VertexTriangleQuery query;
  WEFT_HD void operator()(int v) const {
    query.run(v, [&](int root, const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryStacklessFrom(query.triangleBvh, root, lo, hi, visit);
    });
  }
};

/// What both edge–edge detection kernels read and write.
struct EdgeEdgeQuery {
  BvhView edgeBvh;
  float margin;                            // [m]
  float restExclusion;                     // [m] (0: off)
  float parallelEpsilon;                   // degenerate-edge threshold of closestPointEdgeEdge
  const Vec3* __restrict__ positions;      // (numParticles)
  const Vec3* __restrict__ restPositions;  // (numParticles)
  const int* __restrict__ worlds;          // (numParticles) or null
  const Int4* __restrict__ edges;          // (numEdges) (o0, o1, v0, v1); the segment is v0–v1
  const int* __restrict__ filterOffsets;   // (numEdges + 1)
  const int* __restrict__ filterValues;    //   sorted excluded edge ids
  const unsigned char* __restrict__ quietEdges;  // (numEdges) 1: queries nothing, or null
  CandidateLists out;                            // per edge: edge ids
  ContactStatus* __restrict__ status;
  ListGate gate = {};  // as VertexTriangleQuery::gate

  /// Whether this detection keeps edge a's list.
  WEFT_HD bool keepsLists(const Int4& a) const { return !gate.builds(a.z); }
  /// The node edge a's query starts at (VertexTriangleQuery::root).
  WEFT_HD int root(const Int4& a) const { return worlds ? edgeBvh.rootOf(worlds[a.z]) : 0; }

  /// Whether edge f (whose box overlaps e's query box) is a candidate of edge e = (a.z, a.w)
  /// with endpoints p1, q1.
  WEFT_HD bool accepts(int e, const Int4& a, const Vec3& p1, const Vec3& q1, int f) const {
    if (f == e) return false;
    const Int4 b = edges[f];
    if (b.z == a.z || b.z == a.w || b.w == a.z || b.w == a.w) return false;
    if (worlds && worlds[a.z] != worlds[b.z] && worlds[a.z] >= 0 && worlds[b.z] >= 0) return false;
    if (sortedRowContains(filterValues, filterOffsets[e], filterOffsets[e + 1], f)) return false;
    const EdgeEdgeClosest c =
        closestPointEdgeEdge(p1, q1, positions[b.z], positions[b.w], parallelEpsilon);
    if (!(c.distance < margin)) return false;
    if (restExclusion > 0.0f) {
      const EdgeEdgeClosest r =
          closestPointEdgeEdge(restPositions[a.z], restPositions[a.w], restPositions[b.z],
                               restPositions[b.w], parallelEpsilon);
      if (r.distance < restExclusion) return false;
    }
    return true;
  }

  WEFT_HD void queryBox(const Vec3& p1, const Vec3& q1, Vec3& lower, Vec3& upper) const {
    const Vec3 reach{margin, margin, margin};
    lower = cwiseMin(p1, q1) - reach;
    upper = cwiseMax(p1, q1) + reach;
  }

  /// The true count of edge e, to the list and the status.
  WEFT_HD void record(int e, int count) const {
    out.counts[e] = count;
    atomicMaxInt(&status->maxEdgeEdge, count);
    if (count > 0) atomicAddLongLong(&status->totalPairs, count);
  }

  /// Whether edge e looks for its neighbours (quiet edges do not: held, their pairs are in the
  /// lists of the edges that move).
  WEFT_HD bool queries(int e) const { return !quietEdges || !quietEdges[e]; }

  template <class Traverse>
  WEFT_HD void run(int e, Traverse&& traverse) const {
    const Int4 a = edges[e];
    if (keepsLists(a)) return;
    if (!queries(e)) {
      record(e, 0);
      return;
    }
    const Vec3 p1 = positions[a.z], q1 = positions[a.w];
    Vec3 lower, upper;
    queryBox(p1, q1, lower, upper);
    int count = 0;
    traverse(root(a), lower, upper, [&](int f) {
      if (!accepts(e, a, p1, q1, f)) return;
      if (count < out.capacity) out.items[e * out.capacity + count] = f;
      ++count;
    });
    record(e, count);
  }
};

struct EdgeCollidingEdgesDetection {
  static constexpr KernelId kId = KernelId::edge_colliding_edges_detection;
  static constexpr int kSharedBytesPerThread = kTraversalStackEntries * int(sizeof(int));
  EdgeEdgeQuery query;
  WEFT_HD void operator()(int e, unsigned char* scratch) const {
    query.run(e, [&](int root, const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryShortStackFrom(query.edgeBvh, root, lo, hi, reinterpret_cast<int*>(scratch),
                             kTraversalStackEntries, visit);
    });
  }
};

struct EdgeCollidingEdgesDetectionStackless {
  static constexpr KernelId kId = KernelId::edge_colliding_edges_detection_stackless;
  EdgeEdgeQuery query;
  WEFT_HD void operator()(int e) const {
    query.run(e, [&](int root, const Vec3& lo, const Vec3& hi, auto&& visit) {
      bvhQueryStacklessFrom(query.edgeBvh, root, lo, hi, visit);
    });
  }
};

/// A group of lanes per vertex walks the triangle tree together (bvhQueryGroup) and tests the
/// overlapping triangles in parallel; the accepted triangles are then written in BVH preorder
/// (bvhWriteSortedPrimitives), so the lists equal the one-thread traversals' for every group
/// size. `hits` holds the unsorted leaf indices in between (same shape as out.items).
struct VertexTriangleCollisionDetectionCooperative {
  static constexpr KernelId kId = KernelId::vertex_triangle_collision_detection_cooperative;
  static constexpr int kSharedIntsPerLane = kCooperativeStackIntsPerLane;
  VertexTriangleQuery query;
  int* __restrict__ hits;  // (numParticles x out.capacity) scratch

  template <class Group>
  WEFT_HD void operator()(const Group& g, int v) const {
    if (query.keepsLists(v)) return;
    const CandidateLists& out = query.out;
    const Vec3 x = query.positions[v];
    Vec3 lower, upper;
    query.queryBox(v, lower, upper);
    int* mine = hits + v * out.capacity;
    const int count =
        bvhQueryGroupFrom(g, query.triangleBvh, query.root(v), lower, upper, mine, out.capacity,
                          [&](int t) { return query.accepts(v, x, t); });
    bvhWriteSortedPrimitives(g, query.triangleBvh, mine, count, out.capacity,
                             out.items + v * out.capacity);
    if (g.rank() == 0) query.record(v, count);
  }
};

/// The same for edges against the edge tree.
struct EdgeCollidingEdgesDetectionCooperative {
  static constexpr KernelId kId = KernelId::edge_colliding_edges_detection_cooperative;
  static constexpr int kSharedIntsPerLane = kCooperativeStackIntsPerLane;
  EdgeEdgeQuery query;
  int* __restrict__ hits;  // (numEdges x out.capacity) scratch

  template <class Group>
  WEFT_HD void operator()(const Group& g, int e) const {
    const Int4 a = query.edges[e];
    if (query.keepsLists(a)) return;
    if (!query.queries(e)) {
      if (g.rank() == 0) query.record(e, 0);
      return;
    }
    const CandidateLists& out = query.out;
    const Vec3 p1 = query.positions[a.z], q1 = query.positions[a.w];
    Vec3 lower, upper;
    query.queryBox(p1, q1, lower, upper);
    int* mine = hits + e * out.capacity;
    const int count =
        bvhQueryGroupFrom(g, query.edgeBvh, query.root(a), lower, upper, mine, out.capacity,
                          [&](int f) { return query.accepts(e, a, p1, q1, f); });
    bvhWriteSortedPrimitives(g, query.edgeBvh, mine, count, out.capacity,
                             out.items + e * out.capacity);
    if (g.rank() == 0) query.record(e, count);
  }
};

/// Transpose of the vertex–triangle lists: each vertex appends itself to its triangles' lists.
/// Reads: vertex lists. Writes: triangle lists (slots claimed with an atomic add, so unordered;
/// sort_triangle_colliding_vertices orders them). Triangle counts must be zero beforehand
/// (compute_tri_aabbs zeroes them). With kept lists it also records where the lists were found.
struct CollectTriangleCollidingVertices {
  static constexpr KernelId kId = KernelId::collect_triangle_colliding_vertices;
  CandidateLists vertexTriangles;                // per vertex: triangle ids (read)
  CandidateLists triangleVertices;               // per triangle: vertex ids (appended)
  ListGate gate;                                 // as VertexTriangleQuery::gate
  const Vec3* __restrict__ positions = nullptr;  // (numParticles) or null: where the lists are
  Vec3* __restrict__ listPositions = nullptr;    //   found, copied to listPositions [m]

  WEFT_HD void operator()(int v) const {
    if (!gate.builds(v)) return;
    if (listPositions) listPositions[v] = positions[v];
    const int n = vertexTriangles.counts[v] < vertexTriangles.capacity ? vertexTriangles.counts[v]
                                                                       : vertexTriangles.capacity;
    for (int k = 0; k < n; ++k) {
      const int t = vertexTriangles.items[v * vertexTriangles.capacity + k];
      const int slot = atomicAddInt(&triangleVertices.counts[t], 1);
      if (slot < triangleVertices.capacity)
        triangleVertices.items[t * triangleVertices.capacity + slot] = v;
    }
  }
};

/// Sorts each triangle's vertex list by vertex id (insertion sort: lists are short) and records
/// the largest count. Which vertices a list holds is deterministic; this makes the order so too.
/// (If a list overflowed, which vertices got its slots was not deterministic — but an overflow
/// makes the solver grow the buffers and run the frame again, so such a frame never counts.)
struct SortTriangleCollidingVertices {
  static constexpr KernelId kId = KernelId::sort_triangle_colliding_vertices;
  CandidateLists triangleVertices;
  ContactStatus* __restrict__ status;  // also counts the detections that built lists (of the
                                       // world of triangle 0, in a batch)
  const Int3* __restrict__ triangles;  // (numTriangles), for the gate
  ListGate gate;                       // as VertexTriangleQuery::gate

  WEFT_HD void operator()(int t) const {
    if (!gate.builds(triangles[t].x)) return;
    if (t == 0) atomicAddInt(&status->listBuilds, 1);
    const int count = triangleVertices.counts[t];
    const int n = count < triangleVertices.capacity ? count : triangleVertices.capacity;
    sortAscending(triangleVertices.items + t * triangleVertices.capacity, n);
    atomicMaxInt(&status->maxTriangleVertex, count);
  }
};

/// measure_list_drift: raises particle i's world's flag, and the flag of any world, when i moved
/// more than the slack s since the lists were found (|x − p|² > s², or not a number: the lists'
/// positions are invalid until the first detection). The flags are zeroed before, and only ever
/// set to 1 here, so the result does not depend on the order; a thread that sees a flag raised
/// already skips its atomic.
struct MeasureListDrift {
  static constexpr KernelId kId = KernelId::measure_list_drift;
  float slackSquared;                      // s² [m²]
  const Vec3* __restrict__ positions;      // (numParticles) x [m]
  const Vec3* __restrict__ listPositions;  // (numParticles) where the lists were found [m]
  const int* __restrict__ worlds;          // (numParticles) world of each particle, or null
  int* __restrict__ stale;                 // (worlds) out: 1 if world w's lists are built again
  int* __restrict__ anyStale;              // (1) out: 1 if some world's are (the trees' refit)

  WEFT_HD void operator()(int i) const {
    const Vec3 d = positions[i] - listPositions[i];
    if (dot(d, d) <= slackSquared) return;
    int* mine = stale + (worlds ? worlds[i] : 0);
    if (*static_cast<const volatile int*>(mine) == 0) atomicMaxInt(mine, 1);
    if (anyStale != mine && *static_cast<const volatile int*>(anyStale) == 0)
      atomicMaxInt(anyStale, 1);
  }
};

}  // namespace weft
