"""Early returns in the forms users and libraries write, through @leapp.compile against NumPy.

``if a: return p`` / ``elif b: return q`` / [``else: y = ...``] / ``return r``, and ``if c:
return z`` / ``else: y = ...`` (or mirrored, the ``else`` returning) followed by more code, are
the sequence of early returns Python runs alike (``if a: return p``; ``if b: return q``; the
``else`` body; the rest): each converts to one graph that takes every path as NumPy does, values
and dtypes. The rules of every arm still hold, and their refusals name the line.
"""

from __future__ import annotations

import numpy as np
import pytest
from agree import same

import leapp
from leapp.errors import ProblemsError

F32 = np.float32


def elif_returns(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    elif n > 10:
        return x / n * 10
    return x / n


def elif_returns_else(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    elif n > 10:
        return x / n * 10
    else:
        y = x / n
        z = y.sum()
    return y * 2 + z


def three_returns(x):
    m = x.mean()
    if m > 2:
        return x * 3
    elif m > 1:
        return x * 2
    elif m > 0:
        return x + 1
    return -x


def return_then_else(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    else:
        y = x / n
    return y * 2


def else_returns(x):
    n = np.linalg.norm(x)
    if n >= 1e-6:
        y = x / n
        s = n * 2
    else:
        return np.zeros_like(x)
    return y * s


def else_updates(x, k):
    q = x * 1.0  # the function's own array: the `else` writes on a private copy
    if q[0] > 5:
        return q
    else:
        q[1] = k
        q *= 2
    return q + 1


def early_then_elif_chain(x):  # several early returns in sequence, one of them a chain
    if x[0] > 3:
        return x * 0
    if x[1] > 3:
        return x * 2
    elif x[1] < -3:
        return x * 3
    return x


def returning_arm_after_one_that_does_not(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        y = x
    elif n > 10:
        return x / n
    else:
        y = x * 2
    return y


def returning_arms_between(x):  # m = 3 takes the `if`, whose test the early returns after it negate
    m = x.mean()
    if m > 2:
        y = x * 3
        s = m
    elif m > 1:
        return x * 2
    elif m > 0:
        y = x + 1
        s = m * 2
    else:
        return -x
    return y * s


def returning_arm_no_else(x):
    y = x
    m = x.mean()
    if m > 2:
        y = x * 3
    elif m > 1:
        return x * 2
    elif m > 0:
        y = x + 1
    return y * 2


def returning_arm_then_update(x):
    q = x * 1.0  # the function's own array: each arm and the code after write on private copies
    if q[0] > 2:
        q[1] = 0.0
    elif q[0] > 1:
        return q
    else:
        q *= 2
    q += 1
    return q


def every_path_of_an_arm_returns(x):
    # dm_control's _rmat_to_euler_xyx: the `if` arm returns on every path through an inner
    # `if`/`else`, so the function never falls off its end (was refused: "can fall off its end")
    if x[0] < 1.0:
        if x[0] > -1.0:
            return np.arccos(x[0]) * x
        else:
            return x * 3
    else:
        return x * 4


def an_early_arm_ends_in_a_chain_that_returns(x):
    m = x.mean()
    if m > 1:
        y = x * 2
        if y[1] > 3:
            return y
        elif y[1] > 0:
            return -y
        else:
            return y + 1
    return x - 1


SMALL = [np.array([0.0, 0.0, 0.0]), np.array([1.0, 2.0, 2.0]), np.array([30.0, 40.0, 0.0]),
         np.array([-1.0, 0.5, 0.0])]
CASES = [
    (elif_returns, SMALL),
    (elif_returns_else, SMALL),
    (three_returns, [np.array([3.0, 3.0]), np.array([1.5, 1.5]), np.array([0.5, 0.5]), np.array([-1.0, -2.0])]),
    (return_then_else, SMALL),
    (else_returns, SMALL),
    (early_then_elif_chain, [np.array([4.0, 0.0]), np.array([0.0, 4.0]), np.array([0.0, -4.0]),
                             np.array([0.0, 0.0]), np.array([4.0, 4.0])]),
    (returning_arm_after_one_that_does_not, [*SMALL, np.array([np.nan, 1.0, 1.0])]),
    (returning_arms_between, [np.full(3, v) for v in (3.0, 1.5, 0.5, -1.0, np.nan)]),
    (returning_arm_no_else, [np.full(3, v) for v in (3.0, 1.5, 0.5, -1.0, np.nan)]),
    (returning_arm_then_update, [np.array([v, 5.0, 6.0]) for v in (3.0, 1.5, 0.5, np.nan)]),
    (every_path_of_an_arm_returns, [np.array([v, 2.0, -1.0]) for v in (0.5, -0.5, -1.0, -3.0, 1.0, 3.0, np.nan)]),
    (an_early_arm_ends_in_a_chain_that_returns, [np.array([1.0, v, 2.5]) for v in (2.0, 0.5, -0.5, -9.0)]),
]


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("fn,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_one_graph_takes_every_path_as_numpy_does(fn, inputs, dtype):
    cf = _every_path_in_one_graph(fn, inputs, dtype)
    assert any(n.target is __import__("torch").where for n in cf.graphs[0].graph.nodes)


def _every_path_in_one_graph(fn, inputs, dtype):
    """``fn`` compiled with every branch converted, traced on the first input: one graph that gives
    NumPy's values on all of them."""
    cf = leapp.compile(fn)
    assert cf.diagnostics == []
    assert cf.source.branches and all(b.converted for b in cf.source.branches)
    cf.trace(inputs[0].astype(dtype))
    for v in inputs:
        same(cf(v.astype(dtype)), fn(v.astype(dtype)), rtol=1e-6)
    assert len(cf.graphs) == 1  # every path through the same graph
    return cf


def test_the_else_writes_on_its_own_copy():
    x = np.array([1.0, 2.0, 3.0], F32)
    cf = leapp.compile(else_updates)
    for v in (x, x * 10):
        kept = v.copy()
        same(cf(v, F32(7)), else_updates(v.copy(), F32(7)), rtol=1e-6)
        assert np.array_equal(v, kept)  # the caller's array is not written
    assert len(cf.graphs) == 1


def test_the_report_and_the_rewrite_name_each_early_return():
    cf = leapp.compile(elif_returns_else)
    text = cf.source.rewritten
    first = elif_returns_else.__code__.co_firstlineno
    assert text.count("_leapp.early(") == 2 and "= __leapp_if" in text  # the `else` runs as a function
    report = cf.format_report()
    assert f"line {first + 2}: an `if`/`elif` chain of early returns converted to 2 early return(s)" in report
    assert "then the `else` branch runs after it (y, z)" in report
    cf = leapp.compile(else_returns)
    assert "an `else` branch that returns (its test negated)" in cf.format_report()
    assert "_leapp.not_(" in cf.source.rewritten


def test_recorded_nodes_keep_the_users_lines():
    cf = leapp.compile(elif_returns_else)
    cf(np.array([1.0, 2.0, 2.0], F32))
    first = elif_returns_else.__code__.co_firstlineno
    lines = {str(n.meta.get("leapp_source")) for n in cf.graphs[0].graph.nodes}
    for offset in (3, 5, 7, 8, 9):  # zeros_like, x / n * 10, y = x / n, z = y.sum(), y * 2 + z
        at = f"{__file__}:{first + offset}"
        assert any(s == at or s.startswith(at + ":") for s in lines), (offset, lines)


def test_onnx_export_takes_every_path(tmp_path):
    cf = leapp.compile(elif_returns_else)
    x = np.array([1.0, 2.0, 2.0], F32)
    cf(x)
    cf.export(tmp_path / "f.onnx", "onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "f.onnx"))
    name = session.get_inputs()[0].name
    for v in SMALL:
        (out,) = session.run(None, {name: v.astype(F32)})
        np.testing.assert_allclose(out, elif_returns_else(v.astype(F32)), rtol=1e-6)


def raising_elif(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    elif n > 10:
        raise ValueError("too long")
    return x / n


def raising_else(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    else:
        if n > 10:
            raise ValueError("too long")
        y = x / n
    return y


def raising_if_returning_else(x):
    n = np.linalg.norm(x)
    if n > 10:
        x = x / n
        raise ValueError("too long")
    else:
        return x * 2


def writes_input_in_else(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    else:
        x[0] = 1.0
    return x


def unbound_after_else(x, flag=True):
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    else:
        if flag:
            y = x / n
    return y


def mixed_raising_elif(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        y = x
    elif n > 10:
        raise ValueError("too long")
    else:
        y = x / n
    return y


def mixed_updates_a_parameter_after(x):
    n = np.linalg.norm(x)
    if n < 1e-6:
        y = x  # NumPy's `y += 1` below writes into the caller's `x` on this path
    elif n > 10:
        return x / n
    else:
        y = x * 2
    y += 1
    return y


def mixed_unbound(x):
    m = x.mean()
    if m > 2:
        y = x * 3
    elif m > 1:
        return x
    elif m > 0:
        y = x + 1
    return y


def mixed_indexes_in_the_other_arm(x, j):
    m = x.mean()
    if m > 2:
        y = x * x[j]  # `j` may be out of range on the inputs that take the early return
    elif m > 1:
        return x
    else:
        y = x
    return y


@pytest.mark.parametrize("fn,words", [
    (mixed_raising_elif, "an `elif` branch raises: a check on data"),
    (mixed_updates_a_parameter_after, "`y` is updated in place after the `if`"),
    (mixed_unbound, "`y` is assigned in one branch only"),
    (raising_elif, "raises: a check on data"),
    (raising_else, "raises: a check on data"),
    (raising_if_returning_else, "the `if` branch raises: a check on data"),  # every arm exits: the raise is why
    (writes_input_in_else, "writes into `x[0]`"),
    (unbound_after_else, "`y` may have no value"),
])
def test_what_a_select_cannot_run_stays_refused_at_its_line(fn, words):
    text = _refusal(fn)
    assert words in text
    assert f"{__file__}:{fn.__code__.co_firstlineno + 2}" in text


def _refusal(fn, *args) -> str:
    """The LP202 refusal ``leapp.compile(fn)`` gives at its first call."""
    with pytest.raises(ProblemsError, match="LP202") as info:
        leapp.compile(fn)(np.array([1.0, 2.0, 2.0], F32), *args)
    return str(info.value)


@pytest.mark.parametrize("fn,cases", [
    (mixed_indexes_in_the_other_arm, [(np.array([3.0, 3.0, 3.0]), 1), (np.array([1.5, 1.5, 1.5]), 7),
                                      (np.array([0.0, 0.0, 0.0]), 7), (np.array([3.0, 3.0, np.nan]), 2)]),
    ("loop_indexes_after", [(np.array([1.0, 2.0, 2.0]), 9), (np.array([-1.0, 2.0, 2.0]), 2),
                            (np.array([-1.0, -2.0, 2.0]), 1)]),
    ("nested_then_index_after", [(np.array([1.0, 2.0, 3.0]), 9), (np.array([0.1, 0.2, 0.3]), 1),
                                 (np.array([-1.0, -2.0, 0.0]), 2)]),
])
def test_an_index_on_data_after_an_early_return_runs_guarded(fn, cases):
    # `j` is out of range on the inputs that return early (runtime.branches.guarded_index): the graph,
    # traced on such an input, takes every path as NumPy does
    fn = globals()[fn] if isinstance(fn, str) else fn
    cf = leapp.compile(fn)
    cf.trace(cases[0][0].astype(F32), np.int64(cases[0][1]))
    for x, j in cases:
        same(cf(x.astype(F32), np.int64(j)), fn(x.astype(F32), np.int64(j)), rtol=1e-6)
    assert len(cf.graphs) == 1


def test_the_mixed_chain_in_the_report_the_rewrite_and_onnx(tmp_path):
    fn = returning_arms_between
    cf = leapp.compile(fn)
    first = fn.__code__.co_firstlineno
    report = cf.format_report()
    assert (f"line {first + 2}: an `if`/`elif` chain whose returning arms follow one that does not converted "
            "to 2 early return(s)") in report
    text = cf.source.rewritten
    # the tests the early returns negate are computed once; each early return is under their negation
    assert f"__leapp_t{first + 2}_0 = m > 2" in text and f"__leapp_t{first + 2}_2 = m > 0" in text
    assert text.count("_leapp.early(") == 2 and text.count("_leapp.not_(") == 3 and "_leapp.if_(" in text
    x = np.array([3.0, 3.0, 3.0], F32)
    cf(x)
    cf.export(tmp_path / "m.onnx", "onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "m.onnx"))
    name = session.get_inputs()[0].name
    for v in (3.0, 1.5, 0.5, -1.0, np.nan):
        x = np.full(3, v, F32)
        (out,) = session.run(None, {name: x})
        same(out, fn(x), rtol=1e-6)


def nested_early(x):
    n = x.sum()
    if n > 0:
        if n > 5:
            return x * 5
        y = x * 2
    else:
        y = -x
    return y + 1


def nested_in_elif_and_else(x):
    m = x.mean()
    if m > 2:
        y = x * 3
    elif m > 0:
        t = x - 1
        if t.max() > 1.5:
            return t * 10
        y = t
    else:
        if m < -2:
            return x * 0
        y = x + 1
    return y * 2


def nested_after_top_level_early(x):
    if x[0] > 10:
        return x * 0
    s = x.sum()
    if s > 0:
        if x[1] > 2:
            return -x
        if x[2] > 2:
            return x * 7
        z = x / 2
    else:
        z = x
    return z + 1


NESTED = [
    (nested_early, [np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3]), np.array([-1.0, -2.0, 0.0]),
                    np.array([0.0, 0.0, 0.0])]),
    (nested_in_elif_and_else, [np.array([3.0, 3.0, 3.0]), np.array([1.0, 1.0, 3.0]), np.array([0.5, 0.5, 0.5]),
                               np.array([-3.0, -3.0, -3.0]), np.array([-1.0, -1.0, 0.0])]),
    (nested_after_top_level_early, [np.array([11.0, 0.0, 0.0]), np.array([1.0, 3.0, 0.0]),
                                    np.array([1.0, 1.0, 3.0]), np.array([1.0, 1.0, 1.0]),
                                    np.array([-1.0, 3.0, -5.0])]),
]


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("fn,inputs", NESTED, ids=[c[0].__name__ for c in NESTED])
def test_an_early_return_inside_a_branch_takes_every_path_as_numpy_does(fn, inputs, dtype):
    _every_path_in_one_graph(fn, inputs, dtype)


def test_the_nested_form_in_the_report_the_rewrite_and_onnx(tmp_path):
    cf = leapp.compile(nested_early)
    first = nested_early.__code__.co_firstlineno
    report = cf.format_report()
    assert f"line {first + 2}: `if` statement converted to a select (y selected), with 1 early return(s)" in report
    assert f"line {first + 3}: early `return` inside a converted branch converted to a select" in report
    assert "_leapp.if_returns(" in cf.source.rewritten and "_leapp.exit(" in cf.source.rewritten
    x = np.array([1.0, 2.0, 3.0], F32)
    cf(x)
    cf.export(tmp_path / "h.onnx", "onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "h.onnx"))
    name = session.get_inputs()[0].name
    for v in NESTED[0][1]:
        (out,) = session.run(None, {name: v.astype(F32)})
        np.testing.assert_allclose(out, nested_early(v.astype(F32)), rtol=1e-6)


def nested_then_write(x):
    n = x.sum()
    if n > 0:
        r = x * 2
        if n > 5:
            return r
        r[0] = 0.0  # NumPy returned `r` before this write on the inputs above 5
        y = r
    else:
        y = -x
    return y


def nested_then_write_after(x):
    q = x * 1.0
    if q.sum() > 0:
        if q[0] > 1:
            return q
        y = x
    else:
        y = -x
    q[1] = 5.0  # runs on every input in the graph: on its own copy, so the held `q` is kept
    return q + y


def nested_raising_after(x):
    n = x.sum()
    if n > 0:
        if n > 5:
            return x * 5
        y = x * 2
    else:
        y = -x
    if y.max() > 100:
        raise ValueError("too big")
    return y


def nested_not_at_top(x, k=2):
    for _ in range(k):
        if x.sum() > 0:
            if x[0] > 1:
                return x
            x = x * 2
        else:
            x = -x
    return x


@pytest.mark.parametrize("fn,words", [
    (nested_then_write, "writes into `r[0]` after the early return at line"),
    (nested_raising_after, "raises: a check on data"),
    (nested_not_at_top, "returns in the middle"),
])
def test_what_an_inner_early_return_cannot_hold_is_refused(fn, words):
    assert words in _refusal(fn)


def test_a_write_after_the_if_is_on_its_own_copy():
    cf = leapp.compile(nested_then_write_after)
    for v in (np.array([2.0, 1.0, 1.0], F32), np.array([0.5, 1.0, 1.0], F32), np.array([-1.0, -1.0, 0.0], F32)):
        same(cf(v), nested_then_write_after(v), rtol=1e-6)
    assert len(cf.graphs) == 1


def loop_early(x):
    for i in range(3):  # unrolled while tracing: each iteration's early return is held
        if x[i] > 0:
            return x * i
    return x


def loop_early_rest(x):
    s = x * 0.5
    for i in range(1, 3):
        t = x[i] - s[i - 1]
        if t > 1:
            return x * t
        s = s + t  # the rest of the body, and the later iterations, run after the held return
    return s * 2


def loop_two_early(x):
    if x.sum() > 100:  # an early return before the loop wins over those in it
        return x * 0
    for i in range(3):
        if x[i] > 2:
            return x * i
        if i == 1:  # Python decides: a plain return after the held ones merges them
            return x + 1
        if x[i] < -2:
            return -x
    return x


def with_early(x):
    n = x.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        if n == 0:
            return np.zeros_like(x)
        y = x / n
    return y


def loop_in_with(x):
    n = x.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(2):
            r = x / n
            if r[i] > 1:
                return r
    return x - n


def loop_then_write(x):
    q = x * 2
    for i in range(2):
        if q[i] > 3:
            return q
    q[0] = 0.0  # NumPy returned `q` before this write on the inputs above: written on a copy
    return q


HELD = [
    (loop_early, [np.array([-1.0, -2.0, 3.0, 0.0]), np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, 2.0, 3.0, 4.0]),
                  -np.ones(4), np.array([np.nan, 1.0, 1.0, 1.0])]),
    (loop_early_rest, [np.array([0.0, 3.0, 0.0]), np.zeros(3), np.array([0.0, 0.0, 5.0]), np.array([0.0, 1.2, 5.0]),
                       np.full(3, np.nan)]),
    (loop_two_early, [np.array([3.0, 0.0, 0.0]), np.array([0.0, 3.0, 0.0]), np.array([-3.0, 0.0, 0.0]),
                      np.array([0.0, 0.0, 0.0]), np.array([200.0, 3.0, 0.0]), np.array([np.nan, 0.0, 0.0])]),
    (with_early, [np.zeros(3), np.ones(3), np.array([1.0, -1.0, 0.0]), np.array([np.nan, 0.0, 0.0])]),
    (loop_then_write, [np.array([2.0, 0.0, 1.0]), np.array([0.0, 2.0, 1.0]), np.zeros(3), np.full(3, np.nan)]),
    (loop_in_with, [np.array([1.0, 2.0, 3.0]), np.array([2.0, -1.0, 0.0]), np.array([-1.0, 2.0, 0.0]),
                    np.zeros(3), np.array([1.0, np.nan, 0.0])]),
]


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("fn,inputs", HELD, ids=[c[0].__name__ for c in HELD])
def test_an_early_return_in_a_loop_or_a_with_block_takes_every_path_as_numpy_does(fn, inputs, dtype):
    _every_path_in_one_graph(fn, inputs, dtype)


def test_the_held_form_in_the_report_the_rewrite_and_onnx(tmp_path):
    import onnxruntime as ort

    for fn, inputs in (HELD[0], HELD[3]):
        cf = leapp.compile(fn)
        first = fn.__code__.co_firstlineno
        what = "a `for` loop over a `range`" if fn is loop_early else "a `with` block"
        assert f"line {first + 2 + (fn is with_early)}: early `return` inside {what} converted" in cf.format_report()
        text = cf.source.rewritten
        assert "= []  # leapp: converted" in text and ".append(__leapp_ret" in text
        assert "return _leapp.merge((__leapp_held" in text
        cf(inputs[0].astype(F32))
        cf.export(tmp_path / f"{fn.__name__}.onnx", "onnx")
        session = ort.InferenceSession(str(tmp_path / f"{fn.__name__}.onnx"))
        name = session.get_inputs()[0].name
        for v in inputs:
            (out,) = session.run(None, {name: v.astype(F32)})
            same(out, fn(v.astype(F32)), rtol=1e-6)


def loop_over_an_array(x):
    for v in x:
        if v > 0:
            return x * v
    return x


def loop_writes_the_held_array(x):
    for i in range(2):
        r = x * 2
        if r[i] > 3:
            return r
        r[0] = 0.0  # NumPy returned `r` before this write on the inputs above
    return x


def loop_then_write_a_view(x):
    q = x[0:2]
    for i in range(2):
        if x[i] > 3:
            return q
    q[0] = 0.0  # writes into the caller's `x`
    return x


def loop_indexes_after(x, j):
    for i in range(2):
        if x[i] > 0:
            return x
        x = x + x[j]  # `j` may be out of range on the inputs that returned
    return x


def with_raising_errstate(x):
    n = x.sum()
    with np.errstate(divide="raise"):
        if n == 0:
            return x
        y = x / n  # NumPy never divides by a zero `n`: it returned
    return y


def with_suppress(x):
    import contextlib

    with contextlib.suppress(ValueError):
        if x.sum() > 0:
            return x
        x = x * 2
    return x


def while_early(x):
    k = 0
    while k < 3:
        if x[k] > 0:
            return x * 2
        k += 1
    return x


def loop_falls_off(x):
    for i in range(3):
        if x[i] > 0:
            return x * i


def loop_early_with_else(x):
    y = x
    for i in range(3):
        if x[i] > 0:
            return x * i
        else:
            y = y + 1
    return y


@pytest.mark.parametrize("fn,words,args", [
    (loop_over_an_array, "inside a `for` loop over `x`", ()),
    (loop_writes_the_held_array, "writes into `r[0]` after the early return at line", ()),
    (loop_then_write_a_view, "the code after the early return writes into `q[0]`, and `x` is a parameter", ()),
    (with_raising_errstate, "would warn or raise on inputs NumPy never ran it on", ()),
    (with_suppress, "which leapp cannot show changes no value", ()),
    (while_early, "inside a `while`", ()),
    (loop_falls_off, "can fall off its end", ()),
    (loop_early_with_else, "with an `elif` or `else`", ()),
])
def test_what_a_held_early_return_cannot_hold_is_refused(fn, words, args):
    assert words in _refusal(fn, *args)


def two_deep(x):
    n = x.sum()
    if n > 0:
        t = x * 2
        if t.max() > 4:  # an `if` on data in a converted arm, whose own arm returns early
            if t[0] > 3:
                return t
            y = t - 1
        else:
            y = t
        y = y + 1
    else:
        y = -x
    return y * 2


def two_deep_in_both_arms(x):
    m = x.mean()
    if m > 0:
        if x[0] > 1:
            if x[1] > 1:
                return x * 3
            y = x
        elif x[2] > 1:
            if x[1] < 0:
                return x * 5
            y = -x
        else:
            y = x + 1
    else:
        if x[0] < -1:
            return x * 7
        y = x - 1
    return y


def two_deep_rebound_then_updated(x):
    t = np.tanh(x)
    if x[0] >= 0:
        t = t * 2
        if t.max() > 1:  # holds an early return: what it binds is not the arm's own after it...
            if t.min() >= 0:
                return t * x
            t = x / (np.abs(x) + 1)
        t = np.tanh(x + 1)  # ...until the arm binds a new array on every path (seed 5000111)
    t[1:] = x[-1]  # the update after the `if` reaches only the select's array, in NumPy too
    return t


def two_deep_fresh_through_the_holder(x):
    t = np.abs(x)
    if x[0] < 1:
        t = t * 2
        if t.min() >= 1:  # holds an early return that hands on a new array
            if x.mean() <= 1:
                return x + t
            t = t * x  # a new array on every path through the holder that goes on
        else:
            t = x * 3
    t /= 2  # the arm's own array, or the one from before the `if` that nothing else holds
    return t


def two_deep_returns_the_array_itself(x):
    t = np.abs(x)
    if x[0] < 1:
        t = t * 2
        if t.min() >= 1:
            if x.mean() <= 1:
                return t  # the held value is `t` itself: a later write into it would change it
            t = t * x
        t[0] = 5.0
    return t


DEEP = [
    (two_deep_fresh_through_the_holder, [np.array([0.5, 1.0, 2.0]), np.array([0.5, 2.0, 4.0]),
                                         np.array([0.0, 0.1, 0.2]), np.array([2.0, 1.0, 0.5]),
                                         np.array([0.6, 0.5, 0.7])]),
    (two_deep_rebound_then_updated, [np.array([1.0, 2.0, 3.0]), np.array([0.5, -2.0, 3.0]),
                                     np.array([0.1, 0.2, 0.1]), np.array([-1.0, 2.0, 3.0])]),
    (two_deep, [np.array([2.0, 1.0, 1.0]), np.array([1.0, 2.5, 0.0]), np.array([1.0, 1.0, 0.0]), -np.ones(3),
                np.array([np.nan, 1.0, 1.0])]),
    (two_deep_in_both_arms, [np.array([2.0, 2.0, 0.0]), np.array([2.0, 0.0, 0.0]), np.array([0.5, -1.0, 2.0]),
                             np.array([0.5, 1.0, 2.0]), np.array([1.0, 1.0, 1.0]), np.array([-2.0, 0.0, 0.0]),
                             np.array([-0.5, 0.0, 0.0]), np.full(3, np.nan)]),
]


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("fn,inputs", DEEP, ids=[c[0].__name__ for c in DEEP])
def test_an_early_return_two_converted_ifs_deep_takes_every_path_as_numpy_does(fn, inputs, dtype):
    _every_path_in_one_graph(fn, inputs, dtype)


def test_two_deep_in_the_report_the_rewrite_and_onnx(tmp_path):
    import onnxruntime as ort

    fn, inputs = next(c for c in DEEP if c[0] is two_deep_in_both_arms)
    cf = leapp.compile(fn)
    first = fn.__code__.co_firstlineno
    report = cf.format_report()
    for offset in (2, 3):  # the `if` and the `if`/`elif` in its arm: selects holding their arms' early returns
        assert f"line {first + offset}: `if` statement converted to a select (y selected), with 2 early" in report
    for offset in (4, 8, 14):
        assert f"line {first + offset}: early `return` inside a converted branch converted to a select" in report
    assert cf.source.rewritten.count("_leapp.if_returns(") == 3  # the elif's too
    cf(inputs[0].astype(F32))
    cf.export(tmp_path / "d.onnx", "onnx")
    session = ort.InferenceSession(str(tmp_path / "d.onnx"))
    name = session.get_inputs()[0].name
    for v in inputs:
        (out,) = session.run(None, {name: v.astype(F32)})
        same(out, fn(v.astype(F32)), rtol=1e-6)


def three_deep(x):
    if x.sum() > 0:
        if x[0] > 0:
            if x[1] > 0:
                if x[2] > 0:
                    return x
                y = x
            else:
                y = -x
        else:
            y = x * 2
    else:
        y = x * 3
    return y


def three_holders(x):
    if x.sum() > 0:
        if x[0] > 0:
            if x[1] > 5:
                return x
            if x[1] > 0:
                if x[2] > 0:
                    return -x
                y = x
            else:
                y = x * 2
        else:
            y = x * 3
    else:
        y = x * 4
    return y


def two_deep_then_write(x):
    if x.sum() > 0:
        q = x * 2  # the arm's own array
        if x[0] > 0:
            if x[1] > 0:
                return q
            y = x
        else:
            y = -x
        q[0] = 5.0  # the held return's value may be `q`
    else:
        y = x
    return y


def two_deep_under_a_plain_if(x, flag=True):
    if x.sum() > 0:
        if flag:  # Python decides: the return inside is not one leapp holds
            if flag:
                return x * 3
        y = x
    else:
        y = -x
    return y


def test_what_two_deep_cannot_hold_is_refused():
    assert "returns in the middle (line" in _refusal(three_deep)
    assert "it holds an early return three `if`s deep" in _refusal(three_holders)
    assert "writes into `q[0]` after the early return at line" in _refusal(two_deep_then_write)
    assert "writes into `t[0]` after the early return at line" in _refusal(two_deep_returns_the_array_itself)
    with pytest.raises(leapp.errors.ConversionError, match="a `return` inside a branch of this converted `if` ran "
                                                           "on a path leapp does not hold"):
        leapp.compile(two_deep_under_a_plain_if)(np.array([1.0, 2.0, 2.0], F32))
    # a plain test that is false there: Python's path, no return on it
    same(leapp.compile(two_deep_under_a_plain_if)(np.array([1.0, 2.0, 2.0], F32), False),
         two_deep_under_a_plain_if(np.array([1.0, 2.0, 2.0], F32), False), rtol=0)


def else_assigns_on_some_paths(x, scale=False):
    y = x
    n = np.linalg.norm(x)
    if n < 1e-6:
        return np.zeros_like(x)
    else:
        if scale:  # a plain flag: on the path that skips it, `y` keeps its value from before the `if`
            y = x / n
    return y * 2


@pytest.mark.parametrize("scale", [False, True])
def test_a_name_the_else_assigns_on_some_paths_keeps_its_value_on_the_others(scale):
    cf = leapp.compile(else_assigns_on_some_paths)
    for v in SMALL:
        same(cf(v.astype(F32), scale), else_assigns_on_some_paths(v.astype(F32), scale), rtol=1e-6)


def nested_then_index_after(x, j):
    n = x.sum()
    if n > 0:
        if n > 5:
            return x * 5
        y = x * 2
    else:
        y = -x
    return y * y[j]  # j out of range raises in NumPy only on inputs that reach it


def test_code_after_an_if_holding_early_returns_is_checked_as_after_an_early_return():
    assert "raises: a check on data" in _refusal(nested_raising_after)


def inside_a_plain_if(dq, unit=True):
    dq = np.asarray(dq, dtype=np.float64)
    if unit:  # Python decides: only the arm it picks runs
        real_norm = np.linalg.norm(dq[:4])
        if real_norm == 0.0:
            return np.r_[1.0, 0, 0, 0, dq[4:]]
        return dq / real_norm
    return dq


def inside_two_plain_ifs(C):
    if C.ndim < 3:
        if C.shape[-1] == 3:
            tr = np.clip(C.trace(), -1.0, 3.0)
            if np.isclose(tr, 3.0):
                return np.array([1.0, 0.0, 0.0, 0.0])
            n = 0.5 * np.sqrt(1.0 + tr)
            return np.array([n, C[1, 2] - C[2, 1], C[2, 0] - C[0, 2], C[0, 1] - C[1, 0]]) / (4 * n + 1)
        return np.zeros(4)
    return np.ones(4)


@pytest.mark.parametrize("unit", [True, False])
def test_an_early_return_inside_an_arm_python_decides(unit):
    cf = leapp.compile(inside_a_plain_if)
    assert all(b.converted for b in cf.source.branches)
    for v in (np.arange(8.0), np.r_[0, 0, 0, 0, 1.0, 2, 3, 4]):
        same(cf(v, unit), inside_a_plain_if(v, unit), rtol=1e-12)
    cf = leapp.compile(inside_two_plain_ifs)
    for m in (np.eye(3), np.diag([1.0, -1.0, -1.0]), np.array([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]])):
        same(cf(m), inside_two_plain_ifs(m), rtol=1e-12)
    assert len(cf.graphs) == 1


def falls_out_of_a_plain_if(x, flag=True):
    if flag:
        if x.sum() > 0:
            return x * 2
        x = x - 1
    return x


def test_an_early_return_whose_block_does_not_end_in_a_return_is_refused():
    with pytest.raises(ProblemsError, match="rest of that branch does not end in a `return`"):
        leapp.compile(falls_out_of_a_plain_if)(np.array([1.0, 2.0], F32))


@pytest.mark.parametrize("fn,converts", [
    *((c[0], True) for c in CASES + NESTED + HELD + DEEP),
    (three_deep, False),
    (three_holders, False),
    (two_deep_then_write, False),
    (loop_over_an_array, False),
    (loop_writes_the_held_array, False),
    (with_raising_errstate, False),
    (while_early, False),
    (inside_a_plain_if, True),
    (nested_then_write, False),
    (falls_out_of_a_plain_if, False),
])
def test_lint_says_what_compile_does(fn, converts):
    import inspect
    from textwrap import dedent

    from leapp.ast_pass import analyze_source

    source = "import numpy as np\n# leapp: trace\n" + dedent(inspect.getsource(fn))
    lint = [d.message for d in analyze_source(source, "t.py").diagnostics if d.code == "LP202"]
    x = np.arange(8.0) if fn is inside_a_plain_if else np.array([1.0, 2.0, 2.0])
    if converts:
        assert lint == []
        leapp.compile(fn)(x)
    else:
        with pytest.raises(ProblemsError) as info:
            leapp.compile(fn)(x)
        # the same reason (the snippet's line numbers differ from the file's)
        import re

        def reason(text):
            return re.sub(r"\d+", "N", text.split("cannot convert it: ")[-1].split(". Use")[0])

        assert lint and all(reason(m) in re.sub(r"\d+", "N", str(info.value)) for m in lint)
