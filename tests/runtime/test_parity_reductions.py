"""Parity of the reductions, cumulative ops and ufunc methods against NumPy.

Each reduction runs with axis=None (flattening), a single axis, a negative
axis and a tuple of axes, with and without keepdims, over 0-d, empty, 1-D,
2-D and 3-D inputs; then the accumulator-dtype cases (int32 sums and
cumsums are int64, uint8 sums uint64, bool sums int64, int means float64),
ddof, dtype= and initial=.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity import check
from records import (
    ALL,
    F16,
    F32,
    F64,
    FLOATS,
    I8,
    I32,
    I64,
    INTS,
    REDUCE,
    U8,
    B,
    Rec,
    cases,
    covered,
    run,
)

from leapp.errors import UnsupportedArgumentError

# (label, kwargs) for functions that take axis= and keepdims=
AXES = (
    ("all", {}),
    ("all keepdims", {"keepdims": True}),
    ("axis0", {"axis": 0}),
    ("axis-1 keepdims", {"axis": -1, "keepdims": True}),
    ("axis(0,-1)", {"axis": (0, -1)}),
)


def _reduction(name, fn, domain="normal", dtypes=ALL, axes=AXES):
    return [Rec(name, (lambda a, kw=kw: fn(a, **kw)), REDUCE, dtypes, domain, label=label, full=1)
            for label, kw in axes]


_ONE_AXIS = tuple((label, kw) for label, kw in AXES if not isinstance(kw.get("axis"), tuple))

REDUCTION_RECORDS = [
    *_reduction("numpy.sum", np.sum),
    *_reduction("numpy.prod", np.prod, "small"),
    *_reduction("numpy.mean", np.mean),
    *_reduction("numpy.std", np.std),
    *_reduction("numpy.var", np.var),
    *_reduction("numpy.min", np.min),
    *_reduction("numpy.max", np.max),
    *_reduction("numpy.ptp", np.ptp, dtypes=(F32, F64, I32, I64)),
    *_reduction("numpy.all", np.all),
    *_reduction("numpy.any", np.any),
    *_reduction("numpy.count_nonzero", np.count_nonzero, axes=(AXES[0], AXES[2], AXES[3], AXES[4])),
    *_reduction("numpy.argmin", np.argmin, axes=_ONE_AXIS),
    *_reduction("numpy.argmax", np.argmax, axes=_ONE_AXIS),
    *[Rec(n, (lambda a, f=f, ax=ax: f(a, axis=ax)), REDUCE, ALL, "small" if "prod" in n else "normal",
          label=f"axis={ax}", full=1)
      for n, f in (("numpy.cumsum", np.cumsum), ("numpy.cumprod", np.cumprod))
      for ax in (None, 0, -1)],
    # NaN and inf: NumPy's min/max/argmax propagate the first NaN
    *[Rec(n, (lambda a, f=f: (f(a), f(a, axis=0))), (((3, 4),), ((6,),)), FLOATS, "edges", label="edges")
      for n, f in (("numpy.max", np.max), ("numpy.min", np.min), ("numpy.argmax", np.argmax),
                   ("numpy.argmin", np.argmin), ("numpy.sum", np.sum), ("numpy.cumsum", np.cumsum),
                   ("numpy.mean", np.mean), ("numpy.ptp", np.ptp), ("numpy.any", np.any),
                   ("numpy.count_nonzero", np.count_nonzero))],
]

# The accumulator dtypes NumPy picks, and the keywords that change results.
SEMANTICS_RECORDS = [
    Rec("numpy.sum", np.sum, REDUCE[:2], (I32, U8, B, I8, F16), label="accumulator", full=2),
    Rec("numpy.cumsum", np.cumsum, REDUCE[:2], (I32, U8, B, I8), label="accumulator", full=2),
    Rec("numpy.cumprod", np.cumprod, REDUCE[:2], (I32, U8, B), "small", label="accumulator", full=2),
    Rec("numpy.prod", np.prod, REDUCE[:2], (I32, U8, B, I8), "small", label="accumulator", full=2),
    Rec("numpy.mean", np.mean, REDUCE[:2], (I32, I64, B, U8, F16), label="accumulator", full=2),
    Rec("numpy.std", np.std, REDUCE[:2], (I32, B, F16), label="accumulator", full=2),
    Rec("numpy.var", lambda a: np.var(a, axis=0), REDUCE[:1], (I64, F16), label="accumulator"),
    *[Rec(n, (lambda a, f=f, d=d: (f(a, ddof=d), f(a, axis=0, ddof=d))), REDUCE[:1], ALL,
          label=f"ddof={d}")
      for n, f in (("numpy.std", np.std), ("numpy.var", np.var)) for d in (1, 2)],
    Rec("numpy.sum", lambda a: (np.sum(a, dtype=np.float32), np.sum(a, axis=0, dtype=np.int64)), REDUCE[:1],
        ALL, label="dtype="),
    Rec("numpy.mean", lambda a: (np.mean(a, dtype=np.float32), np.mean(a, axis=0, dtype=np.float64)),
        REDUCE[:1], ALL, label="dtype="),
    Rec("numpy.cumsum", lambda a: np.cumsum(a, axis=0, dtype=np.float64), REDUCE[:1], ALL, label="dtype="),
    Rec("numpy.prod", lambda a: np.prod(a, axis=1, dtype=np.int64), REDUCE[:1], ALL, "small", label="dtype="),
    # dtype= narrower than torch's int64 accumulator: NumPy sums in (and wraps to) that dtype; a bool
    # sum is a logical or, a bool product a logical and (found by tests/dtype_keyword.py)
    *[Rec(n, (lambda a, f=f, d=d: (f(a, dtype=d), f(a, axis=0, dtype=d))), REDUCE[:1] + REDUCE[4:5],
          (I64, I32, B, U8), "small" if "prod" in n else "normal", label=f"dtype={np.dtype(d).name}", full=2)
      for n, f in (("numpy.sum", np.sum), ("numpy.prod", np.prod), ("numpy.cumsum", np.cumsum),
                   ("numpy.cumprod", np.cumprod), ("numpy.add.reduce", np.add.reduce),
                   ("numpy.multiply.reduce", np.multiply.reduce), ("numpy.add.accumulate", np.add.accumulate))
      for d in (np.int8, np.int32, np.uint8, np.bool_)],
    Rec("numpy.sum", lambda a: np.sum(a, axis=0, dtype=np.int32), REDUCE[:1], (B,), label="bool dtype=int32"),
    *[Rec("numpy.trace", (lambda a, d=d: np.trace(a, dtype=d)), REDUCE[:1], (I64, I32, B, U8),
          label=f"dtype={np.dtype(d).name}") for d in (np.int8, np.uint8, np.bool_)],
    *[Rec("numpy.mean", (lambda a, d=d: (np.mean(a, dtype=d), a.mean(axis=0, dtype=d))), REDUCE[:1],
          (I64, I32, B, F32), label=f"dtype={np.dtype(d).name}", full=1) for d in (np.int32, np.int8, np.bool_)],
    Rec("numpy.maximum.reduce", lambda a: (np.maximum.reduce(a, axis=0, initial=True),
                                           np.minimum.reduce(a, axis=0, initial=False)),
        REDUCE[:1], (B,), label="bool initial="),
    Rec("numpy.sum", lambda a: (np.sum(a, initial=5), np.sum(a, axis=0, initial=1.5)), REDUCE[:3], ALL,
        label="initial="),
    Rec("numpy.max", lambda a: (np.max(a, initial=0), np.max(a, axis=-1, initial=-1)), REDUCE[:3],
        (F32, F64, I32, I64), label="initial="),
    Rec("numpy.min", lambda a: np.min(a, axis=0, initial=2, keepdims=True), REDUCE[:3],
        (F32, F64, I32, I64), label="initial="),
    Rec("numpy.prod", lambda a: np.prod(a, axis=0, initial=2), REDUCE[:3], ALL, "small", label="initial="),
]

# np.add.reduce and friends: NumPy's default axis is 0, not None.
_UM_AXES = (("default", {}), ("axis=None", {"axis": None}), ("axis=-1 keepdims", {"axis": -1, "keepdims": True}),
            ("axis=(0,1)", {"axis": (0, 1)}))

UFUNC_METHOD_RECORDS = [
    *[Rec(n, (lambda a, f=f, kw=kw: f(a, **kw)), REDUCE, dtypes, domain, label=label, full=1)
      for n, f, dtypes, domain in (
          ("numpy.add.reduce", np.add.reduce, ALL, "normal"),
          ("numpy.multiply.reduce", np.multiply.reduce, ALL, "small"),
          ("numpy.maximum.reduce", np.maximum.reduce, ALL, "normal"),
          ("numpy.minimum.reduce", np.minimum.reduce, ALL, "normal"),
          ("numpy.logical_and.reduce", np.logical_and.reduce, ALL, "normal"),
          ("numpy.logical_or.reduce", np.logical_or.reduce, ALL, "normal"))
      for label, kw in _UM_AXES],
    Rec("numpy.add.reduce", lambda a: np.add.reduce(a, axis=0, dtype=np.float64), REDUCE[:1], ALL,
        label="dtype="),
    # reductions torch has no op for, folded pairwise: every axis form, empty axes (the identity)
    *[Rec(f"numpy.{u.__name__}.reduce", (lambda a, f=u.reduce, kw=kw: f(a, **kw)), REDUCE, dtypes, domain,
          label=label, full=1)
      for u, dtypes, domain in ((np.bitwise_and, (I32, I64, B, U8), "normal"),
                                (np.bitwise_or, (I32, I64, B, U8), "normal"),
                                (np.bitwise_xor, (I32, I64, B, U8), "normal"), (np.logical_xor, ALL, "normal"),
                                (np.fmax, FLOATS + INTS, "edges"), (np.fmin, FLOATS + INTS, "edges"))
      for label, kw in _UM_AXES],
    Rec("numpy.maximum.reduce", lambda a: np.maximum.reduce(a, axis=None, initial=0.5), REDUCE[:3], FLOATS,
        label="initial="),
    *[Rec(n, (lambda a, f=f, ax=ax: f(a, axis=ax)), REDUCE, ALL, "small" if "multiply" in n else "normal",
          label=f"axis={ax}", full=1)
      for n, f in (("numpy.add.accumulate", np.add.accumulate),
                   ("numpy.multiply.accumulate", np.multiply.accumulate),
                   ("numpy.maximum.accumulate", np.maximum.accumulate),
                   ("numpy.minimum.accumulate", np.minimum.accumulate))
      for ax in (0, -1)],
    Rec("numpy.add.accumulate", lambda a: np.add.accumulate(a, axis=0, dtype=np.float64), REDUCE[:1],
        (I32, B, F32), label="dtype="),
    Rec("numpy.maximum.accumulate", np.maximum.accumulate, (((6,),),), FLOATS, "edges", label="edges"),
    *[Rec(n, f, (((3,), (4,)), ((2, 3), (4,)), ((), (3,)), ((0,), (3,)), ((3,), ())), ALL, label="outer",
          full=2)
      for n, f in (("numpy.add.outer", np.add.outer), ("numpy.subtract.outer", np.subtract.outer),
                   ("numpy.multiply.outer", np.multiply.outer), ("numpy.divide.outer", np.divide.outer))],
    Rec("numpy.multiply.outer", np.multiply.outer, (((3,), (4,)),), ((I32, F32), (B, I64), (F32, F64)),
        label="mixed"),
]

RECORDS = REDUCTION_RECORDS + SEMANTICS_RECORDS + UFUNC_METHOD_RECORDS
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_reduction_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)


@pytest.mark.parametrize("fn", [np.cumsum, np.cumprod, np.add.accumulate, np.multiply.accumulate,
                                lambda a: a.cumsum(axis=0), lambda a: np.cumsum(a.astype(np.int32), dtype=np.float16)])
def test_float16_running_sums_are_refused(fn):
    # NumPy rounds every partial sum to float16; torch accumulates in float32
    with pytest.raises(UnsupportedArgumentError, match="float16 running sums"):
        check(fn, np.ones((3, 4), np.float16))


def test_float16_running_sum_in_float32_is_traced():
    check(lambda a: np.cumsum(a, axis=0, dtype=np.float32).astype(np.float16), np.ones((3, 4), np.float16))


@pytest.mark.parametrize("fn", [lambda a: np.var(a, dtype=np.int32), lambda a: np.var(a, axis=0, dtype=np.int8)])
def test_moments_in_an_integer_dtype_are_refused_clearly(fn):
    # NumPy truncates the mean and each step into the integer dtype; refused, naming the call
    with pytest.raises(UnsupportedArgumentError, match="dtype="):
        check(fn, np.arange(12).reshape(3, 4))
