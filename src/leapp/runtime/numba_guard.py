"""Functions compiled by numba (``@numba.jit``) given traced arrays: refused at the call.

numba runs machine code on an array's memory, outside every hook: what it computes from a traced
array could only be a constant in the graph. And a function numba compiles while a trace holds
leapp's wrappers on NumPy's and ``math``'s attributes is typed against the wrappers: numba raised
its own ``TypingError`` ("unsupported NumPy function 'numpy.dot'") or, on the process's first
compile, an ``AttributeError`` from its registries (robosuite's ``quat2mat``, and ``mat2quat``
called inside ``mat2pose``): raw errors out of ordinary code.

numba types an ndarray subclass that sets ``__numba_array_subtype_dispatch__`` through
``typeof``, before it compiles or runs anything; the ``typeof`` registered here for
``TracedNpArray`` refuses there while a trace is open, naming the numba function and the line
that called it. Registered when the wrappers are installed and numba is already imported (a
program that never imports numba never pays for it).
"""

from __future__ import annotations

import itertools
import os
import sys
from types import FrameType

from ..errors import UntracedCallError, UntracedCallWarning

_registered = False
_SKIP = ("numba", "functools.py", "leapp")


def register(traced_cls) -> None:
    """Have numba ask ``traced_cls`` for its type (``_typeof_traced``); once, and only when numba is
    imported."""
    global _registered
    if _registered or "numba" not in sys.modules:
        return
    _registered = True
    try:
        from numba.extending import typeof_impl
    except Exception:  # noqa: BLE001 - a numba that cannot be imported cannot compile either
        return
    import numpy as np

    ndarray_typeof = typeof_impl.dispatch(np.ndarray)

    def _typeof_traced(val, c):
        from . import state

        trace = state.current()
        if trace is None:  # not tracing: numba's own answer for an ndarray
            return ndarray_typeof(val, c)
        _refuse(trace)
        return ndarray_typeof(val, c)  # unreachable: _refuse raises

    typeof_impl.register(traced_cls)(_typeof_traced)
    traced_cls.__numba_array_subtype_dispatch__ = True


def _frames():
    """The frames outside numba, functools and leapp, innermost first: the first called the numba
    function (the user's line, or a library's line inside the user's call)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        parts = path.split(os.sep)
        if not any(p in parts or path.endswith(p) for p in _SKIP):
            yield frame
        frame = frame.f_back


def _dispatcher_name() -> str | None:
    """The numba function being typed: ``self`` of numba's ``typeof_pyval`` on the stack."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        me = frame.f_locals.get("self") if "numba" in frame.f_code.co_filename else None
        fn = getattr(me, "py_func", None)
        if fn is not None:
            return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
        frame = frame.f_back
    return None


def _refuse(trace) -> None:
    from . import record

    frames = list(itertools.islice(_frames(), 3))
    callee = _dispatcher_name() or "a function compiled by numba"
    loc = (frames[0].f_code.co_filename, frames[0].f_lineno, frames[0].f_code.co_name, None) if frames else None
    where = record.format_loc(loc)
    if len(frames) > 1:
        where += " (in " + ", called from ".join(
            f"{f.f_code.co_name}" if i == 0 else f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"
            for i, f in enumerate(frames)) + ")"
    message = (f"{callee} called at {where} is compiled by numba (@numba.jit) and is given a traced array: "
               f"numba runs machine code on the array's memory, outside leapp's hooks, so the graph could "
               f"only hold its result as a constant. Compute it with NumPy functions leapp traces (numba "
               f"keeps the Python source as `.py_func`, which numba may compute differently), or compute it "
               f"outside the compiled function and pass it in as an input")
    record.report(trace, "untraced", callee, loc, message, UntracedCallError, UntracedCallWarning, chain=False)
    # not strict: warned; numba would now compile against leapp's wrappers, or freeze the value
    raise UntracedCallError(message)
