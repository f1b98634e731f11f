"""Which trace is recording right now, per thread.

Tracing belongs to the thread that opened the trace: another thread running
plain NumPy at the same time must see plain NumPy (no traced arrays, no
escapes, nothing recorded into the foreign trace). So the active trace lives
in a ``threading.local``; every hook asks ``current()``, which is one
attribute read. A thread rather than a ``contextvars`` context: the seed API
opens a trace in one statement and closes it in another, and notebook
kernels may run consecutive cells in different contexts of the same thread.

The garbage collector's threshold is the one piece of process-wide state a
trace changes; each open trace claims it, and the last claim to go restores it.
"""

from __future__ import annotations

import gc
import threading
import weakref
from contextlib import contextmanager
from typing import Any

from .. import interrupts


class _PerThread(threading.local):
    trace: Any = None  # the leapp.runtime.ir.Trace this thread records into, or None
    claim: Claim | None = None  # the claim ``activate`` took for it (``recording`` keeps its own in its frame)


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
#
# Each active trace holds a claim, and the threshold is set from the live claims
# (not counted). Claims are held weakly: a claim that a Ctrl-C kept from being
# given back (the frame holding it unwound first) goes with that frame, and its
# callback ends its thread's trace and settles the threshold, so an interrupt at
# any bytecode leaves no trace active and no threshold changed for good.
_GC_THRESHOLD_WHILE_TRACING = 50_000
_gc_lock = threading.Lock()
_claims: set = set()  # a _Ref to each live claim
_saved_threshold = None


class Claim:
    """What keeps a trace active and the collector relaxed; held by whoever opened the trace."""

    __slots__ = ("__weakref__",)


class _Ref(weakref.ref):
    __slots__ = ("thread", "trace")
    thread: int
    trace: Any


def _settle_collector():
    global _saved_threshold
    if _claims:
        if _saved_threshold is None:
            _saved_threshold = gc.get_threshold()
        gc.set_threshold(_GC_THRESHOLD_WHILE_TRACING, *_saved_threshold[1:])
    elif _saved_threshold is not None:
        gc.set_threshold(*_saved_threshold)
        _saved_threshold = None


def _gone(ref):
    """A claim died without being given back: end the trace it held, settle the threshold."""
    _claims.discard(ref)
    try:
        if ref.trace is not None and ref.thread == threading.get_ident() and _local.trace is ref.trace:
            _local.trace = None
        if _gc_lock.acquire(blocking=False):
            try:
                _settle_collector()
            finally:
                _gc_lock.release()
    except Exception:  # at interpreter exit the module may be half torn down
        pass


def _take(claim, trace=None):
    ref = _Ref(claim, _gone)
    ref.thread, ref.trace = threading.get_ident(), trace
    with interrupts.deferred(), _gc_lock:
        _claims.add(ref)
        _settle_collector()


def release(claim) -> None:
    """Give ``claim`` back (idempotent; None: nothing)."""
    if claim is None:
        return
    with interrupts.deferred(), _gc_lock:
        _claims.discard(weakref.ref(claim))
        _settle_collector()


def activate(trace, claim=None) -> bool:
    """Make ``trace`` the calling thread's active trace (replacing none).

    ``claim`` is held by the caller for as long as the trace is active (``recording`` keeps it in
    its frame); without one, the thread holds one until ``deactivate``.
    """
    if _local.trace is not None:
        raise RuntimeError(f"trace {_local.trace.name!r} is already active in this thread")
    if claim is None:
        claim = _local.claim = Claim()  # replacing one an interrupted deactivate left lets it go
    _take(claim, trace)
    _local.trace = trace
    from . import unseen_calls  # (it reads this module's thread state)

    # the seed API: user and library code run unrewritten, every call is watched (leapp.compile
    # turns it off where its differential check runs); whoever started it stops it
    return unseen_calls.enabled() and unseen_calls.watch()


@contextmanager
def collector_relaxed():
    """The tracing threshold for the block (lowering a trace allocates as much as recording it)."""
    claim = Claim()
    try:
        _take(claim)
        yield
    finally:
        release(claim)


def deactivate() -> None:
    """End the calling thread's active trace, if any (idempotent)."""
    _local.trace = None
    from . import unseen_calls

    unseen_calls.unwatch()
    claim, _local.claim = _local.claim, None
    release(claim)


@contextmanager
def recording(trace):
    """``trace`` is the calling thread's active trace inside the block, on every exit path too."""
    if _local.trace is not None:
        activate(trace)  # raises: another trace is active
    claim = Claim()
    watched = False
    try:
        watched = activate(trace, claim)
        yield trace
    finally:
        _local.trace = None
        if watched:  # the call watch this trace started (a profile function left on slowed every
            from . import unseen_calls  # later call in the thread 3x: robot example 3.2 -> 9.1 ms)

            unseen_calls.unwatch()
        release(claim)


@contextmanager
def suspended():
    """No trace is active in the calling thread inside the block; the one that was (if any) comes back after."""
    trace = _local.trace
    if trace is None:
        yield None
        return
    try:
        _local.trace = None
        yield trace
    finally:
        _local.trace = trace
