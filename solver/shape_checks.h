// The one place a shape's geometry is checked: the cloth builder (ClothBuilder::validateShapes) and
// the cable builder (validateRigidDesc) both ask it, so a new shape type states its rule here once.
#pragma once

#include <string>

#include "kernels/shape.h"

namespace weft {

/// What is wrong with `geometry` ("a box needs finite positive half extents."), or an empty string
/// when it describes a valid shape. Only the fields of its type are read.
std::string shapeGeometryProblem(const ShapeGeometry& geometry);

}  // namespace weft
