"""A Ctrl-C at any line of ``leapp.start()`` or ``leapp.stop()`` leaves no session half open.

As in test_interrupts.py, a tracer sends SIGINT (as Ctrl-C does) at the k-th line run by the
call, in leapp's session, patch, trace-state and signal-deferral code, for every k. The rule:
``start()`` either returns an open session or raises with none left open; ``stop()`` closes
the session, interrupted or not (but at its very first line event, before any of it ran). Then NumPy is NumPy's, no trace is active, the collector threshold
and the SIGINT handler are as before, and a fresh session traces.
"""

from __future__ import annotations

import gc
import signal

import numpy as np
from ctrl_c import HANDLER, interrupt_at, python_handles_ctrl_c  # noqa: F401 (an autouse fixture)

import leapp
from leapp import annotate, api, interrupts
from leapp.pipeline import links
from leapp.runtime import patches, state

ORIGINALS = {name: getattr(np, name) for name in ("asarray", "array", "zeros", "ones", "empty", "full")}
FILES = {api.__file__, patches.__file__, state.__file__, interrupts.__file__, links.__file__}
THRESHOLD = gc.get_threshold()


def _interrupt_at(k, call):
    return interrupt_at(k, call, FILES)


def _is_open():
    open_ = api._session is not None and api._session.open
    assert open_ == patches.is_installed(), "a session open without the patches, or the reverse"
    assert open_ == (state.current() is not None), "a session open without its trace, or the reverse"
    return open_


def _nothing_left():
    assert not _is_open()
    assert {name: getattr(np, name) for name in ORIGINALS} == ORIGINALS
    assert gc.get_threshold() == THRESHOLD
    assert signal.getsignal(signal.SIGINT) is HANDLER


def _one_pass():
    x = annotate.input_tensors("scale", {"x": np.arange(3.0)})
    annotate.output_tensors("scale", {"y": np.asarray(x) * 2.0})


def _sweep(call, before=lambda: None):
    """(lines the call runs, [k interrupted with the session left open], [k interrupted])."""
    k, left_open, interrupted_at = 1, [], []
    while True:
        before()
        lines, interrupted = _interrupt_at(k, call)
        if lines < k:
            leapp.reset()
            return k - 1, left_open, interrupted_at
        if interrupted:
            interrupted_at.append(k)
            if _is_open():
                left_open.append(k)
        if _is_open():
            leapp.stop()  # an uninterrupted stop closes what the call left open
        _nothing_left()
        k += 1


def test_a_ctrl_c_at_every_line_of_start_leaves_no_session_open():
    lines, left_open, interrupted_at = _sweep(lambda: leapp.start("ctrl-c"))
    assert lines > 20 and len(interrupted_at) == lines  # every line reached, every interrupt came out
    assert left_open == []  # start() raised: no session, whatever line the Ctrl-C came at


def test_a_ctrl_c_at_every_line_of_stop_closes_the_session():
    def opened():
        leapp.start("ctrl-c")
        _one_pass()

    lines, left_open, interrupted_at = _sweep(leapp.stop, before=opened)
    assert lines > 20 and len(interrupted_at) == lines
    # stop() raised: the session is closed, unless the Ctrl-C came at the first line event of the call,
    # its `try:`, before any statement of stop() ran (as if it came just before the call: no Python
    # code can run earlier); then the session is untouched and the next stop() closes it (_sweep)
    assert left_open in ([], [1])


def test_after_the_interrupts_a_session_still_traces():
    test_a_ctrl_c_at_every_line_of_start_leaves_no_session_open()
    leapp.start("after")
    _one_pass()
    _one_pass()  # the second pass validates the first
    leapp.stop()
    graph = leapp.compile_graph()["scale"]
    np.testing.assert_array_equal(graph(x=np.ones(3))["y"], np.full(3, 2.0))
    _nothing_left()
