// The meshes Weft ships in assets/ (attribution and conversion: assets/README.md) that scenes load
// by default. They are compiled into the scene library as text (scenes/CMakeLists.txt generates
// the definition), so a scene runs the same from a build tree, an install or another directory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

/// The text of shipped asset `name` (a file name in assets/, e.g. "square_cloth.obj"), or
/// nothing when no such asset is compiled in.
std::optional<std::string_view> shippedAsset(std::string_view name);
/// The names of every compiled-in asset.
std::vector<std::string> shippedAssetNames();

}  // namespace weft
