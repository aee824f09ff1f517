#include "kernels/runtime/kernel_ids.h"

#include <algorithm>

namespace weft {
namespace {

struct KernelInfo {
  std::string_view name;
  LaunchKind kind;
};

constexpr std::array<KernelInfo, kNumKernels> kInfo = {{
#define WEFT_KERNEL_INFO(name, kind) {#name, LaunchKind::kind},
    WEFT_KERNELS(WEFT_KERNEL_INFO)
#undef WEFT_KERNEL_INFO
}};

constexpr std::array<KernelId, kNumKernels> kAll = [] {
  std::array<KernelId, kNumKernels> ids{};
  for (int i = 0; i < kNumKernels; ++i) ids[i] = KernelId(i);
  return ids;
}();

}  // namespace

std::string_view kernelName(KernelId id) {
  return kInfo[int(id)].name;
}

std::optional<KernelId> kernelFromName(std::string_view name) {
  for (int i = 0; i < kNumKernels; ++i)
    if (kInfo[i].name == name) return KernelId(i);
  return std::nullopt;
}

const std::array<KernelId, kNumKernels>& allKernels() {
  return kAll;
}

std::span<const int> launchSizes(KernelId id) {
  switch (launchKind(id)) {
    case LaunchKind::Tile:
      return kTileSizes;
    case LaunchKind::Group:
      return kGroupSizes;
    case LaunchKind::Elementwise:
      break;
  }
  return kBlockSizes;
}

bool isValidLaunchSize(KernelId id, int size) {
  const std::span<const int> sizes = launchSizes(id);
  return std::find(sizes.begin(), sizes.end(), size) != sizes.end();
}

std::string validLaunchSizesText(KernelId id) {
  std::string list;
  for (int size : launchSizes(id)) list += (list.empty() ? "" : ", ") + std::to_string(size);
  switch (launchKind(id)) {
    case LaunchKind::Tile:
      return "tile size (" + list + ")";
    case LaunchKind::Group:
      return "lanes per item (" + list + ")";
    case LaunchKind::Elementwise:
      break;
  }
  return "block size (" + list + ")";
}

}  // namespace weft
