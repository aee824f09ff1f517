#include "solver/shape_checks.h"

#include <cstdio>

#include "kernels/math.h"

namespace weft {

namespace {

std::string number(double v) {
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace

std::string shapeGeometryProblem(const ShapeGeometry& g) {
  switch (g.type) {
    case ShapeType::Plane:
      return "";
    case ShapeType::Box:
      if (!(g.halfExtents.x > 0.0f && g.halfExtents.y > 0.0f && g.halfExtents.z > 0.0f) ||
          !isFinite(g.halfExtents))
        return "a box needs finite positive half extents (got " + number(g.halfExtents.x) + ", " +
               number(g.halfExtents.y) + ", " + number(g.halfExtents.z) + ").";
      return "";
    case ShapeType::Sphere:
      if (!(g.radius > 0.0f) || !isFinite(g.radius))
        return "a sphere needs a finite positive radius (got " + number(g.radius) + ").";
      return "";
    case ShapeType::Capsule:
      if (!(g.radius > 0.0f) || !isFinite(g.radius) || !(g.halfHeight >= 0.0f) ||
          !isFinite(g.halfHeight))
        return "a capsule needs a finite positive radius and a finite half height >= 0 (got " +
               number(g.radius) + ", " + number(g.halfHeight) + ").";
      return "";
  }
  return "unknown shape type " + std::to_string(int(g.type)) + ".";
}

}  // namespace weft
