"""``x.flat`` of a traced array: its elements in C order, traced.

ndarray's ``flat`` is a C iterator: iterating it (``r11, r12, ... = M.flat``), indexing it or
``np.asarray(x.flat)`` reads the array's memory and hands out plain NumPy scalars and arrays,
so whatever is computed from them (``math.atan2(-r12, r11)``) would be frozen, and a write
(``x.flat[i] = v``) would change the buffer without the graph seeing it. A traced array's
``flat`` is a ``TracedFlat`` instead: every read is an index of ``x.reshape(-1)`` (a traced
0-d value marked as a NumPy scalar for an integer index, a copy otherwise, as NumPy gives), and
a write goes through ``x.reshape(-1)`` when that is a view of ``x`` (C-contiguous), else
through the element coordinates. Writes NumPy would make by repeating a shorter value, and a
traced index into a non-contiguous array, are refused at the line.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedArgumentError
from . import record


class TracedFlat:
    """What ``x.flat`` is for a traced ``x`` while a trace is open."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def _values(self):
        return self.base.reshape(-1)

    def __iter__(self):
        values = self._values()
        return (values[i] for i in range(len(values)))

    def __len__(self):
        return self.base.size

    def __getitem__(self, index):
        if isinstance(index, tuple) and len(index) == 1:
            index = index[0]
        result = self._values()[index]
        return result if result.ndim == 0 and _is_integer(index) else result.copy()

    def __setitem__(self, index, value):
        base = self.base
        count = np.arange(base.size)[record.plain(index)].size if not _traced(index) else None
        value = np.asarray(value) if not isinstance(value, np.ndarray) else value
        if count is not None and value.size not in (1, count):
            _refuse(f"x.flat[...] = a value of {value.size} elements into {count}: NumPy repeats the "
                    f"value to fill the elements, which leapp does not record; give one value or one "
                    f"per element")
        if value.ndim > 1:
            value = value.reshape(-1)
        if np.ndarray.view(base, np.ndarray).flags.c_contiguous:
            base.reshape(-1)[index] = value  # a view of base: the write lands in base, recorded
            return
        if count is None:
            _refuse("x.flat[traced index] = ... on a non-contiguous array: write through an index "
                    "of x itself")
        coords = np.unravel_index(np.arange(base.size)[index], np.ndarray.view(base, np.ndarray).shape)
        base[coords] = value

    def __array__(self, dtype=None, copy=None):
        # reached only by NumPy's C conversion (np.asarray is traced, see as_array): plain data
        return np.ndarray.view(self.base, np.ndarray).flat.__array__(*(() if dtype is None else (dtype,)))

    def copy(self):
        return self._values().copy()

    def __repr__(self):
        return f"<leapp TracedFlat of {np.ndarray.view(self.base, np.ndarray).shape} array>"


def as_array(value):
    """``np.asarray(x.flat)``/``np.array(x.flat)``: the traced 1-d copy NumPy would make."""
    return value.copy() if type(value) is TracedFlat else value


def _is_integer(index) -> bool:
    return isinstance(index, (int, np.integer)) or (isinstance(index, np.ndarray) and index.ndim == 0
                                                     and index.dtype.kind in "iu")


def _traced(index) -> bool:
    return isinstance(index, record._TracedNpArray) or (
        isinstance(index, (list, tuple)) and record._contains_traced(index))


def _refuse(text):
    from .traced import _loc

    raise UnsupportedArgumentError(f"{record.format_loc(_loc())}: {text}.")
