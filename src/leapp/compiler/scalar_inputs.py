"""Scalar arguments of ``leapp.compile``: graph inputs, or constants where the trace needs their value.

Every scalar argument (a Python ``float``/``int``/``bool``/``complex``, a NumPy number) is first
traced as a 0-d graph input (``runtime/scalar_args.py``), so a new value runs the same graph, and
an exported file has an input for it. Where the trace reads the value into Python (a size, a slice
bound, ``range(n)``, ``int(n)``, formatting, a branch leapp does not convert, a call it cannot
trace), the function is traced again with that argument as a constant of its graph: those
arguments are remembered per signature (the shapes and dtypes of the arrays, the types of the
scalars), and their values join the cache key, so a new value traces a new graph as before. The
decision is made from what the trace saw, per argument: the others stay inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import tracing
from ..runtime.ir import format_loc
from ..runtime.scalar_args import Specialise
from . import samples


def _value_at(args, kwargs, path):
    value: Any = args if path[0] == "args" else kwargs
    for step in path[1:]:
        value = value[step]
    return value


def _known(cf) -> dict:
    known = cf.__dict__.get("_scalar_constants")
    if known is None:
        known = cf.__dict__["_scalar_constants"] = {}
    return known


def key(cf, args, kwargs):
    """The cache key of a call: its signature, with the values of the scalars read into Python."""
    base = samples.signature((args, kwargs))
    paths = _known(cf).get(base)
    if not paths:
        return base
    names = list(cf._signature.parameters) if cf._signature else []
    return ("specialised", base, tuple((tracing.input_name(p, names), samples.exact(_value_at(args, kwargs, p)))
                                       for p in paths))


def constants(cf, args, kwargs) -> frozenset:
    """The paths of the scalar arguments traced as constants for this call's signature."""
    return frozenset(_known(cf).get(samples.signature((args, kwargs)), ()))


def trace(cf, args, kwargs, run):
    """``run(constants)`` (one trace), again with each scalar argument whose value the trace read
    made a constant; returns (traced, {path: (what read it, where)})."""
    base = samples.signature((args, kwargs))
    known = _known(cf).setdefault(base, {})
    while True:
        try:
            return run(frozenset(known)), dict(known)
        except Specialise as exc:
            cf._probe.reset()  # the static/runtime cross-check reads the last trace's sites only
            fresh = [p for p in exc.ports if p not in known]
            if not fresh:  # the trace read a constant's value: cannot happen, but never loop
                raise RuntimeError(f"leapp.compile({cf.name}): {exc.construct} at "
                                   f"{format_loc(exc.loc)} read a scalar argument already specialised "
                                   f"(a leapp bug, please report it)") from None
            for p in sorted(fresh, key=repr):
                known[p] = (exc.construct, exc.loc)


def describe(specialised, names) -> list[str]:
    """``cf.report()`` lines: which scalar arguments were specialised, and where they were read."""
    if not specialised:
        return []
    lines = ["  scalar arguments traced as constants (one graph per value):"]
    for path, (construct, loc) in specialised.items():
        lines.append(f"    {tracing.input_name(path, names)!r}: its value is read into Python by "
                     f"{construct} at {format_loc(loc)}")
    return lines


def as_argument(original, value):
    """An input's ``value`` (a 0-d array from an export check or a loader) as the function takes
    it: a Python number as that Python type, a NumPy scalar as its type (NumPy's typing depends on
    which), an array as a copy."""
    if type(original) in (bool, int, float, complex):
        return type(original)(np.asarray(value).item())
    if isinstance(original, np.generic):
        return np.asarray(value, dtype=original.dtype)[()]
    return np.array(value, copy=True)


def fast_arrays(values):
    """The picked arguments of a repeat call as arrays: a Python number becomes its 0-d input."""
    return [v if type(v) is np.ndarray else np.asarray(v) for v in values]

