"""A call into other code that hands back an array no input reaches: run it again on other values.

A call the static pass routed through ``dispatch.foreign`` (another library, given traced data)
comes back traced when the library computed its result with NumPy calls leapp sees. When C code
computed it instead, into a buffer the library made with ``np.zeros`` or ``np.empty`` (as
``scipy.ndimage``'s filters do), the result is that buffer: a traced array whose recorded value
no input reaches, so the graph would hold what the buffer held after the call, a constant.
``record``'s buffer guard sees the C write where it changed the buffer's bytes; where the C code
wrote the bytes the buffer already held (a filter of an all-zero input into ``np.zeros``), there
is nothing to see.

So the guard here does not look for the mechanism: given traced data that depends on the inputs,
a call whose result (or part of it) depends on none is run again by NumPy, outside the trace:
first on copies of its arguments as they are, which must give the value the graph holds (else the
result is no function of the arguments, ``np.empty``'s bytes or a random draw, and nothing is
judged), then with each input-dependent array's values redrawn. If what it returns then differs
from the value the graph would hold, the values came from the arguments through code leapp did
not record: refused at the call (``UntracedCallError``; a warning outside strict mode). A call
that really returns a constant (a buffer of zeros of the input's shape) returns it again and
passes. A call leapp cannot safely run twice (a bound method, an argument that is an object: it
could change state) is left to the other guards, and so is one that raises on the other values.
"""

from __future__ import annotations

import inspect
import types
import warnings

import numpy as np

from ..errors import UntracedCallError, UntracedCallWarning
from . import constness, record, state
from .traced import TracedNpArray

_ATTEMPTS = 2  # redraws; the first that departs is reported
_PLAIN = (int, float, complex, bool, str, bytes, type(None), slice, np.generic, np.dtype, type)


def check_result(trace, fn, args, kwargs, result, name, loc) -> None:
    """Report ``fn``'s call if its input-free traced result follows its traced arguments' values."""
    out = _leaves(result)
    fixed = [i for i, v in enumerate(out)
             if isinstance(v, TracedNpArray) and not constness.value_depends_on_inputs(trace, v)]
    if not fixed:
        return
    given = _leaves((args, kwargs))
    if not any(isinstance(v, TracedNpArray) and constness.value_depends_on_inputs(trace, v) for v in given):
        return  # a call on constants: its result is a constant
    if not _safe_to_repeat(fn, given):
        return
    # the control: on the same values the call must give what the graph holds, or what it returns
    # is not a function of its arguments (np.empty's bytes, a random draw): then no judgement
    same = _run(fn, _redrawn((args, kwargs), None, trace))
    if same is None or len(same) != len(out) or not all(_same(out[i], same[i]) for i in fixed):
        return
    rng = np.random.default_rng(0)
    for _ in range(_ATTEMPTS):
        again = _run(fn, _redrawn((args, kwargs), rng, trace))
        if again is None:
            return  # not values the call takes: no judgement (the differential check has its own)
        departs: int | None = fixed[0]
        if len(again) == len(out):
            departs = next((i for i in fixed if not _same(out[i], again[i])), None)
        if departs is not None:
            made = record.node_of(out[departs])
            where = f" (made at {record.format_loc(made.loc)})" if made is not None and made.loc else ""
            message = (f"{name} at {record.format_loc(loc)} was given traced data and returned an array no "
                       f"input reaches in what leapp recorded{where}, but run again by NumPy on other values "
                       f"it returns other values: code leapp does not see (C code filling a buffer, as "
                       f"scipy.ndimage's filters do) computed it, and the graph would hold a constant. Use "
                       f"NumPy functions leapp traces, or compute it outside and pass it in as an input")
            record.report(trace, "untraced", name, loc, message, UntracedCallError, UntracedCallWarning)
            return


def _run(fn, call) -> list | None:
    """The leaves of ``fn(*args, **kwargs)`` run by NumPy outside the trace, or None if it raised."""
    args, kwargs = call
    try:
        with state.suspended(), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _leaves(fn(*args, **kwargs))
    except Exception:
        return None


def _leaves(value) -> list:
    """The arrays and plain values in ``value``, through tuples, lists and dicts, in order."""
    out: list = []
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, (tuple, list)) and not isinstance(v, np.ndarray):
            todo.extend(reversed(v))
        elif isinstance(v, dict):
            todo.extend(reversed(list(v.values())))
        else:
            out.append(v)
    return out


def _safe_to_repeat(fn, given) -> bool:
    """A function (not a method of an object, not a callable object) given arrays and plain values
    only: running it again cannot change anything the caller holds."""
    if isinstance(fn, (types.MethodType, types.BuiltinMethodType)):
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            return False
    elif not (inspect.isfunction(fn) or isinstance(fn, (types.BuiltinFunctionType, np.ufunc))):
        return False
    return all(isinstance(v, (np.ndarray, *_PLAIN)) for v in given)


def _redrawn(value, rng, trace):
    """``value`` with each traced array that depends on the inputs redrawn, as plain arrays; the
    rest (a constant handed in: a covariance, a model matrix) keeps its values, copied."""
    if isinstance(value, TracedNpArray):  # rng None: the same values, as plain copies
        plain = np.ndarray.view(value, np.ndarray).copy()
        return _redraw(plain, rng) if rng is not None and constness.value_depends_on_inputs(trace, value) else plain
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_redrawn(v, rng, trace) for v in value)
    if isinstance(value, list):
        return [_redrawn(v, rng, trace) for v in value]
    if isinstance(value, dict):
        return {k: _redrawn(v, rng, trace) for k, v in value.items()}
    return value


def _redraw(a, rng):
    """Other values of ``a``'s dtype and shape, around its range (both signs near zero)."""
    kind = a.dtype.kind
    if a.size == 0 or kind not in "biufc":
        return a
    if kind == "b":
        return rng.random(a.shape) < 0.5
    finite = a[np.isfinite(a)] if kind in "fc" else a
    if kind == "c":
        finite = np.concatenate([finite.real, finite.imag])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    span = hi - lo or max(abs(lo), 1.0)
    if kind in "iu":
        info = np.iinfo(a.dtype)
        first, last = max(int(info.min), int(lo - span)), min(int(info.max), int(hi + span))
        return rng.integers(first, last, size=a.shape, endpoint=True).astype(a.dtype)
    low, high = lo - span / 2, hi + span / 2
    if not np.isfinite(high - low):
        low, high = lo / 2, hi / 2
    drawn = rng.uniform(low, high, size=a.shape)
    if kind == "c":
        drawn = drawn + 1j * rng.uniform(low, high, size=a.shape)
    return np.asarray(drawn).astype(a.dtype)


def _same(fixed, again) -> bool:
    """Whether the value the graph would hold is what NumPy returned on the other values."""
    held = np.ndarray.view(fixed, np.ndarray)
    other = np.asarray(again)
    if isinstance(again, TracedNpArray):
        other = np.ndarray.view(again, np.ndarray)
    if held.shape != other.shape:
        return False
    try:
        return bool(np.array_equal(held, other, equal_nan=held.dtype.kind in "fc"))
    except TypeError:
        return bool(np.array_equal(held, other))
