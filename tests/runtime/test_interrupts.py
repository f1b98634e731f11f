"""A Ctrl-C at any line of installing or removing the NumPy patches leaves nothing broken.

The tracer sends SIGINT (as Ctrl-C does) at the k-th line run in leapp's patch,
trace-state and signal-deferral code during a trace, for every k; afterwards a
fresh ``leapp.compile`` works, NumPy's functions are NumPy's own, no trace is
active, the collector threshold and the SIGINT handler are as before.
"""

from __future__ import annotations

import gc
import signal
import sys

import numpy as np
from ctrl_c import HANDLER, interrupt_at, python_handles_ctrl_c  # noqa: F401 (an autouse fixture)

import leapp
from leapp import interrupts
from leapp.runtime import patches, state

ORIGINALS = {name: getattr(np, name) for name in ("asarray", "array", "zeros", "ones", "empty", "full")}
FILES = {patches.__file__, state.__file__, interrupts.__file__}
HOOKS = {"bypass_call", "_dispatch_handler", "_traced_in", "_nested_traced", "wrapper", "current", "_bypass"}


def doubled(x):
    return np.asarray(x) * 2.0


def _interrupt_at(k, call):
    return interrupt_at(k, call, FILES, HOOKS)


def _nothing_left():
    assert {name: getattr(np, name) for name in ORIGINALS} == ORIGINALS
    assert not patches.is_installed()
    assert state.current() is None
    assert gc.get_threshold() == THRESHOLD
    assert signal.getsignal(signal.SIGINT) is HANDLER


THRESHOLD = gc.get_threshold()


def test_a_ctrl_c_at_every_line_of_patch_install_and_removal_leaves_nothing_broken():
    cf = leapp.compile(doubled, max_signatures=10_000, check=0)  # the patches, not the check
    cf(np.ones(1))
    k, interrupted_at = 1, []
    while True:
        n = 1 + k
        lines, interrupted = _interrupt_at(k, lambda n=n: cf(np.ones(n)))  # a new shape: a new trace
        if lines < k:
            break
        if interrupted:
            interrupted_at.append(k)
        _nothing_left()
        k += 1
    assert k > 50 and len(interrupted_at) > 10  # the lines were reached, and interrupts came out
    fresh = leapp.compile(doubled)
    np.testing.assert_array_equal(fresh(np.arange(3.0)), np.arange(3.0) * 2)
    _nothing_left()


def test_a_ctrl_c_during_decoration_is_a_keyboard_interrupt_and_nothing_else():
    """Every 53rd line run by leapp.compile(fn) (lint, LibCST rewrite, recompile): a sample of all
    ~40,000, since each run decorates again (LibCST's cleanup used to turn some into KeyError)."""
    leapp.compile(doubled)
    outcomes = set()
    for k in range(1, 1_000_000, 53):
        seen = [0]

        def tracer(frame, event, arg, k=k, seen=seen):
            if event == "line":
                seen[0] += 1
                if seen[0] == k:
                    raise KeyboardInterrupt
            return tracer

        sys.settrace(tracer)
        try:
            leapp.compile(doubled)
            outcomes.add("done")
        except KeyboardInterrupt:
            outcomes.add("interrupted")
        finally:
            sys.settrace(None)
        if seen[0] < k:
            break
    assert outcomes == {"interrupted", "done"}  # anything else (a KeyError) fails here
    np.testing.assert_array_equal(leapp.compile(doubled)(np.arange(3.0)), np.arange(3.0) * 2)
    _nothing_left()
