"""Constants fold, honestly (issue 17): a call whose operands are constants only is a constant, not a
contradiction between leapp's two stages; ``ufunc.reduce`` over a list of traced arrays traces; a Python
sequence indexed by traced data is the user's escape, named at its line, not an InternalError."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import InternalError, ProblemsError

RNG = np.random.default_rng(17)
QUERIES = RNG.standard_normal((3, 4)).astype(np.float32)
W_Q = RNG.standard_normal((4, 5)).astype(np.float32)
NAMES = [0.5, 1.5, 2.5, 3.5]


@leapp.compile
def scale_by_ones(x):
    return x * np.ones(4).astype(np.float32)


@leapp.compile
def attend(x):
    q = np.einsum("qd,de->qe", QUERIES, W_Q)
    return x @ q.T


@leapp.compile
def any_of(a, b, c):
    return np.logical_or.reduce([a, b, c])


@leapp.compile
def sum_of(a, b, c):
    return np.add.reduce([a, b, c * 2])


@leapp.compile
def sized_by_constants(x):
    n = int(np.ones(3).sum())
    return x[:n] * float(np.arange(4).max())


@leapp.compile
def lookup_names(x, idx):
    return x * np.array([NAMES[i] for i in idx])


def _fresh(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_a_call_on_constants_only_folds_and_the_graph_follows_the_input():
    for seed in (0, 1):
        x = _fresh(4, seed)
        np.testing.assert_array_equal(scale_by_ones(x), x * np.ones(4).astype(np.float32))
        y = _fresh(5, seed)
        np.testing.assert_allclose(attend(y), y @ np.einsum("qd,de->qe", QUERIES, W_Q).T, rtol=1e-6)
    assert len(scale_by_ones.graphs) == 1 and len(attend.graphs) == 1


def test_ufunc_reduce_over_a_list_of_traced_arrays_traces(tmp_path):
    for seed in (2, 3):
        a, b, c = (_fresh(6, seed + k) > 0.3 for k in range(3))
        got = any_of(a, b, c)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, np.logical_or.reduce([a, b, c]))
        x, y, z = (_fresh(6, seed + k) for k in range(3))
        np.testing.assert_allclose(sum_of(x, y, z), np.add.reduce([x, y, z * 2]), rtol=1e-6)
    # the node is in the graph (not a constant): the exported file computes it too
    import onnxruntime as ort

    sum_of.export(tmp_path / "sum.onnx")
    session = ort.InferenceSession(str(tmp_path / "sum.onnx"), providers=["CPUExecutionProvider"])
    x, y, z = (_fresh(6, 40 + k) for k in range(3))
    feed = dict(zip((i.name for i in session.get_inputs()), (x, y, z), strict=True))
    np.testing.assert_allclose(session.run(None, feed)[0], np.add.reduce([x, y, z * 2]), rtol=1e-6)


def test_int_and_float_of_values_built_from_constants_are_not_escapes():
    x = np.arange(5.0)
    np.testing.assert_array_equal(sized_by_constants(x), x[:3] * 3.0)
    x2 = -np.arange(5.0) * 2
    np.testing.assert_array_equal(sized_by_constants(x2), x2[:3] * 3.0)


def test_a_python_list_indexed_by_traced_data_is_refused_as_an_escape_once():
    with pytest.raises(ProblemsError) as info:
        lookup_names(np.ones(4), np.array([0, 1, 2, 3]))
    assert not isinstance(info.value, InternalError)
    text = str(info.value)
    line = lookup_names.fn.__code__.co_firstlineno + 2
    assert f"test_constants_fold.py:{line}:" in text and "a Python list indexed by a traced value" in text
    # once per site, not once per loop iteration
    assert text.count("a Python list indexed by a traced value") == 1
    assert "used as a Python integer" not in text


ACTIVATIONS = [np.tanh, np.sin]


@leapp.compile
def pick_activation(x, i):
    return ACTIVATIONS[i](x)


def test_a_python_list_indexed_by_a_python_int_argument_specialises():
    # `i` is a Python int: the pick is read by value (one graph per value), not an array op, and the
    # cross-check must not call the subscript a disagreement (it was an InternalError)
    x = _fresh(3, 5, np.float64)
    np.testing.assert_array_equal(pick_activation(x, 1), np.sin(x))
    np.testing.assert_array_equal(pick_activation(x, 0), np.tanh(x))
    np.testing.assert_array_equal(pick_activation(x * 2, 1), np.sin(x * 2))
    assert len(pick_activation.graphs) == 2
    assert "an item of a Python list (Python indexing: no array op)" in pick_activation.format_report()
