"""Traced values from another trace: refused by name, never lowered as whatever shares their index.

A traced array can outlive its trace: a refused ``leapp.compile`` of a method
that assigned ``self.x = traced`` leaves it on the object, a library keeps it
in a cache. Used in a later trace, its node belongs to the old recording; node
indices are positions in a recording, so lowering would look the index up in
the new one, and either fail with a raw ``KeyError`` or, worse, pick up an
unrelated node of the new trace. Before lowering, every operand and output
node must be the new trace's own (``trace.nodes[node.index] is node``).
"""

from __future__ import annotations

from ..errors import EscapeError
from .ir import Node, format_loc, operand_nodes


def check(trace, outputs) -> None:
    nodes = trace.nodes
    n = len(nodes)

    def foreign(v):
        return type(v) is Node and not (v.index < n and nodes[v.index] is v)

    for node in nodes:
        for operand in operand_nodes(node):
            if foreign(operand):
                _refuse(trace, operand, f"{node.op} at {format_loc(node.loc)}")
    for key, value in outputs.items():
        if foreign(value):
            _refuse(trace, value, f"output {key!r}")


def _refuse(trace, node, use):
    made = format_loc(node.loc) if node.loc is not None else "an earlier trace"
    raise EscapeError(
        f"{trace.name}: {use} uses a traced value left over from another trace (made by {node.op} at "
        f"{made}; an earlier trace that was refused or finished left it on an object, a global or a "
        f"cache). Its graph is gone, so it cannot be part of this one: reset that state to a plain "
        f"array (np.asarray(obj.x).copy() outside tracing), or pass the value in as an input")
