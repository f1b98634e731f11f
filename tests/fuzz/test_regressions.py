"""Mismatches the fuzzer found, each reduced to the construct that caused it."""

from __future__ import annotations

import numpy as np
import pytest
from parity import check

U8 = np.array([[0, 3, 250], [7, 1, 2]], dtype=np.uint8)
I64 = np.array([0, 1, -1, 2, -7], dtype=np.int64)
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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name):
    fn, *arrays = CASES[name]
    check(fn, *arrays)
