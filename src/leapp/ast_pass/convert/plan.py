"""Which branches on data leapp converts, and what flows through them.

One analysis for every construct: a branch converts to a select only when
running it on inputs that take the *other* branch changes nothing but its own
local names and cannot raise. So its statements may only assign local names
(no ``x[i] = v``, no ``x *= 2`` on a maybe-shared array, no ``raise``), and its
calls must be known pure: NumPy functions in the table (not ``np.random``, not
``out=``, not the ``linalg`` solvers that raise on a singular matrix), ndarray
methods that do not write, and a few builtins. A refusal names the property
that failed and its line; lint reports it as LP202.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from typing import NoReturn

from leapp import table
from leapp.table.guards import GUARDED_LINALG
from leapp.table.math_module import MATH_FUNCTIONS

from ..dataflow import NDARRAY_METHODS
from . import helpers, owned, paths

MARKER = "# leapp: converted, line "  # ends every line a conversion inserts; the number is the user's line
_MARKED = re.compile(re.escape(MARKER) + r"\d+[ \t]*$", re.MULTILINE)


def holds_marker(source: str) -> bool:
    """A line of the user's that ends as an added line would: then nothing is converted there."""
    return MARKER in source and _MARKED.search(source) is not None

# Functions that write into their arguments, and linalg calls that raise on some inputs.
_WRITERS = frozenset({"numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal",
                      "numpy.put_along_axis"})
_SAFE_LINALG = frozenset({"norm", "det", "slogdet", "qr", "multi_dot",
                          "matmul", "cross", "outer", "trace", "diagonal", "vector_norm", "matrix_norm",
                          "vecdot", "matrix_transpose"})  # eigh, svd, pinv...: table.guards (NaN raises)
_WRITING_METHODS = frozenset({"fill", "sort", "put", "resize", "setfield", "setflags", "partition",
                              "byteswap", "dump", "tofile", "itemset"})
_PURE_BUILTINS = frozenset({"abs", "len", "min", "max", "round", "float", "int", "bool", "tuple", "list",
                            "range", "zip", "enumerate", "isinstance", "divmod", "pow", "complex", "slice",
                            "sorted", "reversed", "dict", "set", "frozenset", "str", "repr", "hash",
                            "any", "all", "sum"})
# Calls whose result is a new array no other code holds: a block may write into it (``R = np.eye(3);
# R[0, 1] = s``), since running the block on the other branch's inputs makes another one.
_FRESH = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.eye", "numpy.identity",
                    "numpy.zeros_like", "numpy.ones_like", "numpy.empty_like", "numpy.full_like",
                    "numpy.array", "numpy.copy", "numpy.arange", "numpy.linspace", "numpy.diag"})


@dataclass(frozen=True)
class Branch:
    """One branch on data: what leapp does with it (``verdict`` "select" or "refused")."""

    construct: str  # "if" (values flow out), "return" (every branch returns), "early", "ifexp", "while"
    line: int  # file coordinates, 1-based, of the `if` (of the test, for a conditional expression)
    col: int
    local: tuple  # where the transformer finds it in the analysed text
    verdict: str  # "select", "loop" (a bounded `while`, convert.loops) or "refused"
    reason: str = ""
    params: tuple = ()  # names passed into the branch functions
    outputs: tuple = ()  # names assigned from the select
    bound: int = 0  # a bounded `while`: its most iterations
    copies: tuple = ()  # per branch function: the names it writes into on a private copy (convert.owned)
    # construct "early": how many arms of the chain return early (``if a: return p`` / ``elif b:
    # return q``), and the arm that does not return, which runs after them as a local function
    # (``tail``: "else" for ``else: y = ...``, "if" for ``if c: y = ...`` / ``else: return z``,
    # whose early test is ``not c``; "" for none), passed ``tail_params``, handing on ``outputs``
    early: int = 1
    tail: str = ""
    tail_params: tuple = ()
    # construct "if": the early returns inside its arms (``if m: return r`` at an arm's top level),
    # as (their ``local``, params, copies), or (``local``, (), ((), ()), "if") for an `if` on data there whose
    # own arms hold early returns (planned on its own, with ``inner``), and the names the code after the
    # `if` writes into on a private copy;
    nested: tuple = ()
    after: tuple = ()
    inner: bool = False  # construct "early": an early return inside an arm of such an `if`; "if": an
    # `if` holding early returns inside an arm of such an `if` (that arm holds them in turn)
    # construct "early", tail "chain": per arm of the chain (the `else` last), whether it returns;
    # ``copies`` then holds the returning arms', the other arms' and the code after's, in that order
    returning: tuple = ()
    # construct "early": an early return inside a `for` loop over a `range` or a `with` block at the
    # top of the function (``_plan_held``): that statement's ``local`` (the file's line and column once
    # convert.apply has them), where the returns are held
    # in a list (one per iteration), and what it is ("a `for` loop", "a `with` block")
    held: tuple = ()
    held_in: str = ""

    @property
    def converted(self) -> bool:
        return self.verdict in ("select", "loop")

    def describe(self) -> str:
        what = {"if": "`if` statement", "return": "`if` whose branches return", "early": "early `return`",
                "ifexp": "conditional expression", "while": "`while` loop"}[self.construct]
        if self.verdict == "loop":
            flows = f", {', '.join(self.outputs)} carried" if self.outputs else ""
            return f"line {self.line}: {what} converted to {self.bound} masked iterations{flows}"
        if self.converted and self.construct == "early" and (self.early > 1 or self.tail):
            tests = "an `if`/`elif` chain of early returns" if self.early > 1 else "an early `return`"
            if self.tail == "if":
                tests = "an `else` branch that returns (its test negated)"
            if self.tail == "chain":
                flows = f" ({', '.join(self.outputs)})" if self.outputs else ""
                return (f"line {self.line}: an `if`/`elif` chain whose returning arms follow one that does not "
                        f"converted to {self.early} early return(s) selected at the end (each under the negated "
                        f"tests before it), then the {len(self.returning) - self.early} other arm(s) after "
                        f"them{flows}")
            rest = f", then the `{self.tail}` branch runs after it{' (' + ', '.join(self.outputs) + ')' if self.outputs else ''}" \
                if self.tail else ""
            return f"line {self.line}: {tests} converted to {self.early} early return(s) selected at the end{rest}"
        if self.converted and self.construct == "early" and self.held:
            return f"line {self.line}: early `return` inside {self.held_in} converted to a select (each time it runs)"
        if self.converted and self.construct == "early" and self.inner:
            return f"line {self.line}: early `return` inside a converted branch converted to a select"
        if self.converted:
            flows = f" ({', '.join(self.outputs)} selected)" if self.outputs else ""
            if self.nested:
                flows += f", with {len(self.nested)} early return(s) inside its branches"
            return f"line {self.line}: {what} converted to a select{flows}"
        return f"line {self.line}: {what} not converted: {self.reason}"


_BUILTIN_NAMES = frozenset(dir(builtins))
_CONCATENATORS = frozenset({"numpy.r_", "numpy.c_"})  # `np.r_[a, b]` joins its items: not an index


class _Refused(Exception):
    pass


class _Checker:
    """Proves a block free of side effects and of raising; raises _Refused with the reason."""

    may_guard = True  # may route a call for the runtime to check (``guardable``)

    def __init__(self, ctx, where: str, owner=None, *, guarded: bool = False):
        self.ctx, self.where = ctx, where
        self.guarded = guarded  # an arm of a converted `if` or conditional expression: the linalg
        # calls of table.guards run there on np.where(path, m, I) (runtime.branches.guarded)
        self.arrays: set[str] = set()  # names this block made arrays
        self.fresh: set[str] = set()  # names bound, on every path to here, to an array this block made
        self.rebound: set[str] = set()  # names this block binds, on some path to here, to a value not its own
        # owner(name) -> None or why not: whether the block may write, on a private copy made at its
        # start, into the value `name` had when it began (convert.owned); None: never
        self.owner = owner
        self.claimed: set[str] = set()  # names the block writes into on its private copy
        self.after_early = 0  # the line of an early return inside the block that its writes follow

    def line(self, node) -> int:
        return self.ctx.positions.start(node)[0]

    def refuse(self, node, what) -> NoReturn:
        raise _Refused(f"{self.where} {what} (line {self.line(node)})")

    def guardable(self, call) -> bool:
        """``v.min()`` on a value ``v`` the static pass cannot type (a dict input's value, a nested
        function's result): named like a NumPy method that writes nothing, it is routed through
        ``dispatch.array_method``, which refuses it while tracing unless ``v`` is NumPy's array or
        scalar (``guard_calls``). Not in a helper's body, which the compiled function's rewrite
        does not route."""
        f = call.func
        return self.may_guard and self.ctx.call_name(call) is None and isinstance(f, ast.Attribute) \
            and f.attr in NDARRAY_METHODS and f.attr not in _WRITING_METHODS

    def runs_checked(self, call) -> bool:
        """Whether ``call`` runs under the runtime's check that its receiver is NumPy's."""
        return any(entry[0] is call for entry in guard_calls(self.ctx))

    def arrayish(self, e) -> bool:
        if self.ctx.is_array(e):
            return True
        return any(isinstance(n, ast.Name) and n.id in self.arrays for n in ast.walk(e))

    # --- statements ---------------------------------------------------------
    def block(self, stmts, *, returns="last", loops=0):
        for i, s in enumerate(stmts):
            last = i == len(stmts) - 1
            self.stmt(s, returns=returns if last or returns == "any" else "none", loops=loops)

    def stmt(self, s, *, returns, loops):
        t = type(s)
        if t is ast.Assign:
            self.expr(s.value)
            for target in s.targets:
                self.target(target, s)
            if self.arrayish(s.value):
                self.arrays |= {n.id for tg in s.targets for n in ast.walk(tg) if isinstance(n, ast.Name)}
            self.bind(s.targets, s.value)
        elif t is ast.AnnAssign:
            if s.value is not None:
                self.expr(s.value)
            self.target(s.target, s)
            self.bind([s.target], s.value)
        elif t is ast.AugAssign:
            text = ast.unparse(s.target)
            self.claim(s.target, s, f"updates `{text}` in place", ", which running both branches would do "
                       f"twice (write `{text} = {text} {_OPS.get(type(s.op), '?')} ...`)")
            self.expr(s.value)
            if not isinstance(s.target, ast.Name):
                self.expr(s.target.value)
            if isinstance(s.target, ast.Subscript):
                self.index(s.target, s)
        elif t is ast.Pass:
            pass
        elif t is ast.Expr:
            if not isinstance(s.value, ast.Constant):
                self.refuse(s, "has a statement that is only a call, kept for its side effect")
        elif t is ast.If:
            self.expr(s.test)
            before, prior = set(self.fresh), set(self.rebound)
            self.block(s.body, returns=returns, loops=loops)
            # the `else` starts from what held before the `if`: a name the body rebound to another's
            # array is still the block's own there (`if d: t = y` / `else: t[0] = 0` writes its copy)
            (after_body, self.fresh), (rebound_body, self.rebound) = (self.fresh, before), (self.rebound, prior)
            self.block(s.orelse, returns=returns, loops=loops)
            self.fresh &= after_body
            self.rebound |= rebound_body
        elif t is ast.While and not s.orelse:  # bounded on data (convert.loops checks its bound), or plain
            self.expr(s.test)
            self.loop_body(s, s.body, "none", loops)
        elif t is ast.For and not s.orelse:
            self.expr(s.iter)
            self.target(s.target, s)
            self.loop_body(s, s.body, "none" if returns != "any" else "any", loops)
        elif t is ast.With and _plain_context(s, self.ctx) is None:  # np.errstate(...="ignore") and such
            self.with_items(s, bind=True)
            self.block(s.body, returns=returns, loops=loops)
        elif t in (ast.Break, ast.Continue):
            if not loops:
                self.refuse(s, f"has a `{t.__name__.lower()}` out of the branch")
        elif t is ast.Return:
            if returns == "none":
                self.refuse(s, "returns in the middle")
            if s.value is not None:
                self.expr(s.value)
        elif t is ast.Raise:
            self.refuse(s, "raises: a check on data cannot run in a graph, and dropping it would "
                           "hide the error (check the inputs before the traced code)")
        elif t is ast.Assert:
            self.refuse(s, "asserts on data")
        else:
            self.refuse(s, f"has a `{t.__name__}` statement")

    def with_items(self, s, *, bind: bool) -> None:
        """The arguments of a plain context manager's calls (``np.errstate(all="ignore")``) and the
        names its ``as`` binds."""
        for item in s.items:
            call = item.context_expr
            assert isinstance(call, ast.Call)
            for a in [*call.args, *(k.value for k in call.keywords)]:
                self.expr(a)
            if item.optional_vars is not None:
                self.target(item.optional_vars, s)
                if bind:
                    self.bind([item.optional_vars], None)

    def loop_body(self, loop, body, returns, loops) -> None:
        """A loop's body, checked from the state a later iteration may start in: every name the loop
        binds is not yet fresh there (an earlier iteration bound it). After the loop a name it binds
        is fresh when it was fresh before it (no iteration ran) and at the end of the body: that
        end state, from the least fresh start, holds in every iteration."""
        stored = _stored([loop])
        before, prior = set(self.fresh), set(self.rebound)
        self.rebound |= stored
        self.fresh -= stored
        self.block(body, returns=returns, loops=loops + 1)
        # a name every iteration binds to a new array is not rebound to another's value by the loop
        self.rebound -= (stored & self.fresh) - prior
        # nor one the block made before the loop that the loop binds only to new arrays (`t = y * 2`
        # / `while ...: if c: t = -y`): on every path it holds an array the block made
        made = {n for n in stored & before - prior if self.binds_new_only(loop, n)}
        self.rebound -= made
        self.fresh = (self.fresh - stored) | (before & self.fresh & stored) | made

    def binds_new_only(self, loop, name) -> bool:
        """Whether every binding of ``name`` in ``loop`` (its target included) is ``name = <a new
        array>``."""
        stores = sum(1 for n in ast.walk(loop)
                     if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store))
        new = 0
        for s in ast.walk(loop):
            if isinstance(s, ast.Assign) and self.is_fresh(s.value):
                names = [t.id for t in s.targets if isinstance(t, ast.Name)]
                if len(names) == len(s.targets):
                    new += names.count(name)
        return stores == new

    def target(self, target, stmt):
        for n in ast.walk(target):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
                self.claim(n, stmt, f"writes into `{ast.unparse(n)}`", " (an array or object shared with the "
                           "other branch)")
                self.expr(n.slice)
                self.index(n, stmt)
                continue
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                self.refuse(stmt, f"writes into `{ast.unparse(n)}` (an array or object shared with the "
                                  "other branch)")
        for n in ast.walk(target):  # x[i][j] = v: the inner read is a load, with its own index
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                self.expr(n)

    def claim(self, target, stmt, what, shared) -> None:
        """``target`` is written in place: the array this block made, or (``owner``) the value its name
        had when the block began, written on the block's private copy; else refused: ``what`` and why."""
        name = self.written(target)
        if name in self.fresh:
            return
        if self.after_early:  # the held early return's value may be this very array
            self.refuse(stmt, f"{what} after the early return at line {self.after_early}, whose value may be "
                              "that array (write into a new array: `r = r.copy()` first)")
        if name is None or self.owner is None or name in self.rebound:
            self.refuse(stmt, what + shared)
        why = self.owner(name, stmt)
        if why is not None:
            self.refuse(stmt, f"{what}, and {why}")
        self.claimed.add(name)
        self.fresh.add(name)

    def on_data(self, index) -> bool:
        """Whether an index holds an integer index on data, which may be out of range on the other
        branch's inputs (NumPy raises there). Each element of a tuple counts (``e[j, 0]``); a boolean
        mask does not: its shape is static, so it raises on every input alike or on none."""
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        is_mask = getattr(self.ctx, "is_mask", None)
        return any(self.arrayish(p) and not (is_mask is not None and is_mask(p)) for p in parts)

    def index(self, target, stmt) -> None:
        """A write's index on data may be out of range on the other branch's inputs: NumPy raises."""
        while isinstance(target, ast.Subscript):
            if self.on_data(target.slice) and not self.guarded:  # guarded: np.where(path, j, 0)
                self.refuse(stmt, f"writes into `{ast.unparse(target)}` at an index on data, which raises "
                                  "where it is out of range on the other branch's inputs")
            target = target.value

    @staticmethod
    def written(target) -> str | None:
        """The name an assignment to ``target`` writes into (``R`` for ``R[0, 1]`` and ``R[0][1]``)."""
        while isinstance(target, ast.Subscript):
            target = target.value
        return target.id if isinstance(target, ast.Name) else None

    def bind(self, targets, value) -> None:
        """Track which names hold an array this block made (``self.fresh``)."""
        for target in targets:
            names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if isinstance(target, ast.Name) and value is not None and self.is_fresh(value):
                self.fresh.add(target.id)
            elif isinstance(target, (ast.Name, ast.Tuple, ast.List, ast.Starred)):
                self.fresh -= names
                self.rebound |= names

    def is_fresh(self, e) -> bool:
        if isinstance(e, (ast.BinOp, ast.UnaryOp)):
            return True  # arithmetic makes a new array (or an immutable number)
        if isinstance(e, ast.IfExp):  # either arm's value (or, converted, a select of both)
            return self.is_fresh(e.body) and self.is_fresh(e.orelse)
        if not isinstance(e, ast.Call):
            return False
        q = self.ctx.call_name(e)
        if q is not None and q.startswith("numpy."):
            canon = table.canonical(q)
            copies = next((k.value for k in e.keywords if k.arg == "copy"), None)
            new = canon in _FRESH or canon in owned.NEW_ARRAYS or getattr(table.lookup(q), "kind", "") == "ufunc"
            return new and not any(k.arg == "out" for k in e.keywords) and (copies is None or (
                isinstance(copies, ast.Constant) and copies.value is True))
        if q is None and helpers.returns_new(e, self.ctx) and helpers.verdict(e, self.ctx) is None:
            return True  # a helper proven free of side effects whose every `return` makes a new array
        f = e.func
        if not (isinstance(f, ast.Attribute) and (self.arrayish(f.value) or self.runs_checked(e))):
            return False
        if f.attr == "copy":
            return not e.args
        if f.attr == "astype":  # copies unless told `copy=False` (then it may hand back its receiver)
            copies = next((k.value for k in e.keywords if k.arg == "copy"), None)
            return len(e.args) == 1 and (copies is None or (isinstance(copies, ast.Constant) and copies.value is True))
        return False

    # --- expressions --------------------------------------------------------
    def expr(self, e):
        for n in ast.walk(e):
            t = type(n)
            if isinstance(n, ast.Call):
                self.call(n)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and self.on_data(n.slice) \
                    and self.ctx.scope.qualname(n.value) not in _CONCATENATORS and not self.guarded:
                # in an arm (``guarded``) the index runs as np.where(path, j, 0) (runtime.branches)
                self.refuse(n, f"indexes `{ast.unparse(n)}` with an array, which can be out of range "
                               "on the other branch's inputs")
            elif t in (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await):
                self.refuse(n, f"has a `{t.__name__}` expression")

    def call(self, call):
        ctx = self.ctx
        for k in call.keywords:
            if k.arg == "out":
                self.refuse(call, "writes with `out=`")
        q = ctx.call_name(call)
        text = ast.unparse(call.func)
        if q is not None and q.startswith("numpy."):
            if q.startswith("numpy.random."):
                self.refuse(call, f"draws random numbers (`{text}`)")
            canon = table.canonical(q)
            entry = table.lookup(q)
            if not isinstance(entry, table.Entry):
                self.refuse(call, f"calls `{text}`, which leapp does not trace")
            if canon in _WRITERS or canon.endswith(".at"):
                self.refuse(call, f"calls `{text}`, which writes into its argument")
            if canon.startswith("numpy.linalg.") and canon.rsplit(".", 1)[1] not in _SAFE_LINALG \
                    and not (self.guarded and canon in GUARDED_LINALG):
                self.refuse(call, f"calls `{text}`, which raises on some inputs (a singular matrix) "
                                  "that the other branch may take")
            return
        if q == "leapp.bounded":  # a bounded `while` test (convert.loops): its operands are walked
            return
        if q in MATH_FUNCTIONS:  # recorded as the NumPy ufunc (runtime/math_calls.py)
            return
        name = ctx.builtin(call.func) if q is None else None
        if name is not None and (name in _BUILTIN_NAMES or ctx.helpers is None):
            if name not in _PURE_BUILTINS:
                self.refuse(call, f"calls `{name}()`, which leapp cannot show is free of side effects")
            return
        f = call.func
        if q is None and isinstance(f, ast.Attribute) and f.attr in NDARRAY_METHODS and self.arrayish(f.value):
            if f.attr in _WRITING_METHODS:
                self.refuse(call, f"calls `.{f.attr}()`, which writes into the array")
            return
        why = helpers.verdict(call, ctx)  # a function whose source leapp reads: proven, recursively
        if why is None:
            return
        if self.guardable(call):  # obs["k"].min(): the runtime checks it is NumPy's method
            guard_calls(ctx).append([call, None])
            return
        shown = f"`{text}`" if q is not None else f"`{text}()`"
        self.refuse(call, f"calls {shown}, which leapp cannot show is free of side effects"
                          + (f": {why}" if why else ""))


class _HelperChecker(_Checker):
    """A function a branch calls (``convert.helpers``): its ``raise``/``assert`` are decided by its
    own tests, which leapp sees while tracing when they are on data; a ``try`` would hide one."""

    may_guard = False

    def stmt(self, s, *, returns, loops):
        if isinstance(s, (ast.Raise, ast.Assert)):
            return  # what it raises is built only when it raises, which is while tracing
        super().stmt(s, returns=returns, loops=loops)

    def refuse(self, node, what) -> NoReturn:
        raise _Refused(f"{self.where} {what} (line {self.line(node)})")


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
        ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@"}


# --- names ------------------------------------------------------------------------


def _stored(stmts) -> set[str]:
    out = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def _definitely_assigned(stmts) -> set[str]:
    """Names every path through ``stmts`` assigns (an inner `if` counts where both sides do)."""
    out = set()
    for s in stmts:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(s, ast.If):
            out |= _definitely_assigned(s.body) & _definitely_assigned(s.orelse)
    return out


class _FunctionFacts:
    """Per function: a parent map and each name's loads and stores with positions."""

    def __init__(self, fn):
        self.parents = {}
        self.loads: dict[str, list] = {}
        self.stores: dict[str, list] = {}
        self.declared = set()  # global / nonlocal names
        args = fn.args
        self.params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                       *(x for x in (args.vararg, args.kwarg) if x is not None)]}
        stack = [fn]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    continue  # another scope
                stack.append(child)
                if isinstance(child, ast.Name):
                    where = self.loads if isinstance(child.ctx, ast.Load) else self.stores
                    where.setdefault(child.id, []).append((child.lineno, child.col_offset))
                elif isinstance(child, (ast.Global, ast.Nonlocal)):
                    self.declared |= set(child.names)


_facts_cache: dict = {}


def _facts(fn) -> _FunctionFacts:
    got = _facts_cache.get(id(fn))
    if got is None or got[0] is not fn:
        if len(_facts_cache) > 256:
            _facts_cache.clear()
        got = (fn, _FunctionFacts(fn))
        _facts_cache[id(fn)] = got
    return got[1]


def _inside(pos, node) -> bool:
    return (node.lineno, node.col_offset) <= pos <= (node.end_lineno, node.end_col_offset)


# --- the constructs ---------------------------------------------------------------


def _chain(node):
    """``if``/``elif``/.../``else`` as ([(test, body), ...], else_body or None)."""
    arms, cur = [], node
    while True:
        arms.append((cur.test, cur.body))
        if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) and _is_elif(cur.orelse[0], cur):
            cur = cur.orelse[0]
            continue
        return arms, (cur.orelse or None)


def _is_elif(inner, outer) -> bool:
    return inner.col_offset == outer.col_offset and inner.lineno > outer.lineno


def elif_nodes(node) -> list:
    """The `elif` nodes of the chain headed by ``node`` (planned with it, not alone)."""
    out, cur = [], node
    while len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) and _is_elif(cur.orelse[0], cur):
        cur = cur.orelse[0]
        out.append(cur)
    return out


def _ends_in_return(body) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return)


def guard_calls(ctx) -> list:
    """[call, Branch] for the calls a branch's checker let through on the runtime's check
    (``_Checker.guardable``); the Branch is filled in when its plan is done (``tag_guard_calls``)
    and the rewrite routes the calls of converted ones (``guarded_calls``)."""
    calls = ctx.__dict__.get("_guard_calls")
    if calls is None:
        calls = ctx._guard_calls = []
    return calls


def tag_guard_calls(ctx, mark: int, branch: Branch) -> None:
    """The calls recorded since ``mark`` were checked for ``branch`` (a nested branch's own, planned
    inside it, are already tagged with that branch)."""
    for entry in guard_calls(ctx)[mark:]:
        if entry[1] is None:
            entry[1] = branch


def guarded_calls(ctx) -> list:
    """The calls to route through ``dispatch.array_method``: those checked for a converted branch."""
    seen: dict = {}
    for call, branch in guard_calls(ctx):
        if branch is not None and branch.converted:
            seen[id(call)] = call
    return list(seen.values())


def plan_if(node: ast.If, ctx) -> Branch:
    line, col = ctx.positions.start(node)
    local = (node.lineno, node.col_offset)
    try:
        construct, params, outputs, copies, extra = _plan_if(node, ctx)
    except _Refused as exc:
        return Branch("if", line, col, local, "refused", str(exc))
    return Branch(construct, line, col, local, "select", "", params, outputs, copies=copies, **extra)


def _arm_checker(ctx, where, node, arm, facts, fn, *, guarded: bool = False) -> _Checker:
    """A branch's checker that may write into a local array on a private copy (convert.owned);
    ``guarded``: an arm of an `if`, where the solvers of table.guards run guarded."""
    return _Checker(ctx, where, owner=lambda name, at=None: owned.refusal(name, node, arm, facts, fn, ctx, at),
                    guarded=guarded)


def _plan_if(node, ctx):
    if not ctx.convert:
        raise _Refused("conversion is off (convert_control_flow=False)")
    if not ctx.functions:
        raise _Refused("it is outside a function")
    fn = ctx.functions[-1]
    if holds_marker(ctx.source):
        raise _Refused(f"a line of the source already ends with leapp's marker `{MARKER.strip()} N`")
    facts = _facts(fn)
    parent = facts.parents.get(node)
    if isinstance(parent, ast.If) and parent.orelse == [node] and _is_elif(node, parent):
        raise _Refused("it is an `elif` of an `if` whose test is not on data (write `else:` and "
                       "an `if` inside it)")
    arms, orelse = _chain(node)
    bodies = [body for _, body in arms] + ([orelse] if orelse else [])
    for i, (test, _) in enumerate(arms):
        if i:  # an elif test runs on inputs Python would not have tested
            _Checker(ctx, "the `elif` test").expr(test)
        _BoolTest(ctx).check(test)
    # an arm returns when every path through it does: its last statement is a `return`, or an
    # `if`/`else` whose arms all return (dm_control's `if a: (if b: return p else: return q) else:
    # return r`), which the plan below holds as a returning arm like any other
    returning = [bool(b) and _returns_at_end(b) for b in bodies]
    # an arm that raises exits too: planned with the others, and refused for raising (its own reason)
    exits = [r or (bool(b) and isinstance(b[-1], ast.Raise)) for r, b in zip(returning, bodies, strict=True)]
    if any(returning):
        if all(exits) and orelse is not None:
            copies = []
            for i, body in enumerate(bodies):
                checker = _arm_checker(ctx, _arm_name(i, len(arms)), node, body, facts, fn, guarded=True)
                checker.block(body, returns="last")
                copies.append(tuple(sorted(checker.claimed)))
            assigned = set().union(*(_stored(b) for b in bodies))
            params = _needs(bodies, assigned) | set().union(*map(set, copies))
            _check_defined(facts, node, params | _read_locals(facts, bodies), paths.definitely_before(facts, node),
                           ctx)
            return "return", tuple(sorted(params)), (), tuple(copies), {}
        holder = _holder(node, fn, facts, ctx)
        if holder is not None:
            if orelse or len(arms) > 1:
                raise _Refused(f"it returns early inside {holder[1]} with an `elif` or `else` (write `if "
                               "test: ... return` alone there)")
            return _plan_held(node, fn, facts, ctx, *holder)
        outer = _enclosing_if(node, facts)
        if outer is not None and not orelse and len(arms) == 1:
            # planned with the `if` around it, which the static pass met first (its test comes first)
            at = (outer.lineno, outer.col_offset)
            head = next((b for b in getattr(ctx, "branches", ()) if b.local == at
                         and b.construct not in ("ifexp", "while")), None)
            record = next((r for r in head.nested if r[0] == (node.lineno, node.col_offset)), None) \
                if head is not None and head.converted and head.construct == "if" else None
            if record is not None:
                return "early", record[1], (), record[2], dict(inner=True)
            if head is None and _plain_ifs_to(node, fn, facts, ctx):
                # inside `if` arms Python decides (`if unit:` / `if x.ndim < 3:`): an early return
                # whose block ends in a return, merged at that block's returns
                block = paths._block_of(facts.parents[node], node)
                assert block is not None
                return _plan_early(node, fn, facts, ctx, [node.body], None, "else", block)
            if head is None:
                raise _Refused("it returns early inside a branch of an `if` whose test is not on data, and the "
                               "rest of that branch does not end in a `return` (return from every path of the "
                               "branch, or move the early return to the top of the function)")
            if not head.converted:
                raise _Refused(f"it returns early inside a branch of the `if` at line {head.line}, which is "
                               f"not converted ({head.reason})")
        if facts.parents.get(node) is fn:
            # `if a: return p` / `elif b: return q` / [`else: <no return>`] / rest is `if a: return p`,
            # `if b: return q`, the `else` body, rest; `if c: <no return>` / `else: return z` / rest is
            # `if not c: return z`, the `if` body, rest: a sequence of early returns Python runs alike
            # an arm that raises exits too: it is planned with the others, and refused for raising
            if all(exits[:len(arms)]) and (orelse is None or not exits[-1]):
                return _plan_early(node, fn, facts, ctx, [body for _, body in arms], orelse, "else")
            if len(arms) == 1 and orelse is not None and exits == [False, True]:
                return _plan_early(node, fn, facts, ctx, [orelse], bodies[0], "if")
            # a returning arm after one that does not: the same early returns, each under the
            # negation of the non-returning tests before it, then a select over the other arms
            return _plan_mixed(node, fn, facts, ctx, arms, orelse, exits)
        raise _Refused("one branch returns and another does not, and the `if` is not at the top of the "
                       "function body (put the code after the `if` in an `else`, or return from every branch)")
    copies, ends = [], []
    nested: list = []
    within = _within(node, fn, facts, ctx)
    for i, body in enumerate(bodies):
        checker = _arm_checker(ctx, _arm_name(i, len(arms)), node, body, facts, fn, guarded=True)
        inner = [s for s in body if _nested_early(s, ctx)]
        holders = [s for s in body if _holds_early(s)]
        if (inner or holders) and facts.parents.get(node) is not fn:
            if holders and within:
                raise _Refused(f"it holds an early return three `if`s deep (line {holders[0].lineno + ctx.positions.line_offset}); "
                               "leapp holds those of two converted `if`s at the top of the function")
            if not within:
                checker.block(body, returns="none")  # refused: returns in the middle
        for s in body:
            if s in holders:
                # an `if` on data whose arms hold early returns (``if b:`` / ``if c: return r``): planned
                # on its own (nested in this arm, ``within``), its held returns held by this arm too; its
                # tests run on every input this arm runs on, and what follows it is after an early return
                for test, _ in _chain(s)[0]:
                    _BoolTest(ctx).check(test)
                    checker.expr(test)
                nested.append(((s.lineno, s.col_offset), (), ((), ()), "if"))
                checker.fresh, checker.owner = _fresh_after_holder(ctx, checker, s), None
                checker.rebound |= _stored([s])
                checker.after_early = s.lineno + ctx.positions.line_offset
                continue
            if s not in inner:
                checker.stmt(s, returns="none", loops=0)
                continue
            # `if m: return r` inside the arm: an early return held with the arm's path (runtime
            # branches.early), its test run on every input the arm runs on; what the arm does
            # after it must not change an array the held value may be (it writes on none)
            _BoolTest(ctx).check(s.test)
            checker.expr(s.test)
            early = _arm_checker(ctx, "the early-return branch", s, s.body, facts, fn, guarded=True)
            early.block(s.body, returns="last")
            claimed = tuple(sorted(early.claimed))
            inner_params = tuple(sorted(_needs([s.body], _stored(s.body)) | early.claimed))
            _check_defined(facts, s, set(inner_params), paths.definitely_before(facts, s), ctx)
            nested.append(((s.lineno, s.col_offset), inner_params, (claimed, ())))
            checker.fresh, checker.owner = set(), None
            checker.after_early = s.lineno + ctx.positions.line_offset
        copies.append(tuple(sorted(checker.claimed)))
        ends.append((set(checker.fresh), set(checker.rebound)))
    written = set().union(*map(set, copies))  # flows out like a reassigned name, from its copy
    assigned, everywhere, outputs, defined = _selected(facts, node, ctx, bodies, written, bool(orelse))
    params = _needs(bodies, assigned) | (set(outputs) - everywhere) | written
    _check_defined(facts, node, params | _read_locals(facts, bodies), defined, ctx)
    # without an `else`, the input that takes no branch keeps what the names held before the `if`
    _check_updated_after(node, fn, facts, ctx, bodies if orelse else [*bodies, []], outputs, ends, len(arms))
    if not nested:
        return "if", tuple(sorted(params)), tuple(outputs), tuple(copies), {}
    if within:  # the `if` whose arm holds this one checks what runs after it (its arm's rest, the function's)
        return "if", tuple(sorted(params)), tuple(outputs), tuple(copies), dict(nested=tuple(nested), inner=True)
    # the code after the `if` runs on every input, also on those an inner early return holds: it is
    # code after an early return (as in _plan_early), and the function must end in a `return`
    rest = fn.body[fn.body.index(node) + 1:]
    if not rest or not _returns_at_end(rest):
        raise _Refused("the function can fall off its end after the early return inside a branch (end it "
                       "with a `return`)")
    after = _arm_checker(ctx, "the code after the early return", node, rest, facts, fn, guarded=True)
    after.block(rest, returns="any")
    _check_defined(facts, node, _read_locals(facts, [rest]) - set(outputs), defined, ctx)
    return "if", tuple(sorted(params)), tuple(outputs), tuple(copies), dict(
        nested=tuple(nested), after=tuple(sorted(after.claimed)))


def _nested_early(s, ctx) -> bool:
    """``if m: <...> return r`` with no `else`: an early return inside an arm, converted whether or
    not its test is on data (``runtime.branches.early`` branches as Python does on a plain test)."""
    return isinstance(s, ast.If) and not s.orelse and _ends_in_return(s.body)


def _holds_early(s) -> bool:
    """An `if` (not itself an early return) with an early return at the top of one of its arms."""
    if not isinstance(s, ast.If) or _nested_early(s, None):
        return False
    arms, orelse = _chain(s)
    return any(_nested_early(t, None) for body in [*(b for _, b in arms), orelse or []] for t in body)


def _within(node, fn, facts, ctx) -> bool:
    """Whether ``node`` is an `if` at the top level of an arm of a converted `if` at the top of the
    function that holds its early returns (``_holds_early``, recorded in that `if`'s ``nested``)."""
    outer = _enclosing_if(node, facts)
    if outer is None or facts.parents.get(outer) is not fn:
        return False
    at = (outer.lineno, outer.col_offset)
    head = next((b for b in getattr(ctx, "branches", ()) if b.local == at and b.construct not in ("ifexp", "while")),
                None)
    return head is not None and head.converted and head.construct == "if" and any(
        len(r) > 3 and r[0] == (node.lineno, node.col_offset) for r in head.nested)


def _plain_ifs_to(node, fn, facts, ctx) -> bool:
    """Whether every block from ``node`` up to ``fn``'s body is an arm of an `if` leapp does not
    convert (Python picks one arm), and the rest of ``node``'s block ends in a `return` on every path:
    then no path leaves that block after ``node``, and its returns are the only ones to merge."""
    converted = {b.local for b in getattr(ctx, "branches", ()) if b.construct not in ("ifexp", "while")}
    cur = node
    while True:
        parent = facts.parents.get(cur)
        if parent is fn:
            break
        if not isinstance(parent, ast.If) or (parent.lineno, parent.col_offset) in converted:
            return False
        head = parent
        while True:
            up = facts.parents.get(head)
            if isinstance(up, ast.If) and up.orelse == [head] and _is_elif(head, up):
                head = up
                continue
            break
        if (head.lineno, head.col_offset) in converted:
            return False
        cur = parent
    block = paths._block_of(facts.parents[node], node)
    if block is None or node not in block:
        return False
    rest = block[block.index(node) + 1:]
    return bool(rest) and _returns_at_end(rest)


def _fresh_after_holder(ctx, checker, holder) -> set:
    """The names bound to an array of the arm's own on every path through ``holder`` (an `if` on
    data whose arms return early) that reaches its end, where no return it holds may hand on one of
    them: each returns a new array (``return t0 * 2``). Otherwise none (``return t0`` may be the
    very array a later write in the arm would change)."""
    probe = _Checker(ctx, checker.where)
    returned = [n.value for n in ast.walk(holder) if isinstance(n, ast.Return)]
    if any(v is not None and not probe.is_fresh(v) for v in returned):
        return set()
    probe.fresh, probe.rebound = set(checker.fresh), set(checker.rebound)
    try:
        probe.stmt(holder, returns="any", loops=0)
    except _Refused:
        return set()
    return probe.fresh


def _enclosing_if(node, facts):
    """The head of the `if`/`elif` chain whose arm holds ``node`` at its top level, or None."""
    parent = facts.parents.get(node)
    if not isinstance(parent, ast.If) or not (node in parent.body or node in parent.orelse):
        return None
    if parent.orelse == [node] and _is_elif(node, parent):
        return None  # an `elif`, not a statement of an arm
    while True:
        up = facts.parents.get(parent)
        if isinstance(up, ast.If) and up.orelse == [parent] and _is_elif(parent, up):
            parent = up
            continue
        return parent


def _check_updated_after(node, fn, facts, ctx, bodies, outputs, ends, n_arms) -> None:
    """A select makes a new array of what flows out, so an update in place after the `if`
    (``z += d``, ``z[0] = v``) no longer reaches the array a branch bound ``z`` to (``z = y``: in
    NumPy ``y`` changes too). Each branch must leave such a name bound to an array of its own: one
    it made, or (a branch that does not assign it) the one from before the `if`, if nothing else
    holds that one (convert.owned)."""
    _check_aliases_updated_after(node, fn, ctx, facts, bodies, outputs, ends, n_arms)
    for name in outputs:
        line = _updated_after(fn, node, name, facts.parents)
        if line is None:
            continue
        for i, body in enumerate(bodies):
            arm = _arm_name(i, n_arms) if i < len(ends) else "the input that takes no branch"
            if name in _stored(body):
                fresh, rebound = ends[i]
                if name in fresh:  # on every path to the arm's end, whatever it was bound to before
                    continue
                if name in rebound:
                    why = f"{arm} binds it to an array it did not make"
                else:  # bound to new arrays on some of the branch's paths only: the others keep the old
                    held = owned.refusal(name, node, [], facts, fn, ctx)
                    if held is None:
                        continue
                    why = f"{arm} keeps the array from before the `if` on some paths, and {held}"
            else:
                held = owned.refusal(name, node, [], facts, fn, ctx)
                if held is None:
                    continue
                why = f"{arm} keeps the array from before the `if`, and {held}"
            raise _Refused(f"`{name}` is updated in place after the `if` (line {line + ctx.positions.line_offset}) "
                           f"and {why}: a select hands on a new array, so NumPy's update of the array "
                           f"`{name}` was bound to would be lost (make it a new array in every branch: "
                           f"`{name} = np.array(...)`, or update it with `{name} = {name} + ...`)")


def _check_aliases_updated_after(node, fn, ctx, facts, bodies, outputs, ends, n_arms) -> None:
    """The other half: an arm that binds an output to another name's array (``w = t0``, ``w =
    t0[1:]``) makes ``w`` that array in NumPy, so an update in place of ``t0`` after the `if`
    changes ``w`` too; the select hands on a new array, which the update does not reach."""
    for i, body in enumerate(bodies[:len(ends)]):
        fresh, _ = ends[i]
        for name in outputs:
            if name in fresh or name not in _stored(body):
                continue
            # the arrays a binding of `name` may share (`t0`, `t0[1:]`, `w, k = t0, x`), not those it
            # computes from (`w = t0 + y`, `w = np.where(c, x, t0)`)
            sources = {n for st in ast.walk(ast.Module(body=list(body), type_ignores=[]))
                       if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None
                       for value in _bound_to(name, st)
                       for n in owned.shares(value, ctx) if n != name}
            _refuse_shared_updated(fn, node, facts, ctx, name, sources, _arm_name(i, n_arms), "the `if`",
                                   lambda source, name=name: f"`{name} = {source}.copy()` in the branch")


def _refuse_shared_updated(fn, node, facts, ctx, name, sources, who, after, fix) -> None:
    """Refused where ``who`` (an arm, a conditional expression) binds ``name`` to the array of a
    name in ``sources`` that is updated in place after ``node``: NumPy's ``name`` sees the update,
    the select's new array does not."""
    for source in sorted(sources):
        line = _updated_after(fn, node, source, facts.parents)
        if line is not None:
            raise _Refused(
                f"{who} binds `{name}` to `{source}`'s array, which is updated in place after {after} (line "
                f"{line + ctx.positions.line_offset}): in NumPy `{name}` sees that update, but a select hands "
                f"on a new array, which it does not reach (write {fix(source)}, or update `{source}` with "
                f"`{source} = {source} + ...`)")


def _bound_to(name, st) -> list:
    """The expressions an assignment binds ``name`` to: ``t0`` for ``w, k = t0, x``; the whole value
    where a target unpacks something else (``w, k = pair``)."""
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    out: list = []

    def pair(target, value):
        if isinstance(target, ast.Name):
            if target.id == name:
                out.append(value)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            for t, v in zip(target.elts, value.elts, strict=True):
                pair(t, v)
        elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
            out.append(value)

    for target in targets:
        pair(target, st.value)
    return out


def _updated_after(fn, node, name, parents) -> int | None:
    """The first line after ``node`` (within ``fn``) that writes into ``name``'s array in place
    while ``name`` may still hold what the `if` handed on: a write after a statement that rebinds
    ``name`` in the write's own block, or in a block around it, after the `if`
    (``x = np.array(x); x[0] = v``), writes the new array."""
    end = (node.end_lineno, node.end_col_offset)

    def root(t):
        while isinstance(t, (ast.Subscript, ast.Attribute)):
            t = t.value
        return t.id if isinstance(t, ast.Name) else None

    def rebinds(st) -> bool:
        if isinstance(st, ast.If):  # `if c: t = A` / `else: t = B` binds it on every path
            return name in _definitely_assigned([st])
        targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(
            st, (ast.AnnAssign, ast.For)) else []
        return any(isinstance(t, ast.Name) and t.id == name for t in targets)

    def rebound_before(n) -> bool:
        cur = n
        while cur is not fn and cur is not None:
            parent = parents.get(cur)
            block = paths._block_of(parent, cur) if parent is not None else None
            if block is not None:
                for st in block[:block.index(cur)]:
                    if (st.lineno, st.col_offset) >= end and rebinds(st):
                        return True
            cur = parent
        return False

    for n in ast.walk(fn):
        if not isinstance(n, (ast.stmt, ast.expr)) or (n.lineno, n.col_offset) < end:
            continue
        hit = False
        if isinstance(n, ast.AugAssign) and root(n.target) == name:
            hit = True
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            hit = any(isinstance(t, ast.Subscript) and root(t) == name for t in targets)
        elif isinstance(n, ast.Call):
            f = n.func
            hit = (isinstance(f, ast.Attribute) and f.attr in _WRITING_METHODS and root(f.value) == name) or any(
                k.arg == "out" and name in {x.id for x in ast.walk(k.value) if isinstance(x, ast.Name)}
                for k in n.keywords)
        if hit and not rebound_before(_statement_of(n, parents)):
            return n.lineno
    return None


def _statement_of(n, parents):
    """The statement that holds the expression ``n`` (``n`` itself when it is one)."""
    while n is not None and not isinstance(n, ast.stmt):
        n = parents.get(n)
    return n


def _needs(bodies, assigned) -> set[str]:
    """Names a branch function must be passed: those a branch reads before assigning, among the
    names some branch assigns (a branch's own assignment makes the name local to its function)."""
    return {n for b in bodies for n in assigned if paths.reads_first(b, n) == "read"}


def _read_locals(facts, bodies) -> set[str]:
    """The function's own names that some of ``bodies`` reads before assigning: with a select every
    body runs, so each needs a value on every path, not just on the path that took it."""
    names = set(facts.stores) | facts.params
    loaded = {n.id for b in bodies for s in b for n in ast.walk(s) if isinstance(n, ast.Name)} & names
    loaded -= {n.id for b in bodies for s in b for c in ast.walk(s) if isinstance(c, ast.comprehension)
               for n in ast.walk(c.target) if isinstance(n, ast.Name)}  # a comprehension's own names
    return {n for n in loaded if any(paths.reads_first(b, n) == "read" for b in bodies)}


def _check_defined(facts, node, names, defined, ctx) -> None:
    for name in sorted(set(names) - defined):
        raise _Refused(f"`{name}` may have no value when the `if` runs (it is assigned before it on some "
                       f"paths only) and the converted branches read it; assign it before the `if` on "
                       f"every path (line {_first_store(facts, name, node, ctx)})")


def _selected(facts, node, ctx, bodies, written, has_else):
    """(assigned, assigned in every arm, outputs live after the `if`, defined before it) of a select
    over the arms ``bodies``; refused where an arm assigns a global or an output has no value on
    some path (``written``: the arrays the arms write into, which flow out from their copies)."""
    assigned = set().union(*(_stored(b) for b in bodies)) | written
    for name in sorted(assigned & facts.declared):
        raise _Refused(f"a branch assigns `{name}`, declared global or nonlocal")
    everywhere = set.intersection(*(_definitely_assigned(b) for b in bodies)) if has_else else set()
    outputs = [n for n in sorted(assigned) if paths.live_after(facts, n, node)]
    defined = paths.definitely_before(facts, node)
    for name in outputs:
        if name not in everywhere and name not in defined:
            raise _Refused(f"`{name}` is assigned in one branch only and not before the `if` on every path, "
                           f"so the other branch has no value to select (assign it before the `if`) "
                           f"(line {_first_store(facts, name, node, ctx)})")
    return assigned, everywhere, outputs, defined


def _first_store(facts, name, node, ctx) -> int:
    inside = [p for p in facts.stores.get(name, ()) if _inside(p, node)]
    return (min(inside)[0] if inside else node.lineno) + ctx.positions.line_offset


def _arm_name(i, n_arms) -> str:
    return "the `if` branch" if i == 0 else "the `else` branch" if i == n_arms else "an `elif` branch"


def _plan_early(node, fn, facts, ctx, earlies, tail, kind, body=None):
    """``earlies``: the bodies that return early, in order (their tests are the chain's, or for
    ``kind`` "if" the negated `if` test); ``tail``: the arm that does not return (None: none), which
    runs after them, before the rest of the function, as a local function handing on its names.
    ``body``: the block that holds ``node`` (the function's body unless it is in a plain `if`)."""
    body = fn.body if body is None else body
    rest = body[body.index(node) + 1:]
    # both sides run guarded: the early branch under its test, the code after it under its negation
    # (runtime.branches.early puts it on the path until the merging return)
    names = ["the early-return branch"] if len(earlies) == 1 else \
        ["the `if` branch", *["an `elif` branch"] * (len(earlies) - 1)]
    if kind == "if":
        names = ["the `else` branch (an early return)"]
    copies = []
    for where, arm in zip(names, earlies, strict=True):
        early = _arm_checker(ctx, where, node, arm, facts, fn, guarded=True)
        early.block(arm, returns="last")
        copies.append(tuple(sorted(early.claimed)))
    if not rest or not _returns_at_end(rest):
        raise _Refused("the function can fall off its end after the early return (end it with a `return`)")
    # the code after it runs on every input, also after the early branch ran: it writes on its own copy
    after = _arm_checker(ctx, "the code after the early return", node, [*(tail or []), *rest], facts, fn,
                         guarded=True)
    tail_params: set[str] = set()
    outputs: list[str] = []
    if tail is not None:
        after.where = f"the `{kind}` branch (run after the early return)"
        after.block(tail, returns="none")
        after.where = "the code after the early return"
        stored = _stored(tail)
        for name in sorted(stored & facts.declared):
            raise _Refused(f"a branch assigns `{name}`, declared global or nonlocal")
        outputs = [n for n in sorted(stored) if paths.live_after(facts, n, node)]
        everywhere = _definitely_assigned(tail)
        tail_params = _needs([tail], stored) | (set(outputs) - everywhere)
    after.block(rest, returns="any")
    copies.append(tuple(sorted(after.claimed)))
    params = _needs(earlies, set().union(*(_stored(b) for b in earlies))) | set().union(*map(set, copies[:-1]))
    _check_defined(facts, node, params | tail_params | _read_locals(facts, [*earlies, [*(tail or []), *rest]]),
                   paths.definitely_before(facts, node), ctx)
    return "early", tuple(sorted(params)), tuple(outputs), tuple(copies), dict(
        early=len(earlies), tail=kind if tail is not None else "", tail_params=tuple(sorted(tail_params)))


def _plan_mixed(node, fn, facts, ctx, arms, orelse, exits):
    """``if a: y = A`` / ``elif b: return q`` / ``else: y = C`` / rest: an `if`/`elif` chain whose
    returning arms do not all come first. Python runs it as the early returns ``if not a and b:
    return q`` (each returning arm under the negation of the non-returning tests before it; one
    that returning arms before it took wins in the merge anyway), then ``if a: y = A`` / ``else: y
    = C`` (a select over the arms that do not return; where the `else` returns, the last of them is
    the select's `else`), then the rest. Every test reads the names as they were before the `if`
    (no arm runs before another's test), so each runs once, before the early returns."""
    rest = fn.body[fn.body.index(node) + 1:]
    bodies = [body for _, body in arms] + ([orelse] if orelse is not None else [])
    n = len(arms)
    returning = [i for i, e in enumerate(exits) if e]
    others = [i for i, e in enumerate(exits) if not e]
    copies = []
    for i in returning:
        early = _arm_checker(ctx, f"{_arm_name(i, n)} (an early return)", node, bodies[i], facts, fn, guarded=True)
        early.block(bodies[i], returns="last")
        copies.append(tuple(sorted(early.claimed)))
    if not rest or not _returns_at_end(rest):
        raise _Refused("the function can fall off its end after the early return (end it with a `return`)")
    tail = [bodies[i] for i in others]
    has_else = orelse is not None  # the tail's last arm is its `else` (when the `else` returns, too)
    ends = []
    for i, body in zip(others, tail, strict=True):
        checker = _arm_checker(ctx, f"{_arm_name(i, n)} (run after the early return)", node, body, facts, fn,
                               guarded=True)
        checker.block(body, returns="none")
        copies.append(tuple(sorted(checker.claimed)))
        ends.append((set(checker.fresh), set(checker.rebound)))
    written = set().union(*map(set, copies[len(returning):]))
    assigned, everywhere, outputs, defined = _selected(facts, node, ctx, tail, written, has_else)
    tail_params = _needs(tail, assigned) | (set(outputs) - everywhere) | written
    if len(tail) > 1 or not has_else:  # a select: an in-place update after it must reach each arm's array
        _check_updated_after(node, fn, facts, ctx, tail if has_else else [*tail, []], outputs, ends, len(tail))
    after = _arm_checker(ctx, "the code after the early return", node, rest, facts, fn, guarded=True)
    after.block(rest, returns="any")
    copies.append(tuple(sorted(after.claimed)))
    earlies = [bodies[i] for i in returning]
    params = _needs(earlies, set().union(*(_stored(b) for b in earlies))) | \
        set().union(*map(set, copies[:len(returning)]))
    reads = _read_locals(facts, [*earlies, *tail]) | (_read_locals(facts, [rest]) - set(outputs))
    _check_defined(facts, node, params | tail_params | reads, defined, ctx)
    return "early", tuple(sorted(params)), tuple(outputs), tuple(copies), dict(
        early=len(returning), tail="chain", tail_params=tuple(sorted(tail_params)), returning=tuple(exits))


# context managers that change no value on data: an early return held inside one runs the code
# after it under the same manager, as NumPy's would have left it (warnings and floating-point flags)
_PLAIN_CONTEXTS = frozenset({"numpy.errstate", "warnings.catch_warnings", "contextlib.nullcontext"})


def _plain_context(with_, ctx) -> str | None:
    """None where every context manager of ``with_`` changes no value and raises on no input (code
    in it may run on inputs that returned early, or on the other branch's), else why not."""
    for item in with_.items:
        e = item.context_expr
        q = ctx.call_name(e) if isinstance(e, ast.Call) else None
        if isinstance(e, ast.Call) and q == "numpy.errstate" and (e.args or not all(
                isinstance(k.value, ast.Constant) and k.value.value == "ignore" and k.arg is not None
                for k in e.keywords)):
            return (f"`{ast.unparse(e)}`, where code that runs on every input (after a held return, or on the "
                    "other branch's inputs) would warn or raise on inputs NumPy never ran it on (only "
                    "`np.errstate(...=\"ignore\")` converts)")
        if q not in _PLAIN_CONTEXTS:
            return (f"a `with` block on `{ast.unparse(e)}`, which leapp cannot show changes no value (code in it "
                    "may run on inputs NumPy never ran it on; np.errstate and warnings.catch_warnings do not)")
    return None


def _holder(node, fn, facts, ctx):
    """For ``node`` (an early return) in the body of a `for` loop over a static ``range`` or of a `with`
    block on a plain context manager, nested in such statements only up to ``fn``'s body: (the
    top-level one, what it is, the statements around ``node`` up to it). None where ``node``'s block
    is not such a statement's; refused where one of them is not plain."""
    parent = facts.parents.get(node)
    if not isinstance(parent, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.While)) or node not in parent.body:
        return None
    chain, cur = [], node
    while True:
        parent = facts.parents.get(cur)
        if parent is fn:
            break
        line = parent.lineno + ctx.positions.line_offset
        if isinstance(parent, (ast.While, ast.AsyncFor, ast.AsyncWith)):
            raise _Refused(f"it returns early inside a `{type(parent).__name__.lower().replace('async', 'async ')}` "
                           f"(line {line}); only a `for` loop over a `range` of static bounds, unrolled while "
                           "tracing, holds its early returns")
        if isinstance(parent, ast.For):
            it = parent.iter
            static = isinstance(it, ast.Call) and ctx.builtin(it.func) == "range" and not it.keywords \
                and not any(ctx.is_array(a) or isinstance(a, ast.Starred) for a in it.args)
            if not static:
                raise _Refused(f"it returns early inside a `for` loop over `{ast.unparse(it)}` (line {line}), "
                               "which is not a `range` of static bounds (an unrolled loop's early returns are "
                               "held one per iteration)")
            if parent.orelse or cur not in parent.body:
                raise _Refused(f"it returns early inside a `for` loop with an `else:` (line {line})")
        elif isinstance(parent, ast.With):
            why = _plain_context(parent, ctx)
            if why is not None:
                raise _Refused(f"it returns early inside {why} (line {line})")
        else:
            return None  # inside an `if` (or another statement): the forms of _plan_if decide
        chain.append(parent)
        cur = parent
    top = chain[-1]
    what = "a `for` loop over a `range`" if any(isinstance(c, ast.For) for c in chain) else "a `with` block"
    return top, what, chain


def _plan_held(node, fn, facts, ctx, top, what, chain):
    """``for i in range(3): if x[i] > 0: return x * i`` (or inside ``with np.errstate(...):``) at the
    top of the function: the loop runs as Python's, unrolled while tracing, so each time the early
    return runs it is held like one at the top (``runtime.branches.early``), in a list made before
    ``top`` that every later ``return`` merges, the first held winning. Everything after it, the
    rest of the loop's body and its later iterations included, is code after an early return."""
    early = _arm_checker(ctx, "the early-return branch", node, node.body, facts, fn, guarded=True)
    early.block(node.body, returns="last")
    params = _needs([node.body], _stored(node.body)) | early.claimed
    _check_defined(facts, node, params | _read_locals(facts, [node.body]), paths.definitely_before(facts, node), ctx)
    rest = fn.body[fn.body.index(top) + 1:]
    if not rest or not _returns_at_end(rest):
        raise _Refused(f"the function can fall off its end after {what} with the early return (end it with "
                       "a `return`)")
    # inside ``top``, no private copies: a write there must be into an array made after the last early
    # return; after it, the code writes on private copies made once ``top`` has run (convert.apply)
    inside = _Checker(ctx, "the code after the early return", guarded=True)
    inside.after_early = node.lineno + ctx.positions.line_offset
    _held_after(inside, [top], set(chain), 0)
    after = _arm_checker(ctx, "the code after the early return", node, rest, facts, fn, guarded=True)
    after.block(rest, returns="any")
    return "early", tuple(sorted(params)), (), (tuple(sorted(early.claimed)), tuple(sorted(after.claimed))), dict(
        held=(top.lineno, top.col_offset), held_in=what)


def _held_after(after, stmts, chain, loops) -> None:
    """``stmts`` checked as code after an early return held in ``chain`` (the loops and `with`
    blocks around it): a loop's body runs again after an early return in it, from a state where
    none of its names holds an array made since; each early return there holds a value, so no
    array made before it is the block's own afterwards."""
    for s in stmts:
        if s in chain and isinstance(s, ast.For):
            after.expr(s.iter)
            after.target(s.target, s)
            stored = _stored([s])
            after.rebound |= stored
            after.fresh -= stored
            _held_after(after, s.body, chain, loops + 1)
            after.fresh -= stored
        elif s in chain and isinstance(s, ast.With):
            after.with_items(s, bind=False)  # a plain context manager (_holder): its arguments are plain too
            _held_after(after, s.body, chain, loops)
        elif _nested_early(s, None):  # this early return, or another one: its value is held
            after.expr(s.test)
            after.block(s.body, returns="last", loops=loops)
            after.fresh = set()
        else:
            after.stmt(s, returns="any", loops=loops)


def _returns_at_end(stmts) -> bool:
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and bool(last.orelse) and _returns_at_end(last.body) and \
        _returns_at_end(last.orelse)


class _BoolTest:
    """A test's `and`/`or` operands after the first run where Python would short-circuit."""

    def __init__(self, ctx):
        self.ctx = ctx

    def check(self, test):
        for n in ast.walk(test):
            if isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)):
                # parts of a converted test run inside lambdas, where `:=` would bind another scope
                raise _Refused(f"the test has a `{type(n).__name__}` expression (assign it before the `if`)")
            if isinstance(n, ast.BoolOp):
                for v in n.values[1:]:
                    _Checker(self.ctx, "an `and`/`or` operand").expr(v)
            elif isinstance(n, ast.Compare) and len(n.ops) > 1:
                if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in n.ops):
                    raise _Refused(f"the comparison chain `{ast.unparse(n)}` mixes `is`/`in` with "
                                   "comparisons on data")
                for c in n.comparators:
                    _Checker(self.ctx, "a comparison in a chain").expr(c)


def plan_ifexp(node: ast.IfExp, ctx, ordinal: int) -> Branch:
    line, col = ctx.positions.start(node.test)
    local = (node.lineno, ordinal)
    try:
        if not ctx.convert:
            raise _Refused("conversion is off (convert_control_flow=False)")
        if holds_marker(ctx.source):
            raise _Refused(f"a line of the source already ends with leapp's marker `{MARKER.strip()} N`")
        _BoolTest(ctx).check(node.test)
        _Checker(ctx, "the value before `if`", guarded=True).expr(node.body)
        _Checker(ctx, "the value after `else`", guarded=True).expr(node.orelse)
        if ctx.functions:
            _check_ifexp_updated_after(node, ctx)
    except _Refused as exc:
        return Branch("ifexp", line, col, local, "refused", str(exc))
    return Branch("ifexp", line, col, local, "select")


def _check_ifexp_updated_after(node: ast.IfExp, ctx) -> None:
    """``w = t0 if c else y * 2`` makes ``w`` ``t0``'s array in NumPy (or a view of it: ``t0[1:]``),
    so an update in place of ``t0`` or of ``w`` after the statement reaches the other one; the
    select hands on a new array, which it does not reach (as _check_aliases_updated_after for an
    `if`'s arm)."""
    fn = ctx.functions[-1]
    facts = _facts(fn)
    stmt = _statement_of(node, facts.parents)
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return
    arms = owned.shares(node.body, ctx) | owned.shares(node.orelse, ctx)
    held = arms & owned.shares(stmt.value, ctx)  # the value the statement binds may be an arm's array
    if not held:
        return
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    for name in names:
        _refuse_shared_updated(fn, stmt, facts, ctx, name, held - {name}, "it", "it",
                               lambda source: f"`{source}.copy()` in the conditional expression")
        line = _updated_after(fn, stmt, name, facts.parents)
        if line is None:
            continue
        others = sorted(held - {name})
        # `q = q if c else -q`: the array `q` held before, if nothing else holds it (convert.owned)
        why = (f"it binds `{name}` to `{others[0]}`'s array" if others else
               owned.refusal(name, stmt, [], facts, fn, ctx))
        if why is not None:
            raise _Refused(
                f"`{name}` is updated in place after it (line {line + ctx.positions.line_offset}) and {why}: a "
                f"select hands on a new array, so NumPy's update of the array `{name}` was bound to would be "
                f"lost (write `.copy()` in the conditional expression, or update it with `{name} = {name} + ...`)")
