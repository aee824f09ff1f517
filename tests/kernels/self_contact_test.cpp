// Self-contact (kernels/self_contact.h) against double-precision references:
//   * the barrier's three regimes: E', E'' continuous at r/2 and d_min, zero from r on, E' the
//     derivative of the energy and E'' that of E';
//   * vertex–triangle and edge–edge pairs in every region of the closest-point query (face, edge,
//     vertex; interior and clamped edge parameters) and every regime of the barrier: the elastic
//     force is −∇E(d(x)) over all stencil positions (finite differences with the closest point
//     recomputed), the Hessian block is the Gauss–Newton E''·b²·nnᵀ = ∇²E − E'·∇²d (and the
//     exact ∇²E for the vertex over a face, where d is linear in it), symmetric PSD;
//   * damping and lagged friction: −∇ of their potentials with n, the weights and λ held at the
//     iterate, Hessians (kd/dt)·b²·nnᵀ and μλφ·b²·(I − nnᵀ); damping only while approaching;
//     friction opposes the slip with magnitude μλ beyond ε_u, is continuous at ε_u, zero at rest;
//   * the forces on a vertex–triangle stencil, and those of an edge pair's two records, sum to 0;
//   * GPU == CPU on random pairs when a GPU is visible.
#include "kernels/self_contact.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "math_test_support.h"
#include "test_support.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "kernels/runtime/errors.h"
#endif

namespace weft {
namespace {

using namespace test;  // math_test_support.h
using Stencil = std::array<Vec3d, 4>;

// ---- Double-precision references (cloth_vbd_spec §5.7) ----------------------------------------

constexpr double kMinDistance = 1e-5;  // d_min

struct Barrier {
  double E, dE, d2E;
};

Barrier referenceBarrier(double d, double r, double k) {
  if (d >= r) return {0, 0, 0};
  const double tau = 0.5 * r, kTau2 = k * tau * tau;
  if (d >= tau) return {0.5 * k * (r - d) * (r - d), -k * (r - d), k};
  if (d > kMinDistance) return {kTau2 * (0.5 - std::log(d / tau)), -kTau2 / d, kTau2 / (d * d)};
  const double g = d - 2 * kMinDistance, m2 = kMinDistance * kMinDistance;
  return {kTau2 * (g * g / (2 * m2) - std::log(kMinDistance / tau)), kTau2 * g / m2, kTau2 / m2};
}

/// Closest point of a triangle: the face projection if inside, else the best edge. Returns the
/// barycentrics.
Vec3d referenceBarycentric(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
  const Vec3d n = (b - a).cross(c - a);
  const double n2 = n.squaredNorm();
  const Vec3d q = p - n * (n.dot(p - a) / n2);
  const Vec3d beta{(b - q).cross(c - q).dot(n) / n2, (c - q).cross(a - q).dot(n) / n2,
                   (a - q).cross(b - q).dot(n) / n2};
  if (beta.minCoeff() >= 0) return beta;
  const std::array<Vec3d, 3> corners{a, b, c};
  Vec3d best;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (const auto& [i, j] : std::array<std::array<int, 2>, 3>{{{0, 1}, {0, 2}, {1, 2}}}) {
    const double s = segmentParameter(p, corners[size_t(i)], corners[size_t(j)]);
    const double distance =
        (p - (corners[size_t(i)] + s * (corners[size_t(j)] - corners[size_t(i)]))).norm();
    if (distance < bestDistance) {
      bestDistance = distance;
      best.setZero();
      best[i] = 1 - s;
      best[j] = s;
    }
  }
  return best;
}

/// Minimum over [0, 1]² of |p1 + s·d1 − p2 − t·d2|: stationary point or the four clamped edges.
std::array<double, 2> referenceSegmentParameters(const Vec3d& p1, const Vec3d& q1, const Vec3d& p2,
                                                 const Vec3d& q2) {
  const Vec3d d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  std::array<double, 2> best{0, 0};
  double bestDistance = std::numeric_limits<double>::infinity();
  const auto consider = [&](double s, double t) {
    const double distance = ((p1 + s * d1) - (p2 + t * d2)).norm();
    if (distance < bestDistance) {
      bestDistance = distance;
      best = {s, t};
    }
  };
  const double a = d1.dot(d1), e = d2.dot(d2), b = d1.dot(d2), c = d1.dot(r), f = d2.dot(r);
  const double denom = a * e - b * b;
  if (denom > 1e-14 * a * e) {
    const double s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) consider(s, t);
  }
  for (const double s : {0.0, 1.0}) consider(s, segmentParameter(p1 + s * d1, p2, q2));
  for (const double t : {0.0, 1.0}) consider(segmentParameter(p2 + t * d2, p1, q1), t);
  return best;
}

/// The pair as a 4-vertex stencil with weights b (gap = Σ b_j x_j, ∂d/∂x_j = b_j·n):
/// vertex–triangle (a, b, c, v) with b = (−β, +1); edge–edge (p1, q1, p2, q2) with
/// b = (1 − s, s, −(1 − t), −t), in the owner's frame.
enum class PairKind { VertexTriangle, EdgeEdge };

std::array<double, 4> stencilWeights(PairKind kind, const Stencil& x) {
  if (kind == PairKind::VertexTriangle) {
    const Vec3d beta = referenceBarycentric(x[3], x[0], x[1], x[2]);
    return {-beta[0], -beta[1], -beta[2], 1.0};
  }
  const auto [s, t] = referenceSegmentParameters(x[0], x[1], x[2], x[3]);
  return {1 - s, s, -(1 - t), -t};
}

Vec3d weightedSum(const std::array<double, 4>& b, const Stencil& x) {
  return b[0] * x[0] + b[1] * x[1] + b[2] * x[2] + b[3] * x[3];
}

double referenceDistance(PairKind kind, const Stencil& x) {
  return weightedSum(stencilWeights(kind, x), x).norm();
}

/// The iterate's frame, held fixed by damping and friction (the lagged model).
struct Frame {
  std::array<double, 4> b;
  Vec3d normal;
  double distance;
};

Frame referenceFrame(PairKind kind, const Stencil& x) {
  Frame f;
  f.b = stencilWeights(kind, x);
  const Vec3d gap = weightedSum(f.b, x);
  f.distance = gap.norm();
  f.normal = gap / f.distance;
  return f;
}

// ---- Random pairs ---------------------------------------------------------------------------

enum class Regime { Band, Log, Continuation };
const char* regimeName(Regime r) {
  return r == Regime::Band ? "band" : (r == Regime::Log ? "log" : "continuation");
}

/// A distance inside the regime, away from its ends.
double distanceIn(Random& rng, Regime regime, double radius) {
  switch (regime) {
    case Regime::Band:
      return rng.uniform(0.55, 0.95) * radius;
    case Regime::Log:
      return rng.uniform(std::max(0.05 * radius, 3 * kMinDistance), 0.45 * radius);
    default:
      return rng.uniform(0.2, 0.8) * kMinDistance;
  }
}

struct Pair {
  PairKind kind;
  Stencil x, p;  // current and step-start positions, float-representable
  double radius, stiffness, damping, friction, epsU, dt;
  int region;  // VT: TriangleRegion; EE: 0 interior, 1 e1 clamped, 2 e2 clamped, 3 both

  SelfContactParams params() const {
    return {float(radius),   float(stiffness), float(damping),
            float(friction), float(epsU),      float(dt)};
  }
};

void randomMaterial(Random& rng, Pair& pair, double scale) {
  pair.radius = roundToFloat(rng.uniform(0.2, 0.5) * scale);
  pair.stiffness = roundToFloat(rng.logUniform(1e2, 1e5));
  pair.damping = roundToFloat(rng.logUniform(1e-3, 1.0));
  pair.friction = roundToFloat(rng.uniform(0.1, 1.0));
  pair.epsU = roundToFloat(rng.logUniform(1e-6, 1e-4));
  pair.dt = roundToFloat(rng.logUniform(1e-3, 1e-2));
}

/// Vertex–triangle: a triangle (angles > 20°) and a vertex whose closest point lies in `region`
/// (drawn from that region's normal cone with margins) at a distance in `regime`. The closest
/// point sits at the origin so that small distances keep their float precision.
Pair randomVertexTriangle(Random& rng, int region, Regime regime) {
  Pair pair;
  pair.kind = PairKind::VertexTriangle;
  pair.region = region;
  // Continuation distances are ~1e-5: a small triangle keeps d well above float rounding.
  const double scale =
      regime == Regime::Continuation ? rng.uniform(2e-3, 1e-2) : rng.uniform(0.01, 0.05);
  randomMaterial(rng, pair, scale);
  std::array<Vec3d, 3> tri;
  for (;;) {
    for (Vec3d& corner : tri) corner = rng.vec(-scale, scale);
    const auto angle = [](const Vec3d& u, const Vec3d& v) {
      return std::acos(std::clamp(u.normalized().dot(v.normalized()), -1.0, 1.0));
    };
    const double smallest =
        std::min({angle(tri[1] - tri[0], tri[2] - tri[0]), angle(tri[0] - tri[1], tri[2] - tri[1]),
                  angle(tri[0] - tri[2], tri[1] - tri[2])});
    if (smallest > 20.0 * std::numbers::pi / 180.0) break;
  }
  const Vec3d normal = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalized();
  const auto outward = [&](int i, int j) {
    const int k = 3 - i - j;
    Vec3d m = normal.cross(tri[size_t(j)] - tri[size_t(i)]).normalized();
    return m.dot(tri[size_t(k)] - tri[size_t(i)]) > 0 ? Vec3d(-m) : m;
  };
  Vec3d beta = Vec3d::Zero(), direction;
  if (region <= kTriangleRegionVertexC) {
    const int i = region, j = (i + 1) % 3, k = (i + 2) % 3;
    beta[i] = 1;
    direction = rng.uniform(-1, 1) * normal + rng.uniform(0.2, 1) * outward(i, j) +
                rng.uniform(0.2, 1) * outward(i, k);
  } else if (region == kTriangleRegionFace) {
    do {
      beta = {rng.uniform(0.1, 0.8), rng.uniform(0.1, 0.8), 0};
      beta[2] = 1 - beta[0] - beta[1];
    } while (beta[2] < 0.1);
    direction = rng.sign() * normal;
  } else {
    const int i = region == kTriangleRegionEdgeBC ? 1 : 0;
    const int j = region == kTriangleRegionEdgeAB ? 1 : 2;
    const double s = rng.uniform(0.1, 0.9);
    beta[i] = 1 - s;
    beta[j] = s;
    const double theta = rng.uniform(0.15, 0.5 * std::numbers::pi);
    direction = std::cos(theta) * rng.sign() * normal + std::sin(theta) * outward(i, j);
  }
  const Vec3d closest = beta[0] * tri[0] + beta[1] * tri[1] + beta[2] * tri[2];
  const double distance = distanceIn(rng, regime, pair.radius);
  for (int j = 0; j < 3; ++j) pair.x[size_t(j)] = roundToFloat(tri[size_t(j)] - closest);
  pair.x[3] = roundToFloat(distance * direction.normalized());
  pair.p = pair.x;  // at rest unless a test moves the anchors
  return pair;
}

/// Edge–edge: kind 0 both parameters interior, 1 s clamped (an end of e1 is closest), 2 t
/// clamped, 3 both. Built from the optimality conditions: c2 = 0, c1 = d·n, and each edge
/// direction u either ⊥ n (interior) or tilted so that moving off the clamped end increases the
/// gap (n·u1 > 0 at s = 0, < 0 at s = 1; the opposite signs for e2).
Pair randomEdgeEdge(Random& rng, int kind, Regime regime) {
  Pair pair;
  pair.kind = PairKind::EdgeEdge;
  pair.region = kind;
  // Edges of squared length <= 1e-5 count as points: keep them longer than 5 mm (and short for
  // continuation distances, whose float precision is relative to the coordinates).
  const double scale =
      regime == Regime::Continuation ? rng.uniform(5e-3, 1e-2) : rng.uniform(0.01, 0.05);
  randomMaterial(rng, pair, scale);
  const Vec3d n = rng.unit();
  const bool clampS = kind == 1 || kind == 3, clampT = kind == 2 || kind == 3;
  const double s0 = clampS ? (rng.sign() > 0 ? 1.0 : 0.0) : rng.uniform(0.2, 0.8);
  const double t0 = clampT ? (rng.sign() > 0 ? 1.0 : 0.0) : rng.uniform(0.2, 0.8);
  Vec3d u1, u2;
  for (;;) {
    u1 = rng.unitPerpendicular(n);
    u2 = rng.unitPerpendicular(n);
    if (u1.cross(u2).norm() > 0.3) break;
  }
  if (clampS) u1 = (u1 + (s0 == 0 ? 1 : -1) * rng.uniform(0.3, 1.5) * n).normalized();
  if (clampT) u2 = (u2 + (t0 == 0 ? -1 : 1) * rng.uniform(0.3, 1.5) * n).normalized();
  const double length1 = rng.uniform(1, 2) * scale, length2 = rng.uniform(1, 2) * scale;
  const double distance = distanceIn(rng, regime, pair.radius);
  const Vec3d c1 = distance * n;
  pair.x[0] = roundToFloat(c1 - s0 * length1 * u1);
  pair.x[1] = roundToFloat(c1 + (1 - s0) * length1 * u1);
  pair.x[2] = roundToFloat(-t0 * length2 * u2);
  pair.x[3] = roundToFloat((1 - t0) * length2 * u2);
  pair.p = pair.x;
  return pair;
}

Pair randomPair(Random& rng, PairKind kind, int region, Regime regime) {
  return kind == PairKind::VertexTriangle ? randomVertexTriangle(rng, region, regime)
                                          : randomEdgeEdge(rng, region, regime);
}
int numRegions(PairKind kind) {
  return kind == PairKind::VertexTriangle ? 7 : 4;
}

/// Moves the step-start positions so that the pair's relative displacement Δ = Σ b_j (x_j − p_j)
/// is `delta` (in the reference frame), with random per-vertex displacements of size `scale`
/// on top. Δ is fixed through the vertex (VT) or both e1 endpoints (EE), whose weights sum to 1.
void setRelativeDisplacement(Random& rng, Pair& pair, const Vec3d& delta, double scale) {
  const Frame frame = referenceFrame(pair.kind, pair.x);
  std::array<Vec3d, 4> displacement;
  for (Vec3d& d : displacement) d = rng.vec(-scale, scale);
  const Vec3d missing = delta - weightedSum(frame.b, displacement);
  if (pair.kind == PairKind::VertexTriangle) {
    displacement[3] += missing;
  } else {
    displacement[0] += missing;
    displacement[1] += missing;
  }
  for (int j = 0; j < 4; ++j)
    pair.p[size_t(j)] = roundToFloat(pair.x[size_t(j)] - displacement[size_t(j)]);
}

/// Δ = Σ b_j (x_j − p_j) of the float-rounded positions, in the reference frame: what the kernel
/// sees, rather than what the test asked for (a displacement far below the coordinates loses
/// relative precision when x − Δ is rounded).
Vec3d actualRelativeDisplacement(const Pair& pair, const Frame& frame) {
  Stencil displacement;
  for (int j = 0; j < 4; ++j) displacement[size_t(j)] = pair.x[size_t(j)] - pair.p[size_t(j)];
  return weightedSum(frame.b, displacement);
}

/// The stencil vertex a kernel call answers for: VT slots are stencil indices; an EE pair gives
/// e1's endpoints through the owner record and e2's through the mirror record.
ForceHessian evaluate(const Pair& pair, int vertex) {
  const SelfContactParams params = pair.params();
  const auto& x = pair.x;
  const auto& p = pair.p;
  if (pair.kind == PairKind::VertexTriangle)
    return vertexTriangleContactForceHessian(vertex, toFloat(x[3]), toFloat(x[0]), toFloat(x[1]),
                                             toFloat(x[2]), toFloat(p[3]), toFloat(p[0]),
                                             toFloat(p[1]), toFloat(p[2]), params);
  if (vertex < 2)
    return edgeEdgeContactForceHessian(vertex, toFloat(x[0]), toFloat(x[1]), toFloat(x[2]),
                                       toFloat(x[3]), toFloat(p[0]), toFloat(p[1]), toFloat(p[2]),
                                       toFloat(p[3]), params);
  return edgeEdgeContactForceHessian(vertex - 2, toFloat(x[2]), toFloat(x[3]), toFloat(x[0]),
                                     toFloat(x[1]), toFloat(p[2]), toFloat(p[3]), toFloat(p[0]),
                                     toFloat(p[1]), params);
}

// Potentials as functions of the whole stencil.
using Potential = std::function<double(const Stencil&)>;

double elasticEnergy(const Pair& pair, const Stencil& y) {
  return referenceBarrier(referenceDistance(pair.kind, y), pair.radius, pair.stiffness).E;
}

/// kd/(2dt)·(n·Δ)² on the closing side, with n and the weights of the iterate (lagged).
double dampingPotential(const Pair& pair, const Frame& frame, const Stencil& y) {
  Stencil displacement;
  for (int j = 0; j < 4; ++j) displacement[size_t(j)] = y[size_t(j)] - pair.p[size_t(j)];
  const double nd = frame.normal.dot(weightedSum(frame.b, displacement));
  return nd < 0 ? 0.5 * pair.damping / pair.dt * nd * nd : 0.0;
}

/// μλ·f0(|u|), u = (I − nnᵀ)Δ, with n, the weights and λ = −E' of the iterate (lagged).
double frictionPotential(const Pair& pair, const Frame& frame, const Stencil& y) {
  Stencil displacement;
  for (int j = 0; j < 4; ++j) displacement[size_t(j)] = y[size_t(j)] - pair.p[size_t(j)];
  const Vec3d delta = weightedSum(frame.b, displacement);
  const double u = (delta - frame.normal * frame.normal.dot(delta)).norm();
  const double eps = pair.epsU;
  const double f0 = u > eps ? u - eps / 3 : u * u / eps - u * u * u / (3 * eps * eps);
  const double load = -referenceBarrier(frame.distance, pair.radius, pair.stiffness).dE;
  return pair.friction * load * f0;
}

/// The relative precision of a float gap direction: the closest points carry rounding of the
/// coordinates' size, ~1e-7·L, so n = gap/d is good to ~1e-7·L/d (a factor 20 for the solve of
/// the edge parameters). Negligible in the band and log regimes, ~1e-3 at d ~ 1e-5 with
/// coordinates ~1e-2.
double directionPrecision(const Pair& pair) {
  double size = 0;
  for (const Vec3d& x : pair.x) size = std::max(size, x.norm());
  return 2e-6 * size / referenceDistance(pair.kind, pair.x);
}

/// Finite-difference step: far below the distance and the region margins.
double stepFor(const Pair& pair) {
  return 1e-4 * referenceDistance(pair.kind, pair.x);
}

const PairKind kKinds[] = {PairKind::VertexTriangle, PairKind::EdgeEdge};
const Regime kRegimes[] = {Regime::Band, Regime::Log, Regime::Continuation};

// ---- Barrier ----------------------------------------------------------------------------------

TEST(SelfContactBarrier, ContinuousAtHalfRadiusAndMinDistance) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const float r = float(rng.logUniform(1e-3, 0.1)), k = float(rng.logUniform(1e2, 1e5));
    for (const float boundary : {0.5f * r, float(kMinDistance)}) {
      const float below = boundary * (1 - 1e-6f), above = boundary * (1 + 1e-6f);
      const BarrierDerivatives lo = selfContactBarrier(below, r, k),
                               hi = selfContactBarrier(above, r, k);
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " boundary " << boundary);
      EXPECT_NEAR(lo.dE, hi.dE, 1e-5 * std::abs(hi.dE));
      EXPECT_NEAR(lo.d2E, hi.d2E, 1e-5 * std::abs(hi.d2E));
      EXPECT_NEAR(selfContactBarrierEnergy(below, r, k), selfContactBarrierEnergy(above, r, k),
                  1e-5 * selfContactBarrierEnergy(above, r, k));
    }
    // The values there: E'(τ) = −kτ, E''(τ) = k; E'(d_min) = −kτ²/d_min, E''(d_min) = kτ²/d_min².
    const double tau = 0.5 * r, kTau2 = double(k) * tau * tau;
    const BarrierDerivatives atTau = selfContactBarrier(0.5f * r, r, k);
    EXPECT_NEAR(atTau.dE, -k * tau, 1e-5 * k * tau);
    EXPECT_NEAR(atTau.d2E, k, 1e-5 * k);
    const BarrierDerivatives atMin = selfContactBarrier(float(kMinDistance), r, k);
    EXPECT_NEAR(atMin.dE, -kTau2 / kMinDistance, 1e-5 * kTau2 / kMinDistance);
    EXPECT_NEAR(atMin.d2E, kTau2 / (kMinDistance * kMinDistance),
                1e-5 * kTau2 / (kMinDistance * kMinDistance));
  }
}

TEST(SelfContactBarrier, VanishesFromTheRadiusOn) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const float r = float(rng.logUniform(1e-3, 0.1)), k = float(rng.logUniform(1e2, 1e5));
    for (const float d : {r, r * float(rng.uniform(1, 10)), std::nextafter(r, 2 * r)}) {
      const BarrierDerivatives b = selfContactBarrier(d, r, k);
      EXPECT_EQ(b.dE, 0.0f);
      EXPECT_EQ(b.d2E, 0.0f);
      EXPECT_EQ(selfContactBarrierEnergy(d, r, k), 0.0f);
    }
    // Just inside, E and E' go to zero continuously (E'' = k stays: the band is quadratic).
    const float inside = r * (1 - 1e-4f);
    EXPECT_NEAR(selfContactBarrier(inside, r, k).dE, 0.0f, 2e-4f * k * r);
    EXPECT_NEAR(selfContactBarrierEnergy(inside, r, k), 0.0f, 1e-7f * k * r * r);
    // Everything inside is repulsive and convex.
    const float d = float(rng.uniform(0, 1)) * r;
    EXPECT_LT(selfContactBarrier(d, r, k).dE, 0.0f);
    EXPECT_GT(selfContactBarrier(d, r, k).d2E, 0.0f);
  }
}

TEST(SelfContactBarrier, DerivativesAreThoseOfTheEnergy) {
  Random rng;
  TRACE_SEED(rng);
  for (int trial = 0; trial < 300; ++trial) {
    const Regime regime = kRegimes[trial % 3];
    const float r = float(rng.logUniform(1e-3, 0.1)), k = float(rng.logUniform(1e2, 1e5));
    const float d = float(distanceIn(rng, regime, r));
    SCOPED_TRACE(::testing::Message()
                 << "trial " << trial << " " << regimeName(regime) << " d " << d << " r " << r);
    // The float energy against the double formula, and the kernel's E', E'' against it.
    const Barrier ref = referenceBarrier(d, r, k);
    EXPECT_NEAR(selfContactBarrierEnergy(d, r, k), ref.E, 1e-5 * ref.E);
    const BarrierDerivatives b = selfContactBarrier(d, r, k);
    EXPECT_NEAR(b.dE, ref.dE, 1e-5 * std::abs(ref.dE));
    EXPECT_NEAR(b.d2E, ref.d2E, 1e-5 * ref.d2E);
    // Central differences of the float functions, on the float arguments actually passed.
    const float h = 1e-2f * d;
    const float plus = d + h, minus = d - h;
    const double span = double(plus) - double(minus);
    const double dEnergy =
        (double(selfContactBarrierEnergy(plus, r, k)) - selfContactBarrierEnergy(minus, r, k)) /
        span;
    EXPECT_NEAR(dEnergy, b.dE, 1e-3 * std::abs(b.dE));
    const double d2 =
        (double(selfContactBarrier(plus, r, k).dE) - selfContactBarrier(minus, r, k).dE) / span;
    EXPECT_NEAR(d2, b.d2E, 1e-3 * b.d2E);
    // And of the double formulas (no rounding to hide behind).
    const double hd = 1e-5 * d;
    EXPECT_NEAR((referenceBarrier(d + hd, r, k).E - referenceBarrier(d - hd, r, k).E) / (2 * hd),
                ref.dE, 1e-6 * std::abs(ref.dE));
    EXPECT_NEAR((referenceBarrier(d + hd, r, k).dE - referenceBarrier(d - hd, r, k).dE) / (2 * hd),
                ref.d2E, 1e-6 * ref.d2E);
  }
}

// ---- Elastic force and Hessian ------------------------------------------------------------------

TEST(SelfContact, ElasticForceIsNegativeEnergyGradient) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (const Regime regime : kRegimes)
      for (int trial = 0; trial < 20 * numRegions(kind); ++trial) {
        Pair pair = randomPair(rng, kind, trial % numRegions(kind), regime);
        pair.damping = pair.friction = 0;
        const Potential energy = [&](const Stencil& y) { return elasticEnergy(pair, y); };
        const double h = stepFor(pair);
        std::array<Vec3d, 4> expected;
        double scale = 0;
        for (int j = 0; j < 4; ++j) {
          expected[size_t(j)] = -finiteDifferenceGradient(energy, pair.x, j, h);
          scale = std::max(scale, expected[size_t(j)].norm());
        }
        SCOPED_TRACE(::testing::Message()
                     << (kind == PairKind::EdgeEdge ? "edge-edge" : "vertex-triangle") << " region "
                     << pair.region << " " << regimeName(regime) << " trial " << trial);
        ASSERT_GT(scale, 0.0);
        for (int j = 0; j < 4; ++j) {
          const Vec3d force = toEigen(evaluate(pair, j).force);
          EXPECT_LE((force - expected[size_t(j)]).norm(), (2e-3 + directionPrecision(pair)) * scale)
              << "vertex " << j << ": " << force.transpose() << " vs "
              << expected[size_t(j)].transpose();
        }
        // The energy helpers agree with the double reference.
        const float e = kind == PairKind::VertexTriangle
                            ? vertexTriangleContactEnergy(toFloat(pair.x[3]), toFloat(pair.x[0]),
                                                          toFloat(pair.x[1]), toFloat(pair.x[2]),
                                                          float(pair.radius), float(pair.stiffness))
                            : edgeEdgeContactEnergy(toFloat(pair.x[0]), toFloat(pair.x[1]),
                                                    toFloat(pair.x[2]), toFloat(pair.x[3]),
                                                    float(pair.radius), float(pair.stiffness));
        EXPECT_NEAR(e, energy(pair.x), 1e-3 * energy(pair.x));
      }
}

TEST(SelfContact, ElasticHessianIsGaussNewtonBlock) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (const Regime regime : kRegimes)
      for (int trial = 0; trial < 10 * numRegions(kind); ++trial) {
        Pair pair = randomPair(rng, kind, trial % numRegions(kind), regime);
        pair.damping = pair.friction = 0;
        const Frame frame = referenceFrame(kind, pair.x);
        const Barrier barrier = referenceBarrier(frame.distance, pair.radius, pair.stiffness);
        const Potential energy = [&](const Stencil& y) { return elasticEnergy(pair, y); };
        const Potential distance = [&](const Stencil& y) { return referenceDistance(kind, y); };
        const double h = stepFor(pair);
        const Mat3d nnT = frame.normal * frame.normal.transpose();
        SCOPED_TRACE(::testing::Message()
                     << (kind == PairKind::EdgeEdge ? "edge-edge" : "vertex-triangle") << " region "
                     << pair.region << " " << regimeName(regime) << " trial " << trial);
        for (int j = 0; j < 4; ++j) {
          const double b = frame.b[size_t(j)];
          const Mat3d hessian = toEigen(evaluate(pair, j).hessian);
          const Mat3d gaussNewton = barrier.d2E * b * b * nnT;
          const double tolerance = (1e-3 + 2 * directionPrecision(pair)) * barrier.d2E;
          // E''·b²·nnᵀ, which is ∇²E − E'·∇²d (the curvature of the distance dropped).
          EXPECT_LE((hessian - gaussNewton).norm(), tolerance) << "vertex " << j;
          const Mat3d fromDifferences =
              finiteDifferenceHessian(energy, pair.x, j, h) -
              barrier.dE * finiteDifferenceHessian(distance, pair.x, j, h);
          EXPECT_LE((fromDifferences - gaussNewton).norm(), tolerance) << "vertex " << j;
          expectSymmetricPsd(hessian);
        }
        // Over a face, d is linear in the vertex, so its block is the exact second derivative.
        if (kind == PairKind::VertexTriangle && pair.region == kTriangleRegionFace) {
          const Mat3d exact = finiteDifferenceHessian(energy, pair.x, 3, h);
          EXPECT_LE((toEigen(evaluate(pair, 3).hessian) - exact).norm(),
                    (1e-3 + 2 * directionPrecision(pair)) * exact.norm());
        }
      }
}

TEST(SelfContact, ForcesSumToZero) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 300; ++trial) {
      const Regime regime = kRegimes[trial % 3];
      Pair pair = randomPair(rng, kind, trial % numRegions(kind), regime);
      // With damping and friction too: every term is b_j times a shared vector, Σ b_j = 0.
      const double slip = rng.uniform(0.1, 10) * pair.epsU;
      setRelativeDisplacement(rng, pair,
                              rng.uniform(-1, 1) * slip * referenceFrame(kind, pair.x).normal +
                                  slip * rng.unitPerpendicular(referenceFrame(kind, pair.x).normal),
                              slip);
      Vec3d sum = Vec3d::Zero();
      double scale = 0;
      for (int j = 0; j < 4; ++j) {
        const Vec3d f = toEigen(evaluate(pair, j).force);
        sum += f;
        scale = std::max(scale, f.norm());
      }
      EXPECT_LE(sum.norm(), (1e-4 + directionPrecision(pair)) * scale)
          << (kind == PairKind::EdgeEdge ? "edge-edge (owner + mirror)" : "vertex-triangle")
          << " trial " << trial << " " << regimeName(regime);
    }
}

// ---- Damping and friction ---------------------------------------------------------------------

TEST(SelfContact, DampingAndFrictionAreNegativeLaggedPotentialGradients) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 300; ++trial) {
      const Regime regime = kRegimes[trial % 3];
      Pair pair = randomPair(rng, kind, trial % numRegions(kind), regime);
      const Frame frame = referenceFrame(kind, pair.x);
      // Approaching or separating along n, slipping inside or beyond ε_u.
      const double slipOverEps = trial % 2 ? rng.uniform(0.1, 0.9) : rng.uniform(1.1, 50);
      const double scale = (1 + slipOverEps) * pair.epsU;
      const Vec3d delta = rng.sign() * rng.uniform(0.2, 1) * scale * frame.normal +
                          slipOverEps * pair.epsU * rng.unitPerpendicular(frame.normal);
      setRelativeDisplacement(rng, pair, delta, scale);

      Pair elasticOnly = pair, withDamping = pair, withFriction = pair;
      elasticOnly.damping = elasticOnly.friction = 0;
      withDamping.friction = 0;
      withFriction.damping = 0;
      const Potential damping = [&](const Stencil& y) { return dampingPotential(pair, frame, y); };
      const Potential friction = [&](const Stencil& y) {
        return frictionPotential(pair, frame, y);
      };
      const double h = 1e-3 * pair.epsU;
      const Mat3d nnT = frame.normal * frame.normal.transpose();
      Stencil displacement;
      for (int j = 0; j < 4; ++j) displacement[size_t(j)] = pair.x[size_t(j)] - pair.p[size_t(j)];
      const Vec3d relative = weightedSum(frame.b, displacement);
      const double normalDelta = frame.normal.dot(relative);
      const double u = (relative - frame.normal * normalDelta).norm();
      const double phi = u > pair.epsU ? 1 / u : (2 - u / pair.epsU) / pair.epsU;
      const double load = -referenceBarrier(frame.distance, pair.radius, pair.stiffness).dE;
      SCOPED_TRACE(::testing::Message()
                   << (kind == PairKind::EdgeEdge ? "edge-edge" : "vertex-triangle") << " region "
                   << pair.region << " " << regimeName(regime) << " trial " << trial);
      for (int j = 0; j < 4; ++j) {
        const ForceHessian base = evaluate(elasticOnly, j);
        const Vec3d dampingForce = toEigen(evaluate(withDamping, j).force - base.force);
        const Vec3d frictionForce = toEigen(evaluate(withFriction, j).force - base.force);
        const Vec3d expectedDamping = -finiteDifferenceGradient(damping, pair.x, j, h);
        const Vec3d expectedFriction = -finiteDifferenceGradient(friction, pair.x, j, h);
        // The differences carry the rounding of the (larger) elastic force.
        const double rounding = 1e-6 * toEigen(base.force).norm();
        const double relative = 2e-3 + 2 * directionPrecision(pair);
        EXPECT_LE((dampingForce - expectedDamping).norm(),
                  relative * expectedDamping.norm() + rounding)
            << "vertex " << j << ": " << dampingForce.transpose() << " vs "
            << expectedDamping.transpose();
        EXPECT_LE((frictionForce - expectedFriction).norm(),
                  relative * expectedFriction.norm() + rounding)
            << "vertex " << j << ": " << frictionForce.transpose() << " vs "
            << expectedFriction.transpose();
        // Hessians: (kd/dt)·b²·nnᵀ while closing, and the lagged μλφ·b²·(I − nnᵀ).
        const double b2 = frame.b[size_t(j)] * frame.b[size_t(j)];
        const Mat3d dampingHessian = toEigen(evaluate(withDamping, j).hessian - base.hessian);
        const Mat3d frictionHessian = toEigen(evaluate(withFriction, j).hessian - base.hessian);
        const Mat3d expectedDampingHessian =
            normalDelta < 0 ? Mat3d(pair.damping / pair.dt * b2 * nnT) : Mat3d::Zero();
        const Mat3d expectedFrictionHessian =
            pair.friction * load * phi * b2 * (Mat3d::Identity() - nnT);
        const double hessianRounding = 1e-6 * toEigen(base.hessian).norm();
        EXPECT_LE((dampingHessian - expectedDampingHessian).norm(),
                  relative * expectedDampingHessian.norm() + hessianRounding)
            << "vertex " << j;
        EXPECT_LE((frictionHessian - expectedFrictionHessian).norm(),
                  relative * expectedFrictionHessian.norm() + hessianRounding)
            << "vertex " << j;
        expectSymmetricPsd(toEigen(evaluate(pair, j).hessian));
      }
    }
}

TEST(SelfContact, DampingActsOnlyWhileApproaching) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 200; ++trial) {
      Pair pair = randomPair(rng, kind, trial % numRegions(kind), kRegimes[trial % 3]);
      const Frame frame = referenceFrame(kind, pair.x);
      // Closing (ġ well below −1e-6 m/s) or opening, with no slip.
      const double approach = trial % 2 ? -1.0 : 1.0;
      const double speed = rng.logUniform(1e-4, 1.0);  // |ġ| [m/s]
      setRelativeDisplacement(rng, pair, approach * speed * pair.dt * frame.normal, 0.0);
      Pair undamped = pair;
      undamped.damping = 0;
      const double gapRate = frame.normal.dot(actualRelativeDisplacement(pair, frame)) / pair.dt;
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " ġ " << gapRate);
      ASSERT_GT(std::abs(gapRate), 1e-5);
      for (int j = 0; j < 4; ++j) {
        const ForceHessian full = evaluate(pair, j), base = evaluate(undamped, j);
        const Vec3d extra = toEigen(full.force - base.force);
        const double rounding = 1e-6 * toEigen(full.force).norm();
        const double b = frame.b[size_t(j)];
        if (approach < 0) {
          // −kd·ġ·b·n: pushes the two sides apart, along +n for the vertex / e1.
          const Vec3d expected = -pair.damping * gapRate * b * frame.normal;
          EXPECT_LE((extra - expected).norm(), 2e-3 * expected.norm() + rounding) << "vertex " << j;
        } else {
          EXPECT_EQ(extra, Vec3d::Zero()) << "vertex " << j;
          EXPECT_EQ(toEigen(full.hessian - base.hessian), Mat3d::Zero()) << "vertex " << j;
        }
      }
    }
}

TEST(SelfContact, SlidingFrictionOpposesSlipWithCoulombMagnitude) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 200; ++trial) {
      // A vertex sliding over a face, or two edges sliding across each other, tangentially.
      const int region = kind == PairKind::VertexTriangle ? int(kTriangleRegionFace) : 0;
      Pair pair = randomPair(rng, kind, region, kRegimes[trial % 3]);
      const Frame frame = referenceFrame(kind, pair.x);
      // Kinetic (|u| ≫ ε_u) or inside the band, down to nearly stuck.
      const double slipOverEps =
          trial % 2 ? rng.uniform(1e2, 1e3) : 0.95 * std::pow(10.0, rng.uniform(-2, 0));
      setRelativeDisplacement(rng, pair,
                              slipOverEps * pair.epsU * rng.unitPerpendicular(frame.normal), 0.0);
      Pair frictionless = pair;
      frictionless.friction = 0;
      const double load = -referenceBarrier(frame.distance, pair.radius, pair.stiffness).dE;
      const double coulomb = pair.friction * load;
      // The slip as rounded into the positions (its normal part is rounding noise).
      const Vec3d delta = actualRelativeDisplacement(pair, frame);
      const Vec3d slip = delta - frame.normal * frame.normal.dot(delta);
      const Vec3d slipDirection = slip.normalized();
      const double r = slip.norm() / pair.epsU;
      const double magnitude = r > 1 ? coulomb : coulomb * (2 - r) * r;
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " slip/eps " << slipOverEps);
      for (int j = 0; j < 4; ++j) {
        const ForceHessian full = evaluate(pair, j), base = evaluate(frictionless, j);
        const Vec3d friction = toEigen(full.force - base.force);
        const double rounding = 1e-6 * toEigen(full.force).norm();
        // b_j times −μλφ·u: against the slip on the vertex / e1, with it on the other side.
        const Vec3d expected = -frame.b[size_t(j)] * magnitude * slipDirection;
        EXPECT_LE((friction - expected).norm(), 3e-3 * magnitude + rounding)
            << "vertex " << j << ": " << friction.transpose() << " vs " << expected.transpose();
      }
    }
}

TEST(SelfContact, FrictionIsContinuousAtEpsilonAndZeroWithoutSlip) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 100; ++trial) {
      const int region = kind == PairKind::VertexTriangle ? int(kTriangleRegionFace) : 0;
      Pair pair = randomPair(rng, kind, region, kRegimes[trial % 3]);
      const Frame frame = referenceFrame(kind, pair.x);
      const Vec3d direction = rng.unitPerpendicular(frame.normal);
      const double coulomb =
          pair.friction * -referenceBarrier(frame.distance, pair.radius, pair.stiffness).dE;
      Pair frictionless = pair;
      frictionless.friction = 0;
      SCOPED_TRACE(::testing::Message() << "trial " << trial);
      // The vertex (or e1's first endpoint) has weight 1 (or 1 − s): compare per unit weight.
      const int j = kind == PairKind::VertexTriangle ? 3 : 0;
      const double weight = std::abs(frame.b[size_t(j)]);
      for (const double factor : {1 - 1e-3, 1 + 1e-3}) {
        setRelativeDisplacement(rng, pair, factor * pair.epsU * direction, 0.0);
        frictionless.p = pair.p;
        const double magnitude =
            toEigen(evaluate(pair, j).force - evaluate(frictionless, j).force).norm() / weight;
        EXPECT_NEAR(magnitude, coulomb, 3e-3 * coulomb) << "factor " << factor;
      }
      // At rest (p = x): no slip, no friction, no damping: only the elastic force.
      pair.p = pair.x;
      frictionless.p = pair.x;
      frictionless.damping = 0;
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(toEigen(evaluate(pair, k).force), toEigen(evaluate(frictionless, k).force));
        EXPECT_EQ(toEigen(evaluate(pair, k).hessian), toEigen(evaluate(frictionless, k).hessian));
      }
    }
}

// ---- Inactive pairs and bad input -------------------------------------------------------------

TEST(SelfContact, NothingActsOutsideTheRadiusOrWithoutAGap) {
  Random rng;
  TRACE_SEED(rng);
  for (const PairKind kind : kKinds)
    for (int trial = 0; trial < 100; ++trial) {
      Pair pair = randomPair(rng, kind, trial % numRegions(kind), Regime::Band);
      // Move the vertex (or e1) out along n to a distance in [r, 3r].
      const Frame frame = referenceFrame(kind, pair.x);
      const double lift = rng.uniform(1.0, 3.0) * pair.radius - frame.distance;
      if (kind == PairKind::VertexTriangle) {
        pair.x[3] = roundToFloat(pair.x[3] + lift * frame.normal);
      } else {
        pair.x[0] = roundToFloat(pair.x[0] + lift * frame.normal);
        pair.x[1] = roundToFloat(pair.x[1] + lift * frame.normal);
      }
      setRelativeDisplacement(rng, pair, rng.vec(-1, 1) * pair.epsU, pair.epsU);
      if (referenceDistance(kind, pair.x) < pair.radius * (1 + 1e-5)) continue;
      for (int j = 0; j < 4; ++j) {
        const ForceHessian fh = evaluate(pair, j);
        EXPECT_EQ(toEigen(fh.force), Vec3d::Zero()) << "trial " << trial;
        EXPECT_EQ(toEigen(fh.hessian), Mat3d::Zero()) << "trial " << trial;
      }
    }
  // Zero distance: no direction, nothing acts (and no NaN). Dyadic values, exact in float.
  const SelfContactParams params{0.01f, 1e3f, 0.1f, 0.5f, 1e-5f, 1e-3f};
  const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0}, v{0.25f, 0.25f, 0}, moved{0.25f, 0.25f, 0.125f};
  for (int slot = -1; slot <= 4; ++slot) {
    const ForceHessian fh =
        vertexTriangleContactForceHessian(slot, v, a, b, c, moved, a, b, c, params);
    EXPECT_EQ(toEigen(fh.force), Vec3d::Zero());
    EXPECT_EQ(toEigen(fh.hessian), Mat3d::Zero());
    const ForceHessian ee = edgeEdgeContactForceHessian(slot, a, b, Vec3{0.5f, -1, 0},
                                                        Vec3{0.5f, 1, 0}, a, b, a, b, params);
    EXPECT_EQ(toEigen(ee.force), Vec3d::Zero());
    EXPECT_EQ(toEigen(ee.hessian), Mat3d::Zero());
  }
  // Slots outside the stencil get nothing even for an active pair.
  const Vec3 above{0.25f, 0.25f, 0.00390625f};
  EXPECT_NE(
      toEigen(vertexTriangleContactForceHessian(3, above, a, b, c, above, a, b, c, params).force),
      Vec3d::Zero());
  for (const int slot : {-1, 4}) {
    EXPECT_EQ(
        toEigen(
            vertexTriangleContactForceHessian(slot, above, a, b, c, above, a, b, c, params).force),
        Vec3d::Zero());
  }
  for (const int slot : {-1, 2}) {
    EXPECT_EQ(toEigen(edgeEdgeContactForceHessian(slot, a, b, Vec3{0.5f, -1, 0.00390625f},
                                                  Vec3{0.5f, 1, 0.00390625f}, a, b, a, b, params)
                          .force),
              Vec3d::Zero());
  }
}

// ---- GPU == CPU -------------------------------------------------------------------------------

struct DevicePairInput {
  Vec3 x[4], p[4];
  SelfContactParams params;
  int kind;  // 0 vertex–triangle (a, b, c, v), 1 edge–edge (p1, q1, p2, q2)
};

WEFT_HD inline ForceHessian evaluateOnBackend(const DevicePairInput& in, int vertex) {
  if (in.kind == 0)
    return vertexTriangleContactForceHessian(vertex, in.x[3], in.x[0], in.x[1], in.x[2], in.p[3],
                                             in.p[0], in.p[1], in.p[2], in.params);
  if (vertex < 2)
    return edgeEdgeContactForceHessian(vertex, in.x[0], in.x[1], in.x[2], in.x[3], in.p[0], in.p[1],
                                       in.p[2], in.p[3], in.params);
  return edgeEdgeContactForceHessian(vertex - 2, in.x[2], in.x[3], in.x[0], in.x[1], in.p[2],
                                     in.p[3], in.p[0], in.p[1], in.params);
}

#if defined(__CUDACC__)
__global__ void evaluatePairsKernel(const DevicePairInput* inputs, ForceHessian* outputs,
                                    int count) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < 4 * count) outputs[i] = evaluateOnBackend(inputs[i / 4], i % 4);
}
#endif

TEST(SelfContact, GpuMatchesCpu) {
#if defined(__CUDACC__)
  WEFT_REQUIRE_CUDA(device);
  Random rng;
  TRACE_SEED(rng);
  std::vector<DevicePairInput> inputs;
  std::vector<double> tolerances;  // relative, per pair
  for (int trial = 0; trial < 600; ++trial) {
    const PairKind kind = kKinds[trial % 2];
    Pair pair = randomPair(rng, kind, trial % numRegions(kind), kRegimes[trial % 3]);
    const double slip = rng.uniform(0.1, 10) * pair.epsU;
    setRelativeDisplacement(rng, pair, rng.vec(-slip, slip), slip);
    DevicePairInput in{};
    for (int j = 0; j < 4; ++j) {
      in.x[j] = toFloat(pair.x[size_t(j)]);
      in.p[j] = toFloat(pair.p[size_t(j)]);
    }
    in.params = pair.params();
    in.kind = kind == PairKind::VertexTriangle ? 0 : 1;
    inputs.push_back(in);
    tolerances.push_back(1e-3 + 2 * directionPrecision(pair));
  }
  const int count = int(inputs.size());
  DevicePairInput* d_inputs = nullptr;
  ForceHessian* d_outputs = nullptr;
  WEFT_CUDA_CHECK(cudaMalloc(&d_inputs, sizeof(DevicePairInput) * inputs.size()));
  WEFT_CUDA_CHECK(cudaMalloc(&d_outputs, sizeof(ForceHessian) * 4 * inputs.size()));
  WEFT_CUDA_CHECK(cudaMemcpy(d_inputs, inputs.data(), sizeof(DevicePairInput) * inputs.size(),
                             cudaMemcpyHostToDevice));
  evaluatePairsKernel<<<(4 * count + 127) / 128, 128>>>(d_inputs, d_outputs, count);
  WEFT_CUDA_CHECK(cudaGetLastError());
  std::vector<ForceHessian> gpu(4 * inputs.size());
  WEFT_CUDA_CHECK(
      cudaMemcpy(gpu.data(), d_outputs, sizeof(ForceHessian) * gpu.size(), cudaMemcpyDeviceToHost));
  WEFT_CUDA_CHECK(cudaFree(d_inputs));
  WEFT_CUDA_CHECK(cudaFree(d_outputs));
  // nvcc contracts a·b + c into FMA on the device, the host build does not: equal to rounding,
  // which the gap direction sees relative to the distance (directionPrecision).
  for (int i = 0; i < 4 * count; ++i) {
    const ForceHessian cpu = evaluateOnBackend(inputs[size_t(i / 4)], i % 4);
    const double forceScale = toEigen(cpu.force).norm(), hessianScale = toEigen(cpu.hessian).norm();
    const double tolerance = tolerances[size_t(i / 4)];
    EXPECT_LE((toEigen(gpu[size_t(i)].force) - toEigen(cpu.force)).norm(), tolerance * forceScale)
        << "pair " << i / 4 << " vertex " << i % 4;
    EXPECT_LE((toEigen(gpu[size_t(i)].hessian) - toEigen(cpu.hessian)).norm(),
              tolerance * hessianScale)
        << "pair " << i / 4 << " vertex " << i % 4;
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

}  // namespace
}  // namespace weft
