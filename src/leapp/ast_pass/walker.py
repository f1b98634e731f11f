"""Walk traced code in order, keep the dataflow state, and let each rule look.

Rules are small classes with ``visit_<ast node type>(node, ctx)`` methods
(plus ``visit_test(test, construct, ctx)`` for truth tests); the walker is the
``ctx`` they receive. It visits an expression before its children, so a rule
can ``claim`` an inner node that another rule would otherwise report again.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from leapp import table

from .dataflow import NDARRAY_METHODS, Facts, State, lookup
from .diagnostics import Diagnostic, Edit, Fix, Site
from .resolve import Scope, function_scope, make_scope, param_names

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
if sys.version_info >= (3, 11):
    _TRY = (ast.Try, ast.TryStar)
else:
    _TRY = (ast.Try,)
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "None", "complex",
                                 "tuple", "list", "dict", "Sequence", "Callable", "type"})


def _literal(node: ast.expr):
    return node.value if isinstance(node, ast.Constant) else ...


_NUMBER_HINT_CODES = frozenset({"LP201", "LP202", "LP205", "LP303"})


class Positions:
    """ast columns are UTF-8 byte offsets; diagnostics count characters."""

    def __init__(self, lines: list[str], line_offset: int = 0, col_offset: int = 0):
        self.lines, self.line_offset, self.col_offset = lines, line_offset, col_offset

    def char_col(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def start(self, node) -> tuple[int, int]:
        return node.lineno + self.line_offset, self.char_col(node.lineno, node.col_offset) + 1 + self.col_offset

    def end(self, node) -> tuple[int, int]:
        line = node.end_lineno or node.lineno
        col = self.char_col(line, node.end_col_offset or 0) + 1 + self.col_offset
        return line + self.line_offset, col


class Walker(Facts):
    def __init__(self, rules, module: ast.Module, scope: Scope, path: str, source: str,
                 lines: list[str], positions: Positions, numpy_alias: str | None):
        self.rules, self.module, self.scope, self.path = rules, module, scope, path
        self.source = source
        self.lines, self.positions, self.numpy_alias = lines, positions, numpy_alias
        self.state = State()
        self.diagnostics: list[Diagnostic] = []
        self.sites: dict[int, tuple] = {}
        self._claimed: set[int] = set()
        self.function_depth = 0
        self.all_entries = False  # scope "all": every top-level def is a traced entry point
        self.in_class = False
        self.module_arrays: set[str] = set()
        self.functions: list = []  # the defs being walked, innermost last (branch conversion reads it)
        self.convert = True  # leapp.compile(convert_control_flow=...): branches on data are converted
        self.data_lines: frozenset[int] = frozenset()  # library code (leapp.compiler.library): tests seen on traced data
        self.helpers: Any = None  # convert.helpers: resolves the functions a converted branch calls
        self.branches: list = []  # convert.Branch, one per `if`/conditional expression on data
        self.hooks: dict[type, list] = {}
        self.test_hooks = []
        for rule in rules:
            for attr in dir(rule):
                if attr == "visit_test":
                    self.test_hooks.append(rule.visit_test)
                elif attr.startswith("visit_"):
                    node_type = getattr(ast, attr[6:], None)
                    if node_type is not None:
                        self.hooks.setdefault(node_type, []).append(getattr(rule, attr))

    # --- services for rules -------------------------------------------------
    def report(self, code: str, node: ast.AST, message: str, fix: Fix | None = None) -> None:
        line, col = self.positions.start(node)
        end_line, end_col = self.positions.end(node)
        hint = self._number_hint(code, node)
        if hint:
            message = f"{message} {hint}"
        self.diagnostics.append(Diagnostic(code, message, self.path, line, col, end_line, end_col, fix))

    def _number_hint(self, code: str, node: ast.AST) -> str:
        """For a read of a value into Python (a size, ``float()``, ``max()``, an ``if``) whose
        operand is a bare parameter with no annotation: lint takes such a parameter for an array,
        so say how to declare a Python number (then leapp traces one graph per value)."""
        if code not in _NUMBER_HINT_CODES or not self.functions:
            return ""
        fn = self.functions[-1]
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ""
        a = fn.args
        bare = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs) if x.annotation is None}
        inner = {id(n.value) for n in ast.walk(node) if isinstance(n, (ast.Attribute, ast.Subscript))}
        inner |= {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
        if code != "LP303":  # a NumPy call's operand (`np.abs(x).max() > 1`) is an array's use
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and (self.call_name(call) or "").startswith("numpy."):
                    inner |= {id(n) for arg in (*call.args, *(k.value for k in call.keywords)) for n in ast.walk(arg)}
        names = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in bare
                        and id(n) not in inner and n.id not in ("self", "cls")})
        if not names:
            return ""
        n = names[0]
        return (f"If `{n}` is a Python number, not an array, annotate it (`{n}: int` or `{n}: float`): "
                f"leapp then traces one graph per value of `{n}`.")

    def claim(self, node: ast.AST) -> None:
        self._claimed.add(id(node))

    def is_claimed(self, node: ast.AST) -> bool:
        return id(node) in self._claimed

    def edit(self, node: ast.AST, text: str) -> Edit:
        return Edit(*self.positions.start(node), *self.positions.end(node), text)

    def text(self, node: ast.AST, limit: int = 48) -> str:
        s = ast.get_source_segment(self.source, node) or ast.unparse(node)
        s = " ".join(s.split())
        return s if len(s) <= limit else s[: limit - 3] + "..."

    def numpy_alias_here(self) -> str | None:
        """The module's NumPy alias if it means NumPy here (a local or parameter ``np`` does not)."""
        alias = self.numpy_alias
        return alias if alias and self.scope.lookup(alias) == "numpy" else None

    def site(self, call: ast.Call):
        """(Site, table entry, refused keywords) for a NumPy call, else None."""
        return self.sites.get(id(call))

    @property
    def in_function(self) -> bool:
        return self.function_depth > 0

    # --- sites --------------------------------------------------------------
    def record_guarded(self, call: ast.Call) -> None:
        """A method call a converted branch runs on a value the pass could not type (``obs["k"].min()``):
        routed through ``dispatch.array_method``, which checks the value is NumPy's (convert.plan)."""
        known = self.sites.get(id(call))
        if known is None or known[0].kind == "foreign":  # the check holds more than the foreign one
            self._record_site(call, guarded=True)

    def _record_site(self, call: ast.Call, guarded: bool = False) -> None:
        q = self.call_name(call)
        kind = "function"
        if guarded:
            q, kind = "ndarray." + call.func.attr, "array_method"  # type: ignore[attr-defined]
        elif q is None or not (q.startswith("numpy.") or q in table.TABLE):
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr in NDARRAY_METHODS and self.is_array(f.value)):
                if self.in_function and self.foreign_call(call):
                    line, col = self.positions.start(call)
                    site = Site(self.text(call.func), line, col, "foreign", "foreign", *self.positions.end(call))
                    self.sites[id(call)] = (site, None, [])
                return
            q, kind = "ndarray." + f.attr, "method"
        entry = lookup(q)
        refused = []
        if q.startswith("numpy.random.") or q == "numpy.random":
            verdict = "random"
        elif entry is None:
            verdict = "unknown"
        elif not entry.supported:
            verdict = "unsupported"
        else:
            target = entry
            if not entry.refuse and entry.same_as:
                target = lookup(entry.same_as) or entry
            kwargs = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
            refused = table.refused_keywords(target, kwargs) if target.supported else []
            verdict = "refused-keyword" if refused else "supported"
        name = table.canonical(q) if kind == "function" else q
        line, col = self.positions.start(call)
        end = self.positions.end(call)
        self.sites[id(call)] = (Site(name, line, col, kind, verdict, *end), entry, refused)

    def _record_subscript(self, node: ast.Subscript) -> None:
        """``TABLE[idx]`` with an array index on a value not known to be traced: a site to route.

        ndarray's C indexing of a plain array (a module-level lookup table, an
        attribute) never reaches leapp's hooks, so the result would be frozen;
        routed through the dispatcher, the runtime records a gather on a constant.
        """
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        value = node.value
        # a module-level table indexed by any computed value: the index may be traced even where
        # the dataflow cannot tell (a helper function's result), and routing a plain one is harmless
        table_const = isinstance(value, ast.Name) and value.id not in self.state.arrays and \
            self._free_name(value.id)
        if not any(not isinstance(p, ast.Slice) and (self.is_array(p) or (table_const and not _literal_index(p)))
                   for p in parts):
            return
        if isinstance(value, ast.Name) and value.id in self.state.arrays and not (
                value.id in self.module_arrays and self.scope.is_module_global(value.id)):
            return  # indexing a traced array: its own hooks see it
        if self.is_array(value) and not isinstance(value, ast.Name):
            return
        line, col = self.positions.start(node)
        end = self.positions.end(node)
        self.sites[id(node)] = (Site("ndarray.__getitem__", line, col, "subscript", "supported", *end),
                                table.lookup("ndarray.__getitem__"), [])

    def _free_name(self, name) -> bool:
        """``name`` is not bound in the function (a module global or a closure cell, such as a
        lookup table), and not an import."""
        scope = self.scope
        while scope.parent is not None:
            if name in scope.bound:
                return False
            scope = scope.parent
        return name not in scope.imports

    # --- expressions --------------------------------------------------------
    def expr(self, node) -> None:
        t = type(node)
        if isinstance(node, ast.Call):
            self._record_site(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and self.in_function:
            self._record_subscript(node)
        hooks = self.hooks.get(t)
        if hooks:
            for hook in hooks:
                hook(node, self)
        if isinstance(node, _COMPREHENSIONS):
            return self._comprehension(node)
        if isinstance(node, ast.Lambda):
            return self._lambda(node)
        if isinstance(node, ast.IfExp):
            self.test(node.test, "conditional expression")
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):
                self.expr(child)

    def test(self, node: ast.expr, construct: str) -> None:
        for hook in self.test_hooks:
            hook(node, construct, self)

    def _comprehension(self, node) -> None:
        saved_state, saved_scope = self.state.copy(), self.scope
        targets = set()
        for gen in node.generators:
            self.expr(gen.iter)
            targets |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            self.scope = Scope(self.scope, {}, set(targets))
            is_arr = self.is_array(gen.iter)
            self.bind(gen.target, None)
            if is_arr and isinstance(gen.target, ast.Name):
                self.state.arrays.add(gen.target.id)
            for cond in gen.ifs:
                self.test(cond, "comprehension filter")
                self.expr(cond)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.expr(part)
        self.state, self.scope = saved_state, saved_scope

    def _lambda(self, node: ast.Lambda) -> None:
        saved_state, saved_scope = self.state.copy(), self.scope
        self.scope = function_scope(node, self.scope)
        for name in param_names(node.args):
            self.state.kill(name)
        self.expr(node.body)
        self.state, self.scope = saved_state, saved_scope

    # --- statements ---------------------------------------------------------
    def run(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def _test_on_data(self, test) -> bool:
        if isinstance(test, ast.BoolOp):
            return any(self._test_on_data(v) for v in test.values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._test_on_data(test.operand)
        return self.is_array(test)

    def _branch(self, stmts) -> State:
        saved = self.state
        self.state = saved.copy()
        self.run(stmts)
        result, self.state = self.state, saved
        return result

    def stmt(self, s: ast.stmt) -> None:
        t = type(s)
        hooks = self.hooks.get(t)
        if hooks:
            for hook in hooks:
                hook(s, self)
        if isinstance(s, ast.Assign):
            self.expr(s.value)
            for target in s.targets:
                self._target(target)
            for target in s.targets:
                self.bind(target, s.value)
        elif isinstance(s, ast.AugAssign):
            self.expr(s.value)
            self._target(s.target)
            if isinstance(s.target, ast.Name):
                combined = ast.BinOp(left=s.target, op=s.op, right=s.value)
                self.bind(s.target, combined)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.expr(s.value)
            self._target(s.target)
            self.bind(s.target, s.value)
        elif isinstance(s, (ast.Expr, ast.Return)):
            if s.value is not None:
                self.expr(s.value)
        elif isinstance(s, ast.If):
            self.test(s.test, "`if` test")
            self.expr(s.test)
            on_data = self._test_on_data(s.test)
            a, b = self._branch(s.body), self._branch(s.orelse)
            either = a.arrays | b.arrays
            a.meet(b)
            if on_data:
                # a branch on data becomes a select (or is refused): a name it assigns an array on
                # one path is a traced array after it on every path (`if s < LO: s = LO`, LO a
                # module constant), so a later test on it is on data too
                a.arrays |= either & {n.id for st in s.body + s.orelse for n in ast.walk(st)
                                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            self.state = a
        elif isinstance(s, ast.While):
            self.test(s.test, "`while` test")
            self.expr(s.test)
            self.state.meet(self._branch(s.body))
            self.state.meet(self._branch(s.orelse))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.expr(s.iter)
            saved = self.state.copy()
            self.bind(s.target, None)
            if self.is_array(s.iter) and isinstance(s.target, ast.Name):
                self.state.arrays.add(s.target.id)
            self.run(s.body)
            self.run(s.orelse)
            self.state.meet(saved)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, None)
            self.run(s.body)
        elif isinstance(s, _TRY):
            after = self._branch(s.body + s.orelse)
            for handler in s.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                after.meet(self._branch(handler.body))
            self.state = after
            self.run(s.finalbody)
        elif isinstance(s, ast.Assert):
            self.test(s.test, "`assert`")
            self.expr(s.test)
            if s.msg is not None:
                self.expr(s.msg)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in [*s.decorator_list, *s.args.defaults, *s.args.kw_defaults]:
                if d is not None:
                    self.expr(d)
            top = self.all_entries and not self.in_function
            self.run_function(s, entry=top, is_method=top and self.in_class)
            self.state.kill(s.name)
        elif isinstance(s, ast.ClassDef):
            if self.all_entries and not self.in_function:
                saved_state, self.in_class = self.state.copy(), True
                try:
                    self.run(s.body)
                finally:
                    self.state, self.in_class = saved_state, False
            self.state.kill(s.name)
        elif isinstance(s, ast.Raise):
            for part in (s.exc, s.cause):
                if part is not None:
                    self.expr(part)
        elif isinstance(s, ast.Delete):
            for target in s.targets:
                self._target(target)
                self.bind(target, None)
        elif isinstance(s, ast.Match):
            self.expr(s.subject)
            after = None
            for case in s.cases:
                branch = self._branch(case.body)
                if after is None:
                    after = branch
                else:
                    after.meet(branch)
            if after is not None:
                after.meet(self.state)
                self.state = after

    def _target(self, target: ast.expr) -> None:
        """Visit the expressions inside an assignment target (``a[i]``, ``o.x``)."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.expr(target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._target(elt)
        elif isinstance(target, ast.Starred):
            self._target(target.value)

    # --- entry points -------------------------------------------------------
    def run_function(self, fn, entry: bool, is_method: bool = False, parent: Scope | None = None) -> None:
        """Walk a function body; with ``entry``, its parameters are traced inputs."""
        saved_state, saved_scope = self.state, self.scope
        if parent is not None:
            self.scope = parent
        self.scope = function_scope(fn, self.scope)
        self.state = saved_state.copy() if parent is None else State()
        for name in self.scope.bound:
            self.state.kill(name)
        if entry:
            self.state.arrays |= array_params(fn, is_method)
            self.state.arguments = set(param_names(fn.args))
        self.function_depth += 1
        self.functions.append(fn)
        try:
            self.run(fn.body)
        finally:
            self.functions.pop()
            self.function_depth -= 1
            self.state, self.scope = saved_state, saved_scope

    def run_region(self, stmts, scope: Scope, inputs: set[str], in_function: bool) -> None:
        saved_state, saved_scope = self.state, self.scope
        self.scope, self.state = scope, State(arrays=inputs)
        self.function_depth += in_function
        try:
            self.run(stmts)
        finally:
            self.function_depth -= in_function
            self.state, self.scope = saved_state, saved_scope

    def collect_module_arrays(self) -> None:
        """Module-level names assigned NumPy arrays (targets of LP302)."""
        for stmt in self.module.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    self.bind(target, stmt.value)
        self.module_arrays = set(self.state.arrays)
        self.state = State()


def array_params(fn, is_method: bool) -> set[str]:
    """Parameters of a traced entry point that hold arrays.

    Not: ``self``/``cls``, ``*args``/``**kwargs``, parameters with a literal
    default, or an annotation naming a non-array type."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    if is_method and positional:
        positional = positional[1:]
    defaults = dict(zip([a.arg for a in [*args.posonlyargs, *args.args]][::-1], args.defaults[::-1], strict=False))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    out = set()
    for a in [*positional, *args.kwonlyargs]:
        d = defaults.get(a.arg)
        if d is not None and isinstance(d, (ast.Constant, ast.Tuple, ast.List, ast.Dict)):
            continue
        if a.annotation is not None:
            words = {n.id for n in ast.walk(a.annotation) if isinstance(n, ast.Name)} | {
                n.attr for n in ast.walk(a.annotation) if isinstance(n, ast.Attribute)} | {
                n.value for n in ast.walk(a.annotation) if isinstance(n, ast.Constant)}
            if words & _SCALAR_ANNOTATIONS and not any("rray" in str(w) or "Tensor" in str(w) for w in words):
                continue
        out.add(a.arg)
    return out


def module_scope(tree: ast.Module) -> Scope:
    return make_scope(tree.body, None)


def _literal_index(node) -> bool:
    """An index written as a literal (``3``, ``-1``, ``...``, ``None``): never traced."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant)
