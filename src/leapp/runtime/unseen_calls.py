"""Calls that take traced data and give back plain arrays, at any depth of library code.

C code reads a traced array's memory with no hook to tell leapp: a LAPACK routine wrapped by f2py
(``scipy.linalg``'s ``gesdd``), a C extension, NumPy's own C ``asarray`` inside a Python function
that is not dispatched (``np.asarray_chkfinite``, which scipy's ``_asarray_validated`` calls). What
such code returns is a plain array computed from the inputs; where it meets traced data it becomes a
constant of the graph, right for the traced sample only. The rewritten call (``_leapp.foreign``)
checks what the library function the user called returns, not what the library's own calls return
inside it (``scipy.linalg.pinv(a) @ a`` in a library gives a traced result holding a frozen
``pinv``), and the seed API routes no call at all.

So while a seed-API trace is open in a thread, and while a compiled function's call into other
code runs (``_leapp.foreign``: the compiled function's own code is rewritten and checks its calls),
a profile function (``sys.setprofile``, that thread only) watches every Python function outside
leapp that is called from code outside leapp, NumPy and torch: one given traced data computed from the inputs (an argument, or an item of a list, tuple or
dict argument) that returns a plain ``ndarray`` (on its own, or in a tuple, list or dict) is
reported at the line that called it (``UntracedCallError``; a warning in the seed API) when it
views a traced array's memory (NumPy's C ``asarray`` inside ``np.asarray_chkfinite`` dropped the
subclass), or when it is a new array and the call was given no plain array to compute it from.
Not reported: what a call given plain arrays too returns that views none (``predict(x, P, F, Q)``
returns the new covariance, computed from the plain ``P``, ``F`` and ``Q``; ``vg``'s
``broadcast_and_tile`` tiles its plain argument), a module constant of the callee (or a view of
one), NumPy scalars (a tolerance such as ``np.finfo(x.dtype).eps``), generators. So C code handed
a traced array together with plain ones (an f2py routine called directly with both) is left to the
differential check.
Inside, each watched function's innermost report is kept: the outer functions that hand the same
plain value on are not reported again.

C code also *writes* into traced buffers unseen (``scipy.linalg.expm`` copies the matrix into a
scratch array with a traced write, then its compiled Pade step overwrites that array in place):
the graph keeps the value leapp recorded, NumPy goes on with what C wrote. So a traced array's
memory is kept after each recorded write into it (``written``) and, for a watched call, the memory
of the traced arrays it was given; when a watched call returns, an array whose memory differs
while leapp recorded no write since was written by code leapp cannot see: reported at the line
that called the function (the array's size is limited to ``SNAPSHOT_BYTES``; larger ones are not
compared).

A profile function installed by someone else (``cProfile``) is left in place, and this guard is
off in that thread while it is; the default differential check still runs. The profile function
makes the code it watches (and leapp's hooks under it) trace about 3-4x slower on Python 3.11 (most of it
the interpreter's cost of any profile function: a no-op one costs 2-2.5x).
"""

from __future__ import annotations

import sys
import threading
import weakref
from contextlib import contextmanager

import numpy as np

from ..errors import UntracedCallError, UntracedCallWarning
from . import record, state
from .ir import _PKG_DIR, _is_internal

_ndarray = np.ndarray
_NOT_A_CALL = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
_VARARGS, _VARKEYWORDS = 0x04, 0x08
_EXAMPLES = _PKG_DIR + "/examples"

SNAPSHOT_BYTES = 1 << 16  # copied at every recorded write into the array: a loop of writes pays it each time
_callee: dict = {}  # id(code) -> (code, whether calls of it are watched)


class _PerThread(threading.local):
    """What one thread's watch holds (a profile function is per thread, and so is tracing)."""

    def __init__(self):
        self.pending: dict = {}  # id(frame) -> (frame, ids of its plain arguments, seq at the call)
        self.reported: set = set()  # id(frame) of watched calls a call inside them was reported for
        self.memory: dict = {}  # id(root) -> (weakref to a traced root array, its write version,
        # its bytes then, where leapp wrote it, seq), oldest first
        self.seq = 0
        # False while leapp.compile traces with its differential check on: the check (the graph
        # against NumPy on generated inputs) refuses what C code froze whatever the mechanism, and
        # the profile function tripled the recording (robot example 0.67 -> 2.08 ms); with check=0
        # this watch is the guard left, and it is on
        self.enabled = True


_t = _PerThread()
_pending_anywhere = [0]  # pending calls in all threads: a return event with none pending returns at once


def _watched(code) -> bool:
    hit = _callee.get(id(code))
    if hit is None:
        if len(_callee) >= 16384:
            _callee.clear()
        name = code.co_filename
        ours = name.startswith(_PKG_DIR) and not name.startswith(_EXAMPLES)
        skip = ours or bool(code.co_flags & _NOT_A_CALL) or name.startswith("<__array_function__") \
            or (_is_internal(code) and "numpy" not in name)  # torch: not NumPy's Python functions
        hit = _callee[id(code)] = (code, not skip)
    return hit[1]


def _profile(frame, event, arg, _local=state.local, _finalizing=sys.is_finalizing, _callee=_callee,
             _pending_anywhere=_pending_anywhere):
    # called for every event in the thread, leapp's own included: the common ones return at once
    if event == "call":
        hit = _callee.get(id(frame.f_code))
        if not (_watched(frame.f_code) if hit is None else hit[1]):
            return
        trace = _local.trace
        if trace is None or _finalizing():  # a seed trace left open at exit: module globals are going
            return
        back = frame.f_back
        if back is None or _is_internal(back.f_code):
            return  # called by leapp (a rewritten call checks its own result), NumPy or torch
        args = _arguments(frame)
        if args and _traced_data(trace, args):
            t = _t
            t.pending[id(frame)] = (frame, {id(a) for a in args if type(a) is _ndarray}, t.seq + 1)
            _pending_anywhere[0] += 1
            for a in args:
                if isinstance(a, record._TracedNpArray):
                    _keep(a._lp_root if a._lp_parent is not None else a, None)
    elif event == "return" and _pending_anywhere[0]:
        entry = _t.pending.pop(id(frame), None)
        if entry is not None:
            _pending_anywhere[0] -= 1
            if _local.trace is not None and not _finalizing():
                _returned(frame, entry[1], entry[2], arg)


def _arguments(frame) -> list:
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & _VARARGS) + bool(code.co_flags & _VARKEYWORDS)
    if not n:
        return []
    values = frame.f_locals
    out: list = []
    for name in code.co_varnames[:n]:
        v = values.get(name)
        if isinstance(v, dict):
            out.extend(v.values())
        elif isinstance(v, (list, tuple)):
            out.extend(v)
        else:
            out.append(v)
    return out


def _traced_data(trace, values) -> bool:
    from . import constness, record

    return any(isinstance(v, record._TracedNpArray) or isinstance(v, (list, tuple)) and v
               for v in values) and constness.any_data(trace, values)


def _plain_results(value) -> list:
    if isinstance(value, (list, tuple)):
        return [v for v in value if type(v) is _ndarray]
    if isinstance(value, dict):
        return [v for v in value.values() if type(v) is _ndarray]
    return [value] if type(value) is _ndarray else []


def _bases(a):
    while a is not None:
        yield a
        a = a.base if isinstance(a, _ndarray) else None


def written(root, loc) -> None:
    """leapp recorded a write into the traced array ``root``: what its memory holds now is the graph's."""
    if sys.getprofile() is _profile:
        _keep(root, loc)


def _keep(root, loc) -> None:
    if root.nbytes > SNAPSHOT_BYTES or root._lp_node is None:
        return
    t = _t
    memory = t.memory
    held = memory.pop(id(root), None)
    if held is not None and (held[0]() is not root or held[1] != root._lp_version):
        held = None
    before = held[2] if held is not None else _ndarray.tobytes(root)
    where = loc if loc is not None else held[3] if held is not None else None
    t.seq += 1  # (re)inserted last: the entries a call must compare are the newest, from its seq on
    ref = weakref.ref(root, _forget(memory, id(root))) if held is None else held[0]
    memory[id(root)] = (ref, root._lp_version, before, where, t.seq)


def _forget(memory, key):
    def gone(ref):  # the array died (in whichever thread the collector runs)
        held = memory.get(key)
        if held is not None and held[0] is ref:
            memory.pop(key, None)
    return gone


def _written_unseen(frame, caller, since) -> None:
    """Report each array kept since the call began whose memory changed with no write recorded since."""
    for root, written_at in _changed(since):
        trace = state.local.trace
        if trace is not None:
            _report_write(trace, _name(frame), _caller_loc(caller), root, written_at)


def _changed(since) -> list:
    """(array, where leapp last wrote it) for each kept array, kept from ``since`` on, whose memory
    changed with no write recorded since; they are dropped from what is kept."""
    changed = []
    memory = _t.memory
    for key, (ref, version, before, loc, seq) in reversed(memory.items()):
        if seq < since:
            break
        root = ref()
        if root is not None and root._lp_version == version and _ndarray.tobytes(root) != before:
            changed.append((key, root, loc))
    for key, _, _ in changed:
        memory.pop(key, None)
    return [(root, loc) for _, root, loc in changed]


def before_call(args, kwargs):
    """A rewritten call into other code (``_leapp.foreign``) is about to run: keep the memory of
    the traced arrays it is given (C code called straight from the user's line has no Python frame
    of its own to watch); returns what ``after_call`` needs."""
    if sys.getprofile() is not _profile:
        return None
    since = _t.seq + 1
    for a in (*args, *kwargs.values()):
        if isinstance(a, record._TracedNpArray):
            _keep(a._lp_root if a._lp_parent is not None else a, None)
    return since


def after_call(trace, since, name, loc) -> None:
    """The call ``before_call`` saw has returned: report each array it was given that holds other bytes."""
    if since is None:
        return
    for root, written_at in _changed(since):
        _report_write(trace, name, loc, root, written_at)


def _from_traced(a, plain_args, frame) -> bool:
    """Whether the plain array ``a`` a watched call returned holds values computed from its traced
    arguments: it views a traced array's memory (NumPy's C ``asarray`` dropped the subclass), or
    it is a new array and the call was given no plain array it could have been computed from."""
    bases = list(_bases(a))
    if any(isinstance(b, record._TracedNpArray) for b in bases):
        return True
    if plain_args:
        return False  # a Kalman filter's covariance, computed from the plain matrices it was given
    constants = {id(v) for v in frame.f_globals.values() if type(v) is _ndarray}
    return not any(id(b) in constants for b in bases)  # a module constant of the callee's


def _returned(frame, plain_args, since, value):
    caller = frame.f_back
    t = _t
    if t.memory and caller is not None:
        _written_unseen(frame, caller, since)
    if id(frame) in t.reported:
        t.reported.discard(id(frame))
        return  # a call inside it was reported: the plain value it hands on is that call's
    plain = _plain_results(value)
    if not plain or not any(_from_traced(a, plain_args, frame) for a in plain):
        return
    trace = state.local.trace
    if trace is None or caller is None:
        return
    outer = caller
    while outer is not None:  # the watched calls it ran inside are not reported again
        if id(outer) in t.pending:
            t.reported.add(id(outer))
        outer = outer.f_back
    _report(trace, frame, caller)


def _report(trace, frame, caller):
    from . import record, where

    loc = _caller_loc(caller)
    name = _name(frame)
    message = (f"{name} at {record.format_loc(loc)}{where.callers(loc)} was given traced data and "
               f"returned a plain NumPy array: code leapp cannot see read the traced values (C code "
               f"reading the traced memory: a LAPACK or f2py wrapper, a C extension, NumPy's own "
               f"asarray inside a Python function; or a write of traced values into a buffer made "
               f"without leapp's hooks, as by a NumPy function bound at import), so what it computed "
               f"from the inputs would be frozen into the graph as a constant, wrong for other inputs. Use NumPy functions leapp traces, or call it "
               f"outside the traced code and pass the result in as an input")
    record.report(trace, "untraced", name, loc, message, UntracedCallError, UntracedCallWarning, chain=False)


def _name(frame) -> str:
    module = frame.f_globals.get("__name__")
    qualname = frame.f_code.co_qualname
    return f"{module}.{qualname}" if module else qualname


def _caller_loc(caller):
    return (caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name, None)


def _report_write(trace, name, loc, root, written_at):
    from . import record, where

    node = root._lp_node
    if written_at is not None:
        made = f"last written by leapp at {record.format_loc(written_at)}"
    elif node is not None and node.loc is not None:
        made = f"computed at {record.format_loc(node.loc)}"
    else:
        made = "a traced input"
    message = (f"{name} at {record.format_loc(loc)}{where.callers(loc)} changed the memory of a traced "
               f"array ({made}, shape {root.shape}) with no write leapp could see: C code in it "
               f"(a compiled routine working in place, an f2py wrapper with overwrite_a) wrote into the "
               f"traced buffer, so the graph keeps the value leapp recorded while NumPy goes on with what "
               f"C wrote, wrong for every input. Use NumPy functions leapp traces, or call it outside "
               f"the traced code and pass the result in as an input")
    record.report(trace, "frozen", name, loc, message, UntracedCallError, UntracedCallWarning, chain=False)


def watch() -> bool:
    """Watch calls in this thread (a profiler someone else set stays); whether this call started it."""
    if sys.getprofile() is None:
        sys.setprofile(_profile)
        return True
    return False


def unwatch() -> None:
    """Stop watching in this thread (the trace closed); leaves another profiler alone."""
    if sys.getprofile() is _profile:
        sys.setprofile(None)
    t = _t
    _pending_anywhere[0] = max(0, _pending_anywhere[0] - len(t.pending))
    t.pending.clear()
    t.reported.clear()
    t.memory.clear()


@contextmanager
def watching():
    """Calls are watched inside the block (a library call from rewritten code, ``_leapp.foreign``):
    a compiled function's own code is rewritten and checks its calls itself, so only the library
    code it calls pays for the profile function."""
    started = _t.enabled and watch()  # (profile_off: leapp.compile's check is on)
    try:
        yield
    finally:
        if started:
            unwatch()


def enabled() -> bool:
    """Whether a trace started in this thread turns the watch on (``profile_off``)."""
    return _t.enabled


@contextmanager
def profile_off():
    """The profile function is not started inside the block, in this thread (``enabled``)."""
    t = _t
    saved, t.enabled = t.enabled, False
    try:
        yield
    finally:
        t.enabled = saved
