// ROD (cable) joints and BALL joints of the rigid AVBD path (rigid_avbd_spec §5.6, §5.7): the
// strain measures, the contribution of a joint to the 6×6 Newton block of one of its two bodies,
// and the per-iteration dual (multiplier) update, all under the compliant ALM of
// kernels/compliant_alm.h.
//
// Frames (§0): the parent anchor frame is F_p = T_parent∘X_p (X_p itself, in the world, when the
// parent is −1: pass worldJointEnd()), the child's F_c = T_child∘X_c. Local +Z of an anchor frame
// is the material tangent t, local +X the material director m.
//
// ROD strain (RodStrain): stretch/shear u = R(q_wp)ᵀ(x_c − x_p) (x, y shear; z stretch), rest 0;
// bend κ_xy = (R(q_wp)ᵀ·kb − kb_rest)_xy with the discrete-elastic-rod curvature binormal
// kb = 2(t0 × t1)/(1 + t0·t1); twist κ_z = wrap(twist − twist_rest) with the twist the angle of
// the child director m1 about t1 from the parent director m0 parallel-transported onto t1. Energies
// ½k_sh(u_x² + u_y²) + ½k_st·u_z² and ½k_b(κ_x² + κ_y²) + ½k_t·κ_z² (rest values from the built
// pose: the built shape is stress-free).
//
// Block (rodJointBlock): generalized forces ψ = k_eff∘(C − α·C0) + s∘λ + kd∘ΔC/h (+ Dahl σ0 on bend
// and twist), with ΔC = C − C(start of step). Stretch/shear acts at the CHILD anchor for both
// bodies (the exact gradient: rotating the parent also turns the measurement frame), with a PSD
// isotropic/anisotropic Hessian split for the parent. Bend/twist uses τ = −Jᵀψ and the
// Gauss–Newton H_aa = Jᵀ·diag(k_eff + C_fric + kd/h)·J with J = ∂κ/∂ω analytic (ω the world
// rotation of the solved body); near a fold (1 + t0·t1 ≤ 0.02) the twist row is the exact
// directional derivative of the transport formula instead of its closed form.
//
// Multipliers: λ_lin in parent-material coordinates, λ_ang in κ coordinates (RodMultipliers);
// BALL λ in world coordinates. Everything a step keeps constant (ALM coefficients from K and ρ,
// the start-of-step strain that is both C0 and the damping reference, α, the Dahl terms) travels
// in RodStepTerms, set up once per step from the start-of-step poses (spec A9/A10).
#pragma once

#include "kernels/body_block.h"
#include "kernels/compliant_alm.h"
#include "kernels/math.h"
#include "kernels/rigid_body.h"  // worldCom
#include "kernels/runtime/platform.h"

namespace weft {

/// Joint types of the rigid path (solver/rigid_desc.h JointDesc::type).
enum class JointType : int { Rod = 0, Ball = 1 };

// ---- Constants (rigid_avbd_spec §2) -------------------------------------------------------------

inline constexpr float kRodFoldEps = 1e-12f;          // kb denominator floor / exact-fold test
inline constexpr float kRodCurvatureCap = 20.0f;      // cap on |kb| = 2 tan(θ/2) (θ ≈ 168.6°)
inline constexpr float kRodTransportEps = 1e-8f;      // 1 + c below: Bishop quaternion transport
inline constexpr float kRodSmallAngleEps = 1e-7f;     // Bishop axis / perpendicular guards
inline constexpr float kRodTwistDirectional = 2e-2f;  // 1 + c below: directional twist Jacobian
inline constexpr float kRodTwistAtan2Eps = 1e-12f;    // atan2 derivative denominator floor

// ---- Inputs -------------------------------------------------------------------------------------

/// One body of a joint as the joint sees it. The world (parent −1) is the identity pose.
struct JointEnd {
  Transform pose;  // origin pose (current iterate) [m]
  Vec3 com;        // COM in the body frame [m]
};

WEFT_HD WEFT_FORCEINLINE JointEnd worldJointEnd() {
  return {};
}

/// The four material slots of a ROD joint (rigid_desc.h JointDesc): stiffness per joint (already
/// includes 1/L), absolute damping coefficients.
struct RodMaterial {
  float stretchStiffness = 0.0f, shearStiffness = 0.0f;  // [N/m]
  float bendStiffness = 0.0f, twistStiffness = 0.0f;     // [N·m/rad]
  float stretchDamping = 0.0f, shearDamping = 0.0f;      // [N·s/m]
  float bendDamping = 0.0f, twistDamping = 0.0f;         // [N·m·s/rad]
};

/// Rest bend/twist of a ROD joint, measured at the structural rest pose (rodRest).
struct RodRest {
  Vec3 kbRestLocal;        // R(q_wp)ᵀ·kb at rest (z is 0) [1]
  float twistRest = 0.0f;  // [rad]
};

/// What a ROD joint keeps for its whole life.
struct RodJoint {
  Transform parentAnchor;  // X_p in the parent body frame (world if parent = −1)
  Transform childAnchor;   // X_c in the child body frame
  RodRest rest;
  RodMaterial material;
};

/// The ALM coefficients of the four slots for one step (rodCoefficients).
struct RodCoefficients {
  AlmCoefficients stretch, shear, bend, twist;
};

/// Strain of a ROD joint: u = (shear x, shear y, stretch) [m], κ = (bend x, bend y, twist) [rad].
struct RodStrain {
  Vec3 u;
  Vec3 kappa;
};

/// Multipliers of a ROD joint: lin in parent-material coordinates [N], ang in κ coordinates [N·m].
struct RodMultipliers {
  Vec3 lin;
  Vec3 ang;
};

/// Constants of one ROD joint during a step (spec A9/A10).
struct RodStepTerms {
  RodCoefficients alm;  // from K and ρ per slot
  RodStrain start;      // strain at the start-of-step poses: C0 and the damping reference
  Vec3 dahlSigma0;      // Dahl stress per κ axis (kernels/dahl.h), 0 when off [N·m]
  Vec3 dahlCFric;       // Dahl tangent stiffness per κ axis, 0 when off [N·m/rad]
  float alpha = 0.0f;   // stabilization: C − α·C0 (ALM default 0)
};

// ---- Small helpers ------------------------------------------------------------------------------

/// World frame of an anchor: body∘anchor.
WEFT_HD WEFT_FORCEINLINE Transform anchorFrame(const Transform& body, const Transform& anchor) {
  return {transformPoint(body, anchor.p), body.q * anchor.q};
}

/// Maps an angle to [−π, π].
WEFT_HD WEFT_FORCEINLINE float rodWrapAngle(float angle) {
  const float kTwoPi = 6.28318530717959f;
  return angle - kTwoPi * rintf(angle / kTwoPi);
}

/// a − b with the twist component wrapped to [−π, π] (strain differences, Δκ).
WEFT_HD WEFT_FORCEINLINE Vec3 rodStrainDifference(const Vec3& a, const Vec3& b) {
  return {a.x - b.x, a.y - b.y, rodWrapAngle(a.z - b.z)};
}

/// A unit vector ⊥ t: `preferred` projected off t, else x̂ (ŷ when |t.x| > 0.9) projected off t.
WEFT_HD WEFT_FORCEINLINE Vec3 rodPerpendicular(const Vec3& t, const Vec3& preferred) {
  const Vec3 p = preferred - t * dot(preferred, t);
  const float len = length(p);
  if (len > kRodSmallAngleEps) return p / len;
  const Vec3 alt = fabsf(t.x) > 0.9f ? Vec3{0.0f, 1.0f, 0.0f} : Vec3{1.0f, 0.0f, 0.0f};
  return normalizeOrZero(alt - t * dot(alt, t));
}

// ---- Measures -----------------------------------------------------------------------------------

/// World anchor frames of a ROD joint and their material axes.
struct RodFrames {
  Vec3 xp, xc;  // anchor positions [m]
  Quat qp, qc;  // anchor rotations q_wp, q_wc
  Vec3 t0, m0;  // parent tangent (+Z) and director (+X)
  Vec3 t1, m1;  // child tangent and director
};

WEFT_HD WEFT_FORCEINLINE RodFrames rodFrames(const Transform& parentPose,
                                             const Transform& childPose,
                                             const Transform& parentAnchor,
                                             const Transform& childAnchor) {
  const Transform fp = anchorFrame(parentPose, parentAnchor);
  const Transform fc = anchorFrame(childPose, childAnchor);
  RodFrames f;
  f.xp = fp.p;
  f.xc = fc.p;
  f.qp = fp.q;
  f.qc = fc.q;
  f.t0 = rotate(fp.q, {0.0f, 0.0f, 1.0f});
  f.m0 = rotate(fp.q, {1.0f, 0.0f, 0.0f});
  f.t1 = rotate(fc.q, {0.0f, 0.0f, 1.0f});
  f.m1 = rotate(fc.q, {1.0f, 0.0f, 0.0f});
  return f;
}

/// DER curvature binormal kb = 2(t0 × t1)/(1 + t0·t1) (§5.6.2), |kb| = 2 tan(θ/2): denominator
/// floored at 1e-12, magnitude capped at 20; at an exact fold (1 + t0·t1 ≤ 1e-12 and
/// |t0 × t1|² ≤ 1e-12) it is 20 along m0 made ⊥ t0.
WEFT_HD WEFT_FORCEINLINE Vec3 curvatureBinormal(const Vec3& t0, const Vec3& t1, const Vec3& m0) {
  const Vec3 X = cross(t0, t1);
  const float D = 1.0f + dot(t0, t1);
  if (D <= kRodFoldEps && lengthSquared(X) <= kRodFoldEps)
    return kRodCurvatureCap * rodPerpendicular(t0, m0);
  const Vec3 kb = X * (2.0f / fmaxf(D, kRodFoldEps));
  const float n = length(kb);
  return n > kRodCurvatureCap ? kb * (kRodCurvatureCap / n) : kb;
}

/// m0 parallel-transported onto t1 by the minimal rotation t0 → t1 (§5.6.2):
/// normalize(m0 − (m0·t1)/(1+c)·(t0 + t1)), c = t0·t1 clamped to [−1, 1]; for 1 + c ≤ 1e-8 the
/// Bishop quaternion (axis t0×t1, angle atan2(|t0×t1|, c), or a rotation by π about m0 ⊥ t0 when
/// the cross product vanishes) rotates m0 instead.
WEFT_HD WEFT_FORCEINLINE Vec3 rodTransportDirector(const Vec3& t0, const Vec3& m0, const Vec3& t1) {
  const float c = fminf(fmaxf(dot(t0, t1), -1.0f), 1.0f);
  if (1.0f + c > kRodTransportEps)
    return normalizeOrZero(m0 - (t0 + t1) * (dot(m0, t1) / (1.0f + c)));
  const Vec3 X = cross(t0, t1);
  const float s = length(X);
  const Quat bishop = s > kRodSmallAngleEps
                          ? quatFromAxisAngle(X / s, atan2f(s, c))
                          : quatFromAxisAngle(rodPerpendicular(t0, m0), 3.14159265358979f);
  return normalizeOrZero(rotate(bishop, m0));
}

/// Twist of the child director about t1 relative to the transported parent director [rad].
WEFT_HD WEFT_FORCEINLINE float rodTwist(const Vec3& t0, const Vec3& m0, const Vec3& t1,
                                        const Vec3& m1) {
  const Vec3 mt = rodTransportDirector(t0, m0, t1);
  return atan2f(dot(t1, cross(mt, m1)), dot(mt, m1));
}

/// Strain at the frames, relative to `rest` (§5.6.1, §5.6.2).
WEFT_HD WEFT_FORCEINLINE RodStrain rodStrain(const RodFrames& f, const RodRest& rest) {
  RodStrain s;
  s.u = rotateInverse(f.qp, f.xc - f.xp);
  const Vec3 kbLocal = rotateInverse(f.qp, curvatureBinormal(f.t0, f.t1, f.m0));
  s.kappa = {kbLocal.x - rest.kbRestLocal.x, kbLocal.y - rest.kbRestLocal.y,
             rodWrapAngle(rodTwist(f.t0, f.m0, f.t1, f.m1) - rest.twistRest)};
  return s;
}

WEFT_HD WEFT_FORCEINLINE RodStrain rodStrain(const Transform& parentPose,
                                             const Transform& childPose, const RodJoint& joint) {
  return rodStrain(rodFrames(parentPose, childPose, joint.parentAnchor, joint.childAnchor),
                   joint.rest);
}

/// Rest bend/twist from the structural rest poses of parent (identity for the world) and child.
WEFT_HD WEFT_FORCEINLINE RodRest rodRest(const Transform& parentRestPose,
                                         const Transform& childRestPose,
                                         const Transform& parentAnchor,
                                         const Transform& childAnchor) {
  const RodFrames f = rodFrames(parentRestPose, childRestPose, parentAnchor, childAnchor);
  RodRest rest;
  rest.kbRestLocal = rotateInverse(f.qp, curvatureBinormal(f.t0, f.t1, f.m0));
  rest.kbRestLocal.z = 0.0f;  // identically 0 (kb ⊥ t0); drop the rounding
  rest.twistRest = rodTwist(f.t0, f.m0, f.t1, f.m1);
  return rest;
}

// ---- Bend/twist Jacobian ------------------------------------------------------------------------

/// Directional derivative of rodTwist() when (t0, m0, t1, m1) move by (dt0, dm0, dt1, dm1), on the
/// closed-form transport branch (1 + c > 1e-8): quotient rule on the transport, the normalization
/// projector, and the atan2 derivative with its denominator floored at 1e-12.
WEFT_HD WEFT_FORCEINLINE float rodTwistDirectional(const Vec3& t0, const Vec3& m0, const Vec3& t1,
                                                   const Vec3& m1, const Vec3& dt0, const Vec3& dm0,
                                                   const Vec3& dt1, const Vec3& dm1) {
  float c = dot(t0, t1);
  float dc = dot(dt0, t1) + dot(t0, dt1);
  if (c > 1.0f || c < -1.0f) {  // clamped: c is locally constant
    c = fminf(fmaxf(c, -1.0f), 1.0f);
    dc = 0.0f;
  }
  const float onePlusC = 1.0f + c;
  const float beta = dot(m0, t1) / onePlusC;
  const float dBeta = (dot(dm0, t1) + dot(m0, dt1) - beta * dc) / onePlusC;
  const Vec3 sum = t0 + t1;
  const Vec3 g = m0 - sum * beta;
  const Vec3 dg = dm0 - sum * dBeta - (dt0 + dt1) * beta;
  const float gLen = fmaxf(length(g), 1e-20f);
  const Vec3 mt = g / gLen;
  const Vec3 dmt = (dg - mt * dot(mt, dg)) / gLen;
  const Vec3 mtCrossM1 = cross(mt, m1);
  const float y = dot(t1, mtCrossM1);
  const float x = dot(mt, m1);
  const float dy = dot(dt1, mtCrossM1) + dot(t1, cross(dmt, m1)) + dot(t1, cross(mt, dm1));
  const float dx = dot(dmt, m1) + dot(mt, dm1);
  return (x * dy - y * dx) / fmaxf(x * x + y * y, kRodTwistAtan2Eps);
}

/// J = ∂κ/∂ω (rows κx, κy, κz; columns ω) for an infinitesimal WORLD rotation ω of the parent
/// (solvingParent) or the child about any point (κ does not depend on translations) (§5.6.2):
///   ∂kb = (2/D)∂X − (2/D²)X∂D, X = t0×t1, D = 1 + t0·t1; parent ∂X = t0t1ᵀ − cI, ∂D = Xᵀ;
///   child ∂X = cI − t1t0ᵀ, ∂D = −Xᵀ; × (20/|kb|)(I − k̂k̂ᵀ) when capped, 0 at an exact fold;
///   the parent adds [kb]× (its frame carries the binormal); bend rows m0ᵀ, (t0×m0)ᵀ of that;
///   twist row ∓(t0 + t1)/(1 + c) (− parent), or for 1 + c ≤ 0.02 the exact directional
///   derivative along the world axes (∓t0/+t1 once 1 + c ≤ 1e-8, where the transport switches to
///   the Bishop quaternion).
WEFT_HD WEFT_FORCEINLINE Mat33 rodBendTwistJacobian(bool solvingParent, const RodFrames& f) {
  const Vec3 &t0 = f.t0, &t1 = f.t1, &m0 = f.m0, &m1 = f.m1;
  const Vec3 X = cross(t0, t1);
  const float c = dot(t0, t1);
  const float D = 1.0f + c;

  // World derivative of the (capped) binormal.
  Vec3 kb;
  Mat33 dkb;  // zero at an exact fold
  if (D <= kRodFoldEps && lengthSquared(X) <= kRodFoldEps) {
    kb = kRodCurvatureCap * rodPerpendicular(t0, m0);
  } else {
    const float Dc = fmaxf(D, kRodFoldEps);
    kb = X * (2.0f / Dc);
    const Mat33 dX =
        solvingParent ? outer(t0, t1) - Mat33::diagonal(c) : Mat33::diagonal(c) - outer(t1, t0);
    dkb = dX * (2.0f / Dc);
    if (D > kRodFoldEps) dkb -= outer(X, solvingParent ? X : -X) * (2.0f / (Dc * Dc));
    const float n = length(kb);
    if (n > kRodCurvatureCap) {
      const Vec3 k = kb / n;
      dkb = (Mat33::identity() - outer(k, k)) * dkb * (kRodCurvatureCap / n);
      kb = k * kRodCurvatureCap;
    }
  }
  if (solvingParent) dkb += skew(kb);

  const Vec3 b0 = cross(t0, m0);
  Mat33 J;
  for (int col = 0; col < 3; ++col) {
    J(0, col) = m0.x * dkb(0, col) + m0.y * dkb(1, col) + m0.z * dkb(2, col);
    J(1, col) = b0.x * dkb(0, col) + b0.y * dkb(1, col) + b0.z * dkb(2, col);
  }

  Vec3 twistRow;
  if (D > kRodTwistDirectional) {
    twistRow = (t0 + t1) * ((solvingParent ? -1.0f : 1.0f) / D);
  } else if (fminf(fmaxf(c, -1.0f), 1.0f) + 1.0f <= kRodTransportEps) {
    twistRow = solvingParent ? -t0 : t1;
  } else {
    for (int axis = 0; axis < 3; ++axis) {
      Vec3 e;
      e[axis] = 1.0f;
      const Vec3 zero;
      twistRow[axis] =
          solvingParent
              ? rodTwistDirectional(t0, m0, t1, m1, cross(e, t0), cross(e, m0), zero, zero)
              : rodTwistDirectional(t0, m0, t1, m1, zero, zero, cross(e, t1), cross(e, m1));
    }
  }
  J(2, 0) = twistRow.x;
  J(2, 1) = twistRow.y;
  J(2, 2) = twistRow.z;
  return J;
}

// ---- Per-step setup -----------------------------------------------------------------------------

/// ALM coefficients per slot with the bilateral ρ policy ρ = max(support, 9K) (§5.6.3): the linear
/// support for stretch/shear, the angular support for bend/twist (kernels/compliant_alm.h).
WEFT_HD WEFT_FORCEINLINE RodCoefficients rodCoefficients(const RodMaterial& m,
                                                         float linearSupportValue,
                                                         float angularSupportValue) {
  RodCoefficients c;
  c.stretch =
      almCoefficients(m.stretchStiffness, bilateralRho(linearSupportValue, m.stretchStiffness));
  c.shear = almCoefficients(m.shearStiffness, bilateralRho(linearSupportValue, m.shearStiffness));
  c.bend = almCoefficients(m.bendStiffness, bilateralRho(angularSupportValue, m.bendStiffness));
  c.twist = almCoefficients(m.twistStiffness, bilateralRho(angularSupportValue, m.twistStiffness));
  return c;
}

/// Per-step multiplier retention (§5.6.3, ALM): λ ← r·λ per group (stretch z, shear xy, bend xy,
/// twist z) when the group has stiffness, else 0. r = γ (rigid_avbd_gamma, default 0.999).
WEFT_HD WEFT_FORCEINLINE void retainRodMultipliers(const RodMaterial& m, float retention,
                                                   RodMultipliers& lambda) {
  const float shear = m.shearStiffness > 0.0f ? retention : 0.0f;
  const float bend = m.bendStiffness > 0.0f ? retention : 0.0f;
  lambda.lin = {lambda.lin.x * shear, lambda.lin.y * shear,
                lambda.lin.z * (m.stretchStiffness > 0.0f ? retention : 0.0f)};
  lambda.ang = {lambda.ang.x * bend, lambda.ang.y * bend,
                lambda.ang.z * (m.twistStiffness > 0.0f ? retention : 0.0f)};
}

// ---- Block and duals ----------------------------------------------------------------------------

/// The ROD joint's contribution to the Newton block of the parent (solvingParent) or the child,
/// at the current poses of both ends (§5.6.1, §5.6.2). Zero for groups with neither stiffness nor
/// damping. `h` is the step [s].
/// `strain`: the strain at these frames when the caller has it (rodJointDualAndBlock), else null.
WEFT_HD WEFT_FORCEINLINE BodyBlock rodJointBlockAt(bool solvingParent, const JointEnd& parent,
                                                   const JointEnd& child, const RodJoint& joint,
                                                   const RodFrames& f, const RodStrain* strain,
                                                   const RodStepTerms& step,
                                                   const RodMultipliers& lambda, float h) {
  const RodMaterial& mat = joint.material;
  const RodCoefficients& alm = step.alm;
  const float invH = 1.0f / h;
  const Vec3 bodyCom =
      solvingParent ? worldCom(parent.pose, parent.com) : worldCom(child.pose, child.com);
  BodyBlock block;

  // Stretch/shear: ψ in the parent anchor frame, f = R(q_wp)ψ on the parent, −f on the child, both
  // at the child anchor.
  const Vec3 kLin{alm.shear.kEff, alm.shear.kEff, alm.stretch.kEff};
  const Vec3 kdLin{mat.shearDamping, mat.shearDamping, mat.stretchDamping};
  if (kLin.x > 0.0f || kLin.z > 0.0f || kdLin.x > 0.0f || kdLin.z > 0.0f) {
    const Vec3 u = strain ? strain->u : rotateInverse(f.qp, f.xc - f.xp);
    const Vec3 du = u - step.start.u;
    const Vec3 c = u - step.start.u * step.alpha;
    const Vec3 psi{kLin.x * c.x + alm.shear.s * lambda.lin.x + kdLin.x * du.x * invH,
                   kLin.y * c.y + alm.shear.s * lambda.lin.y + kdLin.y * du.y * invH,
                   kLin.z * c.z + alm.stretch.s * lambda.lin.z + kdLin.z * du.z * invH};
    const Vec3 force = rotate(f.qp, psi);
    const float hShear = kLin.x + kdLin.x * invH;
    const float hStretch = kLin.z + kdLin.z * invH;
    const Mat33 K = Mat33::diagonal(hShear) + outer(f.t0, f.t0) * (hStretch - hShear);
    const Vec3 r = f.xc - bodyCom;
    if (solvingParent) {
      // PSD Gauss–Newton split: the isotropic elastic part about the parent's own anchor, the
      // rest about the child anchor (equals [r]×ᵀK[r]× when the anchors coincide).
      const float kIso = fminf(kLin.x, kLin.z);
      block.addPointSpring(f.xp - bodyCom, Mat33::diagonal(kIso), Vec3{});
      block.addPointSpring(r, K - Mat33::diagonal(kIso), force);
    } else {
      block.addPointSpring(r, K, -force);
    }
  }

  // Bend/twist: τ = −Jᵀψ, H_aa = Jᵀ·diag(H_d)·J.
  const Vec3 kAng{alm.bend.kEff, alm.bend.kEff, alm.twist.kEff};
  const Vec3 kdAng{mat.bendDamping, mat.bendDamping, mat.twistDamping};
  const bool angularActive = kAng.x > 0.0f || kAng.z > 0.0f || kdAng.x > 0.0f || kdAng.z > 0.0f ||
                             !(step.dahlSigma0 == Vec3{}) || !(step.dahlCFric == Vec3{});
  if (angularActive) {
    const Vec3 kappa = strain ? strain->kappa : rodStrain(f, joint.rest).kappa;
    const Vec3 dk = rodStrainDifference(kappa, step.start.kappa);
    const Vec3 c = kappa - step.start.kappa * step.alpha;
    const Vec3 lam{alm.bend.s * lambda.ang.x, alm.bend.s * lambda.ang.y,
                   alm.twist.s * lambda.ang.z};
    Vec3 psi, hd;
    for (int i = 0; i < 3; ++i) {
      psi[i] = kAng[i] * c[i] + step.dahlSigma0[i] + lam[i] + kdAng[i] * dk[i] * invH;
      hd[i] = kAng[i] + step.dahlCFric[i] + kdAng[i] * invH;
    }
    const Mat33 J = rodBendTwistJacobian(solvingParent, f);
    const Mat33 Jt = transpose(J);
    block.torque -= Jt * psi;
    Mat33 hdJ = J;
    for (int i = 0; i < 3; ++i)
      for (int col = 0; col < 3; ++col) hdJ(i, col) *= hd[i];
    block.haa += Jt * hdJ;
  }
  return block;
}

WEFT_HD WEFT_FORCEINLINE BodyBlock rodJointBlock(bool solvingParent, const JointEnd& parent,
                                                 const JointEnd& child, const RodJoint& joint,
                                                 const RodStepTerms& step,
                                                 const RodMultipliers& lambda, float h) {
  const RodFrames f = rodFrames(parent.pose, child.pose, joint.parentAnchor, joint.childAnchor);
  return rodJointBlockAt(solvingParent, parent, child, joint, f, nullptr, step, lambda, h);
}

/// Per-iteration dual update of a ROD joint (§5.6.3) from its strain at the current poses: per
/// group (stretch z, shear xy, bend xy, twist z) λ ← relaxedAscent(λ, C − α·C0).
WEFT_HD WEFT_FORCEINLINE void rodJointDuals(const RodStrain& current, const RodStepTerms& step,
                                            RodMultipliers& lambda) {
  const Vec3 cl = current.u - step.start.u * step.alpha;
  const Vec3 ca = current.kappa - step.start.kappa * step.alpha;
  const RodCoefficients& alm = step.alm;
  lambda.lin = {relaxedAscent(lambda.lin.x, cl.x, alm.shear),
                relaxedAscent(lambda.lin.y, cl.y, alm.shear),
                relaxedAscent(lambda.lin.z, cl.z, alm.stretch)};
  lambda.ang = {relaxedAscent(lambda.ang.x, ca.x, alm.bend),
                relaxedAscent(lambda.ang.y, ca.y, alm.bend),
                relaxedAscent(lambda.ang.z, ca.z, alm.twist)};
}

/// The dual step of the iteration before (rodJointDuals) and then the block with the new λ, both
/// at the current poses, sharing the frames and the strain: what the joint's solving end does
/// from the second iteration on (kernels/avbd.cuh, SolveRigidBodyTileT::jointPart). The same
/// values as the dual step followed by rodJointBlock (on the CPU the same bits).
WEFT_HD WEFT_FORCEINLINE BodyBlock rodJointDualAndBlock(bool solvingParent, const JointEnd& parent,
                                                        const JointEnd& child,
                                                        const RodJoint& joint,
                                                        const RodStepTerms& step,
                                                        RodMultipliers& lambda, float h) {
  const RodFrames f = rodFrames(parent.pose, child.pose, joint.parentAnchor, joint.childAnchor);
  const RodStrain strain = rodStrain(f, joint.rest);
  rodJointDuals(strain, step, lambda);
  return rodJointBlockAt(solvingParent, parent, child, joint, f, &strain, step, lambda, h);
}

// ---- BALL joint (§5.7) --------------------------------------------------------------------------

/// BALL residual C = x_c − x_p (world) [m]; anchors are the translations of X_p and X_c.
WEFT_HD WEFT_FORCEINLINE Vec3 ballJointResidual(const Transform& parentPose,
                                                const Transform& childPose,
                                                const Vec3& parentAnchor, const Vec3& childAnchor) {
  return transformPoint(childPose, childAnchor) - transformPoint(parentPose, parentAnchor);
}

/// The BALL joint's contribution to the parent's or child's block: F = k_eff(C − α·C0) + s·λ +
/// kd·(C − C0)/h along all three world axes (C0 = the start-of-step residual); the parent gets +F
/// at its anchor, the child −F at its anchor; K = (k_eff + kd/h)·I by the point-spring rule.
/// K = rigid_joint_linear_ke (1e5), kd = rigid_joint_linear_kd (0), ρ = bilateralRho(linear
/// support).
WEFT_HD WEFT_FORCEINLINE BodyBlock ballJointBlock(bool solvingParent, const JointEnd& parent,
                                                  const JointEnd& child, const Vec3& parentAnchor,
                                                  const Vec3& childAnchor,
                                                  const AlmCoefficients& alm, float damping,
                                                  float alpha, const Vec3& c0, const Vec3& lambda,
                                                  float h) {
  BodyBlock block;
  if (!(alm.kEff > 0.0f) && !(damping > 0.0f)) return block;
  const Vec3 xp = transformPoint(parent.pose, parentAnchor);
  const Vec3 xc = transformPoint(child.pose, childAnchor);
  const Vec3 C = xc - xp;
  const Vec3 force = (C - c0 * alpha) * alm.kEff + lambda * alm.s + (C - c0) * (damping / h);
  const Mat33 K = Mat33::diagonal(alm.kEff + damping / h);
  if (solvingParent)
    block.addPointSpring(xp - worldCom(parent.pose, parent.com), K, force);
  else
    block.addPointSpring(xc - worldCom(child.pose, child.com), K, -force);
  return block;
}

/// Per-iteration BALL dual update, per world axis: λ ← relaxedAscent(λ, C − α·C0).
WEFT_HD WEFT_FORCEINLINE void ballJointDuals(const Vec3& C, const Vec3& c0,
                                             const AlmCoefficients& alm, float alpha,
                                             Vec3& lambda) {
  const Vec3 cs = C - c0 * alpha;
  lambda = {relaxedAscent(lambda.x, cs.x, alm), relaxedAscent(lambda.y, cs.y, alm),
            relaxedAscent(lambda.z, cs.z, alm)};
}

}  // namespace weft
