"""Traced arrays that outlive their trace: found by what holds them, not by how they got there.

Every ``TracedNpArray`` made while a trace is open is watched by a weak
reference (``TracedNpArray.__array_finalize__`` is the one place NumPy makes
them all, however it makes them). When the traced call has returned and leapp
has dropped its own references, a watched array that is still alive is held
by something else: an attribute of an object, a global, a closure cell, a
container, a library's cache, or a plain array that views its memory. Whatever
the mechanism that put it there (the user's code, a library method's
``self.x = ...``, C code), the graph cannot reproduce it: the next call would
start from a value frozen at trace time. Each holder is named and its traced
array is swapped for the plain array of the same memory, so the user's object
keeps NumPy's value and no traced array is left behind.
"""

from __future__ import annotations

import collections
import gc
import types
from typing import Any

import numpy as np

_ndarray = np.ndarray
_MAX_REPORTED = 8
_MAX_SEARCHED_AFTER_FAILURE = 16


def survivors(made, collect=True) -> list:
    """The watched arrays still alive (after collecting garbage cycles, which may hold some)."""
    alive = [a for r in made if (a := r()) is not None]
    if not alive or not collect:
        return alive
    del alive
    gc.collect()
    return [a for r in made if (a := r()) is not None]


def holders(arr, skip) -> list[tuple[str, Any]]:
    """``(description, put)`` for each place holding ``arr``; ``put(value)`` replaces it there
    (``None`` where it cannot, e.g. a tuple). Frames and ``skip`` (leapp's own lists) are not
    holders; a plain view of the array is followed to what holds the view."""
    out: list[tuple[str, object]] = []
    _walk(arr, skip | {id(arr)}, out, "", 0)
    return out


def _walk(target, skip, out, via, depth):
    for ref in gc.get_referrers(target):
        if id(ref) in skip or isinstance(ref, types.FrameType):
            continue
        if isinstance(ref, _ndarray):
            if ref.base is target and depth < 3:  # a view: whoever holds it holds the data
                _walk(ref, skip | {id(ref)}, out, "a view of it held as ", depth + 1)
            continue
        if isinstance(ref, dict):
            for key, value in list(ref.items()):
                if value is target:
                    out.append((via + _dict_owner(ref, key, skip), _setter(ref, key)))
        elif isinstance(ref, (list, collections.deque)):  # a deque: a history or frame stack
            kind = "list" if isinstance(ref, list) else _type_name(ref)
            for i, value in enumerate(ref):
                if value is target:
                    out.append((via + f"item {i} of a {kind}{_owner_of(ref, skip)}", _setter(ref, i)))
        elif isinstance(ref, (tuple, set, frozenset)):
            if not _is_leapp(ref):
                out.append((via + f"an item of a {type(ref).__name__}{_owner_of(ref, skip)}", None))
        elif isinstance(ref, types.CellType):
            out.append((via + f"a closure variable{_cell_owner(ref)}", _cell_setter(ref)))
        elif not _is_leapp(ref):
            slot = _attribute_of(ref, target)
            where = f"attribute {slot!r} of a {_type_name(ref)} object" if slot else \
                f"a {_type_name(ref)} object"
            out.append((via + where, (lambda v, o=ref, s=slot: setattr(o, s, v)) if slot else None))


def _dict_owner(d, key, skip) -> str:
    for owner in gc.get_referrers(d):
        if id(owner) in skip or isinstance(owner, types.FrameType):
            continue
        if isinstance(owner, types.ModuleType) and owner.__dict__ is d:
            return f"global {key!r} of module {owner.__name__}"
        if getattr(owner, "__dict__", None) is d and not isinstance(owner, type):
            return f"attribute {key!r} of a {_type_name(owner)} object"
        if isinstance(owner, type) and owner.__dict__ is d:
            return f"class attribute {key!r} of {owner.__qualname__}"
    return f"key {key!r} of a dict"


def _owner_of(container, skip) -> str:
    for owner in gc.get_referrers(container):
        if id(owner) in skip or isinstance(owner, types.FrameType):
            continue
        if isinstance(owner, dict):
            for key, value in owner.items():
                if value is container:
                    return f" ({_dict_owner(owner, key, skip)})"
        elif not isinstance(owner, (list, tuple, set, frozenset)) and not _is_leapp(owner):
            slot = _attribute_of(owner, container)  # an attribute CPython holds inline (3.11+)
            if slot:
                return f" (attribute {slot!r} of a {_type_name(owner)} object)"
    return ""


def _cell_owner(cell) -> str:
    for owner in gc.get_referrers(cell):
        if isinstance(owner, tuple):
            for fn in gc.get_referrers(owner):
                if isinstance(fn, types.FunctionType) and fn.__closure__ is owner:
                    names = fn.__code__.co_freevars
                    i = next(k for k, c in enumerate(owner) if c is cell)  # by identity: == on arrays
                    return f" {names[i]!r} of {fn.__qualname__}"
    return ""


def _attribute_of(obj, target):
    """The name under which ``obj`` holds ``target``: an instance attribute (CPython 3.11+ may hold
    them inline, so the object itself is the referrer) or a slot."""
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        for name, value in attrs.items():
            if value is target:
                return name
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        for name in slots if isinstance(slots, (tuple, list)) else (slots,):
            try:
                if getattr(obj, name) is target:
                    return name
            except AttributeError:
                continue
    return None


def _setter(container, key):
    def put(value):
        container[key] = value
    return put


def _cell_setter(cell):
    def put(value):
        cell.cell_contents = value
    return put


def _type_name(obj) -> str:
    t = type(obj)
    return t.__qualname__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"


def _is_leapp(obj) -> bool:
    module = getattr(type(obj), "__module__", "") or ""
    return module.startswith("leapp.")


def describe(arr, where, format_loc, entered=None) -> str:
    node = arr._lp_node
    if node is not None and node.op == "input":
        made = f"the input {node.args[0]!r}" + (f" of {entered}" if entered else "")
    else:
        made = f"computed at {format_loc(node.loc)}" if node is not None and node.loc is not None else "a traced value"
    return f"a traced array ({made}) is still held by {where} after the call"


def settle(made, skip, plain, format_loc, *, failed=False, entered=None) -> list[tuple[object, str]]:
    """Find every watched array still alive and held outside leapp, swap it for its plain twin
    where it is held, and return ``(loc, message)`` per holder (at most a few, then a count).

    ``failed``: after a call that raised, whose traceback's frames hold its arrays anyway: no
    collection, and only the newest few are searched (each search scans the heap).
    ``entered``: the traced function and its line, named for an input something kept."""
    found: list[tuple[object, str]] = []
    extra = 0
    alive = survivors(made, collect=not failed)
    if failed:
        alive = alive[-_MAX_SEARCHED_AFTER_FAILURE:]
    skip = skip | {id(alive), id(made)}
    for arr in alive:
        for where, put in holders(arr, skip):
            if put is not None:
                put(plain(arr))
            if len(found) < _MAX_REPORTED:
                node = arr._lp_node
                found.append((node.loc if node is not None else None, describe(arr, where, format_loc, entered)))
            else:
                extra += 1
    if extra:
        found.append((None, f"and {extra} more place(s) holding traced arrays"))
    return found
