"""Which of two equal zeros NumPy returns, followed by the graph: -0.0 and 0.0 compare equal, but
arctan2, 1/x and copysign tell them apart (np.arctan2(np.maximum(y, 0.0), -1.0) is pi or -pi).

NumPy's float32/float64 maximum and minimum return the second operand of a tie, and so does clip
when a bound is an array or the other bound is None; clip with two number bounds keeps the value,
and float16 loops return the first operand. Compared with NumPy itself, through leapp.compile."""

from __future__ import annotations

import numpy as np
import pytest

import leapp

LOW = np.array([0.0, -0.0, 0.0, -1.0, 0.0, 1.0, -0.0])  # a constant bound with zeros
NEAR = np.array([-1.0, 0.5, -2.0, -1.0, 1.0, 1.5, -3.0])  # and one without


def ties(x, y):
    return {
        "clip_const": np.clip(x, LOW.astype(x.dtype), 10.0), "max_const": np.maximum(x, LOW.astype(x.dtype)),
        "max0": np.maximum(x, 0.0), "max0_rev": np.maximum(0.0, x), "min0": np.minimum(x, -0.0),
        "max_xy": np.maximum(x, y), "min_yx": np.minimum(y, x),
        "clip_lo": np.clip(x, 0.0, None), "clip_hi": np.clip(x, None, -0.0), "clip_both": np.clip(x, 0.0, 10.0),
        "clip_arr": np.clip(x, y, 10.0), "method": x.clip(min=0), "clip_0d": np.clip(x, -1.0, y[1]),
        "clip_0d_lo": np.clip(x, y[0], 10.0),
        "heading": np.arctan2(np.maximum(x, 0.0), -np.ones_like(x)),
    }


compiled = leapp.compile(ties)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_ties_of_zeros_return_numpys_operand(dtype):
    x = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, -1.0, 2.0], dtype)
    y = np.array([0.0, -0.0, -0.0, 0.0, 0.0, np.nan, 2.0], dtype)
    for a, b in ((x, y), (y, x), (x[::-1].copy(), y)):
        want = ties(a, b)
        got = compiled(a, b)
        for key, w in want.items():
            g = got[key]
            assert g.dtype == w.dtype, key
            np.testing.assert_array_equal(g, w, err_msg=key)
            assert np.array_equal(np.signbit(g), np.signbit(w)), (key, g, w)


def bounded(x):
    return np.clip(x, NEAR.astype(x.dtype), 2.0), np.maximum(x, NEAR.astype(x.dtype))


def test_bounds_without_zeros_keep_the_single_kernel():
    # a tie with a nonzero bound is the same number either way: torch.clamp/maximum stay one op
    # (the written-out choice costs a graph several ops, half the robot example's call at batch 4096)
    cf = leapp.compile(bounded)
    x = np.array([-0.0, 0.0, 3.0, -5.0, np.nan, 1.5, -3.0])
    for g, w in zip(cf(x), bounded(x), strict=True):
        np.testing.assert_array_equal(g, w)
    code = cf.graphs[-1].code
    assert "torch.clamp" in code and "torch.maximum" in code and "where" not in code, code
