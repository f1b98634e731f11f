"""Following values between the nodes of a seed-API session: forward edges, feedback, code in between.

While a session is open and no node is, a *gap trace* records: every array a
node returned (``annotate.output_tensors``) is re-bound to an input of that
trace, keyed by (node, port, pass). Whatever user code does with it before
it enters a node (``a[:]``, ``np.asarray(a)``, ``a.copy()``, ``a.astype(...)``,
or ``a + 1.0``) is recorded there like any traced code, with its line. When a
value enters ``annotate.input_tensors``, ``Gap.follow`` walks back from it:

- a chain of copies, views of the whole array and casts to one node output
  is an edge (``Link``); whether it is forward or feedback is decided by the
  caller from the nodes' order;
- anything else computed from a node output is *code between nodes*: it is
  reported with its line, since the deployed pipeline would not run it;
- a value whose history leapp lost (an escape, a plain array equal to a
  recent output) cannot be told apart from a fresh input, and says so.

The gap trace is quiet: untraced calls and escapes in it are not reported by
themselves (an environment simulator may run arbitrary code on an action);
only what reaches a node is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import record
from ..runtime.ir import Node, Trace, format_loc
from ..runtime.torch_interop import TracedTensor
from ..runtime.traced import TracedNpArray

# Operations that hand the same values on (a cast may change the dtype).
_SAME_VALUES = {"numpy.asarray", "numpy.asanyarray", "numpy.array", "numpy.copy", "ndarray.copy",
                "numpy.ascontiguousarray", "ndarray.astype", "numpy.reshape", "ndarray.__getitem__",
                "leapp.cast"}  # leapp.cast: torch.from_numpy(x, dtype=...) and friends


@dataclass(frozen=True)
class Link:
    """A value that is a node's output (``node``/``port`` of pass ``pass_index``), maybe cast."""

    node: str
    port: str
    pass_index: int
    cast: bool = False


@dataclass(frozen=True)
class Unclear:
    """A value entering a node that leapp could not follow; ``reason`` says why, with the line."""

    reason: str
    computed: bool  # True: code between nodes computed it; False: its history was lost


class Gap:
    """The trace that records between nodes, and where each of its inputs came from."""

    def __init__(self, name):
        self.trace = Trace(f"{name} (between nodes)", strict=False)
        self.trace.quiet = True
        self._origin: dict[int, Link] = {}  # gap input node index -> Link
        self._latest: dict[tuple, tuple] = {}  # (node, port) -> (plain copy, pass) of the last output
        self._plain: dict[int, tuple] = {}  # id(plain output) -> (array, Link)

    def bind_output(self, node, port, pass_index, value):
        """``value`` (returned by node's ``output_tensors``) now starts in the gap trace."""
        link = Link(node, port, pass_index)
        plain = record.plain(value)
        self._latest[(node, port)] = (np.array(plain, copy=True), pass_index)
        if _is_traced_tensor(value):  # t.numpy() and torch.from_numpy(...) keep this node
            src = self.trace.add("input", (f"{node}/{port}",), None, plain.dtype, plain.shape, None)
            self._origin[src.index] = link
            value._lp_node = src
        elif isinstance(value, TracedNpArray):
            src = self.trace.add("input", (f"{node}/{port}",), None, value.dtype, value.shape, None)
            self._origin[src.index] = link
            value._lp_node = src
            value._lp_parent = None
            value._lp_root = None
            value._lp_ver = 0
            value._lp_version = 0
        elif isinstance(value, np.ndarray):
            self._plain[id(value)] = (value, link)

    def follow(self, value, where, inside=None):
        """What ``value`` (entering a node at ``where``) is: a Link, an Unclear, or None (a fresh input).

        ``inside``: the trace of the node being fed, when it is already open;
        a value it computed itself is a fresh input.
        """
        if isinstance(value, TracedNpArray) or _is_traced_tensor(value):
            node = _node_of(value)
            if node is not None and inside is not None and _owned(inside, node):
                return None
            return self._follow_traced(value, where)
        hit = self._plain.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        return self._lookalike(value, where)


    def _follow_traced(self, value, where):
        node = _node_of(value)
        if node is None:
            return self._lookalike(record.plain(value), where)
        if not _owned(self.trace, node):
            return Unclear(f"the value entering at {format_loc(where)} was computed inside another node "
                           f"but not returned by its annotate.output_tensors; declare it as that node's "
                           f"output", computed=False)
        chain, cast = node, False
        while chain.op != "input" and chain.op in _SAME_VALUES and _passes_values(chain):
            cast = cast or chain.args[0].dtype != chain.dtype
            chain = chain.args[0]
        if chain.op == "input":
            return Link(*_fields(self._origin[chain.index]), cast=cast)
        sources, first = self._upstream(node)
        if not sources:  # made in between from plain data (or through an escape)
            return self._lookalike(record.plain(value), where)
        names = ", ".join(sorted({f"{s.node}/{s.port}" for s in sources}))
        return Unclear(f"code between nodes: {first.op} at {format_loc(first.loc)} computes the value "
                       f"entering at {format_loc(where)} from {names}; the exported pipeline would not "
                       f"run it. Move it into a node (between its annotate.input_tensors and "
                       f"annotate.output_tensors); if it is outside the pipeline on purpose (an "
                       f"environment), give that code annotate.external(value)", computed=True)

    def _upstream(self, node):
        """The node outputs ``node`` depends on, and the earliest operation on the way."""
        seen, stack, sources, ops = set(), [node], set(), []
        while stack:
            n = stack.pop()
            if n.index in seen:
                continue
            seen.add(n.index)
            if n.op == "input":
                sources.add(self._origin[n.index])
                continue
            ops.append(n)
            stack.extend(_arg_nodes(n))
        live = [n for n in ops if n.op not in _SAME_VALUES or not _passes_values(n)] or ops
        return sources, min(live, key=lambda n: n.index) if live else None

    def _lookalike(self, array, where):
        """A plain array equal to a recent node output: leapp lost the link and cannot tell."""
        array = np.asarray(array)
        if array.size == 0 or np.all(array == array.flat[0]):
            return None  # a constant array matches too much to say anything
        for (node, port), (latest, _) in self._latest.items():
            if latest.shape == array.shape and np.array_equal(latest, array):
                return Unclear(f"the value entering at {format_loc(where)} equals output {node}/{port} "
                               f"of the latest pass, but leapp could not follow it there (a conversion "
                               f"through Python or torch loses the link). If it is that output, pass the "
                               f"array annotate.output_tensors returned (copies, np.asarray, [:] and "
                               f"astype are followed)", computed=False)
        return None


def _is_traced_tensor(value):
    return isinstance(value, TracedTensor)


def _node_of(value):
    return value._lp_node if _is_traced_tensor(value) else record.node_of(value)


def _owned(trace, node):
    return node.index < len(trace.nodes) and trace.nodes[node.index] is node


def _fields(link: Link) -> tuple[str, str, int]:
    return link.node, link.port, link.pass_index


def _passes_values(n):
    """Whether this same-values op really hands the whole array on (a full slice, the same shape)."""
    src = n.args[0] if n.args else None
    if not isinstance(src, Node) or src.shape != n.shape:
        return False
    if n.op == "ndarray.__getitem__":
        index = n.args[1] if isinstance(n.args[1], tuple) else (n.args[1],)
        return all(i is Ellipsis or isinstance(i, slice) and i == slice(None) for i in index)
    return True


def _arg_nodes(n):
    out = []

    def walk(v):
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(n.args)
    walk(n.kwargs)
    return out
