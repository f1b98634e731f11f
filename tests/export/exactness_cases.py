"""User functions for the export-exactness tests: one per op the ONNX exporter lacked or got wrong.

They live in a module of their own because ``leapp.compile`` reads the source.
"""

from __future__ import annotations

import numpy as np

BINS = np.array([-1.0, 0.0, 0.5, 2.0])
XP = np.array([-2.0, 0.0, 1.0, 3.0])
FP = np.array([1.0, -1.0, 2.0, 0.5])


def expm1(x):
    return np.expm1(x)


def sinh_cosh(x):
    return np.sinh(x), np.cosh(x)


def trunc(x):
    return np.trunc(x)


def bitwise(i, j):
    return i ^ j, i | j, i & 6


def cumprod(i, x):
    return np.cumprod(i, axis=1), np.cumprod(x, axis=0)


def deg2rad(x):
    return np.deg2rad(x), np.degrees(x)


def hypot(x, y):
    return np.hypot(x, y)


def diff(x):
    return np.diff(x, axis=1), np.diff(x, n=2, axis=0)


def take_along(x):
    order = np.argsort(x, axis=1, kind="stable")
    return np.take_along_axis(x, order, axis=1)


def interp_digitize(x):
    return np.interp(x, XP, FP), np.digitize(x, BINS)


def angle_wrap(x, y):
    return x % 1.5, np.fmod(x, y), (x + np.pi) % (2 * np.pi) - np.pi


def inverse(m):
    return np.linalg.inv(m), np.linalg.solve(m, m[0]), np.linalg.det(m)


def spectral_norm(m):
    return np.linalg.norm(m, ord=2)  # needs an SVD, which ONNX does not have


def sorting(x):
    return np.sort(x, axis=1, kind="stable"), np.argsort(x, axis=1, kind="stable"), np.argpartition(x, 1, axis=1)[:, :1]


def windows(x):
    return np.lib.stride_tricks.sliding_window_view(x, 3, axis=1).mean(axis=-1)


def unsigned(u16, u32, u64):
    return u16 + u16, u32 // 3, u64 ^ np.uint64(5), u16.astype(np.uint32) * 2


def floor_div(i, j):
    return i // j, i % j, i // 3


def int32_sum(i):
    return np.sum(i, dtype=np.int32), i.sum(axis=0, dtype=np.int32)


def scalar_int(i):
    return i.max() - i.min(), i[0, 0]


def nan_reductions(x):
    return np.argmax(x, axis=1), np.argmin(x), np.max(x, axis=0), np.min(x), np.maximum(x, 0.5), np.clip(x, -1, 1)


def nan_ignoring_extremes(x, y):
    return np.fmax(x, y), np.fmin(x, y), np.maximum(x, y), np.minimum(x, y)


def with_inf(x):
    return np.where(np.isinf(x), 0.0, x) * 2


def history(hist, obs):
    h = np.roll(hist, -1, axis=1)
    return np.concatenate([hist[:, 1:], obs[:, None]], axis=1), h.mean(axis=(1, 2)), h.reshape(-1, 12)


def history_assign(hist, obs):
    hist = hist.copy()
    hist[:, :-1] = hist[:, 1:]
    hist[:, -1] = obs
    return hist


def first_row_assign(x, v):
    x = x.copy()
    x[0] = v[1]  # only the first row: the traced batch size is part of what it means
    return x


def diag_vectors(x, i):
    return (np.diag(x[0]), np.diag(x[1], 2), np.diag(x[2, :3], -1), np.diagflat(x[:2, :2]),
            np.diagflat(x[0], k=-2), np.diag(i[0], 1), np.diag(i[1] > 0))


def singular_values(m):
    u, s, vh = np.linalg.svd(m)
    return s
