"""One graph per signature, outputs in the function's structure, torch in -> torch out."""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import torch

import leapp

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(4, 3)


@leapp.compile
def scaled(x, factor):
    return np.tanh(x) * factor


def test_same_signature_does_not_retrace_and_new_shapes_or_dtypes_do():
    cf = leapp.compile(scaled.fn)
    cf(X, 2.0)
    cf(X + 1.0, 2.0)  # new values, same shapes and dtypes
    assert len(cf.graphs) == 1
    cf(X[:2], 2.0)  # new shape
    cf(X.astype(np.float64), 2.0)  # new dtype
    assert len(cf.graphs) == 3
    out = cf(X.astype(np.float64), 2.0)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, np.tanh(X.astype(np.float64)) * 2.0)
    assert len(cf.signatures) == 3 and "float64" in cf.signatures[2]


def test_a_new_python_number_runs_the_same_graph_it_is_an_input():
    cf = leapp.compile(scaled.fn)
    np.testing.assert_allclose(cf(X, 2.0), np.tanh(X) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(cf(X, 3.0), np.tanh(X) * 3.0, rtol=1e-6)
    assert len(cf.graphs) == 1
    cf(X, factor=3.0)  # the same call spelled with a keyword is the same signature
    cf(X, 3)  # an int is another type: another graph
    assert len(cf.graphs) == 2


def test_later_calls_run_the_graph_not_python(monkeypatch):
    cf = leapp.compile(scaled.fn)
    cf(X, 2.0)
    monkeypatch.setattr(np, "tanh", None)  # Python would now fail; the graph does not care
    np.testing.assert_allclose(cf(X * 0.5, 2.0), torch.tanh(torch.from_numpy(X * 0.5)).numpy() * 2.0,
                               rtol=1e-6)


def test_trace_returns_the_graph_module():
    cf = leapp.compile(scaled.fn)
    gm = cf.trace(X, 2.0)
    assert isinstance(gm, torch.fx.GraphModule)
    assert "torch.tanh" in gm.code
    assert cf.graphs == [gm]


Pair = namedtuple("Pair", "low high")


@leapp.compile
def structured(x):
    low = np.minimum(x, 0.0)
    high = np.maximum(x, 0.0)
    return {"pair": Pair(low, high), "stats": (x.mean(axis=0), [x.max(), x.sum()]), "n": 3}


def test_output_structure_is_kept():
    out = structured(X)
    assert set(out) == {"pair", "stats", "n"}
    assert isinstance(out["pair"], Pair)
    np.testing.assert_array_equal(out["pair"].low, np.minimum(X, 0.0))
    np.testing.assert_array_equal(out["pair"].high, np.maximum(X, 0.0))
    mean, (mx, total) = out["stats"]
    assert isinstance(out["stats"], tuple) and isinstance(out["stats"][1], list)
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(mx, X.max())
    np.testing.assert_allclose(total, X.sum(), rtol=1e-6)
    assert out["n"] == 3
    again = structured(X * 2.0)  # from the graph this time
    np.testing.assert_allclose(again["stats"][1][1], (X * 2.0).sum(), rtol=1e-6)


@leapp.compile
def single(x):
    return np.sqrt(np.abs(x))


def test_single_array_output_and_numpy_dtypes():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = single(ints)
    assert isinstance(out, np.ndarray) and out.dtype == np.sqrt(np.abs(ints)).dtype == np.float64


@leapp.compile
def nested_inputs(batch):
    return np.concatenate([batch["a"], batch["b"][0]], axis=0)


def test_nested_array_inputs_become_graph_inputs():
    batch = {"a": X[:1], "b": [X[1:3]]}
    np.testing.assert_array_equal(nested_inputs(batch), X[:3])
    np.testing.assert_array_equal(nested_inputs({"a": X[3:], "b": [X[:2]]}), np.concatenate([X[3:], X[:2]]))
    assert len(nested_inputs.graphs) == 1


def test_torch_inputs_give_torch_outputs_on_their_device():
    cf = leapp.compile(structured.fn)
    t = torch.from_numpy(X)
    out = cf(t)
    assert isinstance(out["pair"].low, torch.Tensor)
    assert out["pair"].low.dtype == torch.float32
    torch.testing.assert_close(out["pair"].high, torch.clamp(t, min=0.0))
    assert out["n"] == 3
    np_out = cf(X)  # NumPy in, NumPy out, from a second graph (a new signature)
    assert isinstance(np_out["pair"].low, np.ndarray)
    assert len(cf.graphs) == 2


def test_export_delegates_to_leapp_export(tmp_path):
    cf = leapp.compile(scaled.fn)
    cf(X, 2.0)
    target = tmp_path / "scaled.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit's own notice
        cf.export(target, format="torchscript")
        loaded = torch.jit.load(str(target))
    assert (tmp_path / "scaled.pt.json").exists()  # leapp.export's description next to it
    out = loaded(torch.from_numpy(X), torch.tensor(3.0, dtype=torch.float64))["output"]  # a bare array's name
    torch.testing.assert_close(out, torch.tanh(torch.from_numpy(X)) * 3.0)  # factor is an input
