// Rest-shape geometry of triangles and hinges, shared by the builders (rest data) and the energy
// kernels (current configuration).
#pragma once

#include "kernels/math.h"

namespace weft {

/// Rest data of triangle (p, q, r) (reference add_triangles): with e1 = normalize(q − p),
/// n = normalize((q − p) × (r − p)), e2 = normalize(n × e1), the 2-D rest edge matrix is
/// Dm = [[e1·(q−p), e1·(r−p)], [e2·(q−p), e2·(r−p)]]; restInverse = Dm⁻¹, area = det(Dm)/2.
/// Returns false (outputs untouched) for a degenerate triangle (area <= 0).
WEFT_HD inline bool triangleRestData(const Vec3& p, const Vec3& q, const Vec3& r,
                                     Mat22& restInverse, float& area) {
  const Vec3 qp = q - p, rp = r - p;
  const Vec3 n = normalizeOrZero(cross(qp, rp));
  const Vec3 e1 = normalizeOrZero(qp);
  const Vec3 e2 = normalizeOrZero(cross(n, e1));
  const float d00 = dot(e1, qp), d01 = dot(e1, rp), d10 = dot(e2, qp), d11 = dot(e2, rp);
  const float det = d00 * d11 - d01 * d10;
  if (!(det > 0.0f)) return false;
  restInverse = {d11 / det, -d01 / det, -d10 / det, d00 / det};
  area = 0.5f * det;
  return true;
}

/// Signed dihedral angle of the hinge (x0 = o0, x1 = o1, x2 = v0, x3 = v1), reference
/// convention: n1 = (x2 − x0) × (x3 − x0), n2 = (x3 − x1) × (x2 − x1), e = x3 − x2,
/// θ = atan2((n̂1 × n̂2)·ê, n̂1·n̂2); 0 for a flat hinge. Returns 0 if the hinge is degenerate
/// (|n1|, |n2| or |e| below 1e-6).
WEFT_HD inline float dihedralAngle(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  const Vec3 n1 = cross(x2 - x0, x3 - x0);
  const Vec3 n2 = cross(x3 - x1, x2 - x1);
  const Vec3 e = x3 - x2;
  const float l1 = length(n1), l2 = length(n2), le = length(e);
  if (l1 < 1e-6f || l2 < 1e-6f || le < 1e-6f) return 0.0f;
  const Vec3 n1h = n1 / l1, n2h = n2 / l2, eh = e / le;
  return atan2f(dot(cross(n1h, n2h), eh), dot(n1h, n2h));
}

}  // namespace weft
