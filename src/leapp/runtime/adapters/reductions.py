"""Reductions with NumPy's axis, keepdims, dtype and ddof semantics.

``axis=None`` always becomes an explicit tuple of every axis: passing
``dim=None`` on to torch fails at export. Integer and bool inputs are cast to
NumPy's accumulator dtype *before* reducing (int32 sums are int64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ...errors import UnsupportedArgumentError
from . import _flip, impl, norm_axes

_MULTI_DIM: dict[str, Callable[..., Any]] = {"sum": torch.sum, "amax": torch.amax, "amin": torch.amin, "mean": torch.mean,
              "all": torch.all, "any": torch.any}


def wrapping(dtype):
    """The dtype torch sums and multiplies in for NumPy's accumulator ``dtype``.

    torch has no unsigned sum/prod/cumsum kernels; int64 arithmetic wraps with
    the same bits, so computing there and casting back gives NumPy's uint64.
    """
    dtype = np.dtype(dtype)
    return np.dtype(np.int64) if dtype.kind == "u" and dtype.itemsize > 1 else dtype


def torch_result(compute):
    """The dtype torch.sum/prod/cumsum/cumprod give for an input of NumPy dtype ``compute``: torch
    sums every bool and integer dtype in int64 (NumPy in the dtype= asked for, wrapping); the cast
    back to NumPy's dtype wraps alike, and a bool sum cast to bool is NumPy's logical or."""
    compute = np.dtype(compute)
    return np.dtype(np.int64) if compute.kind in "biu" else compute


_HALF_SLICES = 4096  # float16 slices added one by one (graph nodes); past that, torch's float32 sum


def reduce_with(m, kind, a, axis, keepdims, initial=None, compute=None):
    """Reduce ``a`` over ``axis`` with torch's ``kind`` reduction, in NumPy's dtypes."""
    nd = m.ndim(a)
    compute = np.dtype(compute or m.dtype)
    if kind in ("sum", "prod"):
        compute = wrapping(compute)
    if kind in ("all", "any"):
        x = m.cast(a, np.bool_)
    else:
        x = m.cast(a, compute)
    dims = norm_axes(axis, nd)
    if initial is not None:
        # NumPy casts initial= to the result dtype (int sums truncate initial=1.5)
        initial = np.asarray(initial).astype(compute).item()
    shape = m.shape_of(a)
    if initial is not None and kind in ("amax", "amin") and nd and any(shape[d] == 0 for d in dims):
        # an empty max/min with initial= is initial (whatever the data); torch.amax refuses empty dims
        return m.tensor(np.full(tuple(m.shape), initial, dtype=m.dtype))
    result = torch_result(compute) if kind in ("sum", "prod") else compute
    if nd == 0 or (axis is not None and len(dims) == 0):
        out = m.tensor(x)
        result = compute
        if kind in ("sum", "mean") and compute.kind in "fc":
            out = out + 0.0  # NumPy's sum starts from +0.0, so a lone -0.0 sums to 0.0
    elif kind == "prod" and compute == np.float16 and tuple(sorted(dims)) == tuple(range(nd - len(dims), nd)):
        # NumPy multiplies a float16 reduction over the trailing (or all) axes in one float32 loop and
        # rounds once: 300 * 300 * 0 is 0, not inf * 0 = nan from per-axis float16 products
        out = x.to(torch.float32)
        for d in sorted(dims, reverse=True):
            out = torch.prod(out, d, keepdim=bool(keepdims))
        out = out.to(torch.float16)
    elif kind == "prod" and compute == np.float16 and len(dims) == 1 and 0 < shape[dims[0]] <= 64:
        # over a leading axis NumPy multiplies whole float16 slices in turn, rounding each product
        d = dims[0]
        out = x.select(d, 0)
        for i in range(1, shape[d]):
            out = out * x.select(d, i)
        out = out.unsqueeze(d) if keepdims else out
    elif kind == "sum" and compute == np.float16 and dims and nd - 1 not in dims \
            and 1 < int(np.prod([shape[d] for d in dims])) <= _HALF_SLICES:
        # over leading axes NumPy adds whole float16 slices into the result in turn (from +0.0),
        # rounding after each addition; torch sums in float32 and rounds once: up to 32 ulps apart
        # over 6 rows, in every sample. (Over the last axis NumPy sums in float32 too.)
        order = sorted(dims)
        rest = [shape[d] for d in range(nd) if d not in dims]
        count = int(np.prod([shape[d] for d in order]))
        flat = torch.movedim(x, order, list(range(len(order)))).reshape(count, *rest)
        out = flat[0] + 0.0
        for i in range(1, count):
            out = out + flat[i]
        if keepdims:
            out = out.reshape([1 if d in dims else shape[d] for d in range(nd)])
    elif kind == "prod":
        out = x
        for d in sorted(dims, reverse=True):
            out = torch.prod(out, d, keepdim=bool(keepdims))
    elif kind in ("amax", "amin") and compute.kind == "u" and compute.itemsize > 1:
        # torch has no uint16/32/64 max/min; int64 with the top bit flipped orders uint64 the same
        flip = compute == np.uint64
        y = m.cast(x, np.int64)
        y = _flip(y) if flip else y
        y = _MULTI_DIM[kind](y, dim=dims, keepdim=bool(keepdims))
        out = m.cast(m.mark(_flip(y) if flip else y, np.int64, m.shape), compute)
    elif kind == "mean" and compute.kind in "biu":
        # mean(dtype=int): NumPy sums in that dtype and truncates the quotient back into it
        total = m.cast(m.mark(torch.sum(x, dim=dims, keepdim=bool(keepdims)), np.int64, m.shape), compute)
        count = int(np.prod([shape[d] for d in dims]))
        out = total.to(torch.float64) / count
        out = out if compute.kind == "b" else torch.trunc(out)  # a bool mean is its sum's truth
        result = np.dtype(np.float64)
    else:
        out = _MULTI_DIM[kind](x, dim=dims, keepdim=bool(keepdims))
    if initial is not None:
        if kind == "sum":
            out = out + initial
        elif kind == "prod":
            out = out * initial
        elif kind == "amax":
            out = out | initial if compute.kind == "b" else torch.clamp(out, min=initial)
        elif kind == "amin":
            out = out & initial if compute.kind == "b" else torch.clamp(out, max=initial)
    return m.cast(m.mark(out, result if kind not in ("all", "any") else np.bool_, m.shape), m.dtype)


@impl("numpy.sum")
def sum_(m, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):
    return reduce_with(m, "sum", a, axis, keepdims, initial)


@impl("numpy.prod")
def prod(m, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):
    return reduce_with(m, "prod", a, axis, keepdims, initial)


@impl("numpy.max")
def max_(m, a, axis=None, out=None, keepdims=False, initial=None, **kw):
    return reduce_with(m, "amax", a, axis, keepdims, initial)


@impl("numpy.min")
def min_(m, a, axis=None, out=None, keepdims=False, initial=None, **kw):
    return reduce_with(m, "amin", a, axis, keepdims, initial)


@impl("numpy.all")
def all_(m, a, axis=None, out=None, keepdims=False, **kw):
    return reduce_with(m, "all", a, axis, keepdims)


@impl("numpy.any")
def any_(m, a, axis=None, out=None, keepdims=False, **kw):
    return reduce_with(m, "any", a, axis, keepdims)


def _float_compute(dtype):
    # NumPy accumulates float16 means and variances in float32
    return np.dtype(np.float32) if dtype == np.float16 else dtype


@impl("numpy.mean")
def mean(m, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return reduce_with(m, "mean", a, axis, keepdims, compute=_float_compute(m.dtype))


def _moment(m, a, axis, ddof, keepdims, correction, std):
    """NumPy's two passes: the mean, then the mean square deviation, each step in NumPy's dtype.

    float16 stays float16 (its squares and their sum overflow to inf as in NumPy; only the sums
    accumulate in float32); torch.var's single pass overflows nowhere. The counts are read at
    run time: after a boolean mask the length is the data's, not the traced sample's.
    """
    if correction is not None:
        ddof = correction
    rd = np.dtype(m.dtype)  # the real result dtype: float64 for ints and bools
    if rd.kind in "biu":
        raise UnsupportedArgumentError(
            f"dtype={rd.name}: NumPy truncates the mean and the variance into that dtype at each "
            f"step; pass a float dtype (or none) and cast the result")
    src = m.np_dtype(a)
    cplx = src.kind == "c"
    x = m.cast(a, src if cplx else rd)
    nd = m.ndim(a)
    x = x if nd else x.reshape(1)
    dims = norm_axes(axis, nd) if nd else (0,)
    acc = m.torch_dtype(np.float32) if rd == np.float16 else None

    def total(t, keep):  # axis=() reduces nothing (torch.sum would take dim=() as every axis)
        if not dims:
            return t
        return torch.sum(t.to(acc), dim=dims, keepdim=keep).to(t.dtype) if acc else torch.sum(t, dim=dims, keepdim=keep)

    def count(keep):
        return total(torch.ones_like(x, dtype=m.torch_dtype(rd)), keep)

    dev = x - total(x, True) / count(True)
    sq = (dev * torch.conj(dev)).real if cplx else dev * dev
    out = total(sq, bool(keepdims)) / torch.clamp(count(bool(keepdims)) - ddof, min=0)
    if nd == 0:
        out = out.reshape(())
    out = torch.sqrt(out) if std else out
    return m.cast(m.mark(out, rd, m.shape), m.dtype)


@impl("numpy.std")
def std(m, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None, correction=None, **kw):
    return _moment(m, a, axis, ddof, keepdims, correction, std=True)


@impl("numpy.var")
def var(m, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None, correction=None, **kw):
    return _moment(m, a, axis, ddof, keepdims, correction, std=False)


@impl("numpy.ptp")
def ptp(m, a, axis=None, out=None, keepdims=False):
    hi = reduce_with(m, "amax", a, axis, keepdims)
    lo = reduce_with(m, "amin", a, axis, keepdims)
    return hi - lo


def _arg(fn):
    def adapter(m, a, axis=None, out=None, *, keepdims=False):
        x = m.tensor(a)
        if m.np_dtype(a) == np.bool_:
            x = x.to(torch.uint8)
        nd = m.ndim(a)
        if axis is None:
            out = fn(x.reshape(-1), 0)
            return out.reshape((1,) * nd) if keepdims else out
        return fn(x, norm_axes(axis, nd)[0], keepdim=bool(keepdims))

    return adapter


impl("numpy.argmax")(_arg(torch.argmax))
impl("numpy.argmin")(_arg(torch.argmin))


def _cumulative(fn):
    def adapter(m, a, axis=None, dtype=None, out=None, **kw):
        compute = wrapping(m.dtype)
        x = m.cast(a, compute)
        if axis is None or m.ndim(a) == 0:  # NumPy gives a 0-d input shape (1,) for any axis
            x, dim = x.reshape(-1), 0
        else:
            dim = norm_axes(axis, m.ndim(a))[0]
        out = fn(x, dim)
        if fn is torch.cumsum and np.dtype(compute).kind in "fc":
            # NumPy's running sum starts from the first element; torch's from +0.0, so a prefix of
            # -0.0 sums to +0.0 in torch and stays -0.0 in NumPy (copysign, 1/x, arctan2 tell)
            negative_zero = (torch.signbit(x) & (x == 0)).to(torch.int32)
            out = torch.where(torch.cumprod(negative_zero, dim).to(torch.bool), x, out)
        return m.cast(m.mark(out, torch_result(compute), m.shape), m.dtype)

    return adapter


impl("numpy.cumsum")(_cumulative(torch.cumsum))
impl("numpy.cumprod")(_cumulative(torch.cumprod))


@impl("numpy.count_nonzero")
def count_nonzero(m, a, axis=None, *, keepdims=False):
    x = m.cast(a, np.bool_)
    out = reduce_with(m, "sum", x, axis, keepdims, compute=np.dtype(np.int64))
    return out
