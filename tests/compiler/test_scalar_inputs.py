"""Scalars stay inputs (issue 17): a NumPy float or complex scalar argument (``t: np.float64``) is a 0-d
graph input, one graph per dtype, in the call and in the exported file (an ONNX input ``t``). NumPy ints
and bools and Python numbers stay constants of their graph, one graph per value (they set sizes,
indices and branches; a Python float is weakly typed), as docs/compile.md says."""

from __future__ import annotations

import numpy as np

import leapp

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
