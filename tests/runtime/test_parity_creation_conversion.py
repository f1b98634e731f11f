"""Parity of array creation, conversion, rounding and closeness entries against NumPy.

Creation from literals is folded into constants; these records check that
arrays made inside traced code keep tracing (writes into them are seen),
that *_like functions follow their traced argument's shape and dtype, and
that conversions (astype, copy, asarray, torch.from_numpy/as_tensor and
back with .numpy()) keep the graph connected.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from records import ALL, F16, F32, F64, FLOATS, I8, I32, I64, U8, WIDE, B, Rec, cases, covered, run

from leapp import dispatch

ANY = (((3, 4),), ((),), ((0,),), ((5,),))


def _r(name, fn, shapes=ANY, label="", dtypes=ALL, full=1, rng="normal"):
    return Rec(name, fn, shapes, dtypes, rng, label=label, full=full)


def _into(make):
    """A buffer made by ``make(a)`` inside traced code, then written with traced data."""

    def fn(a):
        buf = make(a)
        buf[...] = a
        return buf

    return fn


def _empty_like(a, **kw):
    e = np.empty_like(a, **kw)
    e[...] = 1  # uninitialised memory has no right answer; fill it
    return e + a


CREATION = [
    _r("numpy.zeros_like", lambda a: np.zeros_like(a) + a, full=2),
    _r("numpy.zeros_like", lambda a: (np.zeros_like(a, dtype=np.float32), np.zeros_like(a, shape=(2, 3))),
       label="dtype=,shape="),
    _r("numpy.ones_like", lambda a: np.ones_like(a) * a, full=2),
    _r("numpy.ones_like", lambda a: np.ones_like(a, dtype=np.int8), label="dtype="),
    _r("numpy.full_like", lambda a: np.full_like(a, 7), full=2),
    _r("numpy.full_like", lambda a: (np.full_like(a, 2.7), np.full_like(a, -1.5, dtype=np.float32)),
       label="float fill"),
    _r("numpy.full_like", lambda a: np.full_like(a, a.max()), (((3, 4),), ((5,),)), "traced fill"),
    _r("numpy.full_like", lambda a: (np.full_like(a, -1.5, dtype=np.uint8), np.full_like(a, 2.5e3, dtype=np.int8)),
       label="fill out of the dtype's range"),
    _r("numpy.full_like", lambda a: np.full_like(a, 3, shape=(2, 2)), label="shape="),
    _r("numpy.empty_like", _empty_like, full=2),
    _r("numpy.zeros", _into(lambda a: np.zeros(a.shape, a.dtype)), full=2),
    _r("numpy.zeros", lambda a: np.zeros(3) + a.max(), label="float64 default"),
    _r("numpy.ones", _into(lambda a: np.ones(a.shape, dtype=np.float32)), label="into float32"),
    _r("numpy.ones", lambda a: np.ones((2, 1)) * a.min(), label="float64 default"),
    _r("numpy.full", lambda a: np.full((2, 3), a.max()), (((3, 4),), ((5,),)), "traced fill"),
    _r("numpy.full", _into(lambda a: np.full(a.shape, 9, a.dtype)), label="literal"),
    _r("numpy.empty", _into(lambda a: np.empty(a.shape, a.dtype))),
    _r("numpy.arange", lambda a: np.arange(4) * a[..., None], (((3,),), ((),)), "int"),
    _r("numpy.arange", lambda a: np.arange(0.5, 3, 0.5) + a.sum(), (((3,),),), "float"),
    _r("numpy.arange", lambda a: a[np.arange(a.shape[0] - 1, -1, -1)], (((4, 2),), ((5,),)), "as index"),
    _r("numpy.linspace", lambda a: np.linspace(0, 1, 5) * a.sum(), (((3,),),), "constant"),
    _r("numpy.linspace", lambda a: np.linspace(a.min(), a.max(), 7), (((3, 4),), ((5,),)), "traced ends",
       dtypes=(F32, F64, I32, I64)),
    _r("numpy.linspace", lambda a: np.linspace(a[0], a[-1], 4, endpoint=False, axis=-1), (((3, 2),),),
       "array ends", dtypes=(F32, F64, I64)),
    _r("numpy.linspace", lambda a: np.linspace(a.min(), a.max(), 6, dtype=np.int32), (((3, 4),),), "dtype=int",
       dtypes=(F64, I64)),
    _r("numpy.linspace", lambda a: np.linspace(a.min(), a.max(), 1), (((3, 4),),), "num=1", dtypes=(F64,)),
    _r("numpy.eye", lambda a: np.eye(3) @ a, (((3, 4),),), "@", dtypes=(F32, F64)),
    _r("numpy.eye", lambda a: np.eye(3, 4, k=1, dtype=a.dtype) * a, (((3, 4),),), "k=1"),
    _r("numpy.identity", lambda a: np.identity(4, dtype=a.dtype) + a, (((4, 4),),)),
]

CONVERSION = [
    *[_r("ndarray.astype", (lambda a, d=d: a.astype(d)), ANY, f"{np.dtype(d).name}", dtypes=WIDE, full=1)
      for d in (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_)],
    _r("ndarray.astype", lambda a: a.astype(np.int32), (((3, 4),),), "float->int truncates", dtypes=FLOATS,
       rng="small"),
    _r("ndarray.astype", lambda a: a.astype(a.dtype, copy=False) * 2, label="same dtype"),
    _r("ndarray.copy", lambda a: a.copy()),
    _r("numpy.copy", np.copy, full=2),
    _r("numpy.copy", lambda a: _mutated_copy(a), (((3, 4),),), "copy is independent"),
    _r("numpy.asarray", lambda a: np.asarray(a) * 2, full=2),
    _r("numpy.asarray", lambda a: np.asarray(a, dtype=np.float32), label="dtype="),
    _r("numpy.asarray", lambda a: np.asarray([a.min(), a.max(), 1.5]), (((3, 4),),), "list of traced",
       dtypes=(F32, F64, I64)),
    _r("numpy.array", lambda a: np.array(a) + 1),
    _r("numpy.array", lambda a: np.array([a, a * 2]), label="stack"),
    _r("numpy.array", lambda a: np.array(a, dtype=np.float64), label="dtype="),
    _r("numpy.asanyarray", lambda a: np.asanyarray(a) - 1),
    _r("numpy.ascontiguousarray", lambda a: np.ascontiguousarray(a.T) * 3),
    _r("torch.from_numpy", lambda a: (torch.from_numpy(a) * 2).numpy(), dtypes=(F32, F64, I32, I64)),
    _r("torch.from_numpy", lambda a: np.sqrt(torch.from_numpy(a).abs().numpy()), label="back to numpy",
       dtypes=FLOATS),
    _r("torch.as_tensor", lambda a: torch.as_tensor(a, dtype=torch.float32).numpy(), dtypes=ALL),
    _r("torch.as_tensor", lambda a: (torch.as_tensor(a) + 1).numpy() * 2, label="no dtype",
       dtypes=(F32, F64, I64)),
    _r("torch.tensor", lambda a: torch.tensor(a).numpy() + 1, dtypes=(F32, I64)),
    # np.float64(x)-style casts of traced values (extended table), called as leapp.compile runs them
    *[_r("numpy." + t, (lambda a, t=t: (_routed(t, a.max()), _routed(t, a))), (((3, 4),), ((),)),
         dtypes=(F32, F64, I32, I64, B), full=2, rng="positive")  # negative float -> uint is undefined in C
      for t in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "bool", "complex64", "complex128")],
]


def _routed(scalar_type, value):
    """``np.float32(value)`` as rewritten code calls it: a scalar type converts in C with no hook
    for leapp, so ``leapp.compile``'s rewriter routes the call through the dispatcher."""
    return dispatch.call("conversion.py:1:1", getattr(np, scalar_type), value)


def _mutated_copy(a):
    c = np.copy(a)
    c[0] = 0
    return a, c


ELEMENTWISE = [
    _r("numpy.round", np.round, ANY, dtypes=ALL + (F16, I8, U8), full=2),
    _r("numpy.round", lambda a: np.round(a + 0.5), (((3, 4),),), "half to even", dtypes=FLOATS, rng="small"),
    *[_r("numpy.round", (lambda a, d=d: np.round(a, d)), (((3, 4),), ((),)), f"decimals={d}",
         dtypes=(F32, F64, I32, I64, U8), full=1)
      for d in (1, 2, -1, -2)],
    _r("numpy.round", lambda a: np.round(a * 10, -1), (((6,),),), "ints -1 halves", dtypes=(I32, I64)),
    _r("numpy.sinc", np.sinc, ANY, dtypes=ALL, full=2),
    _r("numpy.isclose", np.isclose, (((3, 4), (3, 4)), ((3, 4), (4,)), ((), ())), dtypes=ALL + ((F32, F64),),
       full=2),
    _r("numpy.isclose", lambda a, b: np.isclose(a, b, rtol=0.5, atol=1, equal_nan=True), (((3, 4), (3, 4)),),
       "tolerances", dtypes=FLOATS + (I32,), rng="edges"),
    _r("numpy.allclose", lambda a, b: np.allclose(a, b, atol=2), (((3, 4), (3, 4)), ((5,), ())), dtypes=ALL),
    _r("numpy.array_equal", np.array_equal, (((3, 4), (3, 4)), ((3,), (4,)), ((), ())), dtypes=ALL + ((I32, F64),)),
    _r("numpy.array_equal", lambda a: np.array_equal(a, a), (((3, 4),),), "self"),
    _r("numpy.array_equal", lambda a: np.array_equal(a, a, equal_nan=True), (((5,),),), "nan",
       dtypes=FLOATS, rng="edges"),
    _r("numpy.nan_to_num", np.nan_to_num, ANY, dtypes=ALL, rng="edges", full=2),
    _r("numpy.nan_to_num", lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), (((6,),),),
       "values", dtypes=FLOATS + (F16,), rng="edges"),
]

# Functions that answer from shapes and dtypes only: they run as in NumPy and record nothing.
STATIC = [
    _r("numpy.shape", lambda a: np.zeros(np.shape(a)) + a),
    _r("numpy.ndim", lambda a: a * np.ndim(a)),
    _r("numpy.size", lambda a: a + np.size(a)),
    _r("numpy.result_type", lambda a: a.astype(np.result_type(a, np.float32))),
    _r("numpy.may_share_memory", lambda a: a * np.may_share_memory(a, a)),
    _r("numpy.shares_memory", lambda a: a + np.shares_memory(a, a[::-1])),
    _r("numpy.iscomplexobj", lambda a: a * np.iscomplexobj(a)),
    _r("numpy.isrealobj", lambda a: a * np.isrealobj(a)),
    _r("numpy.min_scalar_type", lambda a: a.astype(np.min_scalar_type(-3))),
    _r("numpy.can_cast", lambda a: a * np.can_cast(a.dtype, np.float64)),
]

RECORDS = CREATION + CONVERSION + ELEMENTWISE + STATIC
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_creation_conversion_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)
