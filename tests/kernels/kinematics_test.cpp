// Kinematic motion evaluated from time: linear motion stops where it should, sampled motion
// interpolates its samples and holds the last, drivers rotate about their axis.
#include "kernels/kinematics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace weft {
namespace {

TEST(Kinematics, LinearMotionMovesBetweenStartAndStop) {
  ShapeMotion m;
  m.type = MotionType::Linear;
  m.pose0.p = {-0.35f, 0.0f, 0.22f};
  m.linearVelocity = {0.5f, 0.0f, 0.0f};
  m.startTime = 1.0f;
  m.stopTime = 3.0f;
  EXPECT_FLOAT_EQ(poseAt(m, 0.5f, nullptr).p.x, -0.35f);
  EXPECT_FLOAT_EQ(poseAt(m, 2.0f, nullptr).p.x, -0.35f + 0.5f);
  EXPECT_FLOAT_EQ(poseAt(m, 10.0f, nullptr).p.x, -0.35f + 1.0f);
}

TEST(Kinematics, LinearAngularVelocityRotatesAboutTheShapeOrigin) {
  ShapeMotion m;
  m.type = MotionType::Linear;
  m.angularVelocity = {0.0f, 0.0f, 1.0f};
  const Transform t = poseAt(m, 0.5f * 3.14159265f, nullptr);
  const Vec3 x = rotate(t.q, {1.0f, 0.0f, 0.0f});
  EXPECT_NEAR(x.x, 0.0f, 1e-6f);
  EXPECT_NEAR(x.y, 1.0f, 1e-6f);
}

TEST(Kinematics, SampledMotionInterpolatesAndHoldsTheLastSample) {
  std::vector<Transform> samples(3);
  samples[0].p = {0.0f, 0.0f, 0.0f};
  samples[1].p = {1.0f, 2.0f, 0.0f};
  samples[2] = {{3.0f, 2.0f, 1.0f}, quatFromAxisAngle({0.0f, 0.0f, 1.0f}, 0.2f)};
  ShapeMotion m;
  m.type = MotionType::Sampled;
  m.sampleCount = 3;
  m.sampleInterval = 0.5f;
  EXPECT_EQ(poseAt(m, 0.0f, samples.data()).p, samples[0].p);
  EXPECT_EQ(poseAt(m, 0.5f, samples.data()).p, samples[1].p);
  const Vec3 mid = poseAt(m, 0.25f, samples.data()).p;
  EXPECT_FLOAT_EQ(mid.x, 0.5f);
  EXPECT_FLOAT_EQ(mid.y, 1.0f);
  const Transform late = poseAt(m, 5.0f, samples.data());
  EXPECT_EQ(late.p, samples[2].p);
  EXPECT_FLOAT_EQ(late.q.z, samples[2].q.z);
  // Orientations interpolate along the short arc and stay unit.
  const Quat q = poseAt(m, 0.75f, samples.data()).q;
  EXPECT_NEAR(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, 1.0f, 1e-6f);
  EXPECT_GT(q.z, 0.0f);
  EXPECT_LT(q.z, samples[2].q.z);
}

TEST(Kinematics, DriverRotatesAboutItsAxisAndStops) {
  ParticleDriver d;
  d.axisPoint = {1.0f, 0.0f, 0.0f};
  d.axisDirection = {0.0f, 1.0f, 0.0f};
  d.angularSpeed = 3.14159265f;  // half a turn per second
  d.stopTime = 0.5f;
  // A quarter turn about +y through (1, 0, 0) takes (2, 5, 0) to (1, 5, -1).
  const Vec3 p = drivenPosition(d, {2.0f, 5.0f, 0.0f}, 7.0f);
  EXPECT_NEAR(p.x, 1.0f, 1e-6f);
  EXPECT_NEAR(p.y, 5.0f, 1e-6f);
  EXPECT_NEAR(p.z, -1.0f, 1e-6f);
}

}  // namespace
}  // namespace weft
