"""Slice assignments that keep the batch free, for ``dynamic_batch`` export.

leapp records ``y[index] = v`` as a write through the flat positions of the
traced shape::

    flat = reshape(y, (-1,))
    flat = flat.index_put((P.reshape(-1),), v.expand_as(P).reshape(-1))
    y = reshape(flat, traced_shape)

where ``P`` (a constant) holds the positions the index picks. That fixes the
batch size. When the index takes every row of the batch axis and the same
columns in each (``hist[:, -1] = obs``, ``y[:, 2:5] = ...``; ``P[b] = P[0] +
b * row`` for every row b), the write is the same per row, and
``FreeBatchAssignments`` rewrites it as a scatter into rows of any count:
``reshape(y, (batch, -1)).scatter(1, columns, v)``. The values are the same
at the traced batch size; any other index pattern is left alone (and the
dynamic-batch check names its line).
"""

from __future__ import annotations

import torch
import torch.fx

from ..runtime.passes import Pass


def assign_rows(x, v, columns, tail, picked_tail):
    """``x[:, cols] = v`` for every row of ``x``'s leading (batch) axis; ``columns`` index a flattened row."""
    b = x.shape[0]
    rows = x.reshape(b, -1)
    values = torch.broadcast_to(v, (b, *picked_tail)).reshape(b, -1).to(x.dtype)
    index = columns.reshape(1, -1).expand(b, -1)
    return rows.scatter(1, index, values).reshape(b, *tail)


def _is_flatten(node):
    if node.op == "call_function" and node.target is torch.reshape:
        return tuple(node.args[1]) == (-1,)
    return node.op == "call_method" and node.target == "reshape" and tuple(node.args[1:]) in ((-1,), ((-1,),))


def _constant(gm, node):
    if isinstance(node, torch.fx.Node) and node.op == "get_attr":
        value = getattr(gm, str(node.target), None)
        return value if isinstance(value, torch.Tensor) else None
    return None


class FreeBatchAssignments(Pass):
    """Per-row slice assignments become ``assign_rows`` (see the module doc).

    requires: the traced batch size. ensures: same values at that size; the
    rewritten writes no longer depend on it.
    """

    name = "batch-free slice assignments"

    def __init__(self, batch):
        self.batch = batch

    def run(self, gm) -> int:
        changed = 0
        for node in list(gm.graph.nodes):
            if node.op == "call_method" and node.target == "index_put":
                changed += self._rewrite(gm, node)
        if changed:
            gm.graph.eliminate_dead_code()
        return changed

    def _rewrite(self, gm, put):
        flat, indices, vals = put.args[0], put.args[1], put.args[2]
        if len(put.args) > 3 or put.kwargs or not isinstance(flat, torch.fx.Node) or not _is_flatten(flat):
            return 0
        if not (isinstance(indices, (tuple, list)) and len(indices) == 1 and len(put.users) == 1):
            return 0
        positions = _constant(gm, indices[0])
        if positions is None or not isinstance(vals, torch.fx.Node) or not _is_flatten(vals):
            return 0
        expand = vals.args[0]
        if not (isinstance(expand, torch.fx.Node) and expand.op == "call_method" and expand.target == "expand_as"):
            return 0
        picked = _constant(gm, expand.args[1])
        final = next(iter(put.users))
        if picked is None or not (final.op == "call_function" and final.target is torch.reshape):
            return 0
        shape = tuple(final.args[1])
        b = self.batch
        if not shape or shape[0] != b or picked.dim() == 0 or picked.shape[0] != b or b < 1:
            return 0
        row = 1
        for s in shape[1:]:
            row *= int(s)
        first = picked[0].reshape(-1)
        steps = torch.arange(b, dtype=picked.dtype).reshape(b, *([1] * (picked.dim() - 1))) * row
        if not torch.equal(picked, picked[0:1] + steps) or not torch.equal(positions, picked.reshape(-1)) \
                or bool((first >= row).any()) or bool((first < 0).any()) or first.unique().numel() != first.numel():
            return 0
        name = f"_leapp_row_columns_{put.name}"
        setattr(gm, name, first.clone())
        with gm.graph.inserting_before(final):
            columns = gm.graph.get_attr(name)
            new = gm.graph.call_function(assign_rows, (flat.args[0], expand.args[0], columns,
                                                       tuple(int(s) for s in shape[1:]),
                                                       tuple(int(s) for s in picked.shape[1:])))
        new.meta.update(final.meta)
        final.replace_all_uses_with(new)
        return 1
