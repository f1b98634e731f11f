"""``math.sin(x[0])`` and friends on traced 0-d values, recorded as NumPy's float64 ufunc.

``math`` converts its argument with ``float()``, which would take the value out
of the graph. The functions the table lists (``table/math_module.py``)
compute what a NumPy ufunc computes on float64, so a call on a traced value
is traced as ``np.<ufunc>(np.float64(x))``: the result is a traced 0-d float64
value and stays in the graph. The call reaches here from rewritten user code
(``leapp.dispatch.foreign``) and, while a trace is open, from library code
through wrappers on ``math``'s attributes (installed with the other patches,
called by no thread that is not tracing).

Two things differ from ``math`` and are handled:

- errors: ``math.sqrt(-1.0)`` raises ``ValueError``; the original runs first on
  the traced values, so the trace raises the same error (a graph given other
  inputs computes NaN, as NumPy does);
- typing: ``math`` returns a Python float, which NumPy treats as *weak*
  (``x32 * math.cos(a)`` converts it to float32 and stays float32). The traced
  result is weak too: a ``leapp.weak`` node over the float64 op, whose plain
  value is the Python float itself, so NumPy's calls and the recorded ones
  convert it as NumPy does (``scalar_args``, as for a Python-number argument);
  a use whose NumPy answer no cast reproduces is refused at its line
  (``scalar_args._refuse_from_arrays``). ``check_weak_uses`` still refuses any
  op where a strong float64 math value met float32/float16 data.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import EscapeError, EscapeWarning
from ..table.math_module import MATH_FUNCTIONS
from . import constness, record, scalar_args, state, where
from .ir import operand_nodes
from .traced import _loc, not_a_number

_BY_OBJECT = {id(getattr(math, n.split(".", 1)[1])): (getattr(math, n.split(".", 1)[1]), n)
              for n in MATH_FUNCTIONS if hasattr(math, n.split(".", 1)[1])}
_NARROW = frozenset({np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.complex64)})


def name_of(fn) -> str | None:
    """The table name (``"math.sin"``) of one of ``math``'s listed functions, or None."""
    marked = getattr(fn, "_leapp_math", None)  # the wrapper installed while tracing
    if marked:
        return marked
    hit = _BY_OBJECT.get(id(fn))
    return hit[1] if hit is not None and hit[0] is fn else None


def traced_args(trace, args) -> bool:
    """Some argument is a traced value computed from the inputs (constants fold as in math)."""
    return any(isinstance(a, record._TracedNpArray) for a in args) and constness.any_data(trace, args)


def call(name, original, args, kwargs):
    """``original(*args)`` (a listed ``math`` function) with traced ``args``: recorded."""
    trace = state.current()
    if trace is None or kwargs or not traced_args(trace, args):
        return original(*args, **kwargs)
    for a in args:
        if isinstance(a, record._TracedNpArray) and a.ndim != 0:
            try:
                float(record.plain(a))
            except TypeError as error:  # NumPy 2.4 converts 0-d arrays only; older ones, one element
                raise EscapeError(not_a_number(name, a, f"np.{MATH_FUNCTIONS[name].split('.', 1)[1]} on the array")) from error
    from .branches import not_taken

    if not_taken():  # on a side of a converted test the input does not take, the graph gives NaN
        value = float("nan")
    else:
        value = original(*[float(record.plain(a)) if isinstance(a, record._TracedNpArray) else a for a in args])
    ufunc = getattr(np, MATH_FUNCTIONS[name].split(".", 1)[1])
    operands = [_as_float64(a) for a in args]
    if name == "math.log" and len(operands) == 2:
        result = np.log(operands[0]) / np.log(operands[1])
    elif name == "math.hypot" and len(operands) != 2:
        result = np.float64(0.0) if not operands else np.abs(operands[0])
        for v in operands[1:]:
            result = np.hypot(result, v)
    else:
        result = ufunc(*operands)
    if isinstance(result, record._TracedNpArray):
        if result.ndim:
            result = result.reshape(())
        loc = _loc()
        weak = scalar_args.weak_math(trace, args, result, value)  # of Python-number arguments only
        if weak is not None:
            return weak
        trace.math_results[record.node_of(result).index] = f"{name} at {where.chain(loc, where.library_line(loc))}"
        if type(value) is float:  # a Python float: weak, as NumPy treats it (scalar_args)
            return scalar_args._new_weak(trace, record.node_of(result), value)
    return result


def _as_float64(a):
    if isinstance(a, record._TracedNpArray):
        v = a.reshape(()) if a.ndim else a
        return v if v.dtype == np.float64 else v.astype(np.float64)
    return np.float64(a)  # a Python or NumPy number: math converts it the same way


def check_weak_uses(trace) -> None:
    """Refuse each op where a math result (a Python float in NumPy) met float32/float16 data."""
    if not trace.math_results:
        return
    weak = dict(trace.math_results)  # node index -> where the Python float was made
    seen = set()
    for node in trace.nodes:
        operands = operand_nodes(node)
        if not operands or not any(n.index in weak for n in operands):
            continue
        if node.op in _WEAK_ARITHMETIC and node.shape == () and all(n.index in weak for n in operands):
            # c * 2.0 - s: Python float arithmetic, still a Python float
            weak[node.index] = next(weak[n.index] for n in operands)
            continue
        narrow = next((n.dtype for n in operands if n.dtype in _NARROW), None)
        if narrow is None or node.loc in seen:
            continue
        seen.add(node.loc)
        source = next(weak[n.index] for n in operands if n.index in weak)
        message = (f"the result of {source} meets {narrow} data in {node.op} at {record.format_loc(node.loc)}: "
                   f"math returns a Python float, which NumPy converts to {narrow} here, while the traced "
                   f"value is float64 and would compute this in float64; use the NumPy function "
                   f"(np.sin, np.sqrt, ...) on the {narrow} value, or cast the result "
                   f"(np.{narrow}(math.sin(a)))")
        record.report(trace, "escape", "math.* result (a weak Python float)", node.loc, message,
                      EscapeError, EscapeWarning, chain=False)


_WEAK_ARITHMETIC = frozenset({"numpy.add", "numpy.subtract", "numpy.multiply", "numpy.divide",
                              "numpy.negative", "numpy.positive", "numpy.power", "numpy.absolute",
                              "numpy.floor_divide", "numpy.remainder"})


def weak(value) -> str | None:
    """Where ``value`` was made when it is a ``math`` result (a Python float in NumPy), else None."""
    trace = state.current()
    if trace is None or not trace.math_results or not isinstance(value, record._TracedNpArray):
        return None
    node = record.node_of(value)
    return _weak_node(trace, node) if node is not None else None


def _weak_node(trace, node, depth=0):
    """As ``check_weak_uses`` propagates it: a math result, or 0-d arithmetic on math results only."""
    made = trace.math_results.get(node.index)
    if made is not None or depth > 32:
        return made
    if node.op == scalar_args.WEAK:  # the Python float a math call returned (or arithmetic on it)
        return _weak_node(trace, node.args[0], depth + 1)
    if node.op not in _WEAK_ARITHMETIC or node.shape != ():
        return None
    if any(isinstance(a, (np.generic, np.ndarray)) for a in (*node.args, *(node.kwargs or {}).values())):
        return None  # `r * np.float64(2)`: a NumPy operand makes NumPy's result a NumPy scalar
    operands = operand_nodes(node)
    found = [_weak_node(trace, n, depth + 1) for n in operands]
    return found[0] if operands and all(found) else None


def select_weak(cond, a, b, site):
    """``np.where(cond, a, b)`` where each side is a ``math`` result or a Python float (the result is
    one in NumPy, whichever side runs: recorded as a ``math`` result, so ``check_weak_uses`` sees its
    uses); None when a side is neither (then NumPy's value would be weak on one path only)."""
    sides = []
    for v in (a, b):
        if type(v) is float:
            sides.append(np.float64(v))
        elif weak(v) is not None:
            sides.append(v)
        else:
            return None
    trace = state.current()
    out = np.where(cond, *sides)
    if isinstance(out, record._TracedNpArray):
        if out.ndim:
            out = out.reshape(())
        made = next((weak(v) for v in (a, b) if weak(v) is not None), None)
        trace.math_results[record.node_of(out).index] = \
            f"{made} (selected at {site})" if made else f"the Python float selected at {site}"
    return out
