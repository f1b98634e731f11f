"""pipeline.json (golden file, JSON Schema, byte-identical re-export, forward cycles) and the loader's guards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import leapp
from leapp.export import spec as sp
from leapp.export.loader import PipelineInputError

from . import loop

GOLDEN = Path(__file__).parent / "golden" / "pipeline.json"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("loop")
    p = loop.trace(loop.observations(4))
    p.export(folder, "onnx")
    return p, folder


def _masked(spec):
    """The spec without what depends on the installed torch and NumPy (artifact bytes, versions)."""
    spec = json.loads(json.dumps(spec))
    spec["versions"] = {k: "<version>" for k in spec["versions"]}
    for node in spec["nodes"]:
        node["sha256"] = "<sha256>"
    return spec


def test_spec_matches_the_golden_file_and_its_schema(exported):
    _, folder = exported
    spec = json.loads((folder / "pipeline.json").read_text())
    jsonschema.validate(spec, sp.schema())
    jsonschema.Draft202012Validator.check_schema(sp.schema())
    assert _masked(spec) == json.loads(GOLDEN.read_text())
    assert spec["versions"]["numpy"] == np.__version__
    for node in spec["nodes"]:
        assert node["sha256"] == sp.sha256(folder / node["artifact"])


@pytest.mark.parametrize("break_it", [
    lambda s: s.pop("spec_version"),
    lambda s: s["nodes"][0].pop("sha256"),
    lambda s: s["nodes"][0]["inputs"][0].update(shape=[-1]),
    lambda s: s["feedback"][0].update(to="no-slash"),
    lambda s: s.update(extra=1),
], ids=["no-version", "no-sha", "bad-shape", "bad-ref", "unknown-key"])
def test_the_schema_refuses_malformed_specs(exported, break_it):
    _, folder = exported
    spec = json.loads((folder / "pipeline.json").read_text())
    break_it(spec)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(spec, sp.schema())
    with pytest.raises(sp.SpecError, match="schema"):
        sp.validate(spec)


def test_re_export_is_byte_identical(exported, tmp_path):
    p, folder = exported
    p.export(tmp_path, "onnx")
    names = sorted(os.listdir(folder))
    assert names == sorted(os.listdir(tmp_path))
    for name in names:
        assert (folder / name).read_bytes() == (tmp_path / name).read_bytes(), name


@pytest.mark.parametrize("format", ["torchscript", "pt2"])
def test_re_export_is_byte_identical_in_the_torch_formats(exported, tmp_path, format):
    p, _ = exported
    p.export(tmp_path / "a", format)
    p.export(tmp_path / "b", format)
    for name in sorted(os.listdir(tmp_path / "a")):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_forward_cycle_is_refused(exported, tmp_path):
    with pytest.raises(sp.SpecError, match=r"cycle through \['a', 'b'\]"):
        sp.order(["a", "b", "c"], [("a", "b"), ("b", "a"), ("a", "c")])
    _, folder = exported
    spec = json.loads((folder / "pipeline.json").read_text())
    fb = spec["feedback"].pop()  # the feedback turned into a forward edge makes a cycle
    spec["edges"].append({"from": fb["from"], "to": fb["to"]})
    with pytest.raises(sp.SpecError, match="cycle"):
        sp.validate(spec)


def _copy(folder, tmp_path):
    target = tmp_path / "copy"
    target.mkdir()
    for name in os.listdir(folder):
        (target / name).write_bytes((folder / name).read_bytes())
    return target


@pytest.mark.parametrize("file", ["policy.onnx", "initial.npz"])
def test_loader_refuses_a_tampered_file_naming_it(exported, tmp_path, file):
    _, folder = exported
    target = _copy(folder, tmp_path)
    data = bytearray((target / file).read_bytes())
    data[len(data) // 2] ^= 0x01
    (target / file).write_bytes(bytes(data))
    with pytest.raises(sp.SpecError, match=rf"{file}: its sha256 does not match"):
        leapp.load_pipeline(target)


def _stepped(folder, n=3):
    rt = leapp.load_pipeline(folder)
    for o in loop.observations(n, seed=11):
        rt.step({"preprocess/obs": o})
    return rt


@pytest.mark.parametrize("feed, message", [
    ({"preprocess/obs": np.zeros(3, np.float32), "preprocess/hist": np.zeros((4, 3), np.float32)},
     r"unknown input\(s\) \['preprocess/hist'\]"),
    ({}, r"missing input\(s\) \['preprocess/obs'\]"),
    ({"preprocess/obs": np.zeros(3, np.float64)}, r"input 'preprocess/obs': expected dtype float32, got float64"),
    ({"preprocess/obs": np.zeros(4, np.float32)},
     r"input 'preprocess/obs': expected shape float32\[3\], got float32\[4\]"),
    ({"preprocess/obs": [0.0, 0.0, 0.0]}, r"input 'preprocess/obs': expected a NumPy array float32\[3\], got list"),
], ids=["unknown", "missing", "dtype", "shape", "not-an-array"])
def test_a_bad_step_names_the_port_and_leaves_the_state_unchanged(exported, feed, message):
    _, folder = exported
    rt = _stepped(folder)
    before = rt.state
    with pytest.raises(PipelineInputError, match=message):
        rt.step(feed)
    after = rt.state
    assert before.keys() == after.keys() == {"preprocess/last_action", "preprocess/hist"}
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])
    # and the next good step is the one an untouched pipeline takes
    o = loop.observations(1, seed=12)[0]
    np.testing.assert_array_equal(rt.step({"preprocess/obs": o})["policy/action"],
                                  _stepped(folder).step({"preprocess/obs": o})["policy/action"])


_NO_TORCH = """
import importlib.abc, sys
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this process")
sys.meta_path.insert(0, _Block())
import numpy as np
import leapp
rt = leapp.load_pipeline(sys.argv[1])
out = [rt.step({"preprocess/obs": np.full(3, float(k), np.float32)})["policy/action"] for k in range(3)]
rt.reset()
again = rt.step({"preprocess/obs": np.zeros(3, np.float32)})["policy/action"]
assert np.array_equal(again, out[0]), (again, out[0])
assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules), "torch was imported"
print("ok", out[2].tolist())
"""


def test_an_onnx_pipeline_runs_where_torch_cannot_be_imported(exported):
    _, folder = exported
    env = dict(os.environ, PYTHONPATH=str(Path(leapp.__file__).parent.parent))
    done = subprocess.run([sys.executable, "-c", _NO_TORCH, str(folder)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    rt = leapp.load_pipeline(folder)
    want = [rt.step({"preprocess/obs": np.full(3, float(k), np.float32)})["policy/action"] for k in range(3)]
    assert done.stdout.startswith("ok ")
    np.testing.assert_array_equal(json.loads(done.stdout[3:]), want[2])


_LOADER_ALONE = _NO_TORCH.split("import leapp\n")[0] + """
before = set(sys.modules)
from leapp.export import loader
rt = loader.load_pipeline(sys.argv[1])
rt.step({"preprocess/obs": np.zeros(3, np.float32)})
mine = sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "leapp")
assert not any(m == "torch" or m.startswith("torch.") for m in sys.modules), "torch was imported"
print(",".join(mine))
"""


def test_the_loader_module_alone_loads_an_onnx_folder_without_torch(exported):
    """What a robot audits: the loader module, and the few torch-free leapp modules it reaches."""
    _, folder = exported
    env = dict(os.environ, PYTHONPATH=str(Path(leapp.__file__).parent.parent))
    done = subprocess.run([sys.executable, "-c", _LOADER_ALONE, str(folder)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().split(",") == [
        "leapp", "leapp.errors", "leapp.export", "leapp.export.folder", "leapp.export.initial",
        "leapp.export.loader", "leapp.export.onnx_refs", "leapp.export.spec", "leapp.fsutil"]


def test_the_blocker_really_blocks_torch(tmp_path):
    """The no-torch test would prove nothing if the blocker let torch through."""
    code = _NO_TORCH.split("import numpy")[0] + "import torch\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "torch is blocked" in done.stderr


def test_missing_spec_or_artifact_is_named(exported, tmp_path):
    with pytest.raises(FileNotFoundError, match="no pipeline.json"):
        leapp.load_pipeline(tmp_path)
    _, folder = exported
    target = _copy(folder, tmp_path)
    os.remove(target / "preprocess.onnx")
    with pytest.raises(sp.SpecError, match="preprocess.onnx: listed in pipeline.json but missing"):
        leapp.load_pipeline(target)


def test_a_node_whose_backend_is_missing_is_named(exported, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ort(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ort)
    _, folder = exported
    with pytest.raises(ImportError, match=r"node 'preprocess' \(preprocess.onnx, format onnx\) needs onnxruntime"):
        leapp.load_pipeline(folder)
