"""Outputs whose size follows the data, and sizes that escape into Python.

Masks, np.nonzero, one-argument np.where, np.flatnonzero and np.argwhere
trace into graphs whose output size follows the data: the graph is compared
with NumPy on inputs that select different numbers of elements. A size that
escapes into Python (a slice bound, len() of a refused op) is refused, and the
message points to the shape-stable np.where(mask, x, fill).
"""

from __future__ import annotations

import numpy as np
import pytest
from parity import check

from leapp.errors import EscapeError, UntracedCallError
from leapp.runtime.tracing import trace_function

X = np.array([[1.5, -2.0, 0.0], [3.0, -0.5, 4.0]])
SAMPLES = [(np.full((2, 3), -1.0),), (np.ones((2, 3)),), (np.array([[0.0, 2, -1], [-3, 0, 0]]),)]

CASES = {
    "boolean_mask": lambda a: a[a > 0],
    "mask_then_reduce": lambda a: (a[a > 0].sum(), a[a > 0] * 2),
    "nonzero_index": lambda a: (a[:, np.nonzero(a[0] > 0)[0]], a.ravel()[np.nonzero(a.ravel() < 0)[0]]),
    "nonzero_tuple": lambda a: np.nonzero(a),
    "where_one_argument": lambda a: np.where(a > 0),
    "flatnonzero_argwhere": lambda a: (np.flatnonzero(a), np.argwhere(a < 0)),
    "masked_assignment_keeps_shape": lambda a: np.where(a > 0, a, 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sizes_follow_the_data(name):
    check(CASES[name], X, samples=SAMPLES)


def test_sizes_really_differ_between_samples():
    traced = trace_function(lambda a: a[a > 0], (X,), {}, names=["a"], strict=True)
    sizes = {traced.node(a=s[0])[traced.node.output_names[0]].shape for s in SAMPLES}
    assert sizes == {(0,), (6,), (1,)}


def test_len_of_unique_is_refused_with_the_alternative():
    with pytest.raises(UntracedCallError, match=r"np\.where\(mask, x, fill\)"):
        trace_function(lambda a: a[: len(np.unique(a))], (X,), {}, names=["a"], strict=True)


def test_mask_sum_as_slice_bound_is_refused_with_the_alternative():
    with pytest.raises(EscapeError, match=r"np\.where\(mask, x, fill\)"):
        trace_function(lambda a: a.ravel()[: int((a > 0).sum())], (X,), {}, names=["a"], strict=True)


def test_traced_slice_bound_is_refused_with_the_alternative():
    with pytest.raises(EscapeError, match=r"np\.where\(mask, x, fill\)"):
        trace_function(lambda a: a.ravel()[: (a > 0).sum()], (X,), {}, names=["a"], strict=True)


COVERED = {"numpy.nonzero", "numpy.where", "numpy.flatnonzero", "numpy.argwhere", "ndarray.__getitem__"}


TRACED_COUNTS = {
    "roll": (lambda a: np.roll(a, (a > 0).sum()), "shift"),
    "full": (lambda a: np.full((a > 0).sum(), 1.0), "shape"),
    "linspace": (lambda a: np.linspace(0.0, 1.0, (a > 0).sum()), "num"),
    "array_split": (lambda a: np.array_split(a.ravel(), (a > 0).sum())[0], "indices_or_sections"),
}


@pytest.mark.parametrize("name", sorted(TRACED_COUNTS))
def test_a_traced_count_as_a_size_or_shift_is_refused_at_the_call(name):
    # these reached lowering and failed there as an InternalError ("a leapp bug")
    from leapp.errors import UnsupportedArgumentError

    fn, argument = TRACED_COUNTS[name]
    with pytest.raises((UnsupportedArgumentError, EscapeError)) as caught:
        trace_function(fn, (X,), {}, names=["a"], strict=True)
    line = fn.__code__.co_firstlineno
    assert f"test_data_dependent_sizes.py:{line}" in str(caught.value)
    assert argument in str(caught.value) or "sizes must not depend on the data" in str(caught.value)


def roll_by_count(a):
    return np.roll(a, (a > 0).sum())


def test_a_traced_count_is_refused_through_leapp_compile_at_its_line():
    import leapp
    from leapp.errors import ProblemsError

    line = roll_by_count.__code__.co_firstlineno + 1
    with pytest.raises(ProblemsError, match=rf"test_data_dependent_sizes.py:{line}:\d+: .*shift is traced data"):
        leapp.compile(roll_by_count)(X)
