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


# --- operators: TracedNpArray's own, straight to the record (see traced._install_operators) ---------

XI = np.array([[-7, -1, 0, 5], [3, -4, 9, 2], [1, 6, -8, 4]], dtype=np.int64)
XS = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, 2.5, -3.0, 4.0], dtype=np.float32)

BINARY = {
    "+": (lambda a, b: a + b, np.add), "-": (lambda a, b: a - b, np.subtract),
    "*": (lambda a, b: a * b, np.multiply), "/": (lambda a, b: a / b, np.true_divide),
    "//": (lambda a, b: a // b, np.floor_divide), "%": (lambda a, b: a % b, np.remainder),
    "<": (lambda a, b: a < b, np.less), "<=": (lambda a, b: a <= b, np.less_equal),
    "==": (lambda a, b: a == b, np.equal), "!=": (lambda a, b: a != b, np.not_equal),
    ">": (lambda a, b: a > b, np.greater), ">=": (lambda a, b: a >= b, np.greater_equal),
}
BITWISE = {
    "&": (lambda a, b: a & b, np.bitwise_and), "|": (lambda a, b: a | b, np.bitwise_or),
    "^": (lambda a, b: a ^ b, np.bitwise_xor), "<<": (lambda a, b: a << b, np.left_shift),
    ">>": (lambda a, b: a >> b, np.right_shift),
}


def _same_record(fast, general):
    assert (fast.op, fast.kwargs, fast.dtype, fast.shape) == (general.op, general.kwargs, general.dtype,
                                                              general.shape)
    kinds = [(a.op if isinstance(a, type(fast)) else a) for a in fast.args]
    assert kinds == [(a.op if isinstance(a, type(general)) else a) for a in general.args]
    assert fast.loc[0] == __file__


def test_operators_record_what_the_ufunc_records_in_operand_order():
    for name, (op, ufunc) in BINARY.items():
        _same_record(_recorded(lambda x, op=op: op(x, x * 2.0)), _recorded(lambda x, u=ufunc: u(x, x * 2.0)))
        # a Python number on either side: the reflected operator keeps NumPy's operand order
        _same_record(_recorded(lambda x, op=op: op(x, 1.5)), _recorded(lambda x, u=ufunc: u(x, 1.5)))
        if ufunc.types[0][-1] == "?":
            continue  # 3.0 < x is x > 3.0 in Python itself (reflected comparison), as for any ndarray
        fast = _recorded(lambda x, op=op: op(3.0, x))
        assert fast.args[0] == 3.0 and fast.args[1].op == "input", name
        _same_record(fast, _recorded(lambda x, u=ufunc: u(3.0, x)))


def test_operators_match_numpy_on_signed_zeros_infinities_and_negative_ints():
    for op, _ in BINARY.values():
        with np.errstate(all="ignore"):
            check(lambda x, op=op: (op(x, x[::-1]), op(x, -0.0), op(-2.0, x), op(x, 3)), XS, n_fresh=1)
            check(lambda x, op=op: (op(x, -3), op(7, x), op(x, x[::-1])), XI, samples=[(XI[::-1] + 1,)])
    for op, _ in BITWISE.values():
        check(lambda x, op=op: (op(x, 3), op(x, x % 5 + 1), op(12, x % 5)), XI, n_fresh=1)


def power_forms(x):
    return x ** 0.5, x ** 2, x ** -1, x ** 1.0, 2.0 ** x


def test_power_keeps_ndarrays_scalar_shortcuts():
    # ndarray's ** runs x ** 0.5 as np.sqrt, x ** 2 as np.square, x ** -1 as np.reciprocal: the
    # record is what NumPy ran (NumPy versions differ on whether power itself agrees at -0.0, -inf)
    assert [_recorded(lambda x, e=e: x ** e).op for e in (0.5, 2, -1, 3.0)] == [
        "numpy.sqrt", "numpy.square", "numpy.reciprocal", "numpy.power"]
    with np.errstate(all="ignore"):
        check(power_forms, XS, n_fresh=1)
        cf = leapp.compile(power_forms)
        for got, want in zip(cf(XS), power_forms(XS), strict=True):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_operand_kinds_the_operators_leave_to_numpy():
    plain = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(lambda x: (x + plain, plain - x, x * [1.0, 2.0, 3.0, 4.0], x > np.float32(0.5)), X)
    check(lambda x: ((x % 2) & True, (x > 0) | False), XI)
    leapp.start("ops")
    x, small = annotate.input_tensors("n", {"x": X, "s": np.array([1, -2], dtype=np.int8)})
    assert (x == None).shape == X.shape  # noqa: E711 -- ndarray's comparison with an object
    try:
        small + 1000  # NEP 50: out of int8's range, NumPy raises; so does the traced operator
    except OverflowError:
        pass
    else:
        raise AssertionError("int8 + 1000 did not raise")
    annotate.output_tensors("n", {"y": x + 1.0, "t": small * 2})
    leapp.stop()


def test_operators_on_a_view_see_writes_to_its_base():
    def f(x):
        y = x.copy()
        v = y[1:]
        y[1, 0] = 100.0  # v must read this: the view's operators take the general path
        return v + 1.0, 2.0 * v, v < y[:2]

    check(f, X)
    cf = leapp.compile(f)
    for got, want in zip(cf(X), f(X), strict=True):
        np.testing.assert_array_equal(got, want)


def test_operators_through_leapp_compile_match_numpy():
    def obs(x, k):
        return ((x - 0.5) * 2.0 / (x + 10.0), x // 3.0, x % -2.0, 1.0 - x, (x >= 0.0) == (x < 1.0),
                (k << 2) ^ (k >> 1), -7 // k, k % 3)

    k = np.array([-7, -1, 3, 9], dtype=np.int64)
    cf = leapp.compile(obs)
    for sample in ((X, k), (X * -1.5, k[::-1] * 2 + 1)):
        for got, want in zip(cf(*sample), obs(*sample), strict=True):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_every_traced_array_has_its_slots_however_numpy_made_it():
    import copy
    import pickle

    leapp.start("slots")
    x = annotate.input_tensors("n", {"x": X})
    made = [pickle.loads(pickle.dumps(x)), copy.copy(x), np.ndarray.view(X, traced.TracedNpArray),
            traced.TracedNpArray((2,))]
    for m in made:
        assert type(m) is traced.TracedNpArray
        m._lp_parent, m._lp_root, m._lp_ver, m._lp_version, m._lp_plain  # noqa: B018 -- readable
    annotate.output_tensors("n", {"y": x + 1.0})
    leapp.stop()
