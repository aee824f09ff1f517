// apply_truncation_ts: turns accumulated displacements into positions (cloth_vbd_spec §5.9).
//
// The solve never writes positions: it accumulates Δ since the last collision detection. This
// pass rewrites every position as x = p_cd + trunc(Δ), where trunc scales Δ by the per-vertex
// truncation factor ts (from the planar truncation of self-contact pairs; 1 when there is none)
// and clamps |Δ| to maxDisplacement (0.5·margin·relaxation with self-contact, +inf without).
//
// Reads:  anchor positions p_cd, displacements Δ, truncation factors ts (optional).
// Writes: positions x; displacements Δ (the truncated value); ts reset to 1 for the next pass.
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"

namespace weft {

struct ApplyTruncationTs {
  static constexpr KernelId kId = KernelId::apply_truncation_ts;

  float maxDisplacement;             // [m]; +inf disables the clamp
  const Vec3* __restrict__ anchors;  // (numParticles) p_cd [m]
  float* __restrict__ factors;       // (numParticles) ts in [0, 1], or null (all 1); reset to 1
  Vec3* __restrict__ displacements;  // (numParticles) Δ [m]
  Vec3* __restrict__ positions;      // (numParticles) out: x [m]

  WEFT_HD void operator()(int i) const {
    Vec3 d = displacements[i];
    if (factors) {
      d *= factors[i];
      factors[i] = 1.0f;
      const float len = length(d);
      if (len > maxDisplacement) d *= maxDisplacement / len;
      displacements[i] = d;
    }
    positions[i] = anchors[i] + d;
  }
};

}  // namespace weft
