#include "tuning/kernel_ids.h"

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

bool isValidLaunchSize(KernelId id, int size) {
  if (launchKind(id) == LaunchKind::Tile)
    return std::find(kTileSizes.begin(), kTileSizes.end(), size) != kTileSizes.end();
  return std::find(kBlockSizes.begin(), kBlockSizes.end(), size) != kBlockSizes.end();
}

}  // namespace weft
