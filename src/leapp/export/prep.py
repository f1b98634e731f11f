"""Rewrites that make a graph's implicit type rules explicit before ONNX export.

torch promotes operand dtypes inside each op; ONNX does not. ONNX Runtime
refuses ``Greater(float, int64)`` ("Type parameter (T) ... bound to different
types"), which the dynamo exporter produced for comparisons that mix a float
tensor with an int64 0-d tensor or an int literal. ``ExplicitPromotion``
computes torch's own result type for each comparison (``torch.result_type``
on stand-ins of the operands' dtypes and ranks, so the values do not change)
and inserts the casts, or rewrites the literal, so both sides already agree.
``ScalarLast`` moves a Python scalar out of the first position of a
commutative op (``torch.mul(2.0, x)``), which the dynamo exporter cannot
translate. Both are ``leapp.runtime.passes.Pass`` subclasses; ``prepare``
runs them on a copy and reports what each changed, by source line.
"""

from __future__ import annotations

import copy

import torch
import torch.fx

from ..runtime.dtypes import to_torch
from ..runtime.passes import Pass

_COMPARE = {torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge,
            torch.maximum, torch.minimum}
_COMMUTATIVE = {torch.add, torch.mul, torch.eq, torch.ne, torch.maximum, torch.minimum,
                torch.logical_and, torch.logical_or, torch.logical_xor,
                torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor}


def _dtype_of(x):
    if isinstance(x, torch.fx.Node):
        d = x.meta.get("leapp_dtype")
        return None if d is None else to_torch(d)
    return None


def _stand_in(x):
    """A tensor (or the literal itself) with ``x``'s dtype and rank class, for result_type."""
    if isinstance(x, torch.fx.Node):
        shape = x.meta.get("leapp_shape") or ()
        return torch.empty((1,) * min(len(shape), 1), dtype=_dtype_of(x))
    return x


def _where(node):
    return f"{node.meta.get('leapp_call', node.target)} at {node.meta.get('leapp_source') or '?'}"


class ExplicitPromotion(Pass):
    """Comparisons whose operands differ in dtype get explicit casts to torch's common dtype.

    requires: ``leapp_dtype``/``leapp_shape`` meta on tensor operands.
    ensures: both operands of every comparison have one dtype (literals are
    converted to the Python type of that dtype), so results are unchanged.
    """

    name = "explicit comparison promotion"

    def __init__(self):
        self.notes = []

    def run(self, gm) -> int:
        changed = 0
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target not in _COMPARE or len(node.args) != 2:
                continue
            a, b = node.args
            tensors = [x for x in (a, b) if isinstance(x, torch.fx.Node)]
            if not tensors or any(_dtype_of(t) is None or t.meta.get("leapp_shape") is None
                                  for t in tensors):
                continue
            if not all(isinstance(x, (torch.fx.Node, bool, int, float)) for x in (a, b)):
                continue
            common = torch.result_type(_stand_in(a), _stand_in(b))
            new = [self._convert(gm, node, x, common) for x in (a, b)]
            if any(n is not o for n, o in zip(new, (a, b), strict=True)):  # 1 -> 1.0 counts
                node.args = tuple(new)
                self.notes.append(f"{_where(node)}: operands cast to {common}")
                changed += 1
        return changed

    @staticmethod
    def _convert(gm, user, x, common):
        if isinstance(x, torch.fx.Node):
            if _dtype_of(x) == common:
                return x
            with gm.graph.inserting_before(user):
                cast = gm.graph.call_method("to", (x, common))
            cast.meta.update({k: v for k, v in user.meta.items() if k in ("leapp_source", "leapp_loc", "stack_trace")})
            cast.meta["leapp_shape"] = x.meta.get("leapp_shape")
            return cast
        if common.is_floating_point:
            return float(x)
        if common == torch.bool:
            return bool(x)
        return int(x) if not isinstance(x, float) else x


class ScalarLast(Pass):
    """``op(scalar, tensor)`` becomes ``op(tensor, scalar)`` for commutative ops.

    requires: nothing. ensures: no commutative op has a Python scalar first.
    Exact: IEEE addition and multiplication are commutative.
    """

    name = "scalar operands last"

    def run(self, gm) -> int:
        changed = 0
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in _COMMUTATIVE and len(node.args) == 2 \
                    and not node.kwargs and isinstance(node.args[0], (bool, int, float)) \
                    and isinstance(node.args[1], torch.fx.Node):
                node.args = (node.args[1], node.args[0])
                changed += 1
        return changed


def _widened(tensor):
    from .lowering import WIDE

    return tensor.to(torch.int64).to(WIDE[tensor.dtype]) if tensor.dtype in WIDE else tensor


def prepare(gm, output_names, *, onnx=False, example=None):
    """A copy of ``gm`` ready for export: tuple outputs in ``output_names`` order, explicit types.

    ``onnx=True`` also runs the ONNX decompositions (``leapp.export.lowering``);
    with ``example`` (the input tensors) it also keeps 0-d arithmetic in its dtype.
    Returns ``(graph_module, notes)``; ``notes`` say which comparisons got casts
    and which calls were decomposed, by source line.
    """
    gm = copy.deepcopy(gm)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    value = out.args[0]
    if isinstance(value, dict):
        out.args = (tuple(value[k] for k in output_names),)
    promotion = ExplicitPromotion()
    promotion(gm)
    ScalarLast()(gm)
    notes = list(promotion.notes)
    unsigned = None
    empty = False
    if onnx:
        from .lowering import LowerForOnnx, WidenUnsigned

        lowering = LowerForOnnx()
        lowering(gm)
        notes += lowering.notes
        widen = WidenUnsigned(output_names)
        widen(gm)
        if example is not None:
            from .lowering import HalfPerOp, ScalarsAsVectors, ZeroDimMasks, run_values

            gm.graph.lint()
            gm.recompile()
            wide = tuple(_widened(a) for a in example)
            values = run_values(gm, wide)
            ScalarsAsVectors(values)(gm)
            ZeroDimMasks(values)(gm)
            HalfPerOp(values)(gm)
            # The TorchScript-based exporter divides by the element count in its reshape, index
            # and index_put helpers: on an empty tensor that is a floating point exception, which
            # ends the process. formats.write_onnx takes the dynamo exporter for these.
            empty = any(isinstance(v, torch.Tensor) and v.numel() == 0 for v in values.values())
        if widen.inputs or widen.outputs:
            unsigned = {"inputs": widen.inputs, "outputs": widen.outputs}
            notes.append("uint16/uint32/uint64 values carried as int32/int64 inside the ONNX graph "
                         "(decomposed for ONNX), cast at its inputs and outputs")
    gm.graph.lint()
    gm.recompile()
    gm.leapp_unsigned = unsigned
    gm.leapp_has_empty = empty
    out = next(n for n in gm.graph.nodes if n.op == "output")
    values = out.args[0] if isinstance(out.args[0], (tuple, list)) else (out.args[0],)
    # the TorchScript-based ONNX exporter gives some 0-d results shape (1,): the writer restores them
    gm.leapp_scalar_outputs = [name for name, v in zip(output_names, values, strict=False)
                               if isinstance(v, torch.fx.Node) and v.meta.get("leapp_shape") == ()]
    # ... and computes 0-d int32 values as int64 (its scalar type analysis): the writer casts back
    gm.leapp_output_dtypes = {name: str(v.meta["leapp_dtype"]) for name, v in zip(output_names, values, strict=False)
                              if isinstance(v, torch.fx.Node) and v.meta.get("leapp_dtype") is not None}
    return gm, notes
