// RigidDesc: the host-side description of a rigid-body (cable) model, as the cable builder makes
// it and before it is uploaded (rigid_avbd_spec.md §1, §3.1). Plain vectors, SI units, with shape
// comments. Conventions (rigid_avbd_spec §0):
//   * a body's pose is the pose of its ORIGIN; its centre of mass is `com` in the body frame, so
//     the world COM is pose.p + rotate(pose.q, com);
//   * linear velocity is the COM's, angular velocity is in world coordinates;
//   * a joint's anchor frames are parentAnchor (in the parent's body frame, or the world if the
//     parent is -1) and childAnchor (in the child's body frame); for ROD joints the anchors' local
//     +Z is the material tangent and local +X the material director;
//   * shapes are placed by localPose in their body's frame (or the world for body -1).
// Kinematic bodies (mass 0, or `kinematic`) are moved by `motion` (kernels/kinematics.h), evaluated
// on the device from simulation time; static shapes belong to body -1.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/kinematics.h"
#include "kernels/math.h"
#include "kernels/rod_joint.h"  // JointType
#include "kernels/shape.h"

namespace weft {

struct BodyDesc {
  std::string name;
  Transform pose;                        // origin pose at t = 0 (the structural rest pose) [m]
  Vec3 com;                              // centre of mass in the body frame [m]
  float mass = 0.0f;                     // [kg]; 0 = kinematic
  Mat33 inertia;                         // body-frame inertia about the COM [kg·m²]
  bool kinematic = false;                // moved by `motion`, never by the solver
  Vec3 linearVelocity;                   // initial COM velocity [m/s]
  Vec3 angularVelocity;                  // initial angular velocity, world [rad/s]
  ShapeMotion motion;                    // kinematic bodies only (Static: stays at `pose`)
  std::vector<Transform> motionSamples;  // Sampled motion: pose at t = k·sampleInterval
};

struct RigidShapeDesc {
  std::string name;
  int body = -1;             // owning body, -1 = static (world)
  ShapeGeometry geometry;    // capsule axis = local z of localPose
  Transform localPose;       // in the body frame (world for body -1)
  ContactMaterial material;  // ke, kd, mu (pairs mix: ke, kd arithmetic mean, mu geometric)
  float margin = 0.0f;       // shape margin [m] (thickens the surface)
  float gap = 0.1f;          // speculative contact gap [m] (the reference's rigid_gap default)
  int world = 0;             // shapes of different worlds never touch (replicateWorlds); the
                             // worlds' shapes come in ascending order of world
};

/// A joint between two bodies. ROD: the four material slots of the reference (stretch, shear:
/// linear [N/m]; bend, twist: angular [N·m/rad]), with absolute damping coefficients.
struct JointDesc {
  JointType type = JointType::Rod;
  int parent = -1;  // -1 = world
  int child = -1;
  Transform parentAnchor;  // X_p, in the parent body frame (world if parent = -1)
  Transform childAnchor;   // X_c, in the child body frame
  float stretchStiffness = 1.0e5f, shearStiffness = 1.0e5f;  // [N/m]
  float bendStiffness = 0.0f, twistStiffness = 0.0f;         // [N·m/rad]
  float stretchDamping = 0.0f, shearDamping = 0.0f;          // [N·s/m]
  float bendDamping = 0.0f, twistDamping = 0.0f;             // [N·m·s/rad]
  float dahlEpsMax = 0.0f;  // Dahl friction envelope strain (0: off)
  float dahlTau = 0.0f;     // Dahl reversal length [rad] (0: off)
};

struct RigidDesc {
  std::vector<BodyDesc> bodies;
  std::vector<RigidShapeDesc> shapes;
  std::vector<JointDesc> joints;
  std::vector<std::pair<int, int>> filteredShapePairs;  // never collide (a < b)

  // Derived by finalize (solver/cable_builder.h): body coloring by joints (two bodies joined by
  // a joint never share a color) and the body → joint adjacency.
  std::vector<int> bodyColorOffsets;  // (numColors + 1) into bodiesByColor
  std::vector<int> bodiesByColor;     // (numBodies)
  std::vector<int> jointOffsets;      // (numBodies + 1) into bodyJoints
  std::vector<int> bodyJoints;        // joints touching each body, in joint order

  // Set by combineWorlds (solver/cable_builder.h): where world k's bodies and joints begin
  // ((numWorlds + 1) entries each, like its shapes' `world`); empty: one world.
  std::vector<int> worldBodyOffsets, worldJointOffsets;

  int numBodies() const { return int(bodies.size()); }
  int numShapes() const { return int(shapes.size()); }
  int numJoints() const { return int(joints.size()); }
};

}  // namespace weft
