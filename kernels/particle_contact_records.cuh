// Every particle's self-contact pairs as one flat list, rebuilt after each detection
// (collision/self_contact_detector.h): the per-color force gather then reads a particle's pairs
// as a contiguous run of records instead of walking its adjacency and three candidate lists.
//
// Gather order of particle v (cloth_vbd_spec §5.7; the order its contact sum is taken in):
//   1. v's own vertex–triangle list (v is stencil slot 3),
//   2. for each triangle of v (full vertex → triangle adjacency, in order), that triangle's sorted
//      list of vertices near it (v is the triangle's corner `slot`, 0..2),
//   3. for each edge of which v is an endpoint (vertex → edge adjacency entries with slot 2 or 3,
//      in order), that edge's edge–edge list (v is the owner edge's endpoint slot − 2).
//
//   count_particle_self_contacts   one thread per particle: its number of records, and of
//                                  truncation pairs of each kind (below)
//   (one exclusive scan of the three runs of counts, CUB on CUDA, std::exclusive_scan on the
//   CPU: ParticleContactOffsets)
//   write_particle_self_contacts   one thread per particle: writes its records at offsets[v],
//                                  and its truncation pairs
//
// A record is two ints: `partner` and `code` = kind << 28 | id, with kind 0..2 = v is corner
// `kind` of triangle id and partner the vertex near it; kind 3 = v's own vertex–triangle pair with
// triangle partner (id = v); kind 4, 5 = v is endpoint kind − 4 of edge id, partner the other
// edge. Lists that overflowed contribute what they stored (the frame is then run again).
//
// The truncation pairs (kernels/apply_planar_truncation.cuh) are the records of kinds 3 and 4
// alone: every vertex–triangle list entry once (under its vertex) and every edge–edge list entry
// once (under its edge's first endpoint), as a second flat list: first every particle's kind-3
// records, in particle order, then every particle's kind-4 records. The truncation evaluates each
// pair once, whatever its order, so it reads no records of the kinds that repeat a pair for the
// gather (0..2, 5), and a warp's lanes mostly take the same one of the two pair tests. Their
// offsets come from the same scan as the records': the per-particle counts of each kind follow
// the record counts in one buffer, so one scan (two CUB launches) places all three.
#pragma once

#include "kernels/list_gate.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/self_contact_detection.cuh"

namespace weft {

struct ContactRecord {
  int partner;  // vertex (kinds 0..2), triangle (kind 3) or other edge (kinds 4, 5)
  int code;     // kind << 28 | id: the triangle (0..2), v (3) or the own edge (4, 5)

  static constexpr int kKindShift = 28;  // kinds 0..5 stay below the sign bit
  static constexpr int kIdMask = (1 << kKindShift) - 1;
  WEFT_HD int kind() const { return code >> kKindShift; }
  WEFT_HD int id() const { return code & kIdMask; }
  WEFT_HD static ContactRecord make(int kind, int id, int partner) {
    return {partner, (kind << kKindShift) | id};
  }
};

/// The candidate lists and the vertex adjacency the enumeration reads.
struct ParticleContactLists {
  const int* __restrict__ triangleOffsets;  // (numParticles + 1) full vertex → triangle CSR
  const int* __restrict__ triangleEntries;  //   pairs (triangle, slot)
  const int* __restrict__ edgeOffsets;      // (numParticles + 1) full vertex → edge CSR
  const int* __restrict__ edgeEntries;      //   pairs (edge, slot 0..3)
  CandidateLists vertexTriangles;           // per vertex: triangle ids
  CandidateLists triangleVertices;          // per triangle: vertex ids (sorted)
  CandidateLists edgeEdges;                 // per edge: edge ids

  WEFT_HD static int stored(const CandidateLists& l, int i) {
    return l.counts[i] < l.capacity ? l.counts[i] : l.capacity;
  }

  /// Calls emit(record) for every pair of particle v, in gather order.
  template <class Emit>
  WEFT_HD void forEach(int v, Emit&& emit) const {
    for (int j = 0, n = stored(vertexTriangles, v); j < n; ++j)
      emit(ContactRecord::make(3, v, vertexTriangles.items[v * vertexTriangles.capacity + j]));
    for (int a = triangleOffsets[v]; a < triangleOffsets[v + 1]; a += 2) {
      const int t = triangleEntries[a], slot = triangleEntries[a + 1];
      for (int j = 0, n = stored(triangleVertices, t); j < n; ++j)
        emit(ContactRecord::make(slot, t,
                                 triangleVertices.items[t * triangleVertices.capacity + j]));
    }
    for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1]; a += 2) {
      const int e = edgeEntries[a], slot = edgeEntries[a + 1];
      if (slot < 2) continue;  // v is a hinge's opposite vertex here, not an endpoint
      for (int j = 0, n = stored(edgeEdges, e); j < n; ++j)
        emit(ContactRecord::make(4 + slot - 2, e, edgeEdges.items[e * edgeEdges.capacity + j]));
    }
  }

  /// The number of pairs of particle v (what forEach emits), from the list counts alone.
  WEFT_HD int count(int v) const {
    int total = stored(vertexTriangles, v);
    for (int a = triangleOffsets[v]; a < triangleOffsets[v + 1]; a += 2)
      total += stored(triangleVertices, triangleEntries[a]);
    for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1]; a += 2)
      if (edgeEntries[a + 1] >= 2) total += stored(edgeEdges, edgeEntries[a]);
    return total;
  }
  /// The number of v's records of kind 4 (the lists of the edges whose first endpoint v is).
  WEFT_HD int firstEndpointEdgePairs(int v) const {
    int total = 0;
    for (int a = edgeOffsets[v]; a < edgeOffsets[v + 1]; a += 2)
      if (edgeEntries[a + 1] == 2) total += stored(edgeEdges, edgeEntries[a]);
    return total;
  }
};

/// The detector's one exclusive scan of three runs of numParticles + 1 counts, each run's last
/// count 0: every particle's records, then its kind-3 pairs, then its kind-4 pairs (the
/// truncation's; the kind-4 ones of the edges whose first endpoint it is). The records' run of v
/// is [scan[v], scan[v + 1]). The pairs are numbered from the records' total R = scan[n] on,
/// the kind-3 ones first, taken mod 2^32 (unsigned subtraction): every pair is also a record of
/// its vertex or first endpoint, so their number is at most R, and exact whenever R did not wrap
/// (R >= 0).
struct ParticleContactOffsets {
  const int* __restrict__ scan = nullptr;  // (3 (numParticles + 1))
  int numParticles = 0;

  /// R: the records' total; negative where the scan wrapped 2^31 within the records.
  WEFT_HD int records() const { return scan[numParticles]; }
  /// Where v's kind-3 pairs start (v = numParticles: their number).
  WEFT_HD int vertexTrianglePair(int v) const { return pairIndex(numParticles + 1 + v); }
  /// Where v's kind-4 pairs start, after every kind-3 one (v = numParticles: all pairs).
  WEFT_HD int edgeEdgePair(int v) const { return pairIndex(2 * (numParticles + 1) + v); }
  WEFT_HD int vertexTrianglePairs() const { return vertexTrianglePair(numParticles); }
  WEFT_HD int pairs() const { return edgeEdgePair(numParticles); }

 private:
  WEFT_HD int pairIndex(int k) const {
    return static_cast<int>(static_cast<unsigned>(scan[k]) -
                            static_cast<unsigned>(scan[numParticles]));
  }
};

/// Where write_particle_self_contacts puts the truncation pairs (null `pairs`: it writes none).
struct TruncationPairsOut {
  ParticleContactOffsets offsets;
  ContactRecord* __restrict__ pairs = nullptr;  // (slots) out
  long long slots = 0;
};

/// Whether [first, end) is a run of a scan that did not wrap and fits a buffer of `slots`: a
/// 32-bit exclusive scan whose total passes 2^31 turns negative where it passes, so some
/// particle's run then starts below 0 or ends before it starts.
WEFT_HD inline bool recordRunFits(long long first, long long end, long long slots) {
  return first >= 0 && end >= first && end <= slots;
}

struct CountParticleSelfContacts {
  static constexpr KernelId kId = KernelId::count_particle_self_contacts;
  ParticleContactLists lists;
  // (3 (numParticles + 1)) out: v's records, its kind-3 and its kind-4 records (the truncation
  // pairs) at v, numParticles + 1 + v and 2 (numParticles + 1) + v (ParticleContactOffsets)
  int* __restrict__ totals;
  int numParticles;
  ListGate gate = {};  // kept lists: only worlds whose lists are built again
  WEFT_HD void operator()(int v) const {
    if (!gate.builds(v)) return;
    const int run = numParticles + 1;
    totals[v] = lists.count(v);
    totals[run + v] = ParticleContactLists::stored(lists.vertexTriangles, v);
    totals[2 * run + v] = lists.firstEndpointEdgePairs(v);
  }
};

struct WriteParticleSelfContacts {
  static constexpr KernelId kId = KernelId::write_particle_self_contacts;
  ParticleContactLists lists;
  const int* __restrict__ offsets;      // (numParticles + 1) the records' runs (their scan)
  ContactRecord* __restrict__ records;  // (recordSlots) out
  long long recordSlots;
  ContactStatus* __restrict__ status;  // raises recordsWrapped where a scan wrapped
  ListGate gate = {};                  // as CountParticleSelfContacts::gate
  TruncationPairsOut truncation = {};
  WEFT_HD void operator()(int v) const {
    if (!gate.builds(v)) return;
    // A particle whose run lies outside a buffer writes nothing and stops the run (the host
    // reads the flag after the frame: SelfContactDetector::counts).
    if (!recordRunFits(offsets[v], offsets[v + 1], recordSlots)) {
      atomicMaxInt(&status->recordsWrapped, 1);
      return;
    }
    ContactRecord* out = records + offsets[v];
    ContactRecord *vertexTriangle = nullptr, *edgeEdge = nullptr;  // v's truncation pairs
    if (const TruncationPairsOut& t = truncation; t.pairs) {
      const ParticleContactOffsets& o = t.offsets;
      if (o.records() < 0 ||
          !recordRunFits(o.vertexTrianglePair(v), o.vertexTrianglePair(v + 1), t.slots) ||
          !recordRunFits(o.edgeEdgePair(v), o.edgeEdgePair(v + 1), t.slots)) {
        atomicMaxInt(&status->recordsWrapped, 1);
        return;
      }
      vertexTriangle = t.pairs + o.vertexTrianglePair(v);
      edgeEdge = t.pairs + o.edgeEdgePair(v);
    }
    lists.forEach(v, [&](const ContactRecord& r) {
      *out++ = r;
      if (!vertexTriangle) return;
      const int kind = r.kind();
      if (kind == 3) *vertexTriangle++ = r;
      if (kind == 4) *edgeEdge++ = r;
    });
  }
};

}  // namespace weft
