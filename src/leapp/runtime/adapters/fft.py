"""numpy.fft: fft, ifft, rfft, irfft on torch.fft.

NumPy 2's pocketfft transforms float32 (and float16) in single precision and
every other real dtype in double; the result dtype the trace recorded says
which, so the operand is cast to the matching real or complex dtype first.
torch's ``norm`` modes are NumPy's (None is "backward"). A transform whose input holds
inf or NaN is NaN throughout (``_poisoned``): NumPy's pattern of inf and NaN there is its
algorithm's, which no torch FFT reproduces.
"""

from __future__ import annotations

import numpy as np
import torch

from . import impl


def _complex(dtype):
    return np.result_type(dtype, np.complex64)


def _real(dtype):
    return np.empty(0, dtype).real.dtype


def _transform(m, a, fn, dtype, n, axis, norm, forward, default_n):
    """``fn`` on ``a`` cast to ``dtype``, scaled as NumPy scales it.

    NumPy computes the norm factor (1/n or 1/sqrt(n)) in ``result_type(a.real, 1.0)``:
    in float16 for float16 input, a coarser factor than torch's; that case is scaled by
    hand with NumPy's own factor.
    """
    # NumPy has already checked n and norm and the recorder handles out= for every function
    n = None if n is None else int(n)
    x = m.tensor(m.cast(a, dtype))
    axis = int(axis)
    size = n if n is not None else default_n(m.shape_of(a)[axis])
    factor_dtype = np.result_type(np.empty(0, m.np_dtype(a)).real.dtype, 1.0)
    unscaled = "backward" if forward else "forward"
    scaled = norm not in (None, "backward") if forward else norm != "forward"
    if factor_dtype != np.float16 or not scaled:
        out = fn(x, n=n, dim=axis, norm=norm)
    else:
        root = np.sqrt(size, dtype=factor_dtype) if norm == "ortho" else np.asarray(size, factor_dtype)
        out = fn(x, n=n, dim=axis, norm=unscaled) * float(np.reciprocal(root))
    return m.cast(_poisoned(x, out, axis, n, m.shape_of(a)[axis]), m.dtype)


def _poisoned(x, out, axis, n, length):
    """``out`` with every transform whose input holds inf or NaN made NaN throughout.

    Which outputs of such a transform NumPy makes inf and which NaN follows its FFT algorithm;
    torch's follows whichever algorithm it picks for that size and batch (the same row comes out
    differently at batch 1 and batch 4), so no graph can promise NumPy's pattern. A NaN row is the
    same at every size and batch, in the call and in every exported file: non-finite in, NaN out."""
    if n is not None and n < length:
        x = x.narrow(axis, 0, n)  # NumPy drops what lies beyond n
    finite = torch.isfinite(x).all(dim=axis, keepdim=True)
    return torch.where(finite, out, out * float("nan"))  # complex: NaN in both parts


def _same(length):
    return length


def _half(length):
    return 2 * (length - 1)


@impl("numpy.fft.fft")
def fft(m, a, n=None, axis=-1, norm=None, out=None):
    return _transform(m, a, torch.fft.fft, _complex(m.dtype), n, axis, norm, True, _same)


@impl("numpy.fft.ifft")
def ifft(m, a, n=None, axis=-1, norm=None, out=None):
    return _transform(m, a, torch.fft.ifft, _complex(m.dtype), n, axis, norm, False, _same)


@impl("numpy.fft.rfft")
def rfft(m, a, n=None, axis=-1, norm=None, out=None):
    return _transform(m, a, torch.fft.rfft, _real(m.dtype), n, axis, norm, True, _same)


@impl("numpy.fft.irfft")
def irfft(m, a, n=None, axis=-1, norm=None, out=None):
    # float16 results (NumPy keeps float16 for irfft) are computed in complex64
    return _transform(m, a, torch.fft.irfft, _complex(np.result_type(m.dtype, np.float32)), n, axis, norm, False,
                      _half)
