// Small fixed-size math for per-element kernels: Vec3, Mat22, Mat33, Quat, Transform.
//
// Everything here is float32 (as the reference), header-only, WEFT_HD, and trivially copyable so
// that it can live in device buffers, shared memory and kernel arguments. Host-side reference
// computations in tests use Eigen in double precision instead; nothing here allocates.
// Conventions: matrices are row-major (m[row][col]); quaternions are (x, y, z, w) like the
// reference; a Transform maps a body-frame point p to R(q)·p + t.
#pragma once

#include <cmath>

#include "kernels/runtime/platform.h"

namespace weft {

struct Vec3 {
  float x = 0.0f, y = 0.0f, z = 0.0f;

  constexpr Vec3() = default;
  WEFT_HD constexpr Vec3(float xIn, float yIn, float zIn) : x(xIn), y(yIn), z(zIn) {}

  WEFT_HD float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
  WEFT_HD float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }

  WEFT_HD Vec3& operator+=(const Vec3& o) {
    x += o.x;
    y += o.y;
    z += o.z;
    return *this;
  }
  WEFT_HD Vec3& operator-=(const Vec3& o) {
    x -= o.x;
    y -= o.y;
    z -= o.z;
    return *this;
  }
  WEFT_HD Vec3& operator*=(float s) {
    x *= s;
    y *= s;
    z *= s;
    return *this;
  }
};

WEFT_HD inline Vec3 operator+(const Vec3& a, const Vec3& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
WEFT_HD inline Vec3 operator-(const Vec3& a, const Vec3& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
WEFT_HD inline Vec3 operator-(const Vec3& a) {
  return {-a.x, -a.y, -a.z};
}
WEFT_HD inline Vec3 operator*(const Vec3& a, float s) {
  return {a.x * s, a.y * s, a.z * s};
}
WEFT_HD inline Vec3 operator*(float s, const Vec3& a) {
  return {a.x * s, a.y * s, a.z * s};
}
/// a · (1/s): one division instead of three. Where the GPU divides correctly rounded (the
/// collision code; the solvers divide approximately, docs/DESIGN_NOTES.md), this also keeps zero
/// components off its slow division path (an IEEE division with a zero dividend leaves the fast
/// reciprocal sequence; axis-aligned cables have many exact zeros).
WEFT_HD inline Vec3 operator/(const Vec3& a, float s) {
  const float r = 1.0f / s;
  return {a.x * r, a.y * r, a.z * r};
}
WEFT_HD inline bool operator==(const Vec3& a, const Vec3& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z;
}

WEFT_HD inline float dot(const Vec3& a, const Vec3& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
WEFT_HD inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
WEFT_HD inline float lengthSquared(const Vec3& a) {
  return dot(a, a);
}
WEFT_HD inline float length(const Vec3& a) {
  return sqrtf(dot(a, a));
}
/// Unit vector along a, or zero when |a| is below 1e-20 (never NaN).
WEFT_HD inline Vec3 normalizeOrZero(const Vec3& a) {
  const float len = length(a);
  return len > 1e-20f ? a / len : Vec3{};
}
WEFT_HD inline Vec3 cwiseMin(const Vec3& a, const Vec3& b) {
  return {fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)};
}
WEFT_HD inline Vec3 cwiseMax(const Vec3& a, const Vec3& b) {
  return {fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)};
}
WEFT_HD inline bool isFinite(float v) {
#if WEFT_DEVICE_PASS
  return isfinite(v);
#else
  return std::isfinite(v);
#endif
}
WEFT_HD inline bool isFinite(const Vec3& a) {
  return isFinite(a.x) && isFinite(a.y) && isFinite(a.z);
}

struct Int3 {
  int x = 0, y = 0, z = 0;
  WEFT_HD int operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
};

/// Bending stencil (o0, o1, v0, v1): o0/o1 are the opposite vertices (-1 on a boundary edge),
/// v0-v1 is the shared edge.
struct Int4 {
  int x = 0, y = 0, z = 0, w = 0;
  WEFT_HD int operator[](int i) const { return i == 0 ? x : (i == 1 ? y : (i == 2 ? z : w)); }
};

/// 2x2 matrix, row-major. Used for the inverse rest edge matrix of a triangle.
struct Mat22 {
  float m00 = 0.0f, m01 = 0.0f, m10 = 0.0f, m11 = 0.0f;
};

/// 3x3 matrix, row-major.
struct Mat33 {
  float m[3][3] = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};

  WEFT_HD static Mat33 identity() { return diagonal(1.0f); }
  WEFT_HD static Mat33 diagonal(float d) {
    Mat33 r;
    r.m[0][0] = r.m[1][1] = r.m[2][2] = d;
    return r;
  }
  WEFT_HD float operator()(int r, int c) const { return m[r][c]; }
  WEFT_HD float& operator()(int r, int c) { return m[r][c]; }

  WEFT_HD Mat33& operator+=(const Mat33& o) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m[r][c] += o.m[r][c];
    return *this;
  }
  WEFT_HD Mat33& operator-=(const Mat33& o) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m[r][c] -= o.m[r][c];
    return *this;
  }
  WEFT_HD Mat33& operator*=(float s) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m[r][c] *= s;
    return *this;
  }
};

WEFT_HD inline Mat33 operator+(Mat33 a, const Mat33& b) {
  return a += b;
}
WEFT_HD inline Mat33 operator-(Mat33 a, const Mat33& b) {
  return a -= b;
}
WEFT_HD inline Mat33 operator*(Mat33 a, float s) {
  return a *= s;
}
WEFT_HD inline Mat33 operator*(float s, Mat33 a) {
  return a *= s;
}
WEFT_HD inline Vec3 operator*(const Mat33& a, const Vec3& v) {
  return {a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
          a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
          a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}
WEFT_HD inline Mat33 operator*(const Mat33& a, const Mat33& b) {
  Mat33 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
  return r;
}
WEFT_HD inline Mat33 transpose(const Mat33& a) {
  Mat33 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
  return r;
}
/// a bᵀ
WEFT_HD inline Mat33 outer(const Vec3& a, const Vec3& b) {
  Mat33 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = a[i] * b[j];
  return r;
}
/// m + a bᵀ, each entry a[i]·b[j] + m[i][j]. On CUDA each entry is one explicit fused
/// multiply-add, so the compiler has no choice left: in a sum of outer products such as
/// a aᵀ + b cᵀ, nvcc's front end may fuse either product with the addition, and it chose
/// differently in different tile kernels that inline the same code (docs/DESIGN_NOTES.md, "Tile
/// reductions are the same for every tile size"). On the host a product and an addition (host
/// code never contracts).
WEFT_HD inline Mat33 addOuter(Mat33 m, const Vec3& a, const Vec3& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
#ifdef __CUDA_ARCH__
      m.m[i][j] = __fmaf_rn(a[i], b[j], m.m[i][j]);
#else
      m.m[i][j] = a[i] * b[j] + m.m[i][j];
#endif
    }
  return m;
}
/// [a]×, so that skew(a)·b = a × b.
WEFT_HD inline Mat33 skew(const Vec3& a) {
  Mat33 r;
  r.m[0][1] = -a.z;
  r.m[0][2] = a.y;
  r.m[1][0] = a.z;
  r.m[1][2] = -a.x;
  r.m[2][0] = -a.y;
  r.m[2][1] = a.x;
  return r;
}
WEFT_HD inline float determinant(const Mat33& a) {
  return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
         a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
         a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
/// Inverse through the adjugate; the caller guards |det| (the VBD step skips |det| <= 1e-8).
WEFT_HD inline Mat33 inverse(const Mat33& a, float det) {
  const float inv = 1.0f / det;
  Mat33 r;
  r.m[0][0] = (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) * inv;
  r.m[0][1] = (a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2]) * inv;
  r.m[0][2] = (a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1]) * inv;
  r.m[1][0] = (a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2]) * inv;
  r.m[1][1] = (a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0]) * inv;
  r.m[1][2] = (a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2]) * inv;
  r.m[2][0] = (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]) * inv;
  r.m[2][1] = (a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1]) * inv;
  r.m[2][2] = (a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0]) * inv;
  return r;
}

/// Unit quaternion (x, y, z, w).
struct Quat {
  float x = 0.0f, y = 0.0f, z = 0.0f, w = 1.0f;
};

WEFT_HD inline Quat operator*(const Quat& a, const Quat& b) {
  return {
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
WEFT_HD inline Quat conjugate(const Quat& q) {
  return {-q.x, -q.y, -q.z, q.w};
}
/// Rotation by `angle` radians about the unit vector `axis` (right-handed).
WEFT_HD inline Quat quatFromAxisAngle(const Vec3& axis, float angle) {
  const float s = sinf(0.5f * angle);
  return {axis.x * s, axis.y * s, axis.z * s, cosf(0.5f * angle)};
}
WEFT_HD inline Vec3 rotate(const Quat& q, const Vec3& v) {
  // v' = v + 2w(u×v) + 2u×(u×v), u = (x, y, z)
  const Vec3 u{q.x, q.y, q.z};
  const Vec3 t = 2.0f * cross(u, v);
  return v + q.w * t + cross(u, t);
}
WEFT_HD inline Vec3 rotateInverse(const Quat& q, const Vec3& v) {
  return rotate(conjugate(q), v);
}
WEFT_HD inline Quat normalize(const Quat& q) {
  const float r = 1.0f / sqrtf(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return {q.x * r, q.y * r, q.z * r, q.w * r};
}
WEFT_HD inline Mat33 rotationMatrix(const Quat& q) {
  Mat33 r;
  r.m[0][0] = 1.0f - 2.0f * (q.y * q.y + q.z * q.z);
  r.m[0][1] = 2.0f * (q.x * q.y - q.z * q.w);
  r.m[0][2] = 2.0f * (q.x * q.z + q.y * q.w);
  r.m[1][0] = 2.0f * (q.x * q.y + q.z * q.w);
  r.m[1][1] = 1.0f - 2.0f * (q.x * q.x + q.z * q.z);
  r.m[1][2] = 2.0f * (q.y * q.z - q.x * q.w);
  r.m[2][0] = 2.0f * (q.x * q.z - q.y * q.w);
  r.m[2][1] = 2.0f * (q.y * q.z + q.x * q.w);
  r.m[2][2] = 1.0f - 2.0f * (q.x * q.x + q.y * q.y);
  return r;
}

/// Rigid transform: world = rotate(q, local) + p.
struct Transform {
  Vec3 p;
  Quat q;
};

WEFT_HD inline Vec3 transformPoint(const Transform& t, const Vec3& local) {
  return rotate(t.q, local) + t.p;
}
WEFT_HD inline Vec3 inverseTransformPoint(const Transform& t, const Vec3& world) {
  return rotateInverse(t.q, world - t.p);
}

}  // namespace weft
