"""From a NumPy callable object to its translation-table name.

Lookup is by identity, built once from the table, so ``np.abs`` and
``np.absolute`` (one object) both find ``numpy.absolute``, and a name is
never guessed from ``__module__`` for a function the table lists.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .. import table


def resolve(dotted: str):
    """The NumPy object a table name spells (``"numpy.linalg.norm"``), or None."""
    parts = dotted.split(".")
    if parts[0] != "numpy":
        return None
    obj: Any = np
    for part in parts[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _build() -> dict[int, Any]:
    found: dict[int, Any] = {}
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


_ufunc_names: dict[tuple[int, str], tuple[Any, str]] = {}  # (id(ufunc), method) -> (ufunc, name)


def ufunc_name(ufunc, method: str) -> str:
    hit = _ufunc_names.get((id(ufunc), method))
    if hit is not None and hit[0] is ufunc:
        return hit[1]
    short = ufunc.__name__
    if getattr(np, short, None) is ufunc:
        base = table.canonical("numpy." + short)
    else:  # scipy.special.erf is a ufunc too: named where it lives, not "numpy.erf"
        base = _foreign_ufunc_name(ufunc)
    name = base if method == "__call__" else f"{base}.{method}"
    if len(_ufunc_names) < 4096:
        _ufunc_names[(id(ufunc), method)] = (ufunc, name)
    return name


def _foreign_ufunc_name(ufunc) -> str:
    """The public module path of a ufunc that is not NumPy's (the shortest loaded module holding it)."""
    attr = ufunc.__name__
    found = [name for name, module in list(sys.modules.items())
             if module is not None and not name.startswith("numpy")
             and not any(part.startswith("_") for part in name.split("."))
             and getattr(module, attr, None) is ufunc]
    if not found:
        return table.canonical("numpy." + attr)
    return min(found, key=lambda n: (n.count("."), len(n))) + "." + attr


# Built at import, never during a session: resolving names imports NumPy's lazy
# submodules (numpy.random), whose initialisation must not meet leapp's patches.
_by_object = _build()
