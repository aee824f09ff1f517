// The kernels of one rigid AVBD substep (compliant ALM; rigid_avbd_spec §4, §5), in launch order.
// solver/solver_avbd.cpp launches them; the per-row, per-joint and per-body math lives in
// kernels/rigid_contact.h, kernels/rod_joint.h, kernels/dahl.h and kernels/rigid_body.h, so
// every kernel here gathers its inputs, calls that math and writes back.
//
// A cable substep is a chain of small dependent phases (60–4000 bodies), so the launches are
// shaped for latency (docs/PERFORMANCE.md, "Cables"): phases that touch disjoint data share one
// launch, and a body's Newton step is one cooperative tile.
//
//   begin_rigid_step        one thread per index i < max(row slots, bodies, joints); the
//                           reference's four per-step kernels side by side, each on its own data:
//                             row i    step_body_body_contact_C0_lambda: mixed material, C0, ρ_n,
//                                      ρ_t, λ retention (after a detection: the warm start from
//                                      the matched row of the previous detection, or 0)
//                             body i   forward_step_rigid_bodies: inertial prediction (the first
//                                      iterate and the target y); kinematic bodies jump to their
//                                      pose at the end of the substep; after a detection also the
//                                      entries of its contact list as the body solve reads them
//                                      (GatherContactEnds)
//                             joint i  step_joint_C0_lambda_rho, then (Dahl on)
//                                      compute_rod_dahl_parameters
//                           in small models, after a detection, two launches: the bodies'
//                           inertial prediction and the joints beside the detection (they read
//                           none of it, and it reads the start-of-step poses, which the
//                           prediction leaves), then the rows and the list entries
//   per iteration, per body color:
//     solve_rigid_body_tile  a tile per body of the color: its parts (the inertial block, every
//                           adjacent joint, up to 16 strided runs of its contact rows) on parallel
//                           lanes, the tile's fixed
//                           tree sums them, lane 0 factors the 6×6 system (LDLᵀ) and writes the
//                           new pose. This is the reference's
//                           accumulate_body_body_contacts_per_body and solve_rigid_body in one
//                           launch.
//     solve_rigid_body_tile_folding_duals  in small models, the first color's launch from the
//                           second iteration on: the same, plus the previous iteration's dual
//                           step (FoldedDuals, below): extra items write every row's and
//                           joint's new λ, its own bodies compute theirs in place, so no launch
//                           of its own separates the iterations.
//                           In models of small worlds
//                           (RigidSolverOptions::jointDualsInBlocksUpToWorldColor) both launches
//                           run a variant of the body solve under the same names and launch
//                           sizes: from the second iteration on, each joint's end of the earlier
//                           color (or its only dynamic end) first takes the joint's dual step of
//                           the iteration before in its block and writes the new λ in place for
//                           the other end (SolveRigidBodyTileT::jointPart); their folding launch
//                           then folds only the rows' dual step.
//   update_rigid_duals      per row and per joint (Jacobi), after all colors (folded: after the
//                           last iteration only; the joints' only after the last iteration where
//                           the blocks take them)
//   or, for batches of small worlds, instead of the per-iteration launches above:
//   solve_rigid_world_iterations  every iteration of a substep, a group of lanes per world
//                           (SolveRigidWorldIterations, below: the same bodies, colors and duals
//                           in the same order, so the same bits)
//   finish_rigid_step       per body: BDF1 velocities, start pose of the next step, the substep
//                           counter; per joint (Dahl on): the Dahl state at the final poses
//
// Poses during the iterations are double-buffered (IteratePoses). Iteration k reads `previous`
// and writes its colors' new poses to `updated` (the two arrays swap every iteration); a body of
// an earlier color of the same iteration is read from `updated`, any other from `previous`. That
// is exactly the reference's Gauss–Seidel over colors with Jacobi contacts inside a color (the
// contact partner of a body may share its color; it must be seen at its pose from before this
// color's solve, which the reference gets from the separate accumulation launch), and it lets one
// launch read partner poses while writing its own without a race: joint partners never share a
// color (the coloring is by joints) and contact partners of the same color are read from the
// array this launch does not write.
#pragma once

#include "kernels/dahl.h"
#include "kernels/kinematics.h"
#include "kernels/math.h"
#include "kernels/rigid_body.h"
#include "kernels/rigid_contact.h"
#include "kernels/rod_joint.h"
#include "kernels/runtime/atomics.h"
#include "kernels/runtime/kernel_ids.h"
#include "kernels/runtime/one_lane_tree.h"
#include "kernels/runtime/platform.h"
#include "kernels/runtime/word_major.h"

namespace weft {

/// Per-body arrays every rigid kernel may read (owned by RigidModel).
struct RigidBodiesDevice {
  WordMajorIn<Vec3> com;                   // (numBodies) COM in the body frame [m]
  const float* __restrict__ mass;          // (numBodies) effective mass (0: kinematic) [kg]
  const float* __restrict__ invMass;       // (numBodies) effective inverse mass [1/kg]
  WordMajorIn<Mat33> inertia;              // (numBodies) body-frame inertia about the COM
  const Mat33* __restrict__ invInertia;    // (numBodies) effective inverse (0: kinematic)
  const float* __restrict__ structuralK;   // (numBodies) max stretch/shear k of its joints [N/m]
  const ShapeMotion* __restrict__ motion;  // (numBodies) kinematic bodies' motion
  const Transform* __restrict__ motionSamples;  // sampled motion poses
};

/// Per-joint arrays (owned by RigidModel). Ball joints use the anchors' translations, and the
/// stretch slot of `rod.material` as their linear stiffness and damping. The joints' structs (and
/// their step terms and multipliers) are stored word-major (kernels/runtime/word_major.h): the
/// body solve reads a joint of a different body in every lane.
struct RigidJointsDevice {
  const int* __restrict__ type;          // (numJoints) JointType
  const int* __restrict__ parent;        // (numJoints) −1: world
  const int* __restrict__ child;         // (numJoints)
  WordMajorIn<RodJoint> rod;             // (numJoints) anchors, rest strain, material
  const float* __restrict__ dahlEpsMax;  // (numJoints)
  const float* __restrict__ dahlTau;     // (numJoints) [rad]
  const int* __restrict__ offsets;       // (numBodies + 1) body → joint CSR
  const int* __restrict__ bodyJoints;    // joints of each body, in joint order
};

WEFT_HD WEFT_FORCEINLINE Transform bodyPoseOrWorld(const Transform* poses, int body) {
  return body >= 0 ? poses[body] : Transform{};
}

/// The poses of an array as a pose accessor (−1: the world's identity).
struct PoseArray {
  const Transform* poses;
  WEFT_HD Transform operator()(int body) const { return bodyPoseOrWorld(poses, body); }
};

template <class PoseOf>
WEFT_HD WEFT_FORCEINLINE JointEnd jointEnd(const PoseOf& pose, const RigidBodiesDevice& bodies,
                                           int body) {
  return body >= 0 ? JointEnd{pose(body), bodies.com[body]} : worldJointEnd();
}

/// Where a kernel of one color reads the current iterate of a body during the iterations (see
/// the header): bodies of earlier colors of this iteration from `updated`, all others from
/// `previous`; the world (−1) is the identity. The launch of `color` writes its bodies' new poses
/// to `updated`, so it is neither const nor restrict: the compiler must not route its loads
/// through the read-only cache.
struct IteratePoses {
  const Transform* __restrict__ previous;  // (numBodies) the iterate this iteration started from
  Transform* updated;                      // (numBodies) this iteration's poses, colors ≤ color
  const int* __restrict__ bodyColor;       // (numBodies)
  int color;                               // the color being solved

  WEFT_HD Transform operator()(int body) const {
    if (body < 0) return Transform{};
#ifdef __CUDA_ARCH__
    // Both iterates are asked for beside the color, to save a round trip to L2 on the chain to
    // every partner's pose (docs/PERFORMANCE.md, "Contact rows gathered per body"). A partner of
    // this color may be having its `updated` pose written meanwhile; that load's value is never
    // used. (ptxas predicates the `updated` load on the color test, so in the SASS it still
    // follows the color: docs/PERFORMANCE.md, "The twist batch's solve line by line".)
    const Transform before = previous[body], after = updated[body];
    return bodyColor[body] < color ? after : before;
#else
    return bodyColor[body] < color ? updated[body] : previous[body];
#endif
  }
};

/// The iterates as the body solve of body `self` reads them: its own is `previous` (it is of
/// the color being solved), so only the other bodies need their color looked up.
struct OwnPoseFirst {
  const IteratePoses& poses;
  int self;
  WEFT_HD Transform operator()(int body) const {
    return body == self ? poses.previous[self] : poses(body);
  }
};

/// Current poses and COMs of a contact row's two bodies (static: identity); `pose(body)` gives
/// the current iterate. `Row`: RigidContact or RigidContactEnd.
template <class Row, class PoseOf>
WEFT_HD WEFT_FORCEINLINE ContactBodyFrames contactFrames(const Row& c, WordMajorIn<Vec3> com,
                                                         const PoseOf& pose) {
  ContactBodyFrames f;
  f.pose[0] = pose(c.body0);
  f.pose[1] = pose(c.body1);
  f.com[0] = c.body0 >= 0 ? com[c.body0] : Vec3{};
  f.com[1] = c.body1 >= 0 ? com[c.body1] : Vec3{};
  return f;
}

WEFT_HD WEFT_FORCEINLINE float traceOf(const Mat33& m) {
  return m(0, 0) + m(1, 1) + m(2, 2);
}

// ---- phases: the per-index bodies the fused kernels below run ----------------------------------

/// A6 (+ A4 after a detection), per row slot; slots ≥ the stored count return.
struct StepBodyBodyContactC0Lambda {
  RigidBodiesDevice bodies;
  RigidContactsView contacts;
  const ContactMaterial* __restrict__ shapeMaterial;  // (numShapes)
  const Transform* __restrict__ startPoses;           // (numBodies) start of step
  RigidContactState* __restrict__ state;              // (capacity) in/out
  // After a detection (`fresh`): the matched row of the previous detection per row (−1/−2: none),
  // the previous rows and their states; λ then starts from the match (history, warmStartLambda:
  // its normal part, plus the tangent part unless the contacts are sticky) or from 0.
  bool fresh;
  const int* __restrict__ matchIndex;             // (capacity) or null: no history
  const RigidContact* __restrict__ historyRows;   // (previous capacity) or null
  const RigidContactState* __restrict__ history;  // (previous capacity) or null
  bool restoreTangent;                            // latest matching: the tangent part too
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
    const ContactMaterial material =
        mixContactMaterials(shapeMaterial[c.shape0], shapeMaterial[c.shape1]);
    RigidContactState previous{};
    if (!fresh) {
      previous = state[r];
    } else if (matchIndex && history && matchIndex[r] >= 0) {
      const int m = matchIndex[r];
      previous.lambda = warmStartLambda(history[m].lambda, historyRows[m].normal, c.normal,
                                        material.mu, restoreTangent);
    }
    state[r] = rigidContactBeginStep(c, previous, material, bodyPoseOrWorld(startPoses, c.body0),
                                     bodyPoseOrWorld(startPoses, c.body1), endpoint(c.body0),
                                     endpoint(c.body1), h, gamma);
  }
};

/// Per body, at a detection: the entries of its row list as the body solve reads them
/// (RigidContactEnd, at the entries' own indices).
struct GatherContactEnds {
  RigidContactsView contacts;
  RigidContactEnd* __restrict__ ends;  // (2 x row capacity) out
  const int* __restrict__ bodyColor;   // (numBodies)

  WEFT_HD void operator()(int b) const {
    for (int e = contacts.bodyOffsets[b]; e < contacts.bodyOffsets[b + 1]; ++e) {
      const int r = contacts.bodyRows[e];
      RigidContactEnd end = contactEnd(contacts.rows[r], r);
      const int other = end.body1 == b ? end.body0 : end.body1;
      end.partnerFirst = other >= 0 && bodyColor[other] < bodyColor[b] ? 1 : 0;
      ends[e] = end;
    }
  }
};

/// Entry e of the bodies' row lists, loaded with the streaming cache operator on CUDA
/// (ld.global.cs: its lines are the first evicted, in L1 and in L2). A body solve reads each
/// entry once per iteration, and at 1024 twist worlds a color's entries are more than L2 holds,
/// so they need not push out what the next launches read again: the row states (read by both
/// ends' colors and the dual step), the joints, the poses (docs/PERFORMANCE.md, "Contact
/// entries streamed; the partner's iterate named by its entry"). The same values, so the same
/// bits.
WEFT_HD WEFT_FORCEINLINE RigidContactEnd loadContactEnd(const RigidContactEnd* __restrict__ ends,
                                                        int e) {
#if WEFT_DEVICE_PASS
  static_assert(sizeof(RigidContactEnd) == 5 * sizeof(float4));
  const float4* q = reinterpret_cast<const float4*>(ends + e);
  const float4 a = __ldcs(q), b = __ldcs(q + 1), c = __ldcs(q + 2), d = __ldcs(q + 3),
               f = __ldcs(q + 4);
  RigidContactEnd end;
  end.row = __float_as_int(a.x);
  end.body0 = __float_as_int(a.y);
  end.body1 = __float_as_int(a.z);
  end.margin = a.w;
  end.point0 = {b.x, b.y, b.z};
  end.point1 = {b.w, c.x, c.y};
  end.anchor0 = {c.z, c.w, d.x};
  end.anchor1 = {d.y, d.z, d.w};
  end.normal = {f.x, f.y, f.z};
  end.partnerFirst = __float_as_int(f.w);
  return end;
#else
  return ends[e];
#endif
}

/// A8, per body.
struct ForwardStepRigidBodies {
  RigidBodiesDevice bodies;
  Vec3 gravity;                           // [m/s²]
  float h;                                // [s]
  double dtSeconds;                       // substep length for simulation time
  const long long* __restrict__ substep;  // (1) substeps completed
  const Transform* __restrict__ poses;    // (numBodies) the start of the step
  Transform* __restrict__ iterate;        // (numBodies) out: the first iterate (not `poses`:
                                          // the detection reads those meanwhile)
  Vec3* __restrict__ linearVelocities;    // (numBodies) in/out
  Vec3* __restrict__ angularVelocities;   // (numBodies) in/out
  WordMajorOut<Transform> inertialPoses;  // (numBodies) out: the target y

  WEFT_HD void operator()(int b) const {
    const Transform start = poses[b];
    if (!(bodies.mass[b] > 0.0f)) {
      // Kinematic: the motion's pose at the end of this substep (velocity follows at the end).
      const float tEnd = float(double(*substep + 1) * dtSeconds);
      const Transform pose = poseAt(bodies.motion[b], tEnd, bodies.motionSamples);
      iterate[b] = pose;
      inertialPoses.store(b, pose);
      return;
    }
    Transform predicted;
    Vec3 v, w;
    predictBody(start, linearVelocities[b], angularVelocities[b], bodies.com[b], bodies.mass[b],
                bodies.inertia[b], bodies.invInertia[b], gravity, h, predicted, v, w);
    iterate[b] = predicted;
    inertialPoses.store(b, predicted);
    linearVelocities[b] = v;
    angularVelocities[b] = w;
  }
};

/// A9, per joint: the ALM coefficients of its rows, the start-of-step strain (C0 and
/// the damping reference) and the retained multipliers.
struct StepJointC0LambdaRho {
  RigidBodiesDevice bodies;
  RigidJointsDevice joints;
  const Transform* __restrict__ startPoses;  // (numBodies)
  WordMajorOut<RodStepTerms> terms;          // (numJoints) out
  WordMajorOut<RodMultipliers> lambda;       // (numJoints) in/out
  float h, gamma, alpha;

  WEFT_HD void operator()(int j) const {
    const int p = joints.parent[j], c = joints.child[j];
    const float invMassP = p >= 0 ? bodies.invMass[p] : 0.0f;
    const float invMassC = bodies.invMass[c];
    const float trP = p >= 0 ? traceOf(bodies.invInertia[p]) : 0.0f;
    const float trC = traceOf(bodies.invInertia[c]);
    const RodJoint rod = joints.rod[j];
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
    terms.store(j, t);
    lambda.store(j, l);
  }
};

/// A10, per joint (only when some joint has Dahl): σ0 and C_fric into the
/// step terms, from the strain at the start-of-step poses.
struct ComputeRodDahlParameters {
  RigidJointsDevice joints;
  const Transform* __restrict__ startPoses;  // (numBodies)
  DahlState* __restrict__ dahl;              // (numJoints) in/out
  WordMajorOut<RodStepTerms> terms;          // (numJoints) in/out: σ0 and C_fric written

  WEFT_HD void operator()(int j) const {
    if (joints.type[j] != int(JointType::Rod)) return;
    const RodJoint rod = joints.rod[j];
    const Vec3 kappa =
        rodStrain(bodyPoseOrWorld(startPoses, joints.parent[j]), startPoses[joints.child[j]], rod)
            .kappa;
    DahlState s = dahl[j];
    const DahlTerms d = dahlCompute(s, kappa, dahlAxisStiffness(rod.material), joints.dahlEpsMax[j],
                                    joints.dahlTau[j], true, false);
    dahl[j] = s;
    terms.storeMember(j, offsetof(RodStepTerms, dahlSigma0), d.sigma0);
    terms.storeMember(j, offsetof(RodStepTerms, dahlCFric), d.cFric);
  }
};

// ---- per iteration ------------------------------------------------------------------------------

/// The ALM dual step of contact row r (§5.5.4) at `poses`, from its multiplier in `in` (null:
/// its state's own). Not inlined, and given only indices and pointers (platform.h,
/// WEFT_NOINLINE): the folding solve launch and update_rigid_duals call the same compiled
/// function, so a folded and an unfolded dual step give the same bits on CUDA too, and a call
/// passes nothing through the stack. `com` is the bodies' word-major centres of mass
/// (RigidBodiesDevice::com's words).
WEFT_HD WEFT_NOINLINE Vec3 contactDualStep(int r, const Vec3* in, const RigidContact* rows,
                                           const RigidContactState* states, const float* com,
                                           const Transform* poses, float alpha) {
  const RigidContact c = rows[r];
  RigidContactState state = states[r];
  if (in) state.lambda = in[r];
  return rigidContactDualUpdate(c, state,
                                contactFrames(c, WordMajorIn<Vec3>{com}, PoseArray{poses}), alpha);
}

/// The ALM dual step of joint j's rows (§5.6.3, §5.7) at `poses`, from its multipliers in `in`;
/// not inlined, like contactDualStep. `in`, `rods` and `terms` are word-major arrays
/// (kernels/runtime/word_major.h).
WEFT_HD WEFT_NOINLINE RodMultipliers jointDualStep(int j, const float* in, const int* type,
                                                   const int* parent, const int* child,
                                                   const float* rods, const float* terms,
                                                   const Transform* poses) {
  RodMultipliers l = loadWordMajor<RodMultipliers>(in, j);
  const RodStepTerms t = loadWordMajor<RodStepTerms>(terms, j);
  const Transform pp = bodyPoseOrWorld(poses, parent[j]);
  const Transform pc = poses[child[j]];
  const RodJoint rod = loadWordMajor<RodJoint>(rods, j);
  if (type[j] == int(JointType::Rod)) {
    rodJointDuals(rodStrain(pp, pc, rod), t, l);
  } else {
    ballJointDuals(ballJointResidual(pp, pc, rod.parentAnchor.p, rod.childAnchor.p), t.start.u,
                   t.alm.stretch, t.alpha, l.lin);
  }
  return l;
}

/// The dual step between two iterations, folded into the next iteration's solve launches (small
/// models; RigidSolverOptions::foldDualsUpToBodies). Iteration i ≥ 1 starts from the poses
/// iteration i − 1 ended with (its `poses.previous`, which no launch of iteration i writes), and
/// the multipliers move between buffers (`in` → `out`), so the step needs no launch of its own:
/// the first color's launch (solve_rigid_body_tile_folding_duals) carries extra items, batches of
/// kBatch rows or joints, that write every new λ to `out`, while its own bodies compute the new λ
/// of their rows and joints themselves (the same function of the same values: the same bits);
/// the later colors' launches (solve_rigid_body_tile) read them from `out`, passed to them as
/// their `in`. Only that one launch per iteration carries the dual-step code (and its registers).
struct FoldedDuals {
  static constexpr int kBatch = 16;  // rows or joints per extra item
  const Vec3* contactIn = nullptr;   // (row slots) the λ to solve with (folding: the λ before
                                     // the step); null: contactState's own
  Vec3* contactOut = nullptr;        // (row slots) folding: the new λ
  WordMajorIn<RodMultipliers> jointIn{};    // (numJoints) likewise; null: the solve's `lambda`
  WordMajorOut<RodMultipliers> jointOut{};  // (numJoints) folding: the new λ
  int rowSlots = 0, numJoints = 0;          // folding: what the extra items cover

  /// Extra items of the folding launch.
  WEFT_HD int batches() const {
    return (rowSlots + kBatch - 1) / kBatch + (numJoints + kBatch - 1) / kBatch;
  }
};

/// A body's Newton step (§5.2) as a tile (launch.h, Tile shape), one item per body of a color:
///   part 0                      the inertial block
///   parts 1 .. J                the body's joints, in its joint order
///   parts J+1 .. J+P            contact runs: run k sums the body's list entries k, k+P, k+2P, …
///                               in order, P = min(kContactParts, its rows)
/// The tile's fixed tree adds the parts (the order depends only on the part count, so the block is
/// bit-identical for every tile size and on the CPU), lane 0 factors the 6×6 system and writes the
/// new pose to `poses.updated`. Kinematic bodies have no parts and copy their pose across.
/// Lanes of one warp that evaluate parts of different kinds (inertia, joint, contact run) diverge
/// and run one after another, so a tile buys the contact runs' parallelism and the removal of the
/// separate accumulation launch, not a shorter joint chain (docs/PERFORMANCE.md, "Cables").
/// solve_rigid_body_tile (kFoldsDuals false) and solve_rigid_body_tile_folding_duals (true: also
/// the dual step of the iteration before, FoldedDuals).
/// kSharedLevels (RigidSolverOptions::oneLaneLevels): a one-lane tile keeps its first
/// kSharedLevels tree levels in shared memory and the deeper ones in `oneLaneSpill` (0: every
/// level in shared memory, ten warps an SM); with three, twelve (120 registers would let eight
/// blocks of 64 in, but the shared memory is sized for six: kOneLaneBlocksPerSm), and with two,
/// held to 128 registers, sixteen (the same bits; other tile sizes are the same code either way).
/// kJointDualsInBlocks (models that take the joints' dual step in their blocks,
/// RigidSolverOptions::jointDualsInBlocksUpToWorldColor): that model's launches per color and its
/// folding launch; see jointPart. A template parameter, so that the other models' kernels carry
/// none of its code (in every model's kernel it cost the twist and the pile up to 10%:
/// docs/PERFORMANCE.md). It keeps the kernel names, and so the launch sizes, of the body solve
/// it replaces: the same work a body plus one joint's dual step, at the same registers (160
/// against 159 in the one-lane tile, ptxas), so a table's entries measured on either apply; a
/// kernel name of its own, without entries in the tables, ran its small batches at the built-in
/// size and lost a third there (docs/PERFORMANCE.md).
template <bool kFoldsDuals, int kSharedLevels = 0, bool kJointDualsInBlocks = false>
struct SolveRigidBodyTileT {
  static constexpr KernelId kId =
      kFoldsDuals ? KernelId::solve_rigid_body_tile_folding_duals : KernelId::solve_rigid_body_tile;
  static constexpr int kContactParts = 16;
  static constexpr int kOneLaneMaxRegisters = kSharedLevels == 2 ? 128 : 0;  // 0: no cap
  static constexpr int kOneLaneSharedLevels = kSharedLevels;                 // 0: lends no spill
  // The three-level tile's blocks of 64 tiles take 20,736 B of shared memory each (64 tiles × 3
  // levels × the 27 words a tree keeps of a BodyBlock). At its 120 registers eight fit an SM,
  // which by default gets the shared memory eight need and leaves L1 little; sized for six (132
  // KB) L1 keeps 124 KB, and the twist and bundle batches of 1024 worlds run 1.03x and 1.02x
  // faster than with 33 words in 164 KB, where seven blocks were 1.00x and 0.98x and eight 0.94x
  // and 0.90x (docs/PERFORMANCE.md, "The body tile's tree keeps the lower triangles"). Blocks of
  // 64: at 27 words 128 tiles would pass under the 48 KB limit, and the driver then configured
  // 228 KB for five blocks of 128 (twist × 1024 0.75x).
  static constexpr int kOneLaneTilesPerBlock = kSharedLevels == 3 ? 64 : 0;  // 0: tileLayout's
  static constexpr int kOneLaneBlocksPerSm = kSharedLevels == 3 ? 6 : 0;     // 0: the default
  // The two-level tile, held to 128 registers, walks its own depth: at the warp's it spills more
  // (ptxas: 52/128 B of spill stores/loads, 44/104 at its own), and the pile batch, whose
  // falling frames run this tile, is 1.01x faster at its own (docs/PERFORMANCE.md, "The
  // two-level tile at its own depth").
  static constexpr bool kOneLaneWalksOwnDepth = kSharedLevels == 2;
  using Part = BodyBlock;

  RigidBodiesDevice bodies;
  RigidJointsDevice joints;
  RigidContactsView contacts;                          // rows null: no contacts
  const RigidContactState* __restrict__ contactState;  // (row capacity)
  const int* __restrict__ colorBodies;                 // this color's bodies
  IteratePoses poses;                                  // current iterates (see the header)
  WordMajorIn<Transform> inertialPoses;                // (numBodies)
  WordMajorIn<RodStepTerms> terms;                     // (numJoints)
  WordMajorIn<RodMultipliers> lambda;                  // (numJoints)
  int maxJointsPerBody;
  float h, frictionEpsilon, contactAlpha;
  int bodyItems = 0;  // this color's bodies; folding, items from here on are dual-step batches
  FoldedDuals duals;  // where the multipliers come from (and, folding, go)
  float* __restrict__ largestStep = nullptr;  // (2) or null: atomic max of the color's |Δx| [m]
                                              // and |Δθ| [rad] (convergence, read-only of the
                                              // solve: order-independent, so deterministic)

  // Chebyshev acceleration (RigidSolverOptions::chebyshevRho): each body's new pose is
  // x_(k−1) + ω·(x̂ − x_(k−1)), x̂ the Newton step's pose and x_(k−1) the iterate before last,
  // which the pose buffer this launch writes still holds (IteratePoses alternates two buffers);
  // rotations along the relative rotation vector. 1: the plain step.
  float chebyshevOmega = 1.0f;
  // kSharedLevels > 0: global memory for the deeper tree levels of one-lane tiles
  // (RigidScratch::oneLaneSpill).
  OneLaneSpill oneLaneSpill{};
  // The rows of the bodies' lists as entries (GatherContactEnds), where the contact runs read
  // them (contacts.bodyOffsets indexes both).
  const RigidContactEnd* __restrict__ contactEnds = nullptr;
  // kJointDualsInBlocks, from the second iteration on: each joint's dual step of the iteration
  // before is taken by the end that joints.bodyJoints marks (~j: RigidModel::bodyJointsTakingDuals)
  // inside its block, which writes the new λ to `lambdaOut` (the words of `lambda`) in place for
  // the other end, whose color comes later (jointPart). No body of a launch reads a λ that another
  // body of it writes, except in the per-world launch, where the later color's lane of the same
  // group reads it after the group's barrier, as it read the dual pass's before.
  bool jointDualsInBlocks = false;
  WordMajorOut<RodMultipliers> lambdaOut{};

  int maxParts() const { return 1 + maxJointsPerBody + kContactParts; }
  /// Items of the launch: the color's bodies, then (folding) the dual-step batches.
  int items() const { return bodyItems + (kFoldsDuals ? duals.batches() : 0); }
  WEFT_HD bool isDualBatch(int item) const { return kFoldsDuals && item >= bodyItems; }

  /// The multipliers this iteration solves with (folding: after the dual step).
  WEFT_HD Vec3 contactLambda(int r, const RigidContactState& s) const {
    if constexpr (kFoldsDuals)
      return contactDualStep(r, duals.contactIn, contacts.rows, contactState, bodies.com.words,
                             poses.previous, contactAlpha);
    else
      return duals.contactIn ? duals.contactIn[r] : s.lambda;
  }
  WEFT_HD RodMultipliers jointLambda(int j) const {
    const WordMajorIn<RodMultipliers> in = duals.jointIn.words ? duals.jointIn : lambda;
    if constexpr (kFoldsDuals && !kJointDualsInBlocks)  // else the blocks take the joints' step
      return jointDualStep(j, in.words, joints.type, joints.parent, joints.child, joints.rod.words,
                           terms.words, poses.previous);
    else
      return in[j];
  }

  /// How many rows or joints batch `batch` of the dual step holds: rows first (only the stored
  /// ones: batches past the row count hold none, so their tiles leave at once), then joints.
  WEFT_HD int dualBatchSize(int batch) const {
    const int rowBatches = (duals.rowSlots + FoldedDuals::kBatch - 1) / FoldedDuals::kBatch;
    const int first = batch < rowBatches ? batch * FoldedDuals::kBatch
                                         : (batch - rowBatches) * FoldedDuals::kBatch;
    const int end = batch < rowBatches
                        ? (*contacts.count < duals.rowSlots ? *contacts.count : duals.rowSlots)
                        : duals.numJoints;
    const int n = end - first;
    return n <= 0 ? 0 : n < FoldedDuals::kBatch ? n : FoldedDuals::kBatch;
  }

  /// Batch `batch` of the dual step: rows first, then joints; slot k of it.
  WEFT_HD void dualStep(int batch, int k) const {
    if constexpr (!kFoldsDuals) return;
    const int rowBatches = (duals.rowSlots + FoldedDuals::kBatch - 1) / FoldedDuals::kBatch;
    if (batch < rowBatches) {
      const int r = batch * FoldedDuals::kBatch + k;
      if (r >= duals.rowSlots || r >= *contacts.count) return;
      duals.contactOut[r] = contactLambda(r, contactState[r]);
      return;
    }
    // Where the blocks take the joints' dual step there are no joint batches (numJoints 0), and
    // their copy is compiled out: with it, the front end fused three more products of the
    // finish (a rotation in applyIncrement) at tiles of 64 lanes and more than at 1-32, which
    // FmaContraction.EveryLaunchSizeOfAKernelFusesTheSameProducts found (docs/DESIGN_NOTES.md).
    if constexpr (!kJointDualsInBlocks) {
      const int j = (batch - rowBatches) * FoldedDuals::kBatch + k;
      if (j < duals.numJoints) duals.jointOut.store(j, jointLambda(j));
    }
  }

  WEFT_HD int contactRuns(int b) const {
    if (!contacts.rows) return 0;
    const int n = contacts.bodyOffsets[b + 1] - contacts.bodyOffsets[b];
    return n < kContactParts ? n : kContactParts;
  }

  WEFT_HD int partCount(int item) const {
    if (isDualBatch(item)) return dualBatchSize(item - bodyItems);
    const int b = colorBodies[item];
    if (!(bodies.mass[b] > 0.0f)) return 0;
    return 1 + (joints.offsets[b + 1] - joints.offsets[b]) + contactRuns(b);
  }

  WEFT_HD Part part(int item, int k) const {
    if (isDualBatch(item)) {
      dualStep(item - bodyItems, k);
      return Part{};
    }
    const int b = colorBodies[item];
    if (k == 0)
      return inertialBlock(poses.previous[b], inertialPoses[b], bodies.com[b], bodies.mass[b],
                           bodies.inertia[b], h);
    const int jointParts = joints.offsets[b + 1] - joints.offsets[b];
    if (k <= jointParts) return jointPart(b, joints.bodyJoints[joints.offsets[b] + k - 1]);
    const int run = k - 1 - jointParts, runs = contactRuns(b);
    const int end = contacts.bodyOffsets[b + 1];
    BodyBlock sum{};
    if constexpr (kOwnFrameOnce) {
      // The solved body's own frame is the same for every entry: loaded once, before the loop,
      // so that an entry loads only its partner's (docs/PERFORMANCE.md, "The body's own frame
      // loaded once per contact run").
      const Transform ownPose = poses.previous[b];
      const Vec3 ownCom = bodies.com[b];
      for (int e = contacts.bodyOffsets[b] + run; e < end; e += runs) {
        const RigidContactEnd c = loadContactEnd(contactEnds, e);
        const int r = c.row;
        RigidContactState state = contactState[r];
        state.lambda = contactLambda(r, state);
        const bool one = c.body1 == b;
        const int other = one ? c.body0 : c.body1;
        // The partner's iterate: this iteration's where its color comes first (its entry says
        // so, GatherContactEnds), else the one the iteration started from; its color is not
        // loaded on the way (IteratePoses would).
        const Transform otherPose =
            other >= 0 ? (c.partnerFirst ? poses.updated : poses.previous)[other] : Transform{};
        const Vec3 otherCom = other >= 0 ? bodies.com[other] : Vec3{};
        // Selected, not indexed by `one`: a run-time index would put the frames in local memory.
        ContactBodyFrames f;
        f.pose[0] = one ? otherPose : ownPose;
        f.pose[1] = one ? ownPose : otherPose;
        f.com[0] = one ? otherCom : ownCom;
        f.com[1] = one ? ownCom : otherCom;
        sum += rigidContactBlock(one ? 1 : 0, c, state, f, h, frictionEpsilon, contactAlpha);
      }
    } else {
      // Both frames per entry (contactFrames): the two-level tile, held to 128 registers,
      // spills more with the own frame held (and runs only models without contacts).
      const OwnPoseFirst ownPoseFirst{poses, b};
      for (int e = contacts.bodyOffsets[b] + run; e < end; e += runs) {
        const RigidContactEnd c = loadContactEnd(contactEnds, e);
        const int r = c.row;
        RigidContactState state = contactState[r];
        state.lambda = contactLambda(r, state);
        sum += rigidContactBlock(c.body1 == b ? 1 : 0, c, state,
                                 contactFrames(c, bodies.com, ownPoseFirst), h, frictionEpsilon,
                                 contactAlpha);
      }
    }
    return sum;
  }

  /// Whether a contact run loads the solved body's own frame once (see part()): not in the
  /// two-level tile, which runs only models without contacts (OneLaneLevels::Auto).
  static constexpr bool kOwnFrameOnce = kSharedLevels != 2;

  /// The block of body b's joint `entry` of its list (joints.bodyJoints). With
  /// kJointDualsInBlocks, an entry ~j marks the joint's end that takes its dual step (the end of
  /// the earlier color, or its only dynamic end): from the second iteration on, that end's block
  /// first takes the dual step of the iteration before (both ends' poses are still the
  /// iteration's start, where it is evaluated), sharing the frames and the strain with the block
  /// (rodJointDualAndBlock), and writes the new λ, which the other end, later, reads.
  WEFT_HD BodyBlock jointPart(int b, int entry) const {
    int j = entry;
    bool takesDual = false;
    if constexpr (kJointDualsInBlocks) {
      takesDual = jointDualsInBlocks && entry < 0;
      j = entry < 0 ? ~entry : entry;
    }
    const int p = joints.parent[j], c = joints.child[j];
    const bool solvingParent = p == b;
    const OwnPoseFirst ownPoseFirst{poses, b};
    const JointEnd parentEnd = jointEnd(ownPoseFirst, bodies, p);
    const JointEnd childEnd = jointEnd(ownPoseFirst, bodies, c);
    const RodJoint rod = joints.rod[j];
    const RodStepTerms t = terms[j];
    const bool isRod = joints.type[j] == int(JointType::Rod);
    if constexpr (kJointDualsInBlocks) {
      if (takesDual) {
        RodMultipliers l = lambda[j];
        if (isRod) {
          const BodyBlock block =
              rodJointDualAndBlock(solvingParent, parentEnd, childEnd, rod, t, l, h);
          lambdaOut.store(j, l);
          return block;
        }
        ballJointDuals(
            ballJointResidual(parentEnd.pose, childEnd.pose, rod.parentAnchor.p, rod.childAnchor.p),
            t.start.u, t.alm.stretch, t.alpha, l.lin);
        lambdaOut.store(j, l);
        return ballJointBlock(solvingParent, parentEnd, childEnd, rod.parentAnchor.p,
                              rod.childAnchor.p, t.alm.stretch, rod.material.stretchDamping,
                              t.alpha, t.start.u, l.lin, h);
      }
    }
    const RodMultipliers l = jointLambda(j);
    if (isRod) return rodJointBlock(solvingParent, parentEnd, childEnd, rod, t, l, h);
    return ballJointBlock(solvingParent, parentEnd, childEnd, rod.parentAnchor.p, rod.childAnchor.p,
                          t.alm.stretch, rod.material.stretchDamping, t.alpha, t.start.u, l.lin, h);
  }

  WEFT_HD void finish(int item, const Part& block) const {
    if (isDualBatch(item)) return;  // a dual-step batch: written in part()
    const int b = colorBodies[item];
    const Transform pose = poses.previous[b];
    if (!(bodies.mass[b] > 0.0f)) {
      poses.updated[b] = pose;
      return;
    }
    // The iterate before last, loaded before the solve so that its latency hides behind it.
    const bool accelerated = chebyshevOmega != 1.0f;
    const Transform older = accelerated ? poses.updated[b] : pose;
    Vec3 dx, dtheta;
    solveBodyBlock(block, dx, dtheta);
    Transform solved = applyIncrement(pose, bodies.com[b], dx, dtheta);
    if (accelerated) solved = extrapolatePose(older, solved, bodies.com[b], chebyshevOmega);
    poses.updated[b] = solved;
    if (largestStep) {
      atomicMaxNonNegativeFloat(&largestStep[0], length(dx));
      atomicMaxNonNegativeFloat(&largestStep[1], length(dtheta));
    }
  }
};

using SolveRigidBodyTile = SolveRigidBodyTileT<false, 3>;                 // OneLaneLevels::Three
using SolveRigidBodyTileTwoSharedLevels = SolveRigidBodyTileT<false, 2>;  // OneLaneLevels::Two
// Every level in shared memory: only models of at most foldDualsUpToBodies bodies fold.
using SolveRigidBodyTileFoldingDuals = SolveRigidBodyTileT<true>;
// Models that take the joints' dual step in their blocks: every color, and the folding launch
// (which then folds only the rows' dual step), and the per-world launch's bodies.
using SolveRigidBodyTileJointDuals = SolveRigidBodyTileT<false, 3, true>;
using SolveRigidBodyTileFoldingDualsJointDuals = SolveRigidBodyTileT<true, 0, true>;

/// Per row slot (rows ≥ the stored count return): the ALM dual step (§5.5.4) from `in` (null:
/// the state's own λ) into the state.
struct UpdateDualsBodyBodyContacts {
  RigidBodiesDevice bodies;
  RigidContactsView contacts;
  const Transform* __restrict__ poses;    // (numBodies)
  RigidContactState* __restrict__ state;  // (capacity) in/out
  float alpha;
  const Vec3* __restrict__ in = nullptr;  // (capacity) the last λ, or null

  WEFT_HD void operator()(int r) const {
    if (r >= *contacts.count) return;
    state[r].lambda = contactDualStep(r, in, contacts.rows, state, bodies.com.words, poses, alpha);
  }
};

/// Per joint: the ALM dual step of its rows at the current poses (§5.6.3, §5.7), from `in`
/// (null: `lambda` itself) into `lambda`.
struct UpdateDualsJoint {
  RigidJointsDevice joints;
  const Transform* __restrict__ poses;  // (numBodies)
  WordMajorIn<RodStepTerms> terms;      // (numJoints)
  WordMajorOut<RodMultipliers> lambda;  // (numJoints) in/out
  WordMajorIn<RodMultipliers> in{};     // (numJoints) the last λ, or null

  WEFT_HD void operator()(int j) const {
    lambda.store(j, jointDualStep(j, in.words ? in.words : lambda.words, joints.type, joints.parent,
                                  joints.child, joints.rod.words, terms.words, poses));
  }
};

/// Where each world of a batch keeps its bodies, joints and shapes (RigidModel::worldsView):
/// worlds are contiguous in bodies, joints and shapes, and color c lists world 0's bodies, then
/// world 1's, … (solver/cable_builder.h, combineWorlds), so each is a range.
struct RigidWorldsDevice {
  // (numColors × (numWorlds + 1)) world w's bodies of color c are colorBodies[colorOffsets[c ·
  // (numWorlds + 1) + w] .. colorOffsets[c · (numWorlds + 1) + w + 1])
  const int* __restrict__ colorOffsets = nullptr;
  const int* __restrict__ jointBegin = nullptr;  // (numWorlds + 1)
  const int* __restrict__ shapeBegin = nullptr;  // (numWorlds + 1)
  int numWorlds = 1, numColors = 0;
};

/// solve_rigid_world_iterations: a substep's iterations of one world in one group of lanes
/// (IterationLaunches::PerWorld), instead of a launch per color and iteration. Per
/// iteration the group's lanes solve the world's bodies of each color in turn (a body per lane,
/// the one-lane tile's parts, tree and finish: the same source as solve_rigid_body_tile's
/// one-lane tiles), with a group barrier between colors, then the dual step of the world's rows
/// and joints in place (update_rigid_duals' functions; the joints' only after the last iteration
/// where the blocks take it: takesJointDuals), and a barrier. A world never reads
/// another's bodies, so nothing waits for other worlds. The same bits as the launches per color
/// for every group size and on both backends: the same functions in the same order, each body in
/// a function of its own (solveBodyOnOneLane; inlined into these loops it contracted its
/// arithmetic differently: docs/DESIGN_NOTES.md), which the tests check.
/// Tree levels: the first kSharedLevels in group-shared memory, the deeper ones in `spill`
/// (word-major over the launch's lanes) on CUDA; a local array on the CPU.
template <class Tile>
struct SolveRigidWorldIterationsT {
  static constexpr KernelId kId = KernelId::solve_rigid_world_iterations;
  static constexpr int kSharedLevels = 2;
  static constexpr int kWords = TreeWords<BodyBlock>::kWords;
  static constexpr int kSharedIntsPerLane = kSharedLevels * kWords;
  static constexpr int kMaxLevels = 8;  // log2(kMaxTileParts)

  // colorBodies: all colors; poses, ω, largestStep and jointDualsInBlocks set per color
  Tile solve;
  RigidWorldsDevice worlds;
  Transform* iterates[2] = {};                 // iteration k reads [k % 2] and writes [(k + 1) % 2]
  const float* __restrict__ omegas = nullptr;  // (iterations) Chebyshev weight of each
  float* largestSteps = nullptr;               // (2 × iterations) or null (convergence record)
  int iterations = 0;
  UpdateDualsBodyBodyContacts contactDuals;  // poses set per iteration; rows null: no contacts
  const int* __restrict__ shapeRowOffsets = nullptr;  // (numShapes + 1) rows by lower shape
  UpdateDualsJoint jointDuals;                        // poses set per iteration
  // The joints' dual step in the next iteration's blocks (Tile SolveRigidBodyTileJointDuals;
  // solve.joints.bodyJoints marks the ends that take it), so the pass takes it only after the
  // last iteration.
  bool takesJointDuals = false;
  unsigned* spill = nullptr;  // CUDA: (levels − kSharedLevels) × kWords × numWorlds × lanes
  Tile* tiles = nullptr;      // CUDA: (2 × numWorlds) each world's tile, two steps

  /// What an iteration changes in `solve`: the iterates it reads and writes, its Chebyshev weight
  /// and where its largest steps go.
  struct IterationArguments {
    const Transform* previous;
    Transform* updated;
    float omega;
    float* largestStep;
    bool jointDualsInBlocks;

    WEFT_HD void apply(Tile& tile, int color) const {
      tile.poses.previous = previous;
      tile.poses.updated = updated;
      tile.poses.color = color;
      tile.chebyshevOmega = omega;
      tile.largestStep = largestStep;
      tile.jointDualsInBlocks = jointDualsInBlocks;
    }
  };

#ifdef __CUDA_ARCH__
  /// Body `item` of `tile`'s color on one lane: its first kSharedLevels tree levels at
  /// levelWords[(level · kWords + w) · lanes], the deeper ones at deep[((level − kSharedLevels) ·
  /// kWords + w) · slots]. Not inlined: compiled once, in a context like the one-lane tile's own,
  /// so that its arithmetic is contracted as the tile's is (inlined into the loops of this kernel,
  /// some bodies came out with other bits than solve_rigid_body_tile's). `tile` is the world's
  /// slot in `tiles`, at the same address on every lane of the group.
  static __device__ __noinline__ void solveBodyOnOneLane(const Tile& tile, int item,
                                                         unsigned* levelWords, int lanes,
                                                         unsigned* deep, size_t slots) {
    const auto storeLevel = [&](int level, const BodyBlock& p) {
      unsigned words[kWords];
      TreeWords<BodyBlock>::store(p, words);
      if (level < kSharedLevels) {
#pragma unroll
        for (int w = 0; w < kWords; ++w) levelWords[(level * kWords + w) * lanes] = words[w];
      } else {
        unsigned* const at = deep + size_t(level - kSharedLevels) * kWords * slots;
#pragma unroll
        for (int w = 0; w < kWords; ++w) at[size_t(w) * slots] = words[w];
      }
    };
    const auto loadLevel = [&](int level) {
      unsigned words[kWords];
      if (level < kSharedLevels) {
#pragma unroll
        for (int w = 0; w < kWords; ++w) words[w] = levelWords[(level * kWords + w) * lanes];
      } else {
        const unsigned* const at = deep + size_t(level - kSharedLevels) * kWords * slots;
#pragma unroll
        for (int w = 0; w < kWords; ++w) words[w] = at[size_t(w) * slots];
      }
      return TreeWords<BodyBlock>::load(words);
    };
    tile.finish(item, sumPartsOneLane(tile, item, storeLevel, loadLevel, WarpTreeDepth{}));
  }
#endif

  template <class Group>
  WEFT_HD void operator()(const Group& g, int world) const {
    const int stride = worlds.numWorlds + 1;
    const bool rows = contactDuals.contacts.rows != nullptr;
    // Contacts never cross worlds and the rows are grouped by their lower shape.
    const int rowBegin = rows ? shapeRowOffsets[worlds.shapeBegin[world]] : 0;
    const int rowEnd = rows ? shapeRowOffsets[worlds.shapeBegin[world + 1]] : 0;
    const int jointBegin = worlds.jointBegin[world], jointEnd = worlds.jointBegin[world + 1];
#ifdef __CUDA_ARCH__
    // The tile of each (iteration, color) step in the world's two slots, alternately: the first
    // lane writes the next step's slot while the others may still read this one's, and the
    // barrier after each color orders both. One copy for the group, where a copy on each lane's
    // stack would fill the L1 (docs/PERFORMANCE.md).
    Tile* const worldTiles = tiles + 2 * size_t(world);
    if (g.rank() == 0) {
      worldTiles[0] = solve;
      worldTiles[1] = solve;
      iterationArguments(0).apply(worldTiles[0], 0);
    }
    g.sync();
    int step = 0;
#endif
    for (int it = 0; it < iterations; ++it) {
      const IterationArguments iteration = iterationArguments(it);
      for (int c = 0; c < worlds.numColors; ++c) {
        const int end = worlds.colorOffsets[c * stride + world + 1];
#ifdef __CUDA_ARCH__
        const Tile& tile = worldTiles[step % 2];
        const int lanes = g.size();
        const size_t slots = size_t(worlds.numWorlds) * size_t(lanes);
        for (int i = worlds.colorOffsets[c * stride + world] + g.rank(); i < end; i += lanes)
          solveBodyOnOneLane(tile, i, reinterpret_cast<unsigned*>(g.shared()) + g.rank(), lanes,
                             spill + size_t(world) * size_t(lanes) + size_t(g.rank()), slots);
        ++step;
        if (g.rank() == 0) {  // the next step's tile
          const bool last = c + 1 == worlds.numColors;
          if (!last || it + 1 < iterations)
            iterationArguments(last ? it + 1 : it).apply(worldTiles[step % 2], last ? 0 : c + 1);
        }
#else
        Tile tile = solve;
        iteration.apply(tile, c);
        for (int i = worlds.colorOffsets[c * stride + world] + g.rank(); i < end; i += g.size()) {
          BodyBlock levels[kMaxLevels];
          const auto storeLevel = [&](int level, const BodyBlock& p) { levels[level] = p; };
          const auto loadLevel = [&](int level) { return levels[level]; };
          tile.finish(i, sumPartsOneLane(tile, i, storeLevel, loadLevel));
        }
#endif
        g.sync();  // the next color reads this one's poses
      }
      UpdateDualsBodyBodyContacts contact = contactDuals;
      contact.poses = iteration.updated;
      if (rows)
        for (int r = rowBegin + g.rank(); r < rowEnd; r += g.size()) contact(r);
      UpdateDualsJoint joint = jointDuals;
      joint.poses = iteration.updated;
      if (!takesJointDuals || it + 1 == iterations)
        for (int j = jointBegin + g.rank(); j < jointEnd; j += g.size()) joint(j);
      g.sync();  // the next iteration solves with the new multipliers
    }
  }

  WEFT_HD IterationArguments iterationArguments(int it) const {
    return {iterates[it % 2], iterates[(it + 1) % 2], omegas[it],
            largestSteps ? largestSteps + 2 * it : nullptr, takesJointDuals && it > 0};
  }
};

// The same bits as the launches per color only with their tile type (compiled apart, one body
// solve may contract its arithmetic otherwise): the models that take the joints' dual step in
// their blocks solve with SolveRigidBodyTileJointDuals, the others with SolveRigidBodyTile.
using SolveRigidWorldIterations = SolveRigidWorldIterationsT<SolveRigidBodyTile>;
using SolveRigidWorldIterationsJointDuals =
    SolveRigidWorldIterationsT<SolveRigidBodyTileJointDuals>;

// ---- end of step --------------------------------------------------------------------------------

/// Per body (kinematic ones too): BDF1 velocities (§5.9), the next step's start pose, the final
/// pose into the state when the iterations ended in the other buffer, and the substep counter
/// (index 0; nothing in the launch reads it).
struct UpdateBodyVelocity {
  WordMajorIn<Vec3> com;                 // (numBodies)
  const Transform* __restrict__ poses;   // (numBodies) final
  Transform* __restrict__ statePoses;    // (numBodies) out, or null when `poses` are the state's
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
    if (statePoses) statePoses[b] = pose;
    if (b == 0) *substep += 1;
  }
};

/// Per joint (Dahl on): advance the Dahl state at the final poses (§5.8 F).
struct UpdateCableDahlState {
  RigidJointsDevice joints;
  const Transform* __restrict__ poses;  // (numBodies) final
  DahlState* __restrict__ dahl;         // (numJoints) in/out

  WEFT_HD void operator()(int j) const {
    if (joints.type[j] != int(JointType::Rod)) return;
    const RodJoint rod = joints.rod[j];
    const Vec3 kappa =
        rodStrain(bodyPoseOrWorld(poses, joints.parent[j]), poses[joints.child[j]], rod).kappa;
    DahlState s = dahl[j];
    dahlUpdate(s, kappa, dahlAxisStiffness(rod.material), joints.dahlEpsMax[j], joints.dahlTau[j],
               true);
    dahl[j] = s;
  }
};

// ---- the launches of a substep ------------------------------------------------------------------

/// The items that serve the row slots of begin_rigid_step and update_rigid_duals: item i takes
/// slots i, i + stride, … (a slot past the detection's row count returns at once). The row
/// capacity is sized for the most contacts a model might have (4 per shape by default), so a
/// thread per slot is mostly threads that only read the count (999,424 slots for no row at 4096
/// y_junction worlds). The stride is at least `leastItems` (RigidSolverOptions::rowSlotItems:
/// enough threads to fill the GPU, so that a batch whose slots are all rows keeps its parallelism),
/// at least a quarter of the slots and never fewer than the launch has anyway (`others`: bodies,
/// joints); a model with fewer slots than that keeps a thread per slot. The same bits for any
/// stride: each slot is computed alone.
inline constexpr int kRowSlotsPerItem = 4;
WEFT_HD constexpr int rowSlotStride(int rowSlots, int others, int leastItems) {
  int stride = (rowSlots + kRowSlotsPerItem - 1) / kRowSlotsPerItem;
  if (stride < leastItems) stride = leastItems;
  if (stride < others) stride = others;
  return stride < rowSlots ? stride : rowSlots;
}

/// Serves the row slots of item i with `slot(r)`. Strided: slots i, i + stride, … (i < stride);
/// else slot i alone (a thread per slot, stride = rowSlots). The launches take the strided code
/// only where the stride is smaller than the slots (StridedRowSlots below): in small models the
/// loop alone cost 1–2% of a substep on the H100.
template <bool kStrided, class Slot>
WEFT_HD WEFT_FORCEINLINE void serveRowSlots(int i, int rowSlots, int stride, const Slot& slot) {
  if constexpr (kStrided) {
    if (i >= stride) return;
    slot(i);
    for (int r = i + stride; r < rowSlots; r += stride) slot(r);
  } else {
    if (i < rowSlots) slot(i);
  }
}

/// begin_rigid_step: index i serves row slots i, i + rowStride, … (when there are contacts),
/// body i (its inertial prediction; after a detection also its list's entries) and joint i; the
/// five phases read the start-of-step poses or the detection and write disjoint arrays, so they
/// share one launch of max(rowStride, bodies, joints) threads. In small models, after a
/// detection, the solver splits it (SolverAVBD::beginStep): the bodies' and joints' phases, which
/// do not read the detection, in a launch beside it (Device::issueOnSide), the rows and list
/// entries after it.
struct BeginRigidStep {
  static constexpr KernelId kId = KernelId::begin_rigid_step;

  StepBodyBodyContactC0Lambda contacts;
  ForwardStepRigidBodies bodies;
  StepJointC0LambdaRho joints;
  ComputeRodDahlParameters dahl;
  GatherContactEnds ends;
  int rowSlots = 0;      // 0: no contact rows in this launch
  int rowStride = 0;     // rowSlotStride(rowSlots, the launch's other items, …); 0: no rows
  int stepBodies = 0;    // bodies whose inertial prediction this launch makes
  int gatherBodies = 0;  // bodies whose list entries it gathers (after a detection), else 0
  int numJoints = 0;     // joints whose step terms (and Dahl parameters) it makes
  bool hasDahl = false;

  template <bool kStrided = false>
  WEFT_HD void serve(int i) const {
    serveRowSlots<kStrided>(i, rowSlots, rowStride, contacts);
    if (i < stepBodies) bodies(i);
    if (i < gatherBodies) ends(i);
    if (i < numJoints) {
      joints(i);
      if (hasDahl) dahl(i);  // after the joint's terms are written (same thread)
    }
  }
  WEFT_HD void operator()(int i) const { serve(i); }
};

/// update_rigid_duals: index i serves row slots i, i + rowStride, … and joint i (Jacobi duals
/// after all colors).
struct UpdateRigidDuals {
  static constexpr KernelId kId = KernelId::update_rigid_duals;

  UpdateDualsBodyBodyContacts contacts;
  UpdateDualsJoint joints;
  int rowSlots, numJoints;  // rowSlots 0: no contacts
  int rowStride = 0;        // rowSlotStride(rowSlots, numJoints, …); 0: no contacts

  template <bool kStrided = false>
  WEFT_HD void serve(int i) const {
    serveRowSlots<kStrided>(i, rowSlots, rowStride, contacts);
    if (i < numJoints) joints(i);
  }
  WEFT_HD void operator()(int i) const { serve(i); }
};

/// begin_rigid_step or update_rigid_duals (K) whose items serve the row slots with a stride of
/// K::rowStride < K::rowSlots; K itself serves one slot per item.
template <class K>
struct StridedRowSlots : K {
  WEFT_HD void operator()(int i) const { K::template serve<true>(i); }
};

/// finish_rigid_step: index i is body i and (Dahl on) joint i, both at the final poses.
struct FinishRigidStep {
  static constexpr KernelId kId = KernelId::finish_rigid_step;

  UpdateBodyVelocity bodies;
  UpdateCableDahlState dahl;
  int numBodies, dahlJoints;  // dahlJoints 0: Dahl off

  WEFT_HD void operator()(int i) const {
    if (i < numBodies) bodies(i);
    if (i < dahlJoints) dahl(i);
  }
};

}  // namespace weft
