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
    """``run(constants, on_retrace)``: one ``trace_function`` call with the scalar arguments known
    to be read into Python for this signature as constants; remembers the ones it found. Returns
    (traced, {path: (what read it, where)})."""
    known = _known(cf).setdefault(samples.signature((args, kwargs)), {})
    traced = run(frozenset(known), cf._probe.reset)  # the cross-check reads the last trace's sites
    for path, why in traced.specialised.items():
        if path not in known or known[path][1] is None:
            known[path] = why
    return traced, {p: known[p] for p in traced.specialised}


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


def vary(tries, graph, seed):
    """The differential check's generated calls (``compiler/check.py``) with each scalar input
    drawn afresh too (redrawn, negated, zero, as the arrays are), so that a value the graph froze
    shows; the scalars traced as constants keep their values (they are the graph's key)."""
    rng = None  # made when a scalar input is met: a generator costs more than the walk below
    out = []
    for i, (args, kwargs) in enumerate(tries):
        mapping = {}
        for path, _name in graph.traced.input_paths:
            value = _value_at(args, kwargs, path)
            if isinstance(value, np.ndarray) or not tracing.is_scalar_input(value):
                continue
            if rng is None:
                rng = np.random.default_rng(seed)
            mapping[path] = _drawn(value, i % 3, rng)
        out.append(tracing.replace_leaves(args, kwargs, mapping) if mapping else (args, kwargs))
    return out


def _drawn(value, how, rng):
    kind = type(value)
    if isinstance(value, (bool, np.bool_)):
        return kind(rng.random() < 0.5) if how == 0 else kind(not value) if how == 1 else kind(False)
    if how == 2:
        return kind(0)
    if how == 1:
        with np.errstate(over="ignore"):
            return kind(-value) if not isinstance(value, np.unsignedinteger) else value
    if isinstance(value, (int, np.integer)):
        width = min(2 * abs(int(value)) + 3, 2**62)
        drawn = int(rng.integers(-width, width + 1))
        if isinstance(value, np.integer):
            info = np.iinfo(value.dtype)
            drawn = min(max(drawn, info.min), info.max)
        return kind(drawn)
    span = 2 * abs(complex(value)) + 1
    if not np.isfinite(span) or span > 1e300:  # a NaN or an infinity: draw around zero
        span = 2.0
    if isinstance(value, (complex, np.complexfloating)):
        return kind(complex(rng.uniform(-span, span), rng.uniform(-span, span)))
    return kind(rng.uniform(-span, span))


def fixed(specialised, m_args, m_kwargs, args, kwargs):
    """For a repeat call's fast path (``function._FastCall``): (position or keyword, value) of each
    scalar argument its graph holds as a constant, None if none, False if one is not a top-level
    argument. The fast key holds a Python number's type only, so these values are compared per call."""
    if not specialised:
        return None
    out = []
    for path in specialised:
        if len(path) != 2:
            return False
        where = (m_args[path[1]] if path[0] == "args" else m_kwargs[path[1]]).where
        value = args[where] if type(where) is int else kwargs[where]
        out.append((where, type(value), samples.exact(value)))
    return tuple(out)


def same_fixed(fixed, args, kwargs) -> bool:
    """Whether this call passes the values the fast path's graph holds as constants."""
    for where, kind, value in fixed:
        v = args[where] if type(where) is int else kwargs[where]
        if type(v) is not kind or samples.exact(v) != value:
            return False
    return True


def fast_arrays(values):
    """The picked arguments of a repeat call as arrays: a Python number becomes its 0-d input."""
    return [v if type(v) is np.ndarray else np.asarray(v) for v in values]

