// Shared helpers for the suites that test float kernels against double-precision (Eigen)
// references: conversions between Weft's float types and Eigen's, rounding through float, a
// seeded random source whose seed a failing test reports (TRACE_SEED), finite differences, a few
// exact reference routines, and comparisons of position arrays. Header-only; the suites bring
// the names in with `using namespace test;` (or single using-declarations) in their anonymous
// namespace, where a file-local helper of the same name still takes precedence.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/math.h"
#include "test_support.h"

namespace weft::test {

using Vec3d = Eigen::Vector3d;
using Mat3d = Eigen::Matrix3d;

// ---- Conversions ------------------------------------------------------------------------------

inline Vec3d toEigen(const Vec3& v) {
  return {v.x, v.y, v.z};
}
inline Mat3d toEigen(const Mat33& m) {
  Mat3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = m(i, j);
  return r;
}
inline Vec3 toFloat(const Vec3d& v) {
  return {float(v.x()), float(v.y()), float(v.z())};
}
/// Rounds through float. The volatile keeps the rounding: GCC 12.2 at -O2 (SLP vectorizer) drops
/// a double→float→double round trip of neighbouring vector components.
inline double roundToFloat(double v) {
  volatile float f = float(v);
  return f;
}
inline Vec3d roundToFloat(const Vec3d& v) {
  return {roundToFloat(v.x()), roundToFloat(v.y()), roundToFloat(v.z())};
}

// ---- Random inputs ----------------------------------------------------------------------------

/// The seed of the next Random made in the running test: derived from testSeed() (fixed unless
/// WEFT_TEST_SEED is set), the test's name and how many Randoms it made before, so that every
/// test draws the same numbers on every run, whichever tests run with it.
inline unsigned nextRandomSeed() {
  thread_local std::string test;
  thread_local unsigned made = 0;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name =
      info ? std::string(info->test_suite_name()) + "." + info->name() : std::string();
  if (name != test) {
    test = name;
    made = 0;
  }
  unsigned h = testSeed();
  for (char c : name) h = h * 16777619u ^ unsigned(static_cast<unsigned char>(c));  // FNV-style
  return h ^ (made++ * 0x9E3779B9u);
}

/// Random doubles from a deterministically seeded generator (nextRandomSeed); TRACE_SEED(rng)
/// makes every failure in its scope report the seed and the WEFT_TEST_SEED that reproduces it.
struct Random {
  unsigned seed = nextRandomSeed();
  std::mt19937 gen{seed};
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  Vec3d vec(double lo, double hi) { return {uniform(lo, hi), uniform(lo, hi), uniform(lo, hi)}; }
  /// Per component: x in [lo.x, hi.x], and so on.
  Vec3d vec(const Vec3d& lo, const Vec3d& hi) {
    return {uniform(lo.x(), hi.x()), uniform(lo.y(), hi.y()), uniform(lo.z(), hi.z())};
  }
  Vec3d unit() {
    for (;;) {
      const Vec3d v = vec(-1, 1);
      if (v.norm() > 0.1 && v.norm() < 1.0) return v.normalized();
    }
  }
  /// A unit vector perpendicular to n.
  Vec3d unitPerpendicular(const Vec3d& n) { return n.cross(unit()).normalized(); }
  double sign() { return uniform(0, 1) < 0.5 ? -1.0 : 1.0; }
  double logUniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
  Mat3d rotation() {
    const Eigen::Quaterniond q(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
    return q.normalized().toRotationMatrix();
  }
};

// ---- References and checks in double ------------------------------------------------------------

/// The parameter in [0, 1] of the point of segment [a, b] closest to p (0 for a point-like one).
inline double segmentParameter(const Vec3d& p, const Vec3d& a, const Vec3d& b) {
  const double len2 = (b - a).squaredNorm();
  return len2 > 0 ? std::clamp((p - a).dot(b - a) / len2, 0.0, 1.0) : 0.0;
}

/// The smallest interior angle of triangle (a, b, c).
inline double smallestAngle(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
  const auto angle = [](const Vec3d& u, const Vec3d& v) {
    return std::acos(std::clamp(u.normalized().dot(v.normalized()), -1.0, 1.0));
  };
  return std::min({angle(b - a, c - a), angle(a - b, c - b), angle(a - c, b - c)});
}

/// A function of the N positions of a stencil (a triangle, a hinge, a contact pair).
template <std::size_t N>
using StencilFunction = std::function<double(const std::array<Vec3d, N>&)>;

/// Central differences (step h) of `energy` with respect to position x[slot].
template <std::size_t N>
Vec3d finiteDifferenceGradient(const std::type_identity_t<StencilFunction<N>>& energy,
                               std::array<Vec3d, N> x, int slot, double h) {
  Vec3d g;
  for (int i = 0; i < 3; ++i) {
    const double x0 = x[slot][i];
    x[slot][i] = x0 + h;
    const double plus = energy(x);
    x[slot][i] = x0 - h;
    const double minus = energy(x);
    x[slot][i] = x0;
    g[i] = (plus - minus) / (2.0 * h);
  }
  return g;
}

/// The 3×3 block of the Hessian of `energy` for position x[slot]: central differences (step h)
/// of finiteDifferenceGradient.
template <std::size_t N>
Mat3d finiteDifferenceHessian(const std::type_identity_t<StencilFunction<N>>& energy,
                              const std::array<Vec3d, N>& x, int slot, double h) {
  Mat3d H;
  for (int j = 0; j < 3; ++j) {
    std::array<Vec3d, N> plus = x, minus = x;
    plus[slot][j] += h;
    minus[slot][j] -= h;
    H.col(j) = (finiteDifferenceGradient<N>(energy, plus, slot, h) -
                finiteDifferenceGradient<N>(energy, minus, slot, h)) /
               (2.0 * h);
  }
  return H;
}

/// Expects H to be symmetric and positive semi-definite, relative to its norm.
inline void expectSymmetricPsd(const Mat3d& H) {
  const double scale = H.norm();
  EXPECT_LE((H - H.transpose()).norm(), 1e-6 * scale) << H;
  const Eigen::SelfAdjointEigenSolver<Mat3d> eig(0.5 * (H + H.transpose()));
  EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-5 * scale) << H;
}

// ---- Comparing position arrays ----------------------------------------------------------------

inline bool bitIdentical(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3)) == 0;
}

/// The largest distance between corresponding points (a and b of the same size).
inline float maxDifference(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, length(a[i] - b[i]));
  return worst;
}

}  // namespace weft::test

/// Adds the seed of `rng` (a test::Random) to every failure reported in the current scope.
#define TRACE_SEED(rng)                                                             \
  SCOPED_TRACE(::testing::Message() << "seed " << (rng).seed << " (WEFT_TEST_SEED=" \
                                    << ::weft::test::testSeed() << " reproduces it)")
