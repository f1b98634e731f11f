"""The FX graph's ``forward`` written by leapp, without making a ``torch.fx.GraphModule``.

``GraphModule(root, graph)`` costs a fixed 1-3 ms whatever the graph's size
(a class per module, ``nn.Module`` attribute copies, torch.fx's general code
generator, ``linecache`` registration), which was most of a small program's
first call. The code written here makes the same calls in the same order:
each operand that is not a graph value (a dtype, a slice, a tuple of ints, a
constant tensor) is bound by reference in the function's globals rather than
printed and parsed again, so nothing is lost in a ``repr``; ``operator``
targets are written infix as torch.fx writes them; a value is dropped after
its last use, as torch.fx does, so large intermediates are freed early.

``CompiledNode`` runs this while nobody has asked for its GraphModule; once one
is made (export, ``optimize``, ``cf.graphs``), it runs the GraphModule's own
code (``session_graph.CompiledNode.fx_forward``).
"""

from __future__ import annotations

import math
import operator

import torch
from torch.fx.immutable_collections import immutable_dict, immutable_list

_INFIX = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.lt: "<", operator.le: "<=", operator.gt: ">",
    operator.ge: ">=", operator.eq: "==", operator.ne: "!=",
}
_PREFIX = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
_PLAIN = (int, bool, str, type(None))  # written as themselves (repr round-trips them exactly)


# source text -> its code object. The text names operands by position only (v3, _k1), so a
# signature traced again (another batch size) or the same program compiled again writes the same
# text, and Python's compile() is most of writing forward() for a small graph.
_compiled: dict = {}
_MAX_COMPILED = 512


def make_forward(graph: torch.fx.Graph, owner: torch.nn.Module):
    """``(forward, constants)``: ``forward(*tensors) -> {output name: value}`` running ``graph``
    (its ``get_attr`` targets read from ``owner`` now), and the constant tensors it holds."""
    names: dict = {}
    env: dict = {}
    constants: list = []
    lines = []
    params = []
    nodes = list(graph.nodes)
    last_use = {}
    inputs_of = [tuple(n._input_nodes) for n in nodes]  # all_input_nodes, without a list per read
    for i, ins in enumerate(inputs_of):
        for m in ins:
            last_use[m] = i

    bound: dict = {}  # id -> name: an object used by many nodes (a torch function) is bound once

    def bind(value):
        name = bound.get(id(value))
        if name is None or env[name] is not value:
            name = bound[id(value)] = f"_k{len(env)}"
            env[name] = value
        return name

    def expr(a):
        t = type(a)
        if t is torch.fx.Node:
            return names[a]
        if t in _PLAIN:
            return f"({a!r})" if t is int and a < 0 else repr(a)
        if t is float and math.isfinite(a):  # repr round-trips a finite float exactly (-0.0 too)
            return f"({a!r})" if math.copysign(1.0, a) < 0 else repr(a)
        # torch.fx keeps operands in its immutable_list / immutable_dict (subclasses): written as
        # the plain literals torch.fx's own code writes; a namedtuple or other subclass is bound
        if t is tuple:
            return "(" + "".join(expr(v) + ", " for v in a) + ")"
        if t is list or t is immutable_list:
            return "[" + ", ".join(expr(v) for v in a) + "]"
        if t is dict or t is immutable_dict:
            return "{" + ", ".join(f"{expr(k)}: {expr(v)}" for k, v in a.items()) + "}"
        if t is slice:
            return f"slice({expr(a.start)}, {expr(a.stop)}, {expr(a.step)})"
        return bind(a)  # nan, infinities, dtypes, devices, tensors, anything else: the object itself

    def call(args, kwargs):
        parts = [expr(a) for a in args] + [f"{k}={expr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    for i, n in enumerate(nodes):
        op = n.op
        var = f"v{i}"
        names[n] = var
        if op == "placeholder":
            params.append(var)
            continue
        if op == "output":
            lines.append(f"return {expr(n.args[0])}")
            break
        if op == "get_attr":
            obj = owner
            for part in n.target.split("."):
                obj = getattr(obj, part)
            if isinstance(obj, torch.Tensor):
                constants.append(obj)
            line = f"{var} = {bind(obj)}"
        elif op == "call_function":
            target = n.target
            infix = _INFIX.get(target)
            if infix is not None and len(n.args) == 2 and not n.kwargs:
                line = f"{var} = {expr(n.args[0])} {infix} {expr(n.args[1])}"
            elif target is operator.getitem and len(n.args) == 2 and not n.kwargs:
                line = f"{var} = {expr(n.args[0])}[{expr(n.args[1])}]"
            elif target in _PREFIX and len(n.args) == 1 and not n.kwargs:
                line = f"{var} = {_PREFIX[target]}{expr(n.args[0])}"
            else:
                line = f"{var} = {bind(target)}({call(n.args, n.kwargs)})"
        elif op == "call_method":
            line = f"{var} = {expr(n.args[0])}.{n.target}({call(n.args[1:], n.kwargs)})"
        elif op == "call_module":
            line = f"{var} = {bind(owner.get_submodule(n.target))}({call(n.args, n.kwargs)})"
        else:  # pragma: no cover - torch.fx has no other node kinds
            raise ValueError(f"unknown FX node kind {op!r}")
        dead = [names[m] for m in inputs_of[i] if last_use[m] == i and m.op != "get_attr"]
        if not n.users:
            dead.append(var)
        lines.append(line + ("; del " + ", ".join(dict.fromkeys(dead)) if dead else ""))
    # The bound objects are the globals of the function (a closure of as many cells made Python's
    # compiler superlinear: a 100,000-step chain did not compile in minutes).
    source = f"def forward({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in lines)
    code = _compiled.get(source)
    if code is None:
        if len(_compiled) >= _MAX_COMPILED:
            _compiled.clear()
        code = _compiled[source] = compile(source, "<leapp forward>", "exec")
    exec(code, env)  # noqa: S102 - leapp's own generated code, names bound in env
    forward = env["forward"]
    forward.__leapp_source__ = source
    return forward, constants
