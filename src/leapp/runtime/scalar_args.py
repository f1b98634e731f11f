"""Scalar arguments traced as 0-d graph inputs, and Python numbers' weak typing (NEP 50).

A scalar argument of ``leapp.compile`` (a Python ``float``/``int``/``bool``/``complex``, a NumPy
number) is a 0-d graph input of its NumPy dtype (``tracing._traced_input``). A NumPy scalar is
strongly typed, like a 0-d array. A Python number is *weak*: ``x32 * t`` stays float32 where
``x32 * np.float64(t)`` is float64, and ``t * 2`` is a Python float again. Its traced value carries a
``leapp.weak`` node over the (float64/int64/bool/complex128) input, and ``_lp_plain`` is the Python
number itself, so the NumPy call run while tracing sees exactly what the real call sees:

- an operator between weak values and Python numbers (``t * 2``, ``n // 2``, ``t > 0``, ``-t``) is
  Python's arithmetic: its value is Python's, checked against NumPy's float64/int64/bool op (which
  the graph runs); where they differ (``flag + flag`` is 2, ``~flag`` is -2) the argument is
  specialised (below); where Python raises (``t / 0``) the call raises as the real call does;
- a ufunc with a strongly typed operand converts the weak operand to its loop dtype, as NumPy does
  (``x32 * t``: t is rounded to float32): recorded as a ``leapp.cast`` of the input;
- another NumPy function takes a weak operand where NumPy's own dispatch says it is an array
  operand (``np.clip(x, -t, t)``, ``np.where(c, x, t)``) and NumPy's result is reproduced with the
  operand converted to its default dtype or to the result's; anything else (a size, an axis, a
  method's argument) is specialised.

When the trace needs a scalar's value in Python (``int(n)``, a slice bound, ``range(n)``,
``if flag:`` that is not converted, formatting, a call leapp cannot trace), ``Specialise`` is
raised: the compiler traces again with that argument as a constant of its graph, one graph per
value (``compiler/scalar_inputs.py``), and every other scalar stays an input.
"""

from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from . import record, state
from .ir import fold_operands

WEAK = "leapp.weak"  # op of the node a Python-number value carries (traced.py: a slow operand)
_PY_TYPES = (bool, int, float, complex)
_DEFAULT = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
            complex: np.dtype(np.complex128)}


class Specialise(BaseException):
    """A scalar argument's value was needed in Python: trace again with it as a constant.

    A BaseException, so that the user's ``except Exception`` around the read cannot swallow it."""

    def __init__(self, ports, construct, loc):
        super().__init__(ports, construct, loc)
        self.ports = frozenset(ports)
        self.construct = construct
        self.loc = loc


# --- making weak inputs -----------------------------------------------------------


def is_python_number(value) -> bool:
    """A Python number that a 0-d graph input can hold (an int within int64's range)."""
    t = type(value)
    if t is int:
        return -(2**63) <= value < 2**63
    return t in (bool, float, complex)


def weaken(trace, traced, value):
    """Make ``traced`` (a 0-d input for Python number ``value``) weak, as NumPy treats ``value``."""
    node = traced._lp_node
    traced._lp_node = trace.add(WEAK, (node,), None, node.dtype, (), node.loc)
    traced._lp_plain = value  # what NumPy computes on while tracing: the Python number
    return traced


def is_weak(x) -> bool:
    """A traced Python-number value (a ``leapp.weak`` node)."""
    return isinstance(x, record._TracedNpArray) and x._lp_node is not None and x._lp_node.op == WEAK


def strengthened(trace, name, x, dtype, loc):
    """``np.asarray(t)`` (``dtype=`` too) of a weak value: the 0-d array NumPy makes of the number,
    strongly typed (``x32 * np.asarray(0.1)`` is float64), recorded over the argument's own input."""
    value = np.asarray(x._lp_plain) if dtype is None else np.asarray(x._lp_plain, dtype=dtype)
    strong = _strong(x._lp_node)
    if strong.dtype != value.dtype:
        strong = _weak_cast(trace, x, strong, value.dtype, name, loc)
    return record.wrap(value, trace.add(name, (strong,), None, value.dtype, (), loc))


def _strong(node):
    """The strongly typed input under a weak node."""
    return node.args[0] if node is not None and node.op == WEAK else node


def _new_weak(trace, node, value):
    """A weak traced value: Python number ``value``, computed in the graph by ``node``."""
    array = np.asarray(value)
    out = record.wrap(array, trace.add(WEAK, (node,), None, node.dtype, (), node.loc))
    out._lp_plain = value
    out._lp_scalar = True
    return out


# --- which scalar inputs a value depends on -----------------------------------------


def ports_of(trace, arr):
    """The scalar input ports ``arr``'s value is computed from, or None when it also depends on an
    array input or an untraced value (then reading it is an ordinary escape, not a scalar's)."""
    scalar_ports = getattr(trace, "scalar_ports", None)
    if not scalar_ports:
        return None
    node = record.node_of(arr) if arr._lp_parent is not None else arr._lp_node
    if node is None:
        return None
    memo = trace.__dict__.setdefault("_scalar_deps", {})

    def combine(n, deps):
        if n.op == "input":
            port = scalar_ports.get(n.index)
            return None if port is None else frozenset((port,))
        if n.op == "escaped":
            return None
        out: frozenset = frozenset()
        for d in deps:
            if d is None:
                return None
            out |= d
        return out

    ports = fold_operands(memo, node, combine)
    return ports or None


def check_read(trace, arr, construct, loc=None):
    """``arr``'s value is read into Python: specialise the scalar arguments it comes from."""
    ports = ports_of(trace, arr)
    if ports:
        raise Specialise(ports, construct, loc if loc is not None else record_loc())


def record_loc():
    from .traced import _loc

    return _loc()


def check_untraced(trace, name, args, kwargs, loc):
    """A call leapp cannot trace reads its operands' values: those of scalar arguments specialise."""
    if not getattr(trace, "scalar_ports", None):
        return
    for a in _leaves(args, kwargs):
        if isinstance(a, record._TracedNpArray):
            check_read(trace, a, f"{name} (a call leapp does not trace)", loc)


def _leaves(args, kwargs):
    todo = list(args) + list((kwargs or {}).values())
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(v)
        else:
            yield v


def _specialise_weak(trace, values, construct, loc):
    ports: set = set()
    for v in values:
        if isinstance(v, record._TracedNpArray):
            ports |= ports_of(trace, v) or set()
    if not ports:  # a math result computed from array data (math_calls): no argument to specialise
        _refuse_from_arrays(trace, values, construct, loc)
    raise Specialise(ports, construct, loc)


def _from_arrays(trace, values) -> bool:
    """Whether some weak value is a ``math`` result computed from array data (no scalar argument to
    specialise): NumPy's answer is checked against the strongly typed call instead (_weak_function)."""
    return any(is_weak(v) and not ports_of(trace, v) for v in values)


def _refuse_from_arrays(trace, values, construct, loc):
    """A Python float that ``math`` computed from array data, used where NumPy's weak typing gives
    another value than the float64 0-d array the graph holds: an escape, refused at its line."""
    from ..errors import EscapeError, EscapeWarning
    from . import math_calls

    made = next((m for m in (math_calls.weak(v) for v in values) if m), "a math function")
    message = (f"{construct} at {record.format_loc(loc)}: its operand is the Python float {made} returned, "
               f"which NumPy treats otherwise than the float64 0-d array the graph holds; use the NumPy "
               f"function (np.sin, np.sqrt, ...) to keep a NumPy value there")
    record.report(trace, "escape", "math.* result (a weak Python float)", loc, message, EscapeError, EscapeWarning)
    raise EscapeError(message)  # not strict: warned; there is no value to go on with


# --- operators on weak values: Python's arithmetic ----------------------------------

_PY_BINARY = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
    np.true_divide: operator.truediv, np.floor_divide: operator.floordiv, np.remainder: operator.mod,
    np.bitwise_and: operator.and_, np.bitwise_or: operator.or_, np.bitwise_xor: operator.xor,
    np.left_shift: operator.lshift, np.right_shift: operator.rshift, np.power: operator.pow,
    np.less: operator.lt, np.less_equal: operator.le, np.equal: operator.eq, np.not_equal: operator.ne,
    np.greater: operator.gt, np.greater_equal: operator.ge,
}
_PY_UNARY = {np.negative: operator.neg, np.positive: operator.pos, np.absolute: operator.abs,
             np.invert: operator.invert}
_SYMBOL = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/", np.floor_divide: "//",
           np.remainder: "%", np.bitwise_and: "&", np.bitwise_or: "|", np.bitwise_xor: "^",
           np.left_shift: "<<", np.right_shift: ">>", np.power: "**", np.less: "<", np.less_equal: "<=",
           np.equal: "==", np.not_equal: "!=", np.greater: ">", np.greater_equal: ">=",
           np.negative: "-", np.positive: "+", np.absolute: "abs", np.invert: "~"}


def _weak_or_python(x) -> bool:
    return is_weak(x) or type(x) in _PY_TYPES


def binary(ufunc, reflected, fallback, self, other):
    """``self <op> other`` where ``self`` may be weak; anything else goes to ``fallback``."""
    if not is_weak(self) or not _weak_or_python(other) or ufunc not in _PY_BINARY:
        if is_weak(self) and isinstance(other, np.generic) and ufunc is np.power:
            _specialise_weak(state.current(), (self,), "** with a NumPy scalar", record_loc())
        return fallback(self, other)
    operands = (other, self) if reflected else (self, other)
    return _python_op(ufunc, _PY_BINARY[ufunc], operands)


def unary(ufunc, fallback):
    def method(self):
        if state.current() is None or not is_weak(self):
            return fallback(self)
        return _python_op(ufunc, _PY_UNARY[ufunc], (self,))

    method.__name__ = fallback.__name__
    method.__doc__ = fallback.__doc__
    return method


def _python_op(ufunc, pyop, operands):
    trace = state.current()
    loc = record_loc()
    values = [x._lp_plain if is_weak(x) else x for x in operands]
    result = pyop(*values)  # ZeroDivisionError, OverflowError...: the real call raises them too
    construct = f"the operator {_SYMBOL[ufunc]} on Python numbers"
    if type(result) not in _PY_TYPES or not is_python_number(result):
        _specialise_weak(trace, operands, construct, loc)
    strong = [np.asarray(x._lp_plain) if is_weak(x) else np.asarray(x) for x in operands]
    try:
        with np.errstate(all="ignore"):
            graph_value = ufunc(*strong)  # what the graph computes: the float64/int64/bool op
    except Exception:
        graph_value = None
    if graph_value is None or not _same(np.asarray(graph_value), np.asarray(result)):
        _specialise_weak(trace, operands, construct, loc)  # Python's arithmetic is not NumPy's here
    ir_args = tuple(_strong(x._lp_node) if is_weak(x) else x for x in operands)
    name = record_name(ufunc)
    node = trace.add(name, ir_args, None, np.asarray(graph_value).dtype, (), loc)
    return _new_weak(trace, node, result)


def record_name(ufunc):
    from .names import ufunc_name

    return ufunc_name(ufunc, "__call__")


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def round_(fallback):
    def method(self, ndigits=None):
        trace = state.current()
        if trace is not None and is_weak(self):
            _specialise_weak(trace, (self,), "round() of a Python number", record_loc())
        return fallback(self, ndigits)

    method.__name__ = "__round__"
    return method


def formatting(fallback, construct):
    def method(self, *args):
        trace = state.current()
        if trace is not None and (self._lp_node is not None or self._lp_parent is not None):
            check_read(trace, self, construct)
        return fallback(self, *args)

    method.__name__ = fallback.__name__
    return method


# --- NumPy calls with weak operands -----------------------------------------------


def has_weak(args, kwargs) -> bool:
    for a in _leaves(args, kwargs):
        if is_weak(a):
            return True
    return False


def record_weak_call(trace, name, entry, eager, args, kwargs, loc):
    """``record.record_call`` for a call with weak operands; see the module docstring."""
    ufunc = _ufunc_of(name)
    if ufunc is not None and len(args) == ufunc.nin and set(kwargs or ()) <= {"dtype", "out"}:
        return _weak_ufunc(trace, name, ufunc, entry, eager, args, kwargs, loc)
    return _weak_function(trace, name, entry, eager, args, kwargs, loc)


def _ufunc_of(name):
    if not name.startswith("numpy.") or name.count(".") != 1:
        return None
    fn = getattr(np, name[6:], None)
    return fn if isinstance(fn, np.ufunc) else None


def _weak_ufunc(trace, name, ufunc, entry, eager, args, kwargs, loc):
    from .adapters import resolve_loop

    plains = [record.plain(a) for a in args]
    if all(_weak_or_python(a) for a in args):
        # np.add(t, 1) written as a call: NumPy's scalar result (strong), computed from the inputs
        loops = [_DEFAULT[type(p)] if type(p) in _DEFAULT else np.asarray(p).dtype for p in plains]
    else:
        loops = resolve_loop(ufunc, [record.operand_dtype(p) for p in plains], (kwargs or {}).get("dtype"))
    ir_args = []
    for i, a in enumerate(args):
        if is_weak(a):
            strong = _strong(a._lp_node)
            want = np.dtype(loops[i])
            if strong.dtype != want:  # NumPy converts the Python number to the loop's dtype
                strong = _weak_cast(trace, a, strong, want, name, loc)
            ir_args.append(strong)
        else:
            ir_args.append(record.to_ir(trace, a, loc, name))
    out = (kwargs or {}).get("out")
    rest = {k: v for k, v in (kwargs or {}).items() if k != "out"}
    result = eager(*plains, **record.plain_kwargs(kwargs))
    if out is None:
        return record.wrap_results(trace, name, tuple(ir_args), rest or None, result, loc, entry)
    target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if not isinstance(target, record._TracedNpArray) or is_weak(target):
        raise Specialise(ports_of(trace, next(a for a in args if is_weak(a))) or (),
                         f"{name}(..., out=...)", loc)
    dtype = np.dtype(loops[-1])
    node = trace.add(name, tuple(ir_args), rest or None, dtype, target.shape, loc)
    if dtype != target.dtype:
        node = trace.add("leapp.cast", (node, target.dtype), None, target.dtype, target.shape, loc)
    record.write(trace, target, node, loc)
    return out


_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray",
                          "numpy.atleast_1d", "numpy.atleast_2d", "numpy.atleast_3d"})


def _weak_cast(trace, x, node, dtype, name, loc):
    """The weak value ``x`` (over input ``node``) converted to ``dtype`` as NumPy converts it. A
    Python int into an integer dtype narrower than int64 is read by value instead (one graph per
    value): out of that dtype's range NumPy compares it exactly, clips to it or raises, which no
    cast in a graph reproduces (``x_int8 > 300`` is all False; the cast would wrap 300 to 44)."""
    dtype = np.dtype(dtype)
    if type(x._lp_plain) is int and dtype.kind in "iu" and dtype != node.dtype:
        raise Specialise(ports_of(trace, x) or (), f"{name} with a Python int meeting {dtype} data", loc)
    return _converted(trace, node, dtype, loc)


def _converted(trace, node, dtype, loc):
    """``node`` (a 0-d input) converted to ``dtype`` as NumPy converts a Python number: rounded once
    (``leapp.half`` for float64 to float16, which torch would round twice)."""
    if node.dtype == np.float64 and dtype == np.float16:
        return trace.add("leapp.half", (node,), None, dtype, (), loc)
    return trace.add("leapp.cast", (node, dtype), None, dtype, (), loc)


class _Probe:
    """Stands for one weak operand while NumPy's dispatcher lists a function's array operands."""

    __slots__ = ("seen",)

    def __init__(self, seen):
        self.seen = seen

    def __array_function__(self, func, types, args, kwargs):
        self.seen.add(type(self))
        return NotImplemented


def _array_operands(eager, args, kwargs):
    """The positions (in a flat walk of args and kwargs) of weak operands that NumPy's dispatcher
    treats as array operands of ``eager``; None when ``eager`` dispatches no ``__array_function__``."""
    if type(eager).__name__ != "_ArrayFunctionDispatcher":
        return None
    seen: set = set()
    probes: dict = {}

    def swap(v):
        if is_weak(v):
            cls = type(f"_Probe{len(probes)}", (_Probe,), {"__slots__": ()})
            probes[cls] = v
            return cls(seen)
        if isinstance(v, record._TracedNpArray):
            return record.plain(v)
        if isinstance(v, (list, tuple)):
            items = [swap(x) for x in v]
            return items if isinstance(v, list) else tuple(items)
        return v

    p_args = [swap(a) for a in args]
    p_kwargs = {k: swap(v) for k, v in (kwargs or {}).items()}
    try:
        eager(*p_args, **p_kwargs)
    except Exception:  # noqa: S110 - every probe answered NotImplemented: a TypeError is expected
        pass
    return {id(probes[c]) for c in seen}


def _weak_function(trace, name, entry, eager, args, kwargs, loc):
    weak = [a for a in _leaves(args, kwargs) if is_weak(a)]
    relevant = _array_operands(eager, args, kwargs)
    if relevant is None and args and is_weak(args[0]) and not kwargs and len(args) == 1 and (
            isinstance(eager, type) and issubclass(eager, np.generic) or name in _CONVERSIONS):
        relevant = {id(args[0])}  # np.float32(t), np.asarray(t): the conversion of the number
    fill = _fill_value(eager, args, kwargs)
    if fill is not None and is_weak(fill):  # np.full(3, t): the fill is a value, not a size
        relevant = (relevant or set()) | {id(fill)}
    if (relevant is None or any(id(w) not in relevant for w in weak)) and not _from_arrays(trace, weak):
        _specialise_weak(trace, weak, f"{name} with a Python-number argument it does not take as an array",
                         loc)
    result = eager(*[record.plain(a) for a in args], **record.plain_kwargs(kwargs))
    target = np.asarray(result).dtype if isinstance(result, (np.ndarray, np.generic)) else None
    for dtype in (None, target):
        if dtype is None and target is None:
            continue
        again = _call_strong(eager, args, kwargs, dtype)
        if again is not None and _same_result(result, again):
            mapping = {}
            for w in weak:
                strong = _strong(w._lp_node)
                want = strong.dtype if dtype is None else dtype
                if strong.dtype != want:
                    strong = _weak_cast(trace, w, strong, want, name, loc)
                mapping[id(w)] = strong
            ir_args = tuple(_ir(trace, a, loc, name, mapping) for a in args)
            ir_kwargs = {k: _ir(trace, v, loc, name, mapping) for k, v in kwargs.items()} if kwargs else None
            return record.wrap_results(trace, name, ir_args, ir_kwargs, result, loc, entry)
    _specialise_weak(trace, weak, f"{name} with a Python-number argument (NumPy's weak typing)", loc)
    return None  # unreachable


def _fill_value(eager, args, kwargs):
    """The argument a NumPy function names ``fill_value`` (``np.full``, ``np.full_like``): read from
    its own signature, so every function that has one is covered, and None for the others."""
    params = _fill_params(eager)
    if params is None:
        return None
    if kwargs and "fill_value" in kwargs:
        return kwargs["fill_value"]
    at = params.index("fill_value")
    return args[at] if len(args) > at else None


@functools.lru_cache(maxsize=256)
def _fill_params(eager):
    try:
        names = list(inspect.signature(eager).parameters)
    except (TypeError, ValueError):  # a C function without a signature
        return None
    return names if "fill_value" in names else None


def _call_strong(eager, args, kwargs, dtype):
    def conv(v):
        if is_weak(v):
            return np.asarray(v._lp_plain) if dtype is None else np.asarray(v._lp_plain, dtype=dtype)
        if isinstance(v, (list, tuple)):
            items = [conv(x) for x in v]
            return items if isinstance(v, list) else tuple(items)
        return record.plain(v)

    try:
        with np.errstate(all="ignore"):
            return eager(*[conv(a) for a in args], **{k: conv(v) for k, v in (kwargs or {}).items()})
    except Exception:
        return None


def _same_result(a, b) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_result(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (np.ndarray, np.generic)) and isinstance(b, (np.ndarray, np.generic)):
        return type(a) is type(b) and _same(np.asarray(a), np.asarray(b))
    return False


def _ir(trace, x, loc, name, mapping):
    if id(x) in mapping:
        return mapping[id(x)]
    if isinstance(x, (list, tuple)) and not isinstance(x, record._TracedNpArray):
        items = [_ir(trace, v, loc, name, mapping) for v in x]
        return items if isinstance(x, list) else tuple(items)
    return record.to_ir(trace, x, loc, name)


def install(cls):
    """The operators of ``TracedNpArray`` that Python numbers answer differently from NumPy."""
    for dunder, ufunc in (("__neg__", np.negative), ("__pos__", np.positive), ("__abs__", np.absolute),
                          ("__invert__", np.invert)):
        setattr(cls, dunder, unary(ufunc, getattr(np.ndarray, dunder)))
    cls.__round__ = round_(cls.__round__)
    cls.__format__ = formatting(cls.__format__, "formatting (format(), an f-string)")
    cls.__str__ = formatting(cls.__str__, "str()")


def weak_power(self, other) -> bool:
    """``**`` with a weak operand: Python's ``**`` (or a specialisation), not NumPy's scalar math."""
    return state.current() is not None and (is_weak(self) or is_weak(other))


def weak_math(trace, args, result, value):
    """``math.cos(t)`` of Python-number arguments: a Python float, weak like ``t`` (``math_calls``);
    None when another operand is an array's value (then math_calls refuses where weak typing shows)."""
    traced = [a for a in args if isinstance(a, record._TracedNpArray)]
    if not traced or not all(is_weak(a) for a in traced) or type(value) is not float:
        return None
    if not _same(np.asarray(record.plain(result), dtype=np.float64), np.asarray(value)):
        _specialise_weak(trace, traced, "a math function (its value differs from NumPy's)", record_loc())
    return _new_weak(trace, record.node_of(result), value)
