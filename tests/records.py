"""Parity tests as data: one record per table entry, expanded over dtypes and shapes.

A ``Rec`` says how to call one table entry (``fn`` takes the traced operands
in order), over which dtypes and operand shapes, and how to draw inputs that
stay in the entry's domain. ``cases(records)`` expands records into pytest
parameters; ``run(case)`` draws the inputs and checks the traced graph
against NumPy with ``parity.check`` (values and dtypes, on the traced sample
and on fresh samples drawn the same way).

Operand "shapes" other than tuples name operands that are *not* traced
inputs, which NEP 50 treats differently:

- ``PY``: a Python scalar of the operand's kind (weak: ``float32 * 2.0`` stays float32);
- ``NP``: a NumPy scalar (strong: ``float32 * np.float64(2)`` is float64);
- ``Const(shape)``: a plain NumPy array frozen into the graph as a constant.

A dtype/shape combination NumPy itself rejects (no loop for bool
``subtract``, ``bitwise_and`` of floats) is dropped when the cases are
built, so records can list broad dtype sets; every record must keep at least
one case (``test_table_coverage`` checks it).
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from parity import check

F32, F64, F16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)
I32, I64, I8 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.int8)
U8, B = np.dtype(np.uint8), np.dtype(np.bool_)

FLOATS = (F32, F64)
INTS = (I32, I64)
NUMERIC = (F32, F64, I32, I64)
ALL = (F32, F64, I32, I64, B)
WIDE = (F16, F32, F64, I8, I32, I64, U8, B)  # for the few records that probe odd dtypes


class _Marker(str):
    pass


PY = _Marker("py")  # a Python scalar operand
NP = _Marker("np")  # a NumPy scalar operand


@dataclass(frozen=True)
class Const:
    """A plain (untraced) NumPy array operand of this shape."""

    shape: tuple


# Operand shapes, per arity: 0-d, empty, broadcasting pairs, scalars. The
# first ``Rec.full`` shapes of a record run with every dtype; each later shape
# runs with one dtype, rotating through them (see ``expand``).
UNARY = (((3, 4),), ((),), ((0,),), ((5,),))
BINARY = (
    ((3, 4), (4,)),
    ((3, 4), PY),
    (PY, (5,)),
    ((), ()),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((), (5,)),
    ((0,), (0,)),
    ((2, 0), (1,)),
    ((3, 4), NP),
    ((5,), Const((5,))),
)
REDUCE = (((3, 4),), ((),), ((0,),), ((6,),), ((2, 3, 4),), ((0, 3),))


@dataclass(frozen=True)
class Rec:
    """One table entry's parity test.

    ``name``: the table name covered (``also`` lists further names the same
    call covers). ``fn(*operands)``: the call. ``dtypes``: each item a dtype
    for every operand, or a tuple of per-operand dtypes. ``shapes``: tuples
    of operand shapes (see the module doc). ``rng``: an input domain, a name from
    ``DOMAINS`` or a function like ``index(n)`` (or a tuple, one per operand). ``label``: distinguishes
    several records of one name. ``full``: how many leading shapes run with
    every dtype (the rest with one each).
    """

    name: str
    fn: Callable
    shapes: tuple = UNARY
    dtypes: tuple = ALL
    rng: object = "normal"
    label: str = ""
    also: tuple = ()
    full: int = 2


def _normal(rng, shape, dt):
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind == "u":
        return rng.integers(0, 20, shape)
    if dt.kind == "i":
        return rng.integers(-20, 20, shape)
    # a sprinkle of exact halves and zeros keeps rounding and signs honest
    v = rng.standard_normal(shape) * 3
    special = rng.random(shape) < 0.2
    return np.where(special, rng.integers(-6, 7, shape) / 2, v)


def _ranged(ints, floats, bools_random):
    """An input generator: integers in ``ints``, floats uniform in ``floats``, bools random or all True."""

    def draw(rng, shape, dt):
        if dt.kind in "iu":
            return rng.integers(*ints, shape)
        if dt.kind == "b":
            return rng.random(shape) < 0.5 if bools_random else np.ones(shape, bool)
        return rng.uniform(*floats, shape)

    return draw


_positive = _ranged((1, 20), (0.1, 6.0), bools_random=False)
_unit = _ranged((0, 2), (-0.95, 0.95), bools_random=True)
_ge1 = _ranged((1, 10), (1.0, 6.0), bools_random=False)
_small = _ranged((0, 5), (-2.0, 2.0), bools_random=True)


def _nonzero(rng, shape, dt):
    v = _normal(rng, shape, dt)
    if dt.kind == "b":
        return np.ones(shape, bool)
    return np.where(v == 0, 3, v)


def _edges(rng, shape, dt):
    """Normal values plus NaN, +-inf and -0.0 for floats."""
    v = _normal(rng, shape, dt)
    if dt.kind != "f":
        return v
    pick = rng.integers(0, 8, shape)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0])
    return np.where(pick < 4, specials[np.minimum(pick, 3)], v)


def _distinct(rng, shape, dt):
    """No two elements equal (so an unstable sort has one right answer)."""
    size = int(np.prod(shape))
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.permutation(size).reshape(shape) - size // 2 + (0.25 if dt.kind == "f" else 0)


DOMAINS = {
    "distinct": _distinct,
    "normal": _normal,
    "positive": _positive,
    "unit": _unit,
    "ge1": _ge1,
    "small": _small,
    "nonzero": _nonzero,
    "edges": _edges,
}


def index(n):
    """A domain of valid indices (negative ones included) for an axis of length ``n``."""

    def draw(rng, shape, dt):
        return rng.integers(-n, n, shape)

    return draw


def _operand(rng, shape, dt, domain):
    draw = DOMAINS[domain] if isinstance(domain, str) else domain
    if shape is PY or shape is NP:
        value = np.asarray(draw(rng, (), dt)).astype(dt)
        if shape is NP:
            return value[()]
        return bool(value) if dt.kind == "b" else int(value) if dt.kind in "iu" else float(value)
    if isinstance(shape, Const):
        return np.asarray(draw(rng, shape.shape, dt)).astype(dt)
    return np.asarray(draw(rng, shape, dt)).astype(dt)


def _per_operand(value, n):
    return tuple(value) if isinstance(value, tuple) else (value,) * n


def _traced(shape):
    return isinstance(shape, tuple)


def draw(rec, dtypes, shapes, seed):
    """All operands for one case; traced ones are arrays, the others fixed values."""
    rng = np.random.default_rng(seed)
    domains = _per_operand(rec.rng, len(shapes))
    return [_operand(rng, s, np.dtype(d), dom) for s, d, dom in zip(shapes, dtypes, domains, strict=False)]


def _bind(fn, shapes, fixed):
    """``fn`` taking only the traced operands, with the others bound in place."""
    slots = [i for i, s in enumerate(shapes) if _traced(s)]

    def bound(*traced):
        ops = list(fixed)
        for i, v in zip(slots, traced, strict=False):
            ops[i] = v
        return fn(*ops)

    return bound


N_FRESH = 2


def _draws(rec, dtypes, shapes):
    """The traced sample and the fresh samples of one case, as full operand lists."""
    seed = zlib.crc32(f"{rec.name}{rec.label}{dtypes}{shapes}".encode())
    first = draw(rec, dtypes, shapes, seed)
    out = [first]
    for k in range(1, 1 + N_FRESH):
        # untraced operands (scalars, constants) keep the first sample's values, as in user code
        fresh = draw(rec, dtypes, shapes, seed + k)
        out.append([f if _traced(s) else v for f, v, s in zip(fresh, first, shapes, strict=False)])
    return out


def _numpy_accepts(rec, dtypes, shapes):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ops in _draws(rec, dtypes, shapes):
                rec.fn(*ops)
    except (TypeError, ValueError, OverflowError, np.exceptions.AxisError, IndexError):
        return False
    return True


def _label(x):
    if isinstance(x, np.dtype):
        return x.name
    if isinstance(x, Const):
        return "const" + "x".join(map(str, x.shape))
    if isinstance(x, _Marker):
        return str(x)
    return "x".join(map(str, x)) if x else "0d"


def expand(rec):
    """(dtypes, shapes) combinations of ``rec`` that NumPy itself accepts."""
    out = []
    n = len(rec.dtypes)
    for j, shapes in enumerate(rec.shapes):
        if not any(_traced(s) for s in shapes):
            continue
        # the full grid for the leading shapes; one dtype (the first NumPy accepts,
        # starting at a rotating offset) for each later shape keeps the count down
        order = rec.dtypes if j < rec.full else [rec.dtypes[(j + k) % n] for k in range(n)]
        for dt in order:
            dtypes = _per_operand(dt, len(shapes))
            if _numpy_accepts(rec, dtypes, shapes):
                out.append((dtypes, shapes))
                if j >= rec.full:
                    break
    return out


def cases(records):
    params = []
    for rec in records:
        for dtypes, shapes in expand(rec):
            ident = "-".join([rec.name.replace("numpy.", "") + (f"[{rec.label}]" if rec.label else ""),
                              "_".join(_label(d) for d in dtypes), "_".join(_label(s) for s in shapes)])
            params.append(pytest.param(rec, dtypes, shapes, id=ident))
    return params


def run(rec, dtypes, shapes):
    """Trace ``rec`` on its first sample; compare with NumPy on it and on the fresh ones."""
    first, *fresh = _draws(rec, dtypes, shapes)
    fn = _bind(rec.fn, shapes, first)
    picked = [tuple(o for o, s in zip(ops, shapes, strict=False) if _traced(s)) for ops in (first, *fresh)]
    return check(fn, *picked[0], samples=picked[1:])


def covered(records):
    """Every table name the records exercise."""
    names = set()
    for rec in records:
        names.add(rec.name)
        names.update(rec.also)
    return names


def parity_modules():
    """The ``tests/runtime/test_parity_*.py`` modules (each exposes ``COVERED``, most ``RECORDS``)."""
    mods = []
    for path in sorted((Path(__file__).resolve().parent / "runtime").glob("test_parity_*.py")):
        name = path.stem
        mod = sys.modules.get(name)
        if mod is None:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def all_records():
    """Every parity record, module by module, in a stable order."""
    return [rec for mod in parity_modules() for rec in getattr(mod, "RECORDS", ())]
