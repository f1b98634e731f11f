"""Ctrl-C held off for the few lines that must run whole.

Python delivers SIGINT as a ``KeyboardInterrupt`` raised in the main thread at
whatever bytecode runs next. Swapping NumPy's module attributes, counting a
hold or setting the collector threshold is several bytecodes; split by an
interrupt, it could leave NumPy patched for good. ``deferred()`` runs such a
block with SIGINT recorded instead of raised, then puts the handler back and,
if a SIGINT came meanwhile, sends it again, so the program's own handler (by
default: ``KeyboardInterrupt``) sees it right after the block.

Only the main thread receives signals, so elsewhere the block just runs; a
block inside a deferred block runs under the outer one. This module imports
neither torch nor numpy.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's own functions, without the module's enum conversions (most of their cost)
import signal
import threading
from contextlib import contextmanager

_MAIN = threading.main_thread()
_SIGINT = int(signal.SIGINT)
_pending: list = []  # one entry per SIGINT received while deferred (list.append cannot be split)


def _record(signum, frame):
    _pending.append(signum)


@contextmanager
def deferred():
    """The block runs whole: a SIGINT received inside it is delivered when it ends."""
    if threading.current_thread() is not _MAIN or _signal.getsignal(_SIGINT) in (None, _record):
        yield  # no Python-level SIGINT here (another thread, a C handler), or an outer block defers
        return
    previous = _signal.signal(_SIGINT, _record)
    try:
        yield
    finally:
        _signal.signal(_SIGINT, previous)
        if _pending:
            _pending.clear()
            signal.raise_signal(signal.SIGINT)  # to the handler now in place, as if it came now
