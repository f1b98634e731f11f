"""Graph passes over a lowered ``GraphModule``, each with a contract.

A pass is a small class in the style of ``torch.fx.passes.infra.pass_base``:
``requires`` and ``ensures`` say what it assumes and what holds afterwards,
``__call__(gm)`` returns a ``PassResult(graph_module, modified, ...)``, and
``graph.lint()`` runs after every pass that changed something. Every loop
here is a plain ``for``/``while`` over the node list: graphs of 100,000 nodes
exist, and recursion would hit Python's limit.

Passes rewrite the graph in place. A node that replaces another keeps the
replaced node's ``leapp_*`` meta where it stands for the same NumPy value, so
error messages still point at the user's line.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx

from .dtypes import to_torch

_RANDOM = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "bernoulli",
           "normal", "multinomial", "randperm", "dropout", "uniform_", "normal_", "empty", "empty_like"}
_META_KEYS = ("leapp_dtype", "leapp_shape", "leapp_source", "leapp_loc", "leapp_call", "stack_trace")


@dataclass
class PassResult:
    graph_module: torch.fx.GraphModule
    modified: bool
    name: str = ""
    nodes_before: int = 0
    nodes_after: int = 0
    changed: int = 0  # nodes removed, merged or rewritten

    def describe(self) -> str:
        return f"{self.name}: {self.nodes_before} -> {self.nodes_after} nodes ({self.changed} changed)"


def _name(target) -> str:
    return getattr(target, "__name__", str(target))


def is_pure(node: torch.fx.Node) -> bool:
    """No side effect and no randomness: safe to drop, merge or run ahead of time."""
    if node.op in ("placeholder", "output", "call_module"):
        return False
    if node.op == "get_attr":
        return True
    name = _name(node.target)
    if name in _RANDOM or name.endswith("_") and not name.endswith("__"):
        return False  # in-place (add_, index_put_) or random
    if node.op == "call_function" and node.target is operator.setitem:
        return False
    if node.op == "call_function":
        try:
            return not node.is_impure()
        except Exception:  # an exotic target torch cannot classify: keep it
            return False
    return True


class Pass:
    """Base: subclasses set ``name`` and implement ``run(gm) -> number of changes``."""

    name = "pass"
    requires = ""
    ensures = ""

    def __call__(self, gm: torch.fx.GraphModule) -> PassResult:
        before = len(gm.graph.nodes)
        changed = self.run(gm)
        if changed:
            gm.graph.lint()
            gm.recompile()
        return PassResult(gm, bool(changed), self.name, before, len(gm.graph.nodes), changed)

    def run(self, gm) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class DeadCodeElimination(Pass):
    """Remove pure nodes whose value nobody uses, and the buffers no node reads any more.

    requires: a well-formed graph. ensures: every remaining non-output node is
    impure or has a user; every registered buffer is read by a ``get_attr``.
    """

    name = "dead code elimination"

    def run(self, gm) -> int:
        removed = 0
        for node in reversed(list(gm.graph.nodes)):  # users come after producers: one sweep
            if not node.users and is_pure(node):
                gm.graph.erase_node(node)
                removed += 1
        used = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
        for buffer in [b for b, _ in gm.named_buffers(recurse=False) if b not in used]:
            delattr(gm, buffer)  # an unused constant would still be saved with every artifact
        return removed


def _key(value, index):
    """A hashable, exact description of an argument: 1, 1.0, True and -0.0 stay apart."""
    stack: list[Any] = [value]
    out: list[object] = []
    while stack:  # iterative flattening; nested lists are shallow but need not be
        v = stack.pop()
        if isinstance(v, torch.fx.Node):
            out.append(("node", index[v]))
        elif isinstance(v, (list, tuple)):
            out.append((type(v).__name__, len(v)))
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            out.append(("dict", tuple(v)))
            stack.extend(v[k] for k in reversed(list(v)))
        elif isinstance(v, slice):
            out.append("slice")
            stack.extend((v.step, v.stop, v.start))
        elif isinstance(v, torch.Tensor):
            out.append(("tensor", id(v)))  # never merged: tensors compare by value only at a cost
        else:
            out.append((type(v).__name__, repr(v)))
    return tuple(out)


class CommonSubexpressionElimination(Pass):
    """Merge pure nodes with the same op, target, args and kwargs into the first of them.

    requires: a topologically ordered graph. ensures: no two pure nodes compute
    the same expression of the same operands.
    """

    name = "common subexpression elimination"

    def run(self, gm) -> int:
        index: dict[Any, Any] = {}
        seen: dict[Any, Any] = {}
        merged = 0
        for i, node in enumerate(list(gm.graph.nodes)):
            index[node] = i
            if not is_pure(node):
                continue
            key = (node.op, node.target, _key(node.args, index), _key(node.kwargs, index))
            first = seen.get(key)
            if first is None:
                seen[key] = node
                continue
            node.replace_all_uses_with(first)
            index[node] = index[first]
            gm.graph.erase_node(node)
            merged += 1
        return merged


def _inputs(node):
    return node.all_input_nodes


class ConstantFolding(Pass):
    """Replace each subgraph that depends only on constants by one ``_tensor_constant`` buffer.

    requires: constants are ``get_attr`` buffers. ensures: no pure op reads
    only constants, except where folding would store a much larger tensor
    than it reads (a broadcast of a small constant stays a broadcast).
    New buffers take the next free ``_tensor_constant<k>`` numbers in graph
    order, so the same graph always folds to the same names.
    """

    name = "constant folding"
    max_growth = 1 << 16  # elements a folded constant may add beyond the ones it replaces

    def run(self, gm) -> int:
        const = set()
        for node in gm.graph.nodes:
            if node.op == "get_attr":
                const.add(node)
            elif node.op in ("call_function", "call_method") and is_pure(node) \
                    and all(n in const for n in _inputs(node)):
                const.add(node)
        frontier = [n for n in gm.graph.nodes if n in const and n.op != "get_attr"
                    and any(u not in const for u in n.users)]
        if not frontier:
            return 0
        values = self._evaluate(gm, const)
        folded = 0
        k = _next_constant_index(gm)
        for node in frontier:
            value = values.get(node)
            if not isinstance(value, torch.Tensor) or not self._worth_it(node, value, values):
                continue
            name = f"_tensor_constant{k}"
            k += 1
            gm.register_buffer(name, value.detach().clone().contiguous())
            with gm.graph.inserting_before(node):
                attr = gm.graph.get_attr(name)
            attr.meta.update({key: node.meta[key] for key in _META_KEYS if key in node.meta})
            attr.meta["leapp_folded_from"] = node.meta.get("leapp_call", _name(node.target))
            node.replace_all_uses_with(attr)
            folded += 1
        if folded:
            DeadCodeElimination().run(gm)
        return folded

    @staticmethod
    def _evaluate(gm, const):
        values = {}
        for node in gm.graph.nodes:
            if node not in const:
                continue
            if node.op == "get_attr":
                values[node] = getattr(gm, node.target)
                continue
            args = torch.fx.node.map_arg(node.args, lambda n: values[n])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: values[n])
            with torch.no_grad():
                if node.op == "call_function":
                    values[node] = node.target(*args, **kwargs)
                else:
                    values[node] = getattr(args[0], node.target)(*args[1:], **kwargs)
        return values

    def _worth_it(self, node, value, values):
        read = sum(values[n].numel() for n in _inputs(node) if isinstance(values.get(n), torch.Tensor))
        return value.numel() <= read + self.max_growth


def _next_constant_index(gm):
    taken = [int(b[len("_tensor_constant"):]) for b, _ in gm.named_buffers(recurse=False)
             if b.startswith("_tensor_constant") and b[len("_tensor_constant"):].isdigit()]
    return max(taken, default=-1) + 1


def _static_shape(shape, like):
    """The shape ``reshape(shape)`` gives for an input of static shape ``like`` (-1 resolved)."""
    if not isinstance(shape, (list, tuple)) or not all(isinstance(s, int) for s in shape):
        return None
    shape = list(shape)
    if shape.count(-1) == 1:
        known = int(np.prod([s for s in shape if s != -1]))
        total = int(np.prod(like))
        if known == 0 or total % known:
            return None
        shape[shape.index(-1)] = total // known
    return tuple(shape)


class RemoveNoOps(Pass):
    """Drop casts to the dtype a value already has and reshapes to the shape it already has.

    requires: ``leapp_dtype``/``leapp_shape`` meta on the operands (set by
    lowering; ``check_dtypes`` makes it the truth). ensures: no ``.to(dtype)``
    or ``reshape``/``view`` node leaves its operand's dtype and shape unchanged.
    """

    name = "no-op removal"

    def run(self, gm) -> int:
        removed = 0
        for node in list(gm.graph.nodes):
            source = self._no_op_source(node)
            if source is None:
                continue
            node.replace_all_uses_with(source)
            gm.graph.erase_node(node)
            removed += 1
        return removed

    @staticmethod
    def _no_op_source(node):
        if node.op not in ("call_method", "call_function") or not node.args:
            return None
        x = node.args[0]
        if not isinstance(x, torch.fx.Node) or x.meta.get("leapp_dtype") is None:
            return None
        name = _name(node.target)
        if node.op == "call_method" and name == "to" and len(node.args) == 2 and not node.kwargs:
            target = node.args[1]
            if isinstance(target, torch.dtype) and target == to_torch(x.meta["leapp_dtype"]):
                return x
            return None
        if name in ("reshape", "view") and len(node.args) >= 2 and not node.kwargs:
            like = x.meta.get("leapp_shape")
            shape = node.args[1] if len(node.args) == 2 else node.args[1:]
            if like is not None and _static_shape(shape, like) == tuple(like):
                return x
        return None


DEFAULT_PASSES = (RemoveNoOps, ConstantFolding, CommonSubexpressionElimination, DeadCodeElimination)


@dataclass
class OptimizeReport:
    nodes_before: int
    nodes_after: int
    results: list

    def describe(self) -> str:
        lines = [f"graph passes: {self.nodes_before} -> {self.nodes_after} nodes"]
        lines += [f"  {r.describe()}" for r in self.results if r.modified]
        return "\n".join(lines)


def optimize(gm: torch.fx.GraphModule, passes=DEFAULT_PASSES, max_rounds: int = 4) -> OptimizeReport:
    """Run ``passes`` in order until none changes the graph (at most ``max_rounds`` rounds)."""
    before = len(gm.graph.nodes)
    results = []
    for _ in range(max_rounds):
        round_results = [p()(gm) for p in passes]
        results += round_results
        if not any(r.modified for r in round_results):
            break
    return OptimizeReport(before, len(gm.graph.nodes), results)

