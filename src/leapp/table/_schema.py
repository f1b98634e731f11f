"""The shape of a translation-table entry.

This module is pure data: it imports neither torch nor numpy, so the static
linter (``leapp lint``) can read the table without paying for either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The seed's categories, in the order its table lists them, plus the rows
# that later coverage adds.
CATEGORIES = (
    "Arithmetic and math",
    "Comparison and logic",
    "Reductions",
    "Shape and layout",
    "Selection",
    "Linear algebra",
    "Array creation",
    "Conversion",
    "Statistics",
    "Signal and geometry",
)

# Keywords that no NumPy callable in the table honours inside a graph. Each
# maps to the reason given to the user, who sees it at the call (runtime) or
# at the source line (lint).
COMMON_REFUSALS = {
    "where": "a masked ufunc leaves the unmasked output elements uninitialised; "
    "use np.where(mask, f(x), fallback) instead",
    "order": "order='F' reorders the elements, which the graph does not reproduce; "
    "reshape in C order (transpose first if you need Fortran order)",
    "signature": "signature= forces a ufunc loop that torch has no equivalent for; "
    "cast the operands with .astype(...) instead",
    "like": "like= dispatches to another array library; drop it",
    "ndmin": "ndmin= is not supported; use np.expand_dims or reshape",
}

# Values of a refused keyword that change nothing (NumPy's defaults and the
# settings that only affect memory layout or error checking). A keyword with
# one of these values is accepted.
HARMLESS_VALUES = {
    "where": (True,),
    "order": ("C", "K", "A", None),
    "signature": (None,),
    "like": (None,),
    "ndmin": (0,),
    "subok": (False,),
    "writeable": (False,),
}


@dataclass(frozen=True)
class Entry:
    """A NumPy callable that leapp traces.

    ``name`` is NumPy's qualified name as a string: ``"numpy.clip"``,
    ``"numpy.linalg.norm"``, ``"numpy.add.reduce"`` for a ufunc method, or
    ``"ndarray.sum"`` for an array method. ``torch`` is what the recorded graph
    calls (dotted, for documentation and for the generic ufunc adapter).
    ``refuse`` maps keyword names to the reason they are refused. ``same_as``
    makes a method share the function's implementation (``ndarray.sum`` is
    ``numpy.sum`` with ``self`` first).
    """

    name: str
    torch: str
    category: str
    kind: str = "function"  # "ufunc", "function", "method", "ufunc_method", "bypass"
    refuse: dict = field(default_factory=dict)
    aliases: tuple = ()
    same_as: str | None = None
    note: str = ""
    # "" for ops that make new arrays. For ops whose NumPy result is a view of
    # their first argument: "shape" (reshape-like) or "permute" (axis order);
    # writes through such a view are recorded back into the base array.
    view: str = ""
    # The op a call of this entry appends to the runtime trace, when that is
    # neither its own name nor its ``same_as``: ``ndarray.reshape`` records
    # ``numpy.reshape``. "" for a method whose result is its operand's own
    # graph value (``x.view()``): it records no node. Both stages read it: the
    # runtime's method overrides call the function it names, and the
    # cross-check matches a method's call site to the nodes it recorded.
    records: str | None = None
    # Whether the result's size is decided by the values, not the shapes: "always" (np.nonzero),
    # "one-argument" (np.where(cond)), or "". The runtime treats every size derived from such a
    # result as data: read into Python (len, .shape, .size, iteration) it is an escape.
    data_sized: str = ""

    @property
    def recorded_op(self) -> str:
        """The op a call records in the trace ("" when it records none, see ``records``)."""
        if self.records is not None:
            return self.records
        return self.same_as or self.name

    @property
    def supported(self) -> bool:
        return True


@dataclass(frozen=True)
class Unsupported:
    """A NumPy callable that leapp knowingly does not trace, with why and what to use."""

    name: str
    reason: str
    instead: str
    aliases: tuple = ()

    @property
    def supported(self) -> bool:
        return False


def display_name(name: str) -> str:
    """A callable's name as NumPy itself spells it (its ``__name__``).

    ``numpy.clip`` -> ``clip``, ``numpy.linalg.lstsq`` -> ``lstsq``,
    ``numpy.add.at`` -> ``add.at``; array methods keep ``ndarray.``.
    """
    if not name.startswith("numpy."):
        return name
    rest = name[len("numpy."):]
    head, _, tail = rest.partition(".")
    if tail and head in _SUBMODULES:
        return tail
    return rest


_SUBMODULES = frozenset({"linalg", "fft", "random", "lib", "ma", "polynomial", "char", "strings",
                         "rec", "emath", "testing", "exceptions", "dtypes"})


def untraced_message(name: str) -> str:
    """The seed's exact warning text for a call with no table entry."""
    return f"No torch equivalent for numpy function {name}. Operation will not be traced."
