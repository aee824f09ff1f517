// What a collision shape's type means geometrically, in one place: the closest-surface-point query
// in the shape's local frame, and the shape's box at a world pose (the broad phases'). Contact
// generation (cloth_vbd_spec §5.8) maps a particle into the frame, queries, and stores the surface
// point (body frame) and the normal (rotated to world) as the contact record. A new shape type
// adds its case here, its pairs in kernels/rigid_narrow_phase.h, its validation in
// solver/shape_checks.cpp and its USD prim in apps/frame_writer.cpp (docs/ARCHITECTURE.md).
//
// Conventions (kernels/shape.h): plane z = 0 with normal +Z, infinite, "inside" is z < 0; box
// centred at the origin with half extents; sphere at the origin; capsule with its axis segment
// z ∈ [−halfHeight, halfHeight] and radius.
// Every query returns a signed distance (> 0 outside, < 0 inside), the closest surface point and
// the unit outward normal there, with the invariant
//   localPoint = surfacePoint + distance·normal,
// so the normal points towards the query point when it is outside and away from it inside.
// Inside a box the point leaves through the nearest face (reference behaviour; for a convex box
// that is also the exact nearest surface point). Degenerate queries (a sphere's centre, a point on
// a capsule's axis) pick a fixed valid direction, so the normal is always unit and never NaN.
#pragma once

#include "kernels/math.h"
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"

namespace weft {

struct ShapeQuery {
  float distance;     // signed distance to the surface [m]: > 0 outside, < 0 inside
  Vec3 surfacePoint;  // closest point on the surface, local frame
  Vec3 normal;        // unit outward normal at that point, local frame (points towards the query
                      // point when outside)
};

/// Query against a solid ball of `radius` around `center` (a sphere, or a capsule around the
/// nearest point of its axis). `fallbackNormal` is used when the point is at the centre.
WEFT_HD inline ShapeQuery queryRoundedPoint(const Vec3& center, float radius,
                                            const Vec3& localPoint, const Vec3& fallbackNormal) {
  const Vec3 offset = localPoint - center;
  const float d = length(offset);
  const Vec3 normal = d > 1e-20f ? offset / d : fallbackNormal;
  return {d - radius, center + radius * normal, normal};
}

WEFT_HD inline ShapeQuery queryBox(const Vec3& halfExtents, const Vec3& p) {
  const Vec3 clamped = cwiseMin(cwiseMax(p, -halfExtents), halfExtents);
  const Vec3 outside = p - clamped;
  const float d = length(outside);
  if (d > 1e-20f) return {d, clamped, outside / d};
  // Inside (or on the surface): leave through the face with the smallest depth h_i − |p_i|.
  int axis = 0;
  float depth = halfExtents.x - fabsf(p.x);
  for (int i = 1; i < 3; ++i) {
    const float di = halfExtents[i] - fabsf(p[i]);
    if (di < depth) {
      depth = di;
      axis = i;
    }
  }
  const float side = p[axis] < 0.0f ? -1.0f : 1.0f;
  ShapeQuery q{-depth, p, Vec3{}};
  q.surfacePoint[axis] = side * halfExtents[axis];
  q.normal[axis] = side;
  return q;
}

WEFT_HD inline ShapeQuery queryShape(const ShapeGeometry& g, const Vec3& localPoint) {
  const Vec3& p = localPoint;
  switch (g.type) {
    case ShapeType::Box:
      return queryBox(g.halfExtents, p);
    case ShapeType::Sphere:
      return queryRoundedPoint(Vec3{}, g.radius, p, Vec3{0.0f, 0.0f, 1.0f});
    case ShapeType::Capsule: {
      // Nearest point of the axis segment; on the axis any radial direction is a closest one.
      const float z = fminf(fmaxf(p.z, -g.halfHeight), g.halfHeight);
      return queryRoundedPoint(Vec3{0.0f, 0.0f, z}, g.radius, p, Vec3{1.0f, 0.0f, 0.0f});
    }
    case ShapeType::Plane:
    default:
      return {p.z, Vec3{p.x, p.y, 0.0f}, Vec3{0.0f, 0.0f, 1.0f}};
  }
}

/// The box of a non-plane shape at world pose `pose`, grown by `grow` on every side.
WEFT_HD inline void shapeBounds(const ShapeGeometry& g, const Transform& pose, float grow,
                                Vec3& lower, Vec3& upper) {
  Vec3 half{g.radius, g.radius, g.radius};
  if (g.type == ShapeType::Capsule) {
    const Vec3 axis = rotate(pose.q, Vec3{0.0f, 0.0f, 1.0f});
    half += g.halfHeight * Vec3{fabsf(axis.x), fabsf(axis.y), fabsf(axis.z)};
  } else if (g.type == ShapeType::Box) {
    const Mat33 r = rotationMatrix(pose.q);
    for (int i = 0; i < 3; ++i)
      half[i] = fabsf(r(i, 0)) * g.halfExtents.x + fabsf(r(i, 1)) * g.halfExtents.y +
                fabsf(r(i, 2)) * g.halfExtents.z;
  }
  half += Vec3{grow, grow, grow};
  lower = pose.p - half;
  upper = pose.p + half;
}

}  // namespace weft
