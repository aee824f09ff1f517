// weft info: which backend and GPU Weft would use, which launch table is in effect and why, and
// the resulting launch size of every kernel with where it came from.
#include <cstdio>

#include "apps/commands.h"
#include "apps/common.h"
#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "weft_version.h"

namespace weft {

int infoCommand(const InfoOptions& options, std::ostream& out, std::ostream& err) {
  try {
    std::string scene;
    if (!options.scene.empty()) scene = findScene(options.scene).name;
    checkWorldCount(options.worlds);
    if (options.worlds > 1 && scene.empty()) throw Error("--worlds needs --scene SCENE");
    auto device = openDevice(options.device, false);
    const TableSelection table =
        applyLaunchTable(*device, options.launchTable, scene, err, options.worlds);

    out << "weft " << WEFT_GIT_COMMIT << "\n";
    out << "backend       " << backendName(device->backend()) << "\n";
    if (device->isCuda()) {
      const GpuProperties& g = device->gpu();
      out << "gpu           " << g.identity.describe() << ", " << g.totalMemoryBytes / (1024 * 1024)
          << " MiB\n";
      out << "cuda          driver " << g.driverVersion << ", runtime " << g.runtimeVersion << "\n";
    } else {
      out << "gpu           none ("
          << (visibleCudaDevices() ? "CPU backend requested" : cudaUnavailableReason()) << ")\n";
      out << "cpu           " << device->describe() << "\n";
    }
    out << "launch table  " << describeTableInUse(table) << "\n";
    out << "  why         " << table.reason << "\n";
    if (!table.path.empty() && !table.table) out << "  considered  " << table.path << "\n";
    if (!device->isCuda()) {
      if (!scene.empty())
        out << "launch sizes  none for scene " << scene
            << (options.worlds > 1 ? " as " + std::to_string(options.worlds) + " worlds" : "")
            << ": the CPU backend runs each kernel as a loop over its items\n";
      return kExitOk;
    }
    out << "launch sizes"
        << (scene.empty()
                ? ""
                : " for scene " + scene +
                      (options.worlds > 1 ? " as " + std::to_string(options.worlds) + " worlds"
                                          : ""))
        << ":\n";
    for (KernelId id : allKernels()) {
      const LaunchChoice& c = device->launchPolicy().choice(id);
      char line[160];
      std::snprintf(line, sizeof(line), "  %-44s %-5s %4d  (%s)\n",
                    std::string(kernelName(id)).c_str(),
                    launchKind(id) == LaunchKind::Tile    ? "tile"
                    : launchKind(id) == LaunchKind::Group ? "lanes"
                                                          : "block",
                    c.size, std::string(launchSourceName(c.source)).c_str());
      out << line;
    }
    return kExitOk;
  } catch (const Error& e) {
    err << "weft info: error: " << e.what() << "\n";
    return kExitError;
  }
}

int scenesCommand(std::ostream& out, std::ostream& err) {
  try {
    for (const Scene& s : allScenes()) {
      char counts[128];
      if (!s.hasCloth()) {
        const RigidDesc desc = s.rigid.build(SceneOptions{});
        std::snprintf(counts, sizeof(counts), "%6d bodies    %6d joints     %3d frames",
                      desc.numBodies(), desc.numJoints(), s.defaultFrames);
      } else {
        const ModelDesc desc = s.cloth.build(SceneOptions{});
        std::snprintf(counts, sizeof(counts), "%6d particles %6d triangles  %3d frames",
                      desc.numParticles(), desc.numTriangles(), s.defaultFrames);
      }
      out << s.name;
      for (size_t pad = s.name.size(); pad < 24; ++pad) out << ' ';
      out << counts << "  " << s.description << "\n";
      for (const SceneOptionInfo& o : s.options)
        out << "    --scene-option " << o.key << "=" << o.defaultValue << "  " << o.meaning << "\n";
      if (s.cloth.takesMesh)
        out << "    --mesh FILE.obj  replaces the cloth (placed by --mesh-scale, --mesh-rotate, "
               "--mesh-translate)\n";
    }
    return kExitOk;
  } catch (const Error& e) {
    err << "weft scenes: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace weft
