"""A converted branch that calls a function: converted when that function is proven free of side
effects (``leapp.ast_pass.convert.helpers``), recursively; refused naming the function otherwise.

Also here: a name assigned on some paths only (``convert.paths``), the side of a test the traced
input does not take (``runtime.branches.untaken``), and ``math`` results chosen by a select.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import leapp
from leapp.errors import ProblemsError

from .branchy_lib import helpers as lib

F32 = np.float32


def _agrees(cf, fn, inputs):
    for args in inputs:
        got, want = cf(*args), fn(*args)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert np.asarray(got).dtype == np.asarray(want).dtype


# --- the user's own helpers (same file: `leapp rewrite` of this file converts the same branches) ---


def unit(v):
    if v.ndim != 1:  # a raise decided by the helper's own static test is allowed
        raise ValueError("a vector")
    return v / np.linalg.norm(v)


def rotation(c, s):
    R = np.eye(2)
    R[0, 0], R[0, 1] = c, -s
    R[1, 0], R[1, 1] = s, c
    return R


def normalise_or_zero(v):
    n = np.linalg.norm(v)
    if n < 1e-9:
        return np.zeros_like(v)
    return unit(v)


def turn(v, a):
    if a.sum() > 0:
        R = rotation(np.cos(a[0]), np.sin(a[0]))
    else:
        R = rotation(np.cos(2 * a[0]), np.sin(2 * a[0]))
    return R @ v


def scale_in_place(v):
    v *= 2.0
    return v


def writes_argument(v):
    if v.sum() > 0:
        w = scale_in_place(v)
    else:
        w = -v
    return w


def test_user_helpers_in_branches_convert_and_match_numpy_on_both_sides():
    v = np.array([3.0, 4.0])
    cf = leapp.compile(normalise_or_zero)
    _agrees(cf, normalise_or_zero, [(v,), (np.zeros(2),), (v * 1e-12,)])
    assert len(cf.graphs) == 1
    a = np.array([0.5])
    cf = leapp.compile(turn)
    _agrees(cf, turn, [(v, a), (v, -a)])
    assert "converted to a select (R selected)" in cf.format_report()


def guarded_unit(v):
    n = np.linalg.norm(v)
    if n < 1e-6:
        return v * 0
    return v / n


def scaled_unit_in_an_arm(x):
    t = np.abs(x)
    if x.max() <= 0.5:
        t = guarded_unit(x)  # a new array on every return of the helper...
        t *= 0.5  # ...so the arm updates its own array, once
    return t + x


def scaled_unit_after_an_early_return(x):
    if x.min() < -0.5:
        return x * 2
    t = np.abs(x)
    if x.max() <= 0.5:
        t = guarded_unit(x)
    t *= 0.5  # the code after the early return updates the select's array (seed 7000397)
    return t + x


@pytest.mark.parametrize("fn", [scaled_unit_in_an_arm, scaled_unit_after_an_early_return])
def test_an_array_a_helper_makes_is_the_callers_own_to_update(fn):
    # a helper proven free of side effects whose every `return` makes a new array: its result is
    # updated in place as `t = x / n` would be (refused before: "updates `t` in place, which
    # running both branches would do twice")
    cf = leapp.compile(fn)
    assert cf.diagnostics == [] and all(b.converted for b in cf.source.branches)
    inputs = [np.array([0.2, 0.4], F32), np.array([0.0, 0.0], F32), np.array([1.0, 2.0], F32),
              np.array([-3.0, 0.2], F32)]
    cf.trace(inputs[0])
    for x in inputs:
        np.testing.assert_allclose(cf(x.copy()), fn(x.copy()), rtol=1e-6, atol=1e-7)
    assert len(cf.graphs) == 1


def test_a_helper_that_writes_into_its_argument_is_refused_naming_it():
    with pytest.raises(ProblemsError) as info:
        leapp.compile(writes_argument)(np.array([1.0, 2.0]))
    text = str(info.value)
    assert "calls `scale_in_place()`" in text and "`scale_in_place` (test_branch_helpers.py)" in text
    assert "updates `v` in place" in text


GAINS = np.array([[0.55, -2.2], [-0.17, -0.91], [1.25, -1.86]])


def flip_if_low(v):
    if v[0, 0] < 0.8:
        v = -v
    return v


def looked_up(idx):
    return flip_if_low(GAINS[idx] * 2.0)


def test_a_helper_called_on_a_module_table_looked_up_by_an_input_converts():
    # `GAINS[idx]` of an index input is a traced array (the walker routes it): the helper it is
    # handed to is routed too, and its branch converted. It was called as plain Python, and its
    # `if` refused as "bool() of a traced array" with no reason (everyday generator, seed 191)
    cf = leapp.compile(looked_up)
    _agrees(cf, looked_up, [(np.array([0, 1]),), (np.array([2, 1]),), (np.array([1, 2]),)])
    assert len(cf.graphs) == 1
    assert "converted to a select" in cf.format_report()


# --- library helpers, through the converted copy's globals ------------------------------------


def rotation_vector(w):
    return lib.quaternion_from_rotation_vector(w)


def test_library_helpers_on_both_sides_of_an_early_return():
    w = np.array([0.3, -0.2, 0.1])
    cf = leapp.compile(rotation_vector)
    _agrees(cf, rotation_vector, [(w,), (np.zeros(3),), (w * 5,)])
    assert "(quaternion_from_rotation_vector)" in cf.format_report()
    assert len(cf.graphs) == 1


def writes_through(v):
    return lib.writes_through_helper(v)


def recursive(x):
    return lib.recursive_helper(x)


def test_library_helpers_that_write_or_recurse_are_refused_naming_them():
    with pytest.raises(ProblemsError, match=r"`zero_first` \(helpers.py\) writes into `v\[0\]`"):
        leapp.compile(writes_through)(np.array([1.0, 2.0]))
    with pytest.raises(ProblemsError, match=r"`countdown` calls itself"):
        leapp.compile(recursive)(np.array([1.0, 2.0]))


# --- `math` on one side, a Python float on the other ------------------------------------------


def yaw(M):
    return lib.yaw(M)


def yaw_times(M, x):
    return x * lib.yaw(M)


def test_math_results_and_python_floats_are_selected_as_python_floats():
    c, s = np.cos(0.7), np.sin(0.7)
    M = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    degenerate = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    cf = leapp.compile(yaw)
    for m in (M, degenerate):
        assert float(cf(m)) == yaw(m)
    # NumPy keeps float32 for `x32 * <Python float>`: a graph in float64 would differ, so refused
    with pytest.raises(ProblemsError, match="math"):
        leapp.compile(yaw_times)(M, np.ones(2, F32))


def acos_or_zero(x):
    a = x[0]
    if a > 1:
        r = x * 0.0
    else:
        r = x * math.acos(a)  # math.acos(2.0) raises: on the side the example does not take, NaN
    return r


def test_math_on_the_side_the_example_does_not_take_does_not_raise():
    cf = leapp.compile(acos_or_zero)
    _agrees(cf, acos_or_zero, [(np.array([2.0, 1.0]),), (np.array([0.5, 1.0]),)])


# --- a name assigned on some paths only (ahrs.sarabandi) --------------------------------------


def two_guards(x):
    d = x.sum()
    if d > 0:
        a = np.sqrt(d)
    else:
        t = 3.0 - d  # `t` is assigned on this side only, and assigned again before each later read
        a = np.sqrt(t)
    e = x.max()
    if e > 1:
        b = e * 2.0
    else:
        t = 1.0 - e
        b = t * 0.5
    return a + b


def maybe_unbound(x, big):
    if big:  # a Python bool: `t` has a value on one path only
        t = x * 2.0
    if x.sum() > 0:
        y = x + 1.0
    else:
        y = t - x  # NumPy runs this only where `t` has a value; a select would run it always
    return y


def test_a_name_assigned_on_one_side_only_and_assigned_again_before_use_converts():
    cf = leapp.compile(two_guards)
    _agrees(cf, two_guards, [(np.array(v),) for v in ([1.0, 2.0], [-1.0, -2.0], [0.5, -3.0], [-2.0, 1.5])])
    assert len(cf.graphs) == 1


def test_a_name_without_a_value_on_every_path_is_refused_at_its_line_not_unbound():
    with pytest.raises(ProblemsError, match=r"`t` may have no value when the `if` runs .*line \d+"):
        leapp.compile(maybe_unbound)(np.array([1.0, 2.0]), False)


def every_arm_returns(x):
    if x.sum() > 0:
        x = x * 2.0  # read before it is assigned in this arm: passed in
        return x
    else:
        return -x


def test_an_arm_that_reads_then_assigns_a_name_gets_its_value():
    cf = leapp.compile(every_arm_returns)
    _agrees(cf, every_arm_returns, [(np.array([1.0, 2.0]),), (np.array([-1.0, -2.0]),)])


# --- a bounded `while` on the side the example does not take ----------------------------------


def halve_on_one_side(x):
    if x.sum() > 0:
        y = x
    else:
        y = x
        while np.abs(y).max() > 1.0:  # leapp: max-iterations=4
            y = y / 2.0
    return y


def numpy_halve_on_one_side(x):
    if x.sum() > 0:
        return x
    while np.abs(x).max() > 1.0:
        x = x / 2.0
    return x


def test_a_bounded_loop_on_the_side_the_example_does_not_take_traces():
    cf = leapp.compile(halve_on_one_side)  # the example would need 7 iterations on the other side
    for v in ([100.0, 1.0], [-3.0, 1.0], [5.0, -1.0]):
        np.testing.assert_array_equal(cf(np.array(v)), numpy_halve_on_one_side(np.array(v)))
    assert np.isnan(cf(np.array([-100.0, 1.0]))).all()  # needs 7 > 4 on the side taken: marked
    assert len(cf.graphs) == 1


def nested(x):
    return lib.nested_untyped_test(x)


def stacked(v):
    return lib.stacked(v, v.sum())


def test_an_untyped_test_inside_a_converted_library_branch_and_np_r_in_a_branch():
    cf = leapp.compile(nested)
    _agrees(cf, nested, [(np.array(v),) for v in ([1.0, 2.0], [0.0, 2.0], [-1.0, -2.0])])
    assert len(cf.graphs) == 1
    cf = leapp.compile(stacked)
    _agrees(cf, stacked, [(np.array([1.0, 2.0]),), (np.array([-1.0, -2.0]),)])


def early_then_acos(x):
    a = x[0]
    if a > 1:
        return x * 0.0
    return x * math.acos(a)  # after the early return the example takes: math.acos(2.0) is not raised


def test_the_code_after_an_early_return_the_example_takes_is_the_side_not_taken():
    cf = leapp.compile(early_then_acos)
    _agrees(cf, early_then_acos, [(np.array([2.0, 1.0]),), (np.array([0.5, 1.0]),)])


def _same(f):
    return f


@_same
def decorated(v):
    return v * 2.0


def calls_decorated(v):
    if v.sum() > 0:
        v = decorated(v)
    return v


def test_a_decorated_helper_is_refused_since_the_def_is_not_what_is_called():
    with pytest.raises(ProblemsError, match="`decorated` is decorated"):
        leapp.compile(calls_decorated)(np.array([1.0, 2.0]))


def test_a_helper_rebound_at_run_time_is_not_the_def_that_was_proven(monkeypatch):
    import sys

    from leapp.compiler import source

    monkeypatch.setattr(sys.modules[__name__], "unit", scale_in_place)  # writes into its argument
    (branch,) = source.read(normalise_or_zero).branches  # what leapp.compile plans (no rewrite to compare)
    assert not branch.converted
    assert "`unit` is not, at run time, the function defined at line" in branch.reason


def acos_steps(x):
    a = x * 1.0
    while a.max() < 0.9:  # leapp: max-iterations=3
        a = a + 0.5 + math.acos(a[0]) * 0.0  # a stopped iteration reaches a[0] > 1: math.acos raises
    return a


def test_math_in_an_iteration_that_already_stopped_does_not_raise():
    cf = leapp.compile(acos_steps)
    for v in ([0.3, 0.1], [0.0, -0.4], [0.95, 0.0]):
        x = np.array(v)
        np.testing.assert_allclose(cf(x), acos_steps(x))


# --- a test on what a helper returned: the static pass types the helper's result -------------


def energy(v):
    return np.sqrt((v * v).sum())


def label_of(v):  # returns a string, not an array: a test on it is plain Python
    if v.ndim == 1:
        return "vector"
    return "matrix"


def clip_by_energy(v):
    n = energy(v)
    if n > 1:
        v = v / n
    if label_of(v) == "vector":
        v = v * 2
    return v


def test_a_test_on_a_helpers_array_result_converts():
    # `n = energy(v)` then `if n > 1:`: before, the static pass did not know a same-file helper's
    # result is an array, so the `if` stayed Python and the trace refused "bool() of a traced
    # array", adding that lint had missed it (a leapp bug); now the helper's returns are typed
    cf = leapp.compile(clip_by_energy)
    _agrees(cf, clip_by_energy, [(np.array([3.0, 4.0]),), (np.array([0.3, 0.4]),),
                                 (np.array([-0.1, 0.0]),), (np.array([30.0, -40.0]),)])
    assert len(cf.graphs) == 1
    assert "line" in cf.format_report() and "converted to a select" in cf.format_report()
    # the string helper stays Python (its test is not on data): one `if` converted, not two
    assert cf.format_report().count("converted to a select") == 1
