// A cloth built from the installed headers, stepped on the best device there is, and checked
// against the closed form: with no contact and no stretch, each substep of implicit Euler from
// rest moves every particle by g·h²·k at substep k, so after n substeps by g·h²·n(n+1)/2.
// Exit code 0 when it agrees (and the cloth kept its shape), 1 otherwise. The cloth starts at
// z = 0, where float32 rounds finely: at z = 1 m the rounding of x and of v = Δx/h alone adds up
// to 4e-4 of the fall over 60 substeps; here it stays near 3e-6, and the bound is 1e-4.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/runtime/device.h"
#include "solver/cloth_builder.h"
#include "solver/simulation.h"

int main() {
  using namespace weft;
  try {
    const auto device = Device::open(DeviceRequest::Auto);
    ClothBuilder builder;
    ClothGridParams grid;
    grid.position = {0.0f, 0.0f, 0.0f};
    grid.dimX = grid.dimY = 8;
    grid.cellX = grid.cellY = 0.05f;
    builder.addClothGrid(grid);
    const ModelDesc cloth = builder.finalize();

    SolverOptions options;
    options.iterations = 5;
    const int substeps = 10, frames = 6;
    Simulation sim(*device, cloth, options, 1.0 / 60.0, substeps);
    for (int f = 0; f < frames; ++f) sim.advanceFrame();

    const double h = 1.0 / 60.0 / substeps, n = double(substeps * frames);
    const double drop = 9.81 * h * h * n * (n + 1.0) / 2.0;
    const std::vector<Vec3> start = cloth.positions, now = sim.cloth().positions();
    double worst = 0.0;
    for (size_t i = 0; i < now.size(); ++i) {
      const double dz = double(start[i].z) - double(now[i].z);
      worst = std::fmax(worst, std::fabs(dz - drop));
      worst = std::fmax(worst, std::fabs(double(now[i].x - start[i].x)));
      worst = std::fmax(worst, std::fabs(double(now[i].y - start[i].y)));
    }
    std::printf(
        "%s: %zu particles fell %.6f m in %d substeps (closed form %.6f m), largest "
        "deviation %.2e m\n",
        device->describe().c_str(), now.size(), double(start[0].z - now[0].z), int(n), drop, worst);
    return worst <= 1e-4 * drop ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "free_fall: %s\n", e.what());
    return 1;
  }
}
