"""LP3xx: code that runs but cannot become a faithful graph."""

from __future__ import annotations

import ast

from leapp import table

from ..dataflow import lookup
from ._examples import src
from .base import Invalid, Rule, Valid


class RandomInTrace(Rule):
    CODE = "LP301"
    NAME = "random-in-trace"
    MESSAGE = "`{name}` in traced code: {reason}. Instead: {instead}."
    WHAT = "Flags any call into `numpy.random` (functions, `default_rng`, `seed`) in traced code."
    WHY = ("The numbers drawn while tracing are frozen into the graph: every later call "
           "reuses the same noise.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def augment(x):
            return x + np.random.normal(0, 0.1, x.shape)
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def augment(x, noise):
            return x + noise

        x = np.ones(3, np.float32)
        augment(x, np.random.normal(0, 0.1, x.shape).astype(np.float32))
        """)
    VALID = [
        Valid(src("""
            import numpy as np
            noise = np.random.normal(0, 0.1, (3, 4))  # outside traced code

            # leapp: trace
            def f(x, noise):
                return x + noise
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                np.random.seed(0)
                return x + np.random.normal(0, 0.1, x.shape)
            """), line=4),
        Invalid(src("""
            from numpy.random import default_rng
            # leapp: trace
            def f(x):
                return x * default_rng(0).random()
            """), line=4),
    ]

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q and q.startswith("numpy.random."):
            ctx.claim(node)
            entry = lookup(q)
            reason = getattr(entry, "reason", "the drawn numbers are frozen into the graph")
            instead = getattr(entry, "instead", "draw outside the traced code and pass them in")
            ctx.report(self.CODE, node, self.MESSAGE.format(name=q, reason=reason, instead=instead))


MUTATING_METHODS = frozenset({"fill", "sort", "put", "partition", "resize", "setfield", "itemset"})
# Methods that change a Python container (list, deque, dict, set) in place.
CONTAINER_MUTATORS = frozenset({"append", "appendleft", "extend", "extendleft", "insert", "pop", "popleft",
                                "popitem", "remove", "clear", "update", "setdefault", "add", "discard",
                                "rotate", "sort", "reverse"})


def _base_name(target):
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


class ModuleArrayWrite(Rule):
    CODE = "LP302"
    NAME = "module-array-write"
    MESSAGE = ("`{text}` writes into the module-level array `{name}` from traced code: the graph "
               "cannot see writes into arrays it did not create. Return the new values instead.")
    WHAT = ("Flags assignments into, in-place operators on, and mutating methods or `out=` of "
            "module-level arrays inside traced functions.")
    WHY = ("The tracer only sees arrays that flow from the inputs. A module-level buffer is "
           "written once while tracing and never again by the graph.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        BUF = np.zeros(4)

        @leapp.compile
        def f(x):
            BUF[:] = x
            return BUF * 2
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            buf = x.copy()
            return buf * 2
        """)
    VALID = [
        Valid(src("""
            import numpy as np
            SCALE = np.ones(4)

            # leapp: trace
            def f(x):
                buf = np.zeros(4)
                buf[:] = x * SCALE
                return buf
            """)),
        Valid(src("""
            import numpy as np
            BUF = np.zeros(4)
            BUF[0] = 1.0  # module level: not traced

            # leapp: trace
            def f(x):
                BUF = x.copy()  # a local that shares the name
                BUF[0] = 0.0
                return BUF
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            BUF = np.zeros(4)

            # leapp: trace
            def f(x):
                BUF[:] = x
                return BUF * 2
            """), line=6),
        Invalid(src("""
            import numpy as np
            TOTAL = np.zeros(4)

            # leapp: trace
            def f(x):
                global TOTAL
                TOTAL += x
                return x
            """), line=7),
        Invalid(src("""
            import numpy as np
            OUT = np.zeros(4)

            # leapp: trace
            def f(x):
                np.multiply(x, 2.0, out=OUT)
                return OUT
            """), line=6),
    ]

    def _is_module_array(self, name, ctx):
        return name in ctx.module_arrays and ctx.scope.is_module_global(name)

    def _check_target(self, target, ctx, name_ok):
        name = _base_name(target)
        if name is None or not self._is_module_array(name, ctx):
            return
        if isinstance(target, ast.Name) and not name_ok:
            return
        ctx.report(self.CODE, target, self.MESSAGE.format(text=ctx.text(target), name=name))

    def visit_Assign(self, node, ctx):
        if ctx.in_function:
            for target in node.targets:
                for t in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    self._check_target(t, ctx, name_ok=False)

    def visit_AugAssign(self, node, ctx):
        if ctx.in_function:
            self._check_target(node.target, ctx, name_ok=True)

    def visit_Call(self, node, ctx):
        if not ctx.in_function:
            return
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in MUTATING_METHODS:
            name = _base_name(f.value)
            if name and self._is_module_array(name, ctx):
                ctx.report(self.CODE, node, self.MESSAGE.format(text=ctx.text(node), name=name))
                return
        q = ctx.call_name(node)
        if not (q and q.startswith("numpy.")):
            return
        written = [k.value for k in node.keywords if k.arg == "out"]
        if table.canonical(q) == "numpy.copyto" and node.args:
            written.append(node.args[0])
        for w in written:
            for t in w.elts if isinstance(w, ast.Tuple) else [w]:
                if isinstance(t, ast.Name) and self._is_module_array(t.id, ctx):
                    ctx.report(self.CODE, t, self.MESSAGE.format(text=ctx.text(node), name=t.id))


_SHAPE_CATEGORIES = ("Array creation", "Shape and layout")


class DataDependentSize(Rule):
    CODE = "LP303"
    NAME = "data-dependent-size"
    MESSAGE = ("`{text}` is a size computed from the data, {where}: the graph freezes the size "
               "seen while tracing. Keep sizes static: select with a mask (`x[mask]`), "
               "`np.where`, or count with `np.count_nonzero` and stay in arrays.")
    WHAT = ("Flags data-dependent sizes escaping into Python: `len()`, `.shape[...]` or `.size` "
            "of `np.unique`/`np.nonzero`/boolean-mask results, Python numbers computed from "
            "array data used as a slice bound, a shape, or a `range()`, and array data passed as a "
            "size or shift (`np.zeros(mask.sum())`, `np.roll(x, np.argmax(x))`).")
    WHY = ("`np.nonzero(m)` and `x[mask]` trace fine (their size follows the data inside the "
           "graph), but once the size becomes a Python `int`, the graph holds the traced-time "
           "value for every input.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            n = int((x > 0).sum())
            return x[:n]
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def f(x):
            return x[x > 0]
        """)
    VALID = [
        Valid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                idx = np.nonzero(x > 0)
                kept = x[x > 0]
                n = x.shape[0]
                return kept, x[idx], x[: n // 2], np.zeros(len(x))
            """)),
        Valid(src("""
            import numpy as np
            REPS = np.array([1, 0, 2, 1])
            # leapp: trace
            def f(x, n=3):
                return (np.zeros((n, x.shape[1])), np.repeat(x, REPS, axis=0), np.tile(x, (2, 1)),
                        np.full(x.shape, x.mean()), np.linspace(0.0, 1.0, x.shape[0]), np.roll(x, 2))
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                k = len(np.unique(x))
                return x * k
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x[: int((x > 0).sum())]
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                kept = x[x > 0]
                return np.zeros(kept.shape[0])
            """), line=5),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return x[:np.argmax(x)]
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x, mask):
                return np.zeros((mask.sum(), 3)) + x.mean()
            """), line=4),
        Invalid(src("""
            import numpy as np
            # leapp: trace
            def f(x):
                return np.roll(x, np.argmax(x))
            """), line=4),
    ]

    # Parameters that are sizes (or shifts) even when an array is passed: an array there is
    # data-dependent (np.zeros(mask.sum())), which the runtime refuses. Position, then keyword.
    _SIZE_PARAMETERS = {
        "numpy.zeros": ((0, "shape"),), "numpy.ones": ((0, "shape"),), "numpy.empty": ((0, "shape"),),
        "numpy.full": ((0, "shape"),), "numpy.eye": ((0, "N"), (1, "M"), (2, "k")),
        "numpy.identity": ((0, "n"),), "numpy.arange": ((0, "start"), (1, "stop"), (2, "step")),
        "numpy.linspace": ((2, "num"),), "numpy.logspace": ((2, "num"),), "numpy.geomspace": ((2, "num"),),
        "numpy.tile": ((1, "reps"),), "numpy.repeat": ((1, "repeats"),), "numpy.roll": ((1, "shift"),),
        "numpy.array_split": ((1, "indices_or_sections"),), "numpy.split": ((1, "indices_or_sections"),),
    }

    def _flag(self, node, where, ctx):
        ctx.claim(node)
        if isinstance(node, ast.Call):  # report the size once, not its parts again
            for a in node.args:
                ctx.claim(a)
        ctx.report(self.CODE, node, self.MESSAGE.format(text=ctx.text(node), where=where))

    def _sizes(self, args, where, ctx, arrays=False):
        """Flag Python numbers from array data; with ``arrays``, arrays too (x[:np.argmax(x)])."""
        for a in args:
            for part in a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a]:
                if not ctx.is_claimed(part) and (ctx.is_tainted(part) or arrays and ctx.is_array(part)
                                                 and not ctx.is_static_call(part)):
                    self._flag(part, where, ctx)

    def visit_Call(self, node, ctx):
        if ctx.is_claimed(node):
            return
        if ctx.builtin(node.func) == "len" and node.args and ctx.is_dds(node.args[0]):
            return self._flag(node, "escaping into Python", ctx)
        takes_sizes = ctx.builtin(node.func) == "range"
        if takes_sizes:
            return self._sizes([*node.args], "used as a size in `range(...)`", ctx, arrays=True)
        if not takes_sizes:
            found = ctx.site(node)
            entry = found[1] if found else None
            takes_sizes = isinstance(entry, table.Entry) and entry.category in _SHAPE_CATEGORIES
        if takes_sizes:
            self._sizes([*node.args, *(k.value for k in node.keywords)],
                        f"used as a size in `{ctx.text(node.func)}(...)`", ctx)
        found = ctx.site(node)
        sizes = self._SIZE_PARAMETERS.get(found[1].name) if found and isinstance(found[1], table.Entry) else None
        if sizes:
            given = [node.args[i] for i, _ in sizes if i < len(node.args)]
            given += [k.value for k in node.keywords if any(k.arg == name for _, name in sizes)]
            self._sizes(given, f"used as a size in `{ctx.text(node.func)}(...)`", ctx, arrays=True)

    def visit_Attribute(self, node, ctx):
        if node.attr == "size" and not ctx.is_claimed(node) and ctx.is_dds(node.value):
            self._flag(node, "escaping into Python", ctx)

    def visit_Subscript(self, node, ctx):
        if ctx.is_claimed(node):
            return
        if ctx.is_escape(node):  # kept.shape[0] with kept = x[mask]
            return self._flag(node, "escaping into Python", ctx)
        if ctx.is_array(node.value):
            slices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            bounds = [b for s in slices if isinstance(s, ast.Slice)
                      for b in (s.lower, s.upper, s.step) if b is not None]
            self._sizes(bounds, "used as a slice bound", ctx, arrays=True)


class StateWrite(Rule):
    CODE = "LP304"
    NAME = "state-write"
    MESSAGE = ("`{text}` writes {what}: NumPy does it once, while tracing; the graph only returns "
               "values and never will. {instead}")
    WHAT = ("Flags writes that leave a traced function: in-place updates of the caller's array "
            "arguments (`x += 1`, `x[0] = v`, `out=x`), assignments to attributes of objects the "
            "function did not create (`self.t += dt`, `self.buf[:] = x`), and assignments to "
            "`global`/`nonlocal` names.")
    WHY = ("A graph is a pure function of its inputs. Side effects happen once, while tracing; "
           "later calls run the graph, which returns the outputs and leaves the caller's arrays, "
           "objects and globals as they were.")
    EXAMPLE = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def step(x, dt):
            x += dt          # the caller's array
            return x
        """)
    INSTEAD = src("""
        import numpy as np
        import leapp

        @leapp.compile
        def step(x, dt):
            return x + dt    # return the new value; the caller stores it
        """)
    VALID = [
        Valid(src("""
            import numpy as np

            # leapp: trace
            def f(x):
                x = x.copy()
                x += 1.0
                x[0] = 0.0
                return x
            """)),
        Valid(src("""
            import numpy as np

            # leapp: trace
            def f(x):
                parts = []
                parts.append(x * 2)      # a list the function made
                parts.extend([x, x + 1])
                return np.append(np.concatenate(parts), 0.0)
            """)),
        Valid(src("""
            import numpy as np

            # leapp: trace
            def f(x, scale: float):
                scale += 1.0  # a Python number: rebinding, not a write
                out = {"y": x * scale}
                out["z"] = x
                return out["y"], out["z"]
            """)),
    ]
    INVALID = [
        Invalid(src("""
            import numpy as np

            # leapp: trace
            def f(a, b):
                a += 1
                return a + b
            """), line=5),
        Invalid(src("""
            import numpy as np

            # leapp: trace
            def f(x, lo, hi):
                np.clip(x, lo, hi, out=x)
            """), line=5),
        Invalid(src("""
            import numpy as np

            class Integrator:
                # leapp: trace
                def step(self, v, dt):
                    self.t += dt
                    return v * dt
            """), line=6),
        Invalid(src("""
            import numpy as np

            class Filter:
                # leapp: trace
                def smooth(self, x):
                    self.buf[:] = 0.5 * self.buf + 0.5 * x
                    return self.buf
            """), line=6),
        Invalid(src("""
            from collections import deque
            import numpy as np
            FRAMES = deque(maxlen=3)

            # leapp: trace
            def f(x):
                FRAMES.append(x)
                return np.concatenate(list(FRAMES))
            """), line=7),
        Invalid(src("""
            import numpy as np
            CALLS = {"n": 0}

            # leapp: trace
            def f(x):
                CALLS["n"] += 1
                return x * CALLS["n"]
            """), line=6),
        Invalid(src("""
            import numpy as np

            class Recorder:
                # leapp: trace
                def step(self, x):
                    self.history.append(x)
                    return x * 2
            """), line=6),
        Invalid(src("""
            import numpy as np
            COUNT = 0

            # leapp: trace
            def f(x):
                global COUNT
                COUNT += 1
                return x * 2
            """), line=7),
    ]

    def _check(self, target, ctx, augmented, stmt=None):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check(t, ctx, augmented)
            return
        if isinstance(target, ast.Starred):
            return self._check(target.value, ctx, augmented)
        name = _base_name(target)
        if name is None or (name in ctx.module_arrays and ctx.scope.is_module_global(name)):
            return  # LP302's case
        if isinstance(target, ast.Name):
            if name not in ctx.scope.bound:
                what, instead = f"the {_outer_kind(ctx.scope, name)} `{name}`", "Return the new value instead."
            elif augmented and name in ctx.state.arguments and ctx.is_array(target):
                what, instead = f"into the caller's array `{name}`", _COPY
            else:
                return
        elif name in ctx.state.arguments or name not in ctx.scope.bound:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                if not ctx.is_array(target.value):
                    if name in ctx.state.arguments or not _outer_object(ctx, name):
                        return  # obs["y"] = ...: the caller's mapping; the static pass cannot tell more
                    what = f"an item of the {_outer_kind(ctx.scope, name)} `{name}`"
                    instead = "Return the new value instead (or keep state outside the compiled function)."
                else:
                    what, instead = f"into the caller's array `{name}`", _COPY
            else:
                what, instead = f"state of `{name}` (an object the function did not create)", \
                    "Return the new value instead (or keep state outside the compiled function)."
        else:
            return
        text = ctx.text(stmt if stmt is not None else target)
        ctx.report(self.CODE, target, self.MESSAGE.format(text=text, what=what, instead=instead))

    def visit_Assign(self, node, ctx):
        if ctx.in_function:
            for target in node.targets:
                self._check(target, ctx, augmented=False)

    def visit_AugAssign(self, node, ctx):
        if ctx.in_function:
            self._check(node.target, ctx, augmented=True, stmt=node)

    def visit_Call(self, node, ctx):
        if not ctx.in_function:
            return
        f = node.func
        written = []
        if isinstance(f, ast.Attribute) and f.attr in MUTATING_METHODS and ctx.is_array(f.value):
            written.append(f.value)
        q = ctx.call_name(node)
        if q and q.startswith("numpy."):
            written += [k.value for k in node.keywords if k.arg == "out"]
            if table.canonical(q) == "numpy.copyto" and node.args:
                written.append(node.args[0])
        for w in written:
            for t in w.elts if isinstance(w, ast.Tuple) else [w]:
                if isinstance(t, ast.Name) and t.id in ctx.state.arguments and ctx.is_array(t):
                    ctx.report(self.CODE, t, self.MESSAGE.format(
                        text=ctx.text(node), what=f"into the caller's array `{t.id}`", instead=_COPY))
        if isinstance(f, ast.Attribute) and f.attr in CONTAINER_MUTATORS and not ctx.is_array(f.value):
            self._container(node, f, ctx)

    def _container(self, node, f, ctx):
        """``FRAMES.append(x)``, ``self.history.pop(0)``, ``CACHE.update(...)``: a container the
        function did not create, changed in place (at the trace only; the check would repeat it)."""
        name = _base_name(f.value)
        if name is None or name in ctx.module_arrays:
            return
        if isinstance(f.value, ast.Name):
            if name in ctx.state.arguments:
                what = f"the caller's `{name}`"
            elif _outer_object(ctx, name):
                what = f"the {_outer_kind(ctx.scope, name)} `{name}`"
            else:
                return  # a list the function made
        elif name in ctx.state.arguments or _outer_object(ctx, name):
            what = f"state of `{name}` (an object the function did not create)"
        else:
            return
        ctx.report(self.CODE, node, self.MESSAGE.format(
            text=ctx.text(node), what=what,
            instead="Return the new value instead (or keep state outside the compiled function, "
                    "or use leapp.compile(state=...))."))


def _outer_object(ctx, name) -> bool:
    """``name`` is a variable of an enclosing function or of the module (bound there, and not by an
    import: ``np.append`` is NumPy's function and ``scipy.ndimage.rotate`` a module's, not a list's
    method), not of the function itself. Compiling, the module's containers come from the
    function's globals (``leapp.compiler.source.module_state_of``)."""
    if name in ctx.scope.bound:
        return False
    scope = ctx.scope.parent
    while scope is not None:
        if name in scope.bound:
            return name not in scope.imports
        scope = scope.parent
    return False


def _outer_kind(scope, name) -> str:
    """``nonlocal`` when an enclosing function binds ``name``, else ``global``."""
    outer = scope.parent
    while outer is not None and outer.parent is not None:
        if name in outer.bound:
            return "nonlocal"
        outer = outer.parent
    return "global"


_COPY = "Work on a copy (`x = x.copy()`, or `x = x + 1` for `x += 1`) and return what changed."

RULES = [RandomInTrace, DataDependentSize, ModuleArrayWrite, StateWrite]
