"""Scalars stay inputs (issue 17): a NumPy float or complex scalar argument (``t: np.float64``) is a 0-d
graph input, one graph per dtype, in the call and in the exported file (an ONNX input ``t``). NumPy ints
and bools and Python numbers stay constants of their graph, one graph per value (they set sizes,
indices and branches; a Python float is weakly typed), as docs/compile.md says."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import InputError

X = np.linspace(-1, 1, 4).astype(np.float32)


@leapp.compile
def decay(x, t, n=2):
    return x * np.exp(-t) + np.zeros(n, x.dtype).sum() + t ** 2


def test_a_numpy_float_scalar_argument_is_one_input_not_one_graph_per_value():
    for t in (0.5, 1.25, -3.0):
        got, want = decay(X, np.float64(t)), decay.fn(X, np.float64(t))
        assert got.dtype == want.dtype == np.float64  # float32 x * a float64 scalar: float64
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(decay.graphs) == 1
    decay(X, np.float32(0.5))  # another dtype: another graph
    assert len(decay.graphs) == 2
    got = decay(X, np.float32(2.0))
    assert got.dtype == np.float32 and len(decay.graphs) == 2
    np.testing.assert_allclose(got, decay.fn(X, np.float32(2.0)), rtol=1e-6)


def test_python_numbers_and_numpy_ints_specialise_per_value():
    before = len(decay.graphs)
    decay(X, np.float64(1.0), 3)
    decay(X, np.float64(1.0), np.int64(4))  # a size: a constant of its graph
    assert len(decay.graphs) == before + 2


def test_the_exported_file_takes_the_scalar_as_an_input(tmp_path):
    import onnxruntime as ort

    compiled = leapp.compile(decay.fn)
    compiled(X, np.float64(0.5))
    compiled.export(tmp_path / "decay.onnx")
    session = ort.InferenceSession(str(tmp_path / "decay.onnx"), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert names == ["x", "t"] and session.get_inputs()[1].shape == []
    for t in (0.25, 2.0):
        got = session.run(None, {"x": X, "t": np.array(t)})[0]
        np.testing.assert_allclose(got, decay.fn(X, np.float64(t)), rtol=1e-12)


@leapp.compile
def lone(t):
    return np.sin(t) * 2 + t


@pytest.mark.parametrize("t", [0.5, 3, np.int64(3), True])
def test_a_lone_specialised_scalar_is_an_input_error_naming_the_port(t):
    # every output would be a constant of a graph with no input: the call's fault, said as such
    with pytest.raises(InputError, match=r"the graph has no input: 't' \(") as info:
        lone(t)
    assert "gap in lint" not in str(info.value)


@leapp.compile
def lone_python(t):
    return t * 2  # a Python number in, a Python number out: no array anywhere in the trace


@pytest.mark.parametrize("t", [0.5, 3, True])
def test_a_lone_python_number_with_a_python_result_is_an_input_error(t):
    with pytest.raises(InputError, match=r"the graph has no input: 't' \("):
        lone_python(t)


def test_a_lone_numpy_float_scalar_traces_as_the_input(tmp_path):
    import onnxruntime as ort

    compiled = leapp.compile(lone.fn)
    for t in (0.5, -2.25):
        got = compiled(np.float64(t))
        assert type(got) is np.float64 and got == lone.fn(np.float64(t))
    assert len(compiled.graphs) == 1
    compiled.export(tmp_path / "lone.onnx")
    session = ort.InferenceSession(str(tmp_path / "lone.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["t"]
    np.testing.assert_allclose(session.run(None, {"t": np.array(1.5)})[0], lone.fn(np.float64(1.5)), rtol=1e-12)


@pytest.mark.parametrize("t", [0.5, np.int64(3)])
def test_the_seed_api_takes_a_lone_scalar_as_an_input(t):
    from leapp import annotate

    leapp.start("lone")
    try:
        for v in (t, t * 2):
            annotate.output_tensors("fn", {"y": np.sin(annotate.input_tensors("fn", {"t": v})) * 2})
        leapp.stop()
        node = leapp.compile_graph(validate=True)["fn"]
        np.testing.assert_allclose(node(t=np.asarray(t * 3))["y"], np.sin(t * 3) * 2, rtol=1e-12)
    finally:
        leapp.api.reset()
