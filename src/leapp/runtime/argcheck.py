"""Argument checks and eager substitutions for table entries, applied at the call.

Keyword refusals in the table (``Entry.refuse``) cover keywords whose mere
presence changes results. Some entries need a look at argument *values*
(``np.pad``'s mode, a traced ``q`` for ``np.percentile``); those checks live
here so that the user hears about them at their own line, while tracing, not
later when the graph is built. A few entries also run a different (still
valid) NumPy computation eagerly, so that the traced values and the graph agree
(``np.argpartition`` runs as a stable argsort).
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedArgumentError
from .ir import format_loc

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def _is_traced(x):
    """Traced data (a constant made inside the traced code does not count)."""
    from .record import node_of
    from .traced import TracedNpArray

    if not isinstance(x, TracedNpArray):
        return False
    node = node_of(x)
    return node is None or node.op != "const"


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default) if kwargs else default


def _pad(args, kwargs):
    mode = _arg(args, kwargs, 2, "mode", "constant")
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        return (f"mode={mode!r} is not supported (leapp traces {', '.join(_PAD_MODES[:-1])}); "
                f"compute the padding values with array operations and np.concatenate them")
    if kwargs and kwargs.get("reflect_type", "even") != "even":
        return "reflect_type='odd' is not supported; use the default reflect_type='even'"
    if _is_traced(_arg(args, kwargs, 1, "pad_width")):
        return "pad_width depends on the data, so the output size would too; use constant widths"
    return None


def _quantile(args, kwargs):
    q = _arg(args, kwargs, 1, "q")
    if _is_traced(q):
        return "q is traced data; leapp needs constant quantiles (a Python number or a constant array)"
    method = (kwargs or {}).get("method", "linear")
    if method != "linear":
        return f"method={method!r} is not supported; only NumPy's default method='linear' is traced"
    if (kwargs or {}).get("weights") is not None:
        return "weights= is not supported"
    return None


def _interp(args, kwargs):
    if _arg(args, kwargs, 5, "period") is not None:
        return "period= is not supported; wrap x into one period with np.mod first"
    return None


def _static(*positions, why="so the output size would depend on it"):
    """Arguments that fix the output shape (or the graph's structure) must not be traced data."""

    def check(args, kwargs):
        for i, name in positions:
            if _is_traced(_arg(args, kwargs, i, name)):
                return f"{name} is traced data, {why}; use a constant"
        return None

    return check


_SPLIT = _static((1, "indices_or_sections"))


def _float16_running(args, kwargs):
    """NumPy rounds a float16 running sum/product to float16 after every step; torch's
    cumsum/cumprod accumulate in float32, so the results drift apart (by far more than
    float16's resolution where partial sums cancel)."""
    a, dtype = _arg(args, kwargs, 0, "a"), _arg(args, kwargs, 2, "dtype")
    effective = np.dtype(dtype) if dtype is not None else getattr(a, "dtype", None)
    if effective == np.float16:
        return ("float16 running sums and products round after every step in NumPy but not in "
                "torch; accumulate in float32 (dtype=np.float32) and cast the result back")
    return None


def _float16_einsum(args, kwargs):
    """NumPy's float16 einsum adds each product into the float16 output in an order its
    iterator picks from the operands' layout ("ij,jk->ik" rounds after every j); torch sums
    in float32 and rounds once: 6 float16 ulps apart on uniform data, silently."""
    subscripts = args[0] if args else None
    if not isinstance(subscripts, str):
        return None
    dtype = kwargs.get("dtype") if kwargs else None
    dtypes = [getattr(o, "dtype", None) for o in args[1:]]
    try:
        effective = np.dtype(dtype) if dtype is not None else np.result_type(*[d for d in dtypes if d is not None])
    except (TypeError, ValueError):
        return None
    if effective != np.float16:
        return None
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    letters = [c for c in inputs if c.isalpha()]
    kept = set(output) if "->" in subscripts else {c for c in letters if letters.count(c) == 1}
    if any(c not in kept for c in letters):
        return ("a float16 einsum that sums over an index rounds its float16 result after each "
                "product it adds, in an order NumPy picks from memory layout, and torch rounds once; "
                "compute in float32 (dtype=np.float32) and cast the result back")
    return None


CHECKS = {
    "numpy.einsum": _float16_einsum,
    "numpy.cumsum": _float16_running,
    "numpy.cumprod": _float16_running,
    "numpy.add.accumulate": _float16_running,
    "numpy.multiply.accumulate": _float16_running,
    "numpy.pad": _pad,
    "numpy.percentile": _quantile,
    "numpy.quantile": _quantile,
    "numpy.interp": _interp,
    "numpy.diff": _static((1, "n")),
    "numpy.repeat": _static((1, "repeats")),
    "numpy.tile": _static((1, "reps")),
    "numpy.rot90": _static((1, "k")),
    "numpy.full": _static((0, "shape")),
    "numpy.linspace": _static((2, "num")),
    "numpy.logspace": _static((2, "num")),
    "numpy.geomspace": _static((2, "num")),
    "numpy.array_split": _SPLIT,
    "numpy.split": _SPLIT,
    "numpy.hsplit": _SPLIT,
    "numpy.vsplit": _SPLIT,
    "numpy.dsplit": _SPLIT,
    "numpy.roll": _static((1, "shift"), (2, "axis"), why="which elements move where would depend on it"),
}


def _argpartition_eager(a, kth, axis=-1, kind="introselect", order=None):
    return np.argsort(a, axis=axis, kind="stable")


def _partition_eager(a, kth, axis=-1, kind="introselect", order=None):
    return np.sort(a, axis=axis, kind="stable")


def _argsort_eager(a, axis=-1, kind=None, order=None, *, stable=None):
    # NumPy's default kind is not stable, so for ties any order is NumPy's answer;
    # the graph sorts stably, and the traced values must agree with it
    return np.argsort(a, axis=axis, kind="stable", order=order)


EAGER = {
    "numpy.argsort": _argsort_eager,
    "numpy.argpartition": _argpartition_eager,
    "numpy.partition": _partition_eager,
}


def special(name) -> bool:
    """Whether ``name`` has a value check or an eager substitution here (no shortcut may skip it)."""
    return name in CHECKS or name in EAGER


def prepare(name, eager, args, kwargs, loc):
    """Refuse argument values the graph cannot reproduce; return the eager function to run."""
    check = CHECKS.get(name)
    if check is not None:
        problem = check(args, kwargs)
        if problem:
            raise UnsupportedArgumentError(f"{format_loc(loc)}: {name}(...) cannot be traced: {problem}.")
    return EAGER.get(name, eager)
