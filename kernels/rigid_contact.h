// Body–body contact rows of the AVBD cable path (rigid_avbd_spec §5.5, compliant-ALM path only):
// the row the detector writes (collision/rigid_contacts.h), the per-row solver state, and the
// three things the solver does with a row:
//   rigidContactBeginStep   per step, before the forward prediction (§5.5.3): mixed material,
//                           start-of-step residual C0, ρ_n and ρ_t, λ retention;
//   rigidContactBlock       per iteration, per endpoint body (§5.5.2): force, torque and the 6×6
//                           block (kernels/body_block.h) with the partner held fixed;
//   rigidContactDualUpdate  per iteration, after all colors (§5.5.4): the new λ.
//
// Geometry of a row (§5.5.1). Endpoint i has body b_i (−1: static, identity pose, COM 0):
//   skeleton point  P_i = T_i(point_i)             (the capsule's core point: normal force here)
//   anchor          A_i = T_i(point_i + offset_i)  (the surface point: friction here)
//   separation      g = n·(P1 − P0) − (margin0 + margin1),   penetration C_n = −g
// with offset0 = +margin0·n, offset1 = −margin1·n stored in the body frames at detection (they turn
// with the bodies) and margin_i = effective radius + shape margin. The normal n points from
// shape 0 to shape 1 and stays fixed for the step; body 1 receives +F, body 0 receives −F.
//
// ALM algebra (§5.3, kernels/compliant_alm.h): normal row with K = ke and ρ = ρ_n, force
// f_n = max(k_eff·C + s·λ_n, 0); friction is ideal Coulomb (no material stiffness): the trial
// ρ_t·(u + C0_t) + λ_t is projected onto the disk of radius μ·f_n, and its dual is not scaled by s.
// α (the C0 stabilization weight) defaults to 0, the reference's ALM default.
#pragma once

#include "kernels/body_block.h"
#include "kernels/compliant_alm.h"
#include "kernels/math.h"
#include "kernels/particle_shape_contact.h"  // frictionWeight (the IPC sliding weight φ)
#include "kernels/runtime/platform.h"
#include "kernels/shape.h"

namespace weft {

/// One contact row as the detector writes it (reference Contacts buffer, §3.3 and §6.3).
struct RigidContact {
  int shape0 = -1, shape1 = -1;  // shape0 < shape1
  int body0 = -1, body1 = -1;    // owning bodies, −1 = static (world)
  Vec3 point0, point1;           // skeleton points: body frame, world if static [m]
  Vec3 offset0, offset1;         // skeleton → surface anchor, body frame (world if static) [m]
  Vec3 normal;                   // world, unit, shape0 → shape1
  float margin0 = 0.0f, margin1 = 0.0f;  // effective radius + shape margin [m]
};

/// What the body solve reads of a row, gathered per entry of the bodies' row lists at each
/// detection (kernels/avbd.cuh, GatherContactEnds): the row index (for its state), the two bodies,
/// the skeleton points, the anchors (skeleton point + offset, summed once here), the normal and
/// the summed margins, and, in the last word, whether the partner's color comes before the body
/// whose list holds the entry (so that the body solve reads the partner's pose from this
/// iteration's iterates without loading its color first). A body's entries lie one after
/// another, so its lane reads them as a stream instead of looking up a row per entry, and the
/// poses of the row's bodies can be loaded as soon as the entry arrives. The same values as the
/// row's, so the same bits (contactPoints and rigidContactPenetration below add the offsets and
/// margins in the same order). 80 bytes, aligned to 16, so a lane loads an entry in five 16-byte
/// loads.
struct alignas(16) RigidContactEnd {
  int row = -1;
  int body0 = -1, body1 = -1;
  float margin = 0.0f;    // margin0 + margin1 [m]
  Vec3 point0, point1;    // skeleton points, body frame (world if static) [m]
  Vec3 anchor0, anchor1;  // point + offset [m]
  Vec3 normal;            // world, unit, shape0 → shape1
  int partnerFirst =
      0;  // 1: the partner's color comes before the solved body's (GatherContactEnds)
};
static_assert(sizeof(RigidContactEnd) == 80);

WEFT_HD WEFT_FORCEINLINE RigidContactEnd contactEnd(const RigidContact& c, int row) {
  RigidContactEnd e;
  e.row = row;
  e.body0 = c.body0;
  e.body1 = c.body1;
  e.margin = c.margin0 + c.margin1;
  e.point0 = c.point0;
  e.point1 = c.point1;
  e.anchor0 = c.point0 + c.offset0;
  e.anchor1 = c.point1 + c.offset1;
  e.normal = c.normal;
  return e;
}

/// Per-row solver state (§3.2), owned by the solver and indexed like the rows.
struct RigidContactState {
  float ke = 0.0f;          // normal material stiffness, mixed [N/m]
  float kd = 0.0f;          // normal damping, mixed [N·s/m]
  float mu = 0.0f;          // friction coefficient, mixed [-]
  float normalRho = 0.0f;   // ρ_n [N/m]
  float tangentRho = 0.0f;  // ρ_t [N/m]
  Vec3 lambda;              // λ = λ_n·n + λ_t, world [N]
  Vec3 c0;                  // start-of-step residual n·C0_n + C0_t, world [m]
};

/// What solver kernels read of a detection (collision/rigid_contacts.h).
struct RigidContactsView {
  int capacity = 0;                                 // rows allocated
  const RigidContact* __restrict__ rows = nullptr;  // (capacity), the first *count valid
  const int* __restrict__ count = nullptr;          // (1) rows written, ≤ capacity
  const int* __restrict__ bodyOffsets = nullptr;    // (numBodies + 1) into bodyRows
  const int* __restrict__ bodyRows = nullptr;       // (2 x capacity) each body's rows, ascending
};

/// Row material from the two shapes' (§5.5.3 A4): ke, kd arithmetic means, μ geometric mean.
WEFT_HD WEFT_FORCEINLINE ContactMaterial mixContactMaterials(const ContactMaterial& a,
                                                             const ContactMaterial& b) {
  return {0.5f * (a.ke + b.ke), 0.5f * (a.kd + b.kd), sqrtf(a.mu * b.mu)};
}

/// Poses of a row's two bodies during the iterations; a static endpoint (body −1) has the
/// identity and a zero COM. The start-of-step poses are not among them: what the iterations need
/// of them is the row's start residual C0 (RigidContactState::c0, contactMotion).
struct ContactBodyFrames {
  Transform pose[2];  // now (the iterate) [m]
  Vec3 com[2];        // centre of mass, body frame [m]
};

/// What the per-step setup needs of one endpoint body (zeros for static or kinematic ones).
struct ContactEndpointInertia {
  float invMass = 0.0f;      // effective inverse mass [1/kg]; 0: does not move
  Mat33 invInertia;          // effective inverse inertia, body frame, about the COM [1/(kg·m²)]
  Vec3 com;                  // body frame [m]
  float structuralK = 0.0f;  // body_structural_k: max slot-0 material k of its joints [N/m]
};

/// World skeleton points and anchors of a row at the given body poses.
struct ContactPoints {
  Vec3 skeleton[2];
  Vec3 anchor[2];
};

WEFT_HD WEFT_FORCEINLINE ContactPoints contactPoints(const RigidContact& c, const Transform& pose0,
                                                     const Transform& pose1) {
  ContactPoints p;
  p.skeleton[0] = transformPoint(pose0, c.point0);
  p.skeleton[1] = transformPoint(pose1, c.point1);
  p.anchor[0] = transformPoint(pose0, c.point0 + c.offset0);
  p.anchor[1] = transformPoint(pose1, c.point1 + c.offset1);
  return p;
}

WEFT_HD WEFT_FORCEINLINE ContactPoints contactPoints(const RigidContactEnd& e,
                                                     const Transform& pose0,
                                                     const Transform& pose1) {
  ContactPoints p;
  p.skeleton[0] = transformPoint(pose0, e.point0);
  p.skeleton[1] = transformPoint(pose1, e.point1);
  p.anchor[0] = transformPoint(pose0, e.anchor0);
  p.anchor[1] = transformPoint(pose1, e.anchor1);
  return p;
}

/// Penetration C_n = (margin0 + margin1) − n·(P1 − P0) [m] (> 0 overlapping).
WEFT_HD WEFT_FORCEINLINE float rigidContactPenetration(const RigidContact& c,
                                                       const ContactPoints& p) {
  return (c.margin0 + c.margin1) - dot(c.normal, p.skeleton[1] - p.skeleton[0]);
}
WEFT_HD WEFT_FORCEINLINE float rigidContactPenetration(const RigidContactEnd& e,
                                                       const ContactPoints& p) {
  return e.margin - dot(e.normal, p.skeleton[1] - p.skeleton[0]);
}

/// Tangential part of v for unit normal n.
WEFT_HD WEFT_FORCEINLINE Vec3 tangentialPart(const Vec3& v, const Vec3& n) {
  return v - dot(n, v) * n;
}

/// A row's motion since the step start, from its current points and its start residual
/// C0 = n·C0_n + C0_t (rigidContactBeginStep, where C0_n = C_n(start) and C0_t =
/// tangential(A0 − A1)(start)): the skeleton points' normal approach n·Δ(P1 − P0) = C0_n − C_n,
/// and the tangential slip u of anchor 0 relative to anchor 1, tangential(A0 − A1) − C0_t. In
/// exact arithmetic these are the differences of the points at the current and the start poses;
/// taken from C0, the iterations load no start pose and transform no start point
/// (docs/PERFORMANCE.md, "The motion since the step start from the row's C0").
struct ContactMotion {
  float approach;  // n·((P1 − P0)(now) − (P1 − P0)(start)) = C0_n − C_n [m]
  Vec3 slip;       // u [m]
  Vec3 c0t;        // C0_t [m]
};
template <class Row>
WEFT_HD WEFT_FORCEINLINE ContactMotion contactMotion(const Row& c, const ContactPoints& now,
                                                     float cNow, float c0n, const Vec3& c0) {
  ContactMotion m;
  m.approach = c0n - cNow;
  m.c0t = c0 - c0n * c.normal;
  m.slip = tangentialPart(now.anchor[0] - now.anchor[1], c.normal) - m.c0t;
  return m;
}

/// Standard branchless orthonormal basis (t1, t2) of the plane ⟂ unit n (Duff et al. 2017,
/// "Building an Orthonormal Basis, Revisited", Listing 3).
WEFT_HD WEFT_FORCEINLINE void tangentBasis(const Vec3& n, Vec3& t1, Vec3& t2) {
  const float sign = copysignf(1.0f, n.z);
  const float a = -1.0f / (sign + n.z);
  const float b = n.x * n.y * a;
  t1 = {1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x};
  t2 = {b, sign + n.y * n.y * a, -n.y};
}

// ---- Force and Hessian (§5.5.2) ----------------------------------------------------------------

/// The contribution of row `c` to the 6×6 block of its endpoint `side` (0 or 1), with the other
/// body held fixed. Normal: f_n = max(k_eff·C_eff + s·λ_n, 0), C_eff = C_n − α·C0_n, stiffness
/// k_eff·nnᵀ at the skeleton point (the reference's fix for yawed thin capsules, PR #3147); normal
/// damping −kd·v_n·n and (kd/h)·nnᵀ only while approaching (v_n < 0). Friction at the anchor: with
/// u the tangential displacement of anchor 0 relative to anchor 1 since the step start, the trial
/// F_t = ρ_t·(u + (1−α)·C0_t) + λ_t; inside the cone |F_t| ≤ μ·f_n it is the force with stiffness
/// ρ_t·(I − nnᵀ); outside it is scaled onto the cone and the stiffness is the reduced tangent
/// Hessian (μf_n/|F_t|)·ρ_t·(I − nnᵀ − t̂t̂ᵀ) plus the regularized sliding metric
/// μf_n·φ(|u|, ε_u)·t̂t̂ᵀ (ε_u = frictionEpsilon·h). Zero when neither penetrating nor pushed by λ.
/// `Row` is the row (RigidContact) or its gathered end (RigidContactEnd): the same bits.
template <class Row>
WEFT_HD WEFT_FORCEINLINE BodyBlock rigidContactBlock(int side, const Row& c,
                                                     const RigidContactState& state,
                                                     const ContactBodyFrames& frames, float h,
                                                     float frictionEpsilon /* [m/s] */,
                                                     float alpha = 0.0f) {
  BodyBlock out{};
  const Vec3 n = c.normal;
  const ContactPoints now = contactPoints(c, frames.pose[0], frames.pose[1]);
  // The solved endpoint's lever arms from its COM. Its values are selected, not indexed by
  // `side`: an index known only at run time would put `frames` and `now` in local memory (184
  // bytes stored and reloaded per row in every body-solve launch; docs/PERFORMANCE.md, "The solved
  // endpoint selected, not indexed"). Computed here, before the early exits, so that the current
  // poses need not be held to the end (registers).
  const bool one = side == 1;
  const Vec3 com =
      transformPoint(one ? frames.pose[1] : frames.pose[0], one ? frames.com[1] : frames.com[0]);
  const Vec3 leverN = (one ? now.skeleton[1] : now.skeleton[0]) - com;
  const Vec3 leverT = (one ? now.anchor[1] : now.anchor[0]) - com;
  const float c0n = dot(n, state.c0);
  const float cNow = rigidContactPenetration(c, now);
  const float cEff = cNow - alpha * c0n;
  const AlmCoefficients alm = almCoefficients(state.ke, state.normalRho);
  const float lambdaN = dot(n, state.lambda);
  const Vec3 lambdaT = state.lambda - lambdaN * n;
  const float lambdaNEff = alm.s * lambdaN;
  if ((cEff <= 1e-9f && lambdaNEff <= 0.0f) || !(alm.kEff > 0.0f)) return out;
  const float fn = fmaxf(alm.kEff * cEff + lambdaNEff, 0.0f);
  if (!(fn > 0.0f)) return out;

  // Motion since the step start (contactMotion): normal velocity of the skeleton points,
  // tangential slip u of anchor 0 relative to anchor 1.
  const ContactMotion motion = contactMotion(c, now, cNow, c0n, state.c0);
  const float vn = motion.approach / h;
  const Vec3 u = motion.slip;

  const Mat33 nnT = outer(n, n);
  Vec3 forceN = fn * n;
  Mat33 stiffnessN = alm.kEff * nnT;
  if (state.kd > 0.0f && vn < 0.0f) {
    forceN -= (state.kd * vn) * n;
    stiffnessN += (state.kd / h) * nnT;
  }

  Vec3 forceT;
  Mat33 stiffnessT;
  if (state.mu > 0.0f) {
    const Mat33 tangentProjector = Mat33::identity() - nnT;
    const Vec3 c0t = (1.0f - alpha) * motion.c0t;
    const Vec3 trial = state.tangentRho * (u + c0t) + lambdaT;
    const float cone = state.mu * fn;
    const float trialNorm = length(trial);
    if (trialNorm <= cone) {
      forceT = trial;
      stiffnessT = state.tangentRho * tangentProjector;
    } else {
      const float scale = cone / trialNorm;
      const Vec3 slideDir = trial / trialNorm;
      const Mat33 slide = outer(slideDir, slideDir);
      forceT = scale * trial;
      stiffnessT = (scale * state.tangentRho) * (tangentProjector - slide) +
                   (cone * frictionWeight(length(u), frictionEpsilon * h)) * slide;
    }
  }

  const float sign = one ? 1.0f : -1.0f;
  out.addPointSpring(leverN, stiffnessN, sign * forceN);
  out.addPointSpring(leverT, stiffnessT, sign * forceT);
  return out;
}

// ---- Per-step setup (§5.5.3) -------------------------------------------------------------------

namespace rigid_contact_detail {

/// Series combination lo/(1 + lo/hi) when both are positive, else the larger.
WEFT_HD WEFT_FORCEINLINE float seriesOrMax(float x, float y) {
  if (x > 0.0f && y > 0.0f) {
    const float lo = fminf(x, y), hi = fmaxf(x, y);
    return lo / (1.0f + lo / hi);
  }
  return fmaxf(x, y);
}

/// 1/(h²·w) + S_b with w = W + uᵀI⁻¹u, u = (p − c) × n in the body frame: the inverse point
/// Delassus along n plus the body's structural stiffness; 0 for a body that does not move.
WEFT_HD WEFT_FORCEINLINE float normalScale(const ContactEndpointInertia& e, const Transform& pose,
                                           const Vec3& bodyPoint, const Vec3& n, float h) {
  if (!(e.invMass > 0.0f)) return 0.0f;
  const Vec3 u = cross(bodyPoint - e.com, rotateInverse(pose.q, n));
  const float w = e.invMass + dot(u, e.invInertia * u);
  return 1.0f / (h * h * w) + e.structuralK;
}

/// Adds the 2×2 tangent Delassus block of one endpoint (lever to the anchor) to w00, w01, w11.
WEFT_HD WEFT_FORCEINLINE void addTangentDelassus(const ContactEndpointInertia& e,
                                                 const Transform& pose, const Vec3& bodyAnchor,
                                                 const Vec3& t1, const Vec3& t2, float& w00,
                                                 float& w01, float& w11) {
  if (!(e.invMass > 0.0f)) return;
  const Vec3 lever = bodyAnchor - e.com;
  const Vec3 u1 = cross(lever, rotateInverse(pose.q, t1));
  const Vec3 u2 = cross(lever, rotateInverse(pose.q, t2));
  const Vec3 iu2 = e.invInertia * u2;
  w00 += e.invMass + dot(u1, e.invInertia * u1);
  w01 += dot(u1, iu2);
  w11 += e.invMass + dot(u2, iu2);
}

}  // namespace rigid_contact_detail

/// The warm start of a row matched to a row of the previous detection (the reference's
/// init_body_body_contacts_alm, compliant ALM): the previous normal multiplier λ_n = λ·n_old is
/// carried onto the new normal, λ = λ_n·n_new. With latest matching (`restoreTangent`) the
/// previous tangent part, λ − λ_n·n_old with its component along n_new removed, is added as well,
/// clamped to the Coulomb disk of radius μ·max(λ_n, 0); sticky matching carries the tangential
/// memory in the replayed anchors instead and restores only the normal part. Restoring the whole
/// vector would put a stale normal force into the tangent plane whenever the normal has turned.
WEFT_HD WEFT_FORCEINLINE Vec3 warmStartLambda(const Vec3& previous, const Vec3& previousNormal,
                                              const Vec3& normal, float mu, bool restoreTangent) {
  const float lambdaN = dot(previous, previousNormal);
  Vec3 lambda = normal * lambdaN;
  if (restoreTangent) {
    const Vec3 tOld = previous - previousNormal * lambdaN;
    Vec3 t = tOld - normal * dot(tOld, normal);
    const float limit = mu * fmaxf(lambdaN, 0.0f);
    const float len = length(t);
    if (!(limit > 0.0f))
      t = Vec3{};
    else if (len > limit)
      t = t * (limit / len);
    lambda += t;
  }
  return lambda;
}

/// The row's state for a new step, from its previous state and the start-of-step poses (taken
/// before the forward prediction; static endpoints: identity). `material` is the mixed material
/// (mixContactMaterials); γ the λ retention factor (reference default 0.999).
///   C0:   C0_n = C_n(start), C0_t = −tangential(A1 − A0)(start); C0 = n·C0_n + C0_t.
///   ρ_n:  series of the endpoints' 1/(h²·w_n) + S_b (w_n = point Delassus along n at the
///         skeleton point); 0 when ke ≤ 0.
///   ρ_t:  max((1/h²)/w_t, min(ρ_n, S_pair)) with w_t the largest eigenvalue of the summed 2×2
///         tangent Delassus blocks (levers to the anchors) and S_pair the series of the moving
///         endpoints' structural k.
///   λ:    γ·λ if λ·n > 0, ke > 0, ρ_n > 0 and γ > 0, else 0.
WEFT_HD WEFT_FORCEINLINE RigidContactState rigidContactBeginStep(
    const RigidContact& c, const RigidContactState& previous, const ContactMaterial& material,
    const Transform& startPose0, const Transform& startPose1, const ContactEndpointInertia& end0,
    const ContactEndpointInertia& end1, float h, float gamma) {
  using namespace rigid_contact_detail;
  RigidContactState s;
  s.ke = material.ke;
  s.kd = material.kd;
  s.mu = material.mu;
  const Vec3 n = c.normal;

  const ContactPoints start = contactPoints(c, startPose0, startPose1);
  const Vec3 anchorGap = start.anchor[1] - start.anchor[0];
  s.c0 = rigidContactPenetration(c, start) * n - tangentialPart(anchorGap, n);

  const float supportN = seriesOrMax(normalScale(end0, startPose0, c.point0, n, h),
                                     normalScale(end1, startPose1, c.point1, n, h));
  s.normalRho = supportN > 0.0f && s.ke > 0.0f ? supportN : 0.0f;

  Vec3 t1, t2;
  tangentBasis(n, t1, t2);
  float w00 = 0.0f, w01 = 0.0f, w11 = 0.0f;
  addTangentDelassus(end0, startPose0, c.point0 + c.offset0, t1, t2, w00, w01, w11);
  addTangentDelassus(end1, startPose1, c.point1 + c.offset1, t1, t2, w00, w01, w11);
  float supportT = 0.0f;
  const float trace = w00 + w11;
  if (trace > 0.0f) {
    const float halfDiff = 0.5f * (w00 - w11);
    const float wMax = 0.5f * trace + sqrtf(halfDiff * halfDiff + w01 * w01);
    supportT = 1.0f / (h * h * wMax);
  }
  const float pairK = seriesOrMax(end0.invMass > 0.0f ? end0.structuralK : 0.0f,
                                  end1.invMass > 0.0f ? end1.structuralK : 0.0f);
  s.tangentRho = fmaxf(supportT, fminf(s.normalRho, pairK));

  const bool keep =
      dot(previous.lambda, n) > 0.0f && s.ke > 0.0f && s.normalRho > 0.0f && gamma > 0.0f;
  s.lambda = keep ? gamma * previous.lambda : Vec3{};
  return s;
}

// ---- Dual update (§5.5.4) ----------------------------------------------------------------------

/// The row's new λ after an iteration (Jacobi, after all colors), at the current poses:
///   C_stab = C_n − α·C0_n (C_n itself once separated, so separated rows release),
///   λ_n ← max(s·(λ_n + ρ_n·C_stab), 0)          (relaxed ascent, kernels/compliant_alm.h)
///   f_n = max(k_eff·C_stab + s·λ_n, 0)           (with the updated λ_n)
///   λ_t ← Proj_{|·| ≤ μ·f_n}(λ_t + ρ_t·r_t),     r_t = u + (1−α)·C0_t
/// with u the tangential displacement of anchor 0 relative to anchor 1 since the step start.
WEFT_HD WEFT_FORCEINLINE Vec3 rigidContactDualUpdate(const RigidContact& c,
                                                     const RigidContactState& state,
                                                     const ContactBodyFrames& frames,
                                                     float alpha = 0.0f) {
  const Vec3 n = c.normal;
  const ContactPoints now = contactPoints(c, frames.pose[0], frames.pose[1]);
  const float cRaw = rigidContactPenetration(c, now);
  const float c0n = dot(n, state.c0);
  const float cStab = cRaw < 0.0f ? cRaw : cRaw - alpha * c0n;
  const ContactMotion motion = contactMotion(c, now, cRaw, c0n, state.c0);
  const Vec3 rt = motion.slip + (1.0f - alpha) * motion.c0t;

  const AlmCoefficients alm = almCoefficients(state.ke, state.normalRho);
  const float lambdaN0 = dot(n, state.lambda);
  const Vec3 lambdaT0 = state.lambda - lambdaN0 * n;
  const float lambdaN = fmaxf(relaxedAscent(lambdaN0, cStab, alm), 0.0f);
  const float fn = fmaxf(alm.kEff * cStab + alm.s * lambdaN, 0.0f);
  Vec3 lambdaT = lambdaT0 + state.tangentRho * rt;
  const float cone = state.mu * fn;
  const float tNorm = length(lambdaT);
  if (tNorm > cone) lambdaT = tNorm > 0.0f ? (cone / tNorm) * lambdaT : Vec3{};
  return lambdaN * n + lambdaT;
}

}  // namespace weft
