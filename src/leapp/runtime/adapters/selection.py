"""Selection: where, clip, sort, argsort, nonzero, take."""

from __future__ import annotations

import numpy as np
import torch

from . import _flip, impl, may_be_zero, norm_axes


def _operand(m, v, dtype, other_is_tensor):
    if isinstance(v, torch.fx.Proxy):
        return m.cast(v, dtype)
    if other_is_tensor and isinstance(v, (bool, int, float)):
        if type(v) is int and np.dtype(dtype).kind in "iu" and -(2**63) <= v < 2**63:
            with np.errstate(all="ignore"):  # NumPy's where stores 300 in int8 as 44; torch refuses
                v = np.asarray(v).astype(dtype).item()
        return m.cast(v, dtype)
    return m.tensor(v, dtype)


@impl("numpy.where")
def where(m, condition, x=None, y=None):
    cond = m.cast(m.tensor(condition) if not isinstance(condition, torch.fx.Proxy) else condition, np.bool_)
    if x is None and y is None:
        return torch.nonzero(cond, as_tuple=True)
    xt = isinstance(x, torch.fx.Proxy)
    yt = isinstance(y, torch.fx.Proxy)
    a = _operand(m, x, m.dtype, yt)
    b = _operand(m, y, m.dtype, isinstance(a, torch.fx.Proxy) or xt)
    return torch.where(cond, a, b)


_NO = object()


@impl("numpy.clip")
def clip(m, a, a_min=_NO, a_max=_NO, out=None, *, min=_NO, max=_NO, **kw):
    lo = a_min if a_min is not _NO else (min if min is not _NO else None)
    hi = a_max if a_max is not _NO else (max if max is not _NO else None)
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if m.dtype.kind in "iu":
        # NumPy drops a Python-int bound past the dtype's range on the harmless side (uint8 clip at -1)
        info = np.iinfo(m.dtype)
        lo = None if type(lo) is int and lo < info.min else lo
        hi = None if type(hi) is int and hi > info.max else hi
    if lo is None and hi is None:
        return torch.clone(m.tensor(m.cast(a, m.dtype)))
    x = m.cast(a, m.dtype)
    lo = None if lo is None else m.cast(lo, m.dtype)
    hi = None if hi is None else m.cast(hi, m.dtype)
    if m.dtype == np.bool_:
        # torch.clamp has no bool kernel; False < True, so clamp as uint8
        lo = None if lo is None else m.tensor(lo, np.bool_).to(torch.uint8)
        hi = None if hi is None else m.tensor(hi, np.bool_).to(torch.uint8)
        out = m.tensor(x).to(torch.uint8)
        out = out if lo is None else torch.maximum(out, lo)
        out = out if hi is None else torch.minimum(out, hi)
        return out.to(torch.bool)
    if m.dtype.kind == "u" and m.dtype.itemsize > 1:
        # torch.clamp has no uint16/32/64 kernel: clamp in int64, uint64 with its top bit flipped
        flip = m.dtype == np.uint64
        x = m.tensor(x).to(torch.int64)
        out = _flip(x) if flip else x
        for bound, op in ((lo, torch.maximum), (hi, torch.minimum)):
            if bound is not None:
                b = m.tensor(bound, m.dtype).to(torch.int64)
                out = op(out, _flip(b) if flip else b)
        return (_flip(out) if flip else out).to(m.tdtype)
    array_bound = any(isinstance(v, torch.fx.Proxy) and m.ndim(v) for v in (lo, hi))  # 0-d: as a number
    if m.dtype in (np.float32, np.float64) and (array_bound or lo is None or hi is None) \
            and may_be_zero(m, x) and any(v is not None and may_be_zero(m, v) for v in (lo, hi)):
        # Of a value equal to a bound, NumPy's float32/64 clip returns the bound when a bound is
        # an array (not 0-d) or one bound is None (np.maximum/np.minimum), and the value when both
        # bounds are numbers or 0-d (its vector clip loop, as torch.clamp): clip(-0.0, 0.0, None)
        # is 0.0, clip(-0.0, 0.0, 1.0) is -0.0. Only zeros of two signs tie visibly: the first kind
        # is written out where a bound may hold a zero (NaN in a or a bound propagates). float16
        # keeps the value throughout, as torch does.
        out = m.tensor(x)
        if lo is not None:
            out = torch.where((out > lo) | torch.isnan(out), out, m.tensor(lo, m.dtype))
        if hi is not None:
            out = torch.where((out < hi) | torch.isnan(out), out, m.tensor(hi, m.dtype))
        return out
    # torch.clamp takes two numbers or two tensors, not one of each
    if isinstance(lo, torch.fx.Proxy) != isinstance(hi, torch.fx.Proxy) and lo is not None and hi is not None:
        lo, hi = m.tensor(lo, m.dtype), m.tensor(hi, m.dtype)
    return torch.clamp(x, lo, hi)


def _sort_input(m, a, axis):
    x = m.tensor(a)
    if axis is None:
        return x.reshape(-1), 0
    return x, norm_axes(axis, m.ndim(a))[0]


@impl("numpy.sort")
def sort(m, a, axis=-1, kind=None, order=None, *, stable=None):
    x, dim = _sort_input(m, a, axis)
    if m.ndim(a) == 0 and axis is not None:
        return x
    return torch.sort(x, dim=dim, stable=True)[0]


@impl("numpy.argsort")
def argsort(m, a, axis=-1, kind=None, order=None, *, stable=None):
    x, dim = _sort_input(m, a, axis)
    if m.ndim(a) == 0:  # NumPy sorts a 0-d array as one element: shape (1,)
        x = x.reshape(1)
    return torch.argsort(x, dim=dim, stable=True)


@impl("numpy.nonzero")
def nonzero(m, a):
    return torch.nonzero(m.tensor(a), as_tuple=True)


@impl("numpy.take")
def take(m, a, indices, axis=None, out=None, mode="raise"):
    x = m.tensor(a)
    idx = m.cast(indices, np.int64) if isinstance(indices, torch.fx.Proxy) else (
        int(indices) if np.ndim(indices) == 0 else m.tensor(indices, np.int64))
    dim = None if axis is None else norm_axes(axis, m.ndim(a))[0]
    n = int(np.prod(m.shape_of(a))) if dim is None else m.shape_of(a)[dim]
    if mode in ("wrap", "clip") and n:  # NumPy's modes: wrap is modulo n; clip clips, negatives to 0
        if isinstance(idx, int):
            idx = idx % n if mode == "wrap" else min(max(idx, 0), n - 1)
        else:
            idx = torch.remainder(idx, n) if mode == "wrap" else torch.clamp(idx, 0, n - 1)
    if dim is None:
        if isinstance(idx, int):
            return x.reshape(-1)[idx]
        return torch.take(x, torch.where(idx < 0, idx + n, idx))
    return x[(slice(None),) * dim + (idx,)]


@impl("numpy.take_along_axis")
def take_along_axis(m, arr, indices, axis=-1):
    x = m.tensor(arr)
    idx = m.cast(m.tensor(indices), np.int64)
    if axis is None:
        return torch.take_along_dim(x.reshape(-1), idx.reshape(-1), 0)
    dim = norm_axes(axis, m.ndim(arr))[0]
    size = m.shape_of(arr)[dim]
    idx = torch.where(idx < 0, idx + size, idx)
    return torch.take_along_dim(x, idx, dim)
