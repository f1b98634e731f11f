"""The retrace cache is bounded: least recently used graphs go, with one warning naming the function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import RetraceWarning


def scaled(x):
    return x * 2.0 + 1.0


def test_graphs_past_the_bound_are_dropped_least_recently_used_first_with_one_warning():
    cf = leapp.compile(scaled, max_signatures=3)
    for n in (1, 2, 3):
        cf(np.ones(n))
    with pytest.warns(RetraceWarning, match=r"leapp.compile\(scaled\).*max_signatures") as caught:
        cf(np.ones(4))
    assert len(caught) == 1
    assert [s.split("]")[0].strip("(") for s in cf.signatures] == ["ndarray[2", "ndarray[3", "ndarray[4"]
    cf(np.ones(2))  # called after the drop: it counts as the newest again
    cf(np.ones(5))
    assert [s.split("]")[0].strip("(") for s in cf.signatures] == ["ndarray[4", "ndarray[2", "ndarray[5"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetraceWarning)  # said once, not at every drop
        for n in (5, 6, 2):
            np.testing.assert_array_equal(cf(np.ones(n)), np.full(n, 3.0))  # 2 traces again
    assert len(cf.graphs) == 3


def test_the_default_bound_and_bad_values():
    assert leapp.compile(scaled)._graphs.limit == 64
    with pytest.raises(ValueError, match="max_signatures"):
        leapp.compile(scaled, max_signatures=0)
