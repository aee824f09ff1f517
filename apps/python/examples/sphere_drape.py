"""Drapes a square cloth over a sphere with the weft module and writes the result (docs/PYTHON.md).

    python apps/python/examples/sphere_drape.py [--frames 90] [--device auto] [--out out]

Writes OUT/sphere_drape.obj (the final cloth, for any mesh viewer) and, when matplotlib is
installed, OUT/sphere_drape.png (a side view of the cloth with the sphere's outline).
"""
import argparse
import os

import numpy as np

import weft


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=90, help="frames at 60 fps")
    parser.add_argument("--device", default="auto", help="auto, cuda or cpu")
    parser.add_argument("--out", default="out", help="output folder")
    args = parser.parse_args()

    # A 1 m × 1 m cloth of 32 × 32 cells, 0.15 m above a sphere of radius 0.3 m at the origin.
    cells, radius = 32, 0.3
    builder = weft.ClothBuilder()
    builder.add_cloth_grid(weft.ClothGrid(
        position=(-0.5, -0.5, radius + 0.15), dim_x=cells, dim_y=cells,
        cell_x=1.0 / cells, cell_y=1.0 / cells, mass=0.005, particle_radius=0.008,
        triangle_material=weft.TriangleMaterial(ke=200.0, ka=200.0, kd=0.5),
        edge_material=weft.EdgeMaterial(ke=0.01)))
    builder.add_shape(weft.sphere(radius, material=weft.ContactMaterial(ke=1e4, kd=10.0, mu=0.4)))
    cloth = builder.finalize()

    options = weft.SolverOptions(iterations=10)
    options.self_contact.enabled = True  # the hanging skirt folds onto itself
    options.self_contact.radius = 0.004
    options.self_contact.margin = 0.008
    sim = weft.Simulation(cloth=cloth, cloth_options=options, device=args.device)
    print(f"{cloth} on {sim.device.description}")

    for frame in range(0, args.frames, 15):
        sim.step(min(15, args.frames - frame))
        x = sim.positions
        print(f"frame {sim.frames_done:4d}: lowest point z = {x[:, 2].min():+.3f} m, "
              f"closest to the sphere's centre {np.linalg.norm(x, axis=1).min():.3f} m, "
              f"{sim.last_frame_ms:.2f} ms/frame")

    checks = sim.check_finite()
    intersections = sum(sim.self_intersections())
    print(f"finite: {checks[0]['detail']}; self-intersections: {intersections}")

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "sphere_drape.obj")
    with open(path, "w") as f:
        for p in sim.positions:
            f.write(f"v {p[0]:.6f} {p[1]:.6f} {p[2]:.6f}\n")
        for t in cloth.triangles + 1:
            f.write(f"f {t[0]} {t[1]} {t[2]}\n")
    print(f"wrote {path}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 0 if checks[0]["pass"] and intersections == 0 else 1
    x = sim.positions
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.add_patch(plt.Circle((0.0, 0.0), radius, fill=False, color="tab:gray"))
    ax.triplot(x[:, 0], x[:, 2], cloth.triangles, linewidth=0.3, color="tab:blue")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("z [m]")
    ax.set_title(f"cloth over a sphere after {sim.frames_done} frames")
    png = os.path.join(args.out, "sphere_drape.png")
    fig.savefig(png, dpi=120, bbox_inches="tight")
    print(f"wrote {png}")
    return 0 if checks[0]["pass"] and intersections == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
