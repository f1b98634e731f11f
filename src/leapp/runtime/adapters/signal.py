"""Signal helpers: interp, unwrap, diff, ediff1d, pad."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...errors import UnsupportedArgumentError
from . import impl, norm_axes


@impl("numpy.interp")
def interp(m, x, xp, fp, left=None, right=None, period=None):
    f64 = np.float64
    xt, xpt, fpt = (m.tensor(v, f64) for v in (x, xp, fp))
    n = m.shape_of(xp)[-1]
    flat = xt.reshape(-1)
    if n == 1:
        res = torch.full_like(flat, 0.0) + fpt[0]
    else:
        # j with xp[j] <= x < xp[j+1], as NumPy's binary search finds it
        j = torch.clamp(torch.searchsorted(xpt, flat, right=True) - 1, 0, n - 2)
        x0, x1, y0, y1 = xpt[j], xpt[j + 1], fpt[j], fpt[j + 1]
        slope = (y1 - y0) / (x1 - x0)
        res = slope * (flat - x0) + y0
        # NumPy's C loop: on NaN try from the right end, then take y0 if the ends agree
        alt = slope * (flat - x1) + y1
        res = torch.where(torch.isnan(res), alt, res)
        res = torch.where(torch.isnan(res) & (y0 == y1), y0, res)
        # on a knot NumPy returns the knot's value without interpolating (fp[j+1] may be NaN)
        res = torch.where(flat == x0, y0, res)
        res = torch.where(flat == xpt[-1], fpt[-1], res)
    lo = fpt[0] if left is None else m.tensor(left, f64)
    hi = fpt[-1] if right is None else m.tensor(right, f64)
    res = torch.where(flat < xpt[0], lo, res)
    res = torch.where(flat > xpt[-1], hi, res)
    res = torch.where(torch.isnan(flat), flat, res)
    return res.reshape(m.shape)


@impl("numpy.unwrap")
def unwrap(m, p, discont=None, axis=-1, *, period=2 * math.pi):
    if m.dtype.kind not in "f":
        raise UnsupportedArgumentError("integer input is not supported; convert with .astype(np.float64)")
    x = m.tensor(p, m.dtype)
    nd = m.ndim(p)
    dim = norm_axes(axis, nd)[0]
    n = m.shape_of(p)[dim]
    dd = torch.diff(x, dim=dim)
    if discont is None:
        discont = period / 2
    high = period / 2
    low = -high
    ddmod = torch.remainder(dd - low, period) + low
    ddmod = torch.where((ddmod == low) & (dd > 0), torch.full_like(ddmod, high), ddmod)
    correct = ddmod - dd
    correct = torch.where(torch.abs(dd) < discont, torch.zeros_like(correct), correct)
    head = torch.narrow(x, dim, 0, 1)
    tail = torch.narrow(x, dim, 1, n - 1) + torch.cumsum(correct, dim)
    return torch.cat([head, tail], dim)


def _diff_once(x, dim, is_bool):
    # slices, not narrow(x, dim, 1, n - 1): the length may be data-dependent (after a mask) and 0
    lead = (slice(None),) * dim
    a, b = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
    return torch.ne(a, b) if is_bool else a - b


@impl("numpy.diff")
def diff(m, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n == 0:
        return m.tensor(a)
    shape = list(m.shape_of(a))
    dim = norm_axes(axis, len(shape))[0]
    dtype = m.dtype
    parts = []
    for extra in (prepend, a, append):
        if extra is np._NoValue:
            continue
        t = m.tensor(extra, dtype)
        if m.ndim(t) == 0 and extra is not a:
            shape1 = list(shape)
            shape1[dim] = 1
            t = torch.broadcast_to(t, tuple(shape1))
        parts.append(t)
    x = torch.cat(parts, dim) if len(parts) > 1 else m.tensor(a, dtype)
    is_bool = dtype == np.bool_
    wide = dtype.kind == "u" and dtype.itemsize > 1  # torch has no uint16/32/64 subtraction; int64 wraps alike
    if wide:
        x = x.to(torch.int64)
    for _ in range(n):
        x = _diff_once(x, dim, is_bool)
    return x.to(m.tdtype) if wide else x


@impl("numpy.ediff1d")
def ediff1d(m, ary, to_end=None, to_begin=None):
    x = m.tensor(ary, m.dtype).reshape(-1)
    parts = [x[1:] - x[:-1]]
    if to_begin is not None:
        parts.insert(0, m.tensor(to_begin, m.dtype).reshape(-1))
    if to_end is not None:
        parts.append(m.tensor(to_end, m.dtype).reshape(-1))
    return torch.cat(parts) if len(parts) > 1 else parts[0]


def _pairs(value, nd):
    return np.broadcast_to(np.asarray(value), (nd, 2))


@impl("numpy.pad")
def pad(m, array, pad_width, mode="constant", **kwargs):
    x = m.tensor(array)
    shape = m.shape_of(array)
    nd = len(shape)
    widths = _pairs(pad_width, nd).astype(np.int64)
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0) if mode == "constant" else 0
        traced = isinstance(values, torch.fx.Proxy)
        consts: Any = None if traced else _pairs(np.asarray(values).astype(m.dtype) if np.ndim(values) == 0
                                            else np.asarray(values).astype(m.dtype), nd)
        for d in range(nd):
            before, after = (int(w) for w in widths[d])
            parts = []
            cur = list(x.shape) if not isinstance(x, torch.fx.Proxy) else list(_shape_after(shape, widths, d))
            for side, w in ((0, before), (1, after)):
                if w == 0:
                    continue
                block = tuple(cur[:d]) + (w,) + tuple(cur[d + 1:])
                if traced:
                    v = m.cast(values, m.dtype)
                    part = torch.broadcast_to(v.reshape(()), block) if m.ndim(values) == 0 else None
                    if part is None:
                        raise UnsupportedArgumentError("traced per-axis constant_values are not supported; use one value or constants")
                else:
                    part = torch.full(block, consts[d][side].item(), dtype=m.tdtype)
                parts.append((side, part))
            pieces = [p for s, p in parts if s == 0] + [x] + [p for s, p in parts if s == 1]
            x = torch.cat(pieces, d) if len(pieces) > 1 else x
        return x
    for d in range(nd):
        before, after = (int(w) for w in widths[d])
        if before == 0 and after == 0:
            continue
        # NumPy itself says which source element lands at each padded position
        index = np.pad(np.arange(shape[d]), (before, after), mode=mode)
        x = torch.index_select(x, d, m.tensor(index, np.int64))
    return x


def _shape_after(shape, widths, d):
    """Shape of the array once axes before ``d`` are padded."""
    return tuple(s + int(widths[i].sum()) if i < d else s for i, s in enumerate(shape))
