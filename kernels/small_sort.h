// Sorting a short list in place, for the per-item list kernels (a triangle's colliding vertices,
// a shape's partners, a body's contact rows) and the narrow phase's few segment parameters:
// insertion sort, a handful of entries each.
#pragma once

#include "kernels/runtime/platform.h"

namespace weft {

/// Sorts list[0, n) ascending in place.
template <class T>
WEFT_HD void sortAscending(T* list, int n) {
  for (int i = 1; i < n; ++i) {
    const T key = list[i];
    int j = i - 1;
    while (j >= 0 && list[j] > key) {
      list[j + 1] = list[j];
      --j;
    }
    list[j + 1] = key;
  }
}

}  // namespace weft
