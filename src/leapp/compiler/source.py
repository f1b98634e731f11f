"""Reading a function's source, linting it, and rebuilding it with NumPy calls routed.

The rebuilt function is the user's own code object, compiled again from the
output of ``leapp rewrite`` (exactly that text: ``leapp rewrite --diff`` shows
what runs): same file name and line numbers (so warnings and tracebacks point
at the user's lines), same globals, the *same* closure cells (a later
``nonlocal`` write is still seen), defaults, keyword defaults and name. Only
the sites the static pass listed differ: NumPy function calls, ndarray method
calls and lookups in plain arrays with traced indices go through the probe,
so every recorded node carries its call's column and the cross-check knows
which call sites ran.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import linecache
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import ast_pass
from ..ast_pass.parsing import parse

if TYPE_CHECKING:
    from ..ast_pass.diagnostics import Analysis

PROBE = "_leapp"  # the name rewritten code calls; bound to a Probe in a closure cell


@dataclass
class Source:
    """What the static stage made of one function."""

    path: str
    first_line: int
    last_line: int
    text: str  # as written (possibly indented)
    imports: dict
    analysis: Analysis
    module_arrays: tuple = ()  # globals holding NumPy arrays (writes into them are LP302)
    rewritten: str = ""
    routed: set = field(default_factory=set)  # site strings the rebuilt function sends to the probe
    convert: bool = True  # branches on data converted (leapp.compile(convert_control_flow=...))
    # file lines whose test the trace saw on traced data where the static pass could not type it
    # (``obs["state"].mean() > 0``: a dict's values): planned as branches on data (runtime/library_calls.py)
    data_lines: frozenset = frozenset()
    # (name, def line) of the methods branches call as self.name(...): methods_hold
    methods: frozenset = frozenset()
    reads_methods: bool = True  # whether those are read at all (not once an object held another)

    @property
    def branches(self):
        return self.analysis.branches

    @property
    def diagnostics(self):
        return self.analysis.diagnostics

    @property
    def sites(self):
        return self.analysis.sites


class NoSourceError(Exception):
    """Raised inside this module when a function's source cannot be used; the caller words it."""


def _keep_interrupts(step):
    """A Ctrl-C during ``step`` comes out as ``KeyboardInterrupt``: LibCST's code generator cleans up
    in ``finally`` blocks that raise ``KeyError`` once interrupted, hiding the interrupt behind them."""

    @functools.wraps(step)
    def kept(*args, **kwargs):
        try:
            return step(*args, **kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            seen: set[int] = set()
            cause: BaseException | None = exc
            while cause is not None and id(cause) not in seen:
                if isinstance(cause, KeyboardInterrupt):
                    raise cause from None
                seen.add(id(cause))
                cause = cause.__cause__ or cause.__context__
            raise

    return kept


@_keep_interrupts
def read(fn, convert: bool = True, data_lines=frozenset(), methods: bool = True) -> Source:
    """Lint ``fn``'s source as traced code. Raises NoSourceError with the reason."""
    if not isinstance(fn, types.FunctionType):
        raise NoSourceError(f"{fn!r} is not a Python function (a builtin, or already wrapped)")
    if fn.__name__ == "<lambda>":
        raise NoSourceError("it is a lambda, whose source cannot be cut out of its line")
    if getattr(fn, "__wrapped__", None) is not None:
        raise NoSourceError("it is wrapped by another decorator; put @leapp.compile directly on the def")
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError) as exc:
        raise NoSourceError(f"its source cannot be read ({exc})") from None
    path = fn.__code__.co_filename
    first = fn.__code__.co_firstlineno
    imports = imports_of(fn.__globals__)
    arrays = module_arrays_of(fn.__globals__)
    helpers = file_helpers(path, imports, fn.__globals__, methods=methods)
    analysis = ast_pass.analyze_source(text, path, scope="all", first_line=first, imports=imports,
                                       module_arrays=arrays, convert=convert,
                                       module_state=module_state_of(fn.__globals__),
                                       helpers=helpers, data_lines=data_lines)
    last = first + len(text.splitlines()) - 1
    return Source(path, first, last, text, imports, analysis, arrays, convert=convert, data_lines=data_lines,
                  methods=frozenset(helpers.methods), reads_methods=methods)


def methods_hold(src: Source, args) -> bool:
    """The methods ``self.m(...)`` that branches call were proven from the class body's ``def m``
    (``convert.helpers.ModuleResolver._method``): whether the traced object's ``m`` is that def, not
    an attribute of its own or a subclass's override (else the compiler reads the source again
    without them, and such branches are refused as code leapp did not read)."""
    if not src.methods:
        return True
    obj = args[0] if args else None
    if obj is None:
        return False
    for attr, line in src.methods:
        if attr in getattr(obj, "__dict__", {}):
            return False
        found = inspect.getattr_static(type(obj), attr, None)
        code = getattr(found, "__code__", None)
        if not (type(found) is types.FunctionType and code is not None and code.co_filename == src.path
                and code.co_firstlineno == line):
            return False
    return True


def file_helpers(path: str, imports: dict, namespace: dict, methods: bool = True):
    """The module-level defs of ``path`` that a converted branch may call (``convert.helpers``):
    what ``leapp rewrite`` of that file resolves, so the two convert the same branches; a name
    ``namespace`` (the module's globals) binds to something else than that def is refused."""
    from ..ast_pass.convert.helpers import ModuleResolver
    from ..ast_pass.resolve import make_scope

    def bound(name, line):
        value = namespace.get(name)
        code = getattr(value, "__code__", None)
        return type(value) is types.FunctionType and code is not None and code.co_filename == path \
            and code.co_firstlineno == line

    text = "".join(linecache.getlines(path))
    return ModuleResolver(None, text, path, imports, scope_of=lambda tree: make_scope(tree.body, None).imports,
                          bound=bound, methods=methods)


def imports_of(namespace: dict) -> dict:
    """Module-level names the static pass must resolve: NumPy, leapp and torch modules, NumPy and leapp functions."""
    out = {}
    for name, value in namespace.items():
        if isinstance(value, types.ModuleType):
            qual = value.__name__
        elif callable(value) and not isinstance(value, type):
            module = getattr(value, "__module__", None) or ""
            short = getattr(value, "__name__", None)
            if short is None:
                continue
            if module.startswith("numpy"):
                qual = _numpy_name(value, module, short)
            elif module.startswith("leapp") and not module.startswith("leapp.examples"):  # examples: user code
                qual = "leapp." + short if short in ("compile", "annotate") else f"{module}.{short}"
            else:
                continue
        else:
            continue
        if qual.split(".")[0] in ("numpy", "leapp", "torch"):
            out[name] = qual
    return out


def module_arrays_of(namespace: dict) -> tuple:
    """Module-level names bound to NumPy arrays: buffers the graph cannot write (LP302)."""
    import numpy as np

    return tuple(sorted(name for name, value in namespace.items()
                        if isinstance(value, np.ndarray) and not name.startswith("__")))


def module_state_of(namespace: dict) -> tuple:
    """Module-level names bound to Python containers (a list, dict, set, deque): state that a
    traced function changing in place writes (LP304)."""
    import collections.abc

    kinds = (collections.abc.MutableSequence, collections.abc.MutableMapping, collections.abc.MutableSet)
    return tuple(sorted(name for name, value in namespace.items()
                        if isinstance(value, kinds) and not name.startswith("__")))


def _numpy_name(value, module, short):
    from ..runtime.names import function_name

    try:
        return function_name(value)
    except Exception:  # an exotic callable: its dotted name is the best guess
        return f"{module}.{short}"


@_keep_interrupts
def build(fn, src: Source, probe) -> types.FunctionType:
    """``fn`` recompiled from its rewritten source, calling ``probe`` for every routed call."""
    src.rewritten = ast_pass.rewrite_source(src.text, src.path, scope="all", first_line=src.first_line,
                                            imports=src.imports, module_arrays=src.module_arrays,
                                            convert=src.convert,
                                            helpers=file_helpers(src.path, src.imports, fn.__globals__,
                                                                 methods=src.reads_methods),
                                            data_lines=src.data_lines)
    src.routed = {site_string(src.path, s.line, s.col) for s in src.sites
                  if json.dumps(site_string(src.path, s.line, s.col)) in src.rewritten}
    tree = parse(src.rewritten)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) != 1 or defs[0].name != fn.__name__:
        raise NoSourceError(f"the source read for {fn.__qualname__} does not hold its def")
    func = defs[0]
    start = min([d.lineno for d in func.decorator_list] + [func.lineno])
    _place_lines(func, src.rewritten, start, src.first_line)
    _strip_def_time_expressions(func)
    code = _compile_inner(func, fn, src.path)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    cells[PROBE] = types.CellType(probe)
    closure = tuple(cells[name] for name in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    functools.update_wrapper(new, fn)
    return new


def _place_lines(func, text, start, first_line):
    """Give ``func``'s nodes their lines in the user's file: the def's line is ``first_line``; lines
    a branch conversion added (``leapp.ast_pass.convert``) take the line of the branch they replace."""
    from ..ast_pass.convert.apply import file_lines

    lines = file_lines(text, start, first_line)
    if lines is None:
        ast.increment_lineno(func, first_line - start)
        return
    for node in ast.walk(func):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is not None:
            node.lineno = lines[node.lineno]  # type: ignore[attr-defined]  # has one: _attributes says so
            end = getattr(node, "end_lineno", None)
            if end is not None:
                node.end_lineno = max(lines[end], node.lineno)  # type: ignore[attr-defined]


def _strip_def_time_expressions(func):
    """Decorators, defaults and annotations run when the def runs: here, in a scratch namespace.

    The originals are re-attached from ``fn`` (``__defaults__``, ``__annotations__``),
    and the decorators belong to ``fn``'s callers, not to the body being traced.
    """
    func.decorator_list = []
    func.returns = None
    a = func.args
    a.defaults = []
    a.kw_defaults = [None] * len(a.kwonlyargs)
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None


def _compile_inner(func, fn, path):
    """The code object of ``func`` compiled where its free variables are the closure's names.

    A factory whose parameters are the free-variable names makes the compiler
    treat them as closure cells. A method is compiled inside a class of its
    own class's name so that ``__private`` names mangle alike and zero-argument
    ``super()`` finds a ``__class__`` cell.
    """
    params = [PROBE, *(n for n in fn.__code__.co_freevars if n != "__class__")]
    qual = fn.__qualname__.split(".")
    owner = qual[-2] if len(qual) > 1 and qual[-2] != "<locals>" else None
    body: list = [func]
    # The def binds its name in the factory; a recursive call in its body must still find the
    # module's global (the original function), not a closure cell of that local def.
    # Likewise the class: the method's own class by name (`K.TABLE`) is the module's class, not the
    # factory's stand-in (that would be a free variable with no cell). The factory never runs.
    names = [n for n in (fn.__name__, owner) if n is not None and n not in fn.__code__.co_freevars]
    hoist = [ast.Global(names=list(dict.fromkeys(names)))] if names else []
    if owner is not None:
        body = [ast.ClassDef(name=owner, bases=[], keywords=[], body=[func], decorator_list=[],
                             **_TYPE_PARAMS)]
    factory = ast.FunctionDef(
        name="__leapp_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[*hoist, *body, ast.Return(ast.Constant(None))],
        decorator_list=[], returns=None, **_TYPE_PARAMS,
    )
    for node in (factory, *hoist, *body):
        ast.copy_location(node, func)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, path, "exec", dont_inherit=True)
    return _find_code(code, fn.__name__)


# Python 3.12 added type parameters to defs and classes; older versions reject the field.
_TYPE_PARAMS: dict[str, Any] = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}


def _find_code(code, name):
    """The shallowest code object named ``name`` under the module (a nested def may reuse it)."""
    level = [code]
    while level:
        consts = [c for parent in level for c in parent.co_consts if isinstance(c, types.CodeType)]
        for const in consts:
            if const.co_name == name:
                return const
        level = consts
    raise NoSourceError(f"no code object named {name} after recompiling")


def site_string(path, line, col) -> str:
    return f"{path}:{line}:{col}"
