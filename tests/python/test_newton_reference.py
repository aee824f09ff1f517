"""tools/newton_reference.py, the script that times the reference: what it refuses before it
imports Newton (which this suite does not install), and how it records results."""
import importlib.util
import json
import pathlib

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "newton_reference.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("newton_reference", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def refused(tool, argv, capsys):
    with pytest.raises(SystemExit) as e:
        tool.parse_args(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


def test_bad_input_is_refused_with_the_reason(tool, capsys):
    assert "give --worlds, --window or both" in refused(tool, ["--scene", "cable_twist"], capsys)
    assert "at least 1" in refused(tool, ["--scene", "cable_twist", "--worlds", "1,0"], capsys)
    assert "comma-separated" in refused(tool, ["--scene", "cable_twist", "--worlds", "a"], capsys)
    assert "0 <= A < B" in refused(tool, ["--scene", "cable_twist", "--window", "50-20"], capsys)
    assert "A-B" in refused(tool, ["--scene", "cable_twist", "--window", "20"], capsys)
    assert "invalid choice" in refused(tool, ["--scene", "cloth_twist", "--window", "20-50"], capsys)
    # Scenes whose drivers are written for one world run as one world only.
    err = refused(tool, ["--scene", "cable_bundle_hysteresis", "--worlds", "1,2"], capsys)
    assert "one world only" in err


def test_good_input_is_parsed(tool):
    a = tool.parse_args(["--scene", "cable_pile", "--worlds", "1,8,64", "--window", "20-50"])
    assert a.world_counts == [1, 8, 64] and a.window_frames == (20, 50)
    a = tool.parse_args(["--scene", "cable_bundle_hysteresis", "--worlds", "1"])
    assert a.world_counts == [1] and a.warm == 10 and a.timed == 20


def test_results_are_saved_as_they_come(tool, tmp_path):
    path = str(tmp_path / "ref.json")
    (tmp_path / "ref.json").write_text(json.dumps([{"scene": "earlier"}]))
    out = {"scene": "cable_twist", "worlds": [{"count": 1}]}
    tool.save(path, out, True)  # a new entry beside the earlier run's
    out["worlds"].append({"count": 64})
    tool.save(path, out, False)  # the same entry, updated in place
    data = json.loads((tmp_path / "ref.json").read_text())
    assert [d["scene"] for d in data] == ["earlier", "cable_twist"]
    assert [w["count"] for w in data[1]["worlds"]] == [1, 64]
    assert not (tmp_path / "ref.json.tmp").exists()
