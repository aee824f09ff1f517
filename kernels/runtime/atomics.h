// Atomic operations that behave the same on both backends. Only order-independent operations are
// offered (integer add and max, float min and max over non-negative values), so results
// stay deterministic however threads interleave.
#pragma once

#include "kernels/runtime/platform.h"

#if !WEFT_DEVICE_PASS
#include <atomic>
#include <bit>
#endif

namespace weft {

/// *address += value; returns the old value. (The slot a thread claims depends on timing; use
/// only where the order of claims does not reach the result, or sort afterwards.)
WEFT_HD inline int atomicAddInt(int* address, int value) {
#if WEFT_DEVICE_PASS
  return atomicAdd(address, value);
#else
  return std::atomic_ref<int>(*address).fetch_add(value, std::memory_order_relaxed);
#endif
}

/// *address += value for a 64-bit counter (two's complement, through the unsigned add CUDA has).
WEFT_HD inline void atomicAddLongLong(long long* address, long long value) {
#if WEFT_DEVICE_PASS
  atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
#else
  std::atomic_ref<long long>(*address).fetch_add(value, std::memory_order_relaxed);
#endif
}

/// *address = max(*address, value) for int or unsigned (relaxed: orders nothing else).
template <typename T>
WEFT_HD inline void atomicMaxIntegral(T* address, T value) {
#if WEFT_DEVICE_PASS
  atomicMax(address, value);
#else
  std::atomic_ref<T> a(*address);
  T current = a.load(std::memory_order_relaxed);
  while (value > current && !a.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
#endif
}

/// *address = max(*address, value).
WEFT_HD inline void atomicMaxInt(int* address, int value) {
  atomicMaxIntegral(address, value);
}

/// *address = max(*address, value) for unsigned values (e.g. order-preserving float codes).
WEFT_HD inline void atomicMaxUnsigned(unsigned* address, unsigned value) {
  atomicMaxIntegral(address, value);
}

/// *address = max(*address, value) for non-negative floats (whose bit patterns order like ints).
WEFT_HD inline void atomicMaxNonNegativeFloat(float* address, float value) {
#if WEFT_DEVICE_PASS
  atomicMaxInt(reinterpret_cast<int*>(address), __float_as_int(value));
#else
  atomicMaxInt(reinterpret_cast<int*>(address), std::bit_cast<int>(value));
#endif
}

/// *address = min(*address, value) for non-negative floats (whose bit patterns order like ints).
WEFT_HD inline void atomicMinNonNegativeFloat(float* address, float value) {
#if WEFT_DEVICE_PASS
  atomicMin(reinterpret_cast<int*>(address), __float_as_int(value));
#else
  std::atomic_ref<int> a(*reinterpret_cast<int*>(address));
  const int bits = std::bit_cast<int>(value);
  int current = a.load(std::memory_order_relaxed);
  while (bits < current && !a.compare_exchange_weak(current, bits, std::memory_order_relaxed)) {
  }
#endif
}

}  // namespace weft
