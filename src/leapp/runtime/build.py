"""Lowering a recorded trace to a ``torch.fx.GraphModule``, once, iteratively.

Each node's adapter (``leapp.runtime.adapters``) writes ordinary torch code
against ``torch.fx.Proxy`` operands, so the graph records ``torch.clamp``,
``torch.cat``... Plain NumPy operands become ``get_attr`` constants named
``_tensor_constant<k>`` in order of first use: re-tracing the same code gives
byte-identical graphs.

After lowering, ``check_dtypes`` runs the graph on the traced sample and
compares every node's dtype and shape with what NumPy produced. A shape
mismatch is a leapp bug (``InternalError``); a dtype mismatch is repaired
with a cast and reported as a ``LeappInternalWarning`` so tests catch it.
"""

from __future__ import annotations

import keyword
import linecache
import math
import warnings
from typing import Any

import numpy as np
import torch
import torch.fx
from torch.fx.node import map_arg as _map_arg
from torch.fx.proxy import GraphAppendingTracer

from ..errors import InternalError, LeappInternalWarning, ProblemsError, UnsupportedArgumentError
from . import stale
from .adapters import ADAPTERS, generic_ufunc
from .dtypes import tensor_from_numpy, to_numpy, to_torch
from .ir import Node, format_loc


class Ctx:
    """What an adapter knows about the node it lowers (NumPy's dtype and shape)."""

    __slots__ = ("builder", "node", "dtype", "shape", "name")

    def __init__(self, builder, node):
        self.builder = builder
        self.node = node
        self.dtype = node.dtype
        self.shape = node.shape
        self.name = node.op

    @property
    def tdtype(self):
        return to_torch(self.dtype)

    def np_dtype(self, x):
        """NumPy's view of an operand's dtype: arrays by dtype, Python scalars weak (by type)."""
        if isinstance(x, torch.fx.Proxy):
            return x.node.meta["leapp_dtype"]
        if isinstance(x, bool):
            return np.dtype(bool)
        if isinstance(x, (int, float, complex)):
            return type(x)
        if isinstance(x, np.generic):
            return x.dtype
        if isinstance(x, (list, tuple)) and _holds_proxy(x):
            return np.result_type(*_item_dtypes(x))
        return np.asarray(x).dtype

    def ndim(self, x):
        return len(self.shape_of(x))

    def shape_of(self, x):
        if isinstance(x, torch.fx.Proxy):
            return tuple(x.node.meta["leapp_shape"])
        if isinstance(x, (list, tuple)) and x and _holds_proxy(x):  # [T[0][3], T[1][3], T[2][3]]
            return (len(x), *self.shape_of(x[0]))
        return np.shape(x)

    def cast(self, x, dtype):
        """``x`` at NumPy dtype ``dtype`` (a no-op when it already is; literals stay literals)."""
        dtype = np.dtype(dtype)
        if isinstance(x, torch.fx.Proxy):
            if x.node.meta.get("leapp_dtype") == dtype:
                return x
            shape = x.node.meta.get("leapp_shape")
            out = self.builder.emit("call_method", "to", (x, to_torch(dtype)))
            return self.mark(out, dtype, shape if shape is not None else self.shape)
        if isinstance(x, (bool, int, float, complex)):
            if dtype.kind == "b":
                return bool(x)
            if dtype.kind in "iu" and isinstance(x, bool):
                return int(x)
            if dtype.kind in "fc" and dtype.itemsize < (8 if dtype.kind == "f" else 16):
                # NumPy (NEP 50) rounds a Python number to the array's dtype first; torch keeps it
                # at its compute precision (float32 for float16 tensors): float16 * (1/255) differs
                if abs(x) < _FINITE_BELOW[dtype.itemsize]:
                    return np.asarray(x, dtype).item()
                with np.errstate(over="ignore"):  # past the dtype's range: inf, as in NumPy
                    return np.asarray(x, dtype).item()
            if dtype.kind == "f" and isinstance(x, (bool, int)):
                return float(x)
            return x
        return self.tensor(x, dtype)

    def tensor(self, x, dtype=None):
        """An operand as a graph tensor: proxies pass through, literals become constants."""
        if isinstance(x, torch.fx.Proxy):
            return x if dtype is None else self.cast(x, dtype)
        if isinstance(x, (list, tuple)) and _holds_proxy(x):
            # a sequence with traced items (np.hstack((v, (angle,)))): NumPy makes one array of it
            if dtype is None:
                dtype = np.result_type(*_item_dtypes(x))
            items = [self.tensor(v, dtype) for v in x]
            shape = (len(items), *items[0].node.meta.get("leapp_shape", ()))
            return self.mark(self.call(torch.stack, items), dtype, shape)
        value = np.asarray(x, dtype=dtype)
        return self.builder.constant(value)

    def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` recorded directly: the same graph as through Proxy, cheaper."""
        return self.builder.emit("call_function", fn, args, kwargs)

    def mark(self, proxy, dtype, shape):
        meta = proxy.node.meta
        meta.setdefault("leapp_dtype", np.dtype(dtype))
        meta.setdefault("leapp_shape", tuple(shape))
        return proxy

    def torch_dtype(self, dtype):
        return to_torch(dtype)


# Magnitudes that round to a finite value in a float of this many bytes (complex: per part), so
# the rounding needs no np.errstate (a context manager costs six times the rounding itself)
_FINITE_BELOW = {2: 65504.0, 4: 3.4e38, 8: 3.4e38}


def _holds_proxy(seq) -> bool:
    return any(isinstance(v, torch.fx.Proxy) or isinstance(v, (list, tuple)) and _holds_proxy(v) for v in seq)


def _item_dtypes(seq):
    for v in seq:
        if isinstance(v, torch.fx.Proxy):
            yield v.node.meta["leapp_dtype"]
        elif isinstance(v, (list, tuple)):
            yield from _item_dtypes(v)
        else:
            yield np.asarray(v).dtype


def _sub(value, env):
    """Replace Nodes in (nested) arguments by their lowered values."""
    if isinstance(value, Node):
        return env[value.index]
    if isinstance(value, list):
        return [_sub(v, env) for v in value]
    if isinstance(value, tuple):
        return tuple(_sub(v, env) for v in value)
    if isinstance(value, slice):
        return value
    if isinstance(value, dict):
        return {k: _sub(v, env) for k, v in value.items()}
    if isinstance(value, np.generic) and not isinstance(value, (np.datetime64, np.timedelta64)):
        return value.item()
    return value


def _children(value, out):
    if isinstance(value, Node):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _children(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _children(v, out)


def reachable(nodes, roots):
    """Indices of nodes the roots depend on (iterative: chains of any length)."""
    seen = set()
    stack = [r for r in roots if isinstance(r, Node)]
    while stack:
        node = stack.pop()
        if node.index in seen:
            continue
        seen.add(node.index)
        kids: list[Any] = []
        _children(node.args, kids)
        if node.kwargs:
            _children(node.kwargs, kids)
        stack.extend(k for k in kids if k.index not in seen)
    return seen


_LITERALS = frozenset({int, float, bool, str, type(None)})  # what create_arg passes through unchanged


class _Proxy(torch.fx.Proxy):
    """The proxies adapters compute with: a torch function called on one is recorded through
    ``Builder.emit`` (the node FX's own Proxy makes, with the same name, at a third of the cost:
    no tree walk to find the tracer, no second pass over the arguments). FX's special cases
    (script methods, higher-order operators with callables) never reach lowering's proxies."""

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        tracer = None
        for a in args or ():
            if isinstance(a, torch.fx.Proxy):
                tracer = a.tracer
                break
            if type(a) is list or type(a) is tuple:  # torch.cat([a, b]), torch.stack((a, b))
                tracer = next((v.tracer for v in a if isinstance(v, torch.fx.Proxy)), None)
                if tracer is not None:
                    break
        if type(tracer) is not _Tracer:  # a proxy only among the keywords, or deeper: FX finds it
            return super().__torch_function__(orig_method, types, args, kwargs)
        return tracer.builder.emit("call_function", orig_method, args, kwargs)


class _Tracer(GraphAppendingTracer):
    """Real tensors that reach an op (an adapter computed one eagerly) become constants."""

    def __init__(self, graph, builder):
        super().__init__(graph)
        self.builder = builder

    def proxy(self, node):
        return _Proxy(node, self)

    def create_arg(self, a):
        if isinstance(a, torch.Tensor) and not isinstance(a, torch.fx.Proxy):
            return self.builder.constant(a.detach().cpu().numpy()).node
        return super().create_arg(a)


# target -> the name torch.fx derives from it (``Graph._target_to_str``: its __name__ in snake case),
# which create_node would work out again for every node (a tenth of making a node)
_NAMES: dict = {}


class Builder:
    def __init__(self):
        self.root = torch.nn.Module()
        self.graph = torch.fx.Graph()
        self.tracer = _Tracer(self.graph, self)
        self.n_constants = 0

    def emit(self, op, target, args, kwargs=None):
        arg = self._arg
        # Created bare, operands set after: create_node scans the operands of a call for raw
        # SymInts with pytree (a sixth of lowering on a 100,000-op chain); leapp passes none.
        # (operands first: making one may add a constant's node, which must come before this one)
        args = tuple([arg(a) for a in args])
        kwargs = {k: arg(v) for k, v in kwargs.items()} if kwargs else None
        try:
            name = _NAMES.get(target)
            if name is None:
                name = self.graph._target_to_str(target)
                if len(_NAMES) < 4096:
                    _NAMES[target] = name
        except TypeError:  # an unhashable target: torch.fx names it
            name = None
        node = self.graph.create_node(op, target, name=name)
        node.args = args
        if kwargs:
            node.kwargs = kwargs
        return _Proxy(node, self.tracer)

    def _arg(self, a):
        t = type(a)
        if t is _Proxy:
            return a.node
        if t in _LITERALS:
            return a
        if isinstance(a, torch.fx.Proxy):
            return a.node
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(v) for v in a)
        return self.tracer.create_arg(a)

    def constant(self, value):
        name = f"_tensor_constant{self.n_constants}"
        self.n_constants += 1
        self.root.register_buffer(name, tensor_from_numpy(value))
        # Graph.get_attr without its checks of an owning module (this graph has none) and with
        # the node's name given: the name torch.fx derives from this target is the target itself
        proxy = _Proxy(self.graph.create_node("get_attr", name, name=name), self.tracer)
        proxy.node.meta["leapp_dtype"] = np.asarray(value).dtype
        proxy.node.meta["leapp_shape"] = tuple(np.shape(value))
        return proxy


class Lowered:
    """A lowered graph and the module holding its constants, before torch.fx writes forward().

    Writing and compiling forward() (``GraphModule.__init__`` -> ``recompile``)
    was 40% of lowering the seed example, whatever the graph's size, and
    lowering's checks never run it (``check_dtypes`` interprets the graph), so
    ``session_graph.CompiledNode`` makes the GraphModule when it is first asked
    for (``module()``): at the first call, export or read of ``graph_module``.
    """

    __slots__ = ("root", "graph", "class_name")

    def __init__(self, root, graph, class_name):
        self.root, self.graph, self.class_name = root, graph, class_name

    def module(self) -> torch.fx.GraphModule:
        return torch.fx.GraphModule(self.root, self.graph, class_name=self.class_name)


def lower(trace, outputs, *, input_names=None):
    """Build the GraphModule computing ``outputs`` (name -> Node or constant) from the trace inputs."""
    return lower_graph(trace, outputs).module()


def lower_graph(trace, outputs) -> Lowered:
    """``lower`` without making the GraphModule (see ``Lowered``)."""
    stale.check(trace, outputs)  # a value from another trace: refused, not lowered by its index
    b = Builder()
    env = {}
    roots = [v for v in outputs.values() if isinstance(v, Node)]
    live = reachable(trace.nodes, roots)
    used: set = set()
    for name, node in trace.inputs.items():
        # FX writes placeholder targets into forward()'s signature: they must be identifiers.
        # The user's name ("observation.state") stays the input's name everywhere else.
        proxy = _Proxy(b.graph.placeholder(_identifier(name, used)), b.tracer)
        proxy.node.meta["leapp_input"] = name
        _annotate(proxy.node, node)
        env[node.index] = proxy
    for node in trace.nodes:
        if node.index not in live or node.op == "input":
            continue
        if node.op == "const":
            proxy = b.constant(node.value)
            _annotate(proxy.node, node)
            proxy.node.meta["leapp_node"] = node.index
            origin = node.args[0] if node.args else None
            if origin is not None:
                proxy.node.meta["leapp_frozen_from"] = origin
            env[node.index] = proxy
            continue
        if node.op == "escaped":
            raise InternalError(f"escaped value reached lowering: {node}")
        adapter = ADAPTERS.get(node.op)
        if adapter is None and node.op.startswith("numpy."):
            adapter = generic_ufunc(node.op)
        if adapter is None:
            raise InternalError(
                f"no adapter for {node.op} (recorded at {format_loc(node.loc)}); the table lists "
                f"it as supported, so leapp.runtime.adapters must implement it"
            )
        args = node.args
        if type(args) is tuple:  # the usual flat operands, without _sub's recursion
            args = tuple([env[a.index] if type(a) is Node else a if type(a) in _LITERALS else _sub(a, env)
                          for a in args])
        else:
            args = _sub(args, env)
        kwargs = _sub(node.kwargs, env) if node.kwargs else {}
        before = b.graph._root.prev  # the last node so far: what follows it is new
        try:
            result = adapter(Ctx(b, node), *args, **kwargs)
        except UnsupportedArgumentError as exc:
            # an argument form the adapter refuses (einsum's interleaved form, qr mode=...):
            # the user's mistake, named at the user's call, not a leapp bug
            raise UnsupportedArgumentError(
                f"{format_loc(node.loc)}: {node.op}(...) cannot be traced: {exc}"
            ) from None
        except Exception as exc:
            raise InternalError(
                f"lowering {node.op} recorded at {format_loc(node.loc)} failed: {exc}"
            ) from exc
        if isinstance(result, torch.Tensor) and not isinstance(result, torch.fx.Proxy):
            result = b.constant(result.detach().cpu().numpy())
        env[node.index] = result
        _stamp(b.graph, before, node, result)
    out = {}
    for name, value in outputs.items():
        if isinstance(value, Node):
            out[name] = env[value.index]
        else:
            out[name] = b.constant(np.asarray(value))
    b.graph.output({k: (v.node if isinstance(v, torch.fx.Proxy) else v) for k, v in out.items()})
    return Lowered(b.root, b.graph, _class_name(trace.name))


def _identifier(name, used) -> str:
    """A Python identifier for ``name``, unique among ``used`` (which it joins)."""
    text = str(name)
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in text) or "input"
    if not base.isidentifier() or keyword.iskeyword(base) or base == "self":
        base = "_" + base
    candidate, n = base, 1
    while candidate in used:
        n += 1
        candidate = f"{base}_{n}"
    used.add(candidate)
    return candidate


def _class_name(name):
    cleaned = "".join(c if c.isalnum() else "_" for c in str(name))
    return (cleaned[:1].upper() + cleaned[1:]) if cleaned else "LeappGraph"


def _annotate(fx_node, node):
    fx_node.meta["leapp_dtype"] = np.dtype(node.dtype) if node.dtype is not None else None
    fx_node.meta["leapp_shape"] = tuple(node.shape) if node.shape is not None else None
    _set_source(fx_node, node)


def _set_source(fx_node, node):
    loc = node.loc
    if loc is None or isinstance(loc, str):
        fx_node.meta["leapp_source"] = loc
        return
    meta = fx_node.meta
    source, stack = _sources.get(loc) or _source_of(loc)
    meta["leapp_source"] = source
    meta["leapp_loc"] = loc  # (file, line, function, col[, helper's loc]): what cf.show() and sidecars read
    meta.setdefault("leapp_call", node.op)
    meta["stack_trace"] = stack


_sources: dict = {}  # loc -> (file:line[:col], stack_trace text); a program has few locations


def _source_of(loc):
    if len(_sources) > 100_000:
        _sources.clear()
    frames = [loc[:4], loc[4]] if len(loc) > 4 and loc[4] is not None else [loc]  # innermost last
    stack = "".join(f'  File "{f[0]}", line {f[1]}, in {f[2]}\n    {linecache.getline(f[0], f[1]).strip()}\n'
                    for f in frames)
    hit = _sources[loc] = (format_loc(loc), stack)
    return hit


def _stamp(graph, before, node, result):
    """Give every FX node an adapter made for ``node`` its source; the result gets NumPy's meta."""
    fresh = []
    cur = before.next
    while cur is not graph._root:
        fresh.append(cur)
        cur = cur.next
    for fx_node in fresh:
        if "leapp_source" not in fx_node.meta:
            _set_source(fx_node, node)
            fx_node.meta["leapp_call"] = node.op
    if isinstance(result, torch.fx.Proxy):
        result.node.meta.setdefault("leapp_node", node.index)  # the trace node it computes
    if isinstance(result, torch.fx.Proxy) and node.dtype is not None:
        meta = result.node.meta
        if result.node in fresh or "leapp_dtype" not in meta:
            meta["leapp_dtype"] = np.dtype(node.dtype)
            meta["leapp_shape"] = tuple(node.shape)


def _refuse_unsigned(n, exc):
    """torch has no arithmetic kernels for uint16/32/64 beyond what the adapters route through
    int64 exactly; where one is still reached, refuse at the user's call rather than crash."""
    text = str(exc).split("\n", 1)[0]
    kind = next((k for k in ("UInt64", "UInt32", "UInt16") if f"for '{k}'" in text), None)
    if kind is None or n is None:
        return
    name = kind.lower()
    call = n.meta.get("leapp_call", n.target)
    raise UnsupportedArgumentError(
        f"{n.meta.get('leapp_source')}: {call}(...) cannot be traced on {name}: torch has no {name} kernel "
        f"for it, and int64 gives other results past 2**63 (order, division, shifts); cast the operands "
        f"with .astype(np.int64) first ({text})"
    ) from None


def _evaluate(gm, inputs):
    """Every node's value on ``inputs``: a minimal ``torch.fx.Interpreter``.

    The same calls in the same order, without the Interpreter's per-node
    context managers and dispatch (a third of the cost on graphs of 100,000
    nodes). Returns ({fx node: value}, the output node's value).
    """
    values: dict[Any, Any] = {}
    get = values.__getitem__
    feed = iter(inputs)
    owner = gm.root if isinstance(gm, Lowered) else gm  # where get_attr targets live
    n = None
    try:
        for n in gm.graph.nodes:
            op = n.op
            if op == "call_function":
                value = n.target(*_map_arg(n.args, get), **_map_arg(n.kwargs, get))
            elif op == "call_method":
                obj, *rest = _map_arg(n.args, get)
                value = getattr(obj, n.target)(*rest, **_map_arg(n.kwargs, get))
            elif op == "placeholder":
                value = next(feed)
            elif op == "get_attr":
                value = _attr(owner, n.target)
            elif op == "call_module":
                value = owner.get_submodule(n.target)(*_map_arg(n.args, get), **_map_arg(n.kwargs, get))
            else:  # output
                return values, _map_arg(n.args[0], get)
            values[n] = value
    except NotImplementedError as exc:
        _refuse_unsigned(n, exc)
        raise
    except torch.linalg.LinAlgError as exc:
        _refuse_singular(n, values, exc)
        raise
    return values, None


# A matrix whose condition number times its dtype's eps is at least this is singular to that
# precision as far as a solver is concerned: LAPACKs (their pivoting, blocking, growth) part on it
# by rounding alone, one finding an exact zero pivot where another goes on.
SINGULAR_TO_PRECISION = 1e-3


def square_matrix(value) -> bool:
    """Whether ``value`` is a non-empty float or complex tensor of (batched) square matrices: what a
    solver's condition number is taken of."""
    return isinstance(value, torch.Tensor) and value.dim() >= 2 and value.shape[-1] == value.shape[-2] \
        and bool(value.numel()) and (value.is_floating_point() or value.is_complex())


def condition_number(matrix) -> float:
    """The largest 2-norm condition number of ``matrix`` (a tensor or an array, batched or not),
    computed in float64 or complex128; inf for an exactly singular one."""
    a = matrix.detach().cpu().numpy() if isinstance(matrix, torch.Tensor) else np.asarray(matrix)
    a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    with np.errstate(all="ignore"):
        try:
            cond = float(np.max(np.linalg.cond(a)))
        except np.linalg.LinAlgError:
            return math.inf
    return math.inf if math.isnan(cond) else cond


def _refuse_singular(n, values, exc):
    """torch's solver found a matrix of the traced sample singular (an exact zero pivot) where
    NumPy's LAPACK, whose own rounding left that pivot nonzero, returned a value: a matrix singular
    to its dtype's precision, on which the two answers are rounding. Refuse at the user's call,
    with the matrix's condition number, rather than let torch's error look like the user's; a
    matrix that is not singular to its precision explains nothing: that is leapp's error."""
    if n is None:
        return
    call, where = n.meta.get("leapp_call", n.target), n.meta.get("leapp_source")
    for operand in n.all_input_nodes:
        value = values.get(operand)
        if square_matrix(value) and value.is_floating_point():
            if not bool(torch.isfinite(value).all()):
                return  # inf or NaN: no matter of precision, torch's error stands
            cond = condition_number(value)
            dtype = to_numpy(value.dtype)
            eps = float(np.finfo(dtype).eps)
            if cond * eps < SINGULAR_TO_PRECISION:
                raise InternalError(
                    f"{where}: {call}(...): torch's LAPACK found the graph's matrix singular on the traced "
                    f"input where NumPy's returned a value, yet that matrix's condition number is "
                    f"{cond:.1e} in {dtype}: not singular to its precision, so the graph's matrix is not "
                    f"NumPy's (a leapp bug; please report it with cf.report()) ({exc})") from None
            raise ProblemsError([
                f"{where}: {call}(...) on the traced input: torch's LAPACK found its matrix singular where "
                f"NumPy's returned a value; the matrix has condition number {cond:.1e} in {dtype} "
                f"(1/eps = {1 / eps:.1e}): singular to that precision, where two LAPACKs part by rounding "
                f"alone, so no graph reproduces NumPy's value. Trace on an input whose matrix is "
                f"well-conditioned ({exc})"]) from None


def _attr(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def run_stacked(gm, inputs, blocks):
    """The lowering's own run of ``gm`` on the differential check's inputs stacked along the first
    axis (``blocks`` blocks, the traced sample's last: ``compiler.check.Stack``) in place of the
    traced sample alone, so that the check reuses its outputs rather than running the graph again.
    It stands for ``check_dtypes`` where the graph runs on the stack (a graph that fixes its batch
    size, or a solver that raises on a generated block, does not) and every node has NumPy's dtype
    (nothing to repair) and its traced shape or that shape with a first axis ``blocks`` times as
    long; else None, and the caller runs ``check_dtypes`` on the sample, as without a stack.

    Returns the graph's outputs on the stack. The self-check on the sample is not made here: the
    first call's own run of the graph on it is compared with the trace (``leapp.compile``), or the
    graph runs on the sample for it (``CompiledFunction._settle_self_check``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values, output = _evaluate(gm, inputs)
    except Exception:  # noqa: BLE001 - any failure on the stack leaves the sample's own run to judge
        return None
    tensor = torch.Tensor
    for n, value in values.items():
        meta = n.meta
        want = meta.get("leapp_dtype")
        if want is None or not isinstance(value, tensor):
            continue
        shape = meta.get("leapp_shape")
        if shape is not None and value.shape != shape and \
                not (shape and value.shape == (shape[0] * blocks, *shape[1:])):
            return None  # a node that mixes rows, or a shape the sample's own run must judge
        if value.dtype != to_torch(want):
            return None  # repaired by check_dtypes on the sample
    return output if isinstance(output, dict) else None


def check_dtypes(gm, inputs, *, where="graph"):
    """Run ``gm`` (a GraphModule or a ``Lowered``) once and make every node's dtype NumPy's;
    shapes must already agree.

    Returns the graph's output on ``inputs`` when nothing was repaired (the
    lowered graph is then exactly what ran), else None.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values, output = _evaluate(gm, inputs)
    repaired = []
    tensor = torch.Tensor
    for n, value in values.items():  # every node that ran, in graph order
        meta = n.meta
        want = meta.get("leapp_dtype")
        if want is None or not isinstance(value, tensor):
            continue
        shape = meta.get("leapp_shape")
        if shape is not None and value.shape != shape:  # torch.Size is a tuple
            raise InternalError(
                f"{n.meta.get('leapp_call', n.target)} at {n.meta.get('leapp_source')}: the graph "
                f"computes shape {tuple(value.shape)} where NumPy gave {tuple(shape)}"
            )
        if value.dtype != to_torch(want):
            repaired.append((n, value.dtype, want))
    for n, got, want in repaired:
        with gm.graph.inserting_after(n):
            cast = gm.graph.call_method("to", (n, to_torch(want)))
        cast.meta.update({k: v for k, v in n.meta.items() if k.startswith("leapp_") or k == "stack_trace"})
        n.replace_all_uses_with(cast, delete_user_cb=lambda user, c=cast: user is not c)
        warnings.warn(
            f"{n.meta.get('leapp_call', n.target)} at {n.meta.get('leapp_source')}: the torch op "
            f"gives {got} where NumPy gives {want}; a cast was inserted",
            LeappInternalWarning,
            stacklevel=2,
        )
    if repaired:
        if isinstance(gm, torch.fx.GraphModule):  # a Lowered writes its code when made
            gm.recompile()
        return None
    return output
