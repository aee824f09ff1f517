// Arrays of small structs stored word-major: word w of element i at words[w · stride + i].
//
// A kernel in which consecutive threads read consecutive (or nearby) elements of an array of
// 100-byte structs touches, per load instruction, one cache line per thread when the structs lie
// one after another (array of structs), and two or three lines per warp when each word of the
// struct has its own row (word-major). The one-lane body solve of a cable batch is held by those
// loads (docs/PERFORMANCE.md, "The joints word-major"), so the joints' constants, step terms and
// multipliers are kept word-major. Only the place each word is read from changes, never the
// arithmetic on it: a struct loaded word-major has the same bits as one loaded whole.
//
// The views are trivially copyable kernel arguments; WordMajorBuffer (kernels/runtime/buffer.h)
// owns the storage.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/runtime/platform.h"

namespace weft {

/// How many 32-bit words a struct stored word-major has.
template <class T>
constexpr int wordsOf() {
  static_assert(std::is_trivially_copyable_v<T>, "word-major arrays hold trivially copyable types");
  static_assert(sizeof(T) % sizeof(float) == 0 && alignof(T) <= alignof(float),
                "word-major arrays hold structs of 32-bit words");
  return int(sizeof(T) / sizeof(float));
}

/// Element i of the word-major array `words` whose rows are `stride` elements long.
template <class T>
WEFT_HD WEFT_FORCEINLINE T loadWordMajor(const float* words, size_t stride, int i) {
  constexpr int n = wordsOf<T>();
  float w[n];
  const float* p = words + i;
#pragma unroll
  for (int k = 0; k < n; ++k) w[k] = p[size_t(k) * stride];
  T value;
  memcpy(static_cast<void*>(&value), w, sizeof(T));
  return value;
}

/// Writes element i of the word-major array `words` whose rows are `stride` elements long.
template <class T>
WEFT_HD WEFT_FORCEINLINE void storeWordMajor(float* words, size_t stride, int i, const T& value) {
  constexpr int n = wordsOf<T>();
  float w[n];
  memcpy(w, static_cast<const void*>(&value), sizeof(T));
  float* p = words + i;
#pragma unroll
  for (int k = 0; k < n; ++k) p[size_t(k) * stride] = w[k];
}

/// Read-only view of a word-major array of T (`stride` elements a row).
template <class T>
struct WordMajorIn {
  const float* __restrict__ words = nullptr;
  int stride = 0;

  WEFT_HD T operator[](int i) const { return loadWordMajor<T>(words, size_t(stride), i); }
};

/// Read-write view of a word-major array of T. It aliases nothing the same kernel reads through
/// another view (callers keep that promise, as with a `T* __restrict__`).
template <class T>
struct WordMajorOut {
  float* __restrict__ words = nullptr;
  int stride = 0;

  WEFT_HD T operator[](int i) const { return loadWordMajor<T>(words, size_t(stride), i); }
  WEFT_HD void store(int i, const T& value) const {
    storeWordMajor<T>(words, size_t(stride), i, value);
  }
  WEFT_HD operator WordMajorIn<T>() const { return {words, stride}; }
  /// The member of T at byte `offset` (offsetof) as a word-major array of its own.
  template <class M>
  WEFT_HD WordMajorOut<M> member(size_t offset) const {
    return {words + offset / sizeof(float) * size_t(stride), stride};
  }
};

}  // namespace weft
