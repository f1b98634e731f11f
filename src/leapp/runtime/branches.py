"""Branches on traced data, as converted source calls them (``leapp.dispatch.if_`` and friends).

A test that is not traced (a Python bool, a plain NumPy value, a constant made
while tracing) branches exactly as Python does: only the branch it picks runs.
A traced test must be 0-d (NumPy itself refuses the truth value of a larger
array); then both branches run, on the same inputs, and every value that flows
out becomes ``np.where(test, a, b)``, which is recorded like any NumPy call and
lowers to ``torch.where``. The static pass converted only branches it proved
free of side effects and of errors on the other branch's inputs; what it cannot
see (dtypes, shapes, Python values) is checked here, and a mismatch is refused
with the site, never selected with a changed dtype or shape.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ..errors import ConversionError
from ..table.guards import RECTANGULAR_LINALG
from . import math_calls, state
from .traced import TracedNpArray


def traced(value) -> bool:
    """A value that differs from call to call: a traced array that is not a constant."""
    if not isinstance(value, TracedNpArray) or state.current() is None:
        return False
    return not (value._lp_parent is None and (value._lp_node is None or value._lp_node.op == "const"))


def _refuse(site, what):
    raise ConversionError(f"{site}: {what}")


def array_method(site, receiver, name) -> None:
    """``receiver.name()`` in a converted branch (``dispatch.array_method``): the static pass could
    not type the receiver, and let the branch convert on the promise that it is NumPy's array or
    scalar, whose methods of that name have no side effects. Anything else (a dict's ``copy``, an
    object's own ``mean``, an ndarray subclass overriding it) is refused here, at the call."""
    if isinstance(receiver, (np.ndarray, np.generic)):
        owner = next((k for k in type(receiver).__mro__ if name in k.__dict__), None)
        if owner is not None and (owner.__module__ or "").split(".")[0] in ("numpy", "leapp"):
            return
    _refuse(site, f"the converted branch calls `.{name}()` on a {type(receiver).__qualname__}, not a NumPy "
                  "array: leapp cannot show that call is free of side effects, and converted branches "
                  "run both arms. Compute it before the `if`, or select values with `np.where`")


def _test(site, test):
    if test.ndim != 0:
        _refuse(site, f"the test is an array of shape {test.shape}; NumPy refuses its truth value "
                      "(ambiguous). Reduce it to one value first (np.any, np.all, or an index)")
    if test.dtype != np.bool_:
        test = test != 0
    return test


def if_(site, test, true_fn, false_fn, args):
    if not traced(test):
        return true_fn(*args) if test else false_fn(*args)
    cond = _test(site, test)
    taken = concrete(cond)
    with np.errstate(all="ignore"):  # the branch not taken may divide by zero; its values are dropped
        with untaken(not taken), _on_path(cond, True):
            a = true_fn(*args)
        with untaken(taken), _on_path(cond, False):
            b = false_fn(*args)
    return select(site, cond, a, b, "")


def if_returns(site, test, true_fn, false_fn, args):
    """An ``if`` whose arms hold early returns: the names they hand on are selected as by ``if_``,
    and each early return an arm holds is held on (its test already and-ed with the arm's path by
    ``early``), for the function's later ``return`` to merge."""
    from ..dispatch import Returns, returns

    if not traced(test):
        return returns(true_fn(*args) if test else false_fn(*args))
    cond = _test(site, test)
    taken = concrete(cond)
    with np.errstate(all="ignore"):
        with untaken(not taken), _on_path(cond, True), _in_arm(cond, True):
            a = returns(true_fn(*args))
        with untaken(taken), _on_path(cond, False), _in_arm(cond, False):
            b = returns(false_fn(*args))
    if a.taken or b.taken:  # inside a traced arm every early return leapp converted is held (``early``)
        _refuse(site, "a `return` inside a branch of this converted `if` ran on a path leapp does not hold "
                      "(under an `if` whose test is not on data, inside the branch): the other inputs would "
                      "not return there. Return from the top of the branch (`if test: return ...`)")
    return Returns(False, None, select(site, cond, a.outputs, b.outputs, ""), (*a.group, *b.group))


@contextlib.contextmanager
def _in_arm(cond, side: bool):
    """Code running in an arm of an ``if_returns``: an early return there holds its value under
    ``cond`` being ``side`` too (``early`` with ``in_arm``)."""
    arms = _arms(state.current())
    entry = (cond, side)
    arms.append(entry)
    try:
        yield
    finally:
        arms[:] = [e for e in arms if e is not entry]


def _arms(trace) -> list:
    arms = getattr(trace, "arm_path", None)
    if arms is None:
        arms = trace.arm_path = []
    return arms


@contextlib.contextmanager
def _on_path(cond, side: bool):
    """The code running now is a converted arm, run on every input: ``cond`` is ``side`` on the
    inputs that take it (``guarded`` reads the stack)."""
    path = _path(state.current())
    entry = (cond, side)
    path.append(entry)
    try:
        yield
    finally:
        path[:] = [e for e in path if e is not entry]  # by identity: a test is an array


def _path(trace) -> list:
    """The trace's stack of (test, side) the code running now is guarded by (``guarded``)."""
    path = getattr(trace, "path", None)
    if path is None:
        path = trace.path = []
    return path


def guarded(name, args):
    """``args`` for a ``table.guards`` call (``np.linalg.inv(m)``) inside converted arms: the
    matrix becomes ``np.where(path, m, I)``, which is ``m`` itself on every input that takes the
    arms and the identity on the others (whose results the select drops), so the graph never
    inverts a matrix that only an input on the other side holds. Recorded like any NumPy call."""
    trace = state.current()
    path = getattr(trace, "path", None) if trace is not None else None
    if not path or not args or not isinstance(args[0], np.ndarray) or np.ndim(args[0]) < 2:
        return args
    m = args[0]
    sides = [cond if side else np.logical_not(cond) for cond, side in path]
    on = sides[0]
    for c in sides[1:]:
        on = np.logical_and(on, c)
    if m.shape[-1] == m.shape[-2] or name in RECTANGULAR_LINALG:
        eye = np.eye(m.shape[-2], m.shape[-1], dtype=m.dtype)
    else:  # not square: NumPy raises on every input alike
        return args
    return (np.where(on, m, eye), *args[1:])


def guarded_index(index):
    """``index`` for an indexing (``x[j]``, ``y[j, 0] = v``) inside converted arms, where a traced
    integer index may be out of range on the inputs that do not take the arms: each such part becomes
    ``np.where(path, j, 0)``, ``j`` itself on every input that takes them and 0 on the others (whose
    results the select drops), so the graph never reads or writes out of range for them. Shapes are
    static: 0 is in range wherever the axis is not empty (where it is, every input raises alike).
    A boolean mask and every static part are left as they are."""
    trace = state.current()
    path = getattr(trace, "path", None) if trace is not None else None
    if not path:
        return index
    parts = index if isinstance(index, tuple) else (index,)
    if not any(traced(p) and p.dtype.kind in "iu" for p in parts):
        return index
    sides = [cond if side else np.logical_not(cond) for cond, side in path]
    on = sides[0]
    for c in sides[1:]:
        on = np.logical_and(on, c)
    out = tuple(np.where(on, p, np.zeros((), p.dtype)) if traced(p) and p.dtype.kind in "iu" else p for p in parts)
    return out if isinstance(index, tuple) else out[0]


def concrete(value) -> bool:
    """The traced-time truth of a 0-d test, without recording an escape."""
    return bool(np.ndarray.view(np.asarray(value), np.ndarray)) if isinstance(value, np.ndarray) else bool(value)


@contextlib.contextmanager
def untaken(on: bool):
    """Code that runs, while tracing, on a side of a converted test the traced input does not take:
    its values are selected away for that input, so what only that input would refuse there (a
    bounded loop past its bound, ``math.sqrt`` of a negative value) is left to the graph."""
    trace = state.current()
    if not on or trace is None:
        yield
        return
    trace.untaken = getattr(trace, "untaken", 0) + 1
    try:
        yield
    finally:
        trace.untaken -= 1


def not_taken() -> bool:
    """Whether the code running now is on a side the traced input does not take (``untaken``)."""
    trace = state.current()
    return trace is not None and getattr(trace, "untaken", 0) > 0


def select(site, cond, a, b, where):
    """``a`` where ``cond`` else ``b``, leaf by leaf, refusing what a select would change."""
    if a is b:
        return a
    if isinstance(a, (tuple, list)) and type(a) is type(b):
        if len(a) != len(b):
            _refuse(site, f"the branches give{where} sequences of lengths {len(a)} and {len(b)}")
        out = [select(site, cond, x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=True))]
        return out if isinstance(a, list) else tuple(out)
    if isinstance(a, dict) and type(b) is dict:
        if list(a) != list(b):
            _refuse(site, f"the branches give{where} dicts with keys {list(a)} and {list(b)}")
        return {k: select(site, cond, a[k], b[k], f"{where}[{k!r}]") for k in a}
    if not isinstance(a, (np.ndarray, np.generic)) or not isinstance(b, (np.ndarray, np.generic)):
        if type(a) is type(b) and not traced(a) and not traced(b) and _same_plain(a, b):
            return a
        if type(a) is float or type(b) is float:
            out = math_calls.select_weak(cond, a, b, site)  # `z = math.atan2(...)` / `z = 0.0`
            if out is not None:
                return out
        _refuse(site, f"the branches give{where} {_kind(a)} and {_kind(b)}; a select needs arrays "
                      f"of one dtype and shape ({_advice(a, b)})")
    if (math_calls.weak(a) is None) != (math_calls.weak(b) is None) or math_calls.weak(a) is not None:
        out = math_calls.select_weak(cond, a, b, site)
        if out is None:
            _refuse(site, f"the branches give{where} a `math` result (a Python float in NumPy) and a NumPy "
                          f"value; NumPy computes later float32 arithmetic in float32 with the first and "
                          f"float64 with the second, so no one graph is exact. Make both NumPy values "
                          f"(np.arctan2, np.sqrt, ...) or both `math` results")
        return out
    if a.dtype != b.dtype:
        _refuse(site, f"the branches give{where} dtypes {a.dtype} and {b.dtype}; a select would "
                      "change one of them. Cast both to one dtype")
    if a.shape != b.shape:
        _refuse(site, f"the branches give{where} shapes {a.shape} and {b.shape}; a select would "
                      "broadcast one of them. Give both one shape")
    if not traced(a) and not traced(b) and isinstance(a, np.generic) == isinstance(b, np.generic) \
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
        return a
    out = np.where(cond, a, b)
    if _scalar(a) and _scalar(b):  # NumPy scalars on both sides: a NumPy scalar (immutable: `s += 1`
        if isinstance(out, TracedNpArray):  # rebinds it), not a 0-d array an alias would see change
            out._lp_scalar = True
        else:
            out = out[()]
    return out


def _scalar(v) -> bool:
    """A NumPy scalar (``x.sum()``), traced (a 0-d value marked ``_lp_scalar``) or plain."""
    return isinstance(v, np.generic) or (isinstance(v, TracedNpArray) and bool(getattr(v, "_lp_scalar", False)))


def _same_plain(a, b) -> bool:
    try:
        return bool(a == b) and repr(a) == repr(b)
    except Exception:
        return False


def _advice(a, b) -> str:
    """What to write instead, for the value of the two that is not an array: a NumPy scalar of the
    other's dtype for a Python number or bool, else keep it out of what the branches choose."""
    plain, other = (a, b) if not isinstance(a, (np.ndarray, np.generic)) else (b, a)
    if isinstance(plain, (bool, int, float, complex)):
        kind = {bool: "b", int: "iu", float: "f", complex: "c"}.get(type(plain), "f")  # (an int subclass: f)
        if isinstance(other, (np.ndarray, np.generic)) and other.dtype.kind in kind:
            dtype = other.dtype.name
        else:
            dtype = {"b": "bool_", "iu": "int64", "f": "float64", "c": "complex128"}[kind]
        return f"write np.{dtype}({plain!r}) rather than {plain!r} for a value the branches choose between"
    what = "None" if plain is None else f"a {type(plain).__name__}"
    return f"{what} cannot be selected: compute it outside the traced code, or give the same value on both branches"


def _kind(v) -> str:
    if isinstance(v, (np.ndarray, np.generic)):
        return f"an array of {v.dtype} {v.shape}"
    return f"a Python {type(v).__name__} ({v!r})" if isinstance(v, (int, float, complex, bool, str)) \
        else f"a {type(v).__name__}"


def _bools(site, values):
    out = []
    for v in values:
        if traced(v):
            out.append(_test(site, v))
        else:
            out.append(np.bool_(bool(v)))
    return out


def and_(site, operands):
    return _short_circuit(site, operands, False, np.logical_and)


def or_(site, operands):
    return _short_circuit(site, operands, True, np.logical_or)


def _short_circuit(site, operands, stops_on, combine):
    """Python's and/or while the values are plain (stopping where ``bool(value) is stops_on``);
    from the first traced value on, every remaining operand is evaluated and combined elementwise."""
    value = operands[0]()
    for i, operand in enumerate(operands[1:], 1):
        if not traced(value):
            if bool(value) is stops_on:
                return value
            value = operand()
            continue
        rest = _bools(site, [value, *(o() for o in operands[i:])])
        out = rest[0]
        for r in rest[1:]:
            out = combine(out, r)
        return out
    return value


def chain(site, first, rest):
    from ..dispatch import COMPARISONS

    left = first()
    results: list[Any] = []
    for i in range(0, len(rest), 2):
        right = rest[i + 1]()
        result = COMPARISONS[rest[i]](left, right)
        if not results and not traced(result) and (not result or i == len(rest) - 2):
            return result  # Python's answer, as Python reaches it
        results.append(result)
        left = right
    out = _bools(site, results)
    value = out[0]
    for r in out[1:]:
        value = np.logical_and(value, r)
    return value


def not_(site, value):
    if not traced(value):
        return not value
    return np.logical_not(_test(site, value))


def early(site, test, body, args, in_arm=False):
    """``if test: <body ending in return>``: at the top of a function body, or (``in_arm``, from
    ``dispatch.arm_early``) at the top of an arm of an ``if_returns``, where it returns only on the
    arm's path: its test is and-ed with the tests of the ``if_returns`` arms it runs in."""
    from ..dispatch import Pending

    arms = _arms(state.current()) if in_arm else []
    if not traced(test):
        if not test:
            return Pending(False, None)
        if not arms:
            return Pending(True, body(*args))
        cond = None  # a plain true test inside a converted arm: held under the arm's path
    else:
        cond = _test(site, test)
    if arms:  # inside an arm of a converted `if` (``if_returns``): it returns only on the arm's path
        sides = [c if side else np.logical_not(c) for c, side in arms]
        for c in sides[1:]:
            sides[0] = np.logical_and(sides[0], c)
        cond = sides[0] if cond is None else np.logical_and(sides[0], cond)
    taken = concrete(cond)
    with np.errstate(all="ignore"), untaken(not taken), _on_path(cond, True):
        value = body(*args)
    pending = Pending(False, value, cond, site)
    # the code after it, up to the merging `return`, runs on every input and counts for those that
    # do not take it: its guarded solvers see (cond, False) until ``merge`` takes it off the path
    pending.path_entry = (cond, False)
    _path(state.current()).append(pending.path_entry)
    if taken:  # the code after it, up to the merging `return`, is the side the input does not take
        trace = state.current()
        trace.untaken = getattr(trace, "untaken", 0) + 1
        trace.after_taken = [*getattr(trace, "after_taken", ()), pending]
    return pending


def merge(held, value):
    """The first held early return whose test is true wins: fold from the last one back."""
    trace = state.current()
    path = getattr(trace, "path", None) if trace is not None else None
    if path:
        entries = [p.path_entry for p in held if p.path_entry is not None]
        path[:] = [e for e in path if not any(e is entry for entry in entries)]
    marked = getattr(trace, "after_taken", ()) if trace is not None else ()
    if marked:  # the return that ends the code after those early returns
        trace.after_taken = [m for m in marked if not any(m is p for p in held)]
        trace.untaken -= len(marked) - len(trace.after_taken)
    for p in reversed(held):
        value = select(p.site, p.test, p.value, value, " (the early return and the later one)")
    return value
