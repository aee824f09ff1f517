#include "scenes/checks.h"

#include <algorithm>
#include <cstdio>

namespace weft {
namespace {

std::string format(const char* fmt, double a, double b) {
  char buffer[160];
  std::snprintf(buffer, sizeof(buffer), fmt, a, b);
  return buffer;
}

}  // namespace

std::optional<int> firstNonFiniteParticle(std::span<const Vec3> positions,
                                          std::span<const Vec3> velocities) {
  for (size_t i = 0; i < positions.size(); ++i)
    if (!isFinite(positions[i]) || (i < velocities.size() && !isFinite(velocities[i])))
      return int(i);
  return std::nullopt;
}

CheckResult checkFinite(const CheckInput& in) {
  const auto bad = firstNonFiniteParticle(in.positions, in.velocities);
  if (bad) return {"finite", false, "particle " + std::to_string(*bad) + " is not finite"};
  return {"finite", true, "all positions and velocities finite"};
}

CheckResult checkBounded(const CheckInput& in, const Vec3& lower, const Vec3& upper) {
  int outside = 0;
  float worst = 0.0f;
  for (const Vec3& x : in.positions) {
    const Vec3 below = lower - x, above = x - upper;
    const float excess = std::max({below.x, below.y, below.z, above.x, above.y, above.z});
    if (excess > 0.0f || !isFinite(x)) {
      ++outside;
      worst = std::max(worst, isFinite(x) ? excess : 1e30f);
    }
  }
  return {"bounded", outside == 0,
          outside == 0
              ? "all particles inside the scene box"
              : format("%.0f particles outside the scene box, worst by %.3g", outside, worst)};
}

CheckResult checkAboveGround(const CheckInput& in, float groundZ, float tolerance) {
  float lowest = 1e30f;
  for (const Vec3& x : in.positions) lowest = std::min(lowest, x.z);
  const bool pass = lowest >= groundZ - tolerance;
  return {"above_ground", pass,
          format("lowest particle z = %.4g (limit %.4g)", lowest, groundZ - tolerance)};
}

CheckResult checkNoSelfIntersections(int count) {
  return {"no_self_intersections", count == 0,
          std::to_string(count) + " edge-triangle intersections"};
}

CheckResult checkSettled(const CheckInput& in, float maxSpeed) {
  float fastest = 0.0f;
  for (const Vec3& v : in.velocities) fastest = std::max(fastest, length(v));
  return {"settled", fastest <= maxSpeed,
          format("max speed %.3g m/s (limit %.3g)", fastest, maxSpeed)};
}

}  // namespace weft
