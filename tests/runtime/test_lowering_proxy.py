"""Lowering's own Proxy (``build._Proxy``) records the graph FX's Proxy records.

Adapters call torch functions on proxies; ``_Proxy.__torch_function__``
emits those nodes itself, cheaper than ``torch.fx.Proxy``'s. The generated
code must be the same text either way, for functions, tensor methods, list
arguments (``torch.cat``), keywords and FX's special cases.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from leapp.examples import robot_obs
from leapp.runtime import build
from leapp.runtime.tracing import trace_function

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(4, 3)


def mixed(x):
    y = np.clip(x, -1.0, 1.0)  # torch.clamp on proxies
    z = np.concatenate([y, x * 2.0], axis=1)  # torch.cat of a list of proxies
    w = np.stack((z, z + 1.0))  # a tuple
    s = np.sort(x, axis=0)  # tensor methods and keywords
    return w.sum(axis=(0, 2)), np.where(x > 0, x, -x).mean(), s.reshape(-1)[::2], np.cumsum(x, axis=1)


CASES = [
    (mixed, (X,), ["x"]),
    (robot_obs.step, tuple(robot_obs.example_inputs(batch=2).values()), list(robot_obs.example_inputs(batch=2))),
]


def _code(fn, args, names):
    return trace_function(fn, args, {}, names=names).node.graph_module.code


@pytest.mark.parametrize(("fn", "args", "names"), CASES, ids=["mixed", "robot_obs"])
def test_the_fast_proxy_records_what_fx_records(monkeypatch, fn, args, names):
    fast = _code(fn, args, names)
    calls = []
    real = build._Proxy.__torch_function__.__func__

    def counting(cls, *a, **k):
        calls.append(a[0])
        return real(cls, *a, **k)

    monkeypatch.setattr(build._Proxy, "__torch_function__", classmethod(counting))
    assert _code(fn, args, names) == fast
    assert calls, "no adapter went through the fast proxy: this test would compare nothing"
    monkeypatch.setattr(build._Proxy, "__torch_function__", torch.fx.Proxy.__torch_function__)
    assert _code(fn, args, names) == fast


def test_operator_overloads_and_keyword_operands_record_as_in_fx():
    def build_with(graph, proxy_type, tracer):
        p = proxy_type(graph.placeholder("x"), tracer)
        graph.output((torch.ops.aten.add(p, 1.0), torch.add(p, 2.0), torch.cat([p, p]), torch.ops.aten.cat([p, p]),
                      torch.clamp(input=p, min=0.0)))

    b = build.Builder()
    build_with(b.graph, build._Proxy, b.tracer)
    fx_graph = torch.fx.Graph()
    build_with(fx_graph, torch.fx.Proxy, torch.fx.proxy.GraphAppendingTracer(fx_graph))
    assert b.graph.python_code("self").src == fx_graph.python_code("self").src
    targets = [n.target for n in b.graph.nodes if n.op == "call_function"]
    assert torch.add in targets and torch.cat in targets and len(targets) == 5
