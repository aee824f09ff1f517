// Per-element cloth materials, as stored in device buffers (reference tri_materials and
// edge_bending_properties). Units follow the reference: stiffnesses are per unit rest area
// (membrane) or per unit rest length (bending), so that refining a mesh does not change its
// response.
#pragma once

namespace weft {

/// Membrane material of one triangle (reference tri_ke / tri_ka / tri_kd).
struct TriangleMaterial {
  float ke = 100.0f;  // shear stiffness μ [Pa·m] (energy density × thickness)
  float ka = 100.0f;  // area stiffness λ [Pa·m]
  float kd = 10.0f;   // damping of the rate of FᵀF [Pa·m·s], absolute (reference #2877)
};

/// Bending material of one hinge (reference edge_ke / edge_kd).
struct EdgeMaterial {
  float ke = 100.0f;  // bending stiffness per unit rest length [N·m/rad²/m]
  float kd = 0.0f;    // bending damping [N·m·s/rad²/m]
};

}  // namespace weft
