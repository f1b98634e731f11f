"""Write a parity record's call (or any test function) as a Python module, the way a user would.

The parity records and the fuzzer call the runtime directly, so the static
pass, the rewriter and the cross-check never see their code. ``render(fn,
operands, traced)`` writes a module in which the call is real source:

- a lambda's body becomes the body of ``f`` (its parameters for the traced
  operands, module constants of the same names for the others), a ``def``
  becomes ``f`` itself, a NumPy function or ufunc is called as ``np.name``,
  an ``operator`` function as its operator;
- every name the code reads that is not a parameter (a closure cell, a module
  global, a helper lambda) is written as a module-level definition: literal
  values as literals, functions as ``def``s (recursively), modules as
  imports, and anything else through ``ENV`` (values a test hands over);
- ``f`` carries ``@leapp.compile``; ``seed(samples)`` runs the same call
  between ``annotate.input_tensors`` and ``annotate.output_tensors`` and
  returns ``leapp.compile_graph(validate=True)``.

``load(module)`` writes and imports it. ``Rendered.self_contained`` says
whether it needs ``ENV`` (a subprocess such as the CLI cannot see it).
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import itertools
import math
import operator
import os
import sys
import textwrap
import types
from dataclasses import dataclass

import numpy as np

ENV_MODULE = "leapp_render_env"
ENV: dict = {}
_env = types.ModuleType(ENV_MODULE)
_env.VALUES = ENV
sys.modules.setdefault(ENV_MODULE, _env)
_ids = itertools.count()

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.and_: "&",
           operator.or_: "|", operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>",
           operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
           operator.ge: ">=", operator.matmul: "@"}
_INPLACE = {operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=", operator.itruediv: "/=",
            operator.ifloordiv: "//=", operator.imod: "%=", operator.ipow: "**=", operator.iand: "&=",
            operator.ior: "|=", operator.ixor: "^=", operator.ilshift: "<<=", operator.irshift: ">>=",
            operator.imatmul: "@="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


class NotRenderable(Exception):
    """The callable's source cannot be recovered (a builtin we do not know, a lambda we cannot find)."""


@dataclass
class Rendered:
    source: str
    params: list  # f's parameters: the traced operands, in order
    self_contained: bool


def _numpy_path(obj):
    """``"np.linalg.norm"`` (``"np.add.reduce"``) for a public NumPy callable, else None."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc):
        base = _numpy_path(owner)
        return f"{base}.{obj.__name__}" if base else None
    for prefix, mod in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        name = getattr(obj, "__name__", None)
        if name and getattr(mod, name, None) is obj:
            return f"{prefix}.{name}"
    return None


_AST_CACHE: dict = {}


def _file_ast(path):
    if path not in _AST_CACHE:
        with open(path, encoding="utf-8") as f:
            _AST_CACHE[path] = ast.parse(f.read())
    return _AST_CACHE[path]


def _positions(code):
    out = []
    for line, _end, col, endcol in code.co_positions():
        if line is not None and col is not None and (col, endcol) != (0, 0):  # (0, 0): RESUME, RETURN
            out.append((line, col))
    return out


def _function_node(fn):
    """The ``ast.Lambda`` or ``ast.FunctionDef`` that defined ``fn``."""
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if not path or not os.path.exists(path):
        raise NotRenderable(f"no source file for {fn!r}")
    tree = _file_ast(path)
    code = fn.__code__
    if fn.__name__ == "<lambda>":
        spots = _positions(code)
        best = None
        for node in ast.walk(tree):
            if not isinstance(node, ast.Lambda):
                continue
            start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
            if all(start <= p <= end for p in spots) and len(node.args.args) == code.co_argcount:
                if best is None or (start >= (best.lineno, best.col_offset)):
                    best = node  # the innermost lambda whose span holds all of fn's instructions
        if best is None:
            raise NotRenderable(f"lambda not found in {path}:{code.co_firstlineno}")
        return best
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == fn.__name__ and (
                node.lineno == code.co_firstlineno or
                (node.decorator_list and node.decorator_list[0].lineno == code.co_firstlineno)):
            return node
    raise NotRenderable(f"def {fn.__name__} not found in {path}")


def _names_read(node, params):
    """Names ``node`` reads that it does not bind itself (globals and closure cells)."""
    bound = set(params)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            bound.add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, ast.FunctionDef) and sub is not node:
            bound.add(sub.name)
    read = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound and sub.id not in read:
            read.append(sub.id)
    return read


def _literal(value):
    """Source that evaluates to ``value`` exactly, or None."""
    if value is None or isinstance(value, bool | str):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, np.integer):
        return repr(value)
    if isinstance(value, float) and not isinstance(value, np.floating):
        return repr(value) if math.isfinite(value) else f'float("{value}")'
    if isinstance(value, slice):
        return f"slice({_literal(value.start)}, {_literal(value.stop)}, {_literal(value.step)})"
    if value is Ellipsis:
        return "Ellipsis"
    if isinstance(value, tuple | list):
        items = [_literal(v) for v in value]
        if any(i is None for i in items):
            return None
        if isinstance(value, tuple):
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        return f"[{', '.join(items)}]"
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _literal(v) for k, v in value.items()}
        return None if None in items.values() else "{" + ", ".join(f"{k!r}: {v}" for k, v in items.items()) + "}"
    if isinstance(value, np.dtype):
        return f'np.dtype("{value.str}")' if value.fields is None else None
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"np.{value.__name__}"
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        inner = _literal(value.item())
        return f"np.{value.dtype.name}({inner})"
    return None


class _Inline(ast.NodeTransformer):
    """Write test parametrisation the way a user writes a call: ``fn(a, **kw)`` with ``fn = np.sum``
    and ``kw = {"axis": 0}`` becomes ``np.sum(a, axis=0)``; literal cells and defaults are inlined."""

    def __init__(self, values):
        self.values = values  # name -> value, for closure cells and defaults only

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            value = self.values[node.id]
            path = _numpy_path(value) if callable(value) else None
            text = path or (_literal(value) if not isinstance(value, dict) else None)
            if text is not None:
                return ast.copy_location(ast.parse(text, mode="eval").body, node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        keywords = []
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name) and isinstance(self.values.get(kw.value.id), dict):
                for k, v in self.values[kw.value.id].items():
                    text = _literal(v)
                    if text is None:
                        return node
                    keywords.append(ast.keyword(k, ast.parse(text, mode="eval").body))
            else:
                keywords.append(kw)
        node.keywords = keywords
        return node


def _inlined(fn, node, n_operands):
    """(parameter names for the operands, the node with cells and defaults written in)."""
    args = [a.arg for a in node.args.args]
    defaults = fn.__defaults__ or ()
    if node.args.vararg or node.args.kwarg or node.args.kwonlyargs or not (len(args) - len(defaults) <= n_operands <= len(args)):
        return None, node
    values = dict(zip(fn.__code__.co_freevars, [c.cell_contents for c in fn.__closure__ or ()], strict=True))
    values.update(dict(zip(args[len(args) - len(defaults):], defaults, strict=True)))
    for name in args[:n_operands]:
        values.pop(name, None)
    new = _Inline(values).visit(ast.parse(ast.unparse(node)).body[0] if isinstance(node, ast.FunctionDef)
                                else ast.parse(ast.unparse(node), mode="eval").body)
    if isinstance(new, ast.Lambda | ast.FunctionDef):
        new.args.args = new.args.args[:n_operands]
        new.args.defaults = []
    return args[:n_operands], new


class _Module:
    def __init__(self):
        self.lines = ["import numpy as np", "", "import leapp", "from leapp import annotate", ""]
        self.defined: dict = {}  # name -> object it was bound to
        self.uses_env = False

    def bind(self, name, value):
        """A module-level definition of ``name`` as ``value``."""
        if name in self.defined:
            if self.defined[name] is value:
                return
            raise NotRenderable(f"two different values named {name}")
        self.defined[name] = value
        if name == "np" and value is np:
            return
        if isinstance(value, types.ModuleType):
            self.lines.append(f"import {value.__name__} as {name}")
            return
        lit = _literal(value)
        if lit is not None:
            self.lines.append(f"{name} = {lit}")
            return
        if callable(value):
            path = _numpy_path(value)
            if path is not None:
                self.lines.append(f"{name} = {path}")
                return
            if isinstance(value, types.FunctionType):
                self.function(name, value)
                return
            if value in _BINARY or value in _INPLACE or value in _UNARY or value is abs:
                self.lines += self.operator_def(name, value)
                return
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.size <= 64 and \
                np.isfinite(value).all():
            self.lines.append(f"{name} = np.array({value.tolist()!r}, dtype=np.{value.dtype.name})")
            return
        key = next(_ids)
        ENV[key] = value
        self.uses_env = True
        self.lines.append(f"from {ENV_MODULE} import VALUES as _ENV  # noqa: E402")
        self.lines.append(f"{name} = _ENV[{key}]")

    def operator_def(self, name, op):
        if op in _BINARY:
            return [f"def {name}(a, b):", f"    return a {_BINARY[op]} b", ""]
        if op in _INPLACE:
            return [f"def {name}(a, b):", f"    a {_INPLACE[op]} b", "    return a", ""]
        if op in _UNARY:
            return [f"def {name}(a):", f"    return {_UNARY[op]}a", ""]
        return [f"def {name}(a):", "    return abs(a)", ""]

    def globals_of(self, fn, node, params):
        cells = dict(zip(fn.__code__.co_freevars, [c.cell_contents for c in fn.__closure__ or ()], strict=True))
        args = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        defaults = fn.__defaults__ or ()
        cells.update(zip(args[len(args) - len(defaults):], defaults, strict=True))
        for name in _names_read(node, params):
            if name in cells:
                self.bind(name, cells[name])
            elif name in fn.__globals__:
                self.bind(name, fn.__globals__[name])
            elif not hasattr(builtins, name):
                raise NotRenderable(f"{name} is not defined")

    def function(self, name, fn):
        """``fn`` (a lambda or a def) written as ``def name(...)`` with its globals bound first."""
        node = _function_node(fn)
        params = [a.arg for a in node.args.args]
        if fn.__defaults__:
            raise NotRenderable(f"{fn.__name__} has defaults")  # a helper's defaults: keep it simple
        _, node = _inlined(fn, node, len(params))
        self.globals_of(fn, node, params)
        if isinstance(node, ast.Lambda):
            args = ast.unparse(node.args)
            self.lines += [f"def {name}({args}):", f"    return {ast.unparse(node.body)}", ""]
            return
        node = _renamed(node, name)
        self.lines += ast.unparse(node).splitlines() + [""]


def _renamed(node, name):
    copy = ast.parse(ast.unparse(node)).body[0]
    copy.name = name
    copy.decorator_list = []
    return copy


def render(fn, operands, traced):
    """The module for ``fn(*operands)`` where ``traced[i]`` says operand i is an input of ``f``.

    Untraced operands become module constants (the way a user writes a scalar or a
    stored array); traced ones are ``f``'s parameters.
    """
    mod = _Module()
    n = len(operands)
    names, node = None, None
    if isinstance(fn, types.FunctionType):
        names, node = _inlined(fn, _function_node(fn), n)
        if names is None:
            node = None  # not written inline: called through a helper ``_fn`` below
    names = names or [f"p{i}" for i in range(n)]
    params = [nm for nm, t in zip(names, traced, strict=True) if t]
    call = f"f({', '.join(params)})"
    define = None
    if isinstance(node, ast.Lambda) and names:
        mod.globals_of(fn, node, names)
        body = ast.unparse(node.body)
        define = [f"def f({', '.join(params)}):", f"    return {body}"]
        call = body
    elif isinstance(node, ast.FunctionDef) and names and all(traced):
        mod.globals_of(fn, node, names)
        node.name, node.decorator_list = "f", []
        define = ast.unparse(node).splitlines()
    elif fn in _BINARY and n == 2:
        call = f"{names[0]} {_BINARY[fn]} {names[1]}"
    elif fn in _UNARY and n == 1:
        call = f"{_UNARY[fn]}{names[0]}"
    elif fn is abs and n == 1:
        call = f"abs({names[0]})"
    elif _numpy_path(fn) is not None:
        call = f"{_numpy_path(fn)}({', '.join(names)})"
    elif isinstance(fn, types.FunctionType) or fn in _INPLACE:
        mod.bind("_fn", fn)
        call = f"_fn({', '.join(names)})"
    else:
        raise NotRenderable(f"cannot write {fn!r} as source")
    if define is None:
        define = [f"def f({', '.join(params)}):", f"    return {call}"]
    for nm, value, t in zip(names, operands, traced, strict=True):
        if not t:
            mod.bind(nm, value)
    sig = ", ".join(params)
    lines = mod.lines + ["", "", "@leapp.compile", *define, "", ""]
    unpack = f"{params[0]}," if len(params) == 1 else sig
    inputs = ", ".join(f"{p!r}: {p}" for p in params)
    lines += [
        "def seed(samples):",
        '    leapp.start("records", strict=True)',
        "    for sample in samples:",
        f"        {unpack} = sample",
        f"        {unpack if len(params) > 1 else params[0]} = annotate.input_tensors('f', {{{inputs}}})",
        f"        out = {call}",
        "        outs = out if isinstance(out, (tuple, list)) else (out,)",
        "        annotate.output_tensors('f', {f'out{i}': o for i, o in enumerate(outs)})",
        "    leapp.stop()",
        "    return leapp.compile_graph(validate=True)",
        "",
    ]
    return Rendered("\n".join(lines), params, not mod.uses_env)


_loaded = itertools.count()


def load(rendered, directory):
    """Write the module into ``directory`` and import it; returns the module."""
    k = next(_loaded)
    path = os.path.join(directory, f"rendered_{os.getpid()}_{k}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(rendered.source))
    name = f"leapp_rendered_{os.getpid()}_{k}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    module.__path_on_disk__ = path
    return module
