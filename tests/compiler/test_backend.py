"""backend="inductor": the captured graph compiled by torch inductor, held to NumPy like the FX graph."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import leapp
from leapp.errors import LeappWarning
from leapp.runtime import session_graph

X = np.linspace(-2.0, 3.0, 24, dtype=np.float32).reshape(8, 3)
LOW = np.array([-1.0, -0.5, -1.0], np.float32)


def whiten(x):
    y = np.clip(x, LOW, 1.5) * 0.25 - x.mean(axis=-1, keepdims=True)
    return {"y": y, "flag": y[:, 0] > 0.0}


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="inductor needs a C compiler")
def test_inductor_backend_matches_numpy_and_validates():
    cf = leapp.compile(whiten, backend="inductor", validate=2)
    for x in (X, X * 3.0 - 1.0):
        got, want = cf(x), whiten(x)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
            assert got[k].dtype == want[k].dtype
    assert cf.backends == ["inductor"]
    assert cf._latest().validation.ok  # validation ran on the compiled code


def test_a_backend_that_disagrees_with_numpy_is_not_used(monkeypatch):
    def wrong(graph_module, example_inputs, backend):
        return lambda *tensors: {k: v + 1 for k, v in graph_module(*tensors).items()}

    monkeypatch.setattr(session_graph, "compile_runner", wrong)
    cf = leapp.compile(whiten, backend="inductor")
    with pytest.warns(LeappWarning, match="does not reproduce NumPy"):
        got = cf(X)
    np.testing.assert_array_equal(got["y"], whiten(X)["y"])
    assert cf.backends == ["fx"]


def test_a_compiled_runner_only_sees_the_layout_it_was_compiled_for(monkeypatch):
    seen = []

    def recording(graph_module, example_inputs, backend):
        shapes = [tuple(t.shape) for t in example_inputs]

        def run(*tensors):
            assert [tuple(t.shape) for t in tensors] == shapes and all(t.is_contiguous() for t in tensors)
            seen.append(True)
            return graph_module(*tensors)
        return run

    monkeypatch.setattr(session_graph, "compile_runner", recording)
    cf = leapp.compile(whiten, backend="inductor")
    cf(X)
    strided = np.zeros((8, 6), np.float32)
    strided[:, ::2] = X
    np.testing.assert_array_equal(cf(strided[:, ::2])["y"], whiten(X)["y"])
    node = cf._latest().node
    # another batch (call_batched frees the leading axis): the FX graph, not the compiled code
    np.testing.assert_array_equal(node.call_batched(x=X[:4])["y"], whiten(X[:4])["y"])
    assert torch.equal(node.run_torch(torch.from_numpy(X))["y"], torch.from_numpy(whiten(X)["y"]))
    assert len(seen) >= 2
