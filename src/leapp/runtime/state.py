"""Which trace is recording right now.

A module attribute rather than a context variable: it is read on every
intercepted NumPy call, and tracing is single-threaded by nature (one Python
function, run eagerly, in order).
"""

from __future__ import annotations

import gc

active = None  # the leapp.runtime.ir.Trace being recorded, or None

# Recording allocates a few small objects per op; with CPython's default
# young-generation threshold (700) the collector then runs every ~100 ops and
# costs about as much as the recording itself. A larger threshold while a
# trace is open keeps collection amortised; the default comes back after.
_GC_THRESHOLD_WHILE_TRACING = 50_000
_saved_threshold = None


def activate(trace) -> None:
    global active, _saved_threshold
    active = trace
    if _saved_threshold is None:
        _saved_threshold = gc.get_threshold()
        gc.set_threshold(_GC_THRESHOLD_WHILE_TRACING, *_saved_threshold[1:])


def deactivate() -> None:
    global active, _saved_threshold
    active = None
    if _saved_threshold is not None:
        gc.set_threshold(*_saved_threshold)
        _saved_threshold = None
