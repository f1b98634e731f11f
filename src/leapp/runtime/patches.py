"""Calls that never reach NumPy's dispatch hooks, intercepted while a session is open.

``np.asarray(x)`` silently drops the TracedNpArray subclass, ``np.zeros(3)``
makes a plain buffer that later writes of traced values would bypass, and
``torch.from_numpy`` knows nothing of NumPy subclasses. These are the table's
``kind="bypass"`` entries; while a leapp session is open (and only then) the
module attributes are replaced by wrappers that keep tracing. Rewritten code
(``leapp rewrite``) reaches the same handler through ``leapp.dispatch``,
which also covers names bound with ``from numpy import zeros``.

The module attributes are process-wide, tracing is not: a wrapper called in a
thread with no active trace (``state.current()`` is None) calls NumPy's
original at once. The wrappers stay installed while any holder (an open
``leapp.start()`` session, a ``leapp.compile`` trace, in any thread) needs
them; the last one to let go puts NumPy's own functions back. Taking and giving back a
hold runs with Ctrl-C deferred (``leapp.interrupts``), and the holds are kept
weakly, so an interrupt at any bytecode cannot leave NumPy patched for good.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import math
import operator
import sys
import threading
import types
import weakref
from contextlib import contextmanager

import numpy as np
import torch

from .. import dispatch, interrupts, table
from ..ast_pass.parsing import parse
from ..errors import EscapeError, EscapeWarning, UntracedCallError, UntracedCallWarning
from ..table.math_module import MATH_FUNCTIONS
from . import (
    concatenators,
    constness,
    flat,
    foreign_probe,
    library_args,
    math_calls,
    numba_guard,
    record,
    scalar_args,
    state,
    unseen_calls,
)
from .inputs import _NO_TENSOR_DTYPE
from .ir import _is_internal
from .names import function_name
from .traced import TracedNpArray, _loc, in_arms

_ALIASING = {"numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}
_SIZED = {"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.arange",
          "numpy.eye", "numpy.identity"}


def _traced_in(args, kwargs):
    return record._contains_traced(args) or (kwargs and record._contains_traced(list(kwargs.values())))


class _PerThread(threading.local):
    busy = False  # inside _bypass: NumPy calls made while tracing one call are not traced again


_local = _PerThread()


def bypass_call(name, original, args, kwargs, from_user=True):
    """Trace one call of a bypass entry (``np.asarray``, ``np.zeros``, ``torch.from_numpy``...).

    Only calls written in user code are traced: NumPy's and torch's own Python
    code also calls ``np.array`` and must keep getting plain arrays.
    """
    trace = state.current()
    if trace is None:
        return original(*args, **kwargs)
    local = _local
    if local.busy:
        return original(*args, **kwargs)
    if from_user:
        frame = sys._getframe(2)
        if _is_internal(frame.f_code) or not _calls(frame, name):
            return original(*args, **kwargs)
    local.busy = True
    try:
        return _bypass(trace, name, original, args, kwargs)
    finally:
        local.busy = False


_callees: dict = {}  # (id(code), instruction offset) -> (code, how the call there names its callee)


def _calls(frame, name):
    """Whether the call running in the user's ``frame`` is the call of ``name``'s wrapper.

    A compiled library (numpy.random's Generator is Cython) calls ``np.empty`` with no Python
    frame of its own, so the nearest frame is the user's line ``rng.normal(0, 1, 5)``: that
    buffer, filled in C, must stay plain (traced, the graph kept its unfilled contents). The
    callee written on the line decides: a name or attribute chain is looked up (``np.empty``,
    ``e = np.empty; e(5)``); a callee reached through calls is judged by its last attribute
    (``...normal``); anything else, or a line whose source cannot be read, counts as the user's.
    """
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    hit = _callees.get(key)
    if hit is None:
        if len(_callees) >= 4096:
            _callees.clear()
        hit = _callees[key] = (code, _callee(code, frame.f_lasti))
    callee = hit[1]
    if callee is None:
        return True
    kind, parts = callee
    if kind == "attr":
        return parts == name.rsplit(".", 1)[-1]
    scopes = (frame.f_locals, frame.f_globals, frame.f_builtins)
    obj = next((scope[parts[0]] for scope in scopes if parts[0] in scope), None)
    for part in parts[1:]:
        if not isinstance(obj, (types.ModuleType, type)):  # no getattr on arbitrary objects
            return parts[-1] == name.rsplit(".", 1)[-1]
        obj = getattr(obj, part, None)
    return getattr(obj, "_leapp_bypass", None) == name


def _callee(code, lasti):
    try:
        line, end_line, col, end_col = next(itertools.islice(code.co_positions(), lasti // 2, None))
        lines = [linecache.getline(code.co_filename, n).encode() for n in range(line, end_line + 1)]
        if None in (col, end_col) or not all(lines):
            return None
        lines[-1] = lines[-1][:end_col]  # columns count UTF-8 bytes
        lines[0] = lines[0][col:]
        call = parse("(" + b"".join(lines).decode() + ")", mode="eval").body
    except (AttributeError, StopIteration, TypeError, ValueError, SyntaxError):  # co_positions: 3.11+
        return None
    if not isinstance(call, ast.Call):
        return None
    chain, func = [], call.func
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        return "chain", [func.id, *reversed(chain)]
    return ("attr", chain[0]) if chain else None


def _bypass(trace, name, original, args, kwargs):
    if name.startswith("torch."):
        return _torch_conversion(name, original, args, kwargs)
    flat_iter = bool(args) and type(args[0]) is flat.TracedFlat
    if flat_iter:  # np.asarray(x.flat): recorded on the traced 1-d copy NumPy makes
        args = (flat.as_array(args[0]),) + tuple(args[1:])
    traced = _traced_in(args, kwargs)
    if name in _ALIASING:
        if not traced:
            return original(*args, **kwargs)
        a = args[0] if args else kwargs.get("a")
        dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
        if scalar_args.is_weak(a) and len(args) <= 2 and set(kwargs) <= {"dtype"} and name != "numpy.ascontiguousarray":
            # a Python number made an array: strongly typed from here on (NEP 50), in its dtype
            return scalar_args.strengthened(trace, name, a, dtype, _loc())
        same = isinstance(a, TracedNpArray) and (dtype is None or np.dtype(dtype) == a.dtype)
        if same and not flat_iter and not (name == "numpy.ascontiguousarray" and a.ndim == 0):  # that one gives 0-d shape (1,)
            return a
        return record.record_call(name, original, args, kwargs, _loc())
    if traced and name in _SIZED and name != "numpy.full":
        # a size computed while tracing from constants only (gymnasium's MultiDiscrete flatten:
        # offsets = np.zeros(...); offsets[1:] = np.cumsum(nvec); np.zeros(offsets[-1])) is the
        # same on every call: made from the plain values, as a traced constant below
        if constness.any_data(trace, [*args, *(kwargs or {}).values()]):
            loc = _loc()
            scalar_args.check_untraced(trace, f"{name} (its size)", args, kwargs, loc)  # a scalar argument: specialised
            message = (f"{name} at {record.format_loc(loc)} takes its size from traced data: the size of "
                       f"the result depends on the data; use a fixed size")
            record.report(trace, "escape", name, loc, message, EscapeError, EscapeWarning)
        traced = False
    if traced:
        return record.record_call(name, original, args, kwargs, _loc())
    result = original(*[record.plain(a) for a in args], **record.plain_kwargs(kwargs))
    if not isinstance(result, np.ndarray) or trace.quiet or result.dtype.kind in _NO_TENSOR_DTYPE:
        return result  # an object array (pykalman's list of UDU factorisations) holds no graph value
    # A fresh array made while tracing: a traced constant, so that writes of
    # traced values into it (buf[0] = x) are recorded, not lost.
    return record.wrap(result, trace.const(result, _loc()))


def _torch_conversion(name, original, args, kwargs):
    from .torch_interop import traced_tensor

    data = args[0] if args else kwargs.get("data")
    if isinstance(data, TracedNpArray):
        return traced_tensor(data, name, dtype=kwargs.get("dtype"), copy=name == "torch.tensor")
    return original(*args, **kwargs)


# Which holders (an open ``leapp.start()`` session, a running ``leapp.compile`` trace) need the
# wrappers: a weak reference to each one's Hold. A holder whose frame an exception unwound before
# it let go (a Ctrl-C at the wrong bytecode) takes its Hold with it, and the reference's callback
# puts NumPy's functions back. Whether the wrappers are in place is read off the module attributes
# themselves (a wrapper knows its original), so no counter or saved list can disagree with NumPy.
_holds: set = set()
_lock = threading.RLock()


class Hold:
    """One holder's claim on the wrappers; ``install(hold)`` takes it, ``uninstall(hold)`` gives it back."""

    __slots__ = ("__weakref__",)


def _gone(ref):
    """A Hold died without being given back: settle now, unless a settle is running in another thread."""
    _holds.discard(ref)
    try:
        if _lock.acquire(blocking=False):
            try:
                with interrupts.deferred():
                    _settle()
            finally:
                _lock.release()
    except Exception:  # at interpreter exit the module may be half torn down; nothing to restore then
        pass


_current_trace = state.current


def _wrapper(name, original):
    def wrapper(*args, **kwargs):
        if _current_trace() is None:  # a thread that is not tracing: NumPy's own, one check away
            return original(*args, **kwargs)
        return bypass_call(name, original, args, kwargs)

    wrapper.__name__ = getattr(original, "__name__", name)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]  # function attributes
    wrapper._leapp_bypass = name  # type: ignore[attr-defined]
    return wrapper


def _targets():
    for name, entry in table.TABLE.items():
        if isinstance(entry, table.Entry) and entry.kind == "bypass":
            module_name, attr = name.rsplit(".", 1)
            module = {"numpy": np, "torch": torch}.get(module_name)
            if module is not None and hasattr(module, attr):
                yield name, module, attr
    yield "numpy.array", np, "array"


def _math_wrapper(name, original):
    """``math.sin`` for library code: recorded on traced values, the original on anything else."""
    def wrapper(*args, **kwargs):
        if _current_trace() is None or not any(isinstance(a, TracedNpArray) for a in args):
            return original(*args, **kwargs)
        return math_calls.call(name, original, args, kwargs)

    wrapper.__name__ = original.__name__
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]  # function attributes
    wrapper._leapp_math = name  # type: ignore[attr-defined]
    return wrapper


_TARGETS = tuple(_targets())
_WRAPPER_CODE = _wrapper("", None).__code__
# np.r_/np.c_ become traced concatenators and math's functions record on traced values while held
_CONCATENATORS = (("r_", concatenators._ORIGINAL_R, concatenators.TRACED_R),
                  ("c_", concatenators._ORIGINAL_C, concatenators.TRACED_C))
_MATH_TARGETS = tuple((name, name.split(".", 1)[1]) for name in MATH_FUNCTIONS
                      if hasattr(math, name.split(".", 1)[1]))
_SEQUENCE_TARGETS = tuple(library_args.targets())  # np.linalg.norm([v[0], v[1]]) in library code


def _is_wrapper(fn) -> bool:
    """One of ours (a user's functools.wraps of it copies ``_leapp_bypass``, not the code)."""
    return getattr(fn, "__code__", None) is _WRAPPER_CODE


# (name, original) -> the wrapper made for them: a trace installs and removes the same wrappers
# every time, and making them again was a tenth of recording a small function
_made: dict = {}


def _made_for(make, name, original):
    key = (name, id(original))
    hit = _made.get(key)
    if hit is None or hit[0] is not original:
        if len(_made) > 4 * (len(_TARGETS) + len(_MATH_TARGETS) + len(_SEQUENCE_TARGETS)):  # originals replaced many times
            _made.clear()
        hit = _made[key] = (original, make(name, original))
    return hit[1]


def _settle():
    """Make NumPy's and torch's attributes what the live holds ask for; idempotent, so a settle cut
    short by an exception is finished by the next one."""
    wanted = len(_holds) > 0
    if not _settle_fast(wanted):
        _settle_each(wanted)
        _swaps.clear()
        _swaps.extend(_swaps_now())
    dispatch.set_handler(_dispatch_handler if wanted else None)
    if wanted:
        numba_guard.register(TracedNpArray)  # numba given a traced array: refused before it compiles


# The swaps _settle_each made last, per module: (its __dict__, a reader of its slots, the originals, the
# wrappers, {name: original}, {name: wrapper}). Each trace installs and removes the same ~180
# wrappers; checked and swapped a module dict at a time, that is a few C calls, not a Python loop
# of getattr/setattr per attribute (a tenth of tracing a small function). Anything else found in
# a slot (the user replaced np.foo, a settle cut short) falls back to the attribute-by-attribute way.
_swaps: list = []


def _swaps_now() -> list:
    groups: dict = {}
    for name, module, attr in [*_TARGETS, *((n, math, a) for n, a in _MATH_TARGETS), *_SEQUENCE_TARGETS]:
        current = getattr(module, attr)
        if _is_wrapper(current) or library_args.is_wrapper(current) or \
                getattr(current, "_leapp_math", None) is not None:
            original = current.__wrapped__
        else:  # released: the wrapper is the one _made_for keeps for it
            original, hit = current, _made.get((name, id(current)))
            if hit is None or hit[0] is not original:
                return []
            current = hit[1]
        if vars(module).get(attr) not in (current, original):  # served by a module __getattr__
            return []
        names, originals, wrappers = groups.setdefault(id(module), (module, [], [], []))[1:]
        names.append(attr)
        originals.append(original)
        wrappers.append(current)
    return [(vars(m), operator.itemgetter(*n) if len(n) > 1 else (lambda d, a=n[0]: (d[a],)), tuple(o), tuple(w),
             dict(zip(n, o, strict=True)), dict(zip(n, w, strict=True)))
            for m, n, o, w in groups.values()]


def _settle_fast(wanted: bool) -> bool:
    """The swap of ``_swaps`` where every slot holds what the last settle left there; False if any
    does not (then nothing of that module was changed and the slow way settles it all)."""
    if not _swaps:
        return False
    for namespace, read, originals, wrappers, by_original, by_wrapper in _swaps:
        try:
            now = read(namespace)  # every slot's value, in one C call
        except KeyError:
            return False
        if wanted:
            if all(map(operator.is_, now, wrappers)):
                continue
            if not all(map(operator.is_, now, originals)):
                return False
            namespace.update(by_wrapper)
        else:
            if all(map(operator.is_, now, originals)):
                continue
            if not all(map(operator.is_, now, wrappers)):
                return False
            namespace.update(by_original)
    for attr, original, traced_obj in _CONCATENATORS:
        setattr(np, attr, traced_obj if wanted else original)
    return True


def _settle_each(wanted: bool) -> None:
    for name, module, attr in _TARGETS:
        current = getattr(module, attr)
        ours = _is_wrapper(current)
        if wanted and not ours:
            setattr(module, attr, _made_for(_wrapper, name, current))
        elif not wanted and ours:
            setattr(module, attr, current.__wrapped__)
    for attr, original, traced_obj in _CONCATENATORS:
        setattr(np, attr, traced_obj if wanted else original)
    for name, attr in _MATH_TARGETS:
        current = getattr(math, attr)
        ours = getattr(current, "_leapp_math", None) is not None
        if wanted and not ours:
            setattr(math, attr, _made_for(_math_wrapper, name, current))
        elif not wanted and ours:
            setattr(math, attr, current.__wrapped__)
    for name, module, attr in _SEQUENCE_TARGETS:
        current = getattr(module, attr)
        ours = library_args.is_wrapper(current)
        if wanted and not ours:
            setattr(module, attr, _made_for(library_args.wrapper, name, current))
        elif not wanted and ours:
            setattr(module, attr, current.__wrapped__)


def install(hold: Hold | None = None) -> Hold:
    """Take ``hold`` (a new one by default) on the wrappers, installing them if needed; returns it.

    Keep the hold for as long as the wrappers are needed: a hold nothing refers to any more lets go
    by itself.
    """
    hold = Hold() if hold is None else hold
    with interrupts.deferred(), _lock:
        _holds.add(weakref.ref(hold, _gone))  # equal to a live reference to the same hold: taken once
        _settle()
    return hold


def uninstall(hold: Hold | None) -> None:
    """Give ``hold`` back (again, or None: nothing); the last one restores NumPy's and torch's own functions."""
    with interrupts.deferred(), _lock:
        if hold is not None:
            _holds.discard(weakref.ref(hold))
        _settle()


def is_installed() -> bool:
    """Whether NumPy's module attributes are leapp's wrappers right now (held by any thread)."""
    return any(_is_wrapper(getattr(module, attr)) for _, module, attr in _TARGETS)


@contextmanager
def held():
    """The wrappers are installed inside the block, and released on every exit path.

    The hold is made before it is taken, so whichever bytecode an interrupt splits, the
    ``finally`` gives back what was taken.
    """
    hold = Hold()
    try:
        install(hold)
        yield
    finally:
        uninstall(hold)


def _dispatch_handler(fn, args, kwargs):
    """Calls routed by rewritten source: bypass entries are traced here, the rest as usual."""
    if fn is _GETITEM:
        return _getitem(*args)
    if fn is _FOREIGN:
        return _foreign(*args, **kwargs)
    original = getattr(fn, "__wrapped__", fn)
    bypass = getattr(fn, "_leapp_bypass", None)
    if bypass:
        return bypass_call(bypass, fn.__wrapped__, args, kwargs, from_user=False)
    trace = state.current()
    if trace is not None and callable(original):
        try:
            name = function_name(original)
        except Exception:
            name = None
        entry = table.lookup(name) if name else None
        if isinstance(entry, table.Entry) and entry.kind == "bypass":
            return bypass_call(name, original, args, kwargs, from_user=False)
        if isinstance(entry, table.Entry) and entry.kind == "scalar_type" and _traced_in(args, kwargs):
            # np.float32(x) converts in C without a hook; routed here, it is recorded as the cast
            return record.record_call(name, original, args, kwargs, _loc())
        if isinstance(entry, table.Entry) and entry.kind in ("function", "ufunc", "ufunc_method") \
                and _nested_traced(args):
            return _with_sequences_converted(name, fn, args, kwargs)
        if isinstance(entry, table.Entry) and entry.kind == "function" and not (kwargs and "out" in kwargs) \
                and _traced_in(args, kwargs) and not isinstance(args[0] if args else None, TracedNpArray):
            # np.take(TABLE, idx): NumPy asks only some arguments for overrides (here TABLE), so a
            # traced operand elsewhere would be read by C code and the result frozen. Record it.
            if getattr(trace, "path", None):
                args, kwargs = in_arms(name, args, kwargs)
            result = fn(*args, **kwargs)
            if _has_traced(result):
                return result
            return record.record_call(name, original, args, kwargs, _loc())
        if isinstance(entry, table.Entry) and entry.kind in ("function", "ufunc") and not (kwargs and "out" in kwargs) \
                and not _traced_in(args, kwargs):
            # np.linspace(0, 1, 5), np.tri(3): a constant made by a call leapp saw. As a traced
            # constant it stays one when returned (a plain array output means a lost trace).
            result = fn(*args, **kwargs)
            if type(result) is np.ndarray:
                return record.wrap(result, trace.const(result, _loc()))
            return result
        if isinstance(entry, table.Unsupported) and not _traced_in(args, kwargs):
            # np.random.* and friends: no traced operand reaches NumPy's hooks,
            # but the result would still be frozen into the graph.
            result = fn(*args, **kwargs)
            return record.untraced(state.current(), name, _loc(), result, entry)
    return fn(*args, **kwargs)


_GETITEM = dispatch._getitem
_FOREIGN = dispatch.foreign_call


def _foreign(fn, *args, **kwargs):
    """A call into other code given traced data: its result must come back traced.

    A plain array (or NumPy scalar) means the values were computed outside
    leapp's hooks (another library, a C extension, ``math`` on arrays): in the
    graph they would be a constant. Reported at the call, and the result marked
    so that its uses name this call.
    """
    math_name = math_calls.name_of(fn)
    if math_name is not None:  # math.sin(x[0]): recorded as np.sin on float64
        return math_calls.call(math_name, fn, args, kwargs)
    trace = state.current()
    if trace is None:
        return fn(*args, **kwargs)
    # plain arrays handed in go as traced constants: the library's NumPy calls on them are seen
    args, kwargs, handed = library_args.traced_constants(trace, args, kwargs, _loc())
    with unseen_calls.watching():  # what the library's own calls return, and C writes inside it
        kept = unseen_calls.before_call(args, kwargs)
        result = _run_helper(trace, fn, args, kwargs)
        unseen_calls.after_call(trace, kept, _foreign_name(fn), _loc())
    if handed:
        library_args.check_unwritten(trace, handed, _foreign_name(fn), _loc())
    if not _plain_arrays_in(result):
        foreign_probe.check_result(trace, fn, args, kwargs, result, _foreign_name(fn), _loc())
        return result
    name = _foreign_name(fn)
    loc = _loc()
    scalar_args.check_untraced(trace, name, args, kwargs, loc)  # computed from a scalar argument: specialised
    message = (f"{name} at {record.format_loc(loc)} returned plain NumPy data computed from traced "
               f"values outside leapp's hooks (another library, a C extension, or a helper that "
               f"dropped the tracing): the graph would hold a constant. Compute it with NumPy "
               f"functions leapp traces, or compute it outside and pass it in as an input")
    record.report(trace, "untraced", name, loc, message, UntracedCallError, UntracedCallWarning)
    return record.mark_escaped(trace, name, loc, result)


def _foreign_name(fn: object) -> str:
    name: str = getattr(fn, "__qualname__", None) or getattr(type(fn), "__qualname__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and not name.startswith(module) else name


def _run_helper(trace, fn, args, kwargs):
    """``fn(*args, **kwargs)``, a helper called from a rewritten line: its NumPy calls are recorded
    at the helper's own lines (the rewritten call's site would otherwise lend them its line), then
    each node and problem it made is placed at the caller's site with the helper's line attached,
    ``(file, line, fn, col, helper_loc)``: the cross-check and errors keep the user's calling line,
    ``format_loc`` and the graph's ``leapp_source`` name both."""
    local = dispatch.local
    site = local.site
    if site is None:
        return fn(*args, **kwargs)
    n_nodes, n_problems = len(trace.nodes), len(trace.problems)
    local.site = None
    try:
        return fn(*args, **kwargs)
    finally:
        local.site = site
        caller = _loc()
        for item in itertools.chain(itertools.islice(trace.nodes, n_nodes, None),
                                    itertools.islice(trace.problems, n_problems, None)):
            item.loc = via(caller, item.loc)


def via(caller, loc):
    """``loc`` (a line inside a helper) as seen from ``caller`` (the user's line that called it)."""
    if loc is None or isinstance(loc, str) or caller is None or isinstance(caller, str):
        return caller if loc is None else loc
    helper = loc[4] if len(loc) > 4 else loc  # a helper's helper: the innermost line
    if (helper[0], helper[1]) == (caller[0], caller[1]):
        return caller
    return (caller[0], caller[1], caller[2], caller[3] if len(caller) > 3 else None, helper)


def _plain_arrays_in(value) -> bool:
    """Plain NumPy arrays or scalars (a buffer made from shapes while tracing is a traced constant)."""
    if isinstance(value, (list, tuple)):
        return any(_plain(v) for v in value)
    if isinstance(value, dict):
        return any(_plain(v) for v in value.values())
    return _plain(value)


def _plain(v) -> bool:
    return type(v) is np.ndarray or isinstance(v, np.generic)


def _getitem(value, index):
    """``TABLE[idx]`` routed by the rewriter: a plain array indexed with traced values.

    ndarray's C indexing would read the traced index as plain data and return a
    plain (frozen) result; the table becomes a traced constant instead, so the
    lookup is recorded as indexing of a constant by the traced index.
    """
    if value is concatenators._ORIGINAL_R or value is concatenators._ORIGINAL_C:  # from numpy import r_
        return concatenators.index(value, index)
    trace = state.current()
    if trace is not None and type(value) is np.ndarray and _has_traced_index(index):
        value = record.wrap(value, trace.const(value, _loc()))
    elif trace is not None and isinstance(value, (list, tuple)) and _has_traced_index(index) \
            and constness.any_data(trace, index if isinstance(index, tuple) else (index,)):
        scalar_args.check_untraced(trace, f"a Python {type(value).__name__} indexed by it", (index,), None, _loc())
        _sequence_lookup(trace, value)
        return value[record.plain(index)]  # reported once, here, not again by __index__
    return value[index]


def _sequence_lookup(trace, value):
    """``NAMES[i]`` with a traced ``i``: Python picks the item, so the choice is fixed into the graph."""
    loc = _loc()
    kind = type(value).__name__
    message = (f"a Python {kind} indexed by a traced value at {record.format_loc(loc)}: Python picks "
               f"the item at trace time, so the graph holds that one item whatever the data; keep the "
               f"lookup in NumPy (np.asarray(table)[idx], for a {kind} of numbers) or pick outside "
               f"the traced code")
    record.report(trace, "escape", f"{kind}[traced index]", loc, message, EscapeError, EscapeWarning)


def _has_traced_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, TracedNpArray) or (isinstance(i, list) and _has_traced(i)) for i in items)


def _nested_traced(args):
    return any(isinstance(a, (list, tuple)) and a and record._contains_traced(a) for a in args)


def _has_traced(value):
    if isinstance(value, TracedNpArray):
        return True
    return isinstance(value, (list, tuple)) and any(_has_traced(v) for v in value)


def _with_sequences_converted(name, fn, args, kwargs):
    """``np.sum([x, y])``: NumPy looks for overrides in ``[x, y]`` only for the functions that take
    sequences of arrays (concatenate, stack...). For the others the traced arrays inside the list
    would be converted by NumPy's C code, out of leapp's sight; convert them as np.asarray does,
    traced, and call again."""
    result = fn(*args, **kwargs)
    if _has_traced(result):
        return result
    converted = tuple(
        bypass_call("numpy.asarray", _ORIGINAL_ASARRAY, (a,), {}, from_user=False)
        if isinstance(a, (list, tuple)) and a and record._contains_traced(a) else a
        for a in args
    )
    return fn(*converted, **kwargs)


_ORIGINAL_ASARRAY = np.asarray  # bound at import, before any session patches it


def traced_asarray(value):
    """``np.asarray(value)`` traced as if written in user code (a list holding traced values)."""
    return bypass_call("numpy.asarray", _ORIGINAL_ASARRAY, (value,), {}, from_user=False)
