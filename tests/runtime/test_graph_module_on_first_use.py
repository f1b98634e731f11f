"""Lowering, its checks and the calls do not make the GraphModule; asking for it does, once.

torch.fx writing and compiling ``forward()`` was 40% of lowering a small graph; the dtype check
and the self-check interpret the graph instead (``build.Lowered``), and calls run leapp's own
forward (``runtime.forward``). The module made when asked for is an ordinary GraphModule: its
``forward()`` has the inputs' names (torch.export reads them), and calls run it from then on.
"""

from __future__ import annotations

import inspect
import threading

import numpy as np
import torch

from leapp.runtime.tracing import trace_function

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(4, 3)
V = np.arange(3, dtype=np.int32)


def prep(x, v):
    return {"y": np.clip(x - x.mean(axis=0), -1.0, 1.0) * 2.0, "n": v.sum()}  # a dtype NumPy widens


def _counting(monkeypatch):
    written = []
    real = torch.fx.GraphModule.recompile

    def recompile(self):
        written.append(threading.get_ident())
        return real(self)

    monkeypatch.setattr(torch.fx.GraphModule, "recompile", recompile)
    return written


def test_lowering_and_calls_write_no_module_and_asking_for_it_writes_it_once(monkeypatch):
    written = _counting(monkeypatch)
    node = trace_function(prep, (X, V), {}, names=["x", "v"]).node  # lowered, dtype-checked, self-checked
    assert written == []
    out = node(x=X, v=V)
    want = prep(X, V)
    np.testing.assert_array_equal(out["y"], want["y"])
    assert out["n"].dtype == want["n"].dtype == np.int64
    node(x=X * 2.0, v=V)
    assert written == []
    gm = node.graph_module
    assert len(written) == 1
    assert isinstance(gm, torch.fx.GraphModule) and "torch.clamp" in gm.code
    assert list(inspect.signature(gm.forward).parameters) == ["x", "v"]
    np.testing.assert_array_equal(node(x=X * 2.0, v=V)["y"], prep(X * 2.0, V)["y"])
    assert node.graph_module is gm and len(written) == 1


def test_threads_asking_for_the_module_at_once_get_one(monkeypatch):
    written = _counting(monkeypatch)
    node = trace_function(prep, (X, V), {}, names=["x", "v"]).node
    seen, start = [], threading.Barrier(4)

    def ask():
        start.wait()
        seen.append(node.graph_module)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(seen) == 4 and all(m is seen[0] for m in seen) and len(written) == 1
