"""Strict leapp.compile never returns a silently frozen graph: each case traces exactly or is refused.

One test per silent case of issue 8; a refusal names the user's line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import leapp
from leapp.errors import ProblemsError

BIN_CENTERS = np.array([-1.0, -0.25, 0.5, 2.0], dtype=np.float32)
GRID = np.arange(12, dtype=np.float32).reshape(4, 3)
_LAST_ACTION = np.zeros(3, dtype=np.float32)
COUNT = 0
X = np.array([0.5, -1.0, 2.0], dtype=np.float32)


def _line(fn, offset):
    return f"{__file__}:{fn.__code__.co_firstlineno + offset}"


# --- a module-level constant array indexed by a traced index: traced as a gather ----------

def detokenize(tokens):
    return BIN_CENTERS[tokens] * 2.0


def rows(i):
    return GRID[i, :] + np.take(BIN_CENTERS, i)


def test_a_module_lookup_table_indexed_by_a_traced_index_is_traced():
    cf = leapp.compile(detokenize)
    for tokens in (np.array([0, 3, 1]), np.array([2, 2, 0])):  # the second call runs the graph
        np.testing.assert_array_equal(cf(tokens), detokenize(tokens))
    graph = cf.graphs[0]
    assert any(n.op == "get_attr" for n in graph.graph.nodes)  # the table is a constant of the graph
    assert "_leapp.getitem(" in cf.source.rewritten


def test_np_take_and_row_lookups_with_a_traced_index_are_traced():
    cf = leapp.compile(rows)
    for i in (np.array(1), np.array(3)):
        np.testing.assert_array_equal(cf(i), rows(i))


# --- another library on traced data: refused at the call ------------------------------------

def other_library(q):
    scale = _c_library_norm(q)
    return q / scale


def _c_library_norm(a):
    # stands in for compiled code that reads the buffer (scipy, a C extension): plain results
    return np.float64(math.sqrt(math.fsum(v * v for v in np.ndarray.tolist(np.asarray(a)))))


def buffer_from_a_helper(a):
    buf = _make_buffer(a)  # a helper making a buffer from the shape: a traced constant, fine
    buf[...] = a * 2.0
    return buf


def _make_buffer(a):
    return np.zeros(a.shape, a.dtype)


def test_a_buffer_made_by_a_helper_from_shapes_is_not_refused():
    cf = leapp.compile(buffer_from_a_helper)
    np.testing.assert_array_equal(cf(X), X * 2.0)
    np.testing.assert_array_equal(cf(X + 1.0), (X + 1.0) * 2.0)


def test_a_call_into_another_library_on_traced_data_is_refused_with_the_line():
    cf = leapp.compile(other_library)
    with pytest.raises(ProblemsError) as info:
        cf(X)
    message = str(info.value)
    assert f"{_line(other_library, 1)}:13: " in message
    assert "returned plain NumPy data computed from traced values" in message


def test_scipy_on_traced_data_is_refused_with_the_line():
    rotation = pytest.importorskip("scipy.spatial.transform").Rotation

    def euler(q):
        return rotation.from_quat(q).as_euler("xyz") + q[:3]

    cf = leapp.compile(euler)
    with pytest.raises(ProblemsError, match=r"Rotation\.as_euler at .*:\d+:16 returned plain NumPy data"):
        cf(np.array([0.0, 0.0, 0.38268343, 0.92387953]))


# --- writing a traced value into a module-level buffer: LP302 at compile time --------------

def remember(action):
    _LAST_ACTION[:] = action
    return _LAST_ACTION * 2.0


def test_a_write_into_a_module_buffer_is_refused_at_compile_time():
    cf = leapp.compile(remember)
    assert [d.code for d in cf.diagnostics] == ["LP302"]
    with pytest.raises(ProblemsError, match=rf"{_line(remember, 1)}:5: LP302"):
        cf(X)


# --- one array passed for two parameters, one updated in place; overlapping views ---------

def update_then_add(a, b):
    a += 1
    return a + b


def test_an_in_place_update_of_an_argument_is_refused_even_when_aliased():
    cf = leapp.compile(update_then_add)
    z = X.copy()
    with pytest.raises(ProblemsError, match=rf"{_line(update_then_add, 1)}:5: LP304"):
        cf(z, z)
    np.testing.assert_array_equal(z, X)  # the refused trace did not touch the caller's array


def test_the_runtime_refuses_an_argument_write_that_lint_missed():
    cf = leapp.compile(update_then_add)
    cf.source.analysis.diagnostics.clear()  # plant a lint without LP304
    with pytest.raises(ProblemsError, match=rf"{_line(update_then_add, 1)}: input 'a' is written in place"):
        cf(X.copy(), X.copy())


def weighted(a, b):
    return a * 2.0 + b


def test_overlapping_views_as_two_inputs_trace_exactly():
    base = np.arange(8, dtype=np.float32)
    cf = leapp.compile(weighted)
    np.testing.assert_array_equal(cf(base[:6], base[2:]), weighted(base[:6], base[2:]))
    other = base[::-1].copy()
    np.testing.assert_array_equal(cf(other[:6], other[2:]), weighted(other[:6], other[2:]))


# --- side effects leaving the function: refused, never dropped ------------------------------

def clip_in_place(x, lo, hi):
    np.clip(x, lo, hi, out=x)


class Integrator:
    def __init__(self):
        self.t = np.float32(0.0)

    def step(self, v, dt):
        self.t += dt
        return v * dt


def count_calls(x):
    global COUNT
    COUNT += 1
    return x * 2.0


@pytest.mark.parametrize("fn, args, offset, col", [
    (clip_in_place, (X.copy(), -0.5, 0.5), 1, 28),
    (count_calls, (X,), 2, 5),
], ids=["out=x", "global"])
def test_side_effects_are_refused_with_the_line(fn, args, offset, col):
    with pytest.raises(ProblemsError, match=rf"{_line(fn, offset)}:{col}: LP304"):
        leapp.compile(fn)(*args)


def test_a_write_to_self_is_refused_with_the_line():
    cf = leapp.compile(Integrator.step)
    with pytest.raises(ProblemsError, match=rf"{_line(Integrator.step, 1)}:9: LP304 `self.t \+= dt`"):
        cf(Integrator(), X, np.float32(0.1))


# --- a constant made by a NumPy call is not mistaken for a lost trace ----------------------

def with_a_grid(x):
    return x * 2.0, np.linspace(0.0, 1.0, 3)


def test_a_deliberate_constant_output_from_a_numpy_call_is_kept():
    cf = leapp.compile(with_a_grid)
    out, grid = cf(X)
    np.testing.assert_array_equal(grid, np.linspace(0.0, 1.0, 3))
    np.testing.assert_array_equal(out, X * 2.0)
