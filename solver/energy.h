// Host-side energies of a cloth configuration, for tests and diagnostics (energy must not be
// created by an undamped, contact-free step). Double precision accumulation of the same per-element
// energies the kernels differentiate (kernels/membrane.h, kernels/bending.h).
#pragma once

#include <span>

#include "solver/model_desc.h"

namespace weft {

struct ClothEnergy {
  double kinetic = 0.0;   // Σ ½ m |v|² [J]
  double gravity = 0.0;   // Σ −m g·x [J]
  double membrane = 0.0;  // Σ stable Neo-Hookean membrane [J]
  double bending = 0.0;   // Σ dihedral bending [J]
  double total() const { return kinetic + gravity + membrane + bending; }
};

/// Energies of `desc`'s cloth at positions x and velocities v under `gravity`.
ClothEnergy clothEnergy(const ModelDesc& desc, std::span<const Vec3> x, std::span<const Vec3> v,
                        const Vec3& gravity);

}  // namespace weft
