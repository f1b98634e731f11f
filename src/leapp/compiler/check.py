"""The differential check ``leapp.compile`` runs after every trace, on by default.

Tracing sees what passes through leapp's hooks; code that does not (C code in
another library reading a traced buffer, ``.flat``, a value frozen on the
way) leaves a graph that agrees with NumPy on the example and on nothing else.
So whatever the mechanism, the graph is run against the user's own function on
a few inputs made from the example (redrawn in its range, sign-flipped, zeros;
same dtypes and shapes), and any disagreement refuses the graph.

On a mismatch, the function is traced again on the input that failed and both
graphs are run on it node by node: the first recorded node whose value departs
is named with its source line (a constant frozen from the input, the usual
culprit, is named with where it was frozen from).
"""

from __future__ import annotations

import inspect
import itertools
import sys
import threading
import warnings
from types import FrameType
from typing import Any

import numpy as np
import torch

from ..errors import ReductionOrderWarning, RoundingWarning
from ..runtime import loops
from ..runtime.build import SINGULAR_TO_PRECISION, condition_number, square_matrix
from ..runtime.dtypes import tensor_to_numpy
from ..runtime.ir import Node, _is_internal, format_loc
from ..runtime.session_graph import _ACCUMULATING, _close, validate_samples
from ..runtime.tracing import (
    align,
    flatten_inputs,
    output_structure,
    replace_leaves,
    trace_function,
)
from ..table.guards import GUARDED_LINALG
from . import samples, scalar_inputs, sides

_RTOL, _ATOL = inspect.signature(validate_samples).parameters["rtol"].default, \
    inspect.signature(validate_samples).parameters["atol"].default  # validate_samples' own
DEFAULT_SAMPLES = 3  # redrawn, sign-flipped, zeros: leapp.compile(check=N) changes the count


def generated(args, kwargs, n, seed):
    """``n`` (args, kwargs) made from the example: redrawn, negated, zeros, then more redraws."""
    rng = _seeded(seed)
    makers = [lambda v: samples.perturb(v, rng), lambda v: samples.map_arrays(v, lambda a: _negated(a, rng)),
              lambda v: samples.map_arrays(v, lambda a: _zeros(a, rng))]
    out = []
    for i in range(n):
        make = makers[i] if i < len(makers) else makers[0]
        out.append((make(args), make(kwargs)))
    return out


class _Generators(threading.local):
    def __init__(self):
        self.by_seed = {}


_generators = _Generators()


def _seeded(seed):
    """``np.random.default_rng(seed)``, as freshly seeded, without seeding (30 µs, a tenth of making
    the check's inputs): each thread keeps one per seed and rewinds it to its first state."""
    by_seed = _generators.by_seed
    hit = by_seed.get(seed)
    if hit is None:
        if len(by_seed) >= 64:
            by_seed.clear()
        rng = np.random.default_rng(seed)
        hit = by_seed[seed] = (rng, rng.bit_generator.state)
    rng, first = hit
    rng.bit_generator.state = first
    return rng


def _negated(a, rng):
    kind = a.dtype.kind
    if kind == "b":  # out=: a 0-d mask stays an array (~a is a NumPy bool, a scalar input)
        return np.logical_not(a, out=np.empty_like(a))
    if kind in "fc":  # out=: a 0-d array stays an array
        return np.negative(a, out=np.empty_like(a))
    if kind == "i":
        with np.errstate(over="ignore"):
            return np.negative(a, out=np.empty_like(a))
    return samples.perturb(a, rng)


def _zeros(a, rng):
    return np.zeros_like(a) if a.dtype.kind in "biufc" else a.copy()


def run(cf, graph, args, kwargs, n, stack=None) -> tuple[int, list[str], list[str]]:
    """Compare ``graph`` with ``cf.fn`` on ``n`` generated inputs: (inputs compared, problems,
    inputs set aside and why: a solver's matrix singular or ill-conditioned to its dtype's
    precision, ``_singular_for_its_dtype`` and ``_ill_conditioned``)."""
    # one warnings/errstate context for every run (one per run was a tenth of the check's overhead)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if _agrees_stacked(cf, graph, args, kwargs, n, seed=len(cf._graphs), stack=stack):
            return n, [], []
    tries = scalar_inputs.vary(generated(args, kwargs, n, seed=len(cf._graphs)), graph, len(cf._graphs))
    tries += sides.both_sides(cf, args, kwargs, tries)  # inputs on the sides of converted tests not taken
    set_aside: list[str] = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        compared, other = _expected(cf, graph, tries)
        agrees = bool(compared) and other is None and _agrees(graph.node, compared)
        validation = None if agrees or other is not None or not compared else \
            validate_samples(graph.node, [(i, o) for _, i, o in compared])
        culprit = None
        while validation is not None and not validation.ok:
            # an input whose matrix is ill-conditioned to its dtype's precision is set aside: there
            # NumPy's answer and the graph's are both rounding, and neither is the graph's fault
            index, key, err = validation.failures[0]
            (f_args, f_kwargs), inputs, _ = compared[index]
            if key == "*":
                why = _singular_for_its_dtype(cf, graph, f_args, f_kwargs, inputs) if "LinAlgError" in str(err) else None
            else:
                culprit = _first_departure(cf, graph, f_args, f_kwargs, inputs)
                why = culprit if isinstance(culprit, IllConditioned) else None
            if why is None:
                break
            culprit = None
            set_aside.append(f"a generated input ({_describe_input(f_args, f_kwargs)}): {why}")
            del compared[index]
            validation = validate_samples(graph.node, [(i, o) for _, i, o in compared]) if compared else None
    if other is not None:
        return len(compared) + 1, [_structure_message(cf, graph, *other)], set_aside
    if validation is None or validation.ok:
        return len(compared), [], set_aside
    index = validation.failures[0][0]
    (f_args, f_kwargs), inputs, _ = compared[index]
    message = _mismatch_message(cf, graph, validation, f_args, f_kwargs, inputs, culprit)
    return len(compared), [message] if message is not None else [], set_aside


def _singular_for_its_dtype(cf, graph, args, kwargs, inputs) -> str | None:
    """Where the graph raised LinAlgError on an input NumPy returned a value for: which call was
    given a matrix singular to its dtype's precision (a condition number, in float64, times eps of
    at least ``build.SINGULAR_TO_PRECISION``), or None. Both answers there are rounding: NumPy's LAPACK went on with a pivot
    that rounding left nonzero and returned what it computed, torch's stopped; no graph is wrong
    for not reproducing that, so the input is set aside (and said so) rather than refused.

    The graph runs node by node up to the call that raised; the function is traced again on the
    input, keeping NumPy's values, and the matrix the graph gave that call must be NumPy's (to the
    check's tolerance): a graph that computed a wrong, singular matrix is not excused."""
    gm = graph.graph_module
    values = _node_values(gm, graph.node, inputs)
    raised = next((n for n in gm.graph.nodes if n.op == "call_function" and n.name not in values), None)
    if raised is None or raised.meta.get("leapp_call") not in GUARDED_LINALG:
        return None
    key = (raised.meta.get("leapp_call"), raised.meta.get("leapp_source"))
    result = next((m for m in gm.graph.nodes if "leapp_node" in m.meta
                   and (m.meta.get("leapp_call"), m.meta.get("leapp_source")) == key), None)
    got = _matrix_operand(raised, values)
    try:
        again = _retrace(cf, args, kwargs)
    except Exception:
        return None
    call = next((t for t in again.trace.nodes if result is not None and t.index == result.meta["leapp_node"]), None)
    operand = call.args[0] if call is not None and call.args else None
    want = again.values.get(operand.index) if isinstance(operand, Node) else operand
    if got is None or want is None or np.shape(want) != got.shape or not np.isfinite(got).all():
        return None  # a matrix holding inf or NaN is no matter of precision (docs/limitations.md)
    want = np.asarray(want)
    if want.dtype.kind not in "fc" or not _close(got.astype(want.dtype), want, _RTOL, _ATOL):
        return None
    cond = condition_number(got)
    if cond * float(np.finfo(want.dtype).eps) < SINGULAR_TO_PRECISION:
        return None
    return (f"{key[0]} at {_where(raised)} was given a matrix singular to {want.dtype} precision "
            f"(condition number {cond:.1e}; NumPy's own matrix there): NumPy's LAPACK returned a value, "
            f"torch's found the matrix singular")


def explain_self_check(cf, graph, args, kwargs) -> tuple[type[Warning] | None, str] | None:
    """The graph does not reproduce its own traced sample: say why from the first value that
    departs. ``(warning category, text)`` when that departure is rounding alone (an accumulation's
    order, a transcendental's last bits) that later calls magnify: warned, not refused; ``(None,
    text)`` for a departure leapp documents (a transform fed inf or NaN): refused with that text;
    None: unexplained, refused as the self-check says."""
    names = {path: name for path, name in graph.traced.input_paths}
    inputs = {names[path]: value for path, value in flatten_inputs(args, kwargs) if path in names}
    culprit = _first_departure(cf, graph, args, kwargs, inputs)
    if isinstance(culprit, Reordered):
        return ReductionOrderWarning, culprit
    if isinstance(culprit, Rounded):
        return RoundingWarning, culprit
    if isinstance(culprit, NonFinite):
        return None, culprit
    if isinstance(culprit, IllConditioned):
        return None, culprit + ". Trace on an example whose matrix is well-conditioned"
    return None


def _expected(cf, graph, tries):
    """(compared, other): per try the function ran on, ((args, kwargs), inputs by name, NumPy's
    outputs by name); ``other`` is (args, kwargs, structure) of the first try whose result had
    another structure than the trace's, else None. Nothing is compared when an argument cannot be
    copied (the function could change it)."""
    names = {path: name for path, name in graph.traced.input_paths}
    reference = loops.reference(cf)  # a bounded `while` stops at its bound there
    compared: list[Any] = []
    for t_args, t_kwargs in tries:
        try:
            call_args, call_kwargs = _copied((t_args, t_kwargs))
        except Exception:
            return [], None
        try:
            result = reference(*call_args, **call_kwargs)
        except Exception:  # not an input this function takes (a singular matrix, an index range)
            continue
        expected = align(result, graph.traced.output_spec)
        spec, leaves = output_structure(expected)
        if spec != graph.traced.output_spec:
            return compared, (t_args, t_kwargs, spec)
        inputs = {names[path]: value for path, value in flatten_inputs(t_args, t_kwargs) if path in names}
        compared.append(((t_args, t_kwargs), inputs, {k: np.asarray(v) for k, v in leaves.items()}))
    return compared, None


class Stack:
    """The check's generated inputs and the example stacked along the rows every argument shares
    (``_stacks``), per argument path: the graph's copy and NumPy's. Made before the trace
    (``stack_for``) so that the lowering's own run of the graph runs on it (``build.run_stacked``),
    and the check takes those outputs (``CompiledNode.take_stacked``) rather than running the
    graph again."""

    __slots__ = ("n", "seed", "rows", "for_graph", "for_numpy")

    def __init__(self, n, seed, rows, for_graph, for_numpy):
        self.n, self.seed, self.rows = n, seed, rows
        self.for_graph, self.for_numpy = for_graph, for_numpy


def stack_for(cf, args, kwargs, n, seed) -> Stack | None:
    """The ``Stack`` of ``n`` inputs generated from ``args``/``kwargs`` (seeded by ``seed``), or
    None where the check runs its inputs one at a time (``_agrees_stacked`` says when)."""
    if n < 2 or _converts(cf):
        return None
    leaves = _block_leaves(args, kwargs)
    if leaves is None:
        return None
    arrays = [(path, a) for path, a in leaves if type(a) is np.ndarray]
    if not arrays or any(not a.ndim or a.shape[0] != arrays[0][1].shape[0] for _, a in arrays):
        return None
    rows = arrays[0][1].shape[0]
    if not rows:
        return None
    paths = [path for path, _ in arrays]
    for_graph, for_numpy = _stacks([a for _, a in arrays], n, _seeded(seed))
    return Stack(n, seed, rows, dict(zip(paths, for_graph, strict=True)), dict(zip(paths, for_numpy, strict=True)))


def _agrees_stacked(cf, graph, args, kwargs, n, seed, stack=None) -> bool:
    """Whether the graph agrees with NumPy on ``n`` inputs generated as ``generated`` makes them
    (redrawn, negated, zeros, more redraws), stacked along the leading axis every argument shares
    (a batch of rows), each run once on the stack: one NumPy run and one graph run in place of one
    of each per input, most of the check's cost on a small batch. The graph's run is the one the
    lowering made on ``stack`` where it did (``stack_for``, before the trace), else its own.

    The example itself is the stack's last block, and NumPy's rows there must be the traced
    outputs: a function that mixes rows (a mean over the batch, a norm of the whole array) fails
    that, and so does one whose arguments share a first size by chance (a (3,) vector beside a
    (3, 3) matrix), so the stack stands for the inputs run alone only where NumPy treats rows
    apart. Anything else (an argument that is not a plain array, a scalar input, a graph that
    fixes its batch size or mixes rows, a converted branch, whose sides are counted per input, a
    mismatch) returns False: the inputs then run one at a time, which also name what departs. A
    graph that froze a value from the example cannot pass: its blocks would have to equal NumPy's
    for inputs it never saw."""
    if stack is None or stack.n != n or stack.seed != seed:
        stack = stack_for(cf, args, kwargs, n, seed)
    if stack is None or _converts(cf):  # a library's branch converted while tracing
        return False
    node = graph.node
    by_name = {name: path for path, name in graph.traced.input_paths}
    if set(by_name) != set(node.input_names) or any(by_name[name] not in stack.for_graph for name in node.input_names):
        return False  # a scalar input
    rows = stack.rows
    total = rows * (n + 1)
    try:
        got = node.take_stacked(stack)
        if got is None:
            run, _ = node.fx_forward()
            tensors = [torch.from_numpy(stack.for_graph[by_name[name]]) for name in node.input_names]
            with torch.no_grad():
                got = run(*tensors)
        # NumPy's run on arrays of its own: the graph's outputs may be views of its inputs
        call_args, call_kwargs = replace_leaves(args, kwargs, stack.for_numpy)
        result = loops.reference(cf)(*call_args, **call_kwargs)
        spec, outputs = output_structure(align(result, graph.traced.output_spec))
        if spec != graph.traced.output_spec:
            return False
        traced = graph.traced.trace.output_values
        for key in node.output_names:
            want, value = np.asarray(outputs[key]), got[key]
            if want.ndim == 0 or want.shape[0] != total or not isinstance(value, torch.Tensor) \
                    or not _close(want[total - rows:], traced[key], _RTOL, _ATOL) \
                    or not _close(tensor_to_numpy(value, node.output_dtypes[key]), want, _RTOL, _ATOL):
                return False
    except Exception:
        return False
    return True


# Float dtypes whose arrays' redraws can share one call of the generator (drawn in float64).
_DRAWN_TOGETHER = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_layouts: dict = {}  # (sizes, n) -> _layout's index; a compiled function's signatures repeat


def _stacks(arrays, n, rng) -> tuple[list, list]:
    """Two copies (the graph's and NumPy's) of, per array of ``arrays``, its ``n`` generated values
    as ``generated`` makes them (the same draws in the same order: each input's arrays in turn;
    redrawn, negated, zeros, more redraws) followed by the array itself, stacked along the first
    axis.

    Where the arrays are non-empty floats of one dtype (the usual case), each block is made for
    all arrays at once, in a row of one buffer (a redrawn input's arrays by one call of the
    generator, with each array's bounds spread over its elements: ``samples._uniform``'s formula,
    so the values one call per array draws, bit for bit), and one gather lays the rows out
    array after array; a few calls in all, where one per array and block were most of the check's
    bookkeeping on a small batch."""
    dtype = arrays[0].dtype
    if dtype not in _DRAWN_TOGETHER or any(a.dtype != dtype or not a.size for a in arrays):
        stacks = _stacked_each(arrays, n, rng)
        return stacks, [s.copy() for s in stacks]
    sizes = tuple(a.size for a in arrays)
    flat = np.concatenate([a.ravel() for a in arrays])
    starts = [0, *itertools.accumulate(sizes[:-1])]
    ranges = [samples.draw_range(a, lo, hi) for a, lo, hi in
              zip(arrays, np.minimum.reduceat(flat, starts).tolist(),
                  np.maximum.reduceat(flat, starts).tolist(), strict=True)]
    lows = spans = None
    rows = np.empty((n + 1, flat.size), dtype)
    for i in range(n):
        if i == 1:
            np.negative(flat, out=rows[1])
        elif i == 2:
            rows[2] = 0
        else:
            if lows is None:
                bounds = np.repeat(np.array(ranges), sizes, axis=0)
                lows, spans = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
            rows[i] = lows + spans * rng.random(flat.size)  # samples._uniform's draw, per array
    rows[n] = flat
    order = _layout(sizes, n)
    made = []
    for _ in range(2):
        laid = np.take(rows.reshape(-1), order)
        made.append([laid[(n + 1) * start:(n + 1) * (start + a.size)].reshape(a.shape[0] * (n + 1), *a.shape[1:])
                     for a, start in zip(arrays, starts, strict=True)])
    return made[0], made[1]


def _layout(sizes, n):
    """The index into ``(n + 1, sum(sizes))`` rows (block after block, arrays side by side) that
    lays them out array after array, each array's blocks one after the other."""
    key = (sizes, n)
    order = _layouts.get(key)
    if order is None:
        total, parts, start = sum(sizes), [], 0
        for size in sizes:
            parts.append((np.arange(n + 1)[:, None] * total + start + np.arange(size)).reshape(-1))
            start += size
        if len(_layouts) >= 64:
            _layouts.clear()
        order = _layouts[key] = np.concatenate(parts)
    return order


def _stacked_each(arrays, n, rng) -> list:
    """``_stacks``' values made array by array (arrays of several dtypes, an empty one), each
    block written in place; block after block, as ``generated`` draws them."""
    stacks = [np.empty((a.shape[0] * (n + 1), *a.shape[1:]), a.dtype) for a in arrays]
    for i in range(n):
        for a, stack in zip(arrays, stacks, strict=True):
            rows, kind = a.shape[0], a.dtype.kind
            block = stack[i * rows:(i + 1) * rows]
            if i == 1 and kind == "b":
                np.logical_not(a, out=block)
            elif i == 1 and kind in "fci":
                np.negative(a, out=block)  # an integer's minimum wraps, as _negated's does
            elif i == 1:
                block[...] = samples.perturb(a, rng)
            elif i == 2 and kind in "biufc":
                block[...] = 0
            elif i == 2:
                block[...] = a
            else:
                block[...] = samples.redrawn(a, rng)
    for a, stack in zip(arrays, stacks, strict=True):
        stack[n * a.shape[0]:] = a
    return stacks


def _converts(cf) -> bool:
    """Whether ``cf`` converts a branch, its own or a library's: the check counts the sides its
    tests take per try, which a stack of tries would decide together."""
    source = getattr(cf, "source", None)
    if source is not None and any(b.converted for b in source.branches):
        return True
    conversions = getattr(getattr(cf, "_probe", None), "library", None)
    return conversions is not None and bool(conversions.wanted)


_PLAIN_SCALARS = (int, float, bool, complex, str, type(None))


def _block_leaves(args, kwargs) -> list | None:
    """(path, leaf) of a call's arguments, with ``tracing.flatten_inputs``' paths: arrays, and
    Python numbers, strings and None (which must then be equal in every block); None when an
    argument holds anything else (an object, a NumPy scalar: not stacked)."""
    leaves: list = []
    if all(_plain_leaves(a, ("args", i), leaves) for i, a in enumerate(args)) and \
            all(_plain_leaves(v, ("kwargs", k), leaves) for k, v in kwargs.items()):
        return leaves
    return None


def _plain_leaves(value, path, leaves) -> bool:
    t = type(value)
    if t is np.ndarray or t in _PLAIN_SCALARS:
        leaves.append((path, value))
        return True
    if t is tuple or t is list:
        return all(_plain_leaves(v, (*path, i), leaves) for i, v in enumerate(value))
    if t is dict:
        return all(_plain_leaves(v, (*path, k), leaves) for k, v in value.items())
    return False


def _copied(value):
    """``samples.isolated(value)``: a copy the function may change without touching the generated input."""
    return samples.isolated(value)


def _agrees(node, compared) -> bool:
    """Whether the graph agrees with NumPy on every compared input, as ``validate_samples`` judges
    (the same tolerance), without its error statistics: those are made only when it does not."""
    if _agrees_batched(node, compared):
        return True
    for _, inputs, outputs in compared:
        try:
            got = node(**inputs)
        except Exception:
            return False
        for key in node.output_names:
            if not _close(got[key], outputs[key], _RTOL, _ATOL):
                return False
    return True


def _agrees_batched(node, compared) -> bool:
    """The graph run once on the compared inputs stacked along a leading axis they and NumPy's
    outputs share (a batch of rows), each block of rows compared with NumPy's output for its input.

    Each graph run costs torch's per-op overhead, most of the check on a small batch. True only
    when every block agrees; anything else (no shared leading axis, a graph that fixes its batch
    size or mixes rows, a mismatch) leaves the judgement to the runs one input at a time, which
    also name what departs. A graph that mixes rows cannot pass by accident: its blocks would
    have to equal NumPy's outputs for inputs it never ran on alone."""
    if len(compared) < 2:
        return False
    first = compared[0]
    rows = None
    ndarray = np.ndarray
    for _, inputs, outputs in compared:
        for a in (*inputs.values(), *outputs.values()):
            if type(a) is not ndarray or not a.ndim or (rows is not None and a.shape[0] != rows):
                return False
            rows = a.shape[0]
        if inputs.keys() != first[1].keys() or outputs.keys() != first[2].keys():
            return False
    if first[1].keys() != set(node.input_names):
        return False
    try:
        # the graph's code on tensors, as a call plan runs it, without a plan for this one layout
        run, _ = node.fx_forward()
        tensors = [torch.from_numpy(np.concatenate([c[1][name] for c in compared])) for name in node.input_names]
        with torch.no_grad():
            got = run(*tensors)
        for key in node.output_names:
            value = got[key]
            if rows is None or not isinstance(value, torch.Tensor) or tuple(value.shape[:1]) != (rows * len(compared),):
                return False
            # elementwise, so one comparison with NumPy's outputs stacked is each block's
            if not _close(tensor_to_numpy(value, node.output_dtypes[key]),
                          np.concatenate([c[2][key] for c in compared]), _RTOL, _ATOL):
                return False
    except Exception:
        return False
    return True


def _describe_input(args, kwargs) -> str:
    kinds = []
    for _path, v in flatten_inputs(args, kwargs):
        a = np.asarray(v)
        if a.size and a.dtype.kind in "biufc" and not a.any():
            kinds.append("zeros")
        else:
            kinds.append(np.array2string(a.ravel()[:4], precision=3, separator=", ")[:40])
    return ", ".join(kinds)


def _structure_message(cf, graph, args, kwargs, spec) -> str:
    head = (f"leapp.compile({cf.name}): on a generated input ({_describe_input(args, kwargs)}) the "
            f"function returned another structure than when traced: its control flow or output sizes "
            f"depend on the data, so no single graph is exact")
    where = _divergence(cf, graph, args, kwargs)
    if where:
        return head + f"; the two runs part at {where}"
    frozen = _frozen_python_output(graph.traced.output_spec, spec)
    if frozen is not None:
        code = getattr(cf.fn, "__code__", None)
        line = f" (returned by {code.co_filename}:{code.co_firstlineno})" if code else ""
        return (f"leapp.compile({cf.name}): output {frozen[0]} is a Python value computed from the "
                f"data outside the graph{line}: {frozen[1]!r} when traced, {frozen[2]!r} on a generated "
                f"input ({_describe_input(args, kwargs)}). NumPy scalars unpacked from an array "
                f"(a, b = x.flat, float(x[0])) and math on them leave the graph; keep the values in "
                f"arrays (x[0], np.arctan2(...))")
    return head


def _retrace(cf, args, kwargs):
    """The function traced again on ``args``, quietly, keeping NumPy's value of every node."""
    names = list(cf._signature.parameters) if cf._signature else []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return trace_function(cf._traceable, *samples.isolated((args, kwargs)), names=names,
                              strict=False, name=cf.name, keep_values=True,
                              constants=scalar_inputs.constants(cf, args, kwargs))


def _frozen_python_output(traced, now, path="output"):
    """(path, traced value, value now) of the first Python-number output that differs."""
    if traced[0] == "const" and now[0] == "const":
        return None if samples.exact(traced[1]) == samples.exact(now[1]) else (path, traced[1], now[1])
    if traced[0] != now[0]:
        return None
    if traced[0] == "dict" and traced[1].keys() == now[1].keys():
        pairs = [(f"{path}[{k!r}]", traced[1][k], now[1][k]) for k in traced[1]]
    elif traced[0] in ("list", "tuple", "namedtuple") and len(traced[2]) == len(now[2]):
        pairs = [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(traced[2], now[2], strict=True))]
    else:
        return None
    for where, a, b in pairs:
        hit = _frozen_python_output(a, b, where)
        if hit is not None:
            return hit
    return None


def _divergence(cf, graph, args, kwargs):
    """Where a trace on ``args`` first records something else than the graph's trace did."""
    try:
        again = _retrace(cf, args, kwargs)
    except Exception:
        return None
    mine, theirs = graph.traced.trace.nodes, again.trace.nodes
    for a, b in zip(mine, theirs, strict=False):
        if (a.op, a.loc, a.shape) != (b.op, b.loc, b.shape):
            return f"{format_loc(a.loc)} ({a.op})"
    if len(mine) != len(theirs):
        shorter = mine if len(mine) < len(theirs) else theirs
        last = (theirs if shorter is mine else mine)[len(shorter)]
        return f"{format_loc(last.loc)} ({last.op})"
    return None


def _mismatch_message(cf, graph, validation, args, kwargs, inputs, culprit=None) -> str | None:
    _, key, err = validation.failures[0]
    head = (f"leapp.compile({cf.name}): the graph disagrees with NumPy on a generated input "
            f"({_describe_input(args, kwargs)}): output {key!r}, error {err}")
    if culprit is None:
        culprit = _first_departure(cf, graph, args, kwargs, inputs)
    if isinstance(culprit, (Reordered, Rounded)):
        category = ReductionOrderWarning if isinstance(culprit, Reordered) else RoundingWarning
        warnings.warn(f"{head}. {culprit}; see docs/limitations.md", category, stacklevel=user_stacklevel())
        return None
    return head + ". " + culprit


def user_stacklevel() -> int:
    """``warnings.warn``'s stacklevel, from its caller, of the first frame outside leapp: the
    user's call of the compiled function, however many of leapp's frames lie between."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and _is_internal(frame.f_code):
        frame, level = frame.f_back, level + 1
    return level


def _first_departure(cf, graph, args, kwargs, inputs) -> str:
    """Trace again on the failing input, keeping NumPy's value of every node, run the graph on it
    node by node, and name the first node whose value departs from NumPy's."""
    try:
        again = _retrace(cf, args, kwargs)
    except Exception as exc:
        return (f"Tracing again on that input failed ({type(exc).__name__}: {exc}); the graph took a "
                f"path or froze a value that only fits the example")
    mine, theirs = graph.traced.trace.nodes, again.trace.nodes
    for a, b in zip(mine, theirs, strict=False):
        if (a.op, a.loc, a.shape) != (b.op, b.loc, b.shape):
            return (f"The function took another path on that input, first at {format_loc(a.loc)} "
                    f"({a.op}): its control flow or sizes depend on the data")
    values = _node_values(graph.graph_module, graph.node, inputs)
    reordered = set()  # float accumulations that differ from NumPy's bits, within what order explains
    rounded = {}  # float values that differ from NumPy's bits by a few ulps: fx node -> its call
    exact = set()  # nodes whose value is NumPy's, bit for bit
    for n in graph.graph_module.graph.nodes:
        index = n.meta.get("leapp_node")
        got = values.get(n.name)
        want = again.values.get(index)
        if index is None or want is None or not isinstance(got, torch.Tensor):
            continue
        got = got.detach().cpu().numpy()
        want = np.asarray(want)
        same_shape = got.shape == want.shape
        if same_shape and np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"):
            exact.add(n)
            continue
        if same_shape and _within_order_bound(n, got, want, values):
            reordered.add(n)
        elif same_shape and _within_ulps(n, got, want, exact):
            rounded[n] = n.meta.get("leapp_call", n.target)
        if same_shape and _close(got.astype(want.dtype, copy=False), want, 1e-5, 1e-6):
            continue
        if n.op == "get_attr":
            return _frozen(n)
        fed = _nonfinite_input(n, values)
        if fed is not None:
            return fed
        ill = _ill_conditioned(n, got, want, values) if same_shape else None
        if ill is not None:
            return ill
        first = next((m for m in reordered if m is n or _depends_on(n, {m})), None)
        if first is not None:
            return Reordered(f"The first value that departs is {first.meta.get('leapp_call', first.target)} "
                             f"at {_where(first)}, a float accumulation, by no more than its order of "
                             f"summation explains (torch adds in another order than NumPy)")
        first = next((m for m in rounded if m is n or _depends_on(n, {m})), None)
        if first is not None:
            return Rounded(f"The first value that departs is {rounded[first]} at {_where(first)}, by a "
                           f"few units in the last place: torch computes it with another math "
                           f"library than NumPy, and what follows magnifies the difference at this "
                           f"input (ill-conditioned)")
        return (f"First departure: {n.meta.get('leapp_call', n.target)} at {_where(n)}: its operands "
                f"agree with NumPy on that input but its result does not. Either code leapp does not "
                f"see wrote into an operand's memory (a library's compiled code filling a buffer), "
                f"or leapp's torch form of the call is wrong there (then please report it with "
                f"cf.report())")
    return ("No recorded node departs from NumPy's value on that input (each agrees within 1e-5), so the "
            "difference is made outside the ops leapp recorded: a write in place that NumPy shows "
            "through another name (an alias or view of the written array, a NumPy scalar that became "
            "an array), a value kept between calls, or, where the error is at rounding level, many "
            "float sums accumulated in another order (docs/limitations.md)")


# Calls whose graph makes a value fed inf or NaN NaN throughout (docs/limitations.md): what NumPy
# gives there is its own algorithm's (pocketfft's, its LAPACK build's), which no graph reproduces.
_NONFINITE_IS_NAN = {
    **{"numpy.fft." + f: ("transforms values", "such a transform", "its FFT algorithm's own pattern of inf and NaN",
                          "whose transformed values are finite") for f in ("fft", "ifft", "rfft", "irfft")},
    **{"numpy.linalg." + f: ("is given a matrix", "every output for such a matrix",
                             "what its LAPACK build's pivoting and kernels make of it (finite values next to NaN)",
                             "whose matrices are finite")
       for f in ("inv", "solve", "det", "slogdet", "pinv", "cholesky", "qr", "matrix_power")},
}


def _nonfinite_input(n, values) -> str | None:
    """What to say when ``n`` belongs to a call that makes inf or NaN NaN throughout and an operand
    of that call holds inf or NaN (the nodes of one call share its ``leapp_call`` and source)."""
    call = n.meta.get("leapp_call") or ""
    said = _NONFINITE_IS_NAN.get(call)
    if said is None:
        return None
    key = (call, n.meta.get("leapp_source"))
    seen, stack, operands = set(), [n], []
    while stack:  # up through the call's own nodes to the values it was given
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        if m is not n and (m.meta.get("leapp_call"), m.meta.get("leapp_source")) != key:
            operands.append(m)
        else:
            stack.extend(m.all_input_nodes)
    fed = [values.get(m.name) for m in operands]
    if any(isinstance(v, torch.Tensor) and v.is_floating_point() and not bool(torch.isfinite(v).all())
           for v in fed):
        what, nan, numpy_gives, compile_on = said
        return NonFinite(f"{call} at {_where(n)} {what} holding inf or NaN: the graph makes {nan} NaN "
                         f"throughout, where NumPy gives {numpy_gives} (docs/limitations.md). Compile on "
                         f"an example {compile_on}")
    return None


class NonFinite(str):
    """What _first_departure says when the first value that departs is a documented non-finite rule."""


class IllConditioned(str):
    """What _first_departure says when the first value that departs is a solver's result on a matrix
    so ill-conditioned for its dtype that rounding alone explains the difference."""


# Calls whose result moves with rounding by up to (condition number x eps) relative: inv(m) and
# solve(m, b) by a backward-stable LAPACK, and the calls made of them.
_CONDITIONED = frozenset({"numpy.linalg.inv", "numpy.linalg.solve", "numpy.linalg.pinv",
                          "numpy.linalg.cholesky", "numpy.linalg.matrix_power"})
_COND_SLACK = 64  # LAPACK's backward error bound is a small multiple of n * eps


def _ill_conditioned(n, got, want, values) -> str | None:
    """An ``IllConditioned`` reason when ``n`` belongs to a solver (``_CONDITIONED``) given a matrix
    whose condition number, times its dtype's eps, bounds the relative difference between the
    graph's ``got`` and NumPy's ``want``: two LAPACKs, each right to that bound, part there."""
    call = n.meta.get("leapp_call") or ""
    if call not in _CONDITIONED or want.dtype.kind not in "fc":
        return None
    matrix = _matrix_operand(n, values)
    if matrix is None or not np.array_equal(np.isnan(got), np.isnan(want)):  # a NaN is no rounding
        return None
    cond = condition_number(matrix)
    with np.errstate(all="ignore"):
        scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0))
        err = float(np.nanmax(_abs_error(got, want), initial=0.0))
    eps = float(np.finfo(want.dtype).eps)
    if not scale or not err <= _COND_SLACK * cond * eps * scale:
        return None
    return IllConditioned(
        f"The first value that departs is {call} at {_where(n)}, given a matrix of condition number "
        f"{cond:.1e} in {want.dtype}: rounding alone moves its result by up to {min(cond * eps, 1.0):.0e} "
        f"relative, and torch's LAPACK rounds otherwise than NumPy's (they differ by {err / scale:.1e} "
        f"relative), so no graph can reproduce NumPy's value there")


def _matrix_operand(n, values):
    """The square float matrix (as float64 or complex128) a solver's call was given: of the values
    fed into the call's nodes from outside it (``n`` and the nodes up from it that share its call
    and source line: a reshape the lowering made), the first, in graph and argument order."""
    key = (n.meta.get("leapp_call"), n.meta.get("leapp_source"))
    seen, stack, own = set(), [n], []
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        own.append(m)
        stack.extend(o for o in m.all_input_nodes if (o.meta.get("leapp_call"), o.meta.get("leapp_source")) == key)
    order = {m: i for i, m in enumerate(n.graph.nodes)}
    for m in sorted(own, key=order.__getitem__):
        for operand in m.all_input_nodes:
            if operand in seen:
                continue
            value = values.get(operand.name)
            if square_matrix(value):
                return value.detach().cpu().numpy().astype(np.complex128 if value.is_complex() else np.float64)
    return None


class Rounded(str):
    """What _first_departure says when the first value that departs does so by rounding alone."""


# Calls IEEE 754 rounds correctly: on operands equal to NumPy's, any difference is not rounding.
_CORRECTLY_ROUNDED = frozenset(
    "add subtract multiply divide true_divide negative positive absolute sqrt square fmod "
    "remainder floor ceil trunc rint minimum maximum fmin fmax clip where copy astype".split())
_ULPS = 4


def _within_ulps(n, got, want, exact) -> bool:
    """Whether ``got`` is within a few ulps of NumPy's ``want`` in a call that may round otherwise."""
    if want.dtype.kind not in "fc" or got.dtype != want.dtype:
        return False
    call = (n.meta.get("leapp_call") or "").removeprefix("ndarray.").removeprefix("numpy.")
    if call in _CORRECTLY_ROUNDED and all(m in exact for m in n.all_input_nodes):
        return False
    with np.errstate(all="ignore"):
        err = _abs_error(got, want)
        ulp = np.spacing(np.abs(want)).astype(np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    return bool(np.all((err <= _ULPS * ulp) | both_nan))


class Reordered(str):
    """What _first_departure says when the first node that departs is a float accumulation whose
    error is of the size summation order explains: not a wrong graph, so warned, not refused."""


_ORDER_EPS = 32  # eps * sum(|operands|): 20 is measured along a first axis of 1,000 rows


def _within_order_bound(n, got, want, values) -> bool:
    """Whether accumulating node ``n`` departs from NumPy by no more than summation order explains.

    The scale is taken from the graph's own values of ``n``'s operands (``values``, the run that gave
    ``got``), not from the retrace: a node the graph elided (a copy) keeps no NumPy value, and its
    operands agree with NumPy's to the tolerance anyway."""
    call = (n.meta.get("leapp_call") or "").removeprefix("ndarray.").removeprefix("numpy.")
    if call.removeprefix("linalg.") not in _ACCUMULATING or want.dtype.kind not in "fc":
        return False
    scale = 1.0
    for arg in n.all_input_nodes[:2]:
        value = values.get(arg.name)
        if not isinstance(value, torch.Tensor):
            return False
        scale *= float(np.sum(np.abs(value.detach().cpu().double().numpy())))
    eps = float(np.finfo(want.dtype).eps)
    with np.errstate(all="ignore"):
        err = _abs_error(got, want)
        # a product's rounding grows with its value, not with the sum of its operands
        bound = np.maximum(_ORDER_EPS * eps * scale + 1e-6, _ORDER_EPS * eps * np.abs(want).astype(np.float64))
    return bool(np.all((err <= bound) | (np.isnan(got) & np.isnan(want))))


def _abs_error(got, want):
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    return np.abs(got.astype(wide) - want.astype(wide))


def _depends_on(n, nodes) -> bool:
    if not nodes:
        return False
    seen, stack = set(), list(n.all_input_nodes)
    while stack:
        m = stack.pop()
        if m in nodes:
            return True
        if m not in seen:
            seen.add(m)
            stack.extend(m.all_input_nodes)
    return False


def _frozen(n) -> str:
    origin = n.meta.get("leapp_frozen_from")
    users = ", ".join(sorted({u.meta.get("leapp_source") or "?" for u in n.users})) or "?"
    if origin is not None:
        made = f" (made by {origin[0]} at {format_loc(origin[1])})"
    else:
        made = f" (first seen at {n.meta.get('leapp_source') or '?'})"
    return (f"First departure: a constant used at {users}{made} holds a value computed from the input "
            f"by code leapp cannot see (C code in another library reading the array's memory, .flat, "
            f"the buffer protocol), frozen at its trace-time value. Compute it with NumPy functions "
            f"leapp traces, or outside the compiled function")


def _where(n) -> str:
    return n.meta.get("leapp_source") or "?"


def _node_values(gm, node, inputs) -> dict:
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            values[n.name] = out
            return out

    ordered = [torch.as_tensor(np.ascontiguousarray(inputs[name])) for name in node.input_names
               if name in inputs]
    try:
        with torch.no_grad():
            Recorder(gm).run(*ordered)
    except Exception:
        pass
    return values
