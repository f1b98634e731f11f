"""The translation table: the single source of truth for what leapp traces.

Both stages read it: the runtime dispatcher (to pick the adapter that records
each call) and the static linter (to flag calls before anything runs). It is
pure data and imports neither torch nor numpy.

Names are NumPy's qualified names as strings: ``"numpy.clip"``,
``"numpy.linalg.norm"``, ``"numpy.add.reduce"``, ``"ndarray.sum"``.
"""

from __future__ import annotations

from ._schema import (
    CATEGORIES,
    COMMON_REFUSALS,
    HARMLESS_VALUES,
    Entry,
    Unsupported,
    display_name,
    untraced_message,
)
from .extended import EXTENDED, EXTENDED_METHODS, SCALAR_CASTS, STATIC_EXTRA
from .functions import FUNCTIONS, STATIC, TORCH_FUNCTIONS
from .methods import METHODS
from .ufuncs import UFUNC_METHODS, UFUNCS
from .unsupported import UNSUPPORTED

__all__ = [
    "CATEGORIES",
    "COMMON_REFUSALS",
    "HARMLESS_VALUES",
    "refused_keywords",
    "Entry",
    "Unsupported",
    "TABLE",
    "ALIASES",
    "lookup",
    "canonical",
    "untraced_message",
    "display_name",
]


def _build():
    table: dict[str, Entry | Unsupported] = {}
    aliases: dict[str, str] = {}
    for entry in [*UFUNCS, *UFUNC_METHODS, *FUNCTIONS, *STATIC, *TORCH_FUNCTIONS, *METHODS, *UNSUPPORTED,
                  *EXTENDED, *EXTENDED_METHODS, *SCALAR_CASTS, *STATIC_EXTRA]:
        if entry.name in table:
            raise RuntimeError(f"duplicate table entry {entry.name}")
        table[entry.name] = entry
        for alias in entry.aliases:
            aliases[alias] = entry.name
    return table, aliases


TABLE, ALIASES = _build()


def canonical(name: str) -> str:
    """The table's key for ``name`` (``numpy.abs`` -> ``numpy.absolute``)."""
    return ALIASES.get(name, name)


def lookup(name: str) -> Entry | Unsupported | None:
    """The entry for a qualified name, following aliases and unsupported prefixes.

    ``numpy.random.normal`` finds the ``numpy.random`` refusal. Returns None
    for a name the table does not know at all.
    """
    name = canonical(name)
    entry = TABLE.get(name)
    if entry is not None:
        return entry
    prefix = name
    while "." in prefix:
        prefix = prefix.rsplit(".", 1)[0]
        found = TABLE.get(prefix)
        if isinstance(found, Unsupported):
            return found
    return None


def refused_keywords(entry, kwargs: dict) -> list[tuple[str, str]]:
    """(keyword, reason) for each keyword in ``kwargs`` that ``entry`` refuses.

    ``kwargs`` maps keyword names to their values; a value of NumPy's default
    (see ``HARMLESS_VALUES``) is accepted. The linter passes ``...`` for a
    value it cannot evaluate, which counts as refused.
    """
    out = []
    for key, value in kwargs.items():
        reason = entry.refuse.get(key)
        if reason is None:
            continue
        harmless = HARMLESS_VALUES.get(key, ())
        if value is not ... and any(value is h or (type(value) is type(h) and value == h) for h in harmless):
            continue
        out.append((key, reason))
    return out
