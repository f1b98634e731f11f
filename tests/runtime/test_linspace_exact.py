"""np.linspace through leapp.compile is NumPy's, bit for bit: its dtype rule and its own steps.

linspace is arithmetic only (a subtraction, a division, a multiplication and
an addition per element), so nothing excuses an ulp: the graph computes in
NumPy's dtype (the ends' result type made inexact; ``dtype=`` only casts the
result) and takes NumPy's branch for a zero step (denormal ends).
"""

from __future__ import annotations

import numpy as np
import pytest

import leapp

RNG = np.random.default_rng(7)


def ends_arrays(a, b):
    return (np.linspace(a, b, 7), np.linspace(a, b, 6, endpoint=False), np.linspace(a, b, 5, dtype=np.float64),
            np.linspace(a, b, 4, axis=-1), np.linspace(a, b, 9, dtype=np.int32), np.linspace(a, b, 1),
            np.linspace(a, b, 0), np.linspace(a, b, 2, endpoint=False))


def ends_scalars(a, b):
    return (np.linspace(a.min(), b.max(), 11), np.linspace(0.25, b.max(), 5), np.linspace(a.min(), 3, 5),
            np.linspace(np.float32(0.1), b.max(), 6), np.linspace(a[0], b[-1], 50, dtype=np.float32))


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), np.max(np.abs(got.astype(float) - want.astype(float)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("fn", [ends_arrays, ends_scalars])
def test_linspace_is_numpys_bit_for_bit(fn, dtype):
    cf = leapp.compile(fn)
    for k in range(4):
        scale = 10.0 ** RNG.integers(-3, 4)
        a = (RNG.normal(size=5) * scale).astype(dtype)
        b = (RNG.normal(size=5) * scale).astype(dtype)
        if k == 3:
            b = a.copy()  # a zero step: NumPy's other branch
        for got, want in zip(cf(a, b), fn(a, b), strict=True):
            _same(got, want)


def test_denormal_ends_take_numpys_zero_step_branch():
    def fn(a, b):
        return np.linspace(a, b, 9)

    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    a = np.array([0.0, 0.0, 1.0], np.float32)
    b = np.array([tiny * 3, 1.0, 2.0], np.float32)  # delta / 8 underflows to 0 in the first column
    cf = leapp.compile(fn)
    with np.errstate(all="ignore"):
        _same(cf(a, b), fn(a, b))
        _same(cf(a, a + 1), fn(a, a + 1))  # no zero step: the usual branch on the same graph


def test_infinite_and_nan_ends():
    def fn(a, b):
        return np.linspace(a, b, 5)

    a = np.array([0.0, -np.inf, np.nan, 1.0], np.float32)
    b = np.array([np.inf, 1.0, 2.0, np.nan], np.float32)
    with np.errstate(all="ignore"):
        _same(leapp.compile(fn)(a, b), fn(a, b))
