"""Array creation from traced operands (creation from literals is folded to constants)."""

from __future__ import annotations

import numpy as np
import torch

from . import impl


def _like(fill):
    def adapter(m, a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        if shape is not None:
            size = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
            return torch.full(size, fill, dtype=m.tdtype)
        return torch.full_like(m.tensor(a), fill, dtype=m.tdtype)

    return adapter


impl("numpy.zeros_like", "numpy.empty_like")(_like(0))
impl("numpy.ones_like")(_like(1))


def _fill(m, value):
    """A literal fill value as NumPy stores it (an unsafe cast: -1.5 in uint8 is 255), which
    torch.full refuses to do for a value out of the dtype's range."""
    if isinstance(value, torch.fx.Proxy):
        return m.cast(value, m.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(m.dtype).item()


@impl("numpy.full_like")
def full_like(m, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    if isinstance(fill_value, torch.fx.Proxy):  # expanded, not added to zeros: 0.0 + -0.0 is +0.0
        base = torch.zeros_like(m.tensor(a), dtype=m.tdtype)
        return m.cast(fill_value, m.dtype).expand_as(base).clone()
    if shape is not None:
        size = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        return torch.full(size, _fill(m, fill_value), dtype=m.tdtype)
    return torch.full_like(m.tensor(a), _fill(m, fill_value), dtype=m.tdtype)


@impl("numpy.full")
def full(m, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    size = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if isinstance(fill_value, torch.fx.Proxy):  # expanded, not added to zeros: 0.0 + -0.0 is +0.0
        return m.cast(fill_value, m.dtype).expand(size).clone()
    return torch.full(size, _fill(m, fill_value), dtype=m.tdtype)


@impl("numpy.linspace")
def linspace(m, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    # NumPy's own steps (numpy/_core/function_base.py), in NumPy's dtype: the ends' result type
    # made inexact (a float32 array and a Python float stay float32); dtype= only casts the result
    raw = m.node.args if m.node is not None else ()
    ends = [raw[i].dtype if i < len(raw) and isinstance(raw[i], np.generic)  # a strong NumPy scalar
            else x if type(x) in (bool, int, float, complex) else m.np_dtype(x)  # a Python number: weak
            for i, x in enumerate((start, stop))]
    compute = np.result_type(*ends, 0.0)
    lo, hi = m.tensor(start, compute), m.tensor(stop, compute)
    div = (num - 1) if endpoint else num
    delta = hi - lo
    extra = len(np.broadcast_shapes(m.shape_of(start), m.shape_of(stop)))
    y = m.tensor(np.arange(num, dtype=compute).reshape((-1,) + (1,) * extra))
    if div > 0:
        step = delta / div
        # a zero step anywhere (denormal ends) makes NumPy compute y / div * delta everywhere
        y = torch.where(torch.any(step == 0), y / div * delta, y * step)
    else:
        y = y * delta
    y = y + lo
    if endpoint and num > 1:
        last = m.tensor((np.arange(num) == num - 1).reshape((-1,) + (1,) * extra))
        y = torch.where(last, hi, y)
    if axis != 0:
        y = torch.movedim(y, 0, axis)
    if m.dtype.kind in "iu":
        y = torch.floor(y)
    return m.cast(m.mark(y, compute, m.shape), m.dtype)


def _sized(fill):
    def adapter(m, shape, dtype=float, order="C", *, device=None, like=None):
        size = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        return torch.full(size, fill, dtype=m.tdtype)

    return adapter


impl("numpy.zeros", "numpy.empty")(_sized(0))
impl("numpy.ones")(_sized(1))


@impl("numpy.arange")
def arange(m, *args, dtype=None, device=None, like=None):
    return torch.arange(*args, dtype=m.tdtype)


@impl("numpy.eye")
def eye(m, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    cols = N if M is None else M
    return torch.ones((N, cols), dtype=m.tdtype).triu(k).tril(k)


@impl("numpy.identity")
def identity(m, n, dtype=None, *, like=None):
    return torch.eye(n, dtype=m.tdtype)
