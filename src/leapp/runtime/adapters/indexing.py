"""Indexing and indexed assignment, recorded functionally.

torch has no negative slice steps: ``x[::-1]`` becomes a positive slice and
a flip of that axis. Assignment ``y[idx] = v`` (any index NumPy accepts) is
recorded as a scatter of ``v`` into a copy of ``y`` at the flat positions
``idx`` selects, so the graph stays pure and one rule covers slices, masks,
index arrays and broadcasting.
"""

from __future__ import annotations

import numpy as np
import torch

from . import impl


def _items(index):
    return index if isinstance(index, tuple) else (index,)


def _consumed(m, item):
    if item is None:
        return 0
    if isinstance(item, torch.fx.Proxy) and m.np_dtype(item) == np.bool_:
        return max(m.ndim(item), 1)
    if isinstance(item, np.ndarray) and item.dtype == bool:
        return max(item.ndim, 1)
    return 1


def take_index(m, x, index, shape):
    """``x[index]`` in torch, for an ``x`` of NumPy shape ``shape``."""
    items = list(_items(index))
    used = sum(_consumed(m, i) for i in items if i is not Ellipsis)
    flips = []
    dim = 0
    for k, item in enumerate(items):
        if item is Ellipsis:
            dim += len(shape) - used
            continue
        if isinstance(item, slice) and item.step is not None and item.step < 0:
            picked = range(*item.indices(shape[dim]))
            if len(picked):
                flips.append((dim, slice(picked[-1], picked[0] + 1, -item.step)))
            else:
                flips.append((dim, slice(0, 0)))
            items[k] = slice(None)
        elif isinstance(item, torch.fx.Proxy):
            if m.np_dtype(item) != np.bool_:
                items[k] = m.cast(item, np.int64)
        elif isinstance(item, list):
            items[k] = _list_index(m, item)
        dim += _consumed(m, item)
    for d, positive in flips:
        x = x[(slice(None),) * d + (positive,)]
        if positive != slice(0, 0):
            x = torch.flip(x, (d,))
    if all(isinstance(i, slice) and i == slice(None) for i in items):
        return x
    return x[tuple(items)]


def _holds_proxy(item):
    return any(isinstance(v, torch.fx.Proxy) or (isinstance(v, list) and _holds_proxy(v)) for v in item)


def _list_index(m, item):
    """A list index as NumPy reads it (``np.asarray(item)``): an integer array, or a boolean one where
    every element is a bool. Elements may be traced values (``p[[np.argmax(d), np.argmin(d)]]``,
    vg.apex_and_opposite), stacked in the graph."""
    if not _holds_proxy(item):
        return m.tensor(np.asarray(item)) if not _is_int_list(item) else m.tensor(np.asarray(item, np.int64))
    flags = [m.np_dtype(v) == np.bool_ if isinstance(v, torch.fx.Proxy) else isinstance(v, (bool, np.bool_))
             for v in item]
    dtype = np.bool_ if all(flags) else np.int64
    parts = [_list_index(m, v) if isinstance(v, list) else
             m.cast(v, dtype) if isinstance(v, torch.fx.Proxy) else m.tensor(np.asarray(v, dtype)) for v in item]
    return torch.stack(parts)


def _is_int_list(item):
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in item)


@impl("ndarray.__getitem__", "leapp.view_index")
def getitem(m, x, index):
    return take_index(m, m.tensor(x), index, m.shape_of(x))


def _stand_in(m, item):
    """An index item NumPy can apply at the traced shapes: a traced mask or index array by one of
    its dtype and trace-time shape (only the selection's number of axes is read from it)."""
    if isinstance(item, torch.fx.Proxy):
        bool_ = m.np_dtype(item) == np.bool_
        return np.ones(m.shape_of(item), bool) if bool_ else np.zeros(m.shape_of(item), np.int64)
    if isinstance(item, list) and _holds_proxy(item):
        return np.asarray([_stand_in(m, v) for v in item])
    return item


def _selected_ndim(m, index, shape):
    """How many axes ``x[index]`` has, for an ``x`` of NumPy shape ``shape``."""
    items = _items(index)
    return np.empty(shape, np.int8)[tuple(_stand_in(m, i) for i in items)].ndim


@impl("ndarray.__setitem__", "leapp.write_index")
def setitem(m, x, index, value):
    shape = tuple(m.shape)
    size = int(np.prod(shape)) if shape else 1
    positions = m.tensor(np.arange(size, dtype=np.int64).reshape(shape))
    picked = take_index(m, positions, index, shape)
    v = m.tensor(value, m.dtype) if not isinstance(value, torch.fx.Proxy) else m.cast(value, m.dtype)
    # NumPy drops a value's leading axes beyond the selection's (`q[0, :] = unit_q(q0)`, a (1, 4)
    # value into a (4,) row; NumPy requires them to be 1), where expand_as refuses them
    extra = len(m.shape_of(value)) - _selected_ndim(m, index, shape)
    if extra > 0:
        v = torch.reshape(v, tuple(m.shape_of(value))[extra:])
    flat = torch.reshape(m.tensor(x), (-1,))
    flat = flat.index_put((picked.reshape(-1),), v.expand_as(picked).reshape(-1))
    return torch.reshape(flat, shape)


@impl("item")
def item(m, parent, i):
    return parent[i]


@impl("ndarray.fill")
def fill(m, x, value):
    if isinstance(value, torch.fx.Proxy):
        return m.cast(value, m.dtype).expand_as(x).clone()
    return torch.full_like(x, m.cast(value, m.dtype))


@impl("leapp.cast")
def cast(m, x, dtype):
    return m.cast(x, dtype)


@impl("leapp.half")
def half(m, x):
    """A float64 value rounded to float16 once, as NumPy does (``x16 * t``, a Python float ``t``):
    torch rounds float64 to float16 through float32, which is wrong where the float32 value lands
    exactly half-way between two float16 values (1 + 2**-11 + 2**-40 gives 1.0, NumPy 1.001)."""
    f = x.to(torch.float32)
    h = f.to(torch.float16)
    hf = h.to(torch.float32)
    other = hf + 2 * (f - hf)  # the float16 value on f's other side, when f is half-way
    halfway = (f != hf) & (other.to(torch.float16).to(torch.float32) == other)
    # the float32 rounding crossed the half-way point toward h: NumPy's single rounding is `other`
    toward_other = (x - f.to(torch.float64)) * (other - hf).to(torch.float64) > 0
    fixed = torch.where(halfway & toward_other, other.to(torch.float16), h)
    return m.mark(fixed, np.float16, m.shape_of(x))


@impl("leapp.weak")
def weak(m, x):
    """A Python-number argument's value (runtime/scalar_args.py): its input, as is; every use that
    NumPy converts was recorded with its own ``leapp.cast``."""
    return x
