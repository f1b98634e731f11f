"""Random NumPy programs over the translation table, for differential fuzzing.

A program is data: input specs (shape, dtype) and a list of steps, each an
operation name applied to earlier values (inputs or step results) and
constants (Python scalars, NumPy scalars, small arrays). ``generate(rnd)``
builds one from any ``random.Random``-like source (hypothesis' ``st.randoms()``
in CI, a seeded ``random.Random`` in ``benchmarks/fuzz.py``); ``run`` executes
it with whatever arrays it is given, traced or not; ``fresh_inputs`` draws
inputs rich in edge values (negative integers, zeros, NaN, infinities).
Only steps NumPy itself accepts (checked on the sample while generating) are
kept, so every program is valid NumPy.
"""

from __future__ import annotations

import warnings

import numpy as np

from leapp import dispatch

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]

UNARY = ["negative", "absolute", "sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "arctan",
         "floor", "ceil", "trunc", "rint", "sign", "square", "isnan", "isinf", "isfinite", "logical_not",
         "invert", "reciprocal", "cbrt", "exp2", "log2", "deg2rad", "signbit", "positive", "fabs"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "maximum", "minimum",
          "fmax", "fmin", "hypot", "arctan2", "copysign", "logaddexp", "heaviside", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor", "power", "left_shift", "right_shift"]
OPERATORS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide", "%": "remainder",
             "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<": "less", "==": "equal", "**": "power"}
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "std", "var", "cumsum",
              "median", "ptp", "count_nonzero", "nansum", "nanmax", "nanmean"]
OTHER = ["where", "clip", "sort", "argsort", "transpose", "ravel", "flip", "concatenate", "stack", "diff",
         "nan_to_num", "isclose", "astype", "percentile", "pad", "tile", "roll", "cast", "getitem", "round"]


def _scalar(rnd):
    kind = rnd.choice(["int", "float", "bool", "np_int", "np_float", "special"])
    if kind == "int":
        return rnd.choice([0, 1, -1, 2, -3, 7, 100])
    if kind == "float":
        return rnd.choice([0.0, -0.0, 0.5, -1.5, 2.0, 1e-3, 3.25])
    if kind == "bool":
        return rnd.choice([True, False])
    if kind == "np_int":
        return getattr(np, rnd.choice(["int8", "int16", "int32", "int64", "uint8"]))(rnd.choice([0, 1, 2, 5]))
    if kind == "np_float":
        return getattr(np, rnd.choice(["float16", "float32", "float64"]))(rnd.choice([0.5, -2.0, 3.0]))
    return rnd.choice([float("nan"), float("inf"), -float("inf")])


def _shape(rnd):
    return tuple(rnd.choice([1, 2, 3, 4]) for _ in range(rnd.choice([0, 1, 1, 2, 2, 3])))


def _broadcastable(rnd, shape):
    """A shape that broadcasts with ``shape`` (a suffix, some axes set to 1)."""
    k = rnd.randint(0, len(shape))
    return tuple(1 if rnd.random() < 0.3 else s for s in shape[len(shape) - k:])


def generate(rnd, max_steps=6):
    """(input specs, steps). Steps refer to values by index: inputs first, then step results."""
    base = _shape(rnd)
    n_in = rnd.randint(1, 3)
    specs = [(base if i == 0 else _broadcastable(rnd, base), rnd.choice(DTYPES)) for i in range(n_in)]
    sample = [fresh(rnd, s, d) for s, d in specs]
    values = list(sample)
    steps = []
    for _ in range(rnd.randint(1, max_steps)):
        for _attempt in range(8):
            step = _step(rnd, values)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = apply(step, values)
            except Exception:
                continue
            if not isinstance(out, np.ndarray | np.generic) or np.asarray(out).dtype.kind not in "biuf":
                continue
            if np.asarray(out).size > 4096:
                continue
            values.append(out)
            steps.append(step)
            break
    return specs, steps


def _ref(rnd, values):
    # favour recent values so programs form chains (a DAG: any earlier value may be reused)
    n = len(values)
    return rnd.choice([n - 1, n - 1, rnd.randrange(n)])


def _operand(rnd, values):
    return ("v", _ref(rnd, values)) if rnd.random() < 0.75 else ("c", _scalar(rnd))


def _axis(rnd, values, i):
    nd = np.ndim(values[i])
    if nd == 0 or rnd.random() < 0.3:
        return None
    return rnd.randrange(-nd, nd)


def _step(rnd, values):
    group = rnd.choice(["unary", "binary", "binary", "operator", "reduce", "other"])
    if group == "unary":
        return ("ufunc", rnd.choice(UNARY), [("v", _ref(rnd, values))], {})
    if group in ("binary", "operator"):
        args = [_operand(rnd, values), _operand(rnd, values)]
        if all(a[0] == "c" for a in args):
            args[rnd.randrange(2)] = ("v", _ref(rnd, values))
        if group == "operator":
            return ("op", rnd.choice(list(OPERATORS)), args, {})
        return ("ufunc", rnd.choice(BINARY), args, {})
    i = _ref(rnd, values)
    if group == "reduce":
        name = rnd.choice(REDUCTIONS)
        kw = {"axis": _axis(rnd, values, i)}
        if name not in ("argmax", "argmin", "cumsum", "median", "count_nonzero") and rnd.random() < 0.3:
            kw["keepdims"] = True
        if name in ("std", "var") and rnd.random() < 0.3:
            kw["ddof"] = 1
        return ("func", name, [("v", i)], kw)
    name = rnd.choice(OTHER)
    x = ("v", i)
    nd = np.ndim(values[i])
    if name == "where":
        return ("func", "where", [("v", _ref(rnd, values)), _operand(rnd, values), _operand(rnd, values)], {})
    if name == "clip":
        return ("func", "clip", [x, _operand(rnd, values), _operand(rnd, values)], {})
    if name in ("sort", "argsort", "flip", "cumsum", "diff", "roll"):
        kw = {"axis": _axis(rnd, values, i)} if nd else {}
        if name == "roll":
            return ("func", "roll", [x, rnd.choice([1, -2, 3])], kw)
        if name in ("sort", "argsort", "diff") and kw.get("axis", 0) is None:
            kw = {"axis": -1}
        if name == "argsort":  # NumPy's default sort is not stable: only kind="stable" orders ties one way
            kw["kind"] = "stable"
        return ("func", name, [x], kw)
    if name in ("concatenate", "stack"):
        return ("join", name, [x, ("v", _ref(rnd, values))], {"axis": 0 if nd else None})
    if name == "astype":
        return ("astype", rnd.choice(DTYPES), [x], {})
    if name == "cast":
        return ("cast", rnd.choice(["float32", "int64", "float64", "int32"]), [x], {})
    if name == "percentile":
        return ("func", "percentile", [x, rnd.choice([0, 25, 50.0, 90, 100])], {"axis": _axis(rnd, values, i)})
    if name == "pad":
        return ("func", "pad", [x, rnd.randint(0, 2)], {"mode": rnd.choice(["constant", "edge", "reflect", "wrap"])})
    if name == "tile":
        return ("func", "tile", [x, rnd.choice([1, 2, (2, 1)])], {})
    if name == "getitem":
        return ("getitem", rnd.choice(["mask", "neg_step", "first", "ellipsis"]), [x], {})
    if name == "round":
        return ("func", "round", [x], {"decimals": rnd.choice([0, 1, -1])})
    if name in ("nan_to_num", "isclose"):
        return ("func", name, [x] + ([_operand(rnd, values)] if name == "isclose" else []), {})
    return ("func", name, [x], {})


def _get(arg, values):
    return values[arg[1]] if arg[0] == "v" else arg[1]


def apply(step, values):
    kind, name, args, kw = step
    a = [_get(x, values) for x in args]
    if kind == "ufunc":
        if name in ("signbit", "copysign") and args[-1][0] == "v":
            # IEEE 754 leaves the sign of a NaN that an operation makes unspecified (NumPy's libm
            # gives -nan for sqrt(-1) on x86, torch +nan), so programs do not observe it
            s = a[-1]
            if name == "signbit":
                return np.signbit(s) & (s == s)
            a[-1] = np.where(s != s, np.abs(s), s)
        return getattr(np, name)(*a)
    if kind == "op":
        return eval(f"p0 {name} p1", {}, {"p0": a[0], "p1": a[1]})  # noqa: S307 - fixed operator table
    if kind == "func":
        return getattr(np, name)(*a, **kw)
    if kind == "join":
        if kw["axis"] is None:
            return getattr(np, name)([np.ravel(a[0]), np.ravel(a[1])]) if name == "stack" and np.size(a[0]) == np.size(a[1]) \
                else np.concatenate([np.ravel(a[0]), np.ravel(a[1])])
        return getattr(np, name)([a[0], a[1]], axis=0)
    if kind == "astype":
        return a[0].astype(name) if isinstance(a[0], np.ndarray) else np.asarray(a[0]).astype(name)
    if kind == "cast":
        # np.float32(v) as leapp.compile runs it: a scalar type converts in C with no hook for a
        # 0-d value, so its rewriter routes the call through the dispatcher
        return dispatch.call("program.py:1:1", getattr(np, name), a[0])
    if kind == "getitem":
        x = a[0]
        if np.ndim(x) == 0:
            return x[()]
        if name == "mask":
            return x[x > 0] if x.dtype != np.bool_ else x[x]
        if name == "neg_step":
            return x[::-2]
        if name == "first":
            return x[0]
        return x[..., -1]
    raise ValueError(kind)


def outputs(n_inputs, steps):
    """Indices (into inputs + step results) of the program's outputs: the last step's value and,
    with more than one step, one earlier value."""
    last = n_inputs + len(steps) - 1
    if len(steps) > 1:
        return [last, n_inputs + len(steps) // 2]
    return [last]


def ancestors(n_inputs, steps, index):
    """Every value index ``index`` is computed from (itself included)."""
    seen, todo = set(), [index]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        if i >= n_inputs:
            todo += [a[1] for a in steps[i - n_inputs][2] if a[0] == "v"]
    return seen


def run(specs, steps, *inputs):
    """Execute the program; the result is the values at ``outputs`` (one, or a tuple of two)."""
    values = list(inputs)
    for step in steps:
        values.append(apply(step, values))
    picked = [values[i] for i in outputs(len(inputs), steps)]
    return picked[0] if len(picked) == 1 else tuple(picked)


_SPECIAL_F = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5]


def fresh(rnd, shape, dtype):
    """An input rich in edge values: negative integers, zeros, NaN and infinities."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype == np.bool_:
        flat = [rnd.random() < 0.5 for _ in range(size)]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = [0, 1, 2, 3, 5, 7, 11] + ([-1, -2, -7] if dtype.kind == "i" else [])
        flat = [rnd.choice(pool) if rnd.random() < 0.7 else rnd.randint(max(info.min, -100), min(info.max, 100))
                for _ in range(size)]
    else:
        flat = [rnd.choice(_SPECIAL_F) if rnd.random() < 0.25 else round(rnd.uniform(-6, 6), 3)
                for _ in range(size)]
    return np.array(flat, dtype=dtype).reshape(shape)
