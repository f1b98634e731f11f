"""From a NumPy callable object to its translation-table name.

Lookup is by identity, built once from the table, so ``np.abs`` and
``np.absolute`` (one object) both find ``numpy.absolute``, and a name is
never guessed from ``__module__`` for a function the table lists.
"""

from __future__ import annotations

import numpy as np

from .. import table


def resolve(dotted: str):
    """The NumPy object a table name spells (``"numpy.linalg.norm"``), or None."""
    parts = dotted.split(".")
    if parts[0] != "numpy":
        return None
    obj = np
    for part in parts[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _build() -> dict:
    found = {}
    for name, entry in table.TABLE.items():
        for dotted in (name, *getattr(entry, "aliases", ())):
            obj = resolve(dotted)
            if obj is not None and callable(obj):
                found.setdefault(id(obj), (obj, name))
    return found


def function_name(func) -> str:
    """The table name of a function seen by ``__array_function__``."""
    hit = _by_object.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    owner = getattr(func, "__self__", None)
    if isinstance(owner, np.ufunc):  # np.add.reduce: a bound method of the ufunc, made per access
        return ufunc_name(owner, func.__name__)
    module = getattr(func, "__module__", None) or "numpy"
    if not module.startswith("numpy"):
        module = "numpy"
    elif module.startswith("numpy._") or module.startswith("numpy.lib._"):
        module = "numpy"
    return table.canonical(f"{module}.{getattr(func, '__name__', repr(func))}")


def ufunc_name(ufunc, method: str) -> str:
    base = table.canonical("numpy." + ufunc.__name__)
    return base if method == "__call__" else f"{base}.{method}"


# Built at import, never during a session: resolving names imports NumPy's lazy
# submodules (numpy.random), whose initialisation must not meet leapp's patches.
_by_object = _build()
