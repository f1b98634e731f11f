"""Library code with branches on data: the runtime's two hooks (``leapp.compiler.library`` decides).

While a compiled function's call into other code (``_leapp.foreign``) runs under
a trace, the compiler makes a *conversions* object active in this thread. Two
places consult it:

- ``bool()`` of a traced array (``TracedNpArray.__bool__``, an ``if``/``while``/
  ternary/``and``/``or`` test) asks ``branch(arr, frame, advice)``: the library
  function on the stack is noted for conversion (the compiler traces again with
  a converted copy), or the advice says why it was not converted;
- converted copies call ``substitute(fn)`` before every call they make, so a
  library function that calls another one calls its converted copy.

Nothing here modifies a library's module or function objects: converted copies
are new function objects called in place of the originals by leapp's own code.
With no conversions active (no trace, or ``convert_control_flow=False``) both
hooks return what they were given.
"""

from __future__ import annotations

import threading


class _PerThread(threading.local):
    active = None  # the compiler's conversions object while its call into library code runs
    user = None  # while a compiled function traces: its own tests seen on traced data (UserTests)


_local = _PerThread()


def active():
    return _local.active


def activate(conversions):
    """Make ``conversions`` active in this thread; returns the previous one (pass it to ``restore``)."""
    previous = _local.active
    _local.active = conversions
    return previous


def restore(previous) -> None:
    _local.active = previous


def substitute(fn):
    """The converted copy to call in place of ``fn`` (``fn`` itself when there is none)."""
    conversions = _local.active
    if conversions is None:
        return fn
    return conversions.substitute(fn)


class UserTests:
    """The compiled function's own tests on traced data that its static pass could not type
    (``if obs["observation.state"].mean() > 0:``: a dict's values, a closure's result): ``bool()``
    of a traced array on a line of its source notes that line, and the compiler converts the source
    again with those lines planned as branches on data (``analyze_source(data_lines=...)``), as it
    does for library code, then traces again."""

    def __init__(self, path: str, first: int, last: int):
        self.path, self.first, self.last = path, first, last
        self.lines: set = set()
        self.fresh = False

    def on_branch(self, arr, frame) -> None:
        from . import constness, state

        line = frame.f_lineno
        if frame.f_code.co_filename != self.path or not self.first <= line <= self.last or line in self.lines:
            return
        trace = state.current()
        if trace is None or not constness.value_depends_on_inputs(trace, arr):
            return
        self.lines.add(line)
        self.fresh = True


def watch_user(tests):
    """Make ``tests`` (a UserTests, or None) the one noting in this thread; returns the previous one."""
    previous = _local.user
    _local.user = tests
    return previous


def user_branch(arr, frame) -> None:
    tests = _local.user
    if tests is not None:
        tests.on_branch(arr, frame)


def branch(arr, frame, advice: str) -> str:
    """``bool(arr)`` in ``frame``: note the library function for conversion; the escape's advice."""
    conversions = _local.active
    if conversions is None:
        return advice
    return conversions.on_branch(arr, frame, advice)
