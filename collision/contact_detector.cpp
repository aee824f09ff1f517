#include "collision/contact_detector.h"

#include <algorithm>

namespace weft {

int ContactDetector::grownCapacity(int needed, int capacity) {
  return std::max(2 * capacity, needed + needed / 4);
}

bool ContactDetector::allFit(std::span<const ContactCount> counts) {
  return std::all_of(counts.begin(), counts.end(), [](const ContactCount& c) { return c.fits(); });
}

std::string ContactDetector::growToFit(std::span<const ContactCount> counts) {
  std::string grew;
  std::vector<int> capacities;
  for (const ContactCount& c : counts) {
    capacities.push_back(c.fits() ? c.capacity : grownCapacity(c.needed, c.capacity));
    if (c.fits()) continue;
    grew += std::string(grew.empty() ? "" : ", ") + c.what + " " + std::to_string(c.capacity) +
            " -> " + std::to_string(capacities.back());
  }
  if (!grew.empty()) resize(capacities);
  return grew;
}

std::optional<std::string> ContactDetector::growIfOverflowed() {
  const std::vector<ContactCount> all = counts();
  if (allFit(all)) return std::nullopt;
  return growToFit(all);
}

}  // namespace weft
