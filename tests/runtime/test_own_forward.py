"""leapp's own forward (``runtime.forward``) computes what the GraphModule's computes.

Calls run it until something asks for the GraphModule; the differential check runs it once on
its generated inputs stacked, where they share a leading axis.
"""

from __future__ import annotations

import operator

import numpy as np
import torch

import leapp
from leapp.compiler import check
from leapp.runtime import forward
from leapp.runtime.tracing import trace_function

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(4, 3)
W = np.array([0.5, -1.5, 2.0], np.float32)


def varied(x, w):
    flipped = x[::-1, -1]  # a negative step and a negative index
    picked = np.where(x > 0, x, -0.0)  # a -0.0 literal
    mixed = np.einsum("ij,j->i", x, w)  # a string operand
    wide = x.astype(np.float64).sum(axis=-1)  # a dtype operand
    return {"a": np.concatenate([flipped, mixed]), "b": picked * 2.0, "c": wide, "d": np.nan_to_num(x / x)}


def test_leapps_forward_matches_the_graph_modules_bit_for_bit():
    node = trace_function(varied, (X, W), {}, names=["x", "w"]).node
    mine = node(x=X, w=W)  # no GraphModule yet: leapp's forward ran
    assert node._gm is None
    with torch.no_grad():
        theirs = node.graph_module(torch.from_numpy(X), torch.from_numpy(W))
    want = varied(X, W)
    for key, value in mine.items():
        np.testing.assert_array_equal(value, theirs[key].numpy())
        np.testing.assert_array_equal(value, want[key])
        assert value.dtype == want[key].dtype
    assert np.signbit(mine["b"]).tolist() == np.signbit(want["b"]).tolist()  # -0.0 stays -0.0


def test_a_negative_literal_keeps_its_sign_under_a_binary_operator():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output({"y": graph.call_function(operator.pow, (-2, x))})
    run, _ = forward.make_forward(graph, torch.nn.Module())
    got = run(torch.tensor([2.0, 3.0]))["y"]
    np.testing.assert_array_equal(got.numpy(), [4.0, -8.0])  # (-2) ** x, not -(2 ** x)


W3 = W * 3


def plus_w(x):
    return x + W


def plus_w3(x):
    return x + W3


def test_two_graphs_written_alike_keep_their_own_constants():
    # the code of equal texts is shared; what its names stand for is each graph's own
    first, second = leapp.compile(plus_w), leapp.compile(plus_w3)
    np.testing.assert_array_equal(first(X), X + W)
    np.testing.assert_array_equal(second(X), X + W3)
    np.testing.assert_array_equal(first(X * 2), X * 2 + W)
    assert first._latest().node._own_forward[1] is not second._latest().node._own_forward[1]


def centred(x):
    return x - x.mean(axis=0)  # mixes rows: a stacked run cannot stand for the runs one by one


def scaled(x):
    return np.clip(x * 2.0, -3.0, 3.0)


def test_a_graph_that_mixes_rows_is_checked_one_input_at_a_time(monkeypatch):
    seen = []
    real = check._agrees_batched
    monkeypatch.setattr(check, "_agrees_batched", lambda node, compared: seen.append(real(node, compared)) or seen[-1])
    cf = leapp.compile(centred)
    np.testing.assert_allclose(cf(X), centred(X))
    assert seen == [False] and cf._latest().checked == check.DEFAULT_SAMPLES  # checked, not refused
    stacked = []
    real_stacked = check._agrees_stacked
    monkeypatch.setattr(check, "_agrees_stacked", lambda *a, **k: stacked.append(real_stacked(*a, **k)) or stacked[-1])
    cf = leapp.compile(scaled)
    np.testing.assert_array_equal(cf(X), scaled(X))
    # rows on their own: NumPy and the graph each ran once on the stack (check.py, _agrees_stacked)
    assert stacked == [True] and seen == [False]
