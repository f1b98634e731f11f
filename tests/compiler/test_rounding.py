"""The default check tells rounding from a wrong graph (compiler/check.py ``_first_departure``).

A graph whose first departing value differs from NumPy's by rounding alone (an accumulation's
order, a transcendental's last bits) and which later calls magnify is warned (``RoundingWarning``,
``ReductionOrderWarning`` for accumulations), naming that call and line; anything else is refused.
Each test below fails when the piece it names is deleted.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leapp
from leapp.compiler import check
from leapp.errors import ProblemsError, ReductionOrderWarning, RoundingWarning
from leapp.runtime.tracing import trace_function

M_0 = np.array([0.756, -0.899, 0.565, -0.202], dtype=np.float16)
M_1 = np.array([-0.537, 1.036, -0.456, -0.015], dtype=np.float16)


def _norm_then_cancel(x):  # the everyday generator's seed 91001883, reduced
    y = x.copy()
    y[..., :1] = y[..., :1] / 4.0  # a view read, then its base written: NumPy's value of the view is gone
    y -= M_0
    # a float16 3-norm: torch takes it in float32 and rounds once (the 2-norm follows NumPy's steps
    # since, bit for bit, and no longer departs: docs/limitations.md)
    y /= np.linalg.norm(y, axis=-1, keepdims=True, ord=3) + 1e-6
    y -= M_1  # cancellation magnifies the norm's last bit
    return y


def _caught(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return caught


def test_float16_norm_magnified_by_cancellation_is_warned_at_the_norm():
    # guards: the order bound's scale taken from the graph's own operand values (a copy the graph
    # elided keeps no NumPy value), and the stale view left out of the comparison (else the
    # view's read is named as a wrong graph and refused)
    cf = leapp.compile(_norm_then_cancel)
    x = np.array([-2.324, -0.2188, -1.246, -0.7324], dtype=np.float16)  # departs by 0.001 at the end
    caught = _caught(cf, x)
    order = [w for w in caught if issubclass(w.category, ReductionOrderWarning)]
    assert order, [str(w.message) for w in caught]
    assert "numpy.linalg.norm at " in str(order[0].message) and "test_rounding.py:" in str(order[0].message)
    assert order[0].filename == __file__  # shown at the user's call, not inside leapp
    np.testing.assert_allclose(cf(x), _norm_then_cancel(x), rtol=1e-2, atol=2e-3)


def _read_then_written(x):
    y = x.copy()
    y[:1] = y[:1] / 4.0
    y -= 1.0
    return y


def test_a_view_read_before_its_base_was_written_keeps_no_later_value():
    x = np.array([8.0, 2.0, 3.0])
    traced = trace_function(_read_then_written, (x,), {}, names=["x"], keep_values=True)
    for node in traced.trace.nodes:
        if node.op == "ndarray.__getitem__" and node.index in traced.values:
            np.testing.assert_array_equal(traced.values[node.index], x[:1])  # not y[:1] after `y -= 1`


def _exp_magnified(x):
    return np.sin(np.exp(x) * 1e4)  # exp's last bit, times 1e4, inside sin


def test_transcendental_rounding_magnified_is_warned_not_refused():
    x = np.random.default_rng(0).normal(size=512).astype(np.float32)
    cf = leapp.compile(_exp_magnified)
    caught = _caught(cf, x)
    rounding = [w for w in caught if issubclass(w.category, RoundingWarning)]
    assert rounding and "numpy.exp at " in str(rounding[0].message), [str(w.message) for w in caught]
    assert not issubclass(rounding[0].category, ReductionOrderWarning)
    assert cf.graphs


def test_a_correctly_rounded_call_on_exact_operands_is_never_called_rounding():
    # IEEE rounds add exactly: one ulp off NumPy's on NumPy's own operands is a wrong graph
    graph = torch.fx.Graph()
    a = graph.placeholder("a")
    add = graph.call_function(torch.add, (a, a))
    add.meta["leapp_call"] = "numpy.add"
    want = np.array([1.0, 2.0], dtype=np.float32)
    got = np.nextafter(want, np.float32(3))
    assert not check._within_ulps(add, got, want, exact={a})
    assert check._within_ulps(add, got, want, exact=set())  # an operand already off: rounding upstream
    exp = graph.call_function(torch.exp, (a,))
    exp.meta["leapp_call"] = "numpy.exp"
    assert check._within_ulps(exp, got, want, exact={a})
    assert not check._within_ulps(exp, want * 1.001, want, exact={a})  # a thousandth is not rounding


def _frozen_by_buffer(x):
    out = np.empty(x.shape)
    with memoryview(np.ascontiguousarray(x)) as view:
        out[...] = np.array(view)
    return np.exp(out)


def test_a_frozen_value_is_still_refused():
    with pytest.raises(ProblemsError, match="First departure: a constant"):
        leapp.compile(_frozen_by_buffer)(np.linspace(-1.0, 1.0, 8))
