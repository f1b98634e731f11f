"""Which trace is recording right now, per thread.

Tracing belongs to the thread that opened the trace: another thread running
plain NumPy at the same time must see plain NumPy (no traced arrays, no
escapes, nothing recorded into the foreign trace). So the active trace lives
in a ``threading.local``; every hook asks ``current()``, which is one
attribute read. A thread rather than a ``contextvars`` context: the seed API
opens a trace in one statement and closes it in another, and notebook
kernels may run consecutive cells in different contexts of the same thread.

The garbage collector's threshold is the one piece of process-wide state a
trace changes; it is counted, so the last trace to close restores it.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager


class _PerThread(threading.local):
    trace = None  # the leapp.runtime.ir.Trace this thread records into, or None


_local = _PerThread()
# The per-call hooks (one read per intercepted NumPy call) read ``local.trace``
# directly: the same value as ``current()`` without the call.
local = _local


def current():
    """The trace the calling thread is recording into, or None."""
    return _local.trace


# Recording allocates a few small objects per op; with CPython's default
# young-generation threshold (700) the collector then runs every ~100 ops and
# costs about as much as the recording itself. A larger threshold while a
# trace is open keeps collection amortised; the default comes back after.
_GC_THRESHOLD_WHILE_TRACING = 50_000
_gc_lock = threading.Lock()
_gc_holders = 0
_saved_threshold = None


def activate(trace) -> None:
    """Make ``trace`` the calling thread's active trace (replacing none)."""
    if _local.trace is not None:
        raise RuntimeError(f"trace {_local.trace.name!r} is already active in this thread")
    _local.trace = trace
    _hold_collector()


def _hold_collector():
    global _gc_holders, _saved_threshold
    with _gc_lock:
        if _gc_holders == 0:
            _saved_threshold = gc.get_threshold()
            gc.set_threshold(_GC_THRESHOLD_WHILE_TRACING, *_saved_threshold[1:])
        _gc_holders += 1


def _release_collector():
    global _gc_holders, _saved_threshold
    with _gc_lock:
        _gc_holders -= 1
        if _gc_holders == 0 and _saved_threshold is not None:
            gc.set_threshold(*_saved_threshold)
            _saved_threshold = None


@contextmanager
def collector_relaxed():
    """The tracing threshold for the block (lowering a trace allocates as much as recording it)."""
    _hold_collector()
    try:
        yield
    finally:
        _release_collector()


def deactivate() -> None:
    """End the calling thread's active trace, if any (idempotent)."""
    if _local.trace is None:
        return
    _local.trace = None
    _release_collector()


@contextmanager
def recording(trace):
    """``trace`` is the calling thread's active trace inside the block, on every exit path too."""
    activate(trace)
    try:
        yield trace
    finally:
        deactivate()


@contextmanager
def suspended():
    """No trace is active in the calling thread inside the block; the one that was (if any) comes back after."""
    trace = _local.trace
    if trace is None:
        yield None
        return
    deactivate()
    try:
        yield trace
    finally:
        deactivate()
        activate(trace)
