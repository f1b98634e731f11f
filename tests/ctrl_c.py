"""The Ctrl-C sweep shared by tests/runtime/test_interrupts*.py: SIGINT sent at the k-th line a call
runs in given files, as a Ctrl-C arriving there would be, under Python's own handler."""

from __future__ import annotations

import signal
import sys

import pytest

# Python's own Ctrl-C handler, as in a program started from a terminal. A process that inherits
# SIGINT ignored (a job started with `&` from a script) keeps SIG_IGN and never sees a
# KeyboardInterrupt: there the sweep would test nothing, so each test runs under Python's handler.
HANDLER = signal.default_int_handler


@pytest.fixture(autouse=True)
def python_handles_ctrl_c():
    found = signal.signal(signal.SIGINT, HANDLER)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)


def interrupt_at(k, call, files, skip=()):
    """Run ``call`` with SIGINT sent at the k-th line it runs in ``files`` (functions named in
    ``skip`` not counted); (lines counted, whether a KeyboardInterrupt came out)."""
    seen = [0]

    def tracer(frame, event, arg):
        if frame.f_code.co_filename not in files or frame.f_code.co_name in skip:
            return None
        if event == "line":
            seen[0] += 1
            if seen[0] == k:
                signal.raise_signal(signal.SIGINT)
        return tracer

    sys.settrace(tracer)
    try:
        call()
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sys.settrace(None)
    return seen[0], interrupted
