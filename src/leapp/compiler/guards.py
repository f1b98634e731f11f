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

    __slots__ = ("holders", "contents", "values", "items")

    def __init__(self, holders, contents, values=(), items=()):
        self.holders = holders  # (label, mapping or cell, key, array)
        self.contents = contents  # (label, array, bytes at the trace)
        self.values = values  # (label, mapping or cell, key, number/str/None): compared by value
        self.items = items  # (label, list or dict, its items at the trace): compared item by item

    def __bool__(self):
        return bool(self.holders or self.contents or self.values or self.items)

    def changed(self):
        """None while every watched array is the same object with the same bytes, every watched
        number the same value and every watched list or dict the same items; otherwise a phrase
        naming what changed."""
        for label, where, key, arr in self.holders:
            now = where.cell_contents if key is None else where.get(key, _GONE)
            if now is not arr:
                return f"{label} was rebound"
        for label, where, key, value in self.values:
            now = where.cell_contents if key is None else where.get(key, _GONE)
            if not _same_value(now, value):
                return f"{label} changed ({value!r} at the trace, {now!r} now)"
        for label, container, snapshot in self.items:
            now = _items(container)
            if len(now) != len(snapshot) or not all(
                    a is b or _same_value(a, b) for a, b in zip(now, snapshot, strict=True)):
                return f"an item of {label} was rebound"
        for label, arr, snapshot in self.contents:
            if arr.tobytes() != snapshot:
                return f"{label} was changed in place"
        return None


_GONE = object()  # a name or attribute deleted since the trace

# Values the trace reads by value (a gain, a slice bound, a flag a branch tests), folded into the
# graph as they were: watched by type and value (NaN by identity: NaN != NaN)
_VALUES = (bool, int, float, complex, str, bytes, type(None), np.generic)
_MAX_ITEMS = 64  # a list or dict watched item by item; a longer one by identity only
_MAX_DEPTH = 3  # attributes followed from an argument, a global or a closure value (a.b.c.d)


def _is_value(v) -> bool:
    return isinstance(v, _VALUES) and not (isinstance(v, np.generic) and v.dtype.hasobject)


def _same_value(now, then) -> bool:
    if now is then:
        return True
    if type(now) is not type(then) or not _is_value(then):
        return False
    try:
        return bool(now == then)
    except Exception:
        return False


def _items(container) -> tuple:
    return tuple(container.items()) if isinstance(container, dict) else tuple(container)


class _Slots:
    """An object's ``__slots__`` attributes as a mapping (``where.get(name)``), for a guard."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def get(self, key, default=None):
        return getattr(self.obj, key, default)


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


def build(fn, trace, args, kwargs, arg_names) -> Guards | None:
    """The guards for one trace of ``fn`` (the user's function: its globals and closure) on
    ``args``/``kwargs`` (the call's own objects, as the user passed them)."""
    w = _Watch(_code_names(fn))
    glob = getattr(fn, "__globals__", None)
    if isinstance(glob, dict):
        for n in w.names & glob.keys():
            w.found(f"the global {n!r}", glob, n, glob[n], 0)
    code = getattr(fn, "__code__", None)
    for n, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or (), strict=False):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        w.found(f"the closure variable {n!r}", cell, None, value, 0)
    params = list(zip(arg_names, args, strict=False)) + list(kwargs.items())
    for pname, obj in params:
        w.attributes(pname, obj, 0)  # the argument itself is the call's: only what it holds is state
    holders, seen = w.holders, w.seen
    contents: list = []
    watched: set = set()
    for label, _, _, arr in holders:
        if _plain(arr) and id(arr) not in watched and arr.nbytes <= MAX_WATCHED_BYTES:
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
    guards = Guards(holders, contents, w.values, w.items)
    return guards if guards else None


class _Watch:
    """What ``build`` found: each value the function's code can reach by a name it loads (a global,
    a closure cell, an attribute of either or of an argument, a class attribute), with its holder."""

    def __init__(self, names):
        self.names = names
        self.holders: list = []
        self.values: list = []
        self.items: list = []
        self.seen: dict = {}
        self._visited: set = set()

    def found(self, label, where, key, value, depth):
        if _plain(value):
            self.holders.append((label, where, key, value))
            self.seen.setdefault(id(value), label)
        elif _is_value(value):
            self.values.append((label, where, key, value))
        elif isinstance(value, (list, dict, tuple)):
            self.holders.append((label, where, key, value))  # rebound: by identity
            if isinstance(value, (list, dict)) and len(value) <= _MAX_ITEMS:
                self.items.append((label, value, _items(value)))
            self._contained(label, value)
        elif isinstance(value, type):
            self.attributes(label, value, depth + 1)
        elif _holds_data(value):
            self.holders.append((label, where, key, value))  # an object rebound (`self.cfg = new`)
            self.attributes(label, value, depth + 1)

    def _contained(self, label, container):
        """Arrays in a list, tuple or dict (``self.stats["mean"]``): their bytes are watched."""
        values = container.values() if isinstance(container, dict) else container
        for i, v in enumerate(list(values)[:_MAX_ITEMS]):
            if _plain(v):
                self.seen.setdefault(id(v), f"an item of {label}")
                self.holders.append((f"an item of {label}", _Fixed(v), i, v))

    def attributes(self, label, obj, depth):
        """The attributes of ``obj`` named in the code: its own (``__dict__`` or ``__slots__``) and
        those it finds on its class (``self.W`` set as ``W = ...`` in the class body)."""
        if depth > _MAX_DEPTH or id(obj) in self._visited or isinstance(obj, types.ModuleType):
            return
        self._visited.add(id(obj))
        own = getattr(obj, "__dict__", None)
        if isinstance(obj, type):
            for cls in obj.__mro__[:-1]:  # a class: its body's names (`cls.W`, `Obs.SCALE`)
                d = cls.__dict__
                for n in self.names & d.keys():
                    self.found(f"{label}.{n}", d, n, d[n], depth)
            return
        names = self.names
        if isinstance(own, dict):
            for n in names & own.keys():
                self.found(f"{label}.{n}", own, n, own[n], depth)
        else:
            own = {}
        slots = _Slots(obj)
        for cls in type(obj).__mro__[:-1]:
            d = cls.__dict__
            declared = d.get("__slots__", ())
            for n in names & set((declared,) if isinstance(declared, str) else declared):
                value = getattr(obj, n, _GONE)
                if value is not _GONE:
                    self.found(f"{label}.{n}", slots, n, value, depth)
            for n in names & d.keys():  # found on the class: only where the instance has none
                if n not in own and not isinstance(d[n], (types.FunctionType, property, staticmethod,
                                                          classmethod, types.MemberDescriptorType)):
                    self.found(f"{label}.{n}", d, n, d[n], depth)


def _holds_data(value) -> bool:
    """An object of a user's class (a config, a filter, a normaliser): attributes of its own."""
    if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.CodeType, np.ufunc)):
        return False
    return isinstance(getattr(value, "__dict__", None), dict) or any(
        "__slots__" in c.__dict__ for c in type(value).__mro__[:-1])


class _Fixed:
    """A holder that always holds what it held: an array inside a container is watched by its
    bytes (the container's items by ``Guards.items``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def get(self, key, default=None):
        return self.value


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
