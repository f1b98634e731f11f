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


def branch(arr, frame, advice: str) -> str:
    """``bool(arr)`` in ``frame``: note the library function for conversion; the escape's advice."""
    conversions = _local.active
    if conversions is None:
        return advice
    return conversions.on_branch(arr, frame, advice)
