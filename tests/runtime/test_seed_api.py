"""The seed-style API: the seed's own example graph, node for node, plus sessions and validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leapp
from leapp import annotate
from leapp.errors import TraceError, ValidationError, ValidationWarning

STATE_MEAN = np.array([0.1, 0.2, 0.3], np.float32)
STATE_STD = np.array([1.0, 2.0, 0.5], np.float32)

SEED_GRAPH = """\
%state             = placeholder[target=state]
%velocity          = placeholder[target=velocity]
%_tensor_constant0 = get_attr[target=_tensor_constant0]
%sub               = call_function[target=torch.sub](args = (%state, %_tensor_constant0))
%_tensor_constant1 = get_attr[target=_tensor_constant1]
%div               = call_function[target=torch.div](args = (%sub, %_tensor_constant1))
%clamp             = call_function[target=torch.clamp](args = (%div, -5.0, 5.0))
%cat               = call_function[target=torch.cat](args = ([%clamp, %velocity],))"""


def _frames(n, seed=0):
    rng = np.random.default_rng(seed)
    return [{"observation.state": rng.normal(size=3).astype(np.float32) * 4,
             "observation.velocity": rng.normal(size=2).astype(np.float32)} for _ in range(n)]


def _seed_pass(frame):
    state, velocity = annotate.input_tensors("preprocess", {
        "state": frame["observation.state"],
        "velocity": frame["observation.velocity"],
    })
    state_norm = np.clip((state - STATE_MEAN) / STATE_STD, -5.0, 5.0)
    obs = np.concatenate([state_norm, velocity])
    annotate.output_tensors("preprocess", {"obs": obs})
    return obs


def _trace_seed(n=3):
    leapp.start("seed")
    for frame in _frames(n):
        _seed_pass(frame)
    leapp.stop()
    return leapp.compile_graph(validate=True)


def _render(graph):
    """The seed's notation: name = op[target=...](args = (...)), kwargs dropped when empty."""
    rows = []
    for n in graph.nodes:
        if n.op == "output":
            continue
        target = n.target if isinstance(n.target, str) else f"{n.target.__module__}.{n.target.__name__}"
        target = target.replace("torch._VariableFunctionsClass.", "torch.")
        head = f"{n.op}[target={target}]"
        if n.op == "call_function":
            head += f"(args = {_fmt(n.args)})"
        rows.append((f"%{n.name}", head))
    width = max(len(a) for a, _ in rows)
    return "\n".join(f"{a:<{width}} = {b}" for a, b in rows)


def _fmt(value):
    if isinstance(value, torch.fx.Node):
        return f"%{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value)


def test_seed_graph_golden():
    p = _trace_seed()
    assert _render(p["preprocess"].graph_module.graph) == SEED_GRAPH


def test_seed_graph_mentions_no_numpy_and_constants_are_the_operands():
    gm = _trace_seed()["preprocess"].graph_module
    assert "numpy" not in gm.code
    np.testing.assert_array_equal(gm._tensor_constant0.numpy(), STATE_MEAN)
    np.testing.assert_array_equal(gm._tensor_constant1.numpy(), STATE_STD)


def test_compiled_node_is_callable_with_numpy_and_matches_numpy():
    p = _trace_seed()
    frame = _frames(1, seed=7)[0]
    out = p["preprocess"](state=frame["observation.state"], velocity=frame["observation.velocity"])
    want = np.concatenate([np.clip((frame["observation.state"] - STATE_MEAN) / STATE_STD, -5.0, 5.0),
                           frame["observation.velocity"]])
    assert out["obs"].dtype == np.float32
    np.testing.assert_allclose(out["obs"], want, rtol=1e-6)


def test_retracing_gives_byte_identical_graph_code():
    code1 = _trace_seed()["preprocess"].graph_module.code
    code2 = _trace_seed()["preprocess"].graph_module.code
    assert code1 == code2


def test_every_node_carries_the_user_source_line():
    gm = _trace_seed()["preprocess"].graph_module
    here = __file__
    for n in gm.graph.nodes:
        if n.op == "call_function":
            src = n.meta["leapp_source"]
            assert src.startswith(here + ":"), src
            line = int(src.split(":")[-1])
            text = open(here).read().splitlines()[line - 1]
            assert "np." in text or "STATE" in text


def test_validation_passes_and_reports_per_output():
    p = _trace_seed(4)
    v = p["preprocess"].validation
    assert v.ok and v.n_samples == 3
    assert "obs: largest error" in v.describe()


def test_no_validation_sample_is_said_not_passed_silently():
    leapp.start("one")
    _seed_pass(_frames(1)[0])
    leapp.stop()
    with pytest.warns(ValidationWarning, match="no validation sample"):
        leapp.compile_graph(validate=True)


def test_validation_catches_a_frozen_constant():
    leapp.start("frozen")
    for frame in _frames(3):
        state = annotate.input_tensors("n", {"state": frame["observation.state"]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scale = float(np.abs(state).max())  # escapes: frozen at the first sample's value
        annotate.output_tensors("n", {"out": state / scale})
    leapp.stop()
    # a failed validation raises: no pipeline comes back, so nothing can be exported from it
    with pytest.raises(ValidationError) as info:
        leapp.compile_graph(validate=True)
    text = str(info.value)
    assert "FAILED" in text and "float()" in text and "test_seed_api.py" in text
    assert "on_mismatch='warn'" in text
    # asked for explicitly, the pipeline comes back with the warning, to be inspected
    with pytest.warns(ValidationWarning) as record:
        p = leapp.compile_graph(validate=True, on_mismatch="warn")
    assert "FAILED" in "\n".join(str(w.message) for w in record)
    assert not p["n"].validation.ok
    with pytest.raises(ValueError, match="on_mismatch"):
        leapp.compile_graph(on_mismatch="ignore")


def test_strict_session_raises_on_validation_failure():
    leapp.start("strict-frozen", strict=False)
    for frame in _frames(3):
        state = annotate.input_tensors("n", {"state": frame["observation.state"]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bias = state.tolist()[0]
        annotate.output_tensors("n", {"out": state - bias})
    leapp.stop()
    leapp.api._session.strict = True  # strict at compile time: the failure must raise
    with pytest.raises(Exception) as info:
        leapp.compile_graph(validate=True, on_mismatch="warn")  # strict refuses the escape anyway
    assert isinstance(info.value, (ValidationError, leapp.errors.ProblemsError))


def test_single_input_returns_value_and_several_a_tuple_in_dict_order():
    leapp.start("s")
    one = annotate.input_tensors("a", {"x": np.ones(2)})
    assert isinstance(one, leapp.TracedNpArray)
    annotate.output_tensors("a", {"y": one + 1})
    a, b = annotate.input_tensors("b", {"p": np.zeros(1), "q": np.ones(3)})
    assert a.shape == (1,) and b.shape == (3,)
    annotate.output_tensors("b", {"r": b * 2})
    leapp.stop()
    p = leapp.compile_graph(validate=False)
    assert set(p) == {"a", "b"}
    assert p["b"].input_names == ["p", "q"]


def test_pipeline_edge_between_nodes():
    leapp.start("pipe")
    x = annotate.input_tensors("first", {"x": np.arange(4.0)})
    y = annotate.output_tensors("first", {"y": x * 2})
    z = annotate.input_tensors("second", {"y_in": y})
    annotate.output_tensors("second", {"z": z + 1})
    leapp.stop()
    p = leapp.compile_graph(validate=False)
    assert p.edges == [("first", "y", "second", "y_in")]


def test_api_misuse_is_a_clear_error():
    with pytest.raises(TraceError, match="leapp.start"):
        annotate.input_tensors("n", {"x": np.ones(2)})
    leapp.start("m")
    annotate.input_tensors("n", {"x": np.ones(2)})
    with pytest.raises(TraceError, match="still open"):
        annotate.input_tensors("other", {"x": np.ones(2)})
    with pytest.raises(TraceError, match="without a matching"):
        annotate.output_tensors("other", {"y": np.ones(2)})


def test_reset_discards_a_broken_session_and_restores_numpy():
    from leapp.runtime import state

    original = np.asarray
    leapp.start("broken")
    annotate.input_tensors("n", {"x": np.ones(2)})  # a node left open, as after an exception
    leapp.reset()
    assert np.asarray is original and state.current() is None
    leapp.start("fresh")  # the next session starts clean
    x = annotate.input_tensors("n", {"x": np.ones(2)})
    annotate.output_tensors("n", {"y": x + 1.0})
    leapp.stop()
    assert "reset" in dir(leapp)


def test_numpy_is_restored_after_stop():
    original = np.asarray
    leapp.start("restore")
    assert np.asarray is not original
    leapp.stop()
    assert np.asarray is original


def test_pipeline_export_defaults_to_the_session_save_path(tmp_path):
    leapp.start("saved", save_path=str(tmp_path))
    for frame in _frames(2):
        _seed_pass(frame)
    leapp.stop()
    p = leapp.compile_graph(validate=True)
    p.export("onnx")
    folder = tmp_path / "saved"
    assert (folder / "pipeline.json").exists()
    assert (folder / "preprocess.onnx").exists() and (folder / "preprocess.onnx.json").exists()


def test_buffers_numpys_compiled_code_makes_stay_plain():
    # numpy.random's Generator (Cython, no Python frame) calls np.empty and fills it in C: that
    # buffer must not be traced (the graph kept its unfilled memory), while the user's own
    # np.zeros, through a name or an alias bound in the session, is traced
    x0 = np.arange(5, dtype=np.float32)
    leapp.start("noise")
    x = annotate.input_tensors("n", {"x": x0})
    zeros = np.zeros
    buf = zeros(5, np.float32)
    buf[:] = x * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no escape, no "leapp bug" self-check miss
        noise = np.random.default_rng(0).normal(0.0, 0.1, 5).astype(np.float32)
    annotate.output_tensors("n", {"y": buf + noise})
    leapp.stop()
    with warnings.catch_warnings():
        warnings.simplefilter("error", leapp.errors.LeappInternalWarning)
        node = leapp.compile_graph(validate=False)["n"]
    z = np.ones(5, np.float32)
    np.testing.assert_array_equal(node(x=z)["y"], z * 2 + noise)  # the noise drawn, frozen (lint: LP301)


def test_a_none_or_string_output_is_refused_naming_it():
    # trimesh.transformations.scale_from_matrix returns (factor, origin, None): handed to
    # output_tensors whole, compile_graph raised torch's raw TypeError on an object array
    from leapp.errors import OutputTypeError

    for bad in (None, "yaw", {"a": 1}):
        leapp.start("outputs")
        try:
            x = annotate.input_tensors("fn", {"x": np.ones(3)})
            with pytest.raises(OutputTypeError, match=r"output 'b' \(at .*test_seed_api.py:\d+.*cannot return"):
                annotate.output_tensors("fn", {"a": x * 2.0, "b": bad})
        finally:
            leapp.api.reset()
    leapp.start("outputs")
    try:
        x = annotate.input_tensors("fn", {"x": np.ones(3)})
        with pytest.warns(leapp.errors.EscapeWarning, match="does not depend on the inputs"):
            annotate.output_tensors("fn", {"a": x * 2.0, "b": 3.5})  # a number is still a (constant) output
        leapp.stop()
        node = leapp.compile_graph()["fn"]
        got = node(x=np.full(3, 2.0))
        assert got["b"] == 3.5 and np.array_equal(got["a"], np.full(3, 4.0))
    finally:
        leapp.api.reset()
