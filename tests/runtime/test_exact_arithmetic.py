"""Ops IEEE defines exactly are NumPy's bit for bit, not merely within tolerance.

Parity tests compare floats within a tolerance, which lets an adapter that
computes in another precision or with another constant through. These
compare bits (through ``leapp.compile``) on many values, with the cases that
tell implementations apart: perfect squares, subnormals, ±0, ±inf, NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp

RNG = np.random.default_rng(11)


def _values(dtype, n=20000):
    info = np.finfo(dtype)
    x = np.abs(RNG.standard_normal(n)) * 10.0 ** RNG.uniform(np.log10(info.tiny) / 2, np.log10(info.max) / 2, n)
    x = x.astype(dtype)
    x[:10] = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 4.0, 2.0, info.smallest_subnormal, info.max]
    return x


def _bits_equal(got, want):
    assert got.dtype == want.dtype
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{int((~same).sum())} of {same.size} differ, e.g. {got[~same][:3]} vs {want[~same][:3]}"
    number = ~np.isnan(want)  # a NaN's sign bit means nothing (NumPy and torch set it differently)
    assert np.array_equal(np.signbit(got[number]), np.signbit(want[number]))  # -0.0 stays -0.0


def roots_and_degrees(x):
    return np.sqrt(x), np.rad2deg(x), np.degrees(x), np.sqrt(x * x), np.rad2deg(np.deg2rad(x))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_sqrt_and_rad2deg_are_numpys_bit_for_bit(dtype):
    cf = leapp.compile(roots_and_degrees)
    x = _values(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = roots_and_degrees(x)
        for got, w in zip(cf(x), want, strict=True):
            _bits_equal(got, w)


def test_float64_rad2deg_is_numpys_and_sqrt_within_an_ulp():
    # torch's float64 sqrt on the CPU is off by an ulp in ~0.7% of elements (NumPy's is correctly
    # rounded); docs/limitations.md says so. rad2deg in float64 is the same product in both.
    cf = leapp.compile(roots_and_degrees)
    x = _values(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got, want = cf(x), roots_and_degrees(x)
    _bits_equal(got[1], want[1])
    finite = np.isfinite(want[0])
    assert np.all(np.abs(got[0][finite] - want[0][finite]) <= np.spacing(want[0][finite]))
    _bits_equal(got[0][~finite], want[0][~finite])


def crosses(a, b, c, d):
    return (np.cross(a, b), np.cross(a[0], b), np.cross(a[:20], b[:30, None, :]), np.cross(c, d, axisa=0, axisb=0, axisc=0),
            np.cross(c, d, axis=0), np.cross(a[..., :2], b[..., :2]), np.cross(a[..., :2], b), np.cross(a, b[..., :2]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
def test_cross_is_numpys_product_by_product(dtype):
    # each product rounded, then each difference, as NumPy does; one fused kernel is 2-7 ulps off
    rng = np.random.default_rng(5)
    a, b = ((rng.standard_normal((4000, 3)) * 10).astype(dtype) for _ in range(2))
    c, d = ((rng.standard_normal((3, 7)) * 10).astype(dtype) for _ in range(2))
    cf = leapp.compile(crosses)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors; still computes them
        got, want = cf(a, b, c, d), crosses(a, b, c, d)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        _bits_equal(g, w) if w.dtype.kind == "f" else np.testing.assert_array_equal(g, w)


def test_linalg_cross_is_numpys_product_by_product():
    def fn(a, b, c, d):
        return np.linalg.cross(a, b), np.linalg.cross(c, d, axis=0)

    rng = np.random.default_rng(6)
    a, b = ((rng.standard_normal((4000, 3)) * 10).astype(np.float32) for _ in range(2))
    c, d = ((rng.standard_normal((3, 50)) * 10).astype(np.float32) for _ in range(2))
    for g, w in zip(leapp.compile(fn)(a, b, c, d), fn(a, b, c, d), strict=True):
        _bits_equal(g, w)


def with_python_numbers(x):
    return x * (1.0 / 255), x + 0.1, x / 3.0, 1.0 - x, x * 1e6, x > 0.3, np.maximum(x, 0.2), np.clip(x, 0.1, 0.7)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_python_numbers_are_rounded_to_the_arrays_dtype_first(dtype):
    # NEP 50: float16 * (1/255) multiplies by float16(1/255); torch kept the number in float32
    # (its compute type for float16), one float16 ulp off in 3% of elements, and 0 * 1e6 was 0
    # where NumPy's float16(1e6) is inf and 0 * inf is nan
    x = (np.random.default_rng(2).random(1000) * 300).astype(dtype)
    x[:3] = [0.0, -0.0, np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for g, w in zip(leapp.compile(with_python_numbers)(x), with_python_numbers(x), strict=True):
            _bits_equal(g, w) if w.dtype.kind == "f" else np.testing.assert_array_equal(g, w)


def divisions(a, b):
    return a // b, a % b, np.floor_divide(a, 2.5), np.fmod(a, b), np.remainder(-a, b)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_floor_division_and_remainders_are_numpys_bit_for_bit(dtype):
    # NumPy's float16 loops divide in float32 and round once; torch's float16 // rounded otherwise
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(20000) * 10).astype(dtype)
    b = (rng.standard_normal(20000) * 3).astype(dtype) + dtype(0.1)
    a[:4], b[:4] = [0.0, -0.0, 5.0, np.inf], [1.0, 1.0, np.inf, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for g, w in zip(leapp.compile(divisions)(a, b), divisions(a, b), strict=True):
            _bits_equal(g, w)


def running_sums(x):
    return np.copysign(2.0, np.cumsum(x, axis=0)), np.cumsum(x), np.cumsum(x.astype(np.float32), axis=-1)


def test_a_running_sum_keeps_numpys_negative_zeros():
    # NumPy's running sum starts from the first element, torch's from +0.0: a prefix of -0.0 is
    # -0.0 in NumPy (seed 60005582 of benchmarks/fuzz.py showed it through copysign)
    x = np.array([[-0.0, 0.0], [-0.0, -0.0], [1.0, -0.0], [-0.0, -1.0]])
    for g, w in zip(leapp.compile(running_sums)(x), running_sums(x), strict=True):
        _bits_equal(g, w)
