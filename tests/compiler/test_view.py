"""``x.view(...)`` under ``leapp.compile``: a plain view traces; reinterpreting bytes is the
user's argument form to change (refused with the line), never a "leapp bug"."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import InternalError, UnsupportedArgumentError


def plain_views(x):
    return x.view() * 2 + x.view(np.ndarray) + x.view(np.float32) + x.view(dtype=np.float32)


def reinterpret(x):
    return x.view(np.int32) + 1


def test_plain_views_trace_exactly():
    cf = leapp.compile(plain_views)
    for x in (np.arange(4, dtype=np.float32), np.array([-1.5, 0.0, np.inf, 2.0], np.float32)):
        got, want = cf(x), plain_views(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert len(cf.graphs) == 1


def test_reinterpreting_bytes_is_refused_with_the_line():
    cf = leapp.compile(reinterpret)
    line = reinterpret.__code__.co_firstlineno + 1
    with pytest.raises(UnsupportedArgumentError, match=rf"test_view.py:{line}:\d+: ndarray.view\(int32\) "
                                                       r"cannot be traced.*astype") as info:
        cf(np.ones(3, np.float32))
    assert not isinstance(info.value, InternalError)
