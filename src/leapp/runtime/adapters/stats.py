"""Statistics: median, percentile/quantile, average and the nan-reductions.

Order statistics sort along one merged axis and pick elements at indices
computed with NumPy itself at lowering time (q is a constant), then combine
them with NumPy's own formulas in NumPy's dtypes, so results match bit for bit
wherever the arithmetic is the same.
"""

from __future__ import annotations

import numpy as np
import torch

from . import impl, norm_axes
from .reductions import reduce_with


def _last_axis(m, a, axis, sized_at_run_time=False):
    """``a`` with the reduced axes merged into one trailing axis (and its length)."""
    x = m.tensor(a)
    shape = m.shape_of(a)
    nd = len(shape)
    dims = norm_axes(axis, nd)
    keep = [d for d in range(nd) if d not in dims]
    x = torch.permute(x, keep + list(dims)) if nd else x.reshape(1)
    n = int(np.prod([shape[d] for d in dims])) if nd else 1
    lead = tuple(shape[d] for d in keep)
    # -1 where the caller reads the length at run time: it may be data-dependent (a boolean-mask
    # selection), and the sample's n only the traced one (callers that index with the sample's n
    # keep it fixed, so that another length fails loudly); reshape cannot infer -1 next to an empty axis
    dynamic = sized_at_run_time and (not lead or (n > 0 and int(np.prod(lead)) > 0))
    return x.reshape(lead + ((-1,) if dynamic else (n,))), n


def _nan_fix(m, s, out, dtype):
    """NaN wherever the slice holds a NaN (sorted last), as NumPy's median/quantile."""
    if np.dtype(dtype).kind not in "fc":
        return out
    return torch.where(torch.any(torch.isnan(s[..., -1:]), dim=-1), torch.full_like(out, float("nan")), out)


@impl("numpy.median")
def median(m, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    x, n = _last_axis(m, a, axis, sized_at_run_time=True)
    s = torch.sort(x, dim=-1)[0]
    compute = np.dtype(np.float32) if m.dtype == np.float16 else m.dtype
    # NumPy's median is the mean of the middle one or two sorted elements; the length is read at
    # run time (it may be data-dependent) and the middle taken as a slice: no overflow for one
    # element, (lo + hi) / 2 for two, nan for none; + 0.0 as NumPy's sum (-0.0 gives 0.0)
    length = s.shape[-1]
    mid = s[..., (length - 1) // 2:length // 2 + 1].to(m.torch_dtype(compute))
    med = torch.mean(mid, dim=-1) + 0.0
    med = _nan_fix(m, s, med, m.np_dtype(a)).to(m.tdtype)
    return med.reshape(m.shape)


def constant_value(m, v):
    """The NumPy value of a graph constant (a get_attr), or ``v`` itself for literals."""
    if isinstance(v, torch.fx.Proxy):
        if v.node.op != "get_attr":
            raise TypeError("expected a constant")
        return m.builder.root.get_buffer(v.node.target).numpy()
    return v


def _quantile(m, a, q, axis, keepdims, scale):
    q = constant_value(m, q)
    weak = type(q) in (int, float)
    q = np.true_divide(q, 100) if scale else np.asanyarray(q)
    q = np.asanyarray(q)
    x, n = _last_axis(m, a, axis)
    s = torch.sort(x, dim=-1)[0]
    virtual = (n - 1) * q
    flat_q = np.atleast_1d(virtual).ravel()
    if virtual.dtype.kind in "iu":
        picks = [s[..., int(v)].to(m.tdtype) for v in flat_q]
    else:
        prev = np.floor(virtual)
        nxt = prev + 1
        above = virtual >= n - 1
        prev, nxt = np.where(above, -1, prev), np.where(above, -1, nxt)
        below = virtual < 0
        prev, nxt = np.where(below, 0, prev), np.where(below, 0, nxt)
        gamma = np.asanyarray(virtual - prev, dtype=virtual.dtype)
        picks = []
        for p, nx, g in zip(np.atleast_1d(prev).ravel(), np.atleast_1d(nxt).ravel(), np.atleast_1d(gamma).ravel(), strict=False):
            g = float(g) if weak else g
            picks.append(_lerp(m, s[..., int(p)], s[..., int(nx)], g, m.np_dtype(a)))
    picks = [_nan_fix(m, s, v, m.np_dtype(a)) for v in picks]
    out = torch.stack(picks, 0) if q.ndim else picks[0]
    return out.reshape(m.shape)


def _lerp(m, a, b, t, arr_dtype):
    """NumPy's ``_lerp``: a + (b-a)*t, or b - (b-a)*(1-t) where t >= 0.5, in NumPy's dtypes."""
    rd = m.tdtype
    diff = (b - a).to(rd)  # computed in the array's dtype first (ints wrap as NumPy's)
    t_arr = np.asarray(t, dtype=m.dtype)
    one_minus = np.asarray(1 - t, dtype=m.dtype)
    if t >= 0.5:
        return (b.to(rd) - diff * float(one_minus)).to(rd)
    return (a.to(rd) + diff * float(t_arr)).to(rd)


@impl("numpy.percentile")
def percentile(m, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    return _quantile(m, a, q, axis, keepdims, scale=True)


@impl("numpy.quantile")
def quantile(m, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw):
    return _quantile(m, a, q, axis, keepdims, scale=False)


@impl("numpy.average")
def average(m, a, axis=None, weights=None, returned=False, *, keepdims=False):
    if weights is None:
        # NumPy calls a.mean(axis); m.dtype is the mean's dtype
        avg = _mean(m, a, axis, keepdims)
        if not returned:
            return avg
        shape = m.shape_of(a)
        count = int(np.prod([shape[d] for d in norm_axes(axis, len(shape))]))
        return avg, torch.full_like(avg, float(count))
    ashape = m.shape_of(a)
    rd = _result_dtype(m, a, weights)
    x, w = m.cast(a, rd), m.cast(weights, rd)
    x, w = m.tensor(x), m.tensor(w)
    nd = len(ashape)
    wshape = m.shape_of(weights)
    if tuple(wshape) != tuple(ashape):
        dims = norm_axes(axis, nd)
        shape = [1] * nd
        for _i, d in enumerate(dims):
            shape[d] = ashape[d]
        w = w.reshape(shape)
        w = torch.broadcast_to(w, ashape)
    dims = norm_axes(axis, nd)
    scl = torch.sum(w, dim=dims, keepdim=bool(keepdims)) if nd else w
    avg = (torch.sum(x * w, dim=dims, keepdim=bool(keepdims)) if nd else x * w) / scl
    if returned:
        return avg, torch.broadcast_to(scl, avg.shape)
    return avg


def _result_dtype(m, a, w):
    da, dw = m.np_dtype(a), m.np_dtype(w)
    if da.kind in "biu":
        return np.result_type(da, dw, "f8")
    return np.result_type(da, dw)


def _mean(m, a, axis, keepdims):
    da = m.np_dtype(a)
    rd = np.dtype(np.float64) if da.kind in "biu" else da
    compute = np.dtype(np.float32) if rd == np.float16 else rd
    x = m.cast(a, compute)
    nd = m.ndim(a)
    out = torch.mean(x, dim=norm_axes(axis, nd), keepdim=bool(keepdims)) if nd else x + 0.0  # NumPy: 0.0 + -0.0
    return out.to(m.torch_dtype(rd))


# --- nan-reductions ---------------------------------------------------------------


def _nan_filled(m, a, fill):
    x = m.tensor(a)
    if m.np_dtype(a).kind not in "fc":
        return x
    return torch.where(torch.isnan(x), torch.full_like(x, fill), x)


@impl("numpy.nansum")
def nansum(m, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):
    x = m.mark(_nan_filled(m, a, 0.0), m.np_dtype(a), m.shape_of(a))
    return reduce_with(m, "sum", x, axis, keepdims, initial)


@impl("numpy.nanprod")
def nanprod(m, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):
    x = m.mark(_nan_filled(m, a, 1.0), m.np_dtype(a), m.shape_of(a))
    return reduce_with(m, "prod", x, axis, keepdims, initial)


@impl("numpy.nanmean")
def nanmean(m, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    if m.np_dtype(a).kind not in "fc":
        return _mean(m, a, axis, keepdims)
    x = m.tensor(a)
    nan = torch.isnan(x)
    nd = m.ndim(a)
    dims = norm_axes(axis, nd)
    filled = torch.where(nan, torch.zeros_like(x), x)
    if m.dtype == np.float16 and m.np_dtype(a) == np.float16 and dtype is None and nd:
        # NumPy sums the float16 values as np.sum does (slice by slice over leading axes, each
        # addition rounded), then divides in float64 into the float16 result: 11 ulps apart
        # from a float32 sum over 6 rows
        from .indexing import half

        tot = reduce_with(m, "sum", m.mark(filled, np.float16, m.shape_of(a)), axis, keepdims)
        cnt = torch.sum((~nan).to(torch.int64), dim=dims, keepdim=bool(keepdims))
        return half(m, m.mark(tot.to(torch.float64) / cnt.to(torch.float64), np.float64, m.shape))
    compute = m.torch_dtype(np.float32) if m.dtype == np.float16 else m.tdtype
    tot = torch.sum(filled.to(compute), dim=dims, keepdim=bool(keepdims)) if nd else filled + 0.0
    cnt = torch.sum((~nan).to(torch.int64), dim=dims, keepdim=bool(keepdims)) if nd else (~nan).to(torch.int64)
    return (tot / cnt).to(m.tdtype)


def _nan_extreme(kind):
    def adapter(m, a, axis=None, out=None, keepdims=False, initial=None, **kw):
        if m.np_dtype(a).kind not in "fc":
            return reduce_with(m, kind, a, axis, keepdims, initial)
        fill = float("-inf") if kind == "amax" else float("inf")
        x = m.tensor(a)
        nan = torch.isnan(x)
        filled = m.mark(torch.where(nan, torch.full_like(x, fill), x), m.np_dtype(a), m.shape_of(a))
        best = reduce_with(m, kind, filled, axis, keepdims, initial)
        nan_m = m.mark(nan, np.bool_, m.shape_of(a))
        all_nan = torch.all(nan, dim=norm_axes(axis, m.ndim(a)), keepdim=bool(keepdims)) if m.ndim(a) else nan_m
        if initial is not None:
            return best
        return torch.where(all_nan, torch.full_like(best, float("nan")), best)

    return adapter


impl("numpy.nanmax")(_nan_extreme("amax"))
impl("numpy.nanmin")(_nan_extreme("amin"))


def _nan_cumulative(fill, fn):
    def adapter(m, a, axis=None, dtype=None, out=None):
        x = m.cast(m.mark(_nan_filled(m, a, fill), m.np_dtype(a), m.shape_of(a)), m.dtype)
        if axis is None:
            return fn(x.reshape(-1), 0)
        return fn(x, norm_axes(axis, m.ndim(a))[0])

    return adapter


impl("numpy.nancumsum")(_nan_cumulative(0.0, torch.cumsum))
impl("numpy.nancumprod")(_nan_cumulative(1.0, torch.cumprod))
