"""Recording one intercepted call: run NumPy eagerly, append a node, wrap the result.

Every path into the tracer (ufuncs, array functions, ndarray methods,
indexing, the dispatcher) ends in ``record_call``. The order inside it
matters: operands are converted to graph references *before* NumPy runs, so
an in-place call snapshots constants before it overwrites them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import table
from ..errors import (
    EscapeError,
    EscapeWarning,
    UnsupportedArgumentError,
    UntracedCallError,
    UntracedCallWarning,
)
from . import argcheck, scalar_args, state, unseen_calls, where
from .ir import Problem, _unchanged, format_loc

_plain_view = np.ndarray.view
_empty = np.empty  # the original, even while leapp.runtime.patches is installed
_TracedNpArray: Any = None  # set by traced.py (import cycle)
_TracedTensor: Any = None  # set by torch_interop.py when loaded


def set_array_class(cls):
    global _TracedNpArray
    _TracedNpArray = cls


def set_tensor_class(cls):
    global _TracedTensor
    _TracedTensor = cls


# --- unwrapping for the eager call ------------------------------------------


def plain(x):
    """The NumPy-only twin of a traced value (same memory), for NumPy to compute on."""
    if isinstance(x, _TracedNpArray):
        p = x._lp_plain
        return p if p is not None else _plain_view(x, np.ndarray)
    if isinstance(x, (list, tuple)) and x and _contains_traced(x):
        # an element NumPy holds as a NumPy scalar goes in as one: np.array([x[0], ...], dtype=int)
        # converts a scalar by Python's int() (NaN and inf raise) but casts a 0-d array
        seq = [_element(v) for v in x]
        return seq if isinstance(x, list) else type(x)(seq) if type(x) is tuple else tuple(seq)
    if _TracedTensor is not None and isinstance(x, _TracedTensor):
        return x._lp_numpy()
    return x


def _element(v):
    p = plain(v)
    # a weak value's plain twin is the Python number itself (scalar_args), which goes in as it is
    return p[()] if getattr(v, "_lp_scalar", False) and isinstance(p, np.ndarray) else p


def _contains_traced(seq) -> bool:
    for v in seq:
        if isinstance(v, _TracedNpArray) or (isinstance(v, (list, tuple)) and v and _contains_traced(v)):
            return True
        if _TracedTensor is not None and isinstance(v, _TracedTensor):
            return True
    return False


def plain_kwargs(kwargs):
    if not kwargs:
        return {}
    return {k: plain(v) for k, v in kwargs.items()}


# --- graph references for operands -----------------------------------------


def to_ir(trace, x, loc, call):
    """The graph-side form of an operand: a Node, a literal, or a nested list of those."""
    if isinstance(x, _TracedNpArray):
        return node_of_operand(trace, x, loc, call)
    if isinstance(x, np.ndarray):
        return trace.const(x, loc)
    if isinstance(x, (list, tuple)):
        if not x:
            return x
        items = [to_ir(trace, v, loc, call) for v in x]
        return items if isinstance(x, list) else tuple(items)
    if _TracedTensor is not None and isinstance(x, _TracedTensor):
        return x._lp_node_for(trace, loc, call)
    return x


def node_of_operand(trace, arr, loc, call):
    """The node for a traced array used as an operand; escaped values are reported here."""
    node = node_of(arr)
    if node is None:
        return _freeze(trace, arr, loc, call, None)
    if node.op == "escaped":
        return _freeze(trace, arr, loc, call, node)
    if node.op == "const" and node.value is not None and not _unchanged(node.value, _plain_view(arr, np.ndarray)):
        return _written_unseen(trace, arr, node, loc, call)
    return node


def _written_unseen(trace, arr, node, loc, call):
    """A traced array made as a constant (np.zeros(...) in a library) whose memory was written since
    by code no hook saw: a library's compiled routine filling its output buffer. The graph would
    use the zeros; NumPy used what was written."""
    # an output's location is the function's `def`: what returns it is said instead
    used = f"it was returned as {call}" if call.startswith("output ") else f"{call} at {format_loc(loc)} used it"
    message = (f"the array made at {format_loc(node.loc)} was written by code leapp does not see (C "
               f"code filling a buffer through its memory, as scipy.ndimage's filters do) before "
               f"{used}; what was written is frozen into the graph as "
               f"a constant and will be wrong for other inputs. Use NumPy functions leapp traces, or "
               f"call that code outside the compiled function")
    # named at the user's line that called the code which made the buffer, when known: that call is
    # what to move out (where it is used may be the function's `def`, for an output)
    made = node.loc
    at = made[:4] if isinstance(made, tuple) and len(made) > 4 and made[4] is not None else loc
    report(trace, "frozen", call, at, message, EscapeError, EscapeWarning, origin=node.loc)
    return trace.const(np.array(_plain_view(arr, np.ndarray), copy=True), loc,
                       origin=("a write leapp did not see", node.loc))


def _freeze(trace, arr, loc, call, escaped):
    if escaped is not None:
        origin = escaped.args[0]
        message = (
            f"the result of the untraced call {origin} at {format_loc(escaped.loc)} is used by "
            f"{call} at {format_loc(loc)}; it is frozen into the graph as a constant and will be "
            f"wrong for other inputs"
        )
    else:
        origin = "an operation leapp did not see"
        message = (
            f"an array produced by an operation leapp did not see is used by {call} at "
            f"{format_loc(loc)}; it is frozen into the graph as a constant"
        )
    report(trace, "frozen", call, loc, message, EscapeError, EscapeWarning,
           origin=escaped.loc if escaped is not None else None)
    node = trace.const(_plain_view(arr, np.ndarray), loc, origin=(origin, escaped.loc if escaped else loc))
    return node


def constant_output(trace, key, loc):
    """An output that is a plain NumPy value: the graph will return it unchanged, whatever the inputs.

    Rarely intended; usually a call dropped the tracing on the way (NumPy's own
    ``asarray`` bound before tracing started, a C extension, ``x.view(np.ndarray)``).
    A warning, not an error, since a fixed output can be deliberate.
    """
    warn_at(constant_output_message(key, loc), EscapeWarning, loc)


def constant_output_message(key, loc) -> str:
    return (
        f"output {key!r} (at {format_loc(loc)}) does not depend on the inputs: it is a plain NumPy "
        f"value, frozen into the graph. If it was computed from the inputs, a call on the way dropped "
        f"the tracing (another library such as scipy or math on arrays, a C extension, or NumPy's "
        f"asarray bound with `from numpy import asarray` before tracing started); use NumPy calls "
        f"leapp traces. A deliberate constant belongs outside the traced function"
    )


def report(trace, kind, call, loc, message, error_cls, warning_cls, origin=None, chain=True):
    """Record a problem; raise in strict mode, warn (at the user's line) otherwise.

    With ``chain`` (while the code that met the problem is still running), a problem inside
    library code called from the user's line names both: ``user.py:12:8 -> lib.py:40 in fn()``.
    """
    if chain:
        message = where.chained_message(message, loc, where.library_line(loc, 2))
    trace.problems.append(Problem(kind, call, loc, message, origin))
    if trace.strict:
        raise error_cls(message)
    if not trace.quiet:
        warn_at(message, warning_cls, loc)


# Shared by every trace, so a warning at one source line is shown once under
# Python's default filter even when the annotated code runs for many frames.
_registry: dict = {}


def warn_at(message, category, loc):
    """Warn as if from the user's line (file and line of ``loc``)."""
    if loc is None or isinstance(loc, str):
        warnings.warn(message, category, stacklevel=4)
        return
    warnings.warn_explicit(message, category, loc[0], loc[1], registry=_registry)


# --- views and in-place writes ------------------------------------------------


def node_of(arr):
    """The node holding ``arr``'s current value, re-deriving stale views of written bases."""
    parent = arr._lp_parent
    if parent is None:
        return arr._lp_node
    root = arr._lp_root
    version = root._lp_version
    if arr._lp_ver == version:
        return arr._lp_node
    chain = []
    cur = arr
    while cur._lp_parent is not None and cur._lp_ver != version:
        chain.append(cur)
        cur = cur._lp_parent[0]
    node = cur._lp_node
    trace = state.current()
    for view in reversed(chain):
        base, kind, vargs, loc = view._lp_parent
        if node is None or trace is None:
            node = None
        else:
            node = trace.add(_VIEW_READ[kind], (node, vargs), None, view.dtype, view.shape, loc)
        view._lp_node = node
        view._lp_ver = version
    return node


_VIEW_READ = {"index": "leapp.view_index", "shape": "leapp.view_shape", "permute": "leapp.view_permute"}
_VIEW_WRITE = {"index": "leapp.write_index", "shape": "leapp.write_shape", "permute": "leapp.write_permute"}


def make_view(result, base, kind, vargs, loc):
    """Mark traced ``result`` as a NumPy view of traced ``base``, so writes flow both ways."""
    root = base if base._lp_parent is None else base._lp_root
    result._lp_parent = (base, kind, vargs, loc)
    result._lp_root = root
    result._lp_ver = root._lp_version


def write(trace, arr, node, loc):
    """``arr``'s value is now ``node``; propagate the write into every base it views."""
    chain = [arr]
    while arr._lp_parent is not None:
        base, kind, vargs, vloc = arr._lp_parent
        arr._lp_node = node
        base_node = node_of(base)
        if base_node is None:
            base_node = trace.const(_plain_view(base, np.ndarray), loc)
        node = trace.add(_VIEW_WRITE[kind], (base_node, vargs, node), None, base.dtype, base.shape, loc)
        arr = base
        chain.append(arr)
    arr._lp_node = node
    arr._lp_version += 1
    version = arr._lp_version
    for a in chain[:-1]:
        a._lp_ver = version
    unseen_calls.written(arr, loc)  # what its memory holds now is the graph's value


# --- wrapping results -----------------------------------------------------------


def wrap(result, node):
    """A traced array (0-d for NumPy scalars, marked ``_lp_scalar``) carrying ``node``."""
    scalar = not isinstance(result, np.ndarray)
    if scalar:
        result = np.asarray(result)
    out: Any = _plain_view(result, _TracedNpArray)
    out._lp_node = node
    out._lp_plain = result if type(result) is np.ndarray else None
    out._lp_scalar = scalar
    return out


def wrap_results(trace, name, args, kwargs, result, loc, entry):
    """Append the node(s) for a supported call's eager ``result`` and wrap it."""
    if isinstance(result, (np.ndarray, np.generic)):
        node = trace.add(name, args, kwargs, result.dtype, result.shape, loc)
        return wrap(result, node)
    if isinstance(result, (tuple, list)):
        parent = trace.add(name, args, kwargs, None, None, loc)
        items = []
        for i, r in enumerate(result):
            if isinstance(r, (np.ndarray, np.generic)):
                items.append(wrap(r, trace.add("item", (parent, i), None, r.dtype, np.shape(r), loc)))
            else:
                items.append(r)
        if isinstance(result, list):
            return items
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, (bool, int, float, complex)):
        value = np.asarray(result)
        node = trace.add(name, args, kwargs, value.dtype, value.shape, loc)
        return wrap(value, node)
    return result


def untraced(trace, name, loc, result, entry=None):
    """A call leapp cannot trace: warn with the seed's text, mark the result as escaped."""
    # The seed's exact text, naming the function as NumPy spells it (np.polyval -> polyval)
    message = table.untraced_message(table.display_name(name))
    if isinstance(entry, table.Unsupported):
        detail = f" ({name}: {entry.reason}; {entry.instead}.)"
    else:
        detail = f" ({name})"
    library = where.library_line(loc, 2)
    if library is not None:
        detail += f" (at {where.chain(loc, library)})"
    trace.problems.append(Problem("untraced", name, loc, f"{message}{detail}"))
    if trace.strict:
        raise UntracedCallError(f"{where.chain(loc, library)}: {message}{detail}")
    if not trace.quiet:
        warn_at(message, UntracedCallWarning, loc)
    return mark_escaped(trace, name, loc, result)


def mark_escaped(trace, name, loc, result):
    if isinstance(result, (np.ndarray, np.generic)):
        return wrap(result, trace.add("escaped", (name,), None, result.dtype, np.shape(result), loc))
    if isinstance(result, (tuple, list)):
        items = [mark_escaped(trace, name, loc, r) for r in result]
        if isinstance(result, list):
            return items
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    return result


def check_refused(entry, name, kwargs, loc):
    if not entry.refuse or not kwargs:
        return
    bad = table.refused_keywords(entry, kwargs)
    if bad:
        key, reason = bad[0]
        raise UnsupportedArgumentError(
            f"{format_loc(loc)}: {name}(..., {key}={kwargs[key]!r}) cannot be traced: {reason}."
        )


def record_call(name, eager, args, kwargs, loc, view_base=None):
    """Trace one call ``eager(*args, **kwargs)`` under table name ``name``.

    ``eager`` receives NumPy-only operands. ``view_base`` is the traced array
    whose memory a view-returning op may share.
    """
    trace = state.current()
    entry = table.lookup(name)
    if trace is None:
        return eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
    if isinstance(entry, table.Entry):
        if entry.kind == "static":
            return eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
        check_refused(entry, name, kwargs, loc)
        eager = argcheck.prepare(name, eager, args, kwargs, loc)
        if entry.kind == "inplace":
            return _record_inplace(trace, name, eager, args, kwargs, loc)
    # weak operands: Python-number arguments (scalar_ports) and math results (math_results)
    if (getattr(trace, "scalar_ports", None) or getattr(trace, "math_results", None)) and \
            scalar_args.has_weak(args, kwargs):
        if not isinstance(entry, table.Entry):
            scalar_args.check_untraced(trace, name, args, kwargs, loc)
        return scalar_args.record_weak_call(trace, name, entry, eager, args, kwargs, loc)
    out = kwargs.get("out") if kwargs else None
    if out is not None:
        return _record_with_out(trace, name, eager, args, kwargs, loc, entry, out)
    if not isinstance(entry, table.Entry):
        scalar_args.check_untraced(trace, name, args, kwargs, loc)  # a scalar argument's value: specialised
        result = eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
        return untraced(trace, name, loc, result, entry)
    ir_args = tuple(to_ir(trace, a, loc, name) for a in args)
    ir_kwargs = {k: to_ir(trace, v, loc, name) for k, v in kwargs.items()} if kwargs else None
    result = eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
    wrapped = wrap_results(trace, name, ir_args, ir_kwargs, result, loc, entry)
    if entry.view and view_base is not None and isinstance(wrapped, _TracedNpArray):
        if np.may_share_memory(result, _plain_view(view_base, np.ndarray)):
            make_view(wrapped, view_base, entry.view, _view_args(entry.view, wrapped, view_base, eager, args, kwargs), loc)
    return wrapped


def _record_inplace(trace, name, eager, args, kwargs, loc):
    """A NumPy function that writes into its first argument (np.copyto, np.put_along_axis...).

    Recorded functionally: the node computes the target's new value, which is
    then written into the target (and through it into any base it views).
    """
    target = args[0] if args else None
    if not isinstance(target, _TracedNpArray):
        raise UnsupportedArgumentError(
            f"{format_loc(loc)}: {name} writes into a plain NumPy array, which the graph cannot see. "
            f"Make the array inside the traced code (np.array(x) or np.zeros_like(x)) first."
        )
    ir_args = (node_of_operand(trace, target, loc, name),) + tuple(to_ir(trace, a, loc, name) for a in args[1:])
    ir_kwargs = {k: to_ir(trace, v, loc, name) for k, v in kwargs.items()} if kwargs else None
    result = eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
    write(trace, target, trace.add(name, ir_args, ir_kwargs, target.dtype, target.shape, loc), loc)
    return result


def _view_args(kind, result, base, eager, args, kwargs):
    if kind == "shape":
        return tuple(result.shape)
    # A zero-stride probe with distinct axis lengths shows where each axis went.
    probe = np.lib.stride_tricks.as_strided(_empty((1,), np.int8), tuple(range(2, base.ndim + 2)), (0,) * base.ndim)
    moved = eager(probe, *[plain(a) for a in args[1:]], **plain_kwargs(kwargs))
    return tuple(n - 2 for n in moved.shape)


def _record_with_out(trace, name, eager, args, kwargs, loc, entry, out):
    outs = out if isinstance(out, tuple) else (out,)
    targets = [o for o in outs if o is not None]
    if not isinstance(entry, table.Entry):
        result = eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
        for t in targets:
            if isinstance(t, _TracedNpArray):
                write(trace, t, trace.add("escaped", (name,), None, t.dtype, t.shape, loc), loc)
        return untraced(trace, name, loc, result, entry) if not targets else result
    for t in targets:
        if not isinstance(t, _TracedNpArray):
            raise UnsupportedArgumentError(
                f"{format_loc(loc)}: {name}(..., out=...) writes into a plain NumPy array, which "
                f"the graph cannot see. Let the call return a new array (y = {name.split('.')[-1]}(...)), "
                f"or preallocate the buffer inside the traced code (np.empty_like(x))."
            )
    rest = {k: v for k, v in kwargs.items() if k != "out"}
    ir_args = tuple(to_ir(trace, a, loc, name) for a in args)
    ir_kwargs = {k: to_ir(trace, v, loc, name) for k, v in rest.items()} or None
    result = eager(*[plain(a) for a in args], **plain_kwargs(kwargs))
    results = result if isinstance(result, tuple) else (result,)
    if len(targets) == 1:
        t = targets[0]
        dtype = _natural_dtype(name, args, rest, t)
        node = trace.add(name, ir_args, ir_kwargs, dtype, t.shape, loc)
        if dtype != t.dtype:
            node = trace.add("leapp.cast", (node, t.dtype), None, t.dtype, t.shape, loc)
        write(trace, t, node, loc)
        return t if not isinstance(out, tuple) or len(results) == 1 else result
    parent = trace.add(name, ir_args, ir_kwargs, None, None, loc)
    for i, t in enumerate(outs):
        if t is not None:
            write(trace, t, trace.add("item", (parent, i), None, t.dtype, t.shape, loc), loc)
    return result


def _natural_dtype(name, args, kwargs, target):
    """The dtype NumPy computes in before casting into ``out`` (ufuncs), else the target's."""
    ufunc = getattr(np, name[len("numpy."):], None) if name.startswith("numpy.") else None
    if isinstance(ufunc, np.ufunc) and len(args) == ufunc.nin:
        from .adapters import resolve_loop

        try:
            return resolve_loop(ufunc, [operand_dtype(a) for a in args], kwargs.get("dtype"))[-1]
        except Exception:
            return target.dtype
    return target.dtype


def operand_dtype(x):
    """The dtype NumPy's NEP 50 rules see for an operand (Python scalars are weak)."""
    if isinstance(x, np.ndarray | np.generic):
        return x.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, (int, float, complex)):
        return type(x)
    return np.asarray(x).dtype
