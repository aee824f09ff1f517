#include "scenes/cable_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <utility>

#include "solver/cable_builder.h"

namespace weft {
namespace {

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return buffer;
}

float largestComponent(const Vec3& v) {
  return std::max({std::fabs(v.x), std::fabs(v.y), std::fabs(v.z)});
}

bool finitePose(const Transform& t) {
  return isFinite(t.p) && isFinite(t.q.x) && isFinite(t.q.y) && isFinite(t.q.z) && isFinite(t.q.w);
}

/// The largest velocity component over all bodies (linear and angular), and its body.
std::pair<float, int> fastestComponent(const RigidCheckInput& in) {
  float fastest = 0.0f;
  int body = -1;
  const auto visit = [&](std::span<const Vec3> velocities) {
    for (size_t b = 0; b < velocities.size(); ++b)
      if (const float v = largestComponent(velocities[b]); v > fastest || !isFinite(v)) {
        fastest = isFinite(v) ? v : INFINITY;
        body = int(b);
      }
  };
  visit(in.linearVelocities);
  visit(in.angularVelocities);
  return {fastest, body};
}

float gapFraction(const JointGap& g) {
  return g.nonFinite > 0 ? NAN : g.joint >= 0 ? g.gap / g.referenceLength : 0.0f;
}

float overlapFraction(const CapsuleOverlap& o) {
  return o.shapeA < 0 || o.skippedNonFinite > 0 ? NAN : o.depth * kOverlapFraction / o.allowance;
}

/// The recorded frames from `fromFrame` on: how many were judged, how many `fails`, and the one
/// with the largest `measure` (NaN never; -1 when no frame has a number).
struct FrameVerdict {
  int judged = 0, failed = 0;
  long long worst = -1;
  std::string frames;  // "300 frames" or "241 frames from frame 60"
};

template <class T, class Measure, class Fails>
FrameVerdict judgeFrames(const std::vector<T>& perFrame, long long firstFrame, long long fromFrame,
                         Measure measure, Fails fails) {
  FrameVerdict v;
  float worst = NAN;
  for (size_t i = 0; i < perFrame.size(); ++i) {
    const long long frame = firstFrame + (long long)i;
    if (frame < fromFrame) continue;
    ++v.judged;
    v.failed += fails(perFrame[i]);
    const float m = measure(perFrame[i]);
    if (!std::isnan(m) && (v.worst < 0 || m > worst)) {
      worst = m;
      v.worst = frame;
    }
  }
  v.frames = fromFrame > 0 ? format("%d frames from frame %lld", v.judged, fromFrame)
                           : format("%d frames", v.judged);
  return v;
}

}  // namespace

CheckResult checkBodiesFinite(const RigidCheckInput& in) {
  for (size_t b = 0; b < in.poses.size(); ++b) {
    const bool velocity = (b < in.linearVelocities.size() && !isFinite(in.linearVelocities[b])) ||
                          (b < in.angularVelocities.size() && !isFinite(in.angularVelocities[b]));
    if (!finitePose(in.poses[b]) || velocity)
      return {"finite", false,
              "body " + std::to_string(b) + "'s " + (velocity ? "velocity" : "pose") +
                  " is not finite"};
  }
  return {"finite", true,
          "all " + std::to_string(in.poses.size()) + " body poses and velocities finite"};
}

CheckResult checkBodiesBounded(const RigidCheckInput& in, float maxPosition, float maxVelocity) {
  float farthest = 0.0f;
  for (const Transform& pose : in.poses) {
    const float x = largestComponent(pose.p);
    farthest = std::max(farthest, isFinite(x) ? x : INFINITY);
  }
  const float fastest = fastestComponent(in).first;
  const bool pass = farthest < maxPosition && fastest < maxVelocity;
  return {"bounded", pass,
          format("largest |position component| %.4g m (limit < %.4g), largest |velocity "
                 "component| %.4g (limit < %.4g)",
                 farthest, maxPosition, fastest, maxVelocity)};
}

CheckResult checkBodyVelocities(const RigidCheckInput& in, float maxVelocity) {
  const auto [fastest, body] = fastestComponent(in);
  return {"velocities", fastest < maxVelocity,
          format("largest |velocity component| %.4g%s (limit < %.4g)", fastest,
                 body < 0 ? "" : (" at body " + std::to_string(body)).c_str(), maxVelocity)};
}

CheckResult checkLowestBody(const RigidCheckInput& in, float minZ) {
  float lowest = INFINITY;
  int body = -1;
  for (size_t b = 0; b < in.poses.size(); ++b)
    if (const float z = in.poses[b].p.z; z < lowest || !isFinite(z)) {
      lowest = isFinite(z) ? z : -INFINITY;
      body = int(b);
    }
  return {"above_ground", lowest > minZ,
          format("lowest body z = %.4g m (body %d; limit > %.4g)", lowest, body, minZ)};
}

void CableIntegrityRecord::record(const RigidDesc& desc, std::span<const Transform> poses,
                                  long long frame) {
  if (firstFrame < 0) firstFrame = frame;
  gaps.push_back(largestJointGap(desc, poses));
  overlaps.push_back(deepestCapsuleOverlap(desc, poses, kOverlapFraction));
}

std::vector<float> CableIntegrityRecord::gapFractions() const {
  std::vector<float> out;
  for (const JointGap& g : gaps) out.push_back(gapFraction(g));
  return out;
}

std::vector<float> CableIntegrityRecord::overlapFractions() const {
  std::vector<float> out;
  for (const CapsuleOverlap& o : overlaps) out.push_back(overlapFraction(o));
  return out;
}

CheckResult checkJointsNotTorn(const RigidCheckInput& in, float fraction, long long fromFrame) {
  if (const CableIntegrityRecord* r = in.everyFrame) {
    // A NaN fraction (non-finite anchors) fails; a frame without joints measures 0.
    const FrameVerdict v =
        judgeFrames(r->gaps, r->firstFrame, fromFrame, gapFraction,
                    [&](const JointGap& g) { return !(gapFraction(g) < fraction); });
    if (v.worst < 0 || r->gaps[size_t(v.worst - r->firstFrame)].joint < 0)
      return {"joints_not_torn", v.failed == 0, "no joints measured in " + v.frames};
    const JointGap& w = r->gaps[size_t(v.worst - r->firstFrame)];
    return {"joints_not_torn", v.failed == 0,
            format("%d of %s with a gap >= %.3g x its joint's reference length; largest anchor "
                   "gap %.4g m at joint %d in frame %lld (limit < %.3g x its %.4g m reference "
                   "length = %.4g m)",
                   v.failed, v.frames.c_str(), fraction, w.gap, w.joint, v.worst, fraction,
                   w.referenceLength, fraction * w.referenceLength)};
  }
  const JointGap worst = largestJointGap(in.desc, in.poses);
  if (worst.nonFinite > 0)
    return {"joints_not_torn", false,
            format("%d joints have non-finite anchors (limit: gap < %.3g of the reference length)",
                   worst.nonFinite, fraction)};
  if (worst.joint < 0) return {"joints_not_torn", true, "no joints"};
  const float limit = fraction * worst.referenceLength;
  return {"joints_not_torn", worst.gap < limit,
          format("largest anchor gap %.4g m at joint %d (limit < %.3g x its %.4g m reference "
                 "length = %.4g m)",
                 worst.gap, worst.joint, fraction, worst.referenceLength, limit)};
}

CheckResult checkNoDeepInterpenetration(const RigidCheckInput& in, float toleranceFraction,
                                        long long fromFrame) {
  if (const CableIntegrityRecord* r = in.everyFrame) {
    const FrameVerdict v = judgeFrames(
        r->overlaps, r->firstFrame, fromFrame, overlapFraction,
        [&](const CapsuleOverlap& o) { return overlapFraction(o) > toleranceFraction; });
    const FrameVerdict nonFinite =
        judgeFrames(r->overlaps, r->firstFrame, fromFrame, overlapFraction,
                    [](const CapsuleOverlap& o) { return o.skippedNonFinite > 0; });
    std::string detail;
    if (v.worst < 0) {
      detail = "no capsule pairs close enough to measure in " + v.frames;
    } else {
      const CapsuleOverlap& w = r->overlaps[size_t(v.worst - r->firstFrame)];
      detail = format(
          "%d of %s with a capsule pair deeper than %.3g x the smaller radius; "
          "deepest: frame %lld, shapes %d and %d, overlap %.4g m (limit %.4g m)",
          v.failed, v.frames.c_str(), toleranceFraction, v.worst, w.shapeA, w.shapeB, w.depth,
          toleranceFraction * w.allowance / kOverlapFraction);
    }
    if (nonFinite.failed > 0)
      detail += format(", %d frames with non-finite poses", nonFinite.failed);
    return {"no_deep_interpenetration", v.failed == 0 && nonFinite.failed == 0, detail};
  }
  const CapsuleOverlap worst = deepestCapsuleOverlap(in.desc, in.poses, toleranceFraction);
  std::string detail =
      worst.shapeA < 0
          ? std::string("no capsule pairs close enough to measure")
          : format(
                "%d capsule pairs deeper than %.3g x the smaller radius; deepest relative to "
                "its allowance: shapes %d and %d, overlap %.4g m (limit %.4g m)",
                worst.violations, toleranceFraction, worst.shapeA, worst.shapeB, worst.depth,
                worst.allowance);
  if (worst.skippedNonFinite > 0)
    detail += format(", %d capsules with non-finite poses", worst.skippedNonFinite);
  return {"no_deep_interpenetration", worst.violations == 0 && worst.skippedNonFinite == 0, detail};
}

std::vector<CheckResult> cableIntegrityChecks(const RigidCheckInput& in,
                                              const IntegrityLimits& limits) {
  return {checkJointsNotTorn(in, limits.jointGap, limits.fromFrame),
          checkNoDeepInterpenetration(in, limits.overlap, limits.fromFrame)};
}

std::vector<std::vector<int>> cableBodies(const RigidDesc& desc) {
  std::vector<std::vector<int>> cables;
  for (std::vector<int>& group : jointedBodyGroups(desc))
    if (group.size() >= 2) cables.push_back(std::move(group));
  return cables;
}

}  // namespace weft
