"""Resolve names to qualified names through import statements only.

LibCST's ``QualifiedNameProvider`` does this for every name in a file, which
costs more than the whole rest of the lint (PITFALLS: ~1.3k lines/s). Here
each scope records what its import statements bind and which names anything
else binds; a name resolves only when an import is the *only* thing binding
it. So a parameter or local called ``np`` (or ``self.np``, or ``x.sum``)
never resolves to NumPy.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Scope:
    """The bindings of one module or function body."""

    def __init__(self, parent: Scope | None, imports: dict[str, str], bound: set[str]):
        self.parent = parent
        self.imports = imports  # name -> qualified name, for names bound only by imports
        self.bound = bound  # every name bound in this scope (imports included)

    def lookup(self, name: str) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bound:
                return scope.imports.get(name)
            scope = scope.parent
        return None

    def is_builtin(self, name: str) -> bool:
        """True when ``name`` is bound nowhere in the file, so it means the builtin."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bound:
                return False
            scope = scope.parent
        return True

    def is_module_global(self, name: str) -> bool:
        """True when ``name`` refers to the module's binding from this scope."""
        scope = self
        while scope.parent is not None:
            if name in scope.bound:
                return False
            scope = scope.parent
        return name in scope.bound

    def qualname(self, node: ast.AST) -> str | None:
        """``np.linalg.norm`` -> ``numpy.linalg.norm`` when ``np`` is an import."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.lookup(node.id)
        if base is None:
            return None
        return ".".join([base, *reversed(attrs)])


def _import_bindings(stmt: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                out.append((alias.asname, alias.name))
            else:  # ``import numpy.linalg`` binds ``numpy``
                top = alias.name.split(".", 1)[0]
                out.append((top, top))
    else:
        module = stmt.module if not stmt.level else None
        for alias in stmt.names:
            if alias.name == "*":
                continue
            target = f"{module}.{alias.name}" if module else None
            out.append((alias.asname or alias.name, target))
    return out


class _Binder(ast.NodeVisitor):
    """Collect the names a body binds, without entering nested scopes."""

    def __init__(self):
        self.imports: dict[str, set] = {}
        self.other: set[str] = set()
        self.globals: set[str] = set()

    def visit_Import(self, node):
        for name, target in _import_bindings(node):
            self.imports.setdefault(name, set()).add(target)

    visit_ImportFrom = visit_Import

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            self.other.add(node.id)

    def _scope(self, node):
        self.other.add(node.name)
        for d in node.decorator_list:
            self.visit(d)
        if not isinstance(node, ast.ClassDef):
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    self.visit(d)
        else:
            for b in node.bases:
                self.visit(b)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node):
        for d in [*node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                self.visit(d)

    def _comprehension(self, node):
        # Only the first iterable is evaluated in the enclosing scope.
        self.visit(node.generators[0].iter)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Global(self, node):
        self.globals.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def visit_MatchMapping(self, node):
        if node.rest:
            self.other.add(node.rest)
        self.generic_visit(node)


def param_names(args: ast.arguments) -> list[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    names = [a.arg for a in every]
    for a in (args.vararg, args.kwarg):
        if a is not None:
            names.append(a.arg)
    return names


def make_scope(body: list[ast.stmt], parent: Scope | None, params: Collection[str] = ()) -> Scope:
    binder = _Binder()
    for stmt in body:
        binder.visit(stmt)
    bound = (set(binder.imports) | binder.other | set(params)) - binder.globals
    imports = {}
    for name, targets in binder.imports.items():
        # An import that shares its name with any other binding is not trusted.
        if name in bound and name not in binder.other and name not in params and len(targets) == 1:
            (target,) = targets
            if target is not None:
                imports[name] = target
    return Scope(parent, imports, bound)


def function_scope(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, parent: Scope) -> Scope:
    if isinstance(node, ast.Lambda):
        return Scope(parent, {}, set(param_names(node.args)))
    return make_scope(node.body, parent, param_names(node.args))
