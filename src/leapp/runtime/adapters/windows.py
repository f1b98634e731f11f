"""Windowed operations: 1-D convolution and correlation, sliding windows."""

from __future__ import annotations

import numpy as np
import torch

from ...errors import UnsupportedArgumentError
from . import impl, norm_axes


def _convolve(m, a, v, mode, flip_kernel):
    n, k = m.shape_of(a)[0], m.shape_of(v)[0]
    # NumPy computes in the result dtype; torch has no integer conv, so ints go
    # through float64 (exact while partial sums stay below 2**53) and back.
    compute = m.dtype if m.dtype.kind in "fc" else np.dtype(np.float64)
    x = m.tensor(a, compute)
    w = m.tensor(v, compute)
    if n < k:  # convolution commutes: the shorter operand is the kernel, as in NumPy
        x, w, n, k = w, x, k, n
    if flip_kernel:
        w = torch.flip(w, (0,))
    full = torch.nn.functional.conv1d(x.reshape(1, 1, n), w.reshape(1, 1, k), padding=k - 1).reshape(n + k - 1)
    if mode == "same":
        start = (k - 1) // 2
        full = full[start:start + n]
    elif mode == "valid":
        full = full[k - 1:n]
    elif mode != "full":
        raise UnsupportedArgumentError(f"mode={mode!r}: only 'full', 'same' and 'valid' exist")
    return m.cast(m.mark(full, compute, m.shape), m.dtype)


@impl("numpy.convolve")
def convolve(m, a, v, mode="full"):
    return _convolve(m, a, v, mode, flip_kernel=True)


@impl("numpy.correlate")
def correlate(m, a, v, mode="valid"):
    if m.shape_of(a)[0] < m.shape_of(v)[0]:
        # NumPy correlates the swapped pair and reverses the result
        out = _convolve(m, v, a, mode, flip_kernel=False)
        return torch.flip(out, (0,))
    return _convolve(m, a, v, mode, flip_kernel=False)


@impl("numpy.lib.stride_tricks.sliding_window_view")
def sliding_window_view(m, x, window_shape, axis=None, *, subok=False, writeable=False):
    t = m.tensor(x)
    windows = (window_shape,) if np.ndim(window_shape) == 0 else tuple(window_shape)
    axes = tuple(range(m.ndim(x))) if axis is None else norm_axes(axis, m.ndim(x))
    for ax, size in zip(axes, windows, strict=True):
        t = t.unfold(ax, int(size), 1)
    return t.clone()
