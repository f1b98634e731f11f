"""``np.r_[a, b.sum(), 1.0]`` and ``np.c_[W, v]`` on traced values, as traced NumPy calls.

NumPy's ``AxisConcatenator.__getitem__`` is Python code inside NumPy: it calls
``np.array(item, subok=True, ndmin=...)`` and ``transpose`` on each item, which
leapp does not trace inside NumPy (NumPy's own code must get plain arrays), so
the items were frozen and the refusal named ``numpy.transpose``. Here the same
steps, in the same order and with the same dtype rule, are taken with NumPy
calls leapp records (reshape for ``ndmin``, transpose, astype, concatenate).
While a trace is open ``np.r_`` and ``np.c_`` are instances of subclasses of
NumPy's classes whose ``__getitem__`` comes here when an item is traced
(``patches.py``); rewritten user code reaches it through ``dispatch.getitem``.

The matrix directives (``np.r_['r', ...]``) build ``np.matrix``, which leapp
does not trace: refused, naming ``np.r_``/``np.c_`` and the line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UntracedCallError, UntracedCallWarning
from . import record, state

_ORIGINAL_R, _ORIGINAL_C = np.r_, np.c_  # bound at import, before any session patches them
_RClass: Any = type(_ORIGINAL_R)  # NumPy's private classes of np.r_ and np.c_
_CClass: Any = type(_ORIGINAL_C)
_getitem = _RClass.__mro__[1].__getitem__  # AxisConcatenator.__getitem__


def display(concat) -> str:
    return "np.c_" if isinstance(concat, type(_ORIGINAL_C)) else "np.r_"


def index(concat, key):
    """``concat[key]`` (``concat`` is ``np.r_`` or ``np.c_``), traced when an item is."""
    trace = state.current()
    items = key if isinstance(key, tuple) else (key,)
    if trace is None or isinstance(key, str) or not record._contains_traced(items):
        return _getitem(concat, key)
    axis, ndmin, trans1d = concat.axis, concat.ndmin, concat.trans1d
    objs, kinds = [], []
    for k, item in enumerate(items):
        if isinstance(item, slice):
            objs.append(_getitem(concat, item))  # a constant range, as NumPy makes it
            kinds.append(objs[-1].dtype)
            continue
        if isinstance(item, str):
            if k != 0:
                raise ValueError("special directives must be the first entry.")
            if item in ("r", "c"):
                return _refuse_matrix(trace, concat, key)
            parts = item.split(",")
            try:
                if len(parts) > 1:
                    axis, ndmin = int(parts[0]), int(parts[1])
                    trans1d = int(parts[2]) if len(parts) == 3 else trans1d
                else:
                    axis = int(item)
            except (ValueError, TypeError) as e:
                raise ValueError(f"unknown special directive {item!r}") from e
            continue
        if type(item) in np.ScalarType or (isinstance(item, record._TracedNpArray) and item._lp_scalar):
            objs.append(item)  # a scalar: its own value takes part in the dtype rule, as in NumPy
            kinds.append(item if not isinstance(item, record._TracedNpArray) else item.dtype)
            continue
        arr = item if isinstance(item, np.ndarray) else _asarray(item)
        item_ndim = arr.ndim
        arr = _ndmin(arr, ndmin)
        if trans1d != -1 and item_ndim < ndmin:
            k2, k1 = ndmin - item_ndim, trans1d
            if k1 < 0:
                k1 += k2 + 1
            axes = list(range(ndmin))
            arr = np.transpose(arr, axes[:k1] + axes[k2:] + axes[k1:k2])
        objs.append(arr)
        kinds.append(arr.dtype)
    if kinds:
        final = np.result_type(*kinds)
        objs = [_ndmin(_as_dtype(o, final), ndmin) for o in objs]
    return np.concatenate(tuple(objs), axis=axis)


def _asarray(item):
    """``np.asarray(item)``, traced for a list holding traced values (leapp's own calls of np.array
    are not traced: NumPy's and leapp's code must get plain arrays)."""
    from . import patches

    return patches.traced_asarray(item) if record._contains_traced([item]) else np.asarray(item)


def _as_dtype(obj, dtype):
    if isinstance(obj, np.ndarray):
        return obj if obj.dtype == dtype else obj.astype(dtype)
    return np.array(obj, dtype=dtype)


def _ndmin(arr, ndmin):
    """``np.array(arr, ndmin=ndmin)``: ones prepended to the shape (a traced reshape)."""
    if arr.ndim >= ndmin:
        return arr
    return np.reshape(arr, (1,) * (ndmin - arr.ndim) + arr.shape)


def _refuse_matrix(trace, concat, key):
    from .traced import _loc

    name = display(concat)
    loc = _loc()
    message = (f"{name}['r', ...] / {name}['c', ...] at {record.format_loc(loc)} builds an np.matrix, "
               f"which leapp does not trace; build the array with {name}[...] without the matrix "
               f"directive (or np.concatenate / np.stack)")
    record.report(trace, "untraced", name, loc, message, UntracedCallError, UntracedCallWarning)
    plain = tuple(record.plain(v) for v in key) if isinstance(key, tuple) else record.plain(key)
    return record.mark_escaped(trace, name, loc, _getitem(concat, plain))


class _TracedR(_RClass):
    """``np.r_`` while a trace is open: NumPy's, except that traced items are traced."""

    __slots__ = ()

    def __getitem__(self, key):
        return index(self, key)


class _TracedC(_CClass):
    __slots__ = ()

    def __getitem__(self, key):
        return index(self, key)


TRACED_R, TRACED_C = _TracedR(), _TracedC()
