"""The traced dispatcher that ``leapp rewrite`` routes NumPy calls through.

Rewritten source reads ``_leapp.call("prep.py:12:8", np.clip, x, 0.0, 1.0)``
where the original read ``np.clip(x, 0.0, 1.0)``, ``_leapp.method("prep.py:13:8",
x, "sum", axis=0)`` for ``x.sum(axis=0)``, ``_leapp.foreign("prep.py:15:8",
Rotation.from_quat, q)`` for a call into other code given traced data, and ``_leapp.getitem("prep.py:14:8",
TABLE, idx)`` for ``TABLE[idx]`` when the index may be traced and the indexed
value may be a plain array (ndarray's C indexing of a plain array never
reaches leapp's hooks, so the lookup would be frozen). With no tracing session
active this is exactly the original call plus one Python frame. While the
runtime traces, it registers a handler here, so the call site (file, line,
column) lands on the recorded node, and calls that bypass NumPy's dispatch
hooks (``np.asarray``, ``np.zeros``) are routed to the tracer.

The handler is process-wide (installed while any thread traces) and hands
untraced threads straight to NumPy; the current site is per thread, so a call
running in another thread never lends its site to a trace.

This module imports neither torch nor numpy.
"""

from __future__ import annotations

import operator
import threading

_handler = None  # set by leapp.runtime while a session is active


class _PerThread(threading.local):
    site: str | None = None


_local = _PerThread()
local = _local  # the runtime's per-call hooks read ``local.site`` (== current_site()) directly


def current_site() -> str | None:
    """The ``file:line:col`` of the rewritten call being dispatched in this thread, if any."""
    return _local.site


def call(site, fn, /, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` as the NumPy call written at ``site``."""
    if _handler is None:
        return fn(*args, **kwargs)
    local = _local
    previous = local.site
    local.site = site
    try:
        return _handler(fn, args, kwargs)
    finally:
        local.site = previous


def method(site, receiver, name, /, *args, **kwargs):
    """Call ``receiver.name(*args, **kwargs)``, the method call written at ``site``."""
    bound = getattr(receiver, name)
    if _handler is None:
        return bound(*args, **kwargs)
    local = _local
    previous = local.site
    local.site = site
    try:
        return bound(*args, **kwargs)
    finally:
        local.site = previous


def foreign(site, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``: a call into other code given traced data, written at ``site``.

    The runtime checks that the result comes back traced: a plain array computed
    from the inputs (another library, a C extension) would be frozen into the graph.
    """
    if _handler is None:
        return fn(*args, **kwargs)
    return call(site, foreign_call, fn, *args, **kwargs)


def foreign_call(fn, /, *args, **kwargs):
    """What the handler receives for ``foreign``: ``fn(*args, **kwargs)`` to be checked."""
    return fn(*args, **kwargs)


def getitem(site, value, index, /):
    """``value[index]``, the subscript written at ``site``."""
    if _handler is None:
        return value[index]
    return call(site, _getitem, value, index)


_getitem = operator.getitem


def set_handler(handler) -> None:
    """Install (or with None, remove) the runtime's handler. Used by leapp.runtime."""
    global _handler
    _handler = handler
