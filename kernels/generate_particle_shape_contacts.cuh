// generate_particle_shape_contacts: which shapes each particle touches this substep.
//
// Reference: Newton's CollisionPipeline soft contacts, generated once per substep from the
// positions at the substep's start: a contact exists when the shape's signed distance at the
// particle is below soft_contact_margin + shape_margin + particle_radius. The record keeps the
// closest surface point in the shape's frame and the world normal; the geometry is then frozen for
// the substep while the penetration is re-evaluated at every iteration (kernels/
// particle_shape_contact.h, inside the vertex solve).
// Unlike the reference's flat list, each particle owns one slot per shape it may touch (a
// particle has at most one contact per shape), so no contact can be dropped and the solve gathers
// its own contacts. In a batch of worlds (ModelDesc::worldRanges) a particle tests only its own
// world's shapes, and owns as many slots as the world with the most shapes has shapes.
//
// Reads:  positions (substep start), inverse masses, radii, shape geometry, margins, poses.
// Writes: contacts (numParticles x shapeSlots), in ascending shape order, unused slots marked
//         shape = -1.
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
  int shapeSlots;                              // slots per particle: numShapes, or the most
                                               // shapes of one world in a batch
  const int* __restrict__ worlds;              // (numParticles) world of each particle, or null
  const int* __restrict__ shapeWorldBegin;     // (worlds + 1) world w's shapes, or null
  float contactMargin;                         // reference soft_contact_margin [m]
  const Vec3* __restrict__ positions;          // (numParticles) [m]
  const float* __restrict__ invMasses;         // (numParticles) 0 = held
  const float* __restrict__ radii;             // (numParticles) [m]
  const ShapeGeometry* __restrict__ geometry;  // (numShapes)
  const float* __restrict__ shapeMargins;      // (numShapes) [m]
  const Transform* __restrict__ shapePoses;    // (2 x numShapes), [s] = pose at substep end
  ShapeContact* __restrict__ contacts;         // (numParticles x shapeSlots)

  WEFT_HD void operator()(int i) const {
    ShapeContact* slots = contacts + size_t(i) * shapeSlots;
    int count = 0;
    if (invMasses[i] > 0.0f) {
      const Vec3 x = positions[i];
      const int first = worlds ? shapeWorldBegin[worlds[i]] : 0;
      const int end = worlds ? shapeWorldBegin[worlds[i] + 1] : numShapes;
      for (int s = first; s < end; ++s) {
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
    for (int s = count; s < shapeSlots; ++s) slots[s].shape = -1;
  }
};

}  // namespace weft
