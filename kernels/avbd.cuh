// The kernels of one rigid AVBD substep (compliant ALM; rigid_avbd_spec §4, §5), in launch order.
// solver/solver_avbd.cpp launches them; the per-row, per-joint and per-body math lives in
// kernels/rigid_contact.h, kernels/rod_joint.h, kernels/dahl.h and kernels/rigid_body.h, so
// every kernel here is a loop body that gathers its inputs, calls that math and writes back.
//
//   step_body_body_contact_C0_lambda   per contact row: mixed material, C0, ρ_n, ρ_t, λ
//                                      retention (after a detection: λ from the matched row of
//                                      the previous detection, or 0). Start-of-step poses.
//   forward_step_rigid_bodies          per body: inertial prediction (the first iterate and the
//                                      target y); kinematic bodies jump to their pose at the end of
//                                      the substep (motion evaluated from the device's counter).
//   step_joint_C0_lambda_rho           per joint: ALM coefficients, start-of-step strain, λ
//                                      retention.
//   compute_rod_dahl_parameters        per joint (Dahl on): lagged stress σ0 and C_fric.
//   per iteration, per body color:
//     accumulate_body_body_contacts_per_body   tile per body: the sum of its contact rows' blocks
//                                      (fixed strided parts and a fixed tree: deterministic, the
//                                      same for every tile size and on the CPU)
//     solve_rigid_body                 per body: inertia + contacts + adjacent joints, 6×6 LDLᵀ,
//                                      pose update in place
//   update_duals_body_body_contacts    per row (Jacobi, after all colors)
//   update_duals_joint                 per joint
//   update_body_velocity               per body: BDF1 velocities, start pose of the next step,
//                                      substep counter
//   update_cable_dahl_state            per joint (Dahl on): the Dahl state at the final poses
//
// Race freedom: solve_rigid_body writes the poses of one color and reads those of its joint
// partners, which never share its color (the coloring is by joints). Contact partners may share a
// color, which is why contacts are accumulated in a separate launch before the color's solve
// (within a color contacts are Jacobi, as in the reference).
#pragma once

#include "kernels/dahl.h"
#include "kernels/kinematics.h"
#include "kernels/math.h"
#include "kernels/rigid_body.h"
#include "kernels/rigid_contact.h"
#include "kernels/rod_joint.h"
#include "kernels/runtime/platform.h"
#include "tuning/kernel_ids.h"

namespace weft {

/// Per-body arrays every rigid kernel may read (owned by RigidModel).
struct RigidBodiesDevice {
  const Vec3* __restrict__ com;            // (numBodies) COM in the body frame [m]
  const float* __restrict__ mass;          // (numBodies) effective mass (0: kinematic) [kg]
  const float* __restrict__ invMass;       // (numBodies) effective inverse mass [1/kg]
  const Mat33* __restrict__ inertia;       // (numBodies) body-frame inertia about the COM
  const Mat33* __restrict__ invInertia;    // (numBodies) effective inverse (0: kinematic)
  const float* __restrict__ structuralK;   // (numBodies) max stretch/shear k of its joints [N/m]
  const ShapeMotion* __restrict__ motion;  // (numBodies) kinematic bodies' motion
  const Transform* __restrict__ motionSamples;  // sampled motion poses
};

/// Per-joint arrays (owned by RigidModel). Ball joints use the anchors' translations, and the
/// stretch slot of `rod.material` as their linear stiffness and damping.
struct RigidJointsDevice {
  const int* __restrict__ type;          // (numJoints) JointType
  const int* __restrict__ parent;        // (numJoints) −1: world
  const int* __restrict__ child;         // (numJoints)
  const RodJoint* __restrict__ rod;      // (numJoints) anchors, rest strain, material
  const float* __restrict__ dahlEpsMax;  // (numJoints)
  const float* __restrict__ dahlTau;     // (numJoints) [rad]
  const int* __restrict__ offsets;       // (numBodies + 1) body → joint CSR
  const int* __restrict__ bodyJoints;    // joints of each body, in joint order
};

WEFT_HD inline Transform bodyPoseOrWorld(const Transform* poses, int body) {
  return body >= 0 ? poses[body] : Transform{};
}

WEFT_HD inline JointEnd jointEnd(const Transform* poses, const RigidBodiesDevice& bodies,
                                 int body) {
  return body >= 0 ? JointEnd{poses[body], bodies.com[body]} : worldJointEnd();
}

/// Current and start-of-step poses and COMs of a contact row's two bodies (static: identity).
WEFT_HD inline ContactBodyFrames contactFrames(const RigidContact& c,
                                               const RigidBodiesDevice& bodies,
                                               const Transform* poses,
                                               const Transform* startPoses) {
  ContactBodyFrames f;
  f.pose[0] = bodyPoseOrWorld(poses, c.body0);
  f.pose[1] = bodyPoseOrWorld(poses, c.body1);
  f.startPose[0] = bodyPoseOrWorld(startPoses, c.body0);
  f.startPose[1] = bodyPoseOrWorld(startPoses, c.body1);
  f.com[0] = c.body0 >= 0 ? bodies.com[c.body0] : Vec3{};
  f.com[1] = c.body1 >= 0 ? bodies.com[c.body1] : Vec3{};
  return f;
}

WEFT_HD inline float traceOf(const Mat33& m) {
  return m(0, 0) + m(1, 1) + m(2, 2);
}

// ---- per step
// ------------------------------------------------------------------------------------

/// A6 (+ A4 after a detection). One thread per row slot; slots ≥ the stored count return.
struct StepBodyBodyContactC0Lambda {
  static constexpr KernelId kId = KernelId::step_body_body_contact_C0_lambda;

  RigidBodiesDevice bodies;
  RigidContactsView contacts;
  const ContactMaterial* __restrict__ shapeMaterial;  // (numShapes)
  const Transform* __restrict__ startPoses;           // (numBodies) start of step
  RigidContactState* __restrict__ state;              // (capacity) in/out
  // After a detection (`fresh`): the matched row of the previous detection per row (−1/−2: none)
  // and the previous rows' states; λ then starts from the match (history) or from 0.
  bool fresh;
  const int* __restrict__ matchIndex;             // (capacity) or null: no history
  const RigidContactState* __restrict__ history;  // (previous capacity) or null
  float h;                                        // substep [s]
  float gamma;                                    // λ retention

  WEFT_HD ContactEndpointInertia endpoint(int body) const {
    ContactEndpointInertia e;
    if (body < 0) return e;
    e.invMass = bodies.invMass[body];
    e.invInertia = bodies.invInertia[body];
    e.com = bodies.com[body];
    e.structuralK = bodies.structuralK[body];
    return e;
  }

  WEFT_HD void operator()(int r) const {
    if (r >= *contacts.count) return;
    const RigidContact c = contacts.rows[r];
    RigidContactState previous{};
    if (!fresh) {
      previous = state[r];
    } else if (matchIndex && history && matchIndex[r] >= 0) {
      previous.lambda = history[matchIndex[r]].lambda;
    }
    const ContactMaterial material =
        mixContactMaterials(shapeMaterial[c.shape0], shapeMaterial[c.shape1]);
    state[r] = rigidContactBeginStep(c, previous, material, bodyPoseOrWorld(startPoses, c.body0),
                                     bodyPoseOrWorld(startPoses, c.body1), endpoint(c.body0),
                                     endpoint(c.body1), h, gamma);
  }
};

/// A8. One thread per body.
struct ForwardStepRigidBodies {
  static constexpr KernelId kId = KernelId::forward_step_rigid_bodies;

  RigidBodiesDevice bodies;
  Vec3 gravity;                           // [m/s²]
  float h;                                // [s]
  double dtSeconds;                       // substep length for simulation time
  const long long* __restrict__ substep;  // (1) substeps completed
  Transform* __restrict__ poses;          // (numBodies) in: start of step; out: iterate
  Vec3* __restrict__ linearVelocities;    // (numBodies) in/out
  Vec3* __restrict__ angularVelocities;   // (numBodies) in/out
  Transform* __restrict__ inertialPoses;  // (numBodies) out: the target y

  WEFT_HD void operator()(int b) const {
    const Transform start = poses[b];
    if (!(bodies.mass[b] > 0.0f)) {
      // Kinematic: the motion's pose at the end of this substep (velocity follows at the end).
      const float tEnd = float(double(*substep + 1) * dtSeconds);
      const Transform pose = poseAt(bodies.motion[b], tEnd, bodies.motionSamples);
      poses[b] = pose;
      inertialPoses[b] = pose;
      return;
    }
    Transform predicted;
    Vec3 v, w;
    predictBody(start, linearVelocities[b], angularVelocities[b], bodies.com[b], bodies.mass[b],
                bodies.inertia[b], bodies.invInertia[b], gravity, h, predicted, v, w);
    poses[b] = predicted;
    inertialPoses[b] = predicted;
    linearVelocities[b] = v;
    angularVelocities[b] = w;
  }
};

/// A9. One thread per joint: the ALM coefficients of its rows, the start-of-step strain (C0 and
/// the damping reference) and the retained multipliers.
struct StepJointC0LambdaRho {
  static constexpr KernelId kId = KernelId::step_joint_C0_lambda_rho;

  RigidBodiesDevice bodies;
  RigidJointsDevice joints;
  const Transform* __restrict__ startPoses;  // (numBodies)
  RodStepTerms* __restrict__ terms;          // (numJoints) out
  RodMultipliers* __restrict__ lambda;       // (numJoints) in/out
  float h, gamma, alpha;

  WEFT_HD void operator()(int j) const {
    const int p = joints.parent[j], c = joints.child[j];
    const float invMassP = p >= 0 ? bodies.invMass[p] : 0.0f;
    const float invMassC = bodies.invMass[c];
    const float trP = p >= 0 ? traceOf(bodies.invInertia[p]) : 0.0f;
    const float trC = traceOf(bodies.invInertia[c]);
    const RodJoint& rod = joints.rod[j];
    RodStepTerms t;
    t.alpha = alpha;
    const Transform pp = bodyPoseOrWorld(startPoses, p), pc = startPoses[c];
    RodMultipliers l = lambda[j];
    if (joints.type[j] == int(JointType::Rod)) {
      t.alm = rodCoefficients(rod.material, linearSupport(invMassP, invMassC, h),
                              angularSupport(trP, trC, h));
      t.start = rodStrain(pp, pc, rod);
      retainRodMultipliers(rod.material, gamma, l);
    } else {  // Ball: the stretch slot, C0 = the world residual
      const float K = rod.material.stretchStiffness;
      t.alm.stretch = almCoefficients(K, bilateralRho(linearSupport(invMassP, invMassC, h), K));
      t.start.u = ballJointResidual(pp, pc, rod.parentAnchor.p, rod.childAnchor.p);
      l.lin = K > 0.0f ? l.lin * gamma : Vec3{};
      l.ang = Vec3{};
    }
    terms[j] = t;
    lambda[j] = l;
  }
};

/// A10. One thread per joint (launched only when some joint has Dahl): σ0 and C_fric into the
/// step terms, from the strain at the start-of-step poses.
struct ComputeRodDahlParameters {
  static constexpr KernelId kId = KernelId::compute_rod_dahl_parameters;

  RigidJointsDevice joints;
  const Transform* __restrict__ startPoses;  // (numBodies)
  DahlState* __restrict__ dahl;              // (numJoints) in/out
  RodStepTerms* __restrict__ terms;          // (numJoints) in/out

  WEFT_HD void operator()(int j) const {
    if (joints.type[j] != int(JointType::Rod)) return;
    const RodJoint& rod = joints.rod[j];
    const Vec3 kappa =
        rodStrain(bodyPoseOrWorld(startPoses, joints.parent[j]), startPoses[joints.child[j]], rod)
            .kappa;
    DahlState s = dahl[j];
    const DahlTerms d = dahlCompute(s, kappa, dahlAxisStiffness(rod.material), joints.dahlEpsMax[j],
                                    joints.dahlTau[j], true, false);
    dahl[j] = s;
    terms[j].dahlSigma0 = d.sigma0;
    terms[j].dahlCFric = d.cFric;
  }
};

// ---- per iteration ------------------------------------------------------------------------------

/// Contact block of every body of one color. A tile per body: part k sums the body's list entries
/// k, k + kParts, k + 2·kParts, … in order, and the fixed tree adds the parts, so the sum is the
/// same for every tile size and on the CPU.
struct AccumulateBodyBodyContactsPerBody {
  static constexpr KernelId kId = KernelId::accumulate_body_body_contacts_per_body;
  static constexpr int kParts = 16;
  using Part = BodyBlock;

  RigidBodiesDevice bodies;
  RigidContactsView contacts;
  const RigidContactState* __restrict__ state;  // (capacity)
  const int* __restrict__ colorBodies;          // this color's bodies
  const Transform* __restrict__ poses;          // (numBodies) current iterate
  const Transform* __restrict__ startPoses;     // (numBodies)
  BodyBlock* __restrict__ blocks;               // (numBodies) out: the color's bodies
  float h, frictionEpsilon, alpha;

  int maxParts() const { return kParts; }
  WEFT_HD int partCount(int) const { return kParts; }

  WEFT_HD Part part(int item, int k) const {
    const int b = colorBodies[item];
    BodyBlock sum{};
    const int begin = contacts.bodyOffsets[b], end = contacts.bodyOffsets[b + 1];
    for (int e = begin + k; e < end; e += kParts) {
      const int r = contacts.bodyRows[e];
      const RigidContact c = contacts.rows[r];
      sum +=
          rigidContactBlock(c.body1 == b ? 1 : 0, c, state[r],
                            contactFrames(c, bodies, poses, startPoses), h, frictionEpsilon, alpha);
    }
    return sum;
  }

  WEFT_HD void finish(int item, const Part& total) const { blocks[colorBodies[item]] = total; }
};

/// One thread per body of a color: the 6×6 Newton step (§5.2) with the inertial term, the
/// accumulated contacts and every adjacent joint at the current poses.
struct SolveRigidBody {
  static constexpr KernelId kId = KernelId::solve_rigid_body;

  RigidBodiesDevice bodies;
  RigidJointsDevice joints;
  const int* __restrict__ colorBodies;          // this color's bodies
  const Transform* __restrict__ inertialPoses;  // (numBodies)
  const BodyBlock* __restrict__ contactBlocks;  // (numBodies), or null without contacts
  const RodStepTerms* __restrict__ terms;       // (numJoints)
  const RodMultipliers* __restrict__ lambda;    // (numJoints)
  Transform* __restrict__ poses;                // (numBodies) in/out
  float h;

  WEFT_HD void operator()(int item) const {
    const int b = colorBodies[item];
    if (!(bodies.mass[b] > 0.0f)) return;
    const Transform pose = poses[b];
    const Vec3 com = bodies.com[b];
    BodyBlock block =
        inertialBlock(pose, inertialPoses[b], com, bodies.mass[b], bodies.inertia[b], h);
    if (contactBlocks) block += contactBlocks[b];
    for (int e = joints.offsets[b]; e < joints.offsets[b + 1]; ++e) {
      const int j = joints.bodyJoints[e];
      const int p = joints.parent[j], c = joints.child[j];
      const bool solvingParent = p == b;
      const JointEnd parentEnd = jointEnd(poses, bodies, p);
      const JointEnd childEnd = jointEnd(poses, bodies, c);
      const RodJoint& rod = joints.rod[j];
      if (joints.type[j] == int(JointType::Rod)) {
        block += rodJointBlock(solvingParent, parentEnd, childEnd, rod, terms[j], lambda[j], h);
      } else {
        const RodStepTerms& t = terms[j];
        block += ballJointBlock(solvingParent, parentEnd, childEnd, rod.parentAnchor.p,
                                rod.childAnchor.p, t.alm.stretch, rod.material.stretchDamping,
                                t.alpha, t.start.u, lambda[j].lin, h);
      }
    }
    Vec3 dx, dtheta;
    solveBodyBlock(block, dx, dtheta);
    poses[b] = applyIncrement(pose, com, dx, dtheta);
  }
};

/// One thread per row slot (rows ≥ the stored count return): the ALM dual step (§5.5.4).
struct UpdateDualsBodyBodyContacts {
  static constexpr KernelId kId = KernelId::update_duals_body_body_contacts;

  RigidBodiesDevice bodies;
  RigidContactsView contacts;
  const Transform* __restrict__ poses;       // (numBodies)
  const Transform* __restrict__ startPoses;  // (numBodies)
  RigidContactState* __restrict__ state;     // (capacity) in/out
  float alpha;

  WEFT_HD void operator()(int r) const {
    if (r >= *contacts.count) return;
    const RigidContact c = contacts.rows[r];
    state[r].lambda =
        rigidContactDualUpdate(c, state[r], contactFrames(c, bodies, poses, startPoses), alpha);
  }
};

/// One thread per joint: the ALM dual step of its rows at the current poses (§5.6.3, §5.7).
struct UpdateDualsJoint {
  static constexpr KernelId kId = KernelId::update_duals_joint;

  RigidJointsDevice joints;
  const Transform* __restrict__ poses;     // (numBodies)
  const RodStepTerms* __restrict__ terms;  // (numJoints)
  RodMultipliers* __restrict__ lambda;     // (numJoints) in/out

  WEFT_HD void operator()(int j) const {
    const Transform pp = bodyPoseOrWorld(poses, joints.parent[j]);
    const Transform pc = poses[joints.child[j]];
    const RodJoint& rod = joints.rod[j];
    RodMultipliers l = lambda[j];
    if (joints.type[j] == int(JointType::Rod)) {
      rodJointDuals(rodStrain(pp, pc, rod), terms[j], l);
    } else {
      const RodStepTerms& t = terms[j];
      ballJointDuals(ballJointResidual(pp, pc, rod.parentAnchor.p, rod.childAnchor.p), t.start.u,
                     t.alm.stretch, t.alpha, l.lin);
    }
    lambda[j] = l;
  }
};

// ---- end of step --------------------------------------------------------------------------------

/// One thread per body (kinematic ones too): BDF1 velocities (§5.9), the next step's start pose,
/// and the substep counter (thread 0; nothing in this launch reads it).
struct UpdateBodyVelocity {
  static constexpr KernelId kId = KernelId::update_body_velocity;

  const Vec3* __restrict__ com;          // (numBodies)
  const Transform* __restrict__ poses;   // (numBodies) final
  Transform* __restrict__ startPoses;    // (numBodies) in: start of step; out: final
  Vec3* __restrict__ linearVelocities;   // (numBodies) out
  Vec3* __restrict__ angularVelocities;  // (numBodies) out
  long long* __restrict__ substep;       // (1)
  float h;

  WEFT_HD void operator()(int b) const {
    const Transform pose = poses[b];
    Vec3 v, w;
    bodyVelocity(pose, startPoses[b], com[b], h, v, w);
    linearVelocities[b] = v;
    angularVelocities[b] = w;
    startPoses[b] = pose;
    if (b == 0) *substep += 1;
  }
};

/// One thread per joint (Dahl on): advance the Dahl state at the final poses (§5.8 F).
struct UpdateCableDahlState {
  static constexpr KernelId kId = KernelId::update_cable_dahl_state;

  RigidJointsDevice joints;
  const Transform* __restrict__ poses;  // (numBodies) final
  DahlState* __restrict__ dahl;         // (numJoints) in/out

  WEFT_HD void operator()(int j) const {
    if (joints.type[j] != int(JointType::Rod)) return;
    const RodJoint& rod = joints.rod[j];
    const Vec3 kappa =
        rodStrain(bodyPoseOrWorld(poses, joints.parent[j]), poses[joints.child[j]], rod).kappa;
    DahlState s = dahl[j];
    dahlUpdate(s, kappa, dahlAxisStiffness(rod.material), joints.dahlEpsMax[j], joints.dahlTau[j],
               true);
    dahl[j] = s;
  }
};

}  // namespace weft
