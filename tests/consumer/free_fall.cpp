// A cloth and a cable built from the installed headers, stepped together in one Simulation on the
// best device there is, and checked against the closed form: with no contact and no strain, each
// substep of implicit Euler from rest moves every particle and every body by g·h²·k at substep k,
// so after n substeps by g·h²·n(n+1)/2, and nothing moves sideways. Also: the scenes' own finite
// check on the cloth, and (on CUDA) the launch table picked the way `weft run` picks it.
// Exit code 0 when all agree, 1 otherwise. Both start at z = 0, where float32 rounds finely: at
// z = 1 m the rounding of x and of v = Δx/h alone adds up to 4e-4 of the fall over 60 substeps;
// here it stays near 3e-6, and the bound is 1e-4.
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/runtime/device.h"
#include "kernels/runtime/table_selection.h"
#include "scenes/checks.h"
#include "solver/cable_builder.h"
#include "solver/cloth_builder.h"
#include "solver/simulation.h"

namespace {

double worst = 0.0;  // the largest deviation from the closed form seen [m]

void compare(const weft::Vec3& start, const weft::Vec3& now, double drop) {
  worst = std::fmax(worst, std::fabs(double(start.z) - double(now.z) - drop));
  worst = std::fmax(worst, std::fabs(double(now.x) - double(start.x)));
  worst = std::fmax(worst, std::fabs(double(now.y) - double(start.y)));
}

}  // namespace

int main() {
  using namespace weft;
  try {
    const auto device = Device::open(DeviceRequest::Auto);
    // On CUDA the shipped (or WEFT_LAUNCH_TABLE) table for this GPU, as `weft run` picks it.
    const TableSelection table = applyLaunchTable(*device);
    std::printf("launch table: %s\n", table.reason.c_str());

    ClothBuilder clothBuilder;
    ClothGridParams grid;
    grid.dimX = grid.dimY = 8;
    grid.cellX = grid.cellY = 0.05f;
    clothBuilder.addClothGrid(grid);
    const ModelDesc cloth = clothBuilder.finalize();  // weft::Error names what is wrong

    CableBuilder cableBuilder;  // a straight rod of 5 capsules along x, beside the cloth
    std::vector<Vec3> points;
    for (int i = 0; i <= 5; ++i) points.push_back({1.0f + 0.1f * float(i), 0.0f, 0.0f});
    RodParams rod;
    rod.radius = 0.01f;
    const RodIds ids = cableBuilder.addRod(points, {}, rod);
    const RigidDesc cable = cableBuilder.finalize();

    SolverOptions clothOptions;
    clothOptions.iterations = 5;
    RigidSolverOptions cableOptions;
    const int substeps = 10, frames = 6;
    Simulation sim(*device, &cloth, clothOptions, &cable, cableOptions, 1.0 / 60.0, substeps);
    for (int f = 0; f < frames; ++f) sim.advanceFrame();

    const double h = 1.0 / 60.0 / substeps, n = double(substeps * frames);
    const double drop = 9.81 * h * h * n * (n + 1.0) / 2.0;
    const std::vector<Vec3> particles = sim.cloth().positions();
    for (size_t i = 0; i < particles.size(); ++i) compare(cloth.positions[i], particles[i], drop);
    const std::vector<Transform> poses = sim.rigid().poses();
    for (int b : ids.bodies) compare(cable.bodies[size_t(b)].pose.p, poses[size_t(b)].p, drop);

    const std::vector<Vec3> velocities = sim.cloth().velocities();
    const CheckResult finite = checkFinite({cloth, particles, velocities, frames});
    std::printf(
        "%s: %zu particles and %zu bodies fell %.6f m in %d substeps (closed form "
        "%.6f m), largest deviation %.2e m; %s: %s\n",
        device->describe().c_str(), particles.size(), ids.bodies.size(),
        double(cloth.positions[0].z - particles[0].z), int(n), drop, worst, finite.name.c_str(),
        finite.detail.c_str());
    return worst <= 1e-4 * drop && finite.pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "free_fall: %s\n", e.what());
    return 1;
  }
}
