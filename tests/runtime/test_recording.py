"""Recording: scalars stay traced, methods bypass nothing, views alias, long chains, determinism."""

from __future__ import annotations

import sys

import numpy as np
import torch
from parity import check

from leapp.runtime.tracing import trace_function

F = np.linspace(-3, 4, 12, dtype=np.float32).reshape(3, 4)
I32 = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)


def test_numpy_scalar_results_stay_traced():
    # each of these freezes silently in tools that let NumPy scalars through
    check(lambda x: x.std() + 1e-6, F)
    check(lambda x: np.max(x) - np.min(x), F)
    check(lambda x: x - x[0, 0], F)
    check(lambda x: np.clip(x, x.min(), x.max()), F)
    check(lambda x: (x - x.mean()) / (x.std() + 1e-6), F)


def test_methods_that_bypass_numpy_hooks_record_their_own_op():
    w = np.arange(8, dtype=np.float32).reshape(4, 2)
    traced = check(lambda x: x.dot(w), F)
    assert any(n.op == "call_function" and "matmul" in str(n.target) for n in traced.node.graph_module.graph.nodes)
    check(lambda x: x.reshape(2, 6).repeat(2, axis=0), F)
    check(lambda x: x.take([0, 5, 7]), F)


def test_in_place_sort_and_fill_are_recorded():
    def f(x):
        y = x.copy()
        y.sort(axis=1)
        z = x.copy()
        z.fill(2.5)
        return y + z

    check(f, F)


def test_view_update_reaches_the_base():
    def f(x):
        y = x.copy()
        v = y[0:2]
        v *= 2
        return y

    check(f, F)


def test_view_of_a_view_and_transpose_view():
    def f(x):
        y = x.copy()
        t = y.T
        t[0] = -1
        r = y.reshape(-1)
        r[3:5] += 10
        return y

    check(f, F)


def test_stale_view_is_rederived_after_a_write_to_its_base():
    def f(x):
        y = x.copy()
        row = y[1]
        y += 100
        return row * 1

    check(f, F)


def test_preallocated_out_buffer():
    def f(x):
        out = np.empty_like(x)
        np.multiply(x, 3, out=out)
        np.add(out, 1, out=out)
        return out

    check(f, F)


def test_in_place_keeps_the_target_dtype():
    mean64 = np.array([0.5, 1.5, 2.5, 3.5])

    def f(x):
        y = x.copy()
        y -= mean64
        return y

    traced = check(f, F)
    assert traced.eager_result.dtype == np.float32


def test_buffer_created_inside_traced_code_records_writes():
    def f(x):
        buf = np.zeros((2, 4), np.float32)
        buf[0] = x[0]
        buf[1, 1:3] = x[2, :2]
        return buf

    check(f, F)


def test_reflected_and_in_place_operators():
    def f(x):
        y = 2 - x
        y += 1
        y *= x
        return 10 / (1 + y * y)

    check(f, F)


def test_bitwise_on_ints_logical_on_bools():
    check(lambda x: (x & 3) | (x ^ -2), I32)
    check(lambda x: ~x, I32)
    check(lambda x: ~(x > 0) | (x < -3), I32)


def test_long_chain_is_recorded_and_lowered_without_recursion():
    limit = sys.getrecursionlimit()

    def f(x):
        for _ in range(100_000):
            x = x + 1.0
        return x

    sys.setrecursionlimit(1000)
    try:
        traced = trace_function(f, (np.zeros(4, np.float32),), {}, names=["x"])
    finally:
        sys.setrecursionlimit(limit)
    out = traced.node(x=np.ones(4, np.float32))["output"]
    np.testing.assert_array_equal(out, np.full(4, 100_001.0, np.float32))


def test_graph_and_constant_names_are_deterministic():
    c = np.array([1.0, 2.0, 3.0, 4.0], np.float32)

    def f(x):
        return x * c + np.array([4.0, 3.0, 2.0, 1.0], np.float32)

    a = trace_function(f, (F,), {}, names=["x"]).node.graph_module
    b = trace_function(f, (F,), {}, names=["x"]).node.graph_module
    assert a.code == b.code
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    for (_, t1), (_, t2) in zip(a.named_buffers(), b.named_buffers(), strict=True):
        assert torch.equal(t1, t2)


def test_torch_interop_records_torch_ops_in_the_same_graph():
    def f(x):
        t = torch.from_numpy(x)
        u = torch.relu(t) * 2
        return u.numpy() + 1

    check(f, F)


def test_as_tensor_honours_dtype():
    def f(x):
        return torch.as_tensor(x, dtype=torch.float64).numpy() * 3

    traced = check(f, F)
    assert traced.eager_result.dtype == np.float64


def test_asarray_and_array_keep_tracing():
    def f(x):
        a = np.asarray(x)
        b = np.array(x)
        b[0, 0] = 0
        return a + b

    check(f, F)
