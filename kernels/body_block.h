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
  Vec3 force;    // f [N]
  Vec3 torque;   // τ [N·m]
  Mat33 hll;     // ∂²E/∂x² [N/m]
  Mat33 hal;     // angular rows × linear columns [N]
  Mat33 haa;     // ∂²E/∂θ² [N·m]

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

}  // namespace weft
