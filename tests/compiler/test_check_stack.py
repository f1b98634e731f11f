"""The lowering's own run of the graph on the differential check's stacked inputs.

Where the arguments share their rows, ``leapp.compile`` stacks the check's generated inputs and the
example before tracing (``check.stack_for``); the lowering runs the graph once on that stack, which
checks its dtypes and the example's block against the trace (``build.run_stacked``), and the check
takes those outputs instead of running the graph again. What the stacked block cannot show (the
graph on the example alone) is shown by the first call's own run on the example, which is compared
with the trace before it is returned; ``cf.trace``, ``cf.validate``, ``cf.export`` and another
thread's call run the graph on the example themselves (``_settle_self_check``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leapp
from leapp.errors import LeappInternalWarning, ProblemsError
from leapp.examples import robot_obs
from leapp.runtime import adapters, session_graph

X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


def squashed(x):
    return np.tanh(x) * 2.0 + 1.0


def mixes_rows(x):
    return x - x.mean(axis=0)


@pytest.fixture
def runs(monkeypatch):
    """How often the lowering ran the graph on a stack (and it stood) or on the example alone."""
    counts = {"stack": 0, "example": 0}
    stacked, alone = session_graph.run_stacked, session_graph.check_dtypes

    def on_stack(*a, **k):
        out = stacked(*a, **k)
        counts["stack"] += out is not None
        return out

    def on_example(*a, **k):
        counts["example"] += 1
        return alone(*a, **k)

    monkeypatch.setattr(session_graph, "run_stacked", on_stack)
    monkeypatch.setattr(session_graph, "check_dtypes", on_example)
    return counts


def test_the_robot_example_runs_its_graph_once_for_the_dtypes_the_sample_and_the_check(runs, monkeypatch):
    from leapp.runtime.session_graph import CompiledNode

    forwards = []
    real = CompiledNode.fx_forward

    def fx_forward(self):
        run, constants = real(self)
        return (lambda *t: forwards.append(1) or run(*t)), constants

    monkeypatch.setattr(CompiledNode, "fx_forward", fx_forward)
    inputs = robot_obs.example_inputs()
    cf = leapp.compile(robot_obs.step)
    got, want = cf(**inputs), robot_obs.step(**inputs)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6, atol=1e-6)
    assert runs == {"stack": 1, "example": 0}
    graph = list(cf._graphs.values())[0]
    assert graph.checked == 3 and not graph.node.unverified and graph.node.stacked_outputs is None
    # the check took the lowering's outputs: no run of its own before the first call's
    assert len(forwards) <= 1


def test_a_graph_that_mixes_rows_is_judged_on_the_example_by_its_first_call(runs):
    # its stacked outputs do not stand for the inputs alone (the check runs them one at a time);
    # the first call's run on the example is the self-check, as for any other graph
    cf = leapp.compile(mixes_rows)
    np.testing.assert_allclose(cf(X), mixes_rows(X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cf(X * 2), mixes_rows(X * 2), rtol=1e-12, atol=1e-15)
    assert runs == {"stack": 1, "example": 0}


def test_a_node_of_another_dtype_is_repaired_on_the_example_as_without_a_stack(runs, monkeypatch):
    # deleting run_stacked's dtype rule leaves the graph unrepaired: float64 where NumPy gives float32
    real = torch.tanh
    monkeypatch.setattr(adapters, "_generic_cache", {})
    monkeypatch.setattr(torch, "tanh", lambda t: real(t).double())
    x = X.astype(np.float32)
    cf = leapp.compile(squashed)
    got = cf(x)  # (the cast's LeappInternalWarning is held back in strict mode, as without a stack)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, squashed(x), rtol=1e-6)
    assert runs == {"stack": 0, "example": 1}


def test_a_node_of_another_shape_is_named_as_a_leapp_bug_as_without_a_stack(monkeypatch):
    # deleting run_stacked's shape rule turns this into a mismatch on the check's inputs instead
    from leapp.errors import InternalError

    real = torch.tanh
    monkeypatch.setattr(adapters, "_generic_cache", {})
    monkeypatch.setattr(torch, "tanh", lambda t: real(t)[..., :1])
    with pytest.raises(InternalError, match="the graph computes shape"):
        leapp.compile(squashed)(X)


def _wrong_at_the_example_batch(monkeypatch):
    """torch.tanh wrong on a first axis of 4 rows alone (the example's): the stack's 16 rows hold
    the example's block right, so only the graph's run on the example alone shows it."""
    real = torch.tanh
    monkeypatch.setattr(adapters, "_generic_cache", {})  # np.tanh's adapter, made afresh with it
    monkeypatch.setattr(torch, "tanh", lambda t: real(t) * 1.5 if t.shape[:1] == (4,) else real(t))


def test_a_graph_wrong_on_the_example_alone_is_refused_by_the_first_call(runs, monkeypatch):
    # deleting the first call's comparison (CompiledFunction._first_call) returns the wrong values
    _wrong_at_the_example_batch(monkeypatch)
    cf = leapp.compile(squashed)
    with pytest.raises(ProblemsError, match="self-check"):
        cf(X)
    assert runs["stack"] == 1 and not cf._graphs


def test_cf_trace_runs_the_self_check_on_the_example_itself(runs, monkeypatch):
    _wrong_at_the_example_batch(monkeypatch)
    with pytest.raises(ProblemsError, match="self-check"):
        leapp.compile(squashed).trace(X)


def test_without_strict_the_first_call_warns_as_the_trace_did(monkeypatch):
    _wrong_at_the_example_batch(monkeypatch)
    cf = leapp.compile(squashed, strict=False)
    with pytest.warns(LeappInternalWarning, match="does not reproduce the traced sample"):
        cf(X)


def test_a_right_graph_agrees_through_every_door_after_the_stacked_run(runs, tmp_path):
    import onnxruntime as ort

    cf = leapp.compile(squashed)
    np.testing.assert_allclose(cf(X), squashed(X), rtol=1e-12)
    np.testing.assert_allclose(cf(X * 3), squashed(X * 3), rtol=1e-12)
    assert runs == {"stack": 1, "example": 0}
    cf.export(str(tmp_path / "f.onnx"), "onnx")
    session = ort.InferenceSession(str(tmp_path / "f.onnx"))
    (out,) = session.run(None, {session.get_inputs()[0].name: X})
    np.testing.assert_allclose(out, squashed(X), rtol=1e-6)
