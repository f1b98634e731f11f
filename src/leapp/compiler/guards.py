"""Guards on the state a graph froze: arrays read from outside the call.

A traced graph holds every plain NumPy array it read as a constant: a module's
``MEAN``, a normaliser's ``self.mean``, a closure's table, a library's cached
matrix. NumPy reads them afresh at every call; the graph would keep what they
held when it was traced. So that the graph is never silently stale, each such
array is watched from call to call:

- its contents: an in-place update (``self.mean += delta``, ``MEAN[:] = ...``,
  ``np.copyto(buf, new)``) is seen by comparing its bytes with the snapshot;
- where it was found: an attribute of an argument (``self.mean``, one level
  deeper as ``self.rms.mean``), a global of the function's module, or a
  closure cell, each named in the function's code. Rebinding it
  (``self.mean = new_mean``) is seen by identity.

When a guard fails the graph is traced again on the call's inputs, as NumPy
would read the new state; ``CompiledFunction`` warns once (``RetraceWarning``)
when it keeps happening, since state that changes at every call belongs in the
arguments or in ``leapp.compile(state=...)``. The exported artifact is a
snapshot: it holds the values at the trace.

Cost per call: one identity test per holder and one ``bytes`` comparison per
watched array (memcmp of a copy: about 0.3 µs for a 100-element vector).
"""

from __future__ import annotations

import sys
import types

import numpy as np

# Arrays over this many bytes are watched by identity only (their holder), not by contents: a
# per-call copy of a large table would cost more than the graph it feeds. Documented in
# docs/limitations.md.
MAX_WATCHED_BYTES = 1 << 20
WARN_AFTER = 3  # traces again for changed state before CompiledFunction's RetraceWarning


class Guards:
    """What one graph read from outside; ``changed()`` names the first thing that differs now."""

    __slots__ = ("holders", "contents")

    def __init__(self, holders, contents):
        self.holders = holders  # (label, mapping or cell, key, array)
        self.contents = contents  # (label, array, bytes at the trace)

    def __bool__(self):
        return bool(self.holders or self.contents)

    def changed(self):
        """None while every watched array is the same object with the same bytes; otherwise a
        phrase naming what changed."""
        for label, where, key, arr in self.holders:
            now = where.cell_contents if key is None else where.get(key)
            if now is not arr:
                return f"{label} was rebound"
        for label, arr, snapshot in self.contents:
            if arr.tobytes() != snapshot:
                return f"{label} was changed in place"
        return None


def _code_names(fn) -> set:
    """Every attribute and global name the function's code loads (nested code objects included),
    and, transitively, the code of the functions of the same module it names: a helper's global
    (``np.sqrt(OBS_VAR + EPS)``, folded by NumPy before any hook sees it) is read state too."""
    glob = getattr(fn, "__globals__", None)
    names, done, todo = set(), set(), [getattr(fn, "__code__", None)]
    while todo:
        code = todo.pop()
        if code is None or id(code) in done:
            continue
        done.add(id(code))
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        if isinstance(glob, dict):
            for n in code.co_names:
                helper = glob.get(n)
                if isinstance(helper, types.FunctionType) and helper.__globals__ is glob:
                    todo.append(helper.__code__)
    return names


def _plain(value) -> bool:
    return type(value) is np.ndarray


def _objects_dict(obj):
    d = getattr(obj, "__dict__", None)
    return d if isinstance(d, dict) and not isinstance(obj, (type, types.ModuleType)) else None


def build(fn, trace, args, kwargs, arg_names) -> Guards | None:
    """The guards for one trace of ``fn`` (the user's function: its globals and closure) on
    ``args``/``kwargs`` (the call's own objects, as the user passed them)."""
    names = _code_names(fn)
    holders: list = []
    seen: dict = {}
    glob = getattr(fn, "__globals__", None)
    if isinstance(glob, dict):
        for n in names:
            value = glob.get(n)
            if _plain(value):
                holders.append((f"the global {n!r}", glob, n, value))
                seen[id(value)] = f"the global {n!r}"
    code = getattr(fn, "__code__", None)
    for n, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or (), strict=False):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _plain(value):
            holders.append((f"the closure variable {n!r}", cell, None, value))
            seen[id(value)] = f"the closure variable {n!r}"
    params = list(zip(arg_names, args, strict=False)) + list(kwargs.items())
    for pname, obj in params:
        d = _objects_dict(obj)
        if d is None:
            continue
        for n in names & d.keys():
            value = d[n]
            label = f"{pname}.{n}"
            if _plain(value):
                holders.append((label, d, n, value))
                seen[id(value)] = label
                continue
            inner = _objects_dict(value)
            if inner is None:
                continue
            for m in names & inner.keys():
                if _plain(inner[m]):
                    holders.append((f"{label}.{m}", inner, m, inner[m]))
                    seen[id(inner[m])] = f"{label}.{m}"
    contents: list = []
    watched: set = set()
    for label, _, _, arr in holders:
        if id(arr) not in watched and arr.nbytes <= MAX_WATCHED_BYTES:
            watched.add(id(arr))
            contents.append((label, arr, arr.tobytes()))
    # every other plain array the graph froze that something outside the trace still holds: a
    # global of the module of the library line that read it (found by identity, so rebinding it is
    # seen too), else a cache or default argument leapp cannot name (its contents are watched)
    for arr, node in list(getattr(trace, "_const_ids", {}).values()):
        if not _plain(arr) or id(arr) in seen:
            continue
        # references: the trace's (array, node) tuple, this loop's name and getrefcount's argument
        if sys.getrefcount(arr) <= 3:
            continue
        holder = _library_global(node, arr)
        if holder is not None:
            label = f"the global {holder[1]!r} of {holder[2]}"
            holders.append((label, holder[0], holder[1], arr))
            seen[id(arr)] = label
        else:
            label = f"the array frozen at {_where(node)}"
        if id(arr) not in watched and arr.nbytes <= MAX_WATCHED_BYTES:
            watched.add(id(arr))
            contents.append((label, arr, node_bytes(node, arr)))
    guards = Guards(holders, contents)
    return guards if guards else None


_by_file: dict = {}  # a module's __file__ -> (its __dict__, its name), rebuilt when sys.modules grows
_by_file_n = [-1]


def _library_global(node, arr):
    """``(module dict, name, module name)`` of the global holding ``arr`` in the module whose line
    (a helper's, ``loc[4]``) read it, if any."""
    loc = getattr(node, "loc", None)
    helper = loc[4] if isinstance(loc, tuple) and len(loc) > 4 else None
    if not helper:
        return None
    if len(sys.modules) != _by_file_n[0]:
        _by_file.clear()
        for mod_name, mod in list(sys.modules.items()):
            d = getattr(mod, "__dict__", None)
            f = d.get("__file__") if type(d) is dict else None
            if isinstance(f, str):
                _by_file[f] = (d, mod_name)
        _by_file_n[0] = len(sys.modules)
    found = _by_file.get(helper[0])
    if found is None:
        return None
    d, mod_name = found
    for key, value in list(d.items()):
        if value is arr:
            return d, key, mod_name
    return None


def node_bytes(node, arr) -> bytes:
    """The bytes the graph holds for a frozen array: the trace's snapshot when it has one."""
    value = getattr(node, "value", None)
    if isinstance(value, np.ndarray) and value.shape == arr.shape and value.dtype == arr.dtype:
        return np.ascontiguousarray(value).tobytes()
    return arr.tobytes()


def _where(node) -> str:
    from ..runtime.ir import format_loc

    loc = getattr(node, "loc", None)
    return format_loc(loc) if loc else "an unknown line"
