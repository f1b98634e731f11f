"""LP2xx: values leaving the graph (Python numbers, branches, iteration)."""

from __future__ import annotations

import ast

from leapp import table

from ..dataflow import lookup
from ..diagnostics import Fix
from ._examples import src
from .base import Invalid, Rule, Valid

_CONVERSIONS = {"float": "float", "int": "int", "bool": "bool", "complex": "complex", "round": "int"}


class ScalarConversion(Rule):
    CODE = "LP201"
    NAME = "scalar-conversion"
    MESSAGE = ("`{text}` turns an array into a Python {kind}: the value leaves the graph and "
               "is frozen as a constant. Keep it an array (`x.astype(...)`, or a 0-d array).")
    WHAT = ("Flags `float()`, `int()`, `bool()`, `complex()` and one-argument `round()` applied to an "
            "array expression (`round(x, 2)` of a NumPy scalar stays a NumPy scalar: np.round).")
    WHY = ("The graph records the number seen while tracing; every later input gets the same "
           "number. `float(x.shape[0])` and `len(x)` are static and are not flagged.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            scale = float(x.std())
            return x / scale
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x / x.std()
        """)
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x, scale=2.0):
                n = float(x.shape[0]) + int(len(x)) + float(scale)
                return x / n
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                n = int(np.prod(x.shape))  # shapes only: a fixed number
                return np.zeros(n) + x.reshape(-1)
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                k = np.ones(3).astype(np.float32)
                n = int(k.sum())  # built from literals only: the same number on every call
                return x[:n] * float(np.arange(4).max())
            """)),
        Valid(src("""
            import numpy as np

            def untraced(x):
                return float(np.max(x))
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                float = np.asarray  # shadows the builtin
                return float(x.sum())
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x - round(x.mean(), 2)  # a NumPy scalar's round(v, n) is np.round
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x / float(x.std())
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                i = int(np.argmax(x))
                return x * i
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x * round(x.mean())
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        kind = _CONVERSIONS.get(ctx.builtin(node.func))
        if kind and len(node.args) == 1 and not node.keywords and not ctx.is_claimed(node) \
                and ctx.is_array(node.args[0]) \
                and not ctx.is_static_call(node.args[0]) \
                and not ctx.is_fixed(node.args[0]):  # int(np.prod(x.shape)), int(np.ones(3).sum())
            ctx.report(self.CODE, node, self.MESSAGE.format(text=ctx.text(node), kind=kind))


class ArrayTruthTest(Rule):
    CODE = "LP202"
    NAME = "array-truth-test"
    MESSAGE = ("{construct} on an array expression `{text}`: the branch taken while tracing is "
               "frozen into the graph. {instead}")
    WHAT = ("Flags `if`/`elif`, `while`, conditional expressions, comprehension filters and "
            "`assert` whose test is an array expression (including `and`/`or`/`not` over one).")
    WHY = ("Only one side of the branch is recorded: the graph returns the traced-time branch "
           "for every input. A data-dependent `while` is unrolled to the traced-time count.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            while np.abs(x).max() > 1.0:  # an `if` leapp can make a select is not flagged
                x = x / 2.0
            return x
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            for _ in range(8):  # a fixed number of steps, each a select
                x = np.where(np.abs(x).max() > 1.0, x / 2.0, x)
            return x
        """)
    _HINTS = {
        "`while` test": "Use a fixed number of iterations, or move the loop outside.",
        "`assert`": "Check inputs before the traced code, or drop the assert.",
    }
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x, y=None):
                if x.ndim == 2 and x.shape[0] > 3 and y is None:
                    x = x.T
                i = 0
                while i < len(x):
                    i += 1
                return x if x.size else x
            """)),
        # branches on data that leapp.compile converts to a select (leapp.ast_pass.convert)
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                if x.mean() > 0:
                    x = x - x.mean()
                return x
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x if x.sum() > 0 else -x
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                m = x > 0
                if not m.any() or x.max() > 10:
                    return x
                return -x
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                while np.abs(x).max() > 1.0:  # leapp: max-iterations=8
                    x = x / 2.0
                return x
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(m, b):
                while b.sum() < 3:  # leapp: max-iterations=4
                    b = np.linalg.solve(m, b) + 1  # guarded where the loop has stopped
                return b
            """)),
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(m):
                w, v = np.linalg.eigh(m)
                if w[0] < 0:
                    w = -w
                return w, v
            """)),
        Valid(src("""
            import numpy as np

            def unit(v):
                return v / np.linalg.norm(v)

            # leapp: trace
            def f(v):
                if np.linalg.norm(v) < 1e-9:
                    return np.zeros_like(v)
                return unit(v)
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np

            def flip(v):
                v[0] = -v[0]
                return v

            # leapp: trace
            def f(v):
                if v.sum() > 0:
                    v = flip(v)
                return v
            """), line=9),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                if x.mean() > 0:
                    print("positive")
                return x
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                while np.abs(x).max() > 1.0:
                    x = x / 2.0
                return x
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x if x.sum() > 0 else print(x)
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                assert np.all(x >= 0), "negative input"
                return np.sqrt(x)
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(m):
                if not np.allclose(m @ m.T, np.eye(3)):
                    raise ValueError("not a rotation")
                return m
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(m, b):
                while np.linalg.solve(m, b).sum() < 3:  # leapp: max-iterations=4
                    b = b + 1  # the test runs on every input, also where the loop has stopped
                return b
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(a, b):
                both = (a > 0) and (b > 0)
                return np.where(both, a, b)
            """), line=4),
    ]

    def visit_BoolOp(self, node, ctx):
        # `a and b` outside a test still asks bool() of every operand but the last
        if not ctx.is_claimed(node) and any(ctx.is_array(v) for v in node.values[:-1]):
            ctx.claim(node)
            ctx.report(self.CODE, node, self.MESSAGE.format(
                construct="`and`/`or`", text=ctx.text(node),
                instead="Use `a & b` / `a | b` (np.logical_and/np.logical_or) on boolean arrays."))

    def visit_If(self, node, ctx):
        ctx.__dict__.setdefault("_cf_ifs", {})[id(node.test)] = node

    def visit_IfExp(self, node, ctx):
        ctx.__dict__.setdefault("_cf_ifexps", {})[id(node.test)] = node

    def visit_While(self, node, ctx):
        ctx.__dict__.setdefault("_cf_whiles", {})[id(node.test)] = node

    def visit_test(self, test, construct, ctx):
        if construct == "`while` test":  # `while leapp.bounded(test, N):` tests its first argument
            from ..convert import loops

            node = ctx.__dict__.get("_cf_whiles", {}).get(id(test))
            if node is not None and loops.bounded_call(test, ctx) is not None:
                ctx.__dict__["_cf_whiles"][id(loops.loop_test(node, ctx))] = node
                test = loops.loop_test(node, ctx)
        if isinstance(test, ast.BoolOp):
            ctx.claim(test)
        if _on_data(test, ctx):
            branch = self._branch(test, construct, ctx)
            if branch is not None and branch.converted:
                for n in ast.walk(test):
                    if isinstance(n, ast.BoolOp):
                        ctx.claim(n)
                return
            _claim_logic(test, ctx)  # `a and (b or c)`: one finding for the test, not one per `or`
            hint = self._HINTS.get(construct, "Use `np.where(cond, a, b)` to select values, or "
                                   "decide outside the traced code.")
            if branch is not None:
                hint = f"leapp cannot convert it: {branch.reason}. {hint}"
            ctx.report(self.CODE, test, self.MESSAGE.format(
                construct=construct[0].upper() + construct[1:], text=ctx.text(test), instead=hint))

    def _branch(self, test, construct, ctx):
        """The conversion plan for this test's `if` or conditional expression (None: another construct)."""
        from ..convert import plan

        mark = len(plan.guard_calls(ctx))
        branch = self._plan(test, construct, ctx)
        if branch is not None:
            plan.tag_guard_calls(ctx, mark, branch)
        return branch

    def _plan(self, test, construct, ctx):
        from ..convert import plan

        if construct == "`if` test":
            node = ctx.__dict__.get("_cf_ifs", {}).get(id(test))
            if node is None:
                return None
            heads = ctx.__dict__.setdefault("_cf_heads", {})
            if id(node) in heads:  # an `elif` of a chain already planned
                return heads[id(node)]
            branch = plan.plan_if(node, ctx)
            for inner in plan.elif_nodes(node):
                heads[id(inner)] = branch
        elif construct == "`while` test":
            from ..convert import loops

            node = ctx.__dict__.get("_cf_whiles", {}).get(id(test))
            if node is None:
                return None
            branch = loops.plan_while(node, ctx)
        elif construct == "conditional expression":
            node = ctx.__dict__.get("_cf_ifexps", {}).get(id(test))
            if node is None:
                return None
            scope = ctx.functions[-1] if ctx.functions else ctx.module
            same_line = sorted(n.col_offset for n in ast.walk(scope)
                               if isinstance(n, ast.IfExp) and n.lineno == node.lineno)
            branch = plan.plan_ifexp(node, ctx, same_line.index(node.col_offset))
        else:
            return None
        ctx.branches.append(branch)
        return branch


def _claim_logic(test, ctx) -> None:
    """Claim the `and`/`or` of a test's own logic (through `not` and parentheses), not one inside
    a call or an operand: the test's finding names the whole test."""
    if isinstance(test, ast.BoolOp):
        ctx.claim(test)
        for v in test.values:
            _claim_logic(v, ctx)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _claim_logic(test.operand, ctx)


def _on_data(test, ctx) -> bool:
    """A test whose truth comes from an array: itself, or through `and`/`or`/`not`, or one the
    runtime saw test traced data (library code converted by leapp.compiler.library)."""
    if ctx.data_lines and test.lineno + ctx.positions.line_offset in ctx.data_lines:
        return True
    if isinstance(test, ast.BoolOp):
        return any(_on_data(v, ctx) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _on_data(test.operand, ctx)
    return ctx.is_array(test)


class ValueToPython(Rule):
    CODE = "LP203"
    NAME = "array-to-python"
    MESSAGE = "`{text}` leaves the graph: {reason}. Instead: {instead}."
    WHAT = "Flags `.item()` and `.tolist()` on an array expression."
    WHY = "They return Python objects; the graph records them as constants."
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x - x.max().item()
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x - x.max()
        """)
    METHODS = ("item", "tolist")
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x, d: dict):
                return x * len(d.items()) + x.max()
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x - x.max().item()
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.asarray(np.abs(x).tolist())
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in self.METHODS and ctx.is_array(f.value):
            ctx.claim(node)
            entry = lookup("ndarray." + f.attr)
            reason = getattr(entry, "reason", "it returns Python objects")
            instead = getattr(entry, "instead", "keep the array and use NumPy operations")
            ctx.report(self.CODE, node, self.MESSAGE.format(text=ctx.text(node), reason=reason,
                                                            instead=instead))


# The math functions whose NumPy ufunc means the same thing: math name -> (ufunc, how many
# positional arguments both take). A call with another count gets no fix: NumPy reads an extra
# positional argument as ``out=`` (``np.log(x, 2)`` would write into ``2``, ``np.hypot(x, y, z)``
# into ``z``). Left out on purpose: ``remainder`` (IEEE remainder, not NumPy's floor modulo),
# ``floor``/``ceil``/``trunc`` (they return ints), ``pow`` as ``np.power`` (integer powers stay
# integers and refuse negative exponents; ``math.pow`` is always a float64 power, which is
# ``np.float_power``). ``tests/reliability/test_fix_preconditions.py`` checks each pair against
# ``ufunc.nin`` and values.
MATH_FIXES = {
    **{name: (name, 1) for name in (
        "sqrt", "cbrt", "exp", "exp2", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan",
        "sinh", "cosh", "tanh", "fabs", "degrees", "radians", "isnan", "isinf", "isfinite")},
    "log": ("log", 1),
    "asin": ("arcsin", 1), "acos": ("arccos", 1), "atan": ("arctan", 1),
    "asinh": ("arcsinh", 1), "acosh": ("arccosh", 1), "atanh": ("arctanh", 1),
    "atan2": ("arctan2", 2), "hypot": ("hypot", 2), "copysign": ("copysign", 2),
    "fmod": ("fmod", 2), "ldexp": ("ldexp", 2), "pow": ("float_power", 2),
}


def numpy_ufunc_for(math_name: str, nargs: int) -> str | None:
    """``numpy.<f>`` when it means ``math.<math_name>`` called with ``nargs`` positional
    arguments and the table traces it elementwise, so the fix stays in the graph."""
    if math_name not in MATH_FIXES or MATH_FIXES[math_name][1] != nargs:
        return None
    name = "numpy." + MATH_FIXES[math_name][0]
    entry = lookup(name)
    return name if isinstance(entry, table.Entry) and entry.kind == "ufunc" else None


class MathOnArray(Rule):
    CODE = "LP204"
    NAME = "math-on-array"
    MESSAGE = "`{text}` applies `{func}` to an array: it converts to a Python float and leaves the graph."
    WHAT = "Flags `math.*` functions called on array expressions."
    WHY = "`math` works on Python floats only; the result is a constant in the graph."
    EXAMPLE = src("""
        import math

        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x / math.sqrt(x.var())
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x / np.sqrt(x.var())
        """)
    FIX = "Replace `math.{name}` with `np.{numpy_name}`"
    VALID = [
        Valid(src("""
            import math
            import numpy as np
            # leapp: trace
            def f(x):
                return x * math.pi / math.sqrt(x.shape[0])
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import math
            import numpy as np
            # leapp: trace
            def f(x):
                return x / math.sqrt(x.var())
            """), line=5, fixed=src("""
            import math
            import numpy as np
            # leapp: trace
            def f(x):
                return x / np.sqrt(x.var())
            """)),
        Invalid(src("""
            from math import exp
            import numpy as npy
            # leapp: trace
            def f(x):
                return exp(-x)
            """), line=5, fixed=src("""
            from math import exp
            import numpy as npy
            # leapp: trace
            def f(x):
                return npy.exp(-x)
            """)),
    ]

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if not (q and q.startswith("math.") and any(ctx.is_array(a) for a in node.args)):
            return
        name = q[5:]
        simple = not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
        target = numpy_ufunc_for(name, len(node.args)) if simple else None
        alias = ctx.numpy_alias_here()
        fix = None
        if target and alias:
            short = target[6:]
            fix = Fix(self.FIX.format(name=name, numpy_name=short),
                      (ctx.edit(node.func, f"{alias}.{short}"),))
        ctx.report(self.CODE, node, self.MESSAGE.format(text=ctx.text(node), func=q), fix)


class BuiltinOverArray(Rule):
    CODE = "LP205"
    NAME = "builtin-over-array"
    MESSAGE = "`{text}` uses Python's `{func}` on an array: {why} Use {instead} instead."
    WHAT = "Flags the builtins `max`, `min`, `sum`, `any` and `all` applied to arrays."
    WHY = ("With one argument they iterate over the array in Python; with several (`max(a, b)`) "
           "they compare with `bool()`. Either way the result is decided while tracing.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return min(x.sum(), 1.0)
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return np.minimum(x.sum(), 1.0)
        """)
    FIX = "Replace `{func}(a, b)` with `np.{numpy_name}(a, b)`"
    PAIRWISE = {"max": "maximum", "min": "minimum"}
    REDUCE = {"max": "np.max(x, axis=0)", "min": "np.min(x, axis=0)", "sum": "np.sum(x, axis=0)",
              "any": "np.any(x, axis=0)", "all": "np.all(x, axis=0)"}
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                k = max(x.shape) + min(len(x), 3) + sum([1, 2])
                return np.maximum(x, 0) * k
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.minimum(x, min(x.sum(), 1.0))
            """), line=4, fixed=src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.minimum(x, np.minimum(x.sum(), 1.0))
            """)),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(a, b):
                return max(a, b)
            """), line=4, fixed=src("""
            import numpy as np
            # leapp: trace
            def f(a, b):
                return np.maximum(a, b)
            """)),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x - sum(x)
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        func = ctx.builtin(node.func)
        if func not in self.REDUCE or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            return
        if len(node.args) >= 2 and func in self.PAIRWISE:
            if not any(ctx.is_array(a) for a in node.args):
                return
            short = self.PAIRWISE[func]
            fix = None
            alias = ctx.numpy_alias_here()
            if len(node.args) == 2 and not node.keywords and alias:
                fix = Fix(self.FIX.format(func=func, numpy_name=short),
                          (ctx.edit(node.func, f"{alias}.{short}"),))
            ctx.report(self.CODE, node, self.MESSAGE.format(
                text=ctx.text(node), func=func, why="it compares arrays with `bool()`.",
                instead=f"`np.{short}`"), fix)
        elif ctx.is_array(node.args[0]):
            ctx.report(self.CODE, node, self.MESSAGE.format(
                text=ctx.text(node), func=func, why="it iterates over the first axis in Python.",
                instead=f"`{self.REDUCE[func]}`"))


RULES = [ValueToPython, ScalarConversion, ArrayTruthTest, MathOnArray, BuiltinOverArray]
