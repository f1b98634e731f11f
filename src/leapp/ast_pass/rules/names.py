"""LP1xx: NumPy names the table does not trace as written."""

from __future__ import annotations

import ast

from ._examples import src
from .base import Invalid, Rule, Valid


def operands(call: ast.Call):
    for a in [*call.args, *(k.value for k in call.keywords)]:
        a = a.value if isinstance(a, ast.Starred) else a
        yield from a.elts if isinstance(a, (ast.Tuple, ast.List)) else (a,)


class UntracedCall(Rule):
    CODE = "LP101"
    NAME = "untraced-numpy-call"
    MESSAGE = ("No torch equivalent for numpy function {name}. Operation will not be traced. "
               "Compute it outside the traced code, or write it with operations leapp traces.")
    WHAT = ("Flags a call to a NumPy function (or ndarray method) that has no entry in leapp's "
            "translation table, made on an array in traced code. It is the static twin of the "
            "runtime warning, with the same text.")
    WHY = ("The call runs on plain NumPy while tracing; its result enters the graph as a "
           "constant, so the exported graph gives the traced-time answer for every input.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def windows(x):
            return np.lib.stride_tricks.as_strided(x, (2, 2))
        """)
    INSTEAD = ("Express the computation with supported operations (see the supported-functions "
               "list), or compute it before the traced function and pass the result in.")
    VALID = [
        Valid(src("""
            import numpy as np
            import leapp

            @leapp.compile
            def f(x):
                return np.clip(x, 0.0, 1.0) + np.finfo(np.float32).eps
            """)),
        Valid(src("""
            import numpy as np

            def helper(x):  # not traced: no leapp scope
                return np.polyfit(x[0], x[1], 1)
            """)),
        Valid(src("""
            import numpy as np
            from leapp import compile as lc

            @lc(strict=False)
            def f(x, np):  # a parameter called np is not NumPy
                return np.polyfit(x, x, 1)
            """)),
        Valid(src("""
            import numpy as np
            import leapp

            class Prep:
                @leapp.compile
                def f(self, x):
                    return self.np.polyfit(x, x, 1) + x.clip(0, 1)
            """)),
        Valid(src("""
            from numpy import mean as avg
            # leapp: trace
            def f(x):
                return avg(x)
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            import leapp

            @leapp.compile
            def f(x):
                return np.lib.stride_tricks.as_strided(x, (2, 2))
            """), line=6),
        Invalid(src("""
            import numpy.lib.stride_tricks as st
            # leapp: trace
            def f(a, b):
                return st.as_strided(a, b)
            """), line=4),
        Invalid(src("""
            from numpy.lib.stride_tricks import as_strided as windows
            # leapp: trace
            def f(x):
                return windows(x, (2, 2))
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                y = np.abs(x)
                return y.getfield(np.float64)
            """), line=5),
    ]

    def visit_Call(self, node, ctx):
        found = ctx.site(node)
        if found is None or found[0].verdict != "unknown" or ctx.is_claimed(node):
            return
        site = found[0]
        if site.kind == "function" and not any(ctx.is_array(a) for a in operands(node)):
            return  # np.finfo(np.float32): no traced data involved
        ctx.report(self.CODE, node, self.MESSAGE.format(name=site.name))


class UnsupportedCall(Rule):
    CODE = "LP102"
    NAME = "unsupported-numpy-call"
    MESSAGE = "`{name}` is not traced: {reason}. Instead: {instead}."
    WHAT = "Flags a call that the translation table lists as knowingly unsupported, with its reason."
    WHY = ("leapp refuses these at runtime too; the table says why (Python callbacks, file I/O, "
           "results whose size depends on the data) and what to write instead.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return np.apply_along_axis(np.sort, 0, x)
        """)
    INSTEAD = "What the message says: each table entry carries its own replacement."
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.sort(x, axis=0)
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.apply_along_axis(np.sort, 0, x)
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.unique(x)
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return (x * 2).tobytes()
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        found = ctx.site(node)
        if found is None or found[0].verdict != "unsupported" or ctx.is_claimed(node):
            return
        site, entry, _ = found
        ctx.report(self.CODE, node, self.MESSAGE.format(
            name=site.name, reason=entry.reason, instead=entry.instead))


class RefusedKeyword(Rule):
    CODE = "LP103"
    NAME = "refused-keyword"
    MESSAGE = "`{name}` does not take `{keyword}=` in traced code: {reason}."
    WHAT = ("Flags a keyword argument that the table entry refuses (`where=`, `order='F'`, "
            "`signature=`, ...). Values that change nothing, such as `order='C'`, are accepted.")
    WHY = ("Passed through, these keywords crashed late (at export, far from your line) or "
           "silently computed something else.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return np.add(x, 1.0, where=x > 0)
        """)
    INSTEAD = "Follow the reason in the message: e.g. `np.where(x > 0, x + 1.0, x)`."
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.sum(x, where=True) + x.reshape(-1, order="C").sum()
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.add(x, 1.0, out=np.zeros_like(x), where=x > 0)
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x.reshape(-1, order="F")
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        found = ctx.site(node)
        if found is None or found[0].verdict != "refused-keyword" or ctx.is_claimed(node):
            return
        site, _, refused = found
        by_name = {k.arg: k for k in node.keywords}
        for keyword, reason in refused:
            ctx.report(self.CODE, by_name.get(keyword, node), self.MESSAGE.format(
                name=site.name, keyword=keyword, reason=reason))


RULES = [UntracedCall, UnsupportedCall, RefusedKeyword]
