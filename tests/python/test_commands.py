"""weft's commands from Python: the registered scenes, run_scene, bench, tune_launch, info."""
import os
import subprocess
import sys

import numpy as np
import pytest

import weft

HAS_GPU = weft.cuda_devices() > 0


def test_scenes_lists_every_registered_scene():
    scenes = {s["name"]: s for s in weft.scenes()}
    assert {"cloth_hanging", "cable_y_junction", "cloth_twist", "cable_pile"} <= set(scenes)
    assert scenes["cable_y_junction"]["cables"] and not scenes["cable_y_junction"]["cloth"]
    assert scenes["cloth_hanging"]["default_frames"] == 240
    pile = {o["key"]: o for o in scenes["cable_pile"]["options"]}
    assert set(pile) == {"layers", "lanes"} and pile["layers"]["default"] == "10"
    assert scenes["cable_y_junction"]["options"] == []
    assert scenes["cloth_franka"]["takes_mesh"] and not scenes["cloth_fold"]["takes_mesh"]


def test_run_scene_returns_the_summary_with_every_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = weft.run_scene("cable_y_junction", quiet=True)
    assert summary["scene"] == "cable_y_junction"
    assert summary["frames"] == 20
    assert summary["all_checks_pass"] is True
    assert {"finite", "joints_not_torn", "pinned"} <= set(summary["checks"])
    assert "all 60 body poses" in summary["check_details"]["finite"]
    assert not (tmp_path / "out").exists()  # nothing written unless out_dir is given
    written = weft.run_scene("cable_y_junction", frames=2, out_dir=str(tmp_path / "frames"),
                             quiet=True)
    assert written["frames"] == 2
    assert (tmp_path / "frames" / "cable_y_junction.usda").exists()


def test_run_scene_spreads_options_over_worlds():
    summary = weft.run_scene("cable_pile", frames=1, worlds=2, options={"layers": [1, 2], "lanes": 2},
                             quiet=True)
    assert summary["worlds"]["count"] == 2
    assert summary["bodies"] == 80 + 160  # 1 and 2 layers of 2 cables of 40 capsules
    assert all(n == 2 for n in summary["worlds"]["checks_passing"].values())


def test_from_scene_matches_the_scene_alone_in_every_world():
    """World k of a batch is bit for bit the scene run alone (zero spacing)."""
    alone = weft.Simulation.from_scene("cable_y_junction")
    batch = weft.Simulation.from_scene("cable_y_junction", worlds=3)
    alone.step(5)
    batch.step(5)
    n = alone.rigid_model.num_bodies
    poses = batch.poses
    for k in range(3):
        np.testing.assert_array_equal(poses[k * n:(k + 1) * n], alone.poses)
    assert all(c["pass"] or c["informational"] for c in alone.scene_checks())


def test_errors_of_commands_are_exceptions_with_the_tools_message():
    with pytest.raises(weft.Error, match="unknown scene 'no_such_scene'.*cloth_hanging"):
        weft.run_scene("no_such_scene", quiet=True)
    with pytest.raises(weft.Error, match="unknown scene"):
        weft.Simulation.from_scene("no_such_scene")
    with pytest.raises(weft.Error, match="layers"):
        weft.run_scene("cable_pile", frames=1, options={"layers": "abc"}, quiet=True)
    # The command line's ranges hold here too.
    with pytest.raises(weft.Error, match="--iterations must be a whole number from 1 to 10000"):
        weft.run_scene("cable_twist", frames=1, iterations=-3, quiet=True)
    with pytest.raises(weft.Error, match="--worlds must be a whole number from 1 to 1000000"):
        weft.run_scene("cable_twist", frames=1, worlds=2**31 - 1, quiet=True)
    with pytest.raises(TypeError, match="keys are scene option names"):
        weft.run_scene("cable_pile", frames=1, options={1: 2}, quiet=True)
    with pytest.raises(TypeError, match="keys are scene option names"):
        weft.Simulation.from_scene("cloth_fold", options={3: 4})
    # A size far too large is refused before anything is allocated, as by weft run.
    with pytest.raises(weft.Error, match="4000000000 bodies"):
        weft.Simulation.from_scene("cable_pile", options={"layers": 10000, "lanes": 10000})


def test_bench_returns_worlds_per_second():
    results = weft.bench(scenes="cable_y_junction", device="cpu", worlds=[1, 2], worlds_only=True,
                         repetitions=1, quiet=True)
    (scene,) = [s for s in results["scenes"] if s["scene"] == "cable_y_junction"]
    counts = [w["count"] for w in scene["worlds"]]
    assert counts == [1, 2]
    for w in scene["worlds"]:
        assert w["world_substeps_per_s"] > 0 and w["us_per_substep"] > 0


@pytest.mark.skipif(HAS_GPU, reason="checks the CPU-only message")
def test_tune_launch_needs_a_gpu():
    with pytest.raises(weft.Error, match="CUDA GPU"):
        weft.tune_launch(scenes="cable_y_junction", quick=True, quiet=True)


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU visible: " + weft.cuda_unavailable_reason())
def test_tune_launch_writes_a_table(tmp_path):
    out = tmp_path / "table.json"
    result = weft.tune_launch(scenes="cable_y_junction", kernels="finish_rigid_step",
                              block_dims=[64, 128], quick=True, out=str(out), quiet=True)
    assert result["table"] == str(out) and out.exists()
    assert result["scenes"][0]["scene"] == "cable_y_junction"
    assert result["scenes"][0]["tuned_us"] > 0
    assert "kernels" in result["table_contents"] or "entries" in result["table_contents"]


def test_info_describes_the_device():
    text = weft.info(device="cpu")
    assert "cpu" in text


def test_the_sphere_drape_example_runs(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "apps", "python", "examples",
                           "sphere_drape.py")
    out = subprocess.run([sys.executable, example, "--frames", "30", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "sphere_drape.obj").exists()
    assert "lowest point" in out.stdout
