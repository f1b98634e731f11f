"""Tracing one Python function call: the runtime half of ``leapp.compile``.

``trace_function(fn, args, kwargs)`` runs ``fn`` once on traced copies of its
array arguments and returns a ``Traced`` record: the lowered ``CompiledNode``,
how to flatten inputs and rebuild outputs (arrays, tuples, lists, dicts,
nested), and the problems found. It opens and closes its own trace and
installs the session patches only for the duration of the call.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import EscapeError, EscapeWarning, LeappError, OutputTypeError, ProblemsError
from . import conventions, escapes, math_calls, patches, record, scalar_args, state
from .inputs import check_graph_dtype
from .ir import Problem, Trace, _copy_array
from .session_graph import CompiledNode
from .traced import TracedNpArray


@dataclass
class Traced:
    node: Any  # a CompiledNode; None where the trace only explains (keep_values): not lowered
    trace: Trace
    input_paths: list  # (path, name) for each array input, in placeholder order
    output_spec: object  # nested structure with output names at the leaves
    eager_result: object
    problems: list = field(default_factory=list)
    scalar_outputs: frozenset = frozenset()  # outputs NumPy returns as NumPy scalars
    values: dict = field(default_factory=dict)  # trace node index -> NumPy's value (keep_values)
    specialised: dict = field(default_factory=dict)  # scalar argument path -> (what read it, where)


def _is_array(x):
    return isinstance(x, np.ndarray) or _is_tensor(x) or is_scalar_input(x)


def is_scalar_input(x) -> bool:
    """A scalar argument: a NumPy number or bool, or a Python ``bool``/``int``/``float``/``complex``
    (an int within int64's range). Each is first traced as a 0-d graph input of its NumPy dtype; a
    Python number is weakly typed, as in NumPy (``x32 * 0.5`` stays float32), and an argument whose
    value the trace needs in Python (a size, a slice bound, ``int(n)``) is traced again as a
    constant of its graph, one graph per value (``runtime/scalar_args.py``)."""
    return isinstance(x, (np.number, np.bool_)) or scalar_args.is_python_number(x)


def _is_tensor(x):
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return isinstance(x, torch.Tensor)


# The walks below are module functions, not closures: a recursive closure is a reference cycle
# (function -> cell -> function) that would keep the traced values it saw alive until the next
# garbage collection, and the escape watch (runtime/escapes.py) would have to collect to tell.


def flatten_inputs(args, kwargs):
    """(path, value) for every array leaf of the call's arguments, in a stable order."""
    leaves: list[tuple[tuple[Any, ...], Any]] = []
    for i, a in enumerate(args):
        _flatten(a, ("args", i), leaves)
    for k, v in kwargs.items():
        _flatten(v, ("kwargs", k), leaves)
    return leaves


def _flatten(value, path, leaves):
    if _is_array(value):
        leaves.append((path, value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(v, path + (i,), leaves)
    elif isinstance(value, dict):
        for k in value:
            _flatten(value[k], path + (k,), leaves)


def input_name(path, names):
    head = path[1]
    base = names[head] if isinstance(head, int) and head < len(names) else str(head)
    rest = "_".join(str(p) for p in path[2:])
    return f"{base}_{rest}" if rest else base


def replace_leaves(args, kwargs, mapping):
    new_args = tuple(_replace(a, ("args", i), mapping) for i, a in enumerate(args))
    new_kwargs = {k: _replace(v, ("kwargs", k), mapping) for k, v in kwargs.items()}
    return new_args, new_kwargs


def _replace(value, path, mapping):
    if path in mapping:
        return mapping[path]
    if isinstance(value, (list, tuple)) and not _is_array(value):
        items = [_replace(v, path + (i,), mapping) for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: _replace(v, path + (k,), mapping) for k, v in value.items()}
    return value


def output_structure(result):
    """(spec, leaves): spec mirrors ``result`` with output names at array leaves.

    The names are the user's where the result has them: a dict's keys joined by ``_`` along the
    path (``{"obs": x}`` gives ``obs``, ``{"meta": {"pair": [a, b]}}`` ``meta_pair_0``); a bare
    array is ``output``, a tuple's items ``output_0``, ``output_1``... A name taken twice gets
    ``_2``, ``_3`` (in the result's order), so every name is distinct and the same result always
    gets the same names.
    """
    leaves: dict[str, Any] = {}
    return _structure(result, (), leaves, isinstance(result, dict)), leaves

def _structure(value, path, leaves, keyed):
    if isinstance(value, (np.ndarray, np.generic)) or _is_tensor(value):
        text = "_".join(str(p) for p in path)
        name = text if keyed and text else ("output_" + text if path else "output")
        base, k = name, 1
        while name in leaves:
            k += 1
            name = f"{base}_{k}"
        leaves[name] = value
        return ("leaf", name)
    if isinstance(value, dict):
        return ("dict", {k: _structure(v, path + (k,), leaves, keyed) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        kind = "namedtuple" if hasattr(value, "_fields") else type(value).__name__
        return (kind, type(value), [_structure(v, path + (i,), leaves, keyed) for i, v in enumerate(value)])
    if isinstance(value, (bool, int, float, complex, str, bytes)) or value is None:
        return ("const", value)
    where = "the result" if not path else "the result's item " + "".join(f"[{p!r}]" for p in path)
    hint = " (dataclasses.asdict(result) gives one)" if hasattr(value, "__dataclass_fields__") else ""
    raise OutputTypeError(
        f"{where} is a {type(value).__qualname__}, which a graph cannot return: outputs are arrays, "
        f"NumPy and Python scalars, strings and None, in tuples, lists, namedtuples and dicts. Return "
        f"a dict or a namedtuple of its arrays{hint}")


def align(value, spec):
    """``value``, a plain call's result, with Python scalars made 0-d arrays where ``spec`` (the
    traced result's) has an array leaf: ``np.allclose`` returns a Python bool, and tracing
    returns it as a traced 0-d array so that it stays in the graph."""
    kind = spec[0]
    if kind == "leaf":
        return np.asarray(value) if isinstance(value, (bool, int, float, complex)) else value
    if kind == "dict" and isinstance(value, dict) and value.keys() == spec[1].keys():
        return {k: align(v, spec[1][k]) for k, v in value.items()}
    if kind in ("list", "tuple", "namedtuple") and isinstance(value, (list, tuple)) and len(value) == len(spec[2]):
        items = [align(v, s) for v, s in zip(value, spec[2], strict=True)]
        return type(value)(*items) if kind == "namedtuple" else type(value)(items)
    return value


def rebuild(spec, values):
    kind = spec[0]
    if kind == "leaf":
        return values[spec[1]]
    if kind == "const":
        return spec[1]
    if kind == "dict":
        return {k: rebuild(v, values) for k, v in spec[1].items()}
    typ, items = spec[1], [rebuild(s, values) for s in spec[2]]
    return typ(*items) if kind == "namedtuple" else typ(items)


# Read by benchmarks/compile_split.py only, to measure what watching for escapes costs a trace.
WATCH_ESCAPES = True


class _Kept(list):
    """``Trace.made`` that keeps the arrays themselves (``keep_values``): the values NumPy computed."""

    __slots__ = ()

    def append(self, ref):
        list.append(self, ref())


def trace_function(fn, args, kwargs, *, names, strict=False, name=None, keep_values=False,
                   constants=(), on_retrace=None, stack=None):
    """Trace ``fn(*args, **kwargs)`` and lower it. ``names`` are fn's parameter names.

    Scalar arguments are 0-d inputs, except those in ``constants`` (their paths) and those whose
    value the trace reads into Python: then it traces again with them as constants of the graph
    (``runtime/scalar_args.py``), calling ``on_retrace()`` first. ``Traced.specialised`` says which,
    path -> (what read the value, where).

    ``stack``: the differential check's stacked inputs (``compiler.check.Stack``), on which the
    lowering's own run of the graph runs where they fit (``CompiledNode.from_trace``).
    """
    specialised = {path: ("the caller", None) for path in constants}
    while True:
        try:
            traced = _trace_once(fn, args, kwargs, names=names, strict=strict, name=name,
                                 keep_values=keep_values, constants=frozenset(specialised), stack=stack)
        except scalar_args.Specialise as exc:
            fresh = sorted((p for p in exc.ports if p not in specialised), key=repr)
            if not fresh:  # never loop: a constant cannot be read as an input
                raise RuntimeError(f"{exc.construct} read a scalar argument traced as a constant "
                                   f"(a leapp bug, please report it)") from None
            specialised.update((p, (exc.construct, exc.loc)) for p in fresh)
            if on_retrace is not None:
                on_retrace()
            continue
        traced.specialised = specialised
        return traced


def _trace_once(fn, args, kwargs, *, names, strict, name, keep_values, constants, stack=None):
    """One trace of ``fn`` (see ``trace_function``); ``scalar_args.Specialise`` when a scalar
    argument's value is read into Python.

    ``keep_values``: also return, per trace node index, the value NumPy computed for it
    (``Traced.values``; the differential check's second trace, which names the first node that
    departs) and skip the escape search."""
    # Recording and lowering relax the collector as one stretch: given back in between, the
    # threshold came down under the count both had allocated, and a collection ran between them.
    with state.collector_relaxed():
        return _trace_function(fn, args, kwargs, names=names, strict=strict, name=name, keep_values=keep_values,
                               constants=constants, stack=stack)


def _trace_function(fn, args, kwargs, *, names, strict, name, keep_values, constants, stack=None):
    active = state.current()
    if active is not None:
        raise RuntimeError(f"cannot trace {name or fn.__name__} while {active.name!r} is being traced")
    trace = Trace(name or getattr(fn, "__qualname__", "fn"), strict=strict)
    leaves = [(p, v) for p, v in flatten_inputs(args, kwargs) if p not in constants]
    mapping = {}
    input_paths = []
    value = None  # bound by the loops below only when there are inputs, outputs (deleted after)
    for path, value in leaves:
        key = input_name(path, names)
        mapping[path] = _traced_input(trace, key, value)
        input_paths.append((path, key))
        if not isinstance(value, np.ndarray) and not _is_tensor(value):
            trace.scalar_ports[trace.inputs[key].index] = path
    t_args, t_kwargs = replace_leaves(args, kwargs, mapping)
    trace.made = _Kept() if keep_values else [] if WATCH_ESCAPES else None
    if trace.made is not None:  # the inputs too: one a library keeps (a delay line's queue) outlives the call
        for traced_input in mapping.values():
            if type(traced_input) is TracedNpArray:
                trace.made.append(weakref.ref(traced_input))
        traced_input = None  # bound only when there are inputs (every argument may be a constant)
    try:
        with patches.held(), state.recording(trace):
            result = fn(*t_args, **t_kwargs)
            spec, outs = output_structure(result)
            code = getattr(fn, "__code__", None)
            returned_at = (code.co_filename, code.co_firstlineno, code.co_name, None) if code else None
            for key, value in outs.items():
                trace.outputs[key] = _output_node(trace, key, value, returned_at)
                trace.output_values[key] = _copy_array(record.plain(value), copy=True) \
                    if not _is_tensor(value) else value.detach().cpu().numpy().copy()
            for path, key in input_paths:
                _check_unwritten(trace, key, mapping[path])
            math_calls.check_weak_uses(trace)
            conventions.check(trace)
    except BaseException as exc:
        causes = [p for p in trace.problems if p.kind != "frozen"]  # a frozen value is a consequence
        if isinstance(exc, LeappError) and not isinstance(exc, ProblemsError) and causes:
            # refused at once (ndarray.view(Vector) in a library): what the trace met before it (a
            # raise guard on data there) is part of the answer (leapp.compiler.function._trace)
            exc.leapp_earlier = [str(p) for p in causes]  # type: ignore[attr-defined]
        # a refused or failed call leaves no traced array on the user's objects either
        del t_args, t_kwargs, mapping
        if trace.made is not None:
            try:
                escapes.settle(trace.made, set(), record.plain, record.format_loc, failed=True)
            except Exception:  # noqa: S110 - cleaning up must never hide the error being raised
                pass
        trace.made = None
        raise
    scalars = ScalarOutputs(k for k, v in outs.items()
                            if (type(v) is TracedNpArray and v._lp_scalar) or isinstance(v, np.generic))
    # computed from Python-number arguments by Python's arithmetic (t * 2): a Python number
    # and `math` results (math.sqrt(v[0]) is a Python float in NumPy's run)
    scalars.python = frozenset(k for k, v in outs.items() if scalar_args.is_weak(v) or (
        k in scalars and _math_result(trace, v)))
    del result, outs, t_args, t_kwargs, mapping, value
    values = {}
    if keep_values:
        for arr in trace.made or ():  # kept: the trace watched what it made
            node = arr._lp_node
            if node is None or node.index in values:
                continue
            root = arr._lp_root
            if arr._lp_parent is not None and root is not None and arr._lp_ver != root._lp_version:
                continue  # a view whose base was written after its node: its memory holds a later value
            values[node.index] = np.array(record.plain(arr), copy=True)
        values.update({n.index: n.value for n in trace.nodes if n.op == "const"})
        values.update({node.index: trace.input_values[key] for key, node in trace.inputs.items()})
        # this trace only explains (a retrace on another input): it reports nothing, but leaves no
        # traced array on the user's objects either (a library's queue or running statistics)
        refs = [weakref.ref(a) for a in trace.made or ()]
        trace.made = None
        arr = root = None
        escapes.settle(refs, set(), record.plain, record.format_loc)
    else:
        code = getattr(fn, "__code__", None)  # where an input that something kept entered
        _report_escapes(trace, f"{code.co_name} at {code.co_filename}:{code.co_firstlineno}" if code else None)
    # a trace that only explains (keep_values) is read for its nodes and values, never run: not
    # lowered, so an input the graph cannot run on (a matrix torch finds singular) still explains
    node = None if keep_values else CompiledNode.from_trace(trace, stacked=_on_stack(stack, trace, input_paths))
    eager = rebuild(spec, as_scalars(trace.output_values, scalars))
    return Traced(node, trace, input_paths, spec, eager, list(trace.problems), scalars, values)


def _on_stack(stack, trace, input_paths):
    """``from_trace``'s ``stacked``: the stack's arrays as tensors in the graph's input order, when
    every input the graph kept is one of them (a scalar input or a constant is not), else None."""
    if stack is None:
        return None
    import torch

    by_name = {key: path for path, key in input_paths}
    tensors = []
    for key in trace.input_values:
        path = by_name.get(key)
        value = stack.for_graph.get(path) if path is not None else None
        if value is None:
            return None
        tensors.append(torch.from_numpy(value))
    return tensors, stack


def _report_escapes(trace, entered=None):
    """Traced arrays still held outside leapp once the call returned (``runtime/escapes.py``);
    ``entered``: the traced function and its ``def`` line, named for a kept input."""
    made, trace.made = trace.made, None
    if made is None:
        return
    for loc, message in escapes.settle(made, set(), record.plain, record.format_loc, entered=entered):
        text = (f"{message}: the graph cannot carry a value to the next call, which would start "
                f"from the one frozen now. Return it as an output, or declare it with "
                f"leapp.compile(state={{...}}) (the value left there is NumPy's, untraced)")
        record.report(trace, "escape", "a traced array kept after the call", loc, text,
                      EscapeError, EscapeWarning)


def _math_result(trace, v) -> bool:
    if not getattr(trace, "math_results", None) or not isinstance(v, TracedNpArray):
        return False
    from . import math_calls

    node = record.node_of(v)
    return node is not None and math_calls._weak_node(trace, node) is not None


class ScalarOutputs(frozenset):
    """The outputs NumPy returns as scalars; ``python``: those the function returns as Python
    numbers (Python's arithmetic on Python-number arguments, ``runtime/scalar_args.py``)."""

    python: frozenset = frozenset()


def as_scalars(out, scalars):
    """``out`` (name -> 0-d array or tensor) with the outputs in ``scalars`` as NumPy scalars (as
    Python numbers for those in ``scalars.python``)."""
    if not scalars:
        return out
    python = getattr(scalars, "python", ())
    return {k: ((v.item() if k in python else v[()]) if k in scalars and isinstance(v, np.ndarray) else v)
            for k, v in out.items()}


def _traced_input(trace, key, value):
    if _is_tensor(value):
        from .dtypes import to_numpy
        from .torch_interop import TracedTensor

        node = trace.add("input", (key,), None, to_numpy(value.dtype), tuple(value.shape), None)
        trace.inputs[key] = node
        trace.input_values[key] = value.detach().cpu().numpy().copy()
        return TracedTensor(value.detach().cpu(), node)
    array = np.ndarray.view(value, np.ndarray) if isinstance(value, np.ndarray) else np.asarray(value)
    check_graph_dtype(array, f"argument {key!r}")
    node = trace.add("input", (key,), None, array.dtype, array.shape, None)
    trace.inputs[key] = node
    trace.input_values[key] = _copy_array(array, copy=True)
    plain = _copy_array(array, copy=True)
    traced = np.ndarray.view(plain, TracedNpArray)
    traced._lp_node = node
    traced._lp_plain = plain  # the same memory, plain: what NumPy computes on
    traced._lp_scalar = not isinstance(value, np.ndarray)  # a NumPy scalar or Python number
    if scalar_args.is_python_number(value):
        return scalar_args.weaken(trace, traced, value)
    return traced


def _check_unwritten(trace, key, traced):
    """An argument written in place: NumPy changed the caller's array; a graph cannot.

    (Also the case ``f(z, z)`` with one parameter updated in place, where NumPy's
    second argument would see the write.) Refused at the line of the last write.
    """
    if not isinstance(traced, TracedNpArray) or traced._lp_version == 0:
        return
    loc = traced._lp_node.loc if traced._lp_node is not None else None
    message = (f"input {key!r} is written in place at {record.format_loc(loc)}: NumPy changes the "
               f"caller's array, the graph returns new values and cannot; work on a copy "
               f"(x = x.copy(), or x = x + 1 instead of x += 1) and return what changed")
    record.report(trace, "side effect", f"in-place write to input {key!r}", loc, message,
                  EscapeError, EscapeWarning)


def _output_node(trace, key, value, loc=None):
    from .torch_interop import TracedTensor

    if isinstance(value, TracedTensor):
        return value._lp_node
    if isinstance(value, TracedNpArray):
        return record.node_of_operand(trace, value, loc, f"output {key!r}")
    if _is_tensor(value):
        return value.detach().cpu().numpy().copy()
    # a plain array computed from the inputs lost its trace on the way (another library, a C
    # extension, a frozen lookup); a deliberate constant is better returned outside the function
    # (a problem leapp.compile refuses in strict mode; the runtime-only harness only warns)
    trace.problems.append(Problem("frozen", f"output {key!r}", loc, record.constant_output_message(key, loc)))
    record.constant_output(trace, key, loc)
    return _copy_array(value, copy=True)
