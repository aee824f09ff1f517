#include "scenes/scene.h"

#include "kernels/runtime/errors.h"

namespace weft {

const std::vector<Scene>& allScenes() {
  static const std::vector<Scene> scenes = [] {
    std::vector<Scene> list;
    list.push_back(makeClothHangingScene());
    list.push_back(makeClothFoldScene());
    list.push_back(makePokerCardsScene());
    list.push_back(makeClothTwistScene());
    list.push_back(makeClothFrankaScene());
    list.push_back(makeClothRollersScene());
    return list;
  }();
  return scenes;
}

Quat meshRotation(const SceneOptions& options) {
  constexpr float kDegrees = 3.14159265358979f / 180.0f;
  const Vec3& r = options.meshRotationDegrees;
  const Quat qx = quatFromAxisAngle({1.0f, 0.0f, 0.0f}, r.x * kDegrees);
  const Quat qy = quatFromAxisAngle({0.0f, 1.0f, 0.0f}, r.y * kDegrees);
  const Quat qz = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, r.z * kDegrees);
  return qz * qy * qx;
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
