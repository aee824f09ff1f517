// Per-body pieces of the rigid AVBD step (rigid_avbd_spec §5.1, §5.2, §5.9): the inertial
// prediction, the inertial part of the 6×6 Newton block, its LDLᵀ solve, the pose update and the
// end-of-step velocity.
//
// Conventions (§0): a pose is the pose of the body ORIGIN; the COM sits at `com` in the body frame,
// so the world COM is p + R(q)·com. Velocities are the COM's linear velocity and the world angular
// velocity. The Newton unknown of a body is δ = (Δx, Δθ): Δx the world COM translation, Δθ the
// world rotation vector (left multiplication, q ← exp(Δθ)⊗q); see kernels/body_block.h for the
// block layout. Bodies with zero effective inverse mass (kinematic or massless) never move: the
// caller keeps them out of the solve, and predictBody() leaves them where they are.
//
// Step structure (who calls what): predictBody() once per body at the start of the step (its
// output pose is both the first iterate and the inertial target y); per iteration and body
// inertialBlock() + contact and joint terms into one BodyBlock, solveBodyBlock(), applyIncrement();
// bodyVelocity() once at the end from the final pose and the start-of-step pose.
#pragma once

#include "kernels/body_block.h"
#include "kernels/kinematics.h"
#include "kernels/math.h"
#include "kernels/runtime/platform.h"

namespace weft {

/// The evolving state of one body.
struct BodyState {
  Transform pose;        // origin pose [m]
  Vec3 linearVelocity;   // COM velocity, world [m/s]
  Vec3 angularVelocity;  // world [rad/s]
};

/// World position of the COM `com` (body frame) of a body at `pose`.
WEFT_HD WEFT_FORCEINLINE Vec3 worldCom(const Transform& pose, const Vec3& com) {
  return transformPoint(pose, com);
}

/// Rotation vector (axis·angle, angle in [0, π]) of a unit quaternion, taking the hemisphere with
/// w ≥ 0 (shortest arc). Near the identity it uses 2v/w, the limit of 2·atan2(|v|, w)/|v|·v.
WEFT_HD WEFT_FORCEINLINE Vec3 quatToRotationVector(Quat q) {
  if (q.w < 0.0f) q = {-q.x, -q.y, -q.z, -q.w};
  const Vec3 v{q.x, q.y, q.z};
  const float s = length(v);
  if (s < 1e-9f) return v * (2.0f / q.w);
  return v * (2.0f * atan2f(s, q.w) / s);
}

/// Inertial prediction (§5.1): semi-implicit Euler with the explicit gyroscopic term and no
/// angular damping, gravity only (no external wrench):
///   v1 = v + g·h, x1 = x + v1·h;  ω_b = Rᵀω, ω1 = R(ω_b − h·I⁻¹(ω_b × Iω_b));
///   q1 = normalize(q + ½h·(ω1, 0)⊗q), p1 = x1 − R(q1)·com.
/// `mass` is the effective mass [kg]: 0 (kinematic or massless) leaves pose and velocities as they
/// are. inertiaBody/invInertiaBody are about the COM in the body frame [kg·m²], [1/(kg·m²)].
WEFT_HD WEFT_FORCEINLINE void predictBody(const Transform& pose, Vec3 v, Vec3 w, const Vec3& com,
                                          float mass, const Mat33& inertiaBody,
                                          const Mat33& invInertiaBody, const Vec3& gravity, float h,
                                          Transform& outPose, Vec3& outV, Vec3& outW) {
  if (!(mass > 0.0f)) {
    outPose = pose;
    outV = v;
    outW = w;
    return;
  }
  v += gravity * h;
  const Vec3 x = worldCom(pose, com) + v * h;
  const Vec3 wBody = rotateInverse(pose.q, w);
  const Vec3 gyroscopicTorque = -cross(wBody, inertiaBody * wBody);
  w = rotate(pose.q, wBody + invInertiaBody * gyroscopicTorque * h);
  // q̇ = ½(ω, 0)⊗q with ω in the world frame.
  const Quat spin = Quat{w.x, w.y, w.z, 0.0f} * pose.q;
  const float half = 0.5f * h;
  const Quat q = normalize({pose.q.x + half * spin.x, pose.q.y + half * spin.y,
                            pose.q.z + half * spin.z, pose.q.w + half * spin.w});
  outPose = {x - rotate(q, com), q};
  outV = v;
  outW = w;
}

/// Inertial term of the Newton block (§5.2) at the current pose for the inertial target `target`:
///   f = (m/h²)(x* − x), H_ll = (m/h²)I;  τ = R·I_body·θ_b/h², H_aa = R·I_body·Rᵀ/h²,
/// θ_b the rotation vector of q⁻¹q* (body frame, shortest arc); no H_al. These are the gradient and
/// Hessian of ½(m/h²)|x − x*|² + ½(1/h²)θ_bᵀI_body θ_b to first order in θ_b.
WEFT_HD WEFT_FORCEINLINE BodyBlock inertialBlock(const Transform& pose, const Transform& target,
                                                 const Vec3& com, float mass,
                                                 const Mat33& inertiaBody, float h) {
  const float invH2 = 1.0f / (h * h);
  BodyBlock b;
  b.force = (worldCom(target, com) - worldCom(pose, com)) * (mass * invH2);
  b.hll = Mat33::diagonal(mass * invH2);
  const Vec3 thetaBody = quatToRotationVector(conjugate(pose.q) * target.q);
  const Mat33 R = rotationMatrix(pose.q);
  b.torque = R * (inertiaBody * thetaBody) * invH2;
  b.haa = R * inertiaBody * transpose(R) * invH2;
  return b;
}

/// Solves the Newton system of a body (§5.2) for δ = (Δx, Δθ): adds the angular regularizer
/// 1e-9·(tr(H_aa)/3 + 1) to the H_aa diagonal, then an unpivoted LDLᵀ on the unknowns
/// (x, y, z, θx, θy, θz). Reads only the lower triangles of H_ll and H_aa and all of H_al (angular
/// rows, linear columns), so the caller must have assembled the blocks symmetric. The block must be
/// positive definite (the inertial term makes it so for any body with mass); kinematic bodies are
/// never solved.
WEFT_HD WEFT_FORCEINLINE void solveBodyBlock(const BodyBlock& b, Vec3& dx, Vec3& dtheta) {
  const float reg = 1e-9f * ((b.haa(0, 0) + b.haa(1, 1) + b.haa(2, 2)) / 3.0f + 1.0f);
  // Lower triangle of the symmetric 6×6 matrix, A[i][j] for j ≤ i.
  float A[6][6];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) {
      A[i][j] = b.hll(i, j);
      A[i + 3][j + 3] = b.haa(i, j);
    }
    for (int j = 0; j < 3; ++j) A[i + 3][j] = b.hal(i, j);
    A[i + 3][i + 3] += reg;
  }
  // LDLᵀ in place: L below the diagonal (unit diagonal implied), D on the diagonal. Divisions go
  // through 1/d (six instead of 21; many entries are exact zeros, which an IEEE division sends
  // down the GPU's slow path).
  float invD[6];
  for (int j = 0; j < 6; ++j) {
    float d = A[j][j];
    for (int k = 0; k < j; ++k) d -= A[j][k] * A[j][k] * A[k][k];
    A[j][j] = d;
    invD[j] = 1.0f / d;
    for (int i = j + 1; i < 6; ++i) {
      float l = A[i][j];
      for (int k = 0; k < j; ++k) l -= A[i][k] * A[j][k] * A[k][k];
      A[i][j] = l * invD[j];
    }
  }
  float y[6] = {b.force.x, b.force.y, b.force.z, b.torque.x, b.torque.y, b.torque.z};
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < i; ++k) y[i] -= A[i][k] * y[k];
  for (int i = 0; i < 6; ++i) y[i] *= invD[i];
  for (int i = 5; i >= 0; --i)
    for (int k = i + 1; k < 6; ++k) y[i] -= A[k][i] * y[k];
  dx = {y[0], y[1], y[2]};
  dtheta = {y[3], y[4], y[5]};
}

/// Applies the increment (§5.2): the COM moves by dx, the orientation by the first-order world
/// rotation q ← normalize(normalize((Δθ/2, 1))⊗q); the origin follows, p = x − R(q)·com.
WEFT_HD WEFT_FORCEINLINE Transform applyIncrement(const Transform& pose, const Vec3& com,
                                                  const Vec3& dx, const Vec3& dtheta) {
  const Vec3 x = worldCom(pose, com) + dx;
  const Quat dq = normalize(Quat{0.5f * dtheta.x, 0.5f * dtheta.y, 0.5f * dtheta.z, 1.0f});
  const Quat q = normalize(dq * pose.q);
  return {x - rotate(q, com), q};
}

/// older + ω·(newer − older) for a body's pose (Chebyshev acceleration): interpolatePose
/// (kernels/kinematics.h, positions along the line, orientations by the normalized quaternion
/// combination in one hemisphere) applied to the centre-of-mass frames, so that the centre of mass
/// moves along the line, with ω > 1 extrapolating; no trigonometry in the solve's chain.
WEFT_HD WEFT_FORCEINLINE Transform extrapolatePose(const Transform& older, const Transform& newer,
                                                   const Vec3& com, float omega) {
  const Transform c =
      interpolatePose({worldCom(older, com), older.q}, {worldCom(newer, com), newer.q}, omega);
  return {c.p - rotate(c.q, com), c.q};
}

/// End-of-step velocity (§5.9, BDF1 on poses, no damping): v = (x − x_prev)/h and
/// ω = rotationVector(q⊗q_prev⁻¹)/h with q_prev taken in q's hemisphere (world frame). Applies to
/// kinematic bodies too (they get their finite-difference velocity).
WEFT_HD WEFT_FORCEINLINE void bodyVelocity(const Transform& pose, const Transform& prevPose,
                                           const Vec3& com, float h, Vec3& v, Vec3& w) {
  v = (worldCom(pose, com) - worldCom(prevPose, com)) / h;
  Quat qPrev = prevPose.q;
  const Quat& q = pose.q;
  if (q.x * qPrev.x + q.y * qPrev.y + q.z * qPrev.z + q.w * qPrev.w < 0.0f)
    qPrev = {-qPrev.x, -qPrev.y, -qPrev.z, -qPrev.w};
  w = quatToRotationVector(normalize(q * conjugate(qPrev))) / h;
}

}  // namespace weft
