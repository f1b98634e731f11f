"""Lists of traced arrays passed where NumPy expects one array_like (np.sum([a, b]))."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import EscapeWarning
from leapp.runtime.tracing import trace_function

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = -2 * A + 1


@leapp.compile
def combine(a, b):
    total = np.sum([a, b], axis=0)
    mean = np.mean((a, b * 2))
    peak = np.maximum([a, b], 0.5)
    return total, mean, peak


def test_sequences_of_traced_arrays_trace_under_leapp_compile():
    got = combine(A, B)
    want = (np.sum([A, B], axis=0), np.mean((A, B * 2)), np.maximum([A, B], 0.5))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and np.allclose(g, w)
    a2, b2 = A + 3, B * 5  # the graph follows new inputs: nothing was frozen
    for g, w in zip(combine(a2, b2), (np.sum([a2, b2], axis=0), np.mean((a2, b2 * 2)),
                                      np.maximum([a2, b2], 0.5)), strict=True):
        assert np.allclose(g, w)


def test_without_the_rewrite_numpy_functions_convert_the_list_traced():
    # library and seed-API code call NumPy's functions directly: while a trace is open they are thin
    # wrappers that convert such a list traced (runtime/library_args.py), so nothing is frozen
    traced = trace_function(lambda a, b: (np.sum([a, b], axis=0), np.linalg.norm([a[0, 1], b[1, 2]])),
                            (A, B), {}, names=["a", "b"], strict=True)
    a2, b2 = A * 3 - 1, B + 7
    got = traced.node(a=a2, b=b2)
    want = (np.sum([a2, b2], axis=0), np.linalg.norm([a2[0, 1], b2[1, 2]]))
    for name, w in zip(traced.node.output_names, want, strict=True):
        assert np.allclose(got[name], w)


def test_without_the_rewrite_a_ufunc_given_a_list_is_reported():
    # a ufunc is not wrapped (it is an object with methods): its list is converted in C, and said so
    with pytest.warns(EscapeWarning, match="does not depend on the inputs"):
        trace_function(lambda a, b: np.maximum([a, b], 0.5), (A, B), {}, names=["a", "b"])
