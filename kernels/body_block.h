// BodyBlock: the 6×6 Newton system of one rigid body in the AVBD solve (rigid_avbd_spec §5.2),
//   [ H_ll   H_alᵀ ] [Δx]   [f]
//   [ H_al   H_aa  ] [Δθ] = [τ]
// with Δx the world COM translation and Δθ the world rotation vector of the body's increment.
// H_al has ANGULAR rows and LINEAR columns. Every energy term adds into one; the solve
// (kernels/rigid_body.h) factors it. Blocks are kept symmetric (H_ll, H_aa) by construction.
#pragma once

#include "kernels/math.h"

namespace weft {

struct BodyBlock {
  Vec3 force;   // f [N]
  Vec3 torque;  // τ [N·m]
  Mat33 hll;    // ∂²E/∂x² [N/m]
  Mat33 hal;    // angular rows × linear columns [N]
  Mat33 haa;    // ∂²E/∂θ² [N·m]

  WEFT_HD BodyBlock& operator+=(const BodyBlock& o) {
    force += o.force;
    torque += o.torque;
    hll += o.hll;
    hal += o.hal;
    haa += o.haa;
    return *this;
  }

  /// A point spring acting at world lever arm r (point − COM) with translational stiffness K and
  /// force F on this body: H_ll += K, H_al += [r]×K, H_aa += [r]×ᵀK[r]×, f += F, τ += r × F.
  WEFT_HD void addPointSpring(const Vec3& r, const Mat33& K, const Vec3& F) {
    const Mat33 rx = skew(r);
    force += F;
    torque += cross(r, F);
    hll += K;
    hal += rx * K;
    haa += transpose(rx) * K * rx;
  }
};

/// What a body's tile sums (kernels/avbd.cuh, SolveRigidBodyTileT): a BodyBlock without the upper
/// triangles of H_ll and H_aa, which solveBodyBlock never reads. 27 words instead of 33, so the
/// tile's shuffles, its shared-memory slots and the one-lane tile's levels hold 18% less. Each
/// kept entry is summed by the same additions as in BodyBlock, so the solve sees the same bits.
struct BodyBlockLower {
  Vec3 force;                                           // f [N]
  Vec3 torque;                                          // τ [N·m]
  float hll[6] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};  // (0,0) (1,0) (1,1) (2,0) (2,1) (2,2)
  Mat33 hal;                                            // as BodyBlock::hal
  float haa[6] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};  // likewise

  /// Index of (r, c), c ≤ r, in hll/haa.
  WEFT_HD static constexpr int lower(int r, int c) { return r * (r + 1) / 2 + c; }

  WEFT_HD static BodyBlockLower of(const BodyBlock& b) {
    BodyBlockLower l;
    l.force = b.force;
    l.torque = b.torque;
    l.hal = b.hal;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c <= r; ++c) {
        l.hll[lower(r, c)] = b.hll(r, c);
        l.haa[lower(r, c)] = b.haa(r, c);
      }
    return l;
  }

  /// The full block, the upper triangles mirrored from the lower ones.
  WEFT_HD BodyBlock expand() const {
    BodyBlock b;
    b.force = force;
    b.torque = torque;
    b.hal = hal;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c <= r; ++c) {
        b.hll(r, c) = b.hll(c, r) = hll[lower(r, c)];
        b.haa(r, c) = b.haa(c, r) = haa[lower(r, c)];
      }
    return b;
  }

  WEFT_HD BodyBlockLower& operator+=(const BodyBlockLower& o) {
    force += o.force;
    torque += o.torque;
    for (int k = 0; k < 6; ++k) hll[k] += o.hll[k];
    hal += o.hal;
    for (int k = 0; k < 6; ++k) haa[k] += o.haa[k];
    return *this;
  }
};

}  // namespace weft
