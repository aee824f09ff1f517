// Arrays of small structs stored word-major in blocks of 32 elements: word w of element i at
// ((i / 32) · W + w) · 32 + i % 32, W the struct's words.
//
// A kernel in which consecutive threads read consecutive (or nearby) elements of an array of
// 100-byte structs touches, per load instruction, one cache line per thread when the structs lie
// one after another (array of structs), and one or two lines per warp when each word of 32
// elements fills a 128-byte row of its own. The rows of a block lie one after another, so every
// word of an element is at a constant offset from its first (the loads need one address, as with
// an array of structs). The one-lane body solve of a cable batch is held by those loads
// (docs/PERFORMANCE.md, "The joints word-major"), so the joints' constants, step terms and
// multipliers, and the bodies' inertia, centres of mass and inertial targets, are kept this way.
// Only the place each word is read from changes, never the arithmetic on it: a struct loaded
// word-major has the same bits as one loaded whole.
//
// The views are trivially copyable kernel arguments; WordMajorBuffer (kernels/runtime/buffer.h)
// owns the storage.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/runtime/platform.h"

namespace weft {

/// Elements per block of a word-major array (one word of each fills a 128-byte line).
inline constexpr int kWordMajorBlock = 32;

/// How many 32-bit words a struct stored word-major has.
template <class T>
constexpr int wordsOf() {
  static_assert(std::is_trivially_copyable_v<T>, "word-major arrays hold trivially copyable types");
  static_assert(sizeof(T) % sizeof(float) == 0 && alignof(T) <= alignof(float),
                "word-major arrays hold structs of 32-bit words");
  return int(sizeof(T) / sizeof(float));
}

/// Floats a word-major array of `count` elements of T takes (whole blocks).
template <class T>
constexpr size_t wordMajorFloats(size_t count) {
  return (count + kWordMajorBlock - 1) / kWordMajorBlock * kWordMajorBlock * size_t(wordsOf<T>());
}

/// Where word 0 of element i lies; word w is kWordMajorBlock · w floats further.
template <class T>
WEFT_HD WEFT_FORCEINLINE size_t wordMajorFirst(int i) {
  return size_t(i / kWordMajorBlock) * size_t(kWordMajorBlock * wordsOf<T>()) +
         size_t(i % kWordMajorBlock);
}

/// Element i of the word-major array `words`.
template <class T>
WEFT_HD WEFT_FORCEINLINE T loadWordMajor(const float* words, int i) {
  constexpr int n = wordsOf<T>();
  float w[n];
  const float* p = words + wordMajorFirst<T>(i);
#pragma unroll
  for (int k = 0; k < n; ++k) w[k] = p[k * kWordMajorBlock];
  T value;
  memcpy(static_cast<void*>(&value), w, sizeof(T));
  return value;
}

/// Writes element i of the word-major array `words`.
template <class T>
WEFT_HD WEFT_FORCEINLINE void storeWordMajor(float* words, int i, const T& value) {
  constexpr int n = wordsOf<T>();
  float w[n];
  memcpy(w, static_cast<const void*>(&value), sizeof(T));
  float* p = words + wordMajorFirst<T>(i);
#pragma unroll
  for (int k = 0; k < n; ++k) p[k * kWordMajorBlock] = w[k];
}

/// Writes member M (at byte `offset` of T, offsetof) of element i of the word-major array `words`.
template <class T, class M>
WEFT_HD WEFT_FORCEINLINE void storeWordMajorMember(float* words, int i, size_t offset,
                                                   const M& value) {
  static_assert(sizeof(M) % sizeof(float) == 0);
  float w[sizeof(M) / sizeof(float)];
  memcpy(w, static_cast<const void*>(&value), sizeof(M));
  float* p = words + wordMajorFirst<T>(i) + offset / sizeof(float) * kWordMajorBlock;
#pragma unroll
  for (size_t k = 0; k < sizeof(M) / sizeof(float); ++k) p[k * kWordMajorBlock] = w[k];
}

/// Read-only view of a word-major array of T.
template <class T>
struct WordMajorIn {
  const float* __restrict__ words = nullptr;

  WEFT_HD T operator[](int i) const { return loadWordMajor<T>(words, i); }
};

/// Read-write view of a word-major array of T. Not restrict: one launch may write an element
/// through two views in turn (begin_rigid_step writes a joint's step terms, then its Dahl
/// members), and those stores must stay in order.
template <class T>
struct WordMajorOut {
  float* words = nullptr;

  WEFT_HD T operator[](int i) const { return loadWordMajor<T>(words, i); }
  WEFT_HD void store(int i, const T& value) const { storeWordMajor<T>(words, i, value); }
  /// Writes only member M, at byte `offset` of T (offsetof).
  template <class M>
  WEFT_HD void storeMember(int i, size_t offset, const M& value) const {
    storeWordMajorMember<T, M>(words, i, offset, value);
  }
  WEFT_HD operator WordMajorIn<T>() const { return {words}; }
};

}  // namespace weft
