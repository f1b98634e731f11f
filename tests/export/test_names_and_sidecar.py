"""What an export shows of the user's code: the user's names in the file, and a sidecar that names
the right line once, relative to the project, and says what the check compared against."""

from __future__ import annotations

import inspect
import json
import os
import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError, LeappWarning
from leapp.export import export_node

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], dtype=np.float32)


def _scale(x):
    return np.clip(x * 3.0 * 0.5, -2.0, 2.0)  # two multiplies on one line: one note


def _named(x):
    a = _scale(x)
    b = _scale(x + 1.0)
    return {"policy_input": a - b, "x": a * 2.0}


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_onnx_keeps_the_user_s_names_and_renames_only_an_output_named_like_an_input(tmp_path):
    import onnxruntime as ort

    cf = leapp.compile(_named)
    cf(X)
    description = cf.export(tmp_path / "n.onnx")
    session = ort.InferenceSession(str(tmp_path / "n.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["x"]
    # ONNX assigns a value name once: the output "x" cannot be the input "x"
    assert [o.name for o in session.get_outputs()] == ["policy_input", "output_x"]
    assert [(o["name"], o.get("artifact_name")) for o in description["outputs"]] == \
        [("policy_input", None), ("x", "output_x")]
    got = dict(zip(["policy_input", "x"], session.run(None, {"x": X}), strict=True))
    want = _named(X)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


@pytest.mark.parametrize("fmt", ["torchscript", "pt2"])
def test_the_torch_formats_return_the_user_s_names_even_one_named_like_an_input(tmp_path, fmt):
    import torch

    cf = leapp.compile(_named)
    cf(X)
    path = tmp_path / f"n.{'pt' if fmt == 'torchscript' else 'pt2'}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit's own notice
        description = cf.export(path, fmt)
        loaded = torch.jit.load(str(path)) if fmt == "torchscript" else torch.export.load(str(path)).module()
        got = loaded(torch.from_numpy(X))
    assert isinstance(got, dict) and list(got) == ["policy_input", "x"]  # a dict: no renaming needed
    assert [(o["name"], o.get("artifact_name")) for o in description["outputs"]] == \
        [("policy_input", None), ("x", None)]
    want = _named(X)
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-6)
    if fmt == "pt2":  # the names are in the program's output spec, not only in leapp's sidecar
        program = torch.export.load(str(path))
        assert program.call_spec.out_spec.context == ["policy_input", "x"]


def test_the_export_check_refuses_a_file_whose_output_names_differ(tmp_path, monkeypatch):
    """Every export loads the file back with the node's output names: a writer that lost them fails."""
    from leapp.export import formats

    cf = leapp.compile(_named)
    cf(X)
    real = formats.named_outputs
    monkeypatch.setattr(formats, "named_outputs", lambda module, names: real(module, [n.upper() for n in names]))
    with pytest.raises(ExportError, match=r"outputs are named \['POLICY_INPUT', 'X'\], not \['policy_input', 'x'\]"):
        cf.export(tmp_path / "n.pt2", "pt2")
    assert os.listdir(tmp_path) == []


def test_a_tuple_result_is_numbered_and_a_dict_result_keeps_its_keys():
    def pair(x):
        return x + 1.0, x * 2.0

    cf = leapp.compile(pair)
    cf(X)
    assert cf._latest().node.output_names == ["output_0", "output_1"]
    cf = leapp.compile(_named)
    cf(X)
    assert cf._latest().node.output_names == ["policy_input", "x"]


@pytest.mark.parametrize("name, fmt, said", [
    ("pre.onnx", "torchscript", ".onnx is the extension of ONNX files"),
    ("pre.pt", "onnx", ".pt is the extension of TorchScript files"),
    ("pre.pt2", "torchscript", ".pt2 is the extension of torch.export (pt2) files"),
    ("pre.bin", "pt2", ".bin is not an extension leapp writes"),
    ("pre", "onnx", "the name has no extension"),
])
def test_an_extension_that_does_not_match_the_format_is_refused_before_writing(tmp_path, name, fmt, said):
    cf = leapp.compile(_named)
    cf(X)
    target = tmp_path / "sub" / name
    with pytest.raises(ExportError) as info:
        cf.export(target, fmt)
    assert said in str(info.value) and "nothing was written" in str(info.value)
    assert not (tmp_path / "sub").exists()  # not even the folder


def test_the_sidecar_names_each_note_once_at_the_helper_s_line_relative_to_the_project(tmp_path, monkeypatch):
    cf = leapp.compile(_named)
    cf(X)
    texts = []
    for folder in ("a", "b"):  # two folders, two working directories: the same description
        os.makedirs(tmp_path / folder)
        monkeypatch.chdir(tmp_path / folder)
        cf.export("n.onnx")
        texts.append((tmp_path / folder / "n.onnx.json").read_text())
    assert texts[0] == texts[1]
    notes = json.loads(texts[0])["notes"]
    assert len(notes) == len(set(notes)) and notes
    assert not any(os.sep + "tests" + os.sep in n or str(tmp_path) in n for n in notes), notes
    helper, first, second = (_line_of(_scale, "np.clip"), _line_of(_named, "_scale(x)"),
                             _line_of(_named, "_scale(x + 1.0)"))
    # the helper's line, seen from each of the user's calls: two notes, not one repeated
    clip = [n for n in notes if n.startswith("numpy.clip")]
    assert [n.split(": ")[0] for n in clip] == [
        f"numpy.clip at export/test_names_and_sidecar.py:{helper} (in _scale, called at "
        f"export/test_names_and_sidecar.py:{line}:{col})"
        for line, col in ((first, 9), (second, 9))]


def test_checked_says_where_the_graph_stood_in_for_numpy(tmp_path):
    from leapp.runtime.tracing import trace_function

    def f(x):
        return {"y": np.maximum(x, 0.0)}

    traced = trace_function(f, (X,), {}, names=["x"])

    def reference(inputs):  # a "NumPy" that disagrees with the graph where the input holds NaN
        y = np.maximum(inputs["x"], 0.0)
        return {"y": y + 1.0 if np.isnan(inputs["x"]).any() else y}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        description = export_node(traced.node, tmp_path / "f.onnx", example_inputs={"x": X}, reference=reference)
    checked = description["checked"]
    assert checked["against"] == "numpy and graph"
    assert list(checked["against_graph"]) == ["inputs with NaN", "inputs with -NaN"]
    assert "differs from NumPy on output 'y'" in checked["against_graph"]["inputs with NaN"]
    assert any("inputs with NaN" in str(w.message) and issubclass(w.category, LeappWarning) for w in caught)
    assert json.loads((tmp_path / "f.onnx.json").read_text())["checked"] == checked
    no_reference = export_node(traced.node, tmp_path / "g.onnx", example_inputs={"x": X})
    assert no_reference["checked"]["against"] == "graph" and "against_graph" not in no_reference["checked"]
