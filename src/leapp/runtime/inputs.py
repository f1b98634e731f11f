"""Which arrays a graph input may be: those that compute under NumPy as a plain ndarray does.

A graph is traced for plain arrays. ``np.matrix`` (``*`` is a matrix product, every
result stays 2-D) and masked arrays (reductions skip masked elements) compute
differently under NumPy, so a graph traced for plain arrays, or a graph traced by
viewing one of them as a plain array, would be silently wrong for them. They are
refused wherever an array enters leapp: ``leapp.compile`` arguments, seed-API
inputs, calls of a compiled node. ``np.memmap`` computes as an ndarray and is accepted.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .traced import TracedNpArray

_COMPUTES_AS_NDARRAY = (np.memmap, TracedNpArray)


def check_array_type(value, what: str) -> None:
    """Raise ``InputError`` if ``value`` is an ndarray subclass with its own NumPy semantics.

    ``what`` names the input in the message (``"node 'prep' input 'x'"``).
    """
    cls = type(value)
    if cls is np.ndarray or not isinstance(value, np.ndarray) or isinstance(value, _COMPUTES_AS_NDARRAY):
        return
    if isinstance(value, np.matrix):
        why = ("an np.matrix: under NumPy `*` is a matrix product and every result stays 2-D, unlike "
               "the plain arrays leapp traces; pass np.asarray(x) (and write @ for matrix products)")
    elif isinstance(value, np.ma.MaskedArray):
        why = ("a masked array: NumPy skips its masked elements, a graph would not see the mask; pass "
               "x.filled(value), or the data and the mask as two plain arrays (np.where(mask, ...))")
    else:
        why = (f"an ndarray subclass ({cls.__module__}.{cls.__qualname__}) whose NumPy semantics leapp "
               f"cannot know; pass np.asarray(x) if it computes as a plain array")
    raise InputError(f"{what} is {why}")


_NO_TENSOR_DTYPE = {"O": "Python objects", "U": "strings", "S": "bytes", "M": "datetimes",
                    "m": "timedeltas", "V": "structured records"}


def check_graph_dtype(array, what: str) -> None:
    """Raise ``InputError`` for an array whose dtype no graph tensor has (object, string, datetime...)."""
    kind = array.dtype.kind
    if kind in _NO_TENSOR_DTYPE:
        raise InputError(f"{what} is an array of {_NO_TENSOR_DTYPE[kind]} (dtype {array.dtype}): a graph "
                         f"holds numbers and booleans only. Convert it before the call (e.g. "
                         f"x.astype(np.float32) for an object array of numbers)")
