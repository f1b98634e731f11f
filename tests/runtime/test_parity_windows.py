"""Parity of windowed operations (convolve, correlate, sliding windows) with NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from parity import check

COVERED = {"numpy.convolve", "numpy.correlate", "numpy.lib.stride_tricks.sliding_window_view"}

rng = np.random.default_rng(3)
LONG = rng.standard_normal(9)
SHORT = np.array([0.25, 0.5, 0.25])
PAIR = np.array([1.0, -1.0])
INTS = rng.integers(-9, 9, 7)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", [np.convolve, np.correlate], ids=["convolve", "correlate"])
@pytest.mark.parametrize("a, v", [(LONG, SHORT), (SHORT, LONG), (LONG, PAIR), (PAIR, LONG),
                                  (LONG.astype(np.float32), SHORT.astype(np.float32))],
                         ids=["long-short", "short-long", "long-even", "even-long", "float32"])
def test_convolution_modes(fn, mode, a, v):
    check(lambda x, w: fn(x, w, mode=mode), a, v)


def test_moving_average_with_a_constant_kernel():
    check(lambda x: np.convolve(x, np.ones(3) / 3, mode="same"), LONG)


def test_integer_convolution_stays_integer():
    traced = check(lambda x: np.convolve(x, np.array([1, 2, 1])), INTS)
    assert traced.eager_result.dtype == np.int64


@pytest.mark.parametrize("fn", [
    lambda x: np.lib.stride_tricks.sliding_window_view(x, 3),
    lambda x: np.lib.stride_tricks.sliding_window_view(x, 3).mean(axis=-1),
    lambda x: np.lib.stride_tricks.sliding_window_view(x.reshape(3, 3), (2, 2)),
    lambda x: np.lib.stride_tricks.sliding_window_view(x.reshape(3, 3), 2, axis=1),
], ids=["1d", "moving-mean", "2d", "axis"])
def test_sliding_window_view(fn):
    check(fn, LONG)
