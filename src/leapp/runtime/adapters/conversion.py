"""Conversion and elementwise helpers: astype, copy, asarray, round, isclose, nan_to_num."""

from __future__ import annotations

import numpy as np
import torch

from . import impl


@impl("ndarray.astype")
def astype(m, a, dtype, casting="unsafe", **kw):
    x = m.tensor(a)
    if m.np_dtype(a) == m.dtype:
        return torch.clone(x)
    return x.to(m.tdtype)


@impl("ndarray.copy", "numpy.copy")
def copy(m, a, order="K", subok=False):
    return torch.clone(m.tensor(a))


def nested(m, obj):
    """A (nested) list mixing traced 0-d/N-d values and literals, stacked as NumPy would, in NumPy's dtype."""
    if isinstance(obj, (list, tuple)):
        return torch.stack([nested(m, v) for v in obj])
    return m.tensor(obj, m.dtype)


@impl("numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray")
def asarray(m, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    x = nested(m, a)
    if m.name == "numpy.ascontiguousarray" and isinstance(a, torch.fx.Proxy) and m.ndim(a) == 0:
        return x.reshape(1)  # np.ascontiguousarray makes a 0-d input 1-d
    return x


@impl("numpy.array")
def array(m, obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    x = nested(m, obj)
    return torch.clone(x) if isinstance(obj, torch.fx.Proxy) and m.np_dtype(obj) == m.dtype else x


@impl("numpy.round")
def round_(m, a, decimals=0, out=None):
    x = m.tensor(m.cast(a, m.dtype))  # bool and int8 round as float16, as NumPy
    if m.dtype.kind in "iub":
        if decimals >= 0:
            return torch.clone(x)
        scale = 10 ** (-decimals)
        return (torch.round(x.to(torch.float64) / scale) * scale).to(m.tdtype)
    if decimals == 0:
        return torch.round(x)
    # NumPy scales in the array's dtype (x * 10**d, rint, / 10**d), so float16 overflows to inf past
    # 65504 / 10**d; torch.round(x, decimals=d) scales float16 in float32
    with np.errstate(over="ignore"):  # 10**d as the array's dtype: float16 10**5 is inf, as in NumPy
        scale = float(np.power(10.0, abs(int(decimals))).astype(m.dtype))
    if decimals > 0:
        return torch.round(x * scale) / scale
    return torch.round(x / scale) * scale


@impl("numpy.sinc")
def sinc(m, x):
    """float16: NumPy's own steps, each rounded to float16: ``y = pi * x``, ``y = eps`` where ``y``
    is 0, ``sin(y) / y``. torch.sinc of float16 computes in float32 and rounds once, so ``pi * x``
    was not rounded first: up to 0.0005 from NumPy next to sinc's zeros (refused as "a leapp
    bug"); these steps give NumPy's value for every finite float16. float32 and float64 keep
    torch.sinc (bit-identical in float64, where torch.sin / y would differ in 0.2% of elements)."""
    x = m.cast(x, m.dtype)
    if m.dtype != np.float16:
        return torch.sinc(x)
    y = x * m.cast(np.pi, m.dtype)  # pi rounded to float16 first, as NumPy's weak scalar is
    y = torch.where(y == 0, m.tensor(np.finfo(m.dtype).eps, m.dtype), y)
    return torch.sin(y) / y


@impl("numpy.isclose")
def isclose(m, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    dt = np.result_type(*(d if not isinstance(d, type) else d(0) for d in (m.np_dtype(a), m.np_dtype(b))), 1.0)
    x, y = m.tensor(a, dt), m.tensor(b, dt)
    return torch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=bool(equal_nan))


@impl("numpy.allclose")
def allclose(m, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return torch.all(isclose(m, a, b, rtol, atol, equal_nan))


@impl("numpy.array_equal")
def array_equal(m, a1, a2, equal_nan=False):
    if tuple(m.shape_of(a1)) != tuple(m.shape_of(a2)):
        return m.tensor(np.asarray(False))
    x, y = m.tensor(a1), m.tensor(a2)
    same = x == y
    if equal_nan:
        same = same | (torch.isnan(x) & torch.isnan(y))
    return torch.all(same)


@impl("numpy.nan_to_num")
def nan_to_num(m, x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = m.tensor(x)
    if m.dtype.kind not in "fc":
        return torch.clone(t)
    return torch.nan_to_num(t, nan=nan, posinf=posinf, neginf=neginf)
