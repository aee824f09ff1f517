#!/usr/bin/env python3
"""Opens a .usda written by `weft run` with USD itself (pxr, from the usd-core package) and checks
its stage metadata, the cloth's time samples and point counts. Exits 77 (skipped) without pxr."""
import sys

try:
    from pxr import Usd, UsdGeom
except ImportError:
    print("skipped: the pxr module (pip install usd-core) is not installed")
    sys.exit(77)

path, frames, points = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
stage = Usd.Stage.Open(path)
assert stage, f"USD could not open {path}"
assert stage.GetStartTimeCode() == 0 and stage.GetEndTimeCode() == frames, "time range"
assert UsdGeom.GetStageUpAxis(stage) == "Z", "up axis"
mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/World/cloth"))
samples = mesh.GetPointsAttr().GetTimeSamples()
assert list(samples) == list(range(frames + 1)), f"time samples {samples}"
for t in samples:
    assert len(mesh.GetPointsAttr().Get(t)) == points, f"points at {t}"
counts = mesh.GetFaceVertexCountsAttr().Get()
assert len(mesh.GetFaceVertexIndicesAttr().Get()) == 3 * len(counts), "triangles"
print(f"ok: {path} opens in USD with {len(samples)} samples of {points} points")
