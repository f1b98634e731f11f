"""ndarray methods and attributes.

ndarray methods are C code: ``x.reshape`` or ``x.dot`` never reach
``__array_function__``. ``TracedNpArray`` overrides each one listed here and
routes it to the entry named by ``same_as`` (with ``self`` as the first
argument) or to a method-specific adapter, so no method result inherits its
source's graph node by accident.
"""

from __future__ import annotations

from ._schema import COMMON_REFUSALS, Entry

_ORDER = {"order": COMMON_REFUSALS["order"]}


def _m(name, same_as=None, torch="", category="Conversion", refuse=None, note="", view="", records=None):
    return Entry(
        name="ndarray." + name,
        torch=torch,
        category=category,
        kind="method",
        refuse=dict(refuse or {}),
        same_as=None if same_as is None else "numpy." + same_as,
        note=note,
        view=view,
        records=records,
    )


# Methods that are the function of the same name with ``self`` first.
_SAME = {
    "Reductions": ["sum", "prod", "mean", "std", "var", "min", "max", "argmin", "argmax",
                   "cumsum", "cumprod", "all", "any"],
    "Selection": ["clip", "argsort", "nonzero", "take"],
    "Shape and layout": ["squeeze", "swapaxes", "repeat", "ravel"],
    "Linear algebra": ["dot", "trace"],
    "Arithmetic and math": ["round", "conj", "conjugate"],
}

METHODS = [
    _m(n, same_as=n, category=cat, torch=f"(as numpy.{n})")
    for cat, names in _SAME.items()
    for n in names
] + [
    _m("reshape", torch="torch.reshape", category="Shape and layout", refuse=_ORDER, view="shape",
       records="numpy.reshape", note="Accepts NumPy's x.reshape(2, 3) and x.reshape((2, 3)) forms."),
    _m("transpose", torch="torch.permute", category="Shape and layout", view="permute",
       records="numpy.transpose", note="Accepts x.transpose(1, 0) and x.transpose((1, 0))."),
    _m("T", torch="torch.permute", category="Shape and layout", note="Property.", view="permute",
       records="numpy.transpose"),
    _m("mT", torch="torch.transpose", category="Shape and layout", note="Property.", view="permute",
       records="numpy.swapaxes"),
    _m("real", torch="torch.real", category="Arithmetic and math", note="Property.", records="numpy.real"),
    _m("imag", torch="torch.imag", category="Arithmetic and math", note="Property.", records="numpy.imag"),
    _m("flatten", torch="torch.reshape", category="Shape and layout", refuse=_ORDER),
    _m("astype", torch="torch.Tensor.to", refuse={}),
    _m("copy", torch="torch.clone"),
    _m("view", torch="torch.Tensor.view", records="",
       note="Only x.view(), x.view(np.ndarray) and x.view(x.dtype); reinterpreting bytes is "
            "refused (UnsupportedArgumentError at the line)."),
    _m("fill", torch="torch.full_like", category="Array creation", note="In place: rebinds the array."),
    _m("sort", torch="torch.sort", category="Selection", note="In place, stable.", records="numpy.sort"),
    _m("__getitem__", torch="operator.getitem", category="Selection",
       note="Basic slicing with negative steps (recorded as flips), Ellipsis, None, "
            "boolean masks and integer index arrays."),
    _m("__setitem__", torch="index_put", category="Selection",
       note="Recorded functionally: the graph stays pure."),
]
