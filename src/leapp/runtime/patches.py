"""Calls that never reach NumPy's dispatch hooks, intercepted while a session is open.

``np.asarray(x)`` silently drops the TracedNpArray subclass, ``np.zeros(3)``
makes a plain buffer that later writes of traced values would bypass, and
``torch.from_numpy`` knows nothing of NumPy subclasses. These are the table's
``kind="bypass"`` entries; while a leapp session is open (and only then) the
module attributes are replaced by wrappers that keep tracing. Rewritten code
(``leapp rewrite``) reaches the same handler through ``leapp.dispatch``,
which also covers names bound with ``from numpy import zeros``.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from .. import dispatch, table
from ..errors import EscapeError, EscapeWarning
from . import record, scalar_casts, state
from .ir import _is_internal
from .names import function_name
from .traced import TracedNpArray, _loc

_ALIASING = {"numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}
_SIZED = {"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.arange",
          "numpy.eye", "numpy.identity"}


def _traced_in(args, kwargs):
    return record._contains_traced(args) or (kwargs and record._contains_traced(list(kwargs.values())))


_busy = False


def bypass_call(name, original, args, kwargs, from_user=True):
    """Trace one call of a bypass entry (``np.asarray``, ``np.zeros``, ``torch.from_numpy``...).

    Only calls written in user code are traced: NumPy's and torch's own Python
    code also calls ``np.array`` and must keep getting plain arrays.
    """
    global _busy
    trace = state.active
    if trace is None or _busy or (from_user and _is_internal(sys._getframe(2).f_code)):
        return original(*args, **kwargs)
    _busy = True
    try:
        return _bypass(trace, name, original, args, kwargs)
    finally:
        _busy = False


def _bypass(trace, name, original, args, kwargs):
    if name.startswith("torch."):
        return _torch_conversion(name, original, args, kwargs)
    traced = _traced_in(args, kwargs)
    if name in _ALIASING:
        if not traced:
            return original(*args, **kwargs)
        a = args[0] if args else kwargs.get("a")
        dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        same = isinstance(a, TracedNpArray) and (dtype is None or np.dtype(dtype) == a.dtype)
        if same and not (name == "numpy.ascontiguousarray" and a.ndim == 0):  # that one gives 0-d shape (1,)
            return a
        return record.record_call(name, original, args, kwargs, _loc())
    if traced and name in _SIZED and name != "numpy.full":
        loc = _loc()
        message = (f"{name} at {record.format_loc(loc)} takes its size from traced data: the size of "
                   f"the result depends on the data; use a fixed size")
        record.report(trace, "escape", name, loc, message, EscapeError, EscapeWarning)
        traced = False
    if traced:
        return record.record_call(name, original, args, kwargs, _loc())
    result = original(*[record.plain(a) for a in args], **record.plain_kwargs(kwargs))
    if not isinstance(result, np.ndarray) or trace.quiet:
        return result
    # A fresh array made while tracing: a traced constant, so that writes of
    # traced values into it (buf[0] = x) are recorded, not lost.
    return record.wrap(result, trace.const(result, _loc()))


def _torch_conversion(name, original, args, kwargs):
    from .torch_interop import traced_tensor

    data = args[0] if args else kwargs.get("data")
    if isinstance(data, TracedNpArray):
        return traced_tensor(data, name, dtype=kwargs.get("dtype"), copy=name == "torch.tensor")
    return original(*args, **kwargs)


_saved: list = []


def _wrapper(name, original):
    def wrapper(*args, **kwargs):
        return bypass_call(name, original, args, kwargs)

    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    wrapper._leapp_bypass = name
    return wrapper


def _targets():
    for name, entry in table.TABLE.items():
        if isinstance(entry, table.Entry) and entry.kind == "bypass":
            module_name, attr = name.rsplit(".", 1)
            module = {"numpy": np, "torch": torch}.get(module_name)
            if module is not None and hasattr(module, attr):
                yield name, module, attr
    yield "numpy.array", np, "array"


def install():
    """Swap in the wrappers (idempotent); undone by ``uninstall``."""
    if _saved:
        return
    for name, module, attr in _targets():
        original = getattr(module, attr)
        if getattr(original, "_leapp_bypass", None):
            continue
        _saved.append((module, attr, original))
        setattr(module, attr, _wrapper(name, original))
    scalar_casts.install()
    dispatch.set_handler(_dispatch_handler)


def uninstall():
    scalar_casts.uninstall()
    while _saved:
        module, attr, original = _saved.pop()
        setattr(module, attr, original)
    dispatch.set_handler(None)


def _dispatch_handler(fn, args, kwargs):
    """Calls routed by rewritten source: bypass entries are traced here, the rest as usual."""
    original = getattr(fn, "__wrapped__", fn)
    bypass = getattr(fn, "_leapp_bypass", None)
    if bypass:
        return bypass_call(bypass, fn.__wrapped__, args, kwargs, from_user=False)
    if state.active is not None and callable(original):
        try:
            name = function_name(original)
        except Exception:
            name = None
        entry = table.lookup(name) if name else None
        if isinstance(entry, table.Entry) and entry.kind == "bypass":
            return bypass_call(name, original, args, kwargs, from_user=False)
        if isinstance(entry, table.Entry) and entry.kind in ("function", "ufunc") and _nested_traced(args):
            return _with_sequences_converted(name, fn, args, kwargs)
        if isinstance(entry, table.Unsupported) and not _traced_in(args, kwargs):
            # np.random.* and friends: no traced operand reaches NumPy's hooks,
            # but the result would still be frozen into the graph.
            result = fn(*args, **kwargs)
            return record.untraced(state.active, name, _loc(), result, entry)
    return fn(*args, **kwargs)


def _nested_traced(args):
    return any(isinstance(a, (list, tuple)) and a and record._contains_traced(a) for a in args)


def _has_traced(value):
    if isinstance(value, TracedNpArray):
        return True
    return isinstance(value, (list, tuple)) and any(_has_traced(v) for v in value)


def _with_sequences_converted(name, fn, args, kwargs):
    """``np.sum([x, y])``: NumPy looks for overrides in ``[x, y]`` only for the functions that take
    sequences of arrays (concatenate, stack...). For the others the traced arrays inside the list
    would be converted by NumPy's C code, out of leapp's sight; convert them as np.asarray does,
    traced, and call again."""
    result = fn(*args, **kwargs)
    if _has_traced(result):
        return result
    converted = tuple(
        bypass_call("numpy.asarray", _ORIGINAL_ASARRAY, (a,), {}, from_user=False)
        if isinstance(a, (list, tuple)) and a and record._contains_traced(a) else a
        for a in args
    )
    return fn(*converted, **kwargs)


_ORIGINAL_ASARRAY = np.asarray  # bound at import, before any session patches it
