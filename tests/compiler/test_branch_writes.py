"""Writes and in-place updates inside branches on data (copy-write-select), through @leapp.compile.

A branch that writes into an array the function itself made (``q *= -1`` after an
eigendecomposition, ``R[:, 2] = -R[:, 2]`` on ``np.array(R0)``) converts: the branch
works on a private copy, which flows out through the select. Each function is traced
once and its one graph run on inputs that take every side, against NumPy, values and
dtypes. A write the caller, a global, a closure or a live alias would see is refused,
naming the name, the alias and the line.
"""

from __future__ import annotations

import numpy as np
import pytest
from agree import same

import leapp
from leapp.errors import ProblemsError

F32 = np.float32


def normalize(x):
    v = x * 1.0
    n = np.linalg.norm(v)
    if n > 1e-6:
        v /= n  # float32 stays float32, as NumPy's in-place division does
    return v


def fix_handedness(R0):
    R = np.array(R0)
    if np.linalg.det(R) < 0:
        R[:, 2] = -R[:, 2]
    return R


def sign_fixed_row(A):
    M = A * 2
    q = M[0]  # a view of M, which nothing reads after the `if`
    if q[0] < 0:
        q *= -1
    return q


def unpacked_source_updated_after(x):
    t0 = np.tanh(x)
    w = x * 1
    k = x * 2
    if x[0] >= 0:
        w, k = t0, x * 3  # w is t0's array, k a new one
    t0[0] = 5.0
    return w + k


def fresh_in_a_nested_if_then_source_updated(x):
    t = x * 2
    y = x * 3
    if x.sum() > 0:
        if x[0] > 0:
            y = t + y  # a new array (on the paths that bind y at all): t's update does not reach it
    t /= 2
    return t + y


def fresh_after_a_rebinding(x):
    y = x * 2
    z = x * 3
    if x.sum() > 0:
        z = y  # rebound to another's array...
        z = z * 0.5  # ...then a new one on every path: the update below reaches z only
    z += 1.0
    return z + y


def computed_from_then_source_updated(x):
    t0 = np.tanh(x)
    w = x * 1
    if x[0] >= 0:
        if x[1] > 0:  # on some of the arm's paths: `w` may still be the array from before the `if`
            w = np.where(x > 0, x, t0)  # a new array computed from t0's values, not t0's array
    else:
        w = t0 * 2
    t0[-1] = t0[0] * 0.5  # (seed 7000071: refused, the arm's binding "read" t0)
    return w + t0


def copied_in_an_ifexp_then_source_updated(x):
    t0 = np.tanh(x)
    w = t0.copy() if x[0] >= 0 else x * 2
    t0 = t0 if x[1] > 0 else -t0  # the array t0 held, which nothing else holds, or a new one
    t0 += 1.0
    return w + t0


def _halved_difference(v, w):
    d = v - v * 0.5
    return d - w * 0.5  # a new array on every return


def _first_if_large(v, w):
    if v.max() > 1:
        return v  # the argument itself
    return w * 2


def helper_result_after_a_write(x):
    t0 = -x
    t1 = np.where(x > 0, x, t0)
    if x[0] > 0:
        t0 /= 2  # the arm writes on its copy of t0, and reads t1, which shares nothing with t0...
        x = t1 * 2
    t1 = _halved_difference(t1, t0)  # ...here too: the helper's result is new (seed 7000097)
    return t0 + x + t1


def helper_may_return_before_a_write(x):
    t0 = -x
    t1 = _first_if_large(t0, x)  # may be t0 itself...
    if x[0] > 0:
        t0 /= 2  # ...which NumPy's t1 would show
    return t0 + x + t1


def reference_or_written_copy(x):
    t = np.tanh(x)
    if t[0] <= 0.5:
        if x.mean() >= 0:
            t = x  # a reference to the parameter on this path...
        else:
            t[0] = t[-1] * 0.5  # ...not on this one: `t` is the function's array, written on a copy
    return t * 2


def rebound_on_every_path_before_the_update(x):
    r = np.tanh(x)
    t = x * 1
    if x[0] > 0:
        t = r  # `t` is r's array here...
    s = t + 1
    if x[1] > 0:  # ...until this `if` binds it to a new array on every path (seed 7000867)
        t = x * 2
    else:
        t = x * 3
    t *= 0.5  # so this update reaches neither r nor what the first `if` handed on
    return s + t + r


def viewed_only_after_the_write(x):
    t = np.tanh(x)
    with np.errstate(divide="ignore"):
        if x.min() > 0.5:
            return np.abs(x)
        t = x + 1
    if x.max() > 1:
        t = x - t * 0.5
    else:
        t *= -1  # the code after the early return writes the array t holds here (on a copy)...
        t = -x
    w = x[1:] - x[:-1]
    if t.sum() >= 0.5:
        w = t[1:]  # ...and this view, made after the write, is of another array (seed 7101066)
    return t + w.sum()


def copied_param(q):
    q = q.copy()
    if q[0] > 0:
        q[1] = q[0] * 2
    return q


def one_hot_chain(x):
    out = np.zeros(3, x.dtype)
    if x[0] > 0:
        out[0] = x[0]
    elif x[1] > 0:
        out[1] = x[1]
    else:
        out[2] = 1
    return out


def other_side_reads_the_original(x):
    y = x * 1
    if x.sum() > 0:
        y[0] = 0
        s = y.sum()
    else:
        s = y.sum()  # runs after the first branch while tracing: must see y unwritten
    return y, s


def in_a_loop(x):
    acc = np.zeros_like(x)
    for i in range(3):
        if x[i] > 0:
            acc[i] = x[i] * 2
    return acc


def both_return(x):
    y = x + 0
    if y[0] < 0:
        y[1] = 7
        return y
    else:
        return y * 2


def early_then_write(x):
    y = x * 1
    if y[0] > 5:
        y[1] = 0  # the early branch's own copy
        return y
    y[0] = -1  # the code after it runs while tracing after the early branch: on its own copy too
    return y


def filled_from_param(x):
    t = np.tanh(x)
    t[1:] = x[0]  # copies x's value into t: t holds no view of x
    if t[0] < 0:
        t *= -1
    return t


def int_update(k):
    i = k + 0
    if i[0] < 0:
        i += 1  # int stays int
    return i


def one_line(x):
    y = x * 2
    if y[0] < 0: y[0] = 1.0  # noqa: E701
    return y


def loop_then_write(x):
    if x[0] > 5:
        return x * 0.0
    t = x * 2
    k = np.zeros((), x.dtype)
    while t.sum() < 10 and k < 3:  # leapp: max-iterations=3
        t = t + 1  # every iteration binds t to a new array: after the loop t is still the function's
        k = k + 1
    if t[0] < 0:
        t[0] = 0.0
    return t


def made_before_then_loop(x):
    t = x * 2  # made before the early return: the code after it writes on its own copy
    if x[0] > 5:
        return np.tanh(t)
    k = np.zeros((), x.dtype)
    while t.sum() < 10 and k < 3:  # leapp: max-iterations=3
        t = t + 1
        k = k + 1
    if t[0] < 0:
        t[0] = 0.0
    return t


def astype_then_write(x):
    if x[0] > 5:
        return x * 0.0
    t = x.astype(x.dtype)  # astype copies (copy=True by default): t is the function's own
    if t[0] < 0:
        t[0] = 0.0
    return t


def chosen_then_write(x):
    if x[0] > 5:
        return x * 0.0
    t = x * 2 if x[1] > 0 else np.abs(x)  # either arm makes a new array
    if t[0] < 1:
        t /= 2
    return t


def canonical_then_normalised(q0):
    q = q0 * 1.0
    if q[0] < 0:
        q = -q
    q /= np.linalg.norm(q)  # the input taking no branch keeps q0 * 1.0: the function's own array
    return q


def rebound_then_written_after(x):
    y = x * 2
    if x[0] > 0:
        y = x
    y = np.array(y)  # a new array before the write below: the write does not reach x
    y[0] = 7.0
    return y


def rebound_on_some_paths_then_updated(x):
    t = np.minimum(x, 1.0)
    if x.mean() < 0:
        if x[0] > -1:  # t is new on this path only: the other keeps the function's own t
            t = t * 2
    t /= 2
    return t


def _same(got, want):
    same(got, want, rtol=1e-6, atol=1e-6)


CASES = [
    (normalize, [np.array([3.0, 4.0], F32), np.array([0.0, 0.0], F32)]),
    (fix_handedness, [np.eye(3), np.diag([1.0, 1.0, -1.0]), np.diag([2.0, -1.0, 1.0])]),
    (sign_fixed_row, [np.array([[1.0, 2.0], [3.0, 4.0]], F32), np.array([[-1.0, 2.0], [3.0, 4.0]], F32)]),
    (copied_param, [np.array([1.0, 5.0], F32), np.array([-1.0, 5.0], F32)]),
    (one_hot_chain, [np.array([1.0, 1.0], F32), np.array([-1.0, 2.0], F32), np.array([-1.0, -2.0], F32)]),
    (other_side_reads_the_original, [np.array([1.0, 2.0]), np.array([-1.0, -2.0])]),
    (in_a_loop, [np.array([1.0, -2.0, 3.0], F32), np.array([-1.0, 2.0, -3.0], F32)]),
    (both_return, [np.array([-1.0, 2.0], F32), np.array([1.0, 2.0], F32)]),
    (early_then_write, [np.array([6.0, 2.0], F32), np.array([1.0, 2.0], F32)]),
    (filled_from_param, [np.array([-1.0, 2.0, 3.0], F32), np.array([1.0, 2.0, 3.0], F32)]),
    (int_update, [np.array([-3, 2]), np.array([3, 2])]),
    (one_line, [np.array([-1.0, 2.0], F32), np.array([1.0, 2.0], F32)]),
    (reference_or_written_copy, [np.array([-1.0, 3.0], F32), np.array([-1.0, -2.0], F32), np.array([2.0, 1.0], F32)]),
    (viewed_only_after_the_write, [np.array([-1.0, 0.5], F32), np.array([1.0, 2.0], F32), np.array([-1.0, 3.0], F32),
                                   np.array([0.2, -2.0], F32), np.array([1.0, 0.2], F32)]),
    (helper_result_after_a_write, [np.array([1.0, -2.0, 3.0], F32), np.array([-1.0, 2.0, -3.0], F32)]),
    (made_before_then_loop, [np.array([1.0, 2.0], F32), np.array([6.0, 2.0], F32), np.array([-9.0, 30.0], F32),
                             np.array([-1.0, 0.5], F32)]),
    (loop_then_write, [np.array([1.0, 2.0], F32), np.array([6.0, 2.0], F32), np.array([-9.0, 30.0], F32),
                       np.array([-1.0, 0.5], F32)]),
    (astype_then_write, [np.array([1.0, 2.0], F32), np.array([6.0, 2.0], F32), np.array([-1.0, 0.5], F32)]),
    (chosen_then_write, [np.array([1.0, 2.0], F32), np.array([6.0, 2.0], F32), np.array([0.25, -0.5], F32),
                         np.array([3.0, -4.0], F32)]),
]


@pytest.mark.parametrize("fn,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_branch_that_writes_into_its_own_array_converts_and_agrees_with_numpy(fn, inputs):
    cf = leapp.compile(fn)
    assert cf.diagnostics == []
    assert cf.source.branches and all(b.converted for b in cf.source.branches)
    assert "_leapp.private(" in cf.source.rewritten
    cf.trace(inputs[0])
    for x in inputs:
        keep = x.copy()
        _same(cf(x), fn(x))
        np.testing.assert_array_equal(x, keep)  # the caller's array is never written
    assert len(cf.graphs) == 1


@pytest.mark.parametrize("fn", [canonical_then_normalised, rebound_then_written_after, fresh_after_a_rebinding,
                                fresh_in_a_nested_if_then_source_updated,
                                rebound_on_some_paths_then_updated, computed_from_then_source_updated,
                                copied_in_an_ifexp_then_source_updated, rebound_on_every_path_before_the_update])
def test_an_update_after_the_if_of_an_array_the_function_owns_converts(fn):
    # the select hands on a new array; an update after the `if` is exact when no one else holds
    # what the branches bound (the refusals below are the other case)
    cf = leapp.compile(fn)
    assert cf.diagnostics == [] and all(b.converted for b in cf.source.branches)
    for x in (np.array([1.0, 2.0], F32), np.array([-3.0, 4.0], F32), np.array([-0.5, -2.0], F32)):
        keep = x.copy()
        _same(cf(x), fn(x.copy()))
        np.testing.assert_array_equal(x, keep)


def test_both_sides_of_each_example_are_taken_by_numpy():
    # the inputs above are chosen so that NumPy itself takes each side
    assert np.linalg.norm([3.0, 4.0]) > 1e-6 >= np.linalg.norm([0.0, 0.0])
    assert np.linalg.det(np.eye(3)) > 0 > np.linalg.det(np.diag([1.0, 1.0, -1.0]))
    assert {bool(x[0] > 0) for x in CASES[4][1]} == {True, False}


def test_the_rewrite_writes_on_a_copy_that_flows_out():
    cf = leapp.compile(fix_handedness)
    text = cf.source.rewritten
    assert "R = _leapp.private(" in text and "(R,) = _leapp.if_(" in text


def test_onnx_export_of_a_branch_that_updates_in_place(tmp_path):
    cf = leapp.compile(normalize)
    cf(np.array([3.0, 4.0], F32))
    cf.export(tmp_path / "normalize.onnx", "onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "normalize.onnx"))
    name = session.get_inputs()[0].name
    for x in (np.array([3.0, 4.0], F32), np.array([0.0, 0.0], F32), np.array([-1.0, 2.0], F32)):
        (out,) = session.run(None, {name: x})
        np.testing.assert_allclose(out, normalize(x), rtol=1e-6)
        assert out.dtype == np.float32


def int_half(k):
    i = k + 0
    if i[0] < 0:
        i += 0.5  # NumPy: UFuncTypeError (same_kind casting); never a silent float result
    return i


def test_an_update_numpy_refuses_for_its_dtype_is_not_made_float():
    with pytest.raises(Exception, match="Cannot cast ufunc 'add' output"):
        int_half(np.array([-1, 2]))
    for k in (np.array([-1, 2]), np.array([1, 2])):
        with pytest.raises(Exception, match="Cannot cast ufunc 'add' output"):
            leapp.compile(int_half)(k)


# --- refused: who would see the write -------------------------------------------------------------


def param_update(q):
    if q[0] < 0:
        q *= -1
    return q


def view_of_param(x):
    v = x[:2]
    if v[0] < 0:
        v[0] = 0.0
    return v


def live_alias(x):
    y = x * 2
    v = y[1:]
    if y[0] < 0:
        y[1] = 5.0
    return y + v.sum()


BUFFER = np.zeros(2)


def global_write(x):
    if x[0] > 0:
        BUFFER[0] = x[0]
    return x * 1


def closure_reads(x):
    y = x * 1
    total = lambda: y.sum()  # noqa: E731
    if x[0] > 0:
        y[0] = 0.0
    return y + total()


def traced_index(x):
    y = x * 1
    j = np.argmax(x)
    if x[0] > 0:
        y[j] = 0.0
    return y


def test_a_write_at_an_index_on_data_runs_guarded():
    # `y[j] = 0` in the arm writes at np.where(path, j, 0) on the arm's own copy (runtime.branches.guarded_index)
    cf = leapp.compile(traced_index)
    for v in (np.array([1.0, 3.0, 2.0]), np.array([-1.0, 3.0, 2.0]), np.array([2.0, np.nan, 1.0])):
        np.testing.assert_array_equal(cf(v), traced_index(v))
    assert len(cf.graphs) == 1


def passed_away(x, keep):
    y = x * 1
    keep.append(y)
    if x[0] > 0:
        y[0] = 0.0
    return y


def unknown_value(x, keep):
    y = keep.pop()
    if x[0] > 0:
        y[0] = 0.0
    return y


def rebound_in_branch(x):
    y = x * 1
    if x[0] > 0:
        y = x[:1]  # the branch's own binding: a view of the parameter
        y[0] = 0.0
    return y


def list_write(x):
    rows = [x * 1, x * 2]
    if x[0] > 0:
        rows[0] = x * 3
    return rows[0] + rows[1]


def stored_in_a_list(x):
    y = x * 1
    box = list(x)
    box[0] = y  # a list keeps y itself
    if x[0] > 0:
        y[0] = 0.0
    return box[0]


def loop_binds_an_alias(x):
    t = x * 2
    k = np.zeros((), x.dtype)
    while t.sum() < 10 and k < 3:  # leapp: max-iterations=3
        t = x  # after the loop t may be the caller's array
        k = k + 1
    if t[0] < 0:
        t[0] = 0.0
    return t


def astype_no_copy(x):
    t = x.astype(x.dtype, copy=False)  # hands back x itself: a write would reach the caller
    if t[0] < 0:
        t[0] = 0.0
    return t


def alias_updated_after(x):
    y = x * 2
    if x.sum() > 0:
        z = y  # NumPy: z is y, so the update below changes y too
    else:
        z = x * 3
    z += np.maximum(x[0] - 100.0, 0.0)
    return y


def kept_alias_updated_after(x):
    y = x * 2
    z = y
    if x.sum() > 0:
        z = x * 3
    z += 1.0  # the input that takes no branch: z is still y
    return y


def source_updated_after(x):
    t0 = np.tanh(x)
    w = x * 1
    if x[0] >= 0:
        w = t0  # NumPy: w is t0, so the update below changes w too
    t0[0] = 5.0
    return w + 0


def view_source_updated_after(x):
    t0 = np.tanh(x)
    w = x * 1
    if x[0] >= 0:
        w = t0[1:]
    else:
        w = x[1:] * 2
    t0 += 1.0
    return w + 0


def ifexp_source_updated_after(x):
    t0 = np.tanh(x)
    w = t0 if x[0] >= 0 else x * 2  # NumPy: w is t0 on one side, so the update below changes w
    t0 += 1.0
    return w + 0


def ifexp_alias_updated_after(x):
    t0 = np.tanh(x)
    w = t0[1:] if x[0] >= 0 else x[1:] * 2
    w[0] = 5.0  # NumPy: changes t0[1] on one side
    return t0 + 0


def param_updated_after(q):
    if q[0] < 0:
        q = -q
    q /= np.linalg.norm(q)  # the input that takes no branch: q is the caller's array
    return q


def _line(fn, k):
    return fn.__code__.co_firstlineno + k


@pytest.mark.parametrize("fn,words", [
    (param_update, lambda f: f"updates `q` in place, and `q` is a parameter: the caller would see the write "
                             f"(line {_line(f, 2)})"),
    (view_of_param, lambda f: f"writes into `v[0]`, and `x` is a parameter (`v` may be a view of `x` "
                              f"(line {_line(f, 1)})): the caller would see the write (line {_line(f, 3)})"),
    (live_alias, lambda f: f"writes into `y[1]`, and `v` may be a view of `y` (line {_line(f, 2)}), read after "
                           f"the `if`, where NumPy would show the write (line {_line(f, 4)})"),
    (global_write, lambda f: "`BUFFER` is not a local of the function"),
    (closure_reads, lambda f: f"`y` is read by the function defined at line {_line(f, 2)}"),
    (passed_away, lambda f: f"`y` is passed to `keep.append`, which leapp cannot read at line {_line(f, 2)}"),
    (unknown_value, lambda f: f"`y` is bound to keep.pop(...) at line {_line(f, 1)}, which leapp cannot show is "
                              "a new array"),
    (rebound_in_branch, lambda f: f"writes into `y[0]` (an array or object shared with the other branch) "
                                  f"(line {_line(f, 4)})"),
    (list_write, lambda f: f"`rows` is bound to a `list` at line {_line(f, 1)}, which leapp cannot show is a new "
                           "array"),
    (stored_in_a_list, lambda f: f"`box` may be a view of `y` (line {_line(f, 3)}), read after the `if`"),
    (loop_binds_an_alias, lambda f: f"writes into `t[0]`, and `x` is a parameter (`t` may be a view of `x` "
                                    f"(line {_line(f, 4)})): the caller would see the write (line {_line(f, 7)})"),
    (alias_updated_after, lambda f: f"`z` is updated in place after the `if` (line {_line(f, 6)}) and the `if` "
                                    "branch binds it to an array it did not make"),
    (kept_alias_updated_after, lambda f: f"`z` is updated in place after the `if` (line {_line(f, 5)}) and the "
                                         f"input that takes no branch keeps the array from before the `if`, and "
                                         f"`z` may be a view of `y` (line {_line(f, 2)})"),
    (source_updated_after, lambda f: f"the `if` branch binds `w` to `t0`'s array, which is updated in place after "
                                     f"the `if` (line {_line(f, 5)})"),
    (unpacked_source_updated_after, lambda f: f"the `if` branch binds `w` to `t0`'s array, which is updated in "
                                              f"place after the `if` (line {_line(f, 6)})"),
    (view_source_updated_after, lambda f: f"the `if` branch binds `w` to `t0`'s array, which is updated in place "
                                          f"after the `if` (line {_line(f, 7)})"),
    (ifexp_source_updated_after, lambda f: f"it binds `w` to `t0`'s array, which is updated in place after it "
                                           f"(line {_line(f, 3)})"),
    (ifexp_alias_updated_after, lambda f: f"`w` is updated in place after it (line {_line(f, 3)}) and it binds `w` "
                                          "to `t0`'s array"),
    (helper_may_return_before_a_write, lambda f: f"the `if` branch updates `t0` in place, and `t1` may be a view "
                                                 f"of `t0` (line {_line(f, 2)}), read after the `if`"),
    (param_updated_after, lambda f: "the input that takes no branch keeps the array from before the `if`, and "
                                    "`q` is a parameter"),
    (astype_no_copy, lambda f: f"`t` is bound to x.astype(...) at line {_line(f, 1)}, which leapp cannot show is "
                               "a new array"),
])
def test_a_write_someone_else_would_see_is_refused_naming_who(fn, words):
    cf = leapp.compile(fn, strict=False)
    lp202 = [d for d in cf.diagnostics if d.code == "LP202"]
    assert len(lp202) == 1 and "leapp cannot convert it" in lp202[0].message
    assert words(fn) in lp202[0].message, lp202[0].message
    with pytest.raises(ProblemsError):
        leapp.compile(fn)(np.array([1.0, 2.0]), *([[np.zeros(2)]] if fn in (passed_away, unknown_value) else []))


def reshaped_param(x):
    x = x.reshape(-1)  # rebound, but still a view of the caller's array
    if x[0] < 0:
        x[0] = 0.0
    return x


def test_a_parameter_rebound_to_a_view_of_itself_is_still_the_callers():
    cf = leapp.compile(reshaped_param, strict=False)
    (lp202,) = [d for d in cf.diagnostics if d.code == "LP202"]
    assert "writes into `x[0]`, and `x` is a parameter: the caller would see the write" in lp202.message


# --- a conditional expression hands on a new array too -----------------------------------------


def ifexp_result_written_after(x):
    t0 = np.tanh(x)
    w = t0 if x[0] >= 0 else x * 2
    w[0] = 5.0  # NumPy: writes into t0 too
    return t0 + 0


def ifexp_result_updated_after(x):
    t0 = np.tanh(x)
    w = t0 if x[0] >= 0 else x * 2
    w += 1.0
    return t0 + 0


def ifexp_kept_alias(x):
    y = x * 2
    z = y
    y = y if x[0] >= 0 else y * 3  # the old y is z's array too
    y += 1.0
    return y + z


@pytest.mark.parametrize("fn,words", [
    (ifexp_result_written_after, lambda f: f"`w` is updated in place after it (line {_line(f, 3)}) and it binds `w` "
                                           "to `t0`'s array"),
    (ifexp_result_updated_after, lambda f: f"`w` is updated in place after it (line {_line(f, 3)}) and it binds `w` "
                                           "to `t0`'s array"),
    (ifexp_kept_alias, lambda f: f"`y` is updated in place after it (line {_line(f, 4)}) and `z` may be a view of "
                                 "`y`"),
])
def test_a_conditional_expression_whose_array_is_updated_after_is_refused(fn, words):
    # the select's new array is not the one NumPy's update reaches: with check=0 these were silently
    # wrong (NumPy 5.0 or tanh + 1 where the graph kept tanh)
    x = np.array([1.0, 0.5, -0.5], F32)
    cf = leapp.compile(fn, strict=False, check=0)
    (lp202,) = [d for d in cf.diagnostics if d.code == "LP202"]
    assert "leapp cannot convert it" in lp202.message and words(fn) in lp202.message, lp202.message
    with pytest.raises(ProblemsError):
        leapp.compile(fn, check=0)(x)


def ifexp_own_array_updated_after(x):
    y = x * 2
    y = y if x[0] >= 0 else y * 3  # nothing else holds the old y: the update is the same either way
    y += 1.0
    return y


def ifexp_copied(x):
    t0 = np.tanh(x)
    w = t0.copy() if x[0] >= 0 else x * 2
    t0[0] = 5.0
    return w + t0


@pytest.mark.parametrize("fn", [ifexp_own_array_updated_after, ifexp_copied])
def test_a_conditional_expression_nothing_else_sees_converts(fn):
    cf = leapp.compile(fn)
    assert cf.diagnostics == [] and all(b.converted for b in cf.source.branches)
    for v in ([1.0, 0.5, -0.5], [-1.0, 0.5, 2.0]):
        x = np.array(v, F32)
        _same(cf(x), fn(x.copy()))


BINS = np.array([-1.0, 1.0])


def zero_then_bin(v):
    b = v.copy()
    if v.max() >= 2.0:
        b[..., 0] = 0.0
    i = np.digitize(b, BINS)
    j = np.searchsorted(BINS, b)
    return i, j


def test_a_lookup_of_the_written_array_in_a_module_table_is_no_view_of_it():
    # np.digitize / np.searchsorted / np.take make new arrays: `i = np.digitize(b, BINS)` after the
    # if was taken for a possible view of `b` and of the global BINS, and the write into `b` refused
    # ("`i` may be a view of `BINS`", everyday generator with branches, seed 98000722)
    cf = leapp.compile(zero_then_bin)
    for x in ([0.5, 3.0], [0.5, 0.2], [-2.0, 2.5]):
        x = np.array(x)
        same(cf(x), zero_then_bin(x), rtol=0)
    assert len(cf.graphs) == 1
