#include "scenes/scene.h"

#include "kernels/runtime/errors.h"

namespace weft {

const std::vector<Scene>& allScenes() {
  static const std::vector<Scene> scenes = [] {
    std::vector<Scene> list;
    list.push_back(makeClothHangingScene());
    list.push_back(makeClothFoldScene());
    return list;
  }();
  return scenes;
}

std::string sceneNames() {
  std::string names;
  for (const Scene& s : allScenes()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

const Scene& findScene(const std::string& name) {
  for (const Scene& s : allScenes()) {
    if (s.name == name) return s;
    for (const std::string& alias : s.aliases)
      if (alias == name) return s;
  }
  throw Error("unknown scene '" + name + "' (valid: " + sceneNames() +
              "; `weft scenes` describes them)");
}

}  // namespace weft
