#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time the reference solver (Newton's SolverVBD) on this GPU, the way docs/BENCHMARKS.md times Weft.

Weft's speed is compared with Newton's own example scripts, run unchanged. This script drives them
(it imports `newton`, it copies none of it) and writes what it measured as JSON:

* `--window A-B`: one world, the example's `step()` (one CUDA graph replay per frame) timed with
  CUDA events for frames 0 .. B-1; the figure is the median over frames A .. B-1 divided by the
  substeps, in µs per substep (the "reference window µs" column of `weft bench`).
* `--worlds 1,256,4096`: the example's scene replicated into N worlds in one model (Newton's
  `ModelBuilder.replicate`, separate worlds, which never touch), 10 warm frames and then the median
  of 20 timed frames; world-substeps per second = N x substeps / that median (the
  "reference world-substeps/s" column of `weft bench --worlds`).

How a scene becomes N worlds: the script wraps `ModelBuilder.finalize` while the example builds,
so the example's own builder (its bodies, joints, shapes, ground and settings) is replicated N
times into a fresh builder, which is coloured again with the example's own `color(...)` arguments
(the colours of one world do not carry over) and finalized in its place. Kinematic drivers written
for one world's body indices are extended to every world (cable_twist's spun first capsules), so
every world does the same work.

Needs `pip install newton==1.8.0` (it brings Warp). Usage:

    python3 tools/newton_reference.py --scene cable_y_junction --worlds 1,256,4096 --json out.json
    python3 tools/newton_reference.py --scene cable_twist --window 20-80 --json out.json

The windows are `weft bench`'s (README): poker_cards 30-40, cloth_rollers 30-50, cable_pile 20-50,
the other cable scenes 20-80. Batches are for the cable scenes whose drivers replicate
(cable_y_junction, cable_twist, cable_pile); the others run as one world only.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time

SCENES = {
    # Weft's scene name: Newton's example module
    "cable_y_junction": "newton.examples.cable.example_cable_y_junction",
    "cable_twist": "newton.examples.cable.example_cable_twist",
    "cable_pile": "newton.examples.cable.example_cable_pile",
    "cable_bundle_hysteresis": "newton.examples.cable.example_cable_bundle_hysteresis",
    # Of the cloth benchmarks, the two whose examples need neither OpenUSD (pxr) nor a download.
    "poker_cards": "newton.examples.cloth.example_cloth_poker_cards",
    "cloth_rollers": "newton.examples.cloth.example_cloth_rollers",
}

# Scenes whose kinematic drivers this script cannot give every world: one world only.
ONE_WORLD_ONLY = {
    "cable_bundle_hysteresis": "its obstacles' driver is written for one world's bodies",
    "poker_cards": "its kinematic animation is written for one world's particles",
    "cloth_rollers": "its rollers' drivers are written for one world's particles",
}

WARM_FRAMES = 10
TIMED_FRAMES = 20


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scene", required=True, choices=sorted(SCENES))
    p.add_argument("--worlds", type=str, default="", help="comma-separated world counts, e.g. 1,256,4096")
    p.add_argument("--window", type=str, default="", help="one world's timed window of frames, A-B")
    p.add_argument("--device", type=str, default=None, help="Warp device (default: Warp's; cuda:0 on a GPU)")
    p.add_argument("--json", type=str, default="", help="append the results to this JSON file")
    p.add_argument("--warm", type=int, default=WARM_FRAMES)
    p.add_argument("--timed", type=int, default=TIMED_FRAMES)
    a = p.parse_args(argv)
    if not a.worlds and not a.window:
        p.error("give --worlds, --window or both")
    try:
        a.world_counts = [int(w) for w in a.worlds.split(",") if w]
    except ValueError:
        p.error(f"--worlds must be comma-separated positive integers, not '{a.worlds}'")
    if any(w < 1 for w in a.world_counts):
        p.error("--worlds: every count must be at least 1")
    if a.scene in ONE_WORLD_ONLY and any(w > 1 for w in a.world_counts):
        p.error(f"--worlds: {a.scene} runs as one world only ({ONE_WORLD_ONLY[a.scene]})")
    if a.window:
        try:
            lo, hi = (int(x) for x in a.window.split("-"))
        except ValueError:
            p.error(f"--window must be A-B (frames, end exclusive), not '{a.window}'")
        if not 0 <= lo < hi:
            p.error("--window A-B needs 0 <= A < B")
        a.window_frames = (lo, hi)
    if a.warm < 0 or a.timed < 1:
        p.error("--warm must be >= 0 and --timed >= 1")
    return a


# The builder's own settings (not per body, shape or joint) that a replica must keep: the
# examples set rigid_gap; the others are copied so that an example setting them is replicated too.
MODEL_SETTINGS = (
    "rigid_gap",
    "num_rigid_contacts_per_world",
    "balance_inertia",
    "bound_mass",
    "bound_inertia",
    "inertia_relative_tolerance",
    "inertia_absolute_tolerance",
    "inertia_correction",
    "validate_inertia_detailed",
    "particle_max_velocity",
)


class Replicating:
    """While active, `ModelBuilder.finalize` finalizes `count` copies of the builder instead."""

    def __init__(self, newton, count):
        self.newton = newton
        self.count = count
        self.bodies_per_world = 0
        self.original = None
        self.original_color = None
        self.color_call = None  # the example's own color(...) arguments, used again for the replica

    def __enter__(self):
        builder_type = self.newton.ModelBuilder
        self.original = builder_type.finalize
        self.original_color = builder_type.color
        outer = self

        def color(builder, *args, **kwargs):
            if not getattr(builder, "_weft_replica", False):
                outer.color_call = (args, kwargs)
            return outer.original_color(builder, *args, **kwargs)

        def finalize(builder, *args, **kwargs):
            if outer.count == 1 or getattr(builder, "_weft_replica", False):
                return outer.original(builder, *args, **kwargs)
            outer.bodies_per_world = builder.body_count
            many = builder_type(up_axis=builder.up_axis, gravity=builder.gravity)
            many._weft_replica = True
            for name in MODEL_SETTINGS:  # what finalize reads from the builder itself
                if hasattr(builder, name):
                    setattr(many, name, getattr(builder, name))
            many.replicate(builder, outer.count)
            if outer.color_call is not None:  # coloured as the example coloured its one world
                color_args, color_kwargs = outer.color_call
                many.color(*color_args, **color_kwargs)
            return outer.original(many, *args, **kwargs)

        builder_type.finalize = finalize
        builder_type.color = color
        return self

    def __exit__(self, *exc):
        self.newton.ModelBuilder.finalize = self.original
        self.newton.ModelBuilder.color = self.original_color
        return False


def extend_drivers(example, wp, bodies_per_world, count):
    """Give every world the kinematic drivers the example wrote for world 0, then capture again."""
    if count == 1 or not hasattr(example, "kinematic_bodies"):
        return False
    import numpy as np  # noqa: PLC0415

    first = example.kinematic_bodies.numpy()
    rates = example.first_twist_rates.numpy()
    offsets = np.arange(count, dtype=np.int32)[:, None] * bodies_per_world
    device = example.kinematic_bodies.device
    example.kinematic_bodies = wp.array((first[None, :] + offsets).ravel(), dtype=wp.int32, device=device)
    example.first_twist_rates = wp.array(np.tile(rates, count), dtype=wp.float32, device=device)
    example.capture()
    return True


class FrameTimer:
    """Times one example.step() with CUDA events (on a GPU) or the wall clock (on the CPU)."""

    def __init__(self, wp, device):
        self.wp = wp
        self.cuda = device.is_cuda
        if self.cuda:
            self.start = wp.Event(device, enable_timing=True)
            self.end = wp.Event(device, enable_timing=True)

    def time(self, step):
        wp = self.wp
        if self.cuda:
            wp.record_event(self.start)
            step()
            wp.record_event(self.end)
            wp.synchronize_event(self.end)
            return wp.get_event_elapsed_time(self.start, self.end) * 1000.0  # µs
        wp.synchronize()
        t0 = time.perf_counter()
        step()
        wp.synchronize()
        return (time.perf_counter() - t0) * 1.0e6


def build(module, newton, wp, device, count):
    parser = getattr(module.Example, "create_parser", None)
    args = newton.examples.default_args(parser() if parser else None)
    args.device = device
    args.viewer = "null"
    viewer = newton.viewer.ViewerNull(num_frames=1 << 30)
    t0 = time.perf_counter()
    with Replicating(newton, count) as rep:
        example = module.Example(viewer, args)
    if count > 1 and example.model.body_count != count * rep.bodies_per_world:
        raise SystemExit(
            f"replication failed: {example.model.body_count} bodies, not {count} x {rep.bodies_per_world}"
        )
    extended = extend_drivers(example, wp, rep.bodies_per_world, count)
    wp.synchronize()
    return example, time.perf_counter() - t0, extended


def save(path, out, first):
    """Write this run's results into the JSON list at path (a whole file, replaced atomically):
    appended the first time, then updated in place, so a run stopped midway keeps what it measured."""
    if not path:
        return
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        data = []
    if first or not data:
        data.append(out)
    else:
        data[-1] = out
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def spread(values):
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med > 0 else 0.0


def main(argv):
    a = parse_args(argv)
    import warp as wp  # noqa: PLC0415

    import newton  # noqa: PLC0415
    import newton.examples  # noqa: PLC0415
    import newton.viewer  # noqa: PLC0415

    wp.init()
    if a.device:
        wp.set_device(a.device)
    device = wp.get_device()
    module = importlib.import_module(SCENES[a.scene])
    out = {
        "scene": a.scene,
        "newton": newton.__version__,
        "warp": wp.config.version,
        "device": device.name if device.is_cuda else "cpu",
        "date": time.strftime("%Y-%m-%d"),
        "timing": "CUDA events around each example.step()" if device.is_cuda else "wall clock",
    }

    first = True  # this run's entry not yet in the JSON file
    if a.window:
        lo, hi = a.window_frames
        example, _, _ = build(module, newton, wp, a.device, 1)
        timer = FrameTimer(wp, device)
        frames = [timer.time(example.step) for _ in range(hi)]
        window = frames[lo:hi]
        per_substep = statistics.median(window) / example.sim_substeps
        out["window"] = {
            "frames": [lo, hi],
            "substeps": example.sim_substeps,
            "us_per_substep": per_substep,
            "spread": spread(window),
            "frame_us": window,
        }
        print(f"{a.scene} window {lo}-{hi}: {per_substep:.1f} us/substep (spread {spread(window):.0%})", flush=True)
        save(a.json, out, first)
        first = False
        del example

    rows = []
    if a.world_counts:
        out["worlds"] = rows
    for count in a.world_counts:
        example, built_s, extended = build(module, newton, wp, a.device, count)
        timer = FrameTimer(wp, device)
        for _ in range(a.warm):
            example.step()
        frames = [timer.time(example.step) for _ in range(a.timed)]
        median_us = statistics.median(frames)
        substeps = example.sim_substeps
        rows.append(
            {
                "count": count,
                "bodies": int(example.model.body_count),
                "frame_us": median_us,
                "us_per_substep": median_us / substeps,
                "world_substeps_per_s": count * substeps / (median_us * 1.0e-6),
                "spread": spread(frames),
                "built_s": built_s,
                "drivers_extended": extended,
            }
        )
        r = rows[-1]
        print(
            f"{a.scene} x {count}: {r['us_per_substep']:.1f} us/substep, "
            f"{r['world_substeps_per_s']:.0f} world-substeps/s (spread {r['spread']:.0%}, built in {built_s:.1f} s)",
            flush=True,
        )
        save(a.json, out, first)
        first = False
        del example

    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
