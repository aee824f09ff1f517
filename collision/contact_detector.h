// ContactDetector: what a simulation asks of every contact detector between frames — the cloth's
// SelfContactDetector (candidate lists per vertex, edge and triangle) and the cables'
// RigidContactDetector (partner lists per shape, contact rows). Each keeps its contacts in
// fixed-capacity storage that the kernels never overrun: they always compute the true counts and
// raise the status maxima, which the host reads after the frame. Here is the one rule for what
// then happens (docs/ARCHITECTURE.md, "Rules"): every list whose need exceeded its
// capacity grows to the need plus 25%, at least double, and the frame runs again.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace weft {

/// One kind of contact storage: how many slots the most demanding element needed since the
/// status was reset, and how many it has.
struct ContactCount {
  const char* what = "";  // "vertex-triangle", "contact rows" (words of the growth message)
  int needed = 0;
  int capacity = 0;
  bool fits() const { return needed <= capacity; }
};

class ContactDetector {
 public:
  virtual ~ContactDetector() = default;

  /// Zeroes the status maxima (graph-capturable); done at the start of each frame.
  virtual void resetStatus() = 0;
  /// Waits for the device and returns every kind of storage's need since the reset.
  virtual std::vector<ContactCount> counts() const = 0;

  /// Grows every kind of storage whose need exceeded its capacity. Returns what grew
  /// ("vertex-triangle 16 -> 40, edge-edge 32 -> 64"), nothing when everything fit. Growing
  /// reallocates, so graphs captured with the old storage must be captured again.
  std::optional<std::string> growIfOverflowed();

  /// The capacity that storage of `capacity` slots grows to when `needed` did not fit.
  static int grownCapacity(int needed, int capacity);
  static bool allFit(std::span<const ContactCount> counts);

 protected:
  /// Grows to fit `counts` (those of counts(), in its order) and says what grew; "" if all fit.
  std::string growToFit(std::span<const ContactCount> counts);
  /// Reallocates the storage for `capacities` (one per entry of counts(), in its order; only
  /// grown entries differ from the current capacities).
  virtual void resize(std::span<const int> capacities) = 0;
};

}  // namespace weft
