"""NumPy functions (dispatched through ``__array_function__``) and their torch counterparts.

Each entry is implemented by the adapter registered under the same name in
``leapp.runtime.adapters``; ``torch`` names the main op the graph records.
"""

from __future__ import annotations

from dataclasses import replace

from ._schema import COMMON_REFUSALS, Entry

R = "Reductions"
S = "Shape and layout"
SEL = "Selection"
LA = "Linear algebra"
CR = "Array creation"
CV = "Conversion"
A = "Arithmetic and math"
C = "Comparison and logic"
ST = "Statistics"
SG = "Signal and geometry"

_RED_REFUSE = {"where": COMMON_REFUSALS["where"]}


def _f(name, torch, category, refuse=None, aliases=(), note="", kind="function", view=""):
    return Entry(
        name="numpy." + name,
        torch=torch,
        category=category,
        kind=kind,
        refuse=dict(refuse or {}),
        aliases=tuple("numpy." + a for a in aliases),
        note=note,
        view=view,
    )


FUNCTIONS = [
    # arithmetic and math
    _f("round", "torch.round", A, aliases=("around",), note="Rounds half to even, as NumPy."),
    _f("sinc", "torch.sinc", A),
    _f("clip", "torch.clamp", SEL),
    # reductions
    _f("sum", "torch.sum", R, _RED_REFUSE, note="Integer and bool sums accumulate in int64/uint64 as NumPy."),
    _f("prod", "torch.prod", R, _RED_REFUSE),
    _f("mean", "torch.mean", R, _RED_REFUSE, note="Means of integers are float64, as NumPy."),
    _f("std", "torch.std", R, _RED_REFUSE, note="ddof= maps to torch's correction=."),
    _f("var", "torch.var", R, _RED_REFUSE, note="ddof= maps to torch's correction=."),
    _f("min", "torch.amin", R, _RED_REFUSE, aliases=("amin",)),
    _f("max", "torch.amax", R, _RED_REFUSE, aliases=("amax",)),
    _f("ptp", "torch.amax", R),
    _f("argmin", "torch.argmin", R),
    _f("argmax", "torch.argmax", R),
    _f("cumsum", "torch.cumsum", R, aliases=("cumulative_sum",)),
    _f("cumprod", "torch.cumprod", R, aliases=("cumulative_prod",)),
    _f("all", "torch.all", R, _RED_REFUSE),
    _f("any", "torch.any", R, _RED_REFUSE),
    _f("count_nonzero", "torch.count_nonzero", R),
    # shape and layout
    _f("reshape", "torch.reshape", S, {"order": COMMON_REFUSALS["order"]}, view="shape"),
    _f("ravel", "torch.reshape", S, {"order": COMMON_REFUSALS["order"]}, view="shape"),
    _f("transpose", "torch.permute", S, aliases=("permute_dims",), view="permute"),
    _f("squeeze", "torch.squeeze", S, view="shape"),
    _f("expand_dims", "torch.unsqueeze", S, view="shape"),
    _f("concatenate", "torch.cat", S, aliases=("concat",)),
    _f("stack", "torch.stack", S),
    _f("hstack", "torch.cat", S),
    _f("vstack", "torch.cat", S, aliases=("row_stack",)),
    _f("column_stack", "torch.cat", S),
    _f("block", "torch.cat", S, note="Nested lists as NumPy assembles them: the innermost along the last axis."),
    _f("split", "torch.split", S),
    _f("array_split", "torch.tensor_split", S),
    _f("swapaxes", "torch.transpose", S, view="permute"),
    _f("moveaxis", "torch.movedim", S, view="permute"),
    _f("roll", "torch.roll", S),
    _f("flip", "torch.flip", S),
    _f("broadcast_to", "torch.broadcast_to", S),
    _f("atleast_1d", "torch.atleast_1d", S),
    _f("atleast_2d", "torch.atleast_2d", S),
    _f("atleast_3d", "torch.atleast_3d", S),
    _f("tile", "torch.tile", S),
    _f("repeat", "torch.repeat_interleave", S),
    # selection
    replace(_f("where", "torch.where", SEL), data_sized="one-argument"),
    _f("sort", "torch.sort", SEL, note="Matches NumPy's stable sort (kind='stable'); ties keep input order."),
    _f("argsort", "torch.argsort", SEL, note="Stable: ties keep input order, as kind='stable'."),
    replace(_f("nonzero", "torch.nonzero", SEL, note="Output size follows the data."), data_sized="always"),
    _f("take", "torch.take_along_dim", SEL),
    _f("take_along_axis", "torch.take_along_dim", SEL),
    # linear algebra
    _f("dot", "torch.matmul", LA),
    _f("einsum", "torch.einsum", LA, {}),
    _f("tensordot", "torch.tensordot", LA),
    _f("trace", "torch.diagonal", LA),
    _f("tril", "torch.tril", LA),
    _f("triu", "torch.triu", LA),
    _f("outer", "torch.outer", LA),
    _f("inner", "torch.inner", LA),
    _f("cross", "torch.mul", LA, note="Product by product, then difference by difference, as NumPy computes "
                                      "it (bit for bit; torch.linalg.cross may fuse them). 2-vectors too."),
    _f("linalg.norm", "torch.linalg.norm", LA),
    # array creation
    _f("zeros_like", "torch.zeros", CR, {}),
    _f("ones_like", "torch.ones", CR, {}),
    _f("full_like", "torch.full", CR, {}),
    _f("empty_like", "torch.zeros", CR, {},
       note="Recorded as zeros: the graph never exposes uninitialised memory."),
    _f("zeros", "torch.zeros", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("ones", "torch.ones", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("full", "torch.full", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("empty", "torch.zeros", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("arange", "torch.arange", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("linspace", "torch.linspace", CR),
    _f("eye", "torch.eye", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("identity", "torch.eye", CR, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    # conversion
    _f("copy", "torch.clone", CV, {}),
    _f("asarray", "torch.Tensor.to", CV, {"like": COMMON_REFUSALS["like"]},
       kind="bypass", note="Keeps tracing while a leapp session is active."),
    _f("array", "torch.clone", CV, {"like": COMMON_REFUSALS["like"], "ndmin": COMMON_REFUSALS["ndmin"]},
       kind="bypass", note="Keeps tracing while a leapp session is active."),
    _f("asanyarray", "torch.Tensor.to", CV, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("ascontiguousarray", "torch.Tensor.contiguous", CV, {"like": COMMON_REFUSALS["like"]}, kind="bypass"),
    _f("isclose", "torch.isclose", C),
    _f("allclose", "torch.allclose", C, note="Returns a traced 0-d bool; branching on it is a data-dependent if."),
    _f("array_equal", "torch.equal", C),
    _f("nan_to_num", "torch.nan_to_num", A),
]

# Functions whose answer depends only on shapes and dtypes, which are static
# while tracing: they run as in NumPy and record nothing.
STATIC = [
    _f(n, "(static)", "Conversion", kind="static")
    for n in ("shape", "ndim", "size", "result_type", "may_share_memory", "shares_memory",
              "iscomplexobj", "isrealobj", "min_scalar_type", "can_cast")
]

# Torch-side conversions the seed lists (the traced torch tensor handles the rest).
TORCH_FUNCTIONS = [
    # the tensor carries its array's graph value: no node of its own (a cast with dtype=)
    Entry("torch.from_numpy", "torch.from_numpy", CV, kind="bypass", note="Gives a traced torch tensor.",
          records=""),
    Entry("torch.as_tensor", "torch.as_tensor", CV, kind="bypass", note="Gives a traced torch tensor; honours dtype=.",
          records=""),
    Entry("torch.tensor", "torch.tensor", CV, kind="bypass", note="Gives a traced torch tensor.", records=""),
]
