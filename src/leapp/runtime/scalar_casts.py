"""``np.float32(x)``, ``np.int64(x)``...: NumPy scalar types called on traced arrays.

Calling a scalar type converts its argument in C without any dispatch hook, so
a traced value would silently turn into a constant. While a session is open
the ``numpy`` module's scalar-type attributes are replaced by subclasses whose
constructor records the call as a cast (table entries ``numpy.float32``...);
their metaclass makes ``isinstance``/``issubclass`` answer for the real type,
and ``np.dtype(np.float32)`` still gives float32. Names bound before the
session (``from numpy import float32``) keep the real type and are not traced.
"""

from __future__ import annotations

import numpy as np

from .. import table
from . import record
from .traced import TracedNpArray, _loc

_saved: list = []


def _make(name, real):
    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, real)

    def __new__(cls, *args, **kwargs):
        if any(isinstance(a, TracedNpArray) for a in args):
            return record.record_call("numpy." + name, real, args, kwargs, _loc())
        return real(*args, **kwargs)

    return _Meta(real.__name__, (real,), {"__new__": __new__, "__module__": "numpy", "_leapp_real": real})


def _targets():
    for name, entry in table.TABLE.items():
        if isinstance(entry, table.Entry) and entry.kind == "scalar_type":
            short = name.split(".", 1)[1]
            real = getattr(np, short)
            yield real, (short, *(a.split(".", 1)[1] for a in entry.aliases))


def _build():
    made = []
    for real, attrs in _targets():
        try:
            made.append((_make(attrs[0], real), attrs))
        except TypeError:  # a scalar type NumPy does not let us subclass
            continue
    return made


_TYPES = _build()


def install():
    if _saved:
        return
    for traced_type, attrs in _TYPES:
        for attr in attrs:
            original = getattr(np, attr, None)
            if original is None or original is not traced_type._leapp_real:
                continue
            _saved.append((attr, original))
            setattr(np, attr, traced_type)


def uninstall():
    while _saved:
        attr, original = _saved.pop()
        setattr(np, attr, original)
