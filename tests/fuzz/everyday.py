"""Preprocessing programs written the way people write them, as Python source, for ``@leapp.compile``.

``tests/fuzz/programs.py`` draws expression DAGs and calls the runtime
directly; this generator writes *source files*: chained methods
(``np.abs(x).reshape(-1).sum()``), methods instead of functions
(``x.clip(...)``, ``x.mean(axis=0)``), expressions over several lines,
in-place updates of copies, module-level helpers and nested closures, methods
of classes, module-level constants and lookup tables (indexed by traced
integers too), dict inputs with dotted keys (``obs["observation.state"]``),
quaternion rotation, normalisation with stored statistics, clipping and
history stacking. About one program in four also branches on data (issue 19),
in whatever style it is written: an ``if``/``elif``/``else``, a conditional
expression, an early ``return``, a near-zero guard before a division, a clamp of
a 0-d value, a branch inside a helper function or method; each threshold lies
between the values the check's own inputs give, so that the judge runs both arms
(``Program.branch_sites`` says which sites it did). Every program is valid NumPy: each statement is executed on
the sample while generating and dropped when NumPy rejects it.

``generate(seed)`` returns a ``Program`` (the module text, how to draw its
inputs, the constructs it uses). ``check(seed)`` writes it to a temporary
module, imports it twice (with ``@leapp.compile`` as written, and with the
decorator lines removed as the NumPy reference), calls both on the traced
sample and on fresh inputs (negative integers, zeros, NaN and infinities where
the program sanitises them or propagates them), and returns an ``Outcome``:

- ``exact``: values and dtypes equal NumPy's at the program's float precision;
- ``refused``: the program does something untraceable on purpose (a loop on
  an array, ``float()`` of a traced value, and issue 17's holes: C code filling
  a buffer, the buffer protocol, state left on an object, a size from data read
  into Python) and leapp refused it naming that line (and only lines from there on);
- ``false_refusal``: leapp refused traceable code, or raised ``InternalError``
  ("a leapp bug"), or crashed;
- ``ill_conditioned``: values differ, but NumPy's own result moves as much when the
  float inputs move by 4 ulps (see ``_ill_conditioned``), or leapp said so itself with a
  ``RoundingWarning`` (a float sum in another order, or a sin or exp torch rounds within a few
  ulps of NumPy's, magnified downstream);
- ``mismatch``: a value, dtype, shape or structure differs from NumPy, leapp
  repaired itself with a ``LeappInternalWarning``, or an untraceable program
  compiled without a word.

``tests/fuzz/test_everyday.py`` runs a bounded slice in CI;
``benchmarks/everyday.py`` runs any number on worker processes.
"""

from __future__ import annotations

import importlib.util
import os
import random
import re
import sys
import tempfile
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

FLOAT_DTYPES = ("float32", "float32", "float32", "float64", "float64", "float16")
STYLES = ("function", "function", "dict", "class", "closure")

# Constructs the CI slice leaves out while a known leapp bug makes them fail, with the reason
# (reproducers in /work/coord/BOARD.md, owner `trust`, issue 8). ``check(..., skip=KNOWN_ISSUES)``
# reports a program that uses one as "skipped"; ``benchmarks/everyday.py`` runs them all. Remove an
# entry as soon as its fix lands: the slice must then pass with the construct back in.
KNOWN_ISSUES: dict[str, str] = {
    # (empty) "branch_untyped", methods of values the static pass cannot type in a converted branch
    # (`obs["k"].min()`), was refused as not shown free of side effects until such a call ran under
    # the runtime's check that its receiver is NumPy's (dispatch.array_method)
}

@dataclass
class Leaf:
    """One array input: where it sits in the arguments, and how to draw it."""

    path: tuple  # (param,) or (param, key)
    shape: tuple
    dtype: str
    domain: str  # "float", "dirty" (NaN/inf sprinkled), "index:N", "int", "image", "bool", "quat"


@dataclass
class Program:
    seed: int
    source: str
    entry: str  # a dotted attribute path in the module: "preprocess" or "PREP.preprocess"
    params: list
    leaves: list
    constructs: set = field(default_factory=set)
    refuse_line: int | None = None  # the line leapp must name, for a deliberately untraceable program
    precision: str = "float64"
    # the planted block's first line: a refusal may also name its other lines and the lines after it
    # that use what it made (a buffer C code filled is named where it is used), never a line before
    refuse_first: int | None = None
    # branches on data: (kind, sides) per site, sides the test's truth values on the check's inputs
    # that reach it in NumPy (``_Gen.alts``): (False, True) where the judge exercised both arms
    branch_sites: tuple = ()


@dataclass
class Outcome:
    kind: str  # "exact", "refused", "false_refusal", "mismatch", "invalid"
    detail: str = ""
    constructs: tuple = ()
    branch_sites: tuple = ()  # the program's ``branch_sites``, for the benchmark's counts


# --- drawing inputs ---------------------------------------------------------------------------

_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


def draw(leaf, rng):
    dt = np.dtype(leaf.dtype)
    shape = leaf.shape
    kind, _, arg = leaf.domain.partition(":")
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "index":
        return rng.integers(-int(arg), int(arg), shape).astype(dt)
    if kind == "int":
        pool = np.array([0, 1, -1, 2, -3, 5, -7, 11])
        v = np.where(rng.random(shape) < 0.5, rng.choice(pool, shape), rng.integers(-40, 40, shape))
        return v.astype(dt)
    if kind == "image":
        return rng.integers(0, 256, shape).astype(dt)
    if kind == "quat":
        q = rng.standard_normal(shape)
        return (q + np.where(q >= 0, 0.1, -0.1)).astype(dt)
    v = rng.standard_normal(shape) * 2.0
    v = np.where(rng.random(shape) < 0.15, rng.integers(-4, 5, shape) / 2, v)  # exact halves and zeros
    if kind == "dirty":
        v = np.where(rng.random(shape) < 0.2, rng.choice(_SPECIAL, shape), v)
    return v.astype(dt)


def arguments(program, rng):
    """The call's positional arguments: arrays, or dicts of arrays for dict-style programs."""
    args = {p: None for p in program.params}
    for leaf in program.leaves:
        value = draw(leaf, rng)
        if len(leaf.path) == 1:
            args[leaf.path[0]] = value
        else:
            if args[leaf.path[0]] is None:
                args[leaf.path[0]] = {}
            args[leaf.path[0]][leaf.path[1]] = value
    return [args[p] for p in program.params]


# --- generating -------------------------------------------------------------------------------


def _lit(value, dtype):
    """(source, value) of a small constant array of ``dtype``, its values rounded to 3 decimals."""
    flat = np.asarray(value, dtype=np.float64).round(3).tolist()
    if np.dtype(dtype).kind in "iu":
        flat = np.asarray(value).astype(np.int64).tolist()
    return f"np.array({flat!r}, dtype=np.{dtype})", np.array(flat, dtype=dtype)


class _Gen:
    def __init__(self, seed, rnd):
        self.seed = seed
        self.rnd = rnd
        self.rng = np.random.default_rng(seed)
        self.fdt = rnd.choice(FLOAT_DTYPES)
        self.style = rnd.choice(STYLES)
        self.header = []  # module-level lines: constants, tables, helpers
        self.stats = []  # (name, source) stored statistics: module constants, self.x or closure cells
        self.body = []  # lines of the function body
        self.scope = {"np": np}  # every name's sample value, for choosing the next statement
        self.kinds = {}  # local name -> "float" | "int" | "bool"
        self.params = []
        self.leaves = []
        self.constructs = set()
        self.counter = 0
        self.refuse_line = None
        self.refuse_first = None
        self.self_ns = types.SimpleNamespace()
        # the check's own inputs (``check``: the traced sample and ``N_FRESH`` fresh ones, drawn from
        # ``seed + 1``), each run through every statement as NumPy runs it: a branch's threshold is
        # chosen between their values, so that the judge sees both arms; None where NumPy raised
        self.alts = []
        self.returned = []  # per check input: NumPy has returned early on it by this point of the body
        self.sites = []  # (kind, sides) per branch site
        self.methods = []  # class style: helper methods, rendered in the class
        self.early = None  # the body index of an early return's placeholder line
        self.dict_keys = {}  # dict style: local name -> the key it was read from

    # names and bookkeeping

    def fresh(self, base):
        self.counter += 1
        return f"{base}{self.counter}"

    def run(self, lines, new, kind=None, construct=None, header=()):
        """Execute ``lines`` on the sample; keep them when NumPy accepts them and ``new`` is sane."""
        saved = dict(self.scope)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                for h in header:
                    exec(compile(h, "<gen>", "exec"), self.scope)  # noqa: S102 - generated here
                exec(compile("\n".join(lines), "<gen>", "exec"), self.scope)  # noqa: S102
            value = self.scope[new] if new else None
        except Exception:
            self.scope = saved
            return False
        if new is not None:
            v = np.asarray(value) if isinstance(value, np.generic) else value
            if not isinstance(v, np.ndarray) or v.dtype.kind not in "biuf" or v.size > 2048:
                self.scope = saved
                return False
            self.kinds[new] = kind or {"b": "bool", "i": "int", "u": "int", "f": "float"}[v.dtype.kind]
        self.header.extend(header)
        self.body.extend(lines)
        if construct:
            self.constructs.add(construct)
        self.mirror(lines, header)
        return True

    def mirror(self, lines, header=()):
        """Run accepted ``lines`` on each of the check's inputs too (``alts``)."""
        for k, sc in enumerate(self.alts):
            if sc is None:
                continue
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    for h in header:
                        exec(compile(h, "<gen>", "exec"), sc)  # noqa: S102 - generated here
                    exec(compile("\n".join(lines), "<gen>", "exec"), sc)  # noqa: S102
            except Exception:
                self.alts[k] = None

    def set_everywhere(self, name, value):
        self.scope[name] = value
        for sc in self.alts:
            if sc is not None:
                sc[name] = value

    def value(self, name):
        return self.scope[name]

    def pick(self, kind, min_ndim=0, recent=True):
        names = [n for n, k in self.kinds.items() if k == kind and np.ndim(self.scope[n]) >= min_ndim]
        if not names:
            return None
        if recent and self.rnd.random() < 0.6:
            return names[-1]
        return self.rnd.choice(names)

    def stat(self, base, value, dtype=None):
        """A stored statistic: a module constant, ``self.<name>`` or a closure cell, by style."""
        src, arr = _lit(value, dtype or self.fdt)
        name = f"{base}_{len(self.stats)}"
        if self.style == "class":
            attr = name.lower()
            setattr(self.self_ns, attr, arr)
            self.stats.append((attr, src))
            return f"self.{attr}"
        if self.style == "closure":
            cell = name.lower()
            self.set_everywhere(cell, arr)
            self.stats.append((cell, src))
            return cell
        self.stats.append((name, src))
        self.set_everywhere(name, arr)
        self.header.append(f"{name} = {src}")
        return name

    def const(self, base, value, dtype):
        """A module-level constant (lookup tables are always module-level)."""
        self.counter += 1
        name = f"{base}_{self.counter}"
        src, arr = _lit(value, dtype)
        self.set_everywhere(name, arr)
        self.header.append(f"{name} = {src}")
        return name

    # inputs

    def add_input(self, param, key, shape, dtype, domain, local):
        """Declare an array input; ``local`` is the body name it is read into."""
        leaf = Leaf((param,) if key is None else (param, key), tuple(shape), dtype, domain)
        self.leaves.append(leaf)
        value = draw(leaf, self.rng)
        if key is None:
            self.scope[param] = value
            self.kinds[param] = _kind_of(value)
            return param
        self.scope.setdefault(param, {})[key] = value
        self.body.append(f"{local} = {param}[{key!r}]")
        self.dict_keys[local] = key
        self.scope[local] = value
        self.kinds[local] = _kind_of(value)
        self.constructs.add("dotted_keys" if "." in key else "dict_input")
        return local


def _kind_of(value):
    return {"b": "bool", "i": "int", "u": "int", "f": "float"}[np.asarray(value).dtype.kind]


# --- statements -------------------------------------------------------------------------------


def _reduce_method(g, value):
    """A reduction spelled as a method: ``.sum(axis=-1, keepdims=True)``, ``.argmax()``."""
    r = g.rnd
    names = ["sum", "mean", "max", "min", "std", "var", "prod", "any", "all", "argmax", "argmin", "cumsum"]
    if value.dtype == np.float16:
        names.remove("cumsum")  # leapp refuses float16 running sums by design (NumPy rounds each step)
    name = r.choice(names if value.dtype != np.bool_ else ["any", "all", "sum", "argmax"])
    nd = value.ndim
    kw = []
    if nd and r.random() < 0.7:
        kw.append(f"axis={r.randrange(-nd, nd)}")
    if name not in ("argmax", "argmin", "cumsum") and kw and r.random() < 0.4:
        kw.append("keepdims=True")
    if name in ("std", "var") and r.random() < 0.3:
        kw.append("ddof=1")
    return f".{name}({', '.join(kw)})"


def _chain(g):
    """A chain of methods and functions on one array: ``np.abs(x).reshape(-1).sum()``."""
    r = g.rnd
    src = g.pick("float") or g.pick("int")
    if src is None:
        return False
    expr = src
    if r.random() < 0.4:
        expr = r.choice([f"np.abs({src})", f"np.tanh({src})", f"({src} * 2.0)", f"np.square({src})",
                         f"{src}.copy()", f"{src}.astype(np.{g.fdt})", f"np.asarray({src})"])
    parts = [expr]
    tags = set()
    for _ in range(r.randint(1, 3)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                v = np.asarray(eval("".join(parts), g.scope))  # noqa: S307 - generated here
        except Exception:
            return False
        step = r.choice(["reshape", "reshape2", "T", "transpose", "reduce", "reduce", "clip", "astype", "copy",
                         "round", "flatten", "ravel", "slice", "flip", "squeeze", "view", "dot", "expand",
                         "sort", "repeat"])
        if step == "reshape":
            parts.append(".reshape(-1)")
        elif step == "reshape2" and v.ndim >= 1 and v.size:
            parts.append(f".reshape({v.shape[0]}, -1)")
        elif step == "T" and v.ndim >= 2:
            parts.append(".T")
        elif step == "transpose" and v.ndim >= 2:
            axes = list(range(v.ndim))
            r.shuffle(axes)
            parts.append(f".transpose({', '.join(map(str, axes))})")
        elif step == "reduce":
            parts.append(_reduce_method(g, v))
        elif step == "clip":
            parts.append(r.choice([".clip(-1.5, 1.5)", ".clip(0, None)", ".clip(-3.0, 2.5)"]))
        elif step == "astype":
            parts.append(f".astype(np.{r.choice(['float32', 'float64', g.fdt])})")
        elif step == "copy":
            parts.append(".copy()")
        elif step == "round" and v.dtype.kind == "f":
            parts.append(f".round({r.choice([0, 1, 2])})")
        elif step in ("flatten", "ravel", "squeeze"):
            parts.append(f".{step}()")
        elif step == "view":
            parts.append(".view()")
        elif step == "slice" and v.ndim >= 1:
            parts.append(r.choice(["[..., :2]", "[::-1]", "[1:]", "[..., -1]", "[0]"]))
        elif step == "flip" and v.ndim >= 1:
            parts[:] = [f"np.flip({''.join(parts)}, axis={r.randrange(v.ndim)})"]
        elif step == "dot" and v.ndim >= 1 and v.dtype.kind == "f":
            w = g.const("W", g.rng.standard_normal((v.shape[-1], r.randint(1, 3))).round(3), g.fdt)
            parts.append(r.choice([f".dot({w})", f" @ {w}"]))
            if parts[-1].startswith(" @"):
                parts[:] = [f"({''.join(parts)})"]
        elif step == "expand":
            parts.append(r.choice(["[None]", "[..., None]"]))
        elif step == "sort" and v.ndim >= 1:
            parts.append(r.choice([".argsort(axis=-1, kind='stable')", "[None].repeat(2, axis=0)"]))
        elif step == "repeat" and v.ndim >= 1:
            parts.append(f".repeat(2, axis={v.ndim - 1})")
        else:
            continue
        tags.add("method_" + step)
    name = g.fresh("c")
    text = "".join(parts)
    multiline = len(parts) > 2 and r.random() < 0.4 and not any(p.startswith(" @") for p in parts)
    if multiline:
        lines = [f"{name} = (", f"    {parts[0]}"] + [f"    {p}" for p in parts[1:]] + [")"]
        g.constructs.add("multiline")
    else:
        lines = [f"{name} = {text}"]
    if not g.run(lines, name, construct="chain"):
        return False
    g.constructs.update(tags)
    return True


def _normalise(g):
    r = g.rnd
    x = g.pick("float", min_ndim=1)
    if x is None:
        return False
    v = g.value(x)
    d = v.shape[-1]
    name = g.fresh("n")
    dt = g.fdt if r.random() < 0.85 else "float64"
    style = r.choice(["zscore", "zscore_eps", "inv", "minmax", "divide"])
    if style == "minmax":
        lo = g.stat("LOW", g.rng.uniform(-3, -1, d).round(3), dt)
        hi = g.stat("HIGH", g.rng.uniform(1, 3, d).round(3), dt)
        expr = f"2.0 * ({x} - {lo}) / ({hi} - {lo}) - 1.0"
    else:
        mean = g.stat("MEAN", g.rng.standard_normal(d).round(3), dt)
        std = g.stat("STD", g.rng.uniform(0.5, 2.0, d).round(3), dt)
        expr = {"zscore": f"({x} - {mean}) / {std}", "zscore_eps": f"({x} - {mean}) / ({std} + 1e-8)",
                "inv": f"({x} - {mean}) * (1.0 / {std})", "divide": f"np.divide({x} - {mean}, {std})"}[style]
    return g.run([f"{name} = {expr}"], name, construct="normalise")


def _standardise(g):
    x = g.pick("float", min_ndim=1)
    if x is None:
        return False
    name = g.fresh("s")
    ax = g.rnd.choice(["-1", "0"])
    lines = [f"{name} = ({x} - {x}.mean(axis={ax}, keepdims=True)) / ({x}.std(axis={ax}, keepdims=True) + 1e-6)"]
    return g.run(lines, name, construct="normalise")


def _clip(g):
    r = g.rnd
    x = g.pick("float") or g.pick("int")
    if x is None:
        return False
    name = g.fresh("k")
    lim = r.choice(["5.0", "1.0", "0.5", "3"])
    expr = r.choice([f"np.clip({x}, -{lim}, {lim})", f"{x}.clip(-{lim}, {lim})",
                     f"np.minimum(np.maximum({x}, -{lim}), {lim})", f"np.clip({x}, 0.0, None)",
                     f"{x}.clip(min=-{lim})"])
    return g.run([f"{name} = {expr}"], name, construct="clip")


def _inplace(g):
    """``y = x.copy()`` then a few in-place updates of the copy."""
    r = g.rnd
    x = g.pick("float", min_ndim=1) or g.pick("int", min_ndim=1)
    if x is None:
        return False
    v = g.value(x)
    y = g.fresh("y")
    lines = [f"{y} = {x}.copy()" if r.random() < 0.8 else f"{y} = np.array({x}, copy=True)"]
    for _ in range(r.randint(1, 3)):
        op = r.choice(["col", "sub_stat", "mask", "slice", "row", "scale", "clip_out", "norm", "div"])
        if op == "col":
            lines.append(f"{y}[..., 0] *= {r.choice(['2', '2.0', '-1', '0.5'])}")
        elif op == "sub_stat":
            m = g.stat("M", g.rng.standard_normal(v.shape[-1]).round(3))
            lines.append(f"{y} -= {m}")
        elif op == "mask":
            lines.append(f"{y}[{y} < 0] = {r.choice(['0', '0.0', '-1'])}")
        elif op == "slice" and v.ndim >= 1 and v.shape[-1] > 1:
            lines.append(f"{y}[..., 1:] += 1")
        elif op == "row" and v.ndim >= 2:
            lines.append(f"{y}[0] = {r.choice(['0', f'{y}[-1]', f'{y}[0] * 2'])}")
        elif op == "scale":
            lines.append(f"{y} *= {r.choice(['3', '0.25', 'np.float32(1.5)'])}")
        elif op == "clip_out" and v.dtype.kind == "f" and g.early is None:  # (`out=` after an early return: LP202)
            lines.append(f"np.clip({y}, -2.0, 2.0, out={y})")
        elif op == "norm" and v.dtype.kind == "f":
            lines.append(f"{y} /= np.linalg.norm({y}, axis=-1, keepdims=True) + 1e-6")
        elif op == "div" and v.dtype.kind == "f":
            lines.append(f"{y}[..., :1] = {y}[..., :1] / 4.0")
    return g.run(lines, y, construct="inplace_copy")


def _helper(g):
    """A module-level helper function called from the body (sometimes twice)."""
    r = g.rnd
    x = g.pick("float")
    if x is None:
        return False
    g.counter += 1
    fname = f"_helper{g.counter}"
    kind = r.choice(["squash", "scale", "rms", "safe_div", "soft"])
    header = {
        "squash": f"def {fname}(v, limit=5.0):\n    return np.tanh(v / limit) * limit",
        "scale": f"def {fname}(v, gain, bias=0.0):\n    out = v * gain\n    out = out + bias\n    return out",
        "rms": f"def {fname}(v):\n    return np.sqrt(np.mean(np.square(v), axis=-1, keepdims=True) + 1e-6)",
        "safe_div": f"def {fname}(a, b, eps=1e-6):\n    return a / np.where(np.abs(b) < eps, eps, b)",
        "soft": f"def {fname}(v):\n    e = np.exp(v - v.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)",
    }[kind]
    name = g.fresh("h")
    call = {"squash": f"{fname}({x})", "scale": f"{fname}({x}, 0.5, bias=1.0)", "rms": f"{x} / {fname}({x})",
            "safe_div": f"{fname}({x}, {g.pick('float', recent=False)})", "soft": f"{fname}({x})"}[kind]
    if kind == "squash" and r.random() < 0.5:
        call = f"{fname}({fname}({x}), limit=2.0)"
    return g.run([f"{name} = {call}"], name, construct="helper", header=[header])


def _closure(g):
    """A nested function in the body that closes over a local."""
    if g.early is not None:  # leapp refuses a `def` in the code after an early return (LP202, named)
        return False
    x = g.pick("float")
    if x is None:
        return False
    k = g.fresh("gain")
    fn = g.fresh("_apply")
    name = g.fresh("z")
    lines = [f"{k} = {g.rnd.choice(['0.5', '2.0', '-1.0'])}", f"def {fn}(v):", f"    return v * {k} + 1.0",
             f"{name} = {fn}({x}) - {fn}(np.ones_like({x}))"]
    return g.run(lines, name, construct="closure_helper")


def _lookup(g):
    """A module-level table indexed by a traced integer: an input, an argmax, a digitize."""
    r = g.rnd
    n = r.randint(3, 8)
    source = r.choice(["input", "argmax", "digitize", "searchsorted", "mod", "clip"])
    name = g.fresh("t")
    lines = []
    if source == "input":
        leaf = next((lf for lf in g.leaves if lf.domain.startswith("index")), None)
        if leaf is None:
            return False
        n = int(leaf.domain.split(":")[1])
        i = leaf.path[0] if len(leaf.path) == 1 else "task"
    elif source == "argmax":
        x = g.pick("float", min_ndim=1)
        if x is None:
            return False
        n = max(n, g.value(x).shape[-1])
        i = g.fresh("i")
        lines.append(f"{i} = np.argmax({x}, axis=-1)" if r.random() < 0.5 else f"{i} = {x}.argmax(axis=-1)")
    elif source in ("digitize", "searchsorted"):
        x = g.pick("float")
        if x is None:
            return False
        bins = g.const("BINS", np.linspace(-2, 2, n - 1).round(3), g.fdt)
        i = g.fresh("i")
        lines.append(f"{i} = np.digitize({x}, {bins})" if source == "digitize"
                     else f"{i} = np.searchsorted({bins}, {x})")
    else:
        k = g.pick("int")
        if k is None:
            return False
        i = g.fresh("i")
        lines.append(f"{i} = {k} % {n}" if source == "mod" else f"{i} = np.clip({k}, 0, {n - 1})")
    two_d = r.random() < 0.3
    values = g.rng.standard_normal((n, 3) if two_d else n).round(3)
    table = g.const("TABLE", values, g.fdt if r.random() < 0.8 else "int64")
    spelling = r.choice(["index", "index", "take", "index_row"] if two_d else ["index", "index", "take"])
    expr = {"index": f"{table}[{i}]", "take": f"np.take({table}, {i}, axis=0)", "index_row": f"{table}[{i}, :]"}[spelling]
    lines.append(f"{name} = {expr}")
    g.constructs.add("lookup_" + spelling if spelling != "take" else "lookup_take")
    return g.run(lines, name, construct="lookup")


def _quat(g):
    """Quaternion normalisation and rotation of a vector (w, x, y, z)."""
    r = g.rnd
    q = next((lf for lf in g.leaves if lf.domain == "quat"), None)
    if q is None:
        return False
    qn = g.fresh("q")
    local = q.path[0] if len(q.path) == 1 else "quat"
    g.counter += 1
    rot = f"_quat_rotate{g.counter}"
    use_cross = r.random() < 0.5
    if use_cross:
        header = (f"def {rot}(q, v):\n    w, xyz = q[..., :1], q[..., 1:]\n    t = 2.0 * np.cross(xyz, v)\n"
                  f"    return v + w * t + np.cross(xyz, t)")
    else:
        header = (f"def {rot}(q, v):\n    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]\n"
                  f"    r = np.stack([\n        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),\n"
                  f"        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),\n"
                  f"        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),\n"
                  f"    ], axis=-2)\n    return (r @ v[..., None])[..., 0]")
    lines = [f"{qn} = {local} / np.linalg.norm({local}, axis=-1, keepdims=True)"]
    if r.random() < 0.5:
        lines.append(f"{qn} = np.where({qn}[..., :1] < 0, -{qn}, {qn})")
    vec = g.fresh("vec")
    grav = g.stat("GRAVITY", [0.0, 0.0, -1.0])
    conj = f"{qn} * np.array([1.0, -1.0, -1.0, -1.0], dtype=np.{g.fdt})"
    lines.append(f"{vec} = {rot}({conj}, np.broadcast_to({grav}, {qn}[..., 1:].shape))")
    g.constructs.add("quat_cross" if use_cross else "quat_matrix")
    return g.run(lines, vec, construct="quaternion", header=[header])


def _history(g):
    h = next((lf for lf in g.leaves if lf.path[-1] in ("hist", "observation.history")), None)
    x = g.pick("float", min_ndim=1)
    if h is None or x is None:
        return False
    local = "hist" if len(h.path) == 1 else "history"
    hv, xv = g.value(local), g.value(x)
    if xv.shape != hv.shape[1:]:
        return False
    r = g.rnd
    name = g.fresh("hs")
    style = r.choice(["concat", "roll", "stack", "diff"])
    if style == "concat":
        lines = [f"{name} = np.concatenate([{local}[1:], {x}[None]], axis=0)"]
    elif style == "roll":
        lines = [f"{name} = np.roll({local}, -1, axis=0)", f"{name}[-1] = {x}"]
    elif style == "stack":
        lines = [f"{name} = np.stack([{local}[-1], {x}, {x} - {local}[-1]], axis=0).reshape(-1)"]
        g.constructs.add("method_reshape")
    else:
        lines = [f"{name} = np.diff(np.concatenate([{local}, {x}[None]]), axis=0).mean(axis=0)"]
    return g.run(lines, name, construct="history")


def _image(g):
    img = next((lf for lf in g.leaves if lf.domain == "image"), None)
    if img is None:
        return False
    local = "img" if len(img.path) == 1 else "image"
    r = g.rnd
    name = g.fresh("im")
    mean = g.stat("IMG_MEAN", [0.485, 0.456, 0.406])
    std = g.stat("IMG_STD", [0.229, 0.224, 0.225])
    lines = [f"{name} = {local}.astype(np.{g.fdt}) / 255.0" if r.random() < 0.5
             else f"{name} = np.asarray({local}, dtype=np.{g.fdt}) * (1.0 / 255)"]
    for _ in range(r.randint(1, 3)):
        lines.append(r.choice([f"{name} = ({name} - {mean}) / {std}", f"{name} = {name}[::2, ::2]",
                               f"{name} = {name}.mean(axis=-1, keepdims=True)", f"{name} = np.flip({name}, axis=1)"]))
    if r.random() < 0.6:
        lines.append(f"{name} = {name}.transpose(2, 0, 1)")
    return g.run(lines, name, construct="image")


def _masking(g):
    r = g.rnd
    x = g.pick("float")
    if x is None:
        return False
    name = g.fresh("m")
    lines = r.choice([
        [f"{name} = np.where(np.isfinite({x}), {x}, 0.0)"],
        [f"{name} = np.nan_to_num({x}, nan=0.0, posinf=10.0, neginf=-10.0)"],
        [f"{name} = np.where({x} > 0, {x}, 0.1 * {x})"],
        [f"valid = np.abs({x}) < 3.0", f"{name} = ({x} * valid).sum(axis=-1) / np.maximum(valid.sum(axis=-1), 1)"],
        [f"{name} = np.isnan({x}).any()" if r.random() < 0.5 else f"{name} = np.count_nonzero({x} > 0)"],
    ])
    return g.run(lines, name, construct="mask")


def _ints(g):
    k = g.pick("int")
    if k is None:
        return False
    name = g.fresh("j")
    expr = g.rnd.choice([f"{k} // 3", f"{k} % 4", f"np.abs({k})", f"{k} * 2 - 1", f"np.sign({k})",
                         f"{k}.astype(np.{g.fdt}) / 10.0", f"{k}.clip(-5, 5)", f"np.maximum({k}, 0)",
                         f"np.floor_divide({k}, -3)", f"({k} + 1) ** 2", f"{k} >> 1"])
    return g.run([f"{name} = {expr}"], name, construct="int_math")


def _arith(g):
    r = g.rnd
    a = g.pick("float")
    if a is None:
        return False
    b = g.pick("float", recent=False)
    name = g.fresh("e")
    expr = r.choice([f"{a} * 0.5 + {b}", f"np.exp(-np.square({a}))", f"np.sqrt(np.abs({a}) + 1.0)",
                     f"np.maximum({a}, {b})", f"({a} + np.pi) % (2 * np.pi) - np.pi", f"np.sin({a}) * np.cos({b})",
                     f"{a} * np.float32(0.25)", f"np.deg2rad({a})", f"np.log1p(np.abs({a}))",
                     f"np.hypot({a}, {b})", f"{a} - {b}.mean()", f"np.arctan2({a}, np.abs({b}) + 1.0)"])
    multiline = r.random() < 0.25
    if multiline:
        head, op, tail = expr.partition(" * ") if " * " in expr else expr.partition(" - ")
        if op:
            g.constructs.add("multiline")
            return g.run([f"{name} = (", f"    {head}", f"    {op.strip()} {tail}", ")"], name, construct="arith")
    return g.run([f"{name} = {expr}"], name, construct="arith")


# Issue 17's holes, each planted where a program of any style may have it: C code in another
# library filling a buffer (scipy.ndimage) or returning arrays leapp never recorded (the buffer
# protocol), state written on an object that outlives the call, a size that came from data read
# into Python, and a loop over a data-dependent number of elements. Guards that hold whatever the
# mechanism must refuse each, naming its line.
_HOLES = ("c_filter", "buffer", "state", "size", "size_loop")


def _untraceable(g):
    """Deliberately untraceable: leapp must refuse it naming this line."""
    x = g.pick("float")
    if x is None:
        return False
    r = g.rnd
    name = g.fresh("u")
    kind = r.choice(["if", "float", "tolist", "item", *_HOLES])
    header: tuple = ()
    named = 0  # the line of ``lines`` leapp must name
    if kind == "if":
        # a loop on data (an `if` on data with pure branches is converted to a select, exactly)
        lines = [f"{name} = {x} * 1.0", f"while {name}.mean() > 0:", f"    {name} = {name} - 1.0"]
        named = 1
    elif kind == "float":
        lines = [f"{name} = {x} / (float(np.abs({x}).max()) + 1.0)"]
    elif kind == "tolist":
        lines = [f"{name} = np.array(np.ravel({x}).tolist())"]
    elif kind == "item":
        lines = [f"{name} = {x} * np.ravel({x})[0].item()"] if np.size(g.value(x)) else None
    elif kind == "c_filter":
        if not np.ndim(g.value(x)):
            return False
        header = ("import scipy.ndimage",)
        call = r.choice(["gaussian_filter1d({x}, 1.5)", "uniform_filter1d({x}, 3)",
                         "median_filter({x}, size=2)"]).format(x=f"{x} * 1.0")
        lines = [f"{name} = scipy.ndimage.{call}"]
    elif kind == "buffer":
        lines = [f"{name} = np.array(memoryview(np.ascontiguousarray({x}))) * 2.0"]
    elif kind == "state":
        header = ("class _Last:\n    value = None\n\n\nLAST = _Last()",)
        lines = [f"{name} = {x} * 2.0", f"LAST.value = {name}"]
        named = 1
    elif kind == "size":
        lines = [f"{name} = {x} / (len(np.ravel({x})[np.ravel({x}) > 0]) + 1)"]
    else:
        lines = [f"{name} = {x} * 1.0", f"for _ in np.flatnonzero(np.ravel({x}) > 0):",
                 f"    {name} = {name} + 1.0"]
        named = 1
    if not lines:
        return False
    at = len(g.body)
    if not g.run(lines, name, construct="untraceable_" + kind, header=header):
        return False
    g.refuse_line = at + named  # an index into the body, turned into a file line when rendering
    g.refuse_first = at
    return True


STATEMENTS = [(_chain, 5), (_normalise, 3), (_standardise, 1), (_clip, 2), (_inplace, 3), (_helper, 2),
              (_closure, 1), (_lookup, 2), (_quat, 2), (_history, 2), (_image, 2), (_masking, 2), (_ints, 2),
              (_arith, 3)]


# --- branches on data (issue 19) ----------------------------------------------------------------
#
# About one program in four gets one or two branches on a 0-d traced value, in whatever style it is
# written: an `if`/`elif`/`else` assigning a value (or writing into the function's own copy), a
# conditional expression, an early `return` of a safe default, a near-zero guard before a division,
# a clamp of a 0-d value, and a branch inside a helper (a module function, or a method in the class
# style). Each arm gives the shape and dtype of the others (checked on the sample); thresholds lie
# between the values the check's own inputs give (``_Gen.alts``), so that the judge runs both arms.
# A clamp to a Python float, which leapp refuses by design (a select needs one dtype: "write
# np.float32(1.0) rather than 1.0", docs/control-flow.md), is planted now and then as a hole whose
# refusal must name the `if`.

BRANCH_RATE = 0.25
N_FRESH = 3  # ``check``'s fresh inputs beside the traced sample
_EARLY = "__early_return__"


def _mirror_inputs(g):
    """The check's inputs (``_check`` draws them from ``seed + 1``), run through the body so far."""
    rng = np.random.default_rng(g.seed + 1)
    shape = types.SimpleNamespace(params=g.params, leaves=g.leaves)
    for _ in range(1 + N_FRESH):
        sc = {"np": np}
        if g.style == "class":
            sc["self"] = g.self_ns
        sc.update(zip(g.params, arguments(shape, rng), strict=True))
        sc.update({name: g.scope[name] for name, _ in g.stats if name in g.scope})
        g.alts.append(sc)
        g.returned.append(False)
    g.mirror(g.body)


def _with_rngs(g, rnd, rng, fn):
    saved = g.rnd, g.rng
    g.rnd, g.rng = rnd, rng
    try:
        return fn(g)
    finally:
        g.rnd, g.rng = saved


def _default(value):
    """A safe default of ``value``'s type, dtype and shape: what an early return hands back."""
    dt = np.asarray(value).dtype
    spelled = "bool_" if dt == np.bool_ else dt.name
    if isinstance(value, np.generic):
        return f"np.{spelled}({'False' if dt == np.bool_ else 0})"
    return f"np.zeros({value.shape!r}, dtype=np.{spelled})"


def _reaching(g):
    """The check's inputs that reach this point of the body in NumPy."""
    return [(k, sc) for k, sc in enumerate(g.alts) if sc is not None and not g.returned[k]]


def _evaluate(g, expr, bind=None):
    """``expr`` on each input reaching here: [(k, value)], ``bind`` adding names (a helper's ``v``)."""
    out = []
    for k, sc in _reaching(g):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                env = sc if bind is None else {"np": np, **{n: eval(e, sc) for n, e in bind.items()}}  # noqa: S307
                out.append((k, eval(expr, env)))  # noqa: S307 - generated here
        except Exception:
            out.append((k, None))
    return out


def _threshold(g, values):
    """A constant a robotics author would write, between the traced sample's value and another
    input's (the traced sample on one side, some fresh input on the other), else near the sample's."""
    r = g.rnd
    got = {k: float(v) for k, v in values if v is not None and np.ndim(v) == 0 and np.isfinite(float(v))}
    xs = sorted(set(got.values()))
    gaps = [(a, b) for a, b in zip(xs, xs[1:], strict=False)]
    if 0 in got:
        near = [(a, b) for a, b in gaps if got[0] in (a, b)]
        gaps = near or gaps
    r.shuffle(gaps)
    for a, b in gaps:
        margin = 4e-3 * max(1.0, abs(a), abs(b))  # far from both: no ulp, float16's included, decides it
        for digits in (0, 1, 2, 3):
            t = round((a + b) / 2, digits)
            if a + margin < t < b - margin:
                return t
    base = got.get(0, next(iter(got.values()), 0.5))
    return round(base + r.choice([-0.5, 0.5, 1.0]), 1)


def _ref(g, name):
    """How a test reads ``name``: the local, or in the dict style now and then the input itself."""
    key = g.dict_keys.get(name)
    if key is not None and g.rnd.random() < 0.4:
        return f"obs[{key!r}]"
    return name


def _operand(g, name, var=None):
    """A 0-d value of ``name`` that a test compares with a constant: a reduction, an element, a norm."""
    r = g.rnd
    v = g.value(name)
    ref = var or _ref(g, name)
    if np.size(v) == 0:
        return None
    if np.ndim(v) == 0:
        return ref
    opts = [f"{ref}.mean()", f"np.abs({ref}).max()", f"{ref}.max()", f"{ref}.min()", f"{ref}.sum()",
            f"{ref}[{', '.join(['0'] * np.ndim(v))}]", f"{ref}[..., -1].mean()"]
    if g.kinds.get(name) == "float":
        opts += [f"np.linalg.norm({ref})", f"np.linalg.norm({ref})"]
    return r.choice(opts)


def _compare(g, name, var=None, bind=None):
    """``<operand> <op> <constant>`` on ``name``, or None."""
    operand = _operand(g, name, var)
    if operand is None:
        return None
    t = _threshold(g, _evaluate(g, operand, bind))
    return f"{operand} {g.rnd.choice(['>', '<', '>=', '<='])} {t!r}"


def _test(g, name):
    """A 0-d test on traced data: a comparison, `and`/`or`/`not`, a chain, a finiteness check."""
    r = g.rnd
    kind = g.kinds.get(name)
    if kind == "bool":
        ref = _ref(g, name)
        return r.choice([f"{ref}.any()", f"not {ref}.any()", f"{ref}.all()", f"not {ref}.all()"])
    form = r.choice(["cmp"] * 6 + ["and", "or", "not", "chain", "finite"])
    first = _compare(g, name)
    if first is None:
        return None
    if form in ("and", "or"):
        other = g.pick(r.choice(["float", "float", "int"]), recent=False) or name
        second = _compare(g, other)
        return f"{first} {form} {second}" if second else first
    if form == "not":
        return f"not {first}"
    if form == "chain" and np.size(g.value(name)):
        operand = _operand(g, name)
        values = _evaluate(g, operand)
        lo = _threshold(g, values)
        rest = [(k, v) for k, v in values if v is not None and np.isfinite(float(v)) and float(v) > lo]
        hi = _threshold(g, rest) if len(rest) >= 2 else lo + 1.0
        if hi > lo:
            return f"{lo!r} < {operand} < {hi!r}"
    if form == "finite" and kind == "float" and np.ndim(g.value(name)):
        ref = _ref(g, name)
        return r.choice([f"not np.isfinite({ref}).all()", f"np.isnan({ref}).any()",
                         f"np.isfinite({ref}).all() and {first}"])
    return first


def _sides(g, test, bind=None):
    return tuple(sorted({bool(v) for _, v in _evaluate(g, test, bind) if v is not None}))


def _valid_test(g, test):
    """The test is a 0-d truth value on the sample (NumPy refuses a larger array's)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = eval(test, g.scope)  # noqa: S307 - generated here
        return isinstance(value, bool | np.bool_)
    except Exception:
        return False


def _arms(g, name):
    """Expressions of ``name`` giving its shape and dtype, for the arms of a branch."""
    v = g.value(name)
    if g.kinds[name] == "float":
        opts = [f"{name} * 0.5", f"-{name}", f"np.clip({name}, -1.0, 1.0)", f"{name} - 1.0",
                f"np.zeros_like({name})", name, f"np.abs({name})", f"{name} / 2.0", f"np.tanh({name})",
                f"{name} * 2.0 + 0.1", f"np.where({name} > 0, {name}, 0.0)", f"{name}.clip(0.0, None)"]
    else:
        opts = [f"{name} * 2", f"-{name}", f"np.zeros_like({name})", f"{name} // 2", f"np.clip({name}, -3, 3)",
                name, f"{name} + 1"]
    twins = [n for n, k in g.kinds.items() if n != name and k == g.kinds[name]
             and np.shape(g.value(n)) == np.shape(v) and np.asarray(g.value(n)).dtype == np.asarray(v).dtype]
    opts += twins
    out = []
    for e in opts:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                a = eval(e, g.scope)  # noqa: S307 - generated here
        except Exception:
            continue
        if np.shape(a) == np.shape(v) and np.asarray(a).dtype == np.asarray(v).dtype:
            out.append(e)
    return out


def _target(g, min_ndim=0, kinds=("float", "float", "float", "int")):
    kind = g.rnd.choice(kinds)
    name = g.pick(kind, min_ndim=min_ndim)
    if name is None or np.size(g.value(name)) == 0 or np.asarray(g.value(name)).dtype.kind not in "iuf":
        return None
    return name


def _site(g, kind, test, bind=None):
    g.sites.append((kind, _sides(g, test, bind)))
    g.constructs.add(kind)


def _branch_if(g):
    """``if``/``elif``/``else`` choosing a value, a default then an ``if``, or a write into a copy."""
    r = g.rnd
    name = _target(g)
    if name is None:
        return False
    arms = _arms(g, name)
    test = _test(g, r.choice([name, name, g.pick("float", recent=False) or name, g.pick("bool") or name]))
    if len(arms) < 2 or test is None or not _valid_test(g, test):
        return False
    y = g.fresh("b")
    a, b, c = (r.sample(arms, 3) if len(arms) >= 3 else arms + arms[:1])
    form = r.choice(["else", "else", "elif", "default", "rebind", "write"])
    second = None
    if form == "elif":
        second = _test(g, name)
        if second is None or not _valid_test(g, second):
            form = "else"
    if form == "else":
        lines = [f"if {test}:", f"    {y} = {a}", "else:", f"    {y} = {b}"]
    elif form == "elif":
        lines = [f"if {test}:", f"    {y} = {a}", f"elif {second}:", f"    {y} = {b}", "else:", f"    {y} = {c}"]
    elif form == "default":
        lines = [f"{y} = {b}", f"if {test}:", f"    {y} = {a}"]
    elif form == "rebind" and name not in g.params:
        y = name
        lines = [f"if {test}:", f"    {name} = {a}"]
    else:
        v = g.value(name)
        zero = "0.0" if g.kinds[name] == "float" else "0"
        write = r.choice(([f"{y}[..., 0] = {zero}", f"{y}[{y} < 0] = {zero}"] if np.ndim(v) else [])
                         + ([f"{y} *= 0.5"] if g.kinds[name] == "float" else [f"{y} += 1"]))
        lines = [f"{y} = {name}.copy()", f"if {test}:", f"    {write}"]
        form = "write"
    sides = _sides(g, test)
    if form == "elif":  # the `elif`'s own test, on the inputs that reach it
        reach = {k for k, v in _evaluate(g, test) if v is not None and not v}
        elif_sides = tuple(sorted({bool(v) for k, v in _evaluate(g, second) if k in reach and v is not None}))
    if not g.run(lines, y):
        return False
    g.sites.append(("branch_if", sides))
    if form == "elif":
        g.sites.append(("branch_if", elif_sides))
    g.constructs.update({"branch_if", "branch_" + form})
    return True


def _branch_ifexp(g):
    """A conditional expression choosing between two arrays of one shape and dtype."""
    r = g.rnd
    name = _target(g)
    if name is None:
        return False
    arms = _arms(g, name)
    test = _test(g, name)
    if len(arms) < 2 or test is None or not _valid_test(g, test):
        return False
    a, b = r.sample(arms, 2)
    y = g.fresh("b")
    sides = _sides(g, test)
    if not g.run([f"{y} = {a} if {test} else {b}"], y):
        return False
    g.sites.append(("branch_ifexp", sides))
    g.constructs.add("branch_ifexp")
    return True


def _branch_early(g):
    """``if <test>: return <safe default>`` at the top level of the body (the values are filled in once
    the program's return is known: zeros of each output's type, dtype and shape)."""
    r = g.rnd
    if g.early is not None:
        return False
    name = g.pick("float") if r.random() < 0.8 else (g.pick("int") or g.pick("float"))
    if name is None or np.size(g.value(name)) == 0:
        return False
    test = _test(g, name)
    if r.random() < 0.2 and g.kinds.get(name) == "float" and np.ndim(g.value(name)):
        test = f"not np.isfinite({_ref(g, name)}).all()"
    if test is None or not _valid_test(g, test):
        return False
    values = _evaluate(g, test)
    g.sites.append(("branch_early", tuple(sorted({bool(v) for _, v in values if v is not None}))))
    g.early = len(g.body) + 1
    g.body += [f"if {test}:", f"    {_EARLY}"]
    for k, v in values:
        if v is None:
            g.alts[k] = None
        elif v:
            g.returned[k] = True
    g.constructs.add("branch_early")
    return True


def _branch_guard(g):
    """A near-zero guard before a division, or a speed limit: ``n = np.linalg.norm(v)``, ``if n > ...``."""
    r = g.rnd
    name = _target(g, min_ndim=1, kinds=("float",))
    if name is None:
        return False
    n = g.fresh("norm")
    u = g.fresh("unit")
    form = r.choice(["alias", "else", "rebind", "limit"])
    head = [f"{n} = np.linalg.norm({name})"]
    if not g.run(head, None):
        return False
    if np.result_type(g.value(name), g.value(n)) != np.asarray(g.value(name)).dtype:
        return False  # the arms would differ in dtype (refused by design)
    eps = r.choice(["1e-6", "1e-6", "1e-8", "1e-3"])
    test = f"{n} > {eps}"
    if form == "alias":
        lines = [f"{u} = {name}", f"if {test}:", f"    {u} = {name} / {n}"]
    elif form == "else":
        lines = [f"if {test}:", f"    {u} = {name} / {n}", "else:", f"    {u} = np.zeros_like({name})"]
    elif form == "rebind" and name not in g.params:
        u = name
        lines = [f"if {test}:", f"    {name} = {name} / {n}"]
    else:
        limit = abs(_threshold(g, _evaluate(g, n))) or 1.0
        test = f"{n} > {limit!r}"
        lines = [f"{u} = {name}", f"if {test}:", f"    {u} = {name} * ({limit!r} / {n})"]
        form = "limit"
    sides = _sides(g, test)
    if not g.run(lines, u):
        return False
    g.sites.append(("branch_guard", sides))
    g.constructs.update({"branch_guard", "branch_guard_" + form})
    return True


def _branch_clamp(g):
    """``s = <0-d reduction>``, ``if s > HI: s = HI`` (a limit of the reduction's dtype: a literal or a
    stored statistic), then ``s`` scales a value. Now and then ``HI`` is a Python float: refused by design,
    planted as a hole the refusal must name (at the `if`)."""
    r = g.rnd
    name = _target(g, min_ndim=1, kinds=("float",))
    if name is None:
        return False
    s = g.fresh("s")
    reduce = r.choice([f"np.abs({name}).max()", f"{name}.mean()", f"np.linalg.norm({name})", f"{name}.max()"])
    if not g.run([f"{s} = {reduce}"], s):
        return False
    dt = np.asarray(g.value(s)).dtype.name
    op = r.choice([">", "<"])
    limit = _threshold(g, _evaluate(g, s))
    hole = g.refuse_line is None and g.early is None and r.random() < 0.12
    if hole:
        spelled = repr(float(limit))
    elif r.random() < 0.5:
        spelled = f"np.{dt}({limit!r})"
    else:
        spelled = g.stat("S_MAX" if op == ">" else "S_MIN", limit, dt)
    test = f"{s} {op} {spelled}"
    y = g.fresh("g")
    use = r.choice([f"{name} * {s}", f"{name} - {s}", f"{name} / ({s} + 1.0)"])
    sides = _sides(g, test)
    at = len(g.body)
    if not g.run([f"if {test}:", f"    {s} = {spelled}", f"{y} = {use}"], y):
        return False
    g.sites.append(("branch_clamp", sides))
    g.constructs.add("branch_clamp")
    if hole:
        g.constructs.add("untraceable_branch_pyfloat")
        g.refuse_line = g.refuse_first = at
    return True


_BRANCH_HELPERS = {
    "limit": ("def {f}({self}v, max_norm={t}):\n    n = np.linalg.norm(v)\n    if n > max_norm:\n"
              "        v = v * (max_norm / n)\n    return v", "np.linalg.norm(v)"),
    "deadband": ("def {f}({self}v, width={t}):\n    if np.abs(v).max() < width:\n        return np.zeros_like(v)\n"
                 "    return v", "np.abs(v).max()"),
    "safe_unit": ("def {f}({self}v, eps=1e-6):\n    n = np.linalg.norm(v)\n    if n < eps:\n"
                  "        return np.zeros_like(v)\n    return v / n", None),
    "gate": ("def {f}({self}v, threshold={t}):\n    return v if v.mean() > threshold else v * 0.5", "v.mean()"),
    "flip": ("def {f}({self}v):\n    if v.reshape(-1)[0] < {t}:\n        v = -v\n    return v", "v.reshape(-1)[0]"),
    "gain": ("def {f}({self}v):\n    m = np.abs(v).mean()\n    if m > {t}:\n        out = v * 0.5\n"
             "    elif m > {t2}:\n        out = v\n    else:\n        out = v * 2.0\n    return out", "np.abs(v).mean()"),
}


def _branch_helper(g):
    """A helper with a branch on data inside, called from the traced function: a module function (the
    library-style helper), or in the class style now and then a method."""
    r = g.rnd
    name = _target(g, min_ndim=1, kinds=("float",))
    if name is None:
        return False
    kind = r.choice(sorted(_BRANCH_HELPERS))
    text, operand = _BRANCH_HELPERS[kind]
    bind = {"v": name}
    t = t2 = 1e-6
    if operand is not None:
        values = _evaluate(g, operand, bind)
        t = _threshold(g, values)
        if kind == "gain":
            below = [(k, v) for k, v in values if v is not None and np.isfinite(float(v)) and float(v) < t]
            t2 = _threshold(g, below) if len(below) >= 2 else t - 0.5
            if t2 >= t:
                t2 = t - 0.5
    g.counter += 1
    fname = f"_{kind}{g.counter}"
    method = g.style == "class" and r.random() < 0.7
    src = text.format(f=fname, self="self, " if method else "", t=repr(t), t2=repr(t2))
    test = {"limit": f"np.linalg.norm(v) > {t!r}", "deadband": f"np.abs(v).max() < {t!r}",
            "safe_unit": "np.linalg.norm(v) < 1e-6", "gate": f"v.mean() > {t!r}",
            "flip": f"v.reshape(-1)[0] < {t!r}", "gain": f"np.abs(v).mean() > {t!r}"}[kind]
    sides = _sides(g, test, bind)
    y = g.fresh("hb")
    if method:
        ns = {"np": np}
        try:
            exec(compile(src, "<gen>", "exec"), ns)  # noqa: S102 - generated here
        except Exception:
            return False
        setattr(g.self_ns, fname, types.MethodType(ns[fname], g.self_ns))
        if not g.run([f"{y} = self.{fname}({name})"], y):
            delattr(g.self_ns, fname)
            return False
        g.methods.append(src)
        g.constructs.add("branch_method")
    elif not g.run([f"{y} = {fname}({name})"], y, header=[src]):
        return False
    if np.shape(g.value(y)) != np.shape(g.value(name)):
        return False
    g.sites.append(("branch_helper", sides))
    g.constructs.update({"branch_helper", "branch_helper_" + kind})
    return True


BRANCHES = [(_branch_if, 3), (_branch_ifexp, 2), (_branch_early, 2), (_branch_guard, 2), (_branch_clamp, 2),
            (_branch_helper, 3)]


def _branch(g):
    """One branch on data (a few tries): False when none fits the program so far."""
    funcs, weights = zip(*BRANCHES, strict=True)
    for _ in range(4):
        if g.rnd.choices(funcs, weights)[0](g):
            if g.style == "dict" or "closure_helper" in g.constructs:
                g.constructs.add("branch_untyped")  # counted apart: the static pass cannot type them
            return True
    return False


# --- the whole program ------------------------------------------------------------------------


def _declare_inputs(g):
    r = g.rnd
    d = r.randint(2, 7)
    batch = () if r.random() < 0.4 else (r.randint(1, 3),)
    dirty = r.random() < 0.25
    want = {"state": True, "velocity": r.random() < 0.5, "quat": r.random() < 0.35, "index": r.random() < 0.3,
            "ints": r.random() < 0.3, "image": r.random() < 0.2, "hist": r.random() < 0.25}
    dict_style = g.style == "dict"
    names = {"state": ("x", "observation.state"), "velocity": ("v", "observation.velocity"),
             "quat": ("q", "observation.quat"), "index": ("idx", "task.index"), "ints": ("k", "observation.counts"),
             "image": ("img", "observation.images.top"), "hist": ("hist", "observation.history")}
    locals_ = {"state": "state", "velocity": "velocity", "quat": "quat", "index": "task", "ints": "counts",
               "image": "image", "hist": "history"}
    specs = {"state": (batch + (d,), g.fdt, "dirty" if dirty else "float"),
             "velocity": (batch + (d,), g.fdt, "float"),
             "quat": (batch + (4,), g.fdt, "quat"),
             "index": ((r.randint(1, 4),), r.choice(["int64", "int32"]), f"index:{r.randint(3, 6)}"),
             "ints": (batch + (d,), r.choice(["int64", "int32", "int16", "int8"]), "int"),
             "image": ((4, 6, 3), "uint8", "image"),
             "hist": ((r.randint(2, 4),) + batch + (d,), g.fdt, "float")}
    if dict_style:
        g.params = ["obs"]
        for key, on in want.items():
            if on:
                shape, dt, dom = specs[key]
                g.add_input("obs", names[key][1], shape, dt, dom, locals_[key])
        return
    for key, on in want.items():
        if on:
            shape, dt, dom = specs[key]
            g.params.append(names[key][0])
            g.add_input(names[key][0], None, shape, dt, dom, None)


def _sanitise_dirty(g):
    dirty = [lf for lf in g.leaves if lf.domain == "dirty"]
    for lf in dirty:
        local = lf.path[0] if len(lf.path) == 1 else "state"
        if g.rnd.random() < 0.6:  # otherwise NaN and inf flow through the whole program
            line = g.rnd.choice([f"{local} = np.nan_to_num({local}, nan=0.0, posinf=5.0, neginf=-5.0)",
                                 f"{local} = np.where(np.isfinite({local}), {local}, 0.0)"])
            g.run([line], local, construct="sanitise")
        else:
            g.constructs.add("nan_inputs")


def _returns(g):
    r = g.rnd
    made = [n for n in g.kinds if n not in g.params and n not in ("state", "velocity", "quat", "task", "counts",
                                                                     "image", "history", "valid")]
    if not made:
        return None
    outs = [made[-1]] + r.sample(made[:-1], min(len(made) - 1, r.randint(0, 2)))
    as_dict = g.style == "dict" or r.random() < 0.2
    return _return_text(outs, as_dict), outs, as_dict


def _return_text(values, as_dict):
    if as_dict:
        keys = ["action", "observation.state", "observation.extra", "policy.aux"]
        items = ", ".join(f"{keys[i]!r}: {o}" for i, o in enumerate(values))
        return f"return {{{items}}}"
    if len(values) == 1:
        return f"return {values[0]}"
    return "return " + ", ".join(values)


def generate(seed, *, untraceable_rate=0.04, branch_rate=BRANCH_RATE):
    """One program, deterministic in ``seed``."""
    rnd = random.Random(seed)
    g = _Gen(seed, rnd)
    if g.style == "class":
        g.scope["self"] = g.self_ns
    _declare_inputs(g)
    _sanitise_dirty(g)
    funcs, weights = zip(*STATEMENTS, strict=True)
    target = rnd.randint(2, 7)
    # branches on data, drawn from their own streams: a program without one is the program it was
    brnd = random.Random(f"everyday-branch-{seed}")
    slots = sorted(brnd.randrange(target + 1) for _ in range(brnd.choice((1, 1, 2)))) \
        if brnd.random() < branch_rate else []
    if slots:
        _mirror_inputs(g)
        brng = np.random.default_rng([seed, 17])
    made = 0
    for _ in range(target * 4):
        while slots and slots[0] <= made:
            slots.pop(0)
            _with_rngs(g, brnd, brng, _branch)
        if made >= target:
            break
        if rnd.choices(funcs, weights)[0](g):
            made += 1
    for _ in slots:
        _with_rngs(g, brnd, brng, _branch)
    # a branch planted as a hole is the one refusal the program holds; after an early return leapp
    # refuses a hole at the early return's `if` (the code after it does not convert), so none there
    hole = g.refuse_line is not None or g.early is not None
    if rnd.random() < untraceable_rate and not hole:
        _untraceable(g)
    ret = _returns(g)
    if ret is None:
        return None
    text, outs, as_dict = ret
    if g.early is not None:
        g.body[g.early] = g.body[g.early].replace(_EARLY, _return_text([_default(g.scope[o]) for o in outs],
                                                                       as_dict))
    return _render(g, text)


def _render(g, ret):
    head = ["import numpy as np", "", "import leapp", ""]
    head += [line for h in g.header for line in h.splitlines()]
    body = g.body + [ret]
    params = ", ".join(g.params)
    lines = list(head) + [""]
    if g.style == "class":
        lines += ["class Preprocessor:", "    def __init__(self):"]
        lines += [f"        self.{a} = {src}" for a, src in g.stats] or ["        pass"]
        for method in g.methods:
            lines += [""] + ["    " + line for line in method.splitlines()]
        lines += ["", "    @leapp.compile", f"    def preprocess(self, {params}):"]
        indent = "        "
        entry = "PREP.preprocess"
    elif g.style == "closure":
        cells = ", ".join(a for a, _ in g.stats)
        lines += [f"def make_preprocess({cells}):", "    @leapp.compile", f"    def preprocess({params}):"]
        indent = "        "
        entry = "preprocess"
    else:
        lines += ["@leapp.compile", f"def preprocess({params}):"]
        indent = "    "
        entry = "preprocess"
    first_body = len(lines) + 1
    lines += [indent + b for b in body]
    if g.style == "class":
        lines += ["", "", "PREP = Preprocessor()"]
    elif g.style == "closure":
        lines += ["    return preprocess", "", "",
                  f"preprocess = make_preprocess({', '.join(src for _, src in g.stats)})"]
    refuse_line = None if g.refuse_line is None else first_body + g.refuse_line
    refuse_first = None if g.refuse_first is None else first_body + g.refuse_first
    floats = [np.asarray(v).dtype for k, v in g.scope.items()
              if isinstance(v, np.ndarray | np.generic) and np.asarray(v).dtype.kind == "f"]
    precision = min(floats, key=lambda d: d.itemsize).name if floats else "float64"
    return Program(g.seed, "\n".join(lines) + "\n", entry, g.params, g.leaves, set(g.constructs), refuse_line,
                   precision, refuse_first, tuple(g.sites))


# --- checking ---------------------------------------------------------------------------------

_TMP = None


def _module(program, path, decorated):
    text = program.source if decorated else "\n".join(
        line for line in program.source.splitlines() if line.strip() != "@leapp.compile") + "\n"
    file = f"{path}{'' if decorated else '_numpy'}.py"
    with open(file, "w") as f:
        f.write(text)
    name = f"leapp_everyday_{os.path.basename(file)[:-3]}"
    spec = importlib.util.spec_from_file_location(name, file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    obj = mod
    for part in program.entry.split("."):
        obj = getattr(obj, part)
    return obj


def _leaves(value, prefix=()):
    if isinstance(value, dict):
        out = []
        for k in value:
            out += _leaves(value[k], prefix + (k,))
        return out
    if isinstance(value, (tuple, list)):
        out = []
        for i, v in enumerate(value):
            out += _leaves(v, prefix + (i,))
        return out
    return [(prefix, value)]


def _copy(args):
    return [({k: np.array(v, copy=True) for k, v in a.items()} if isinstance(a, dict) else np.array(a, copy=True))
            for a in args]


def compare(got, want, precision):
    """None when ``got`` equals NumPy's ``want`` (structure, dtypes, shapes, values), else why not."""
    gl, wl = _leaves(got), _leaves(want)
    if [p for p, _ in gl] != [p for p, _ in wl]:
        return f"structure: graph {[p for p, _ in gl]}, NumPy {[p for p, _ in wl]}"
    eps = np.finfo(precision).eps
    for (path, g), (_, w) in zip(gl, wl, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        where = f"output {'/'.join(map(str, path)) or 0}: "
        if g.dtype != w.dtype:
            return f"{where}dtype: graph {g.dtype}, NumPy {w.dtype}"
        if g.shape != w.shape:
            return f"{where}shape: graph {g.shape}, NumPy {w.shape}"
        if w.dtype.kind in "fc":
            if not np.array_equal(np.isnan(g), np.isnan(w)):
                return f"{where}NaN positions differ:\n{g}\n{w}"
            finite = np.isfinite(w)
            if not np.array_equal(g[~finite], w[~finite], equal_nan=True):
                return f"{where}infinities differ:\n{g}\n{w}"
            scale = max(1.0, float(np.abs(w[finite]).max())) if finite.any() else 1.0
            tol = 64 * max(eps, np.finfo(w.dtype).eps)
            diff = np.abs(g[finite].astype(np.float64) - w[finite].astype(np.float64))
            if diff.size and float(diff.max()) > tol * scale:
                return f"{where}values differ by {float(diff.max())} (tolerance {tol * scale}):\n{g}\n{w}"
        elif not np.array_equal(g, w):
            return f"{where}values differ:\n{g}\n{w}"
    return None


def _nudged(args, direction, ulps=4):
    """``args`` with every float moved ``ulps`` ulps: all up, all down, or (``direction`` None)
    each element its own way, which also separates equal values (a constant column)."""
    rng = np.random.default_rng(0)

    def move(a):
        a = np.array(a, copy=True)
        if a.dtype.kind != "f":
            return a
        way = direction if direction is not None else \
            np.where(rng.random(a.shape) < 0.5, np.inf, -np.inf).astype(a.dtype)  # in a's dtype: its ulps
        for _ in range(ulps):
            a = np.nextafter(a, way).astype(a.dtype)
        return a

    return [{k: move(v) for k, v in a.items()} if isinstance(a, dict) else move(a) for a in args]


def _ill_conditioned(reference, args, want, precision):
    """NumPy's own result moves past the tolerance when the float inputs move by a few ulps (a
    standardisation of nearly equal values divides rounding noise by a tiny deviation): there is no
    single right answer at this precision, so a disagreement there is not a leapp bug (as in
    ``harness._ill_conditioned``; counted apart, never as exact)."""
    for direction in (np.inf, -np.inf, None):
        try:
            with np.errstate(all="ignore"):
                again = reference(*_nudged(args, direction))
        except Exception:
            return True
        if compare(again, want, precision) is not None:
            return True
    return _moves_with_rounding(reference, args, want, precision) or \
        _moves_with_accumulation(reference, args, want, precision)


# NumPy functions that are not correctly rounded: torch's results may be an ulp away from NumPy's
# (docs/limitations.md, "Transcendental functions round within a few ulps of NumPy's")
_NOT_CORRECTLY_ROUNDED = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh",
    "tanh", "arcsin", "arccos", "arctan", "arctan2", "arcsinh", "arccosh", "arctanh", "power", "cbrt",
    "hypot", "logaddexp", "logaddexp2"})


class _RoundedOtherwise:
    """``numpy`` as a program sees it, but each not-correctly-rounded function's float result moves
    by -1, 0 or +1 ulp per element (drawn): what another math library may return."""

    def __init__(self, rng, pattern):
        self._rng = rng
        self._pattern = pattern  # 0, 1: up on even elements and down on odd, or the reverse; else drawn

    def __getattr__(self, name):
        value = getattr(np, name)
        if name not in _NOT_CORRECTLY_ROUNDED:
            return value

        def jittered(*args, **kwargs):
            out = value(*args, **kwargs)
            a = np.asarray(out)
            if a.dtype.kind != "f":
                return out
            if self._pattern in (0, 1):  # neighbours move apart, both ways: ties within an ulp break
                step = np.where(np.arange(a.size).reshape(a.shape) % 2 == self._pattern, 1, -1)
            else:
                step = self._rng.integers(-1, 2, size=a.shape)
            moved = np.where(step > 0, np.nextafter(a, np.inf), np.where(step < 0, np.nextafter(a, -np.inf), a))
            return moved.astype(a.dtype) if a.ndim else a.dtype.type(moved)

        return jittered


def _moves_with_rounding(reference, args, want, precision, trials=6):
    """NumPy's own result moves past the tolerance when its transcendental functions round one ulp
    otherwise (an argmax over values tied within an ulp of a float32 tanh, a cancellation of two
    nearly equal exponentials): the graph's math library may round just so (docs/limitations.md)."""
    glob = getattr(reference, "__globals__", None)
    if glob is None or glob.get("np") is not np:
        return False
    rng = np.random.default_rng(0)
    try:
        for trial in range(trials):
            glob["np"] = _RoundedOtherwise(rng, trial)
            try:
                with np.errstate(all="ignore"):
                    again = reference(*_copy(args))
            except Exception:
                continue
            finally:
                glob["np"] = np
            if compare(again, want, precision) is not None:
                return True
    finally:
        glob["np"] = np
    return False


# Float accumulations: another library (torch's batched matmul, a sum split otherwise) adds in another
# order, so its results may be an ulp away from NumPy's, and not alike across rows NumPy computes alike
_ACCUMULATIONS = frozenset({"dot", "matmul", "vdot", "inner", "tensordot", "einsum", "sum", "mean", "std",
                            "var", "prod", "cumsum", "cumprod", "average", "nansum", "nanmean"})


def _jitter(out, rng):
    """``out`` with each float element moved -1, 0 or +1 ulp (drawn), in its dtype."""
    a = np.asarray(out)
    if a.dtype.kind != "f":
        return out
    plain = a.view(np.ndarray) if isinstance(a, np.ndarray) else a
    step = rng.integers(-1, 2, size=plain.shape)
    moved = np.where(step > 0, np.nextafter(plain, np.inf), np.where(step < 0, np.nextafter(plain, -np.inf), plain))
    return moved.astype(a.dtype) if a.ndim else a.dtype.type(moved)


class _Accumulating(np.ndarray):
    """An array whose float accumulations (``np.sum``, ``x.dot(w)``, ``a @ b``, ...) round one ulp
    otherwise per element, drawn: what another library's order of additions may return. Results
    stay of this class, so the program's later accumulations are moved too."""

    rng: np.random.Generator

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [i.view(np.ndarray) if isinstance(i, _Accumulating) else i for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Accumulating) else o for o in kwargs["out"])
        out = getattr(ufunc, method)(*plain, **kwargs)
        if ufunc.__name__ == "matmul" or method in ("reduce", "accumulate"):
            out = _jitter(out, _Accumulating.rng)
        return _wrap(out)

    def __array_function__(self, func, types, args, kwargs):
        out = super().__array_function__(func, types, args, kwargs)
        if func.__name__ in _ACCUMULATIONS:
            out = _jitter(out, _Accumulating.rng)
        return _wrap(out)

    def dot(self, b, out=None):
        return _wrap(_jitter(np.dot(self.view(np.ndarray), _plain([b])[0]), _Accumulating.rng))


def _plain(args):
    return [a.view(np.ndarray) if isinstance(a, _Accumulating) else a for a in args]


def _wrap(out):
    if isinstance(out, np.ndarray) and not isinstance(out, _Accumulating) and out.dtype.kind == "f":
        return out.view(_Accumulating)
    if isinstance(out, tuple):
        return tuple(_wrap(o) for o in out)
    return out


def _moves_with_accumulation(reference, args, want, precision, trials=4):
    """NumPy's own result moves past the tolerance when its float accumulations (sums, dot and matmul
    products) round one ulp otherwise per element: the program divides accumulation noise by a tiny
    deviation (a standardisation over rows a repeat made equal, which NumPy's dot keeps bit for bit
    equal and torch's batched matmul does not), so no graph can promise NumPy's value there."""
    def wrap(a):
        return a.view(_Accumulating) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a

    _Accumulating.rng = np.random.default_rng(0)
    for _ in range(trials):
        moved = [{k: wrap(v) for k, v in a.items()} if isinstance(a, dict) else wrap(a) for a in _copy(args)]
        try:
            with np.errstate(all="ignore"):
                again = reference(*moved)
        except Exception:
            continue
        again = _unwrap(again)
        if compare(again, want, precision) is not None:
            return True
    return False


def _unwrap(value):
    if isinstance(value, _Accumulating):
        return value.view(np.ndarray)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


# Calls whose results may differ from NumPy's in the last bits (transcendental functions, float
# accumulations in another order, float64 sqrt: docs/limitations.md). ``bits=True`` holds a program
# that calls none of them to NumPy's bits instead of a tolerance.
INEXACT = re.compile(r"\b(exp|exp2|expm1|log|log2|log10|log1p|sin|cos|tan|sinh|cosh|tanh|arcsin|arccos|arctan|"
                     r"arctan2|arcsinh|arccosh|arctanh|power|float_power|cbrt|hypot|sqrt|sum|mean|std|var|prod|"
                     r"cumsum|cumprod|average|norm|dot|matmul|inner|tensordot|einsum|logaddexp|logaddexp2)\b"
                     r"|@|\*\*")


def exact_calls_only(program) -> bool:
    """Whether every call of the program's code (past the imports and constants) is exact in IEEE arithmetic."""
    return not INEXACT.search(program.source.split("\ndef ", 1)[-1])


def compare_bits(got, want, precision):
    """``compare``, and float values must be NumPy's bits (NaN equal to NaN)."""
    why = compare(got, want, precision)
    if why is not None:
        return why
    for (path, g), (_, w) in zip(_leaves(got), _leaves(want), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        if w.dtype.kind in "fc":
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            if not same.all():
                return (f"output {'/'.join(map(str, path)) or 0}: within tolerance but not NumPy's bits "
                        f"({int((~same).sum())} element(s)) in a program whose calls are all exact")
    return None


def check(seed, *, n_fresh=3, skip=(), tmpdir=None, untraceable_rate=0.04, bits=False):
    """Generate program ``seed``, compile it with ``@leapp.compile``, compare with NumPy: an ``Outcome``.

    ``bits``: a program whose calls are all exact (``exact_calls_only``) must match NumPy bit for
    bit, with no ill-conditioning excuse; the others are judged as usual."""
    global _TMP
    program = generate(seed, untraceable_rate=untraceable_rate)
    if program is None:
        return Outcome("invalid", "no output")
    if any(c in skip for c in program.constructs):
        return Outcome("skipped", ", ".join(sorted(c for c in program.constructs if c in skip)),
                       tuple(sorted(program.constructs)))
    constructs = tuple(sorted(program.constructs))
    if tmpdir is None:
        if _TMP is None:
            _TMP = tempfile.mkdtemp(prefix="leapp_everyday_")
        tmpdir = _TMP
    path = os.path.join(tmpdir, f"prog_{seed}")
    try:
        out = _check(program, path, n_fresh, constructs, bits=bits and exact_calls_only(program))
        out.branch_sites = program.branch_sites if n_fresh == N_FRESH else ()  # (sides for these inputs)
        return out
    finally:
        for suffix in (".py", "_numpy.py"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)


def _check(program, path, n_fresh, constructs, bits=False):
    from leapp.errors import InternalError, LeappError, LeappInternalWarning

    rng = np.random.default_rng(program.seed + 1)
    samples = [arguments(program, rng) for _ in range(1 + n_fresh)]
    from leapp.errors import RoundingWarning

    warned = []  # leapp's RoundingWarnings: a float output it says departs by rounding, magnified
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        reference = _module(program, path, decorated=False)
        compiled = _module(program, path, decorated=True)
        for k, args in enumerate(samples):
            try:
                with np.errstate(all="ignore"):
                    want = reference(*_copy(args))
            except Exception:
                if k == 0:
                    return Outcome("invalid", "NumPy raises on the sample", constructs)
                continue
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", LeappInternalWarning)
                    warnings.simplefilter("always", RoundingWarning)
                    got = compiled(*_copy(args))
                warned += [w for w in caught if issubclass(w.category, RoundingWarning)]
            except InternalError as exc:
                return Outcome("false_refusal", f"InternalError: {exc}", constructs)
            except LeappError as exc:
                text = f"{type(exc).__name__}: {exc}"
                # a correct refusal names the untraceable line, and only that line
                named = {int(n) for n in re.findall(re.escape(f"{path}.py:") + r"(\d+)", str(exc))}
                if program.refuse_line is not None and program.refuse_line in named \
                        and min(named) >= program.refuse_first:
                    return Outcome("refused", text, constructs)
                return Outcome("false_refusal", text, constructs)
            except Exception as exc:  # leapp crashed on valid NumPy
                return Outcome("false_refusal", f"crash {type(exc).__name__}: {exc}", constructs)
            # a repair (a dtype, a shape) means an adapter is wrong; a self-check miss on the
            # sample is judged by the comparison below, at the program's float precision
            internal = [str(w.message) for w in caught if issubclass(w.category, LeappInternalWarning)
                        and "does not reproduce the traced sample" not in str(w.message)]
            if internal:
                return Outcome("mismatch", f"LeappInternalWarning: {internal[0]}", constructs)
            # the buffer protocol: no hook sees it, and the default check refuses the graph only where
            # it differs from NumPy (a value the program made constant, as `v[0] = 0` of a one-row
            # `v` does, is exact): judged by the values below
            if program.refuse_line is not None and "untraceable_buffer" not in program.constructs:
                return Outcome("mismatch", f"untraceable line {program.refuse_line} compiled silently", constructs)
            why = (compare_bits if bits else compare)(got, want, program.precision)
            if why is not None:
                if not bits and _ill_conditioned(reference, args, want, program.precision):
                    return Outcome("ill_conditioned", f"sample {k}: {why}", constructs)
                if warned:  # not silent: leapp named the accumulations (docs/limitations.md)
                    return Outcome("ill_conditioned", f"sample {k} ({warned[0].category.__name__}: "
                                   f"{str(warned[0].message)[:200]}): {why}", constructs)
                return Outcome("mismatch", f"sample {k}: {why}", constructs)
    return Outcome("exact", "", constructs)
