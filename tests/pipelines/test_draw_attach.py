"""Drawings (DOT, SVG, PNG through Graphviz) of a pipeline and of one graph; attaching an existing model."""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError, LeappError

from . import loop

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def traced():
    return loop.trace(loop.observations(3))


def test_svg_shows_nodes_ports_edges_feedback_and_state(traced, tmp_path):
    path = traced.draw(tmp_path / "loop.svg")
    root = ET.parse(path).getroot()
    texts = [t.text for t in root.iter(SVG + "text")]
    for expected in ["preprocess (traced)", "policy (traced)", "obs: float32[3]", "last_action: float32[2]",
                     "state hist: float32[4, 3]", "features: float32[14]", "action: float32[2]",
                     "feedback: policy/action -> preprocess/last_action", "preprocess/obs", "policy/action"]:
        assert expected in texts, expected
    paths = {p.get("class"): p for p in root.iter(SVG + "path") if p.get("class")}
    assert set(paths) == {"forward", "feedback", "state", "input", "output"}
    assert paths["feedback"].get("stroke-dasharray") and not paths["forward"].get("stroke-dasharray")
    assert paths["feedback"].get("stroke") != paths["forward"].get("stroke")


def test_dot_needs_nothing_and_marks_feedback(traced, tmp_path):
    text = traced.draw()
    assert text == traced.draw()  # deterministic
    assert '"preprocess":o_features -> "policy":i_features [color="#333333"];' in text
    assert '"policy":o_action -> "preprocess":i_last_action [color="#c0392b", style=dashed' in text
    assert '"preprocess":o_hist_next -> "preprocess":i_hist' in text
    traced.draw(tmp_path / "loop.dot")
    assert (tmp_path / "loop.dot").read_text() == text


def test_png_uses_graphviz_dot_and_says_so_when_it_is_missing(traced, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LeappError, match="needs Graphviz's `dot` program"):
        traced.draw(tmp_path / "loop.png")
    assert not (tmp_path / "loop.png").exists()
    fake = tmp_path / "bin" / "dot"  # stands in for Graphviz: echoes a PNG header and the DOT it got
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nprintf '\\211PNG\\r\\n'; cat\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(fake.parent) + os.pathsep + "/bin:/usr/bin")
    traced.draw(tmp_path / "loop.png")
    data = (tmp_path / "loop.png").read_bytes()
    assert data.startswith(b"\x89PNG") and b"digraph" in data


def _clip(x):
    return np.clip((x - 1.0) * 2.0, -1.0, 1.0)


def test_a_compiled_function_draws_its_graph(tmp_path):
    cf = leapp.compile(_clip)
    with pytest.raises(LeappError, match="nothing to draw"):
        cf.draw()
    cf(np.arange(4, dtype=np.float32))
    root = ET.parse(cf.draw(tmp_path / "g.svg")).getroot()
    texts = [t.text for t in root.iter(SVG + "text")]
    assert {"input x", "numpy.subtract", "numpy.multiply", "numpy.clip", "output"} <= set(texts)
    assert "out: float32[4]" not in texts and "float32[4]" in texts
    assert "-> " in cf.draw()


def test_cli_compile_draws(tmp_path, capsys):
    from leapp.cli import main

    assert main(["compile", "--out", str(tmp_path), "--no-graph", "--validate", "1",
                 "--draw", str(tmp_path / "g.svg")]) == 0
    assert f"drawing: {tmp_path / 'g.svg'}" in capsys.readouterr().out
    assert ET.parse(tmp_path / "g.svg").getroot().tag == SVG + "svg"


def _policy_scaled(features):
    return np.tanh(features @ (loop.W * 1.5) + loop.B)


def _policy_same(features):
    return np.tanh(features @ loop.W + loop.B)


def test_attach_an_existing_model_checked_on_the_traced_samples(tmp_path):
    p = loop.trace(loop.observations(4))
    example = np.zeros(14, np.float32)
    wrong = leapp.compile(_policy_scaled)
    wrong(example)
    wrong.export(tmp_path / "wrong.onnx")
    with pytest.raises(ExportError, match=r"output 'action' on traced pass 1: largest error"):
        p.attach("policy", tmp_path / "wrong.onnx")
    assert p.attached == {}
    right = leapp.compile(_policy_same)
    right(example)
    right.export(tmp_path / "policy_model.onnx")
    p.attach("policy", tmp_path / "policy_model.onnx")
    spec = p.export(tmp_path / "out", "torchscript")
    assert [(n["name"], n["format"], n["origin"]) for n in spec["nodes"]] == \
        [("preprocess", "torchscript", "traced"), ("policy", "onnx", "attached")]
    assert (tmp_path / "out" / "policy.onnx").read_bytes() == (tmp_path / "policy_model.onnx").read_bytes()
    rt = leapp.load_pipeline(tmp_path / "out", trust_code=True)  # the traced node is TorchScript
    obs = loop.observations(10, seed=2)
    for o, w in zip(obs, loop.reference(obs), strict=True):
        np.testing.assert_allclose(rt.step({"preprocess/obs": o})["policy/action"], w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="cannot tell the format"):
        p.attach("policy", tmp_path / "policy.bin")


def test_the_drawing_in_the_docs_is_current(traced, tmp_path):
    """docs/pipelines.md shows docs/pipeline-loop.svg; regenerate it with traced.draw(...) when this fails."""
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "pipeline-loop.svg")
    with open(docs, encoding="utf-8") as f:
        committed = f.read()
    traced.draw(tmp_path / "now.svg")
    assert committed == (tmp_path / "now.svg").read_text()
