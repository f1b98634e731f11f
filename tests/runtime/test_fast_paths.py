"""The per-op fast paths record exactly what the general path records.

Binary ufuncs, bare reductions (``x.sum()``) and basic indexing skip the
general recording path; each must give the same node (op, arguments, dtype,
shape, source line) and the same view semantics, or the graph, the
cross-check and error messages would drift apart.
"""

from __future__ import annotations

import numpy as np
from parity import check

import leapp
from leapp import annotate
from leapp.runtime import record, state, traced

X = np.linspace(-3, 4, 12, dtype=np.float32).reshape(3, 4)


def _recorded(fn):
    """The last node ``fn(x)`` records while a seed-API node is open, and its source line."""
    leapp.start("fast")
    x = annotate.input_tensors("n", {"x": X})
    out = fn(x)
    node = record.node_of(out)
    annotate.output_tensors("n", {"y": out})
    leapp.stop()
    return node


def test_bare_reduction_records_what_the_function_records():
    for method in ("sum", "mean", "max", "min", "prod", "std", "var", "any", "all"):
        fast = _recorded(lambda x, m=method: getattr(x, m)())
        general = _recorded(lambda x, m=method: getattr(np, m)(x))
        assert (fast.op, fast.kwargs, fast.dtype, fast.shape) == (general.op, general.kwargs, general.dtype,
                                                                  general.shape), method
        assert fast.args[0].op == "input" and len(fast.args) == 1
        assert fast.loc[0] == __file__
    assert _recorded(lambda x: x.sum(axis=0)).kwargs == {"axis": 0}  # arguments: the general path


def test_bare_reductions_and_binary_ops_match_numpy():
    check(lambda x: x.sum() + x.mean() * x.max() - x.min(), X)
    check(lambda x: (x * x).std() / (x.var() + 1.0), X)
    check(lambda x: np.maximum(x, x[::-1]) - x[1:3].sum(), X)


def test_each_op_records_its_own_line():
    def f(x):
        a = x + x
        b = a * a
        return b

    leapp.start("lines")
    x = annotate.input_tensors("n", {"x": X})
    out = f(x)
    b = record.node_of(out)
    annotate.output_tensors("n", {"y": out})
    leapp.stop()
    a = b.args[0]
    assert (a.op, b.op) == ("numpy.add", "numpy.multiply")
    first = f.__code__.co_firstlineno
    assert (a.loc[1], b.loc[1]) == (first + 1, first + 2)


def test_fast_slices_are_views_that_writes_reach():
    def f(x):
        y = x.copy()
        v = y[1:3]  # basic slice: the fast path, a view of y
        v[0] = -1.0
        w = y[0]
        return y + w.sum()

    check(f, X)


def test_hot_paths_read_the_per_thread_state():
    # the hooks read state.local / dispatch.local inline; they must be the objects current() reads
    assert traced._trace_of is state.local
    leapp.start("t")
    x = annotate.input_tensors("n", {"x": X})
    assert state.local.trace is state.current() is not None
    annotate.output_tensors("n", {"y": x + 1.0})
    leapp.stop()
