// generate_particle_shape_contacts: which shapes each particle touches this substep.
//
// Reference: Newton's CollisionPipeline soft contacts, generated once per substep from the
// positions at the substep's start: a contact exists when the shape's signed distance at the
// particle is below soft_contact_margin + shape_margin + particle_radius. The record keeps the
// closest surface point in the shape's frame and the world normal; the geometry is then frozen for
// the substep while the penetration is re-evaluated at every iteration (kernels/
// particle_shape_contact.h, inside the vertex solve).
// Unlike the reference's flat list, each particle owns numShapes slots (a particle has at most one
// contact per shape), so no contact can be dropped and the solve gathers its own contacts.
//
// Reads:  positions (substep start), inverse masses, radii, shape geometry, margins, poses.
// Writes: contacts (numParticles x numShapes), unused slots marked shape = -1.
#pragma once

#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"
#include "kernels/shape_geometry.h"

namespace weft {

struct ShapeContact {
  int shape = -1;  // -1: empty slot
  Vec3 bodyPoint;  // closest surface point, shape frame [m]
  Vec3 normal;     // world normal, from the shape towards the particle
};

struct GenerateParticleShapeContacts {
  static constexpr KernelId kId = KernelId::generate_particle_shape_contacts;

  int numShapes;
  float contactMargin;                         // reference soft_contact_margin [m]
  const Vec3* __restrict__ positions;          // (numParticles) [m]
  const float* __restrict__ invMasses;         // (numParticles) 0 = held
  const float* __restrict__ radii;             // (numParticles) [m]
  const ShapeGeometry* __restrict__ geometry;  // (numShapes)
  const float* __restrict__ shapeMargins;      // (numShapes) [m]
  const Transform* __restrict__ shapePoses;    // (2 x numShapes), [s] = pose at substep end
  ShapeContact* __restrict__ contacts;         // (numParticles x numShapes)

  WEFT_HD void operator()(int i) const {
    ShapeContact* slots = contacts + size_t(i) * numShapes;
    int count = 0;
    if (invMasses[i] > 0.0f) {
      const Vec3 x = positions[i];
      for (int s = 0; s < numShapes; ++s) {
        const Transform pose = shapePoses[s];
        const ShapeQuery q = queryShape(geometry[s], inverseTransformPoint(pose, x));
        if (q.distance < contactMargin + shapeMargins[s] + radii[i]) {
          slots[count].shape = s;
          slots[count].bodyPoint = q.surfacePoint;
          slots[count].normal = rotate(pose.q, q.normal);
          ++count;
        }
      }
    }
    for (int s = count; s < numShapes; ++s) slots[s].shape = -1;
  }
};

}  // namespace weft
