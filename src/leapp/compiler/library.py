"""Branches on data in library code: converted copies of the library's functions.

A compiled function's call into other code (``_leapp.foreign``, e.g.
``transforms3d.euler.mat2euler(M)``) runs with this module's ``Conversions``
active. When library code tests a traced array (``bool()``: an ``if``, ternary,
``and``/``or``), the Python functions on the stack between that call and the
test are noted; after the trace the compiler traces again, and this time
``_leapp.foreign`` calls a *converted copy* of the library function: its own
source, converted by ``leapp.ast_pass.convert`` exactly as the user's code is
(same plan, same select), compiled with the library's file name and lines, its
globals, closure cells, defaults and class (for ``super()`` and private
names). Every call the copy makes goes through ``_leapp.lib(f)``, which hands
back the converted copy of ``f`` when ``f`` is noted too, so a branch three
calls deep is reached. Nothing of the library is modified: no module attribute
and no ``__code__`` is swapped, and other threads and later untraced calls run
the library as it is.

Copies are cached per function (its code object and a hash of its source), and
a copy is made only when its compiled original source gives the very bytecode
that runs (a file edited since import is not converted). Which modules may be
converted: all with source except NumPy, torch and leapp, narrowed by
``[tool.leapp] library-allow`` / ``library-deny`` (module names or patterns,
``pkg`` covering ``pkg.sub``) and ``leapp.compile(convert_libraries=...)``.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import hashlib
import inspect
import os
import types
from fnmatch import fnmatchcase

from .. import ast_pass, dispatch
from ..ast_pass.parsing import parse
from ..runtime import constness, library_calls, state
from . import source as src_mod

ALWAYS_DENIED = ("numpy", "torch", "leapp")
MAX_RETRACES = 6  # traces again at most this often per signature: each one converts what the last reached
_SKIP_CALLS = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir", "breakpoint"})


# --- which modules -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Policy:
    """Which library modules may be converted: ``allow`` (None: every one) minus ``deny``."""

    enabled: bool = True
    allow: tuple | None = None
    deny: tuple = ()
    where: str = ""  # where the lists came from, for messages

    def refuses(self, module: str) -> str | None:
        """Why functions of ``module`` are not converted, or None when they may be."""
        if not self.enabled:
            return "conversion of library code is off (convert_libraries=False)"
        if _matches(module, ALWAYS_DENIED):
            return f"{module} is NumPy, torch or leapp itself"
        if _matches(module, self.deny):
            return f"module {module} is denied by {self.where or 'library-deny'}"
        if self.allow is not None and not _matches(module, self.allow):
            return f"module {module} is not in {self.where or 'library-allow'}"
        return None


def _matches(module: str, patterns) -> bool:
    return any(module == p or module.startswith(p + ".") or fnmatchcase(module, p) for p in patterns)


def policy_for(path: str, convert_libraries=True, convert_control_flow=True) -> Policy:
    """The policy for a compiled function in file ``path``: ``[tool.leapp]`` of the nearest
    pyproject.toml, then the keyword (False: off; a list of patterns, ``!pkg`` denying ``pkg``:
    replaces the configured lists)."""
    if not convert_control_flow or convert_libraries is False:
        return Policy(enabled=False)
    if convert_libraries is not True:
        if isinstance(convert_libraries, str) or not all(isinstance(p, str) for p in convert_libraries):
            raise ValueError("convert_libraries is True, False or a list of module patterns "
                             "('pkg', 'pkg.*'; '!pkg' denies pkg)")
        allow = tuple(p for p in convert_libraries if not p.startswith("!"))
        deny = tuple(p[1:] for p in convert_libraries if p.startswith("!"))
        return Policy(True, allow or None, deny, "leapp.compile(convert_libraries=...)")
    from ..ast_pass.config import load_settings

    try:
        folder = os.path.dirname(os.path.abspath(path))
        settings = load_settings(folder if os.path.isdir(folder) else os.getcwd())
    except Exception:
        return Policy()  # an unreadable config is the lint's to report; conversion keeps its defaults
    where = f"[tool.leapp] in {settings.config_path}" if settings.config_path else ""
    return Policy(True, tuple(settings.library_allow) if settings.library_allow is not None else None,
                  tuple(settings.library_deny), where)


# --- converted copies ------------------------------------------------------------


@dataclasses.dataclass
class Converted:
    """One library function's conversion: its code (None when it could not be made) and its branches."""

    qualname: str
    path: str
    code: types.CodeType | None
    branches: tuple = ()
    reason: str = ""  # why there is no code
    arms: dict = dataclasses.field(default_factory=dict)  # branch line -> ((arm, first file line), ...)

    def branch_at(self, line):
        return next((b for b in self.branches if b.line == line), None)


_cache: dict = {}  # (code object, source hash) -> Converted


def convert(fn, data_lines=frozenset()) -> Converted:
    """``fn``'s converted code, from its source (cached by code object, source hash and the lines
    whose test the runtime saw on traced data: those are converted whatever the static types)."""
    code = fn.__code__
    name = fn.__qualname__
    if getattr(fn, "__wrapped__", None) is not None:
        return Converted(name, code.co_filename, None, reason="it is wrapped by a decorator")
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError) as exc:
        return Converted(name, code.co_filename, None, reason=f"its source cannot be read ({exc})")
    key = (code, hashlib.sha1(text.encode()).hexdigest(), frozenset(data_lines))
    got = _cache.get(key)
    if got is None:
        if len(_cache) > 512:
            _cache.clear()
        try:
            got = _convert(fn, text, data_lines)
        except (SyntaxError, ValueError, RuntimeError, src_mod.NoSourceError) as exc:
            got = Converted(name, code.co_filename, None, reason=f"it could not be converted ({exc})")
        _cache[key] = got
    return got


def _convert(fn, text, data_lines) -> Converted:
    from ..ast_pass.analyze import _dedent
    from ..ast_pass.convert.apply import apply, own_lines

    code = fn.__code__
    path, first = code.co_filename, code.co_firstlineno
    name = fn.__qualname__
    if fn.__name__ == "<lambda>":
        return Converted(name, path, None, reason="it is a lambda")
    analysis = ast_pass.analyze_source(text, path, scope="all", first_line=first,
                                       imports=src_mod.imports_of(fn.__globals__),
                                       module_arrays=src_mod.module_arrays_of(fn.__globals__), convert=True,
                                       data_lines=data_lines, helpers=GlobalsResolver(fn))
    unchecked = next((s for s in analysis.sites if s.kind == "array_method"), None)
    if unchecked is not None:  # a copy routes no call, so nothing would check the receiver at runtime
        return Converted(name, path, None, reason=f"a branch on data calls `.{unchecked.name.split('.')[-1]}()` "
                                                  f"(line {unchecked.line}) on a value leapp cannot show is "
                                                  "NumPy's array, so not free of side effects")
    dedented, indent = _dedent(text)
    if _fingerprint(_compile(fn, dedented, dedented, first, path, redirect=False)) != _fingerprint(code):
        return Converted(name, path, None, reason="its source does not compile to the code that runs "
                                                  "(the file changed since it was imported)")
    local = [dataclasses.replace(b, line=b.line - first + 1, col=b.col - indent) for b in analysis.branches]
    converted, _ = apply(dedented, local, path=path, first_line=first, indent=indent)
    if own_lines(converted) != len(dedented.splitlines()):
        raise RuntimeError(f"{path}: converting branches moved lines (a leapp bug, please report it)")
    return Converted(name, path, _compile(fn, converted, dedented, first, path, redirect=True),
                     tuple(analysis.branches), arms=_arms(dedented, analysis.branches, first))


def _arms(text, branches, first) -> dict:
    """Per converted ``if`` (by file line), each arm's name and first line: which one an input took
    is the one whose first line ran (benchmarks/corpus.py reports it)."""
    wanted = {b.line - first + 1: b for b in branches if b.converted and b.construct != "ifexp"}
    out = {}
    for node in ast.walk(parse(text)):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if not isinstance(stmt, ast.If) or stmt.lineno not in wanted:
                    continue
                arms, cur, name = [], stmt, "if"
                while True:
                    arms.append((name, cur.body[0].lineno + first - 1))
                    if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) \
                            and cur.orelse[0].col_offset == cur.col_offset:
                        cur, name = cur.orelse[0], f"elif{len(arms)}"
                        continue
                    break
                if cur.orelse:
                    arms.append(("else", cur.orelse[0].lineno + first - 1))
                elif wanted[stmt.lineno].construct == "early" and i + 1 < len(block):
                    arms.append(("after", block[i + 1].lineno + first - 1))  # the early return not taken
                out[stmt.lineno + first - 1] = tuple(arms)
    return out


def _fingerprint(code) -> tuple:
    """What the source decides of a code object, nested code included: names, constants, lines.
    (Not the bytecode itself: one interpreter compiles ``obj.f(x, k=v)`` differently from an
    ``ast`` tree than from text.)"""
    consts = tuple(_fingerprint(c) if isinstance(c, types.CodeType) else
                   (type(c).__name__, " ".join(c.split()) if isinstance(c, str) else repr(c))
                   for c in code.co_consts)  # a method's source is dedented, its docstring with it
    # the first line is the def's, or its first decorator's (which a recompiled copy has not)
    lines = tuple(sorted({line for _, _, line in code.co_lines() if line is not None}))[1:]
    return (code.co_name, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_varnames, tuple(sorted(code.co_names)), code.co_freevars, code.co_cellvars,
            consts, lines, code.co_flags & 0x2F)  # without CO_NESTED (16)


def _compile(fn, text, original, first, path, *, redirect) -> types.CodeType:
    tree = parse(text)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) != 1 or defs[0].name != fn.__name__:
        raise src_mod.NoSourceError(f"the source read for {fn.__qualname__} does not hold its def")
    func = defs[0]
    start = min([d.lineno for d in func.decorator_list] + [func.lineno])
    src_mod._place_lines(func, text, start, first)
    src_mod._strip_def_time_expressions(func)
    if redirect:
        _Redirect().visit(func)
        ast.fix_missing_locations(func)
    return src_mod._compile_inner(func, fn, path)


class GlobalsResolver:
    """What a call in ``fn``'s source means (``ast_pass.convert.helpers``): a name looked up in its
    closure, its globals and the builtins, or an attribute of a module. A plain Python function
    with readable source that compiles to the code that runs is a ``Helper`` to prove; a ``math``
    function leapp records is ``PURE``; anything else is left to the plan's refusal."""

    def __init__(self, fn):
        self.globals = fn.__globals__
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))

    def resolve(self, func, ctx):
        from ..ast_pass.convert.helpers import PURE, Helper
        from ..runtime import math_calls

        obj = self._value(func, ctx)
        if obj is _UNKNOWN:
            return None
        if math_calls.name_of(obj) is not None:
            return PURE
        if type(obj) is not types.FunctionType or _internal(getattr(obj, "__module__", "") or ""):
            return None
        name = obj.__qualname__
        if getattr(obj, "__wrapped__", None) is not None:
            return f"`{name}` is wrapped by a decorator"
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            return f"the source of `{name}` cannot be read"
        from ..ast_pass.analyze import _dedent

        code = obj.__code__
        dedented, _ = _dedent(text)
        try:
            same = _fingerprint(_compile(obj, dedented, dedented, code.co_firstlineno, code.co_filename,
                                         redirect=False)) == _fingerprint(code)
        except (SyntaxError, ValueError, src_mod.NoSourceError):
            same = False
        if not same:
            return f"the source of `{name}` does not compile to the code that runs"
        return Helper((code, hashlib.sha1(text.encode()).hexdigest()), name, text, code.co_filename,
                      code.co_firstlineno, src_mod.imports_of(obj.__globals__), GlobalsResolver(obj))

    def _value(self, func, ctx):
        if isinstance(func, ast.Attribute):
            base = self._value(func.value, ctx)
            if not isinstance(base, types.ModuleType):
                return _UNKNOWN  # an attribute of an object may be a property: not looked up
            return getattr(base, func.attr, _UNKNOWN)
        if not isinstance(func, ast.Name):
            return _UNKNOWN
        scope = ctx.scope
        while scope.parent is not None:  # a local or parameter of that name is not the global
            if func.id in scope.bound:
                return _UNKNOWN
            scope = scope.parent
        cell = self.cells.get(func.id)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                return _UNKNOWN
        if func.id in self.globals:
            return self.globals[func.id]
        return getattr(builtins, func.id, _UNKNOWN)


_UNKNOWN = object()


class _Redirect(ast.NodeTransformer):
    """``f(a, b)`` -> ``_leapp.lib(f)(a, b)``: the callee is evaluated first, as Python does."""

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _SKIP_CALLS:
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == src_mod.PROBE:
            return node
        lib = ast.Attribute(ast.Name(src_mod.PROBE, ast.Load()), "lib", ast.Load())
        node.func = ast.copy_location(ast.Call(lib, [f], []), f)
        return node


class _LibraryDispatch(dispatch.BranchDispatch):
    """What a converted copy's ``_leapp`` is: the branch dispatchers and ``lib``."""

    lib = staticmethod(library_calls.substitute)


LIBRARY_DISPATCH = _LibraryDispatch()


def _instantiate(fn, code) -> types.FunctionType:
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    cells[src_mod.PROBE] = types.CellType(LIBRARY_DISPATCH)
    closure = tuple(cells[name] for name in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    return new


# --- one compiled function's conversions ---------------------------------------------


def _internal(module: str) -> bool:
    return _matches(module, ALWAYS_DENIED)


class Conversions:
    """The library functions one compiled function converts, and what happened to each."""

    def __init__(self, policy: Policy):
        self.policy = policy
        self.wanted: dict = {}  # original code object -> None (noted) or Converted
        self.lines: dict = {}  # original code object -> lines whose test was seen on traced data
        self.original: dict = {}  # copy's code object -> the original's
        self.hot: set = set()  # id() of every code object in wanted (kept alive there): hashing a
        # code object costs microseconds, and substitute runs before every call a copy makes
        self.copies: dict = {}  # id(function) -> (function, its copy)
        self.of_copy: dict = {}  # copy's code object -> Converted
        self.refused: dict = {}  # code object -> why its module is not converted
        self.fresh = False  # something was noted during the latest trace

    # the compiler's side
    def call(self, site, fn, args, kwargs):
        """``_leapp.foreign(site, fn, ...)`` with conversions active and ``fn`` maybe a copy."""
        previous = library_calls.activate(self)
        try:
            return dispatch.foreign(site, self.substitute(fn), *args, **kwargs)
        finally:
            library_calls.restore(previous)

    def retrace(self) -> bool:
        """Whether the latest trace noted a function not converted yet (then trace again)."""
        fresh, self.fresh = self.fresh, False
        return fresh

    def describe(self) -> list[str]:
        """cf.report()'s lines: each converted library function and what it chose per branch."""
        out = []
        for conv in self.wanted.values():
            if conv is None:
                continue
            if conv.code is None:
                out.append(f"    {conv.path} ({conv.qualname}): not converted: {conv.reason}")
                continue
            for b in conv.branches:
                out.append(f"    {conv.path} ({conv.qualname}) {b.describe()}")
        return out

    def taken(self, fn, args) -> list[str]:
        """Which arm of each converted library branch ``fn(*args)`` takes, run as NumPy (untraced):
        ``geometry.py:19 if`` per branch (several when it runs more than once)."""
        import sys

        watched = {code: conv for code, conv in self.wanted.items() if conv is not None and conv.arms}
        hits: dict = {}

        def local(frame, event, arg):
            if event == "line":
                hits.setdefault(frame.f_code, set()).add(frame.f_lineno)
            return local

        def calls(frame, event, arg):
            return local if frame.f_code in watched else None

        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            fn(*args)
        except Exception:
            pass
        finally:
            sys.settrace(previous)
        out = []
        for code, conv in watched.items():
            lines = hits.get(code, set())
            for at, arms in sorted(conv.arms.items()):
                names = [name for name, first in arms if first in lines]
                where = f"{os.path.basename(conv.path)}:{at}"
                if not names:
                    names = ["no arm (test false)"] if code in hits else ["not reached"]
                out.append(f"{where} {'+'.join(names)}")
        return out

    # the runtime's side (leapp.runtime.library_calls)
    def substitute(self, fn):
        func, receiver = fn, None
        if type(fn) is types.MethodType:
            func, receiver = fn.__func__, fn.__self__
        if type(func) is not types.FunctionType or id(func.__code__) not in self.hot:
            return fn
        got = self.copies.get(id(func))
        if got is None or got[0] is not func:
            conv = self.wanted[func.__code__]
            if conv is None:
                conv = self.wanted[func.__code__] = convert(func, self.lines.get(func.__code__, frozenset()))
            copy = None if conv.code is None else _instantiate(func, conv.code)
            if copy is not None:
                for code in _codes(copy.__code__):  # a converted branch runs as a local function
                    self.of_copy[code] = conv
                    self.original[code] = func.__code__
            got = self.copies[id(func)] = (func, copy)
        copy = got[1]
        if copy is None:
            return fn
        return types.MethodType(copy, receiver) if receiver is not None else copy

    def on_branch(self, arr, frame, advice) -> str:
        trace = state.current()
        if trace is None or not constness.value_depends_on_inputs(trace, arr):
            return advice
        module = frame.f_globals.get("__name__", "") or ""
        if _internal(module):
            return advice  # a test inside NumPy (or leapp): not the library's own branch
        inner = frame.f_code
        conv = self.of_copy.get(inner)
        if conv is not None:  # already converted: this test is one the conversion left as it was
            branch = conv.branch_at(frame.f_lineno)
            if branch is None and self._note_line(self.original[inner], frame.f_lineno):
                return advice  # a test the static pass did not see as on data: converted next time
            if branch is not None and not branch.converted:
                return (f"leapp did not convert this branch in library code ({conv.qualname}, "
                        f"{os.path.basename(conv.path)} line {branch.line}): {branch.reason}")
            return (f"leapp converts `if`/`elif`/`else`, early returns and conditional expressions "
                    f"in library code ({conv.qualname}), not this test (a `while`, an `assert`, "
                    f"a test inside an expression); {advice}")
        chain, f = [], frame
        while f is not None and f.f_code is not _CALL_CODE:
            mod = f.f_globals.get("__name__", "") or ""
            if not _internal(mod):
                chain.append((f.f_code, mod))
            f = f.f_back
        if f is None:
            return advice  # not reached through a compiled function's call into library code
        why = self.policy.refuses(module)
        if why is not None:
            return f"leapp did not convert {inner.co_name} (library code): {why}; {advice}"
        for code, mod in chain:
            original = self.of_copy[code] if code in self.of_copy else None
            if original is not None or code in self.wanted or self.policy.refuses(mod) is not None:
                continue
            self.wanted[code] = None
            self.hot.add(id(code))
            self.fresh = True
        if inner in self.wanted:
            self._note_line(inner, frame.f_lineno)
        noted = self.wanted.get(inner, "")
        if isinstance(noted, Converted) and noted.code is None:
            return f"leapp could not convert {noted.qualname} (library code): {noted.reason}; {advice}"
        if inner in self.wanted and not self.fresh:
            return (f"leapp converts {inner.co_name} (library code) but could not call its converted "
                    f"copy here (it is not called by name: a class, a callback, a function passed "
                    f"as a value); {advice}")
        return advice


    def _note_line(self, original, line) -> bool:
        """Convert the test at ``line`` of ``original`` whatever its static type; whether it is new."""
        seen = self.lines.get(original, frozenset())
        if line in seen:
            return False
        self.lines[original] = seen | {line}
        self.wanted[original] = None
        self.copies = {k: v for k, v in self.copies.items() if v[0].__code__ is not original}
        self.fresh = True
        return True


_CALL_CODE = Conversions.call.__code__


def _codes(code):
    """``code`` and the code objects defined inside it (a converted branch's local functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def begin(conversions) -> None:
    """A new trace starts: what an earlier check's retrace noted is not this trace's news."""
    if conversions is not None:
        conversions.fresh = False


def format_report(conversions) -> list[str]:
    if conversions is None:
        return []
    lines = conversions.describe()
    if not lines:
        return []
    return [f"  branches on data in library code: {len(lines)}", *lines]
