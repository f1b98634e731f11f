"""Whether a converted branch may write into an array it did not make: copy-write-select.

A select runs every branch, so a branch that writes ``q[0] = v`` or updates
``q *= -1`` in place would change ``q`` for the branch that runs after it, and
for every other holder of that array. The rewrite gives such a branch a private
copy (``q = _leapp.private(site, q)`` at its start) and ``q`` flows out as a
selected value, exactly like a reassigned name. That is NumPy's behaviour only
when nothing else can see the array the branch would have written, which is what
``refusal`` proves about ``q`` at one ``if``, from the function's source:

- ``q`` is a local of the function: not a parameter (unless rebound before the
  ``if`` on every path), not a global or a name of an enclosing function, not
  declared ``global``/``nonlocal``, not read by a function defined inside it;
- every binding of ``q`` outside the ``if`` makes a new value (arithmetic, a
  NumPy call that makes a new array, ``.copy()``, a constant) or a view of
  another such array (``q = V[:, 0]`` after ``w, V = np.linalg.eigh(A)``);
- the names that may share its memory (``v = q[1:]``, ``V`` above, found by
  following every assignment in the function) are all such locals, none is
  passed to code leapp cannot read or stored in an attribute, and none is read
  in the writing branch or after the ``if``: there NumPy would show the write.

The ``if``'s own branches are left to the plan's checker, which runs the
branch's statements in order (a name the branch rebinds before writing is the
branch's own value, checked as before).
"""

from __future__ import annotations

import ast
import types

from leapp import table
from leapp.table.math_module import MATH_FUNCTIONS

from . import helpers, paths

# NumPy calls whose result is a new array (or a tuple of new arrays), never a view of an argument.
NEW_ARRAYS = frozenset(f"numpy.{n}" for n in """
zeros ones empty full eye identity zeros_like ones_like empty_like full_like array copy arange linspace
logspace geomspace concatenate stack vstack hstack dstack column_stack where clip round around dot matmul
vdot inner outer cross kron tensordot sum mean prod std var max min amax amin nanmax nanmin nansum
nanmean argmax argmin cumsum cumprod diff sort argsort tile repeat triu tril trace allclose isclose
array_equal any all count_nonzero median percentile quantile average interp polyval unique nan_to_num
linalg.norm linalg.det linalg.slogdet linalg.eigh linalg.eig linalg.eigvalsh linalg.eigvals linalg.svd
linalg.qr linalg.inv linalg.pinv linalg.solve linalg.cholesky linalg.lstsq linalg.matrix_power
linalg.multi_dot linalg.cross linalg.outer linalg.vector_norm linalg.matrix_norm linalg.matrix_rank
digitize searchsorted take take_along_axis bincount isin argwhere flatnonzero lexsort roll pad append
insert delete convolve correlate
""".split())
# ndarray methods whose result is new (no view of the receiver).
_NEW_METHODS = frozenset("""
copy astype sum mean prod std var max min any all argmax argmin cumsum cumprod dot round clip tolist
item flatten trace nonzero argsort searchsorted repeat take compress
""".split())
_SCALAR_ATTRS = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})
_CONSUMING_BUILTINS = frozenset({"float", "int", "bool", "len", "isinstance", "str", "repr", "hash",
                                 "complex", "abs", "round", "divmod", "pow", "any", "all", "sum", "range"})
_ALIASING_BUILTINS = frozenset({"min", "max", "tuple", "list", "zip", "enumerate", "sorted", "reversed",
                                "dict", "set", "frozenset", "slice"})


class _Flows:
    """For one function: every binding of each name (``stores``), the assignments that may make
    two names share memory (``edges``), and names handed to code that may keep them (``escapes``)."""

    def __init__(self, fn, ctx):
        self.ctx = ctx
        self.stores: dict[str, list] = {}  # name -> [(stmt, line, None or an unknown value's text, value)]
        self.edges: list = []  # (name, name, stmt, line, item): item, `B[i] = v` (a list would keep v)
        self.escapes: list = []  # (name, stmt, line, what)
        self.closures: dict[str, int] = {}  # name read by a def/lambda/class inside -> its line
        self.kept: set[str] = set()  # names rebound to a view of their own value somewhere
        for stmt in _statements(fn.body):
            self._statement(stmt)
        for node in _walk_scope(fn):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                for n in ast.walk(node):
                    if isinstance(n, ast.Name):
                        self.closures.setdefault(n.id, self.line(node))

    def line(self, node) -> int:
        return self.ctx.positions.start(node)[0]

    # --- statements -------------------------------------------------------------
    def _statement(self, s):
        self.stmt = s
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if s.value is None:
                return
            names, unknown = self.sources(s.value)
            if isinstance(s.value, _CONTAINERS):  # its items are shared by a copy of it: not an array
                unknown = f"a `{type(s.value).__name__.lower()}`"
            for t in targets:
                self._bind(t, names, unknown, s.value)
        elif isinstance(s, ast.AugAssign):
            names, unknown = self.sources(s.value)
            if isinstance(s.target, ast.Name):  # in place on an array, a rebinding of a number
                self._link(s.target.id, names)
            else:
                self._bind(s.target, names, unknown, s.value)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            names, unknown = self.sources(s.iter)
            self._bind(s.target, names, unknown, s.iter)
        elif isinstance(s, (ast.While, ast.If)):
            self.sources(s.test)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                names, _ = self.sources(item.context_expr)
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, names, ast.unparse(item.context_expr), item.context_expr)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._store(s.name, f"def {s.name}")
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for a in s.names:
                self._store((a.asname or a.name).split(".", 1)[0], "an import")
        elif isinstance(s, ast.Try):
            for h in s.handlers:
                if h.name:
                    self._store(h.name, "an exception")
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.sources(child)
            for n in _walk_scope(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self._store(n.id, f"a `{type(s).__name__}` statement")

    def _store(self, name, unknown, value=None):
        self.stores.setdefault(name, []).append((self.stmt, self.line(self.stmt), unknown, value))

    def _link(self, name, names, item=False):
        if name in names and not item:  # `x = x.reshape(-1)`: still (a view of) the array it was
            self.kept.add(name)
        for other in names:
            if other != name:
                self.edges.append((other, name, self.stmt, self.line(self.stmt), item))

    def _bind(self, target, names, unknown, value):
        if isinstance(target, ast.Name):
            self._store(target.id, unknown, value)
            self._link(target.id, names)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._bind(t, names, unknown, value)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, names, unknown, value)
        elif isinstance(target, ast.Subscript):  # `M[i] = q`: a list keeps q itself
            self.sources(target.slice)
            base = _written(target)
            if base is not None:
                self._link(base, names, item=True)
            else:
                self._escape(names, f"stored into `{ast.unparse(target)}`")
        elif isinstance(target, ast.Attribute):
            self.sources(target.value)
            self._escape(names, f"stored into `{ast.unparse(target)}`")

    def _escape(self, names, what):
        for n in names:
            self.escapes.append((n, self.stmt, self.line(self.stmt), what))

    # --- expressions ------------------------------------------------------------
    def sources(self, e) -> tuple[set, str | None]:
        """Names whose array ``e``'s value may be or share memory with, and the text of a call whose
        result leapp cannot show is new (None when there is none)."""
        self.unknown: str | None = None
        names = self._src(e)
        return names, self.unknown

    def _consume(self, e):
        held = self.unknown
        self._src(e)
        self.unknown = held

    def _src(self, e) -> set:
        if isinstance(e, ast.Name):
            return {e.id} if isinstance(e.ctx, ast.Load) else set()
        if isinstance(e, (ast.Constant, ast.JoinedStr, ast.Lambda)):
            if isinstance(e, ast.JoinedStr):
                for v in e.values:
                    self._consume(v)
            return set()
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            parts = [e.left, e.right] if isinstance(e, ast.BinOp) else [e.operand] if isinstance(
                e, ast.UnaryOp) else [e.left, *e.comparators]
            if isinstance(e, ast.BinOp) and any(isinstance(p, (ast.List, ast.Tuple)) for p in parts):
                return set().union(*(self._src(p) for p in parts))  # `[q] * 2` holds q itself
            for p in parts:
                self._consume(p)
            return set()
        if isinstance(e, ast.Subscript):
            self._consume(e.slice)
            return self._src(e.value)
        if isinstance(e, ast.Attribute):
            if e.attr in _SCALAR_ATTRS:
                self._consume(e.value)
                return set()
            return self._src(e.value)
        if isinstance(e, ast.IfExp):
            self._consume(e.test)
            return self._src(e.body) | self._src(e.orelse)
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.NamedExpr):
            self.unknown = ast.unparse(e)
            return self._src(e.value) | {e.target.id}
        out = set()
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                out |= self._src(child)
            elif isinstance(child, ast.comprehension):
                out |= self._src(child.iter)
                for cond in child.ifs:
                    self._consume(cond)
            elif isinstance(child, ast.keyword):
                out |= self._src(child.value)
        if isinstance(e, (ast.Await, ast.Yield, ast.YieldFrom)):
            self.unknown = ast.unparse(e)
        return out

    def _args(self, call) -> set:
        return set().union(set(), *(self._src(a) for a in call.args), *(self._src(k.value) for k in call.keywords))

    def _call(self, call) -> set:
        ctx, f = self.ctx, call.func
        q = ctx.call_name(call)
        if q is not None and q.startswith("numpy."):
            canon = table.canonical(q)
            entry = table.lookup(q)
            new = canon in NEW_ARRAYS or getattr(entry, "kind", "") == "ufunc"
            copies = next((k.value for k in call.keywords if k.arg == "copy"), None)
            if new and not any(k.arg == "out" for k in call.keywords) and not (
                    isinstance(copies, ast.Constant) and copies.value is not True):
                self._args(call)
                return set()
            return self._args(call)  # np.reshape, np.asarray, np.flip: maybe a view of an argument
        if q in MATH_FUNCTIONS:
            self._args(call)
            return set()
        if q is None and isinstance(f, ast.Attribute):
            if f.attr in _NEW_METHODS and not any(k.arg == "copy" for k in call.keywords):
                self._consume(f.value)
                self._args(call)
                return set()
            receiver = self._src(f.value)
            if f.attr in _WRITING_OR_VIEWING_METHODS:
                return receiver | self._args(call)
        name = ctx.builtin(f) if q is None else None
        if name in _CONSUMING_BUILTINS:
            self._args(call)
            return set()
        if name in _ALIASING_BUILTINS:
            return self._args(call)
        if helpers.verdict(call, ctx) is None:  # a function leapp proved free of side effects
            if helpers.returns_new(call, ctx):  # every `return` of it makes a new array
                self._args(call)
                return set()
            return self._args(call)  # (it may return an argument)
        if isinstance(f, ast.Attribute):
            self._consume(f.value)
            self._escape(self._src(f.value), f"the receiver of `{ast.unparse(f)}()`")
        args = self._args(call)
        self._escape(args, f"passed to `{ast.unparse(f)}`, which leapp cannot read")
        self.unknown = f"{ast.unparse(f)}(...)"
        return args


_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_WRITING_OR_VIEWING_METHODS = frozenset("""
reshape ravel view squeeze swapaxes transpose diagonal conj conjugate fill sort put resize partition
""".split())


def _written(target) -> str | None:
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _walk_scope(node):
    """The nodes of ``node``'s own scope, and the heads of the scopes inside it."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(n))


def _statements(stmts):
    for s in stmts:
        yield s
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(s, field, []) or [])
        for h in getattr(s, "handlers", []) or []:
            yield from _statements(h.body)
        for case in getattr(s, "cases", []) or []:
            yield from _statements(case.body)


def flows(facts, fn, ctx) -> _Flows:
    got = getattr(facts, "_leapp_flows", None)
    if got is None:
        got = _Flows(fn, ctx)
        facts._leapp_flows = got
    return got


def shares(e, ctx) -> set[str]:
    """Names whose array the value of the expression ``e`` may be or share memory with (``t0``,
    ``t0[1:]``, ``t0.reshape(-1)``, ``a if c else t0``; not ``t0 * 2`` nor ``np.where(c, t0, y)``)."""
    probe = _Flows.__new__(_Flows)
    probe.ctx, probe.stmt, probe.escapes = ctx, e, []
    return probe.sources(e)[0]


def _only_after(stmt, at, facts) -> bool:
    """Whether ``stmt`` starts after the statement ``at`` ends, and no loop holds both (a loop's
    next iteration would run it before ``at``)."""
    if (stmt.lineno, stmt.col_offset) < (at.end_lineno, at.end_col_offset):
        return False
    cur = facts.parents.get(at)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(cur, (ast.For, ast.AsyncFor, ast.While)) and _within(stmt, cur):
            return False
        cur = facts.parents.get(cur)
    return True


def _within(stmt, node) -> bool:
    """``stmt`` is one of the statements inside the ``if`` ``node`` (its branches, not its test)."""
    return stmt is not node and (node.lineno, node.col_offset) <= (stmt.lineno, stmt.col_offset) <= (
        node.end_lineno, node.end_col_offset)


def refusal(name: str, node, arm, facts, fn, ctx, at=None) -> str | None:
    """Why the branch ``arm`` of the ``if`` ``node`` may not write into ``name`` on a private copy
    (None: it may). The reason names the property and, where it is a binding, its line. ``at``: the
    statement that writes; a binding that runs only after it (`w = t[1:]` later, outside any loop
    around the write) shares the array ``name`` holds then, whose values NumPy's and the select's
    agree on, so it links nothing to the written array."""
    fl = flows(facts, fn, ctx)
    def array(b, seen=()) -> bool:  # every binding of b is an array: `b[i] = v` copies v's values into it
        got = [st for st in fl.stores.get(b, ()) if not _within(st[0], node)]
        return bool(got) and all(u is None and v is not None and makes_array(v, (*seen, b)) for _, _, u, v in got)

    def makes_array(v, seen) -> bool:  # an array, whatever the walker knows at the `if`: `t * 2` where
        if ctx.is_array(v) or (isinstance(v, ast.Call) and helpers.returns_array(v, ctx)):  # every
            return True  # binding of t (some after the `if`) is one
        if isinstance(v, ast.Name):
            return v.id not in seen and array(v.id, seen)
        if isinstance(v, ast.BinOp):  # with an array operand NumPy makes an array (a list's `*` does not)
            return makes_array(v.left, seen) or makes_array(v.right, seen)
        if isinstance(v, ast.UnaryOp):
            return makes_array(v.operand, seen)
        return False

    edges = [e for e in fl.edges if not _within(e[2], node) and not (e[4] and array(e[1]))
             and not (at is not None and _only_after(e[2], at, facts))]
    family, via = {name}, {}
    todo = [name]
    while todo:
        cur = todo.pop()
        for a, b, _stmt, line, _item in edges:
            for x, y in ((a, b), (b, a)):
                if x == cur and y not in family:
                    family.add(y)
                    via[y] = (cur, a, b, line)
                    todo.append(y)
    unrebound = types.SimpleNamespace(parents=facts.parents, params=set())
    rebound_before = paths.definitely_before(unrebound, node)

    def how(m) -> str:  # the binding that links m to the family, as "`v` is a view of `x` (line 3)"
        _, a, b, line = via[m]
        return f"`{b}` may be a view of `{a}` (line {line})"

    for m in sorted(family, key=lambda m: (m != name, m)):
        link = "" if m == name else f" ({how(m)})"
        if m in facts.declared:
            return f"`{m}` is declared global or nonlocal{link}: code outside the function would see the write"
        if m in fl.closures:
            return (f"`{m}` is read by the function defined at line {fl.closures[m]}"
                    f"{link}, which would see the write")
        if m in facts.params and not (m == name and m in rebound_before and m not in fl.kept):
            return f"`{m}` is a parameter{link}: the caller would see the write"
        if m not in facts.stores and m not in facts.params:
            return (f"`{m}` is not a local of the function (a global or a name of an enclosing function)"
                    f"{link}: code outside it would see the write")
        for stmt, line, unknown, _ in fl.stores.get(m, ()):
            if unknown is not None and not _within(stmt, node):
                return (f"`{m}` is bound to {unknown} at line {line}{link}, which leapp cannot show is a "
                        f"new array")
        for n, stmt, line, what in fl.escapes:
            if n == m and not _within(stmt, node):
                return f"`{m}` is {what} at line {line}{link}, which may keep it and see the write"
        if m != name:
            read_in_arm = any(isinstance(n, ast.Name) and n.id == m and isinstance(n.ctx, ast.Load)
                              for s in arm for n in ast.walk(s))
            if read_in_arm or paths.live_after(facts, m, node):
                where = "in the branch" if read_in_arm else "after the `if`"
                return f"{how(m)}, read {where}, where NumPy would show the write"
    return None
