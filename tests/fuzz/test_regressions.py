"""Mismatches the fuzzer found, each reduced to the construct that caused it."""

from __future__ import annotations

import numpy as np
import pytest
from parity import check

from leapp.errors import UnsupportedArgumentError

U8 = np.array([[0, 3, 250], [7, 1, 2]], dtype=np.uint8)
I64 = np.array([0, 1, -1, 2, -7], dtype=np.int64)
U64 = np.array([0, 2**63, 2**64 - 1, 2**63 - 1, 5, 1], dtype=np.uint64)
F32 = np.array([-np.inf, -0.0, 0.0, np.nan, -2.0, 3.7, 0.5, np.inf, -8.0], dtype=np.float32)

CASES = {
    # uint8 < -3 compares exact values in NumPy 2 (all False), not -3 wrapped to 253
    "compare_out_of_range_int": (lambda a: (-3 < a, a <= -3, a == 300, a != -1, a > 2**70), U8),
    # integer 1/0 is whatever NumPy's C loop gives (INT64_MIN here), not 0
    "int_reciprocal_of_zero": (lambda a: (np.reciprocal(a), np.reciprocal(a.astype(np.int8))), I64),
    # torch.clamp has no bool kernel
    "clip_bool": (lambda a: np.clip(a > 1, False, a[0] > 0), U8),
    # argsort of a 0-d value has shape (1,)
    "argsort_0d": (lambda a: np.argsort(a.sum()), I64),
    # a Python float on the left of float16 // and %: computed in float16, not float64
    "weak_float_left_of_floor_divide": (lambda a: (2.5 // a, 2.5 % a), np.array([1.5, -2, 0.25], np.float16)),
    # torch.heaviside(nan, h) is 0; NumPy's is nan
    "heaviside_nan": (lambda a: (np.heaviside(a, 0.5), np.heaviside(a, a[::-1]), np.heaviside(-1.5, a)), F32),
    # a zero float remainder has the divisor's sign in NumPy (the dividend's in torch): -inf // (-2 % 0.5)
    "remainder_zero_sign": (lambda a: (np.signbit(a % 0.5), np.signbit(-2.0 % a), -np.inf // (np.float32(-2) % a)),
                            F32),
    # NumPy's sum/mean/median of a lone -0.0 is 0.0 (the sum starts from +0.0)
    "lone_negative_zero_reductions": (lambda a: tuple(np.signbit(f(a[1])) for f in (np.sum, np.mean, np.nanmean,
                                                                                     np.nansum, np.median))
                                      + (np.signbit(np.median(a[[1, 1]])), np.signbit(np.median(a[[1, 1, 1]]))),
                                      F32),
    # a 0-d exponent of 0.5 is sqrt in NumPy's float32/64 loop: (-inf) ** 0.5 is nan, (-0.0) ** 0.5 is -0.0
    "power_scalar_half": (lambda a, e: (a ** e, np.power(a, e), np.signbit(np.nan_to_num(a ** e))),
                          F32, np.array(0.5, np.float16)),
    # cbrt of float16 rounds float32 cbrtf once; cbrt(-0.0) is -0.0
    "cbrt_float16_and_negative_zero": (lambda a: (np.cbrt(a.astype(np.float16)), np.signbit(np.cbrt(a))), F32),
    # torch has no uint16/32/64 abs, sign, amax/amin, clamp or subtraction: exact through int64 (order with the
    # top bit flipped), also past 2**63
    "unsigned_abs_sign_extremes_clip_diff": (lambda a: tuple(
        (np.abs(u), np.sign(u), np.max(u), np.nanmin(u, keepdims=True), np.clip(u, u[1], u[2]),
         np.clip(u, None, u[4]), np.diff(u), np.diff(u, n=2)) for u in (a, a.astype(np.uint32), a.astype(np.uint16))),
        U64),
    # diff of an axis of length 0 or 1 (after a mask, the length is known only at run time)
    "diff_short_and_masked": (lambda a: (np.diff(a[:1]), np.diff(a[:0]), np.diff(a, n=12), np.diff(a[a > 3]),
                                        np.diff(a[a > 3], n=2)), F32),
    # the median of an empty slice is nan
    "median_of_empty": (lambda a: (np.median(np.diff(a[:1])), np.median(a[:0].reshape(0, 1), axis=0)), F32),
    # the median of a mask selection: its length (and so the middle, and whether it is empty) comes from the data;
    # one middle element is not averaged with itself (3.4e38 stays finite)
    "median_of_data_sized": (lambda a: (np.median(a[a > 0.3]), np.median(a[a > 3.5]), np.median(np.nan_to_num(a)[2:7]),
                                        np.median(a[a < 0], keepdims=True)), F32),
    # std/var in NumPy's two passes: float32 squares of -3.4e38 overflow to inf; complex deviations square to
    # |dev|**2; axis=() reduces nothing
    "std_var_two_pass": (lambda a: (np.std(np.nan_to_num(a)), np.var(a[[0, 4, 5]], axis=-1, ddof=1),
                                    np.std(a * 1j + 1), np.var(a, axis=()), np.std(a.reshape(3, 3), axis=0,
                                                                                   keepdims=True)), F32),
    # std/var of a mask selection count the data's elements, not the traced sample's; float16 squares and their sum
    # overflow to inf as NumPy's (computed in float16, only the sums accumulate in float32)
    "std_var_data_sized_and_float16": (lambda a: (np.std(a[a > 0.3]), np.var(a[a < 0], ddof=1),
                                                  np.var(np.nan_to_num(a).astype(np.float16) * 100),
                                                  np.std(np.array([300, 0, 150, 21], np.float16) * a[5])), F32),
    # round(x, d) scales in the array's dtype: float16 59870 * 10 overflows to inf, and float16 10**5 is inf
    "round_decimals_float16_overflow": (lambda a: (np.round(a * 1000, 1), np.round(a, 5), np.round(a, -5),
                                                   np.round(a.astype(np.float32), 40)), F32.astype(np.float16)),
    # a Python-int clip bound past the dtype's range on the harmless side is no bound in NumPy (uint8 at -1)
    "clip_int_bounds_past_the_dtype": (lambda a: (np.clip(a, -1, 0), np.clip(a, -1, 400), np.clip(a, -3, None),
                                                  np.clip(a.astype(np.int8), -200, 2**70)), U8),
    # float16 products: over trailing (or all) axes NumPy multiplies in float32 and rounds once (300*300*0 is 0);
    # over a leading axis it rounds each slice product to float16 (inf * 0 is nan)
    "prod_float16": (lambda a: (np.prod(a), np.prod(a, axis=-1), np.prod(a, axis=0), np.prod(a, axis=0, keepdims=True)),
                     np.array([[300, 300, 2], [300, 300, 0.5], [0, 0, 3]], np.float16)),
    # cbrt of float64 perfect cubes is within an ulp (pow(27, 1/3) alone is 3.0000000000000004). NumPy
    # itself is not exact there in every build (2.4.6's float64 loop gives cbrt(-48**3) = -47.99999...,
    # so a floor() on top would compare NumPy's ulp, not leapp's): the values, at the parity tolerance
    "cbrt_perfect_cubes": (lambda a: np.cbrt(a), (np.arange(-50, 51) ** 3).astype(np.float64)),
}

U64_REFUSED = {
    "right_shift": lambda a: a >> np.uint64(1),
}


@pytest.mark.parametrize("fn", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: np.fmod(a, b),
    lambda a, b: a // np.uint64(3), lambda a, b: a % 7, lambda a, b: np.uint64(2**64 - 5) // b,
    lambda a, b: (a.sum() // b, a.astype(np.uint8).sum() % b),
], ids=["floor_divide", "remainder", "fmod", "by-scalar", "mod-python-int", "scalar-dividend", "sums"])
def test_uint64_division_is_exact_past_2_63(fn):
    # uint64 // and % run on int64 bits with a halving trick; values past 2**63 and zero divisors
    b = np.array([3, 2**63, 2**64 - 1, 1, 0, 2**63 + 7], dtype=np.uint64)
    with np.errstate(divide="ignore"):
        check(fn, U64, b, samples=[(U64[::-1].copy(), b[::-1].copy()), (U64 * np.uint64(3), b + np.uint64(1))])


@pytest.mark.parametrize("name", sorted(U64_REFUSED))
def test_uint64_without_exact_int64_form_is_refused_at_the_call(name):
    # order, division and shifts past 2**63 differ in int64: leapp names the call and the fix
    with pytest.raises(UnsupportedArgumentError, match=rf"test_regressions.py:\d+: numpy.{name}.*astype\(np.int64\)"):
        check(U64_REFUSED[name], U64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name):
    fn, *arrays = CASES[name]
    check(fn, *arrays)


def test_power_half_of_numpy_scalars_follows_numpy_scalar_math():
    # Python's ** between NumPy scalars is NumPy's scalar math (C pow: (-inf) ** 0.5 is inf,
    # (-0.0) ** 0.5 is 0.0), while the ufunc loop on arrays takes sqrt (nan, -0.0). leapp traces a
    # reduction's result as a 0-d array marked as a NumPy scalar, and computes ** on it as the
    # scalar math, eagerly and in the graph (tests/runtime/test_numpy_scalars.py has the types).
    import warnings

    from leapp.errors import LeappInternalWarning

    def fn(a):
        low = np.min(a[6:7])  # 0.5
        neg = np.min(a[:2])  # -inf
        zero = np.max(a[1:2])  # -0.0
        return (-np.inf) ** low, neg ** 0.5, zero ** 0.5, np.signbit(zero ** 0.5), neg ** low

    with warnings.catch_warnings():
        warnings.simplefilter("error", LeappInternalWarning)
        traced = check(fn, F32, samples=[(F32[::-1].copy(),)])
    got = traced.node(a0=F32)
    assert [float(got[n]) for n in traced.node.output_names] == [np.inf, np.inf, 0.0, 0.0, np.inf]
