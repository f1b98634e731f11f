"""Sizes that came from data: which traced values have a size the values decided.

A result of boolean-mask indexing or of a table entry marked ``data_sized``
(``np.nonzero``, ``np.flatnonzero``, ``np.argwhere``, ``np.where(cond)``) has
a size that follows the data, and so does every array computed from one that
is not 0-d (a write into an array keeps that array's size). The graph follows such sizes; Python does not: ``len(x[mask])``,
``order.size > 0`` or ``for i in idx`` read the trace-time number into Python,
where it is frozen. TracedNpArray asks ``data_sized`` when Python reads a size
and refuses the read (an escape). Nothing is computed while tracing: the
answer is worked out on demand, from the recorded nodes, and memoised.
"""

from __future__ import annotations

from .. import table
from .ir import Node, fold_operands, nodes_in

_BOOL = "b"


# a write gives the array written into, whatever size the value written had (``v[m] = v[m] / n[m]``)
_WRITES = frozenset({"ndarray.__setitem__", "leapp.write_index", "leapp.write_shape", "leapp.write_permute"})


def data_sized(trace, node) -> bool:
    memo = trace.__dict__.setdefault("_data_sized", {})

    def combine(n, sized):
        if n.op in _WRITES:
            target = n.args[0]
            return isinstance(target, Node) and memo[target.index]
        return _decides_size(n) or bool(n.shape) and any(sized)

    return fold_operands(memo, node, combine)


def _decides_size(n) -> bool:
    op = n.op
    if op == "ndarray.__getitem__":
        return any(a.op != "const" and a.dtype is not None and a.dtype.kind == _BOOL and a.shape != ()
                   for a in nodes_in(n.args[1:2]))
    if op == "item":
        parent = n.args[0]
        return isinstance(parent, Node) and _decides_size(parent)
    entry = table.lookup(op) if op.startswith("numpy.") else None
    rule = getattr(entry, "data_sized", "")
    if rule == "always":
        return True
    return rule == "one-argument" and len(n.args) == 1 and not n.kwargs
