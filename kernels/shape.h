// Collision shapes that particles (and later rigid bodies) touch: geometry and material.
//
// Conventions follow the reference (Newton): a plane is z = 0 in its local frame with normal +Z;
// a capsule's axis is local Z, its segment spans z in [-halfHeight, +halfHeight] and the caps are
// not included in halfHeight; a box is centred at the origin with half extents along local axes.
// Shapes are placed by a Transform (kernels/math.h) that may change with time (kernels/
// kinematics.h); the geometry here is always in the shape's local frame.
#pragma once

#include "kernels/math.h"

namespace weft {

enum class ShapeType : int { Plane = 0, Box = 1, Sphere = 2, Capsule = 3 };

struct ShapeGeometry {
  ShapeType type = ShapeType::Plane;
  Vec3 halfExtents;         // Box only [m]
  float radius = 0.0f;      // Sphere, Capsule [m]
  float halfHeight = 0.0f;  // Capsule: half length of the axis segment, caps excluded [m]
};

/// Contact material of a shape (reference ShapeConfig: ke 2.5e3, kd 100, mu 1.0 by default).
struct ContactMaterial {
  float ke = 2.5e3f;  // normal stiffness [N/m]
  float kd = 100.0f;  // normal damping [N·s/m]
  float mu = 1.0f;    // Coulomb friction coefficient [-]
};

}  // namespace weft
