// The unit every VBD energy term returns for one vertex: the force on it (-∂E/∂x_v) and the
// 3x3 Hessian block ∂²E/∂x_v² (possibly a PSD approximation; each term says which).
#pragma once

#include "kernels/math.h"

namespace weft {

struct ForceHessian {
  Vec3 force;     // [N]
  Mat33 hessian;  // [N/m]

  WEFT_HD ForceHessian& operator+=(const ForceHessian& o) {
    force += o.force;
    hessian += o.hessian;
    return *this;
  }
};

}  // namespace weft
