// Membership test in one row of a sorted CSR list, as the self-contact detection kernels ask it of
// the topological filter (solver/contact_filter.h, cloth_vbd_spec §6.2 step 2 and §6.4): "is this
// triangle (edge) excluded for this vertex (edge)?". Rows are short (tens of entries) and most
// queried keys fall outside a row's range, so the first and last entries are checked before the
// binary search.
#pragma once

#include "kernels/runtime/platform.h"

namespace weft {

/// True when `key` is one of values[begin, end), which must be sorted ascending.
WEFT_HD inline bool sortedRowContains(const int* values, int begin, int end, int key) {
  if (begin >= end || key < values[begin] || key > values[end - 1]) return false;
  // Invariant: values[lo] <= key < values[hi] (treating values[end] as +∞).
  int lo = begin, hi = end;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (values[mid] <= key)
      lo = mid;
    else
      hi = mid;
  }
  return values[lo] == key;
}

}  // namespace weft
