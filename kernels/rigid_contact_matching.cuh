// Contact matching across detections (rigid_avbd_spec §6.4; the reference's
// contact_matching="latest"/"sticky" with rigid_contact_history), as two kernels that run right
// after a detection:
//
//   match_rigid_contacts    one thread per new row: among the previous detection's rows of the
//       same shape pair (found through the previous per-shape row offsets: rows are grouped by
//       the shape that queried them), the one whose saved world midpoint is closest, within
//       `maxDistance` and with normal·normal ≥ `minNormalDot`. Claims it with an atomic max of a
//       key that orders by distance, then by row (so the winner is the same whatever the thread
//       timing: the reference's packed atomic_min claim, made order-independent).
//   replay_sticky_contacts  one thread per new row: match = the candidate if this row won its
//       claim, −2 if it lost, −1 if there was none. With `sticky`, a matched row that is
//       penetrating at the detection pose (n·(P1 − P0) − margins ≤ 0 from its own fresh data)
//       takes the previous row's body-frame points, offsets and normal, so its anchors persist
//       while it keeps matching. Then every row saves its world midpoint for the next detection.
//
// The solver then starts each matched row's λ from the previous row's (history warm start).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/math.h"
#include "kernels/rigid_contact.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"

namespace weft {

/// The previous detection's rows, as saved (solver/rigid_model.h RigidScratch).
struct PreviousContactsView {
  const RigidContact* __restrict__ rows;  // (previous capacity)
  const int* __restrict__ count;          // (1) rows stored
  const int* __restrict__ shapeOffsets;   // (numShapes + 1) first row of each lower shape
  const Vec3* __restrict__ midpoints;     // (previous capacity) world midpoints at their pose
};

/// World midpoint of a row's two skeleton points at the given poses.
WEFT_HD inline Vec3 contactMidpoint(const RigidContact& c, const Transform* poses) {
  const Vec3 p0 = c.body0 >= 0 ? transformPoint(poses[c.body0], c.point0) : c.point0;
  const Vec3 p1 = c.body1 >= 0 ? transformPoint(poses[c.body1], c.point1) : c.point1;
  return 0.5f * (p0 + p1);
}

/// Claim key: larger wins; orders by smaller distance, then smaller row. 0 = unclaimed.
WEFT_HD inline unsigned long long contactClaimKey(float distance, int row) {
  std::uint32_t bits;
  memcpy(&bits, &distance, sizeof(bits));  // distance ≥ 0: bit order = value order
  using Key = unsigned long long;
  return (Key(~bits) << 32) | Key(~std::uint32_t(row));
}

struct MatchRigidContacts {
  static constexpr KernelId kId = KernelId::match_rigid_contacts;

  RigidContactsView contacts;  // the new rows
  PreviousContactsView previous;
  const ShapeGeometry* __restrict__ geometry;  // (numShapes) to find a row's querying shape
  const Transform* __restrict__ poses;         // (numBodies) detection poses
  int* __restrict__ candidate;                 // (capacity) out: best previous row or −1
  float* __restrict__ candidateDistance;       // (capacity) out: its midpoint distance [m]
  unsigned long long* __restrict__ claims;     // (previous capacity) zeroed before the launch
  float maxDistance;                           // [m] (reference 5e-4)
  float minNormalDot;                          // (reference 0.995)

  WEFT_HD void operator()(int r) const {
    if (r >= *contacts.count) return;
    const RigidContact c = contacts.rows[r];
    const Vec3 mid = contactMidpoint(c, poses);
    const int stored = *previous.count;
    // Rows are grouped by the shape that queried them: the lower shape, or for a plane pair the
    // shape that is not the plane (planes query nothing).
    const int query = geometry[c.shape0].type == ShapeType::Plane ? c.shape1 : c.shape0;
    const int begin = previous.shapeOffsets[query];
    const int next = previous.shapeOffsets[query + 1];
    const int end = next < stored ? next : stored;
    int best = -1;
    float bestDistance = maxDistance;
    for (int p = begin; p < end; ++p) {
      const RigidContact& old = previous.rows[p];
      if (old.shape1 != c.shape1) continue;
      if (dot(old.normal, c.normal) < minNormalDot) continue;
      const float d = length(previous.midpoints[p] - mid);
      if (d <= bestDistance && (best < 0 || d < bestDistance)) {
        best = p;
        bestDistance = d;
      }
    }
    candidate[r] = best;
    candidateDistance[r] = bestDistance;
    if (best >= 0) atomicMaxIntegral(&claims[best], contactClaimKey(bestDistance, r));
  }
};

struct ReplayStickyContacts {
  static constexpr KernelId kId = KernelId::replay_sticky_contacts;

  RigidContact* __restrict__ rows;  // (capacity) the new rows, in/out
  const int* __restrict__ count;    // (1)
  PreviousContactsView previous;
  const Transform* __restrict__ poses;            // (numBodies) detection poses
  const int* __restrict__ candidate;              // (capacity)
  const float* __restrict__ candidateDistance;    // (capacity)
  const unsigned long long* __restrict__ claims;  // (previous capacity)
  int* __restrict__ matchIndex;                   // (capacity) out
  Vec3* __restrict__ midpoints;                   // (capacity) out: saved for the next detection
  bool sticky;

  WEFT_HD void operator()(int r) const {
    if (r >= *count) return;
    RigidContact c = rows[r];
    int match = -1;
    const int p = candidate[r];
    if (p >= 0) {
      match = claims[p] == contactClaimKey(candidateDistance[r], r) ? p : -2;
    }
    if (sticky && match >= 0) {
      const Vec3 p0 = c.body0 >= 0 ? transformPoint(poses[c.body0], c.point0) : c.point0;
      const Vec3 p1 = c.body1 >= 0 ? transformPoint(poses[c.body1], c.point1) : c.point1;
      if (dot(c.normal, p1 - p0) - (c.margin0 + c.margin1) <= 0.0f) {
        const RigidContact& old = previous.rows[match];
        c.point0 = old.point0;
        c.point1 = old.point1;
        c.offset0 = old.offset0;
        c.offset1 = old.offset1;
        c.normal = old.normal;
        rows[r] = c;
      }
    }
    matchIndex[r] = match;
    midpoints[r] = contactMidpoint(c, poses);
  }
};

}  // namespace weft
