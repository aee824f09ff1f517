// Final checks of a scene run: each is a named pass/fail with the measured value, so that the
// summary says not only that a check failed but by how much.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/math.h"
#include "solver/model_desc.h"

namespace weft {

struct CheckResult {
  std::string name;  // e.g. "bounded"
  bool pass = false;
  std::string detail;  // e.g. "max |x| = 1.62 m (limit 10 m)"
  // A property the scene's construction guarantees rather than the simulation (e.g. that the
  // joint graph is connected): reported as information ("info" in weft run, "information" in its
  // summary), never a reason for a run to fail.
  bool informational = false;
};

/// What a check looks at: the final state of a run.
struct CheckInput {
  const ModelDesc& desc;
  std::span<const Vec3> positions;
  std::span<const Vec3> velocities;
  long long frames = 0;
};

/// Index of the first particle whose position or velocity is not finite.
std::optional<int> firstNonFiniteParticle(std::span<const Vec3> positions,
                                          std::span<const Vec3> velocities);

CheckResult checkFinite(const CheckInput& in);
/// Every particle inside the axis-aligned box [lower, upper] (no explosion).
CheckResult checkBounded(const CheckInput& in, const Vec3& lower, const Vec3& upper);
/// No particle centre below the plane z = groundZ − tolerance.
CheckResult checkAboveGround(const CheckInput& in, float groundZ, float tolerance);
/// The mesh does not pass through itself: `count` edge–triangle intersections (must be 0).
CheckResult checkNoSelfIntersections(int count);
/// Largest particle speed below maxSpeed (the scene has settled).
CheckResult checkSettled(const CheckInput& in, float maxSpeed);

}  // namespace weft
