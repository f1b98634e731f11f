"""Graph passes: node counts before/after, graph.lint, meta kept, values unchanged."""

from __future__ import annotations

import inspect

import numpy as np
import torch
import torch.fx

from leapp.examples import robot_obs
from leapp.runtime.passes import (
    CommonSubexpressionElimination,
    ConstantFolding,
    DeadCodeElimination,
    RemoveNoOps,
    optimize,
)
from leapp.runtime.tracing import trace_function


def _meta(node, dtype, shape, line):
    node.meta.update(leapp_dtype=np.dtype(dtype), leapp_shape=shape, leapp_source=f"user.py:{line}",
                     leapp_call="numpy.test")
    return node


def _graph():
    """x -> exp twice (CSE), a dead op (DCE), const*const (folding), no-op cast and reshape."""
    root = torch.nn.Module()
    root.register_buffer("_tensor_constant0", torch.arange(4, dtype=torch.float32))
    root.register_buffer("_tensor_constant1", torch.full((4,), 2.0))
    root.register_buffer("_tensor_constant2", torch.ones(3))  # read only by the dead op
    g = torch.fx.Graph()
    x = _meta(g.placeholder("x"), np.float32, (2, 4), 1)
    e1 = _meta(g.call_function(torch.exp, (x,)), np.float32, (2, 4), 2)
    e2 = _meta(g.call_function(torch.exp, (x,)), np.float32, (2, 4), 3)
    c0 = _meta(g.get_attr("_tensor_constant0"), np.float32, (4,), 4)
    c1 = _meta(g.get_attr("_tensor_constant1"), np.float32, (4,), 4)
    scale = _meta(g.call_function(torch.mul, (c0, c1)), np.float32, (4,), 4)
    shifted = _meta(g.call_function(torch.add, (scale, 1.0)), np.float32, (4,), 5)
    dead = _meta(g.call_function(torch.neg, (g.get_attr("_tensor_constant2"),)), np.float32, (3,), 6)
    del dead
    s = _meta(g.call_function(torch.add, (e1, e2)), np.float32, (2, 4), 7)
    cast = _meta(g.call_method("to", (s, torch.float32)), np.float32, (2, 4), 8)
    same = _meta(g.call_function(torch.reshape, (cast, (-1, 4))), np.float32, (2, 4), 9)
    out = _meta(g.call_function(torch.mul, (same, shifted)), np.float32, (2, 4), 10)
    g.output({"y": out})
    return torch.fx.GraphModule(root, g)


def test_each_pass_reports_counts_and_keeps_values():
    x = torch.linspace(-1, 1, 8).reshape(2, 4)
    gm = _graph()
    want = gm(x)["y"]
    assert len(gm.graph.nodes) == 14
    r = RemoveNoOps()(gm)
    assert (r.modified, r.nodes_before, r.nodes_after, r.changed) == (True, 14, 12, 2)
    r = CommonSubexpressionElimination()(gm)
    assert (r.nodes_before, r.nodes_after) == (12, 11)
    r = DeadCodeElimination()(gm)
    assert (r.nodes_before, r.nodes_after) == (11, 9)
    assert not hasattr(gm, "_tensor_constant2")  # its only reader died, so the buffer goes too
    r = ConstantFolding()(gm)
    assert (r.nodes_before, r.nodes_after, r.changed) == (9, 6, 1)
    folded = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert [n.target for n in folded] == ["_tensor_constant2"]  # next free number: deterministic
    assert folded[0].meta["leapp_source"] == "user.py:5"  # the folded op's line, for messages
    assert torch.equal(gm._tensor_constant2, torch.arange(4.0) * 2 + 1)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [torch.exp, torch.add, torch.mul]
    gm.graph.lint()
    torch.testing.assert_close(gm(x)["y"], want, rtol=0, atol=0)
    assert not DeadCodeElimination()(gm).modified  # a fixed point


def test_optimize_reaches_a_fixed_point_with_a_report():
    gm = _graph()
    report = optimize(gm)
    assert (report.nodes_before, report.nodes_after) == (14, 6)
    assert "14 -> 6 nodes" in report.describe()
    assert not report.results[-1].modified


def test_cse_keeps_literals_of_different_type_apart():
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.add, (x, 1))
    b = g.call_function(torch.add, (x, 1.0))
    c = g.call_function(torch.mul, (x, 0.0))
    d = g.call_function(torch.mul, (x, -0.0))
    g.output((a, b, c, d))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    assert not CommonSubexpressionElimination()(gm).modified


def test_random_and_in_place_ops_are_never_merged_or_folded():
    g = torch.fx.Graph()
    r1 = g.call_function(torch.rand, (3,))
    r2 = g.call_function(torch.rand, (3,))
    g.output((r1, r2))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    assert not CommonSubexpressionElimination()(gm).modified
    assert not ConstantFolding()(gm).modified


def test_passes_are_iterative_on_long_chains():
    g = torch.fx.Graph()
    x = g.placeholder("x")
    node = x
    for _ in range(5000):  # far past the recursion limit, with a duplicate and a dead op per step
        node = g.call_function(torch.add, (node, 1.0))
        g.call_function(torch.add, (node, 1.0))
    g.output({"y": node})
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    report = optimize(gm)
    assert (report.nodes_before, report.nodes_after) == (10002, 5002)
    assert gm(torch.zeros(2))["y"].tolist() == [5000.0, 5000.0]


def test_passes_keep_the_robot_example_exact():
    inputs = robot_obs.example_inputs(batch=3)
    names = list(inspect.signature(robot_obs.step).parameters)
    traced = trace_function(robot_obs.step, tuple(inputs[n] for n in names), {}, names=names, strict=True)
    fresh = robot_obs.example_inputs(batch=3, seed=7)
    before = traced.node(**fresh)
    report = traced.node.optimize()
    traced.node.graph_module.graph.lint()
    assert report.nodes_after <= report.nodes_before
    after = traced.node(**fresh)
    want = robot_obs.step(**fresh)
    for key, value in want.items():
        np.testing.assert_array_equal(after[key], before[key])
        np.testing.assert_allclose(after[key], value, rtol=1e-6, atol=1e-6)
    for n in traced.node.graph_module.graph.nodes:
        if n.op == "call_function":
            assert n.meta.get("leapp_source"), n  # every op still points at the user's line


def test_export_prep_makes_mixed_comparisons_explicit():
    from leapp.export.prep import prepare

    g = torch.fx.Graph()
    f = _meta(g.placeholder("f"), np.float32, (3,), 1)
    i = _meta(g.placeholder("i"), np.int64, (), 2)
    gt = _meta(g.call_function(torch.gt, (f, i)), np.bool_, (3,), 3)  # float vs int64 0-d
    lt = _meta(g.call_function(torch.lt, (f, 1)), np.bool_, (3,), 4)  # float vs int literal
    scaled = _meta(g.call_function(torch.mul, (2.0, f)), np.float32, (3,), 5)
    g.output({"gt": gt, "lt": lt, "scaled": scaled})
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    prepared, notes = prepare(gm, ["gt", "lt", "scaled"])
    assert notes == ["numpy.test at user.py:3: operands cast to torch.float32",
                     "numpy.test at user.py:4: operands cast to torch.float32"]
    calls = {n.target: n.args for n in prepared.graph.nodes if n.op == "call_function"}
    assert calls[torch.lt][1] == 1.0 and isinstance(calls[torch.lt][1], float)
    assert calls[torch.mul][1] == 2.0  # the scalar moved last
    x, k = torch.tensor([-1.0, 0.5, 3.0]), torch.tensor(0)
    for got, want in zip(prepared(x, k), gm(x, k).values(), strict=True):
        assert torch.equal(got, want)
