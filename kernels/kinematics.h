// Kinematic motion evaluated on the device from simulation time, so that no substep needs the
// host: shape poses (a sweeping sphere, a moving gripper) and driven particles (the held edges of
// cloth_twist). Each motion is a pure function of time t [s]; the solver evaluates it at the end
// of the substep (target pose) and at its start (previous pose, for surface velocities).
#pragma once

#include "kernels/math.h"

namespace weft {

enum class MotionType : int {
  Static = 0,   // pose0 forever
  Linear = 1,   // constant linear and angular velocity while startTime <= t <= stopTime
  Sampled = 2,  // poses tabulated every sampleInterval seconds, interpolated; the last one holds
};

struct ShapeMotion {
  MotionType type = MotionType::Static;
  Transform pose0;           // pose at t = 0
  Vec3 linearVelocity;       // [m/s], world frame
  Vec3 angularVelocity;      // [rad/s], world frame, about the shape origin
  float startTime = 0.0f;    // [s] motion begins
  float stopTime = 1.0e30f;  // [s] motion ends; the pose stays where it stopped
  // Sampled: poses samples[sampleOffset + k] at t = k·sampleInterval, k < sampleCount (the Model
  // fills offset and count from ShapeDesc::motionSamples)
  int sampleOffset = 0;
  int sampleCount = 0;
  float sampleInterval = 0.0f;  // [s]
};

WEFT_HD inline float activeDuration(float t, float start, float stop) {
  const float tau = t - start;
  return tau <= 0.0f ? 0.0f : (tau >= stop - start ? stop - start : tau);
}

/// Interpolates between two poses: positions linearly, orientations along the shorter arc
/// (normalized linear interpolation, which is close to slerp for the small steps of a sampled
/// trajectory).
WEFT_HD inline Transform interpolatePose(const Transform& a, const Transform& b, float w) {
  Quat qb = b.q;
  if (a.q.x * qb.x + a.q.y * qb.y + a.q.z * qb.z + a.q.w * qb.w < 0.0f)
    qb = {-qb.x, -qb.y, -qb.z, -qb.w};
  const Quat q{a.q.x + w * (qb.x - a.q.x), a.q.y + w * (qb.y - a.q.y), a.q.z + w * (qb.z - a.q.z),
               a.q.w + w * (qb.w - a.q.w)};
  return {a.p + (b.p - a.p) * w, normalize(q)};
}

/// Pose of a shape at time t. `samples` is the model's table of sampled poses (Sampled motion).
WEFT_HD inline Transform poseAt(const ShapeMotion& m, float t, const Transform* samples) {
  if (m.type == MotionType::Static) return m.pose0;
  if (m.type == MotionType::Sampled) {
    const float s = t > 0.0f ? t / m.sampleInterval : 0.0f;
    const int k = int(s);
    if (k >= m.sampleCount - 1) return samples[m.sampleOffset + m.sampleCount - 1];
    return interpolatePose(samples[m.sampleOffset + k], samples[m.sampleOffset + k + 1],
                           s - float(k));
  }
  const float tau = activeDuration(t, m.startTime, m.stopTime);
  Transform out;
  out.p = m.pose0.p + m.linearVelocity * tau;
  const float speed = length(m.angularVelocity);
  out.q = speed > 0.0f
              ? normalize(quatFromAxisAngle(m.angularVelocity / speed, speed * tau) * m.pose0.q)
              : m.pose0.q;
  return out;
}

/// Rotates a set of held particles rigidly about an axis (cloth_twist's clamped edges).
struct ParticleDriver {
  Vec3 axisPoint;               // a point on the rotation axis [m]
  Vec3 axisDirection{0, 0, 1};  // unit axis; rotation is right-handed about it
  float angularSpeed = 0.0f;    // [rad/s]
  float startTime = 0.0f;       // [s]
  float stopTime = 1.0e30f;     // [s]
};

/// Position at time t of a particle that started at `initial` and is moved by driver d.
WEFT_HD inline Vec3 drivenPosition(const ParticleDriver& d, const Vec3& initial, float t) {
  const float angle = d.angularSpeed * activeDuration(t, d.startTime, d.stopTime);
  const Quat q = quatFromAxisAngle(d.axisDirection, angle);
  return d.axisPoint + rotate(q, initial - d.axisPoint);
}

}  // namespace weft
