// BodyBlock: the 6×6 Newton system of one rigid body in the AVBD solve (rigid_avbd_spec §5.2),
//   [ H_ll   H_alᵀ ] [Δx]   [f]
//   [ H_al   H_aa  ] [Δθ] = [τ]
// with Δx the world COM translation and Δθ the world rotation vector of the body's increment.
// H_al has ANGULAR rows and LINEAR columns. Every energy term adds into one; the solve
// (kernels/rigid_body.h) factors it. Blocks are kept symmetric (H_ll, H_aa) by construction.
#pragma once

#include <cstring>

#include "kernels/math.h"

namespace weft {

struct BodyBlock {
  Vec3 force;   // f [N]
  Vec3 torque;  // τ [N·m]
  Mat33 hll;    // ∂²E/∂x² [N/m]
  Mat33 hal;    // angular rows × linear columns [N]
  Mat33 haa;    // ∂²E/∂θ² [N·m]

  /// What a tile's tree keeps of a part between its additions (kernels/runtime/one_lane_tree.h,
  /// TreeWords): f, τ, the lower triangles of H_ll and H_aa and all of H_al, the words the solve
  /// reads (solveBodyBlock, kernels/rigid_body.h). A block loaded back has zero upper triangles,
  /// so a tree's sum holds only its lower ones, and the upper ones' arithmetic in the parts is
  /// dead (docs/PERFORMANCE.md, "The body tile's tree keeps the lower triangles").
  static constexpr int kTreeWords = 27;
  WEFT_HD void toTreeWords(unsigned (&w)[kTreeWords]) const {
    float f[kTreeWords] = {force.x, force.y, force.z, torque.x, torque.y, torque.z};
    int n = 6;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j <= i; ++j) f[n++] = hll.m[i][j];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) f[n++] = hal.m[i][j];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j <= i; ++j) f[n++] = haa.m[i][j];
    memcpy(w, f, sizeof(f));
  }
  WEFT_HD static BodyBlock fromTreeWords(const unsigned (&w)[kTreeWords]) {
    float f[kTreeWords];
    memcpy(f, w, sizeof(f));
    BodyBlock b{};
    b.force = {f[0], f[1], f[2]};
    b.torque = {f[3], f[4], f[5]};
    int n = 6;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j <= i; ++j) b.hll.m[i][j] = f[n++];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) b.hal.m[i][j] = f[n++];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j <= i; ++j) b.haa.m[i][j] = f[n++];
    return b;
  }

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
  /// Both products as cross products: column j of [r]×K is r × (column j of K), and row i of
  /// [r]×ᵀK[r]× is r × (row i of [r]×K). The skew matrix's zeros would otherwise be multiplied
  /// out (IEEE arithmetic may not drop 0·x), 135 operations where these take 54.
  WEFT_HD void addPointSpring(const Vec3& r, const Mat33& K, const Vec3& F) {
    force += F;
    torque += cross(r, F);
    hll += K;
    Mat33 rK;
    for (int j = 0; j < 3; ++j) {
      const Vec3 column = cross(r, Vec3{K.m[0][j], K.m[1][j], K.m[2][j]});
      rK.m[0][j] = column.x;
      rK.m[1][j] = column.y;
      rK.m[2][j] = column.z;
    }
    hal += rK;
    for (int i = 0; i < 3; ++i) {
      const Vec3 row = cross(r, Vec3{rK.m[i][0], rK.m[i][1], rK.m[i][2]});
      haa.m[i][0] += row.x;
      haa.m[i][1] += row.y;
      haa.m[i][2] += row.z;
    }
  }
};

}  // namespace weft
