"""Functions called inside a converted branch: proven free of side effects, recursively.

A select runs both branches, so a branch that calls ``qeye()``, ``NearZero(z)``
or ``AxisAng3(w)`` converts only when that function, run on the other branch's
inputs, changes nothing and cannot raise where the graph runs. The proof is the
plan's own (``plan._Checker``) applied to the function's body, with every
parameter taken to be a traced array (so a parameter used as an index is an
index on data), and to the functions *it* calls, to ``MAX_DEPTH`` calls deep;
each function is proven once (``Prover`` caches by the resolver's key).

Two things differ from a branch body, both because the test that decides them
is the helper's own, not the branch's:

- a ``raise`` or ``assert`` is allowed: its test either does not depend on the
  data (then it decides the same for every input of the traced shapes, and the
  trace itself would have raised), or it does, and then ``bool()`` of a traced
  value runs while tracing, which leapp sees (it converts the helper's branch,
  which refuses a branch that raises, or refuses the escape);
- ``try`` is refused: an ``except`` would turn an error raised while tracing
  (``math.sqrt`` of a negative value on the branch not taken) into a path.

Which function a call means is a *resolver*'s business: ``ModuleResolver``
finds a module-level ``def`` of the same file, statically (``leapp lint`` and
``leapp rewrite`` use it, and ``leapp.compile`` for the user's own code, so the
two show the same conversion); ``leapp.compiler.library`` resolves library code
through the function's globals. A resolver returns a ``Helper`` (the function's
source and how to resolve its calls), ``PURE`` (a function known free of side
effects: a ``math`` function leapp records), a reason (a string), or None (not a
function it knows: the plan's refusal stands).
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from typing import Any

from leapp.table.math_module import MATH_FUNCTIONS

MAX_DEPTH = 8  # helpers calling helpers: deeper than this is refused (and cycles are)
PURE = "pure"  # a resolver's answer for a function known free of side effects


@dataclass(frozen=True)
class Helper:
    """A function's source, to be proven, and how to resolve the calls it makes."""

    key: Any  # what the proof is cached by (a code object and source hash, a file and line)
    name: str  # as messages show it
    text: str  # its ``def``, as written
    path: str
    first_line: int
    imports: dict = field(default_factory=dict, hash=False, compare=False)  # its module's resolved names
    resolver: Any = field(default=None, hash=False, compare=False)


class _Local(threading.local):
    proving: tuple = ()  # the keys being proven, outermost first (a cycle is refused)
    # per proof being made, the methods ``self.m(...)`` it resolved (ModuleResolver._method): kept
    # with the cached verdict, so that a later analysis reusing it checks them on the traced object too
    methods: tuple = ()


_local = _Local()
_cache: dict = {}


def verdict(call: ast.Call, ctx) -> str | None:
    """None when the function ``call`` calls is proven free of side effects and of raising on the
    other branch's inputs; else why not ("" when no resolver knows it: the plan's refusal stands)."""
    resolver = getattr(ctx, "helpers", None)
    if resolver is None:
        return ""
    try:
        found = resolver.resolve(call.func, ctx)
    except Exception as exc:  # a resolver must not turn a refusal into a crash
        return f"it could not be looked up ({type(exc).__name__})"
    if found is None:
        return ""
    if found == PURE:
        return None
    if isinstance(found, str):
        return found
    return prove(found)


def prove(helper: Helper) -> str | None:
    """None when ``helper``'s body is free of side effects (recursively); else the reason."""
    got = _cache.get(helper.key, _MISSING)
    if got is not _MISSING:
        result, methods = got
        _resolved_methods(helper.resolver, methods)
        return result
    if helper.key in _local.proving:
        return f"`{helper.name}` calls itself (directly or through another function)"
    if len(_local.proving) >= MAX_DEPTH:
        return f"`{helper.name}` is more than {MAX_DEPTH} calls deep"
    _local.proving = (*_local.proving, helper.key)
    mine: set = set()
    _local.methods = (*_local.methods, mine)
    try:
        result = _prove(helper)
    finally:
        _local.proving = _local.proving[:-1]
        _local.methods = _local.methods[:-1]
    if len(_cache) > 1024:
        _cache.clear()
    _cache[helper.key] = (result, frozenset(mine))
    _resolved_methods(None, mine)
    return result


def _resolved_methods(resolver, methods) -> None:
    """``methods`` ((name, line) of ``self.m`` defs) were resolved for a proof: the analysis's
    resolver and every proof being made around this one hold them (``ModuleResolver.methods``)."""
    if not methods:
        return
    found = getattr(resolver, "methods", None)
    if isinstance(found, set):
        found.update(methods)
    for outer in _local.methods:
        outer.update(methods)


_MISSING = object()


def _prove(helper: Helper) -> str | None:
    from ..analyze import entry_context
    from .plan import _HelperChecker, _Refused

    try:
        fn, ctx = entry_context(helper.text, helper.path, first_line=helper.first_line,
                                imports=helper.imports, helpers=helper.resolver)
    except (SyntaxError, ValueError) as exc:
        return f"the source of `{helper.name}` cannot be read as one function ({exc})"
    if fn.decorator_list:
        return f"`{helper.name}` is decorated"
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"`{helper.name}` is a coroutine"
    try:
        _HelperChecker(ctx, f"`{helper.name}` ({_short(helper.path)})").block(fn.body, returns="any")
    except _Refused as exc:
        return str(exc)
    return None


def returns_array(call: ast.Call, ctx) -> bool:
    """Whether ``call`` calls a function the resolver knows (a module-level ``def`` of the same
    file, library code) every ``return`` of which gives an array when its parameters are arrays:
    ``n = norm2(x)`` then ``if n > 1:`` is a test on data, as ``n = np.linalg.norm(x)`` would be.

    The body is read in order with the dataflow rules (a name assigned in either arm of an
    ``if`` counts as assigned); each function is read once. A function with no ``return`` of a
    value, or one that also returns a non-array (``None``, a Python number), is not."""
    return _proved(call, ctx, "returns", _returns_array)


def _returns_array(helper: Helper) -> bool:
    from ..analyze import entry_context

    try:
        fn, walker = entry_context(helper.text, helper.path, first_line=helper.first_line,
                                   imports=helper.imports, helpers=helper.resolver)
    except (SyntaxError, ValueError):
        return False
    if fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
        return False
    verdicts: list[bool] = []

    def block(body) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Return):
                verdicts.append(stmt.value is not None and walker.is_array(stmt.value))
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    walker.bind(target, stmt.value)
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
                value = stmt.value if isinstance(stmt, ast.AnnAssign) else ast.BinOp(stmt.target, stmt.op, stmt.value)
                if value is not None and not (isinstance(stmt, ast.AugAssign) and stmt.target.id in walker.state.arrays):
                    walker.bind(stmt.target, value)
            elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for part in ("body", "orelse", "finalbody"):
                    block(getattr(stmt, part, []))
                for handler in getattr(stmt, "handlers", []):
                    block(handler.body)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walker.state.kill(stmt.name)

    block(fn.body)
    return bool(verdicts) and all(verdicts)


def returns_new(call: ast.Call, ctx) -> bool:
    """Whether ``call`` calls a function the resolver knows every ``return`` of which gives values
    that share no memory with its parameters (nor with anything outside it): ``n = unit(t)`` is
    then a new array, as ``n = t / np.linalg.norm(t)`` would be, not a view of ``t``."""
    return _proved(call, ctx, "new", _returns_new)


def _proved(call, ctx, what: str, prove) -> bool:
    """``prove(helper)`` for the function ``call`` calls, if the resolver knows it: read once per
    function and property (cached), False while the same proof is under way (recursion) or past
    ``MAX_DEPTH`` nested proofs, and False where reading it fails: a helper must never turn a
    lint or a refusal into a crash."""
    resolver = getattr(ctx, "helpers", None)
    if resolver is None:
        return False
    try:
        found = resolver.resolve(call.func, ctx)
    except Exception:
        return False
    if not isinstance(found, Helper):
        return False
    key = (what, found.key)
    got = _cache.get(key, _MISSING)
    if got is not _MISSING:
        return got
    if key in _local.proving or len(_local.proving) >= MAX_DEPTH:
        return False
    _local.proving = (*_local.proving, key)
    try:
        result = prove(found)
    except Exception:
        result = False
    finally:
        _local.proving = _local.proving[:-1]
    if len(_cache) > 1024:
        _cache.clear()
    _cache[key] = result
    return result


def _returns_new(helper: Helper) -> bool:
    from ..analyze import entry_context
    from . import owned
    from .plan import _facts

    try:
        fn, ctx = entry_context(helper.text, helper.path, first_line=helper.first_line,
                                imports=helper.imports, helpers=helper.resolver)
    except (SyntaxError, ValueError):
        return False
    if fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
        return False
    facts = _facts(fn)
    fl = owned._Flows(fn, ctx)
    family: set[str] = set()
    for node in owned._walk_scope(fn):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Return) and node.value is not None:
            family |= owned.shares(node.value, ctx)
    todo = list(family)
    while todo:  # every name that may share memory with a returned one, through any binding
        cur = todo.pop()
        for a, b, *_ in fl.edges:
            for x, y in ((a, b), (b, a)):
                if x == cur and y not in family:
                    family.add(y)
                    todo.append(y)
    for m in family:
        if m in facts.params or m in facts.declared or m not in facts.stores:
            return False
        if any(unknown is not None for _, _, unknown, _ in fl.stores.get(m, ())):
            return False
    return True


def _short(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# --- the static resolver: a module-level def of the same file -----------------------------


class ModuleResolver:
    """Resolves ``name(...)`` to the one module-level ``def name`` of a file (no decorator, no other
    binding of ``name`` anywhere in the module), when the calling scope does not bind ``name``."""

    def __init__(self, tree: ast.Module | None, text: str, path: str, imports: dict, first_line: int = 1,
                 scope_of=None, bound=None, methods: bool = True):
        self.tree, self.text, self.path, self.imports = tree, text, path, dict(imports)
        self.offset = first_line - 1
        self.scope_of = scope_of  # with no tree: the file is parsed when first asked, and its imports
        # (``scope_of(tree)``) resolve names in its defs
        self.bound = bound  # leapp.compile: bound(name, line) says the running module's `name` is that def
        self._defs: dict | None = None  # found on the first call asked about: most files have none
        # (name, line) of the methods ``self.name(...)`` resolved to, in the class around the method
        # analysed: leapp.compile checks the traced object's `name` is that def (compiler/source.py)
        self.methods: set[tuple[str, int]] = set()
        self.reads_methods = methods  # False: self.name(...) is not resolved (an object held another)

    def _method(self, func: ast.Attribute, ctx):
        """``self.name(...)`` in a method defined in a class body of this file, ``self`` its first
        parameter and never rebound: the one plain ``def name`` of that class body (the object's
        own attribute or a subclass could hold another: leapp.compile checks the traced object)."""
        fns = getattr(ctx, "functions", None) or []
        receiver = func.value.id  # type: ignore[attr-defined]
        if not fns or self.tree is None or not self.reads_methods:
            return None
        entry = fns[0]
        params = [*entry.args.posonlyargs, *entry.args.args]
        if not params or params[0].arg != receiver:
            return None
        if any(receiver in _bindings(n) + _declared(n) for f in fns for n in ast.walk(f) if n is not f) or \
                any(receiver in {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)} for f in fns[1:]):
            return None  # rebound, or shadowed by an inner function's parameter
        shape = ast.dump(entry)  # positions apart: the analysed text may be the def alone
        classes = [c for c in ast.walk(self.tree) if isinstance(c, ast.ClassDef) and any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == entry.name and ast.dump(s) == shape
            for s in c.body)]
        if len(classes) != 1:
            return None
        cls = classes[0]
        bound = [n for s in cls.body for n in ast.walk(s) if func.attr in _bindings(n)]
        defs = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == func.attr]
        if len(bound) != 1 or len(defs) != 1:
            return None
        fn = defs[0]
        if fn.decorator_list:
            return f"`{cls.name}.{func.attr}` is decorated"
        text = "".join(self.text.splitlines(keepends=True)[fn.lineno - 1:fn.end_lineno])
        at = fn.lineno + self.offset
        self.methods.add((func.attr, at))
        _resolved_methods(None, {(func.attr, at)})  # the proofs around this one hold it too
        return Helper((self.path, at, hash(text), "method"), f"{cls.name}.{func.attr}", text, self.path, at,
                      self.imports, self)

    def defs(self) -> dict:
        if self._defs is None:
            if self.tree is None:
                try:
                    self.tree = ast.parse(self.text)
                except (SyntaxError, ValueError):
                    self.tree = ast.Module(body=[], type_ignores=[])
                if self.scope_of is not None:
                    self.imports = {**self.scope_of(self.tree), **self.imports}
            counts: dict[str, int] = {}
            for node in ast.walk(self.tree):
                for name in _bindings(node):
                    counts[name] = counts.get(name, 0) + 1
            starred = "*" in counts  # `from m import *` may rebind any name: no def is known to stay
            self._defs = {} if starred else {s.name: s for s in self.tree.body
                                             if isinstance(s, ast.FunctionDef) and counts.get(s.name) == 1}
        return self._defs

    def resolve(self, func, ctx):
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            self.defs()  # reads the file's imports
            base = self.imports.get(func.value.id)
            if base is not None and f"{base}.{func.attr}" in MATH_FUNCTIONS and _unbound(func.value.id, ctx):
                return PURE  # `math.acos(a)` in a file that imports math: recorded as np.arccos
            return self._method(func, ctx)
        if isinstance(func, ast.Name) and not _unbound(func.id, ctx):
            return _nested(func.id, ctx, self)
        if not isinstance(func, ast.Name) or func.id not in self.defs():
            return None
        fn = self.defs()[func.id]
        if fn.decorator_list:
            return f"`{func.id}` is decorated"
        text = "".join(self.text.splitlines(keepends=True)[fn.lineno - 1:fn.end_lineno])
        line = fn.lineno + self.offset
        if self.bound is not None and not self.bound(func.id, line):
            return f"`{func.id}` is not, at run time, the function defined at line {line}"
        key = (self.path, line, hash(text), self.bound is not None)  # checked at run time or not
        return Helper(key, func.id, text, self.path, line, self.imports, self)


def _nested(name: str, ctx, resolver):
    """``name`` bound by the innermost function around the call that binds it: a Helper when the
    one binding is a ``def`` standing in that function's body (``def _apply(v): return v * gain``,
    a closure), else None. Python calls that def whenever the call runs after it; what its body
    reads from the closure cannot make it write, and the proof treats every name it reads as
    unknown."""
    for outer in reversed(getattr(ctx, "functions", None) or []):  # innermost first
        counts: dict[str, int] = {}
        for node in ast.walk(outer):
            for bound in _bindings(node) + _declared(node):
                counts[bound] = counts.get(bound, 0) + 1
        params = {a.arg for a in ast.walk(outer.args) if isinstance(a, ast.arg)}
        if counts.get(name, 0) == 0 and name not in params:
            continue
        defs = [s for s in outer.body if isinstance(s, ast.FunctionDef) and s.name == name]
        if counts.get(name) != 1 or len(defs) != 1 or name in params:
            return None
        break
    else:
        return None
    fn = defs[0]
    if fn.decorator_list:
        return f"`{name}` is decorated"
    text = "".join(ctx.source.splitlines(keepends=True)[fn.lineno - 1:fn.end_lineno])
    line = ctx.positions.start(fn)[0]
    return Helper((resolver.path, line, hash(text), "nested"), name, text, resolver.path, line,
                  resolver.imports, resolver)


def _declared(node) -> list[str]:
    """Names a ``nonlocal`` declaration may rebind from a nested function."""
    return list(node.names) * 2 if isinstance(node, ast.Nonlocal) else []


def _unbound(name: str, ctx) -> bool:
    """No local or parameter of the calling function (or one around it) is called ``name``."""
    scope = ctx.scope
    while scope.parent is not None:
        if name in scope.bound:
            return False
        scope = scope.parent
    return True


def _bindings(node) -> list[str]:
    """Names ``node`` binds or could rebind at module level (a def, a class, an import, a
    store, a ``global`` declaration)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".", 1)[0] for a in node.names]
    if isinstance(node, ast.Global):
        return list(node.names) * 2  # rebound from inside a function: never the one def
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    return []
