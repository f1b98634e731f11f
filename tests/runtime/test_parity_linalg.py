"""Parity of the linear-algebra entries against NumPy: shapes from 0-d to N-D, int and bool dtypes."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from records import ALL, F32, F64, FLOATS, I32, I64, U8, B, Const, Rec, cases, covered, run

MIXED = ((I32, F32), (B, I64), (F32, F64), (U8, I32))


def _r(name, fn, shapes, label="", dtypes=ALL + MIXED, full=1, rng="small"):
    # "small" keeps integer products from overflowing differently in different orders
    return Rec(name, fn, shapes, dtypes, rng, label=label, full=full)


PAIRS = (((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((2, 3, 4), (4, 5)),
         ((2, 3, 4), (2, 4, 5)), ((0, 4), (4, 3)), ((3, 0), (0, 2)), ((3, 4), Const((4, 2))))

LINALG_RECORDS = [
    _r("numpy.matmul", np.matmul, PAIRS, full=2),
    _r("numpy.matmul", operator.matmul, PAIRS[:4] + (((2, 1, 3, 4), (5, 4, 2)),), "@", full=1),
    _r("numpy.matmul", lambda a, b: a.__rmatmul__(b), (((4, 2), (3, 4)),), "reflected @"),
    _r("numpy.dot", np.dot, PAIRS + (((), (3,)), ((3, 4), ()), ((2, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4))), full=2),
    _r("numpy.einsum", lambda a, b: np.einsum("ij,jk->ik", a, b), PAIRS[:1], "ij,jk->ik"),
    _r("numpy.einsum", lambda a: np.einsum("ii->i", a), (((3, 3),),), "diagonal"),
    _r("numpy.einsum", lambda a: np.einsum("ij->", a), (((3, 4),), ((0, 2),)), "sum"),
    _r("numpy.einsum", lambda a: np.einsum("...i->...", a), (((2, 3, 4),),), "ellipsis"),
    _r("numpy.einsum", lambda a, b: np.einsum("bij,bjk->bik", a, b), (((2, 3, 4), (2, 4, 5)),), "batched"),
    _r("numpy.einsum", lambda a, b: np.einsum("i,j", a, b), (((3,), (4,)),), "outer, implicit"),
    _r("numpy.tensordot", np.tensordot, (((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4))), full=2),
    _r("numpy.tensordot", lambda a, b: np.tensordot(a, b, axes=1), PAIRS[:1], "axes=1"),
    _r("numpy.tensordot", lambda a, b: np.tensordot(a, b, axes=0), (((2,), (3,)),), "axes=0"),
    _r("numpy.tensordot", lambda a, b: np.tensordot(a, b, axes=([0, 2], [2, 0])), (((4, 3, 2), (2, 5, 4)),),
       "axes lists"),
    _r("numpy.tensordot", lambda a, b: np.tensordot(a, b, axes=(1, 0)), (((3, 4), (4, 2)),), "axes ints"),
    _r("numpy.trace", np.trace, (((3, 4),), ((3, 3),), ((2, 3, 4),), ((0, 3),)), dtypes=ALL, full=2),
    _r("numpy.trace", lambda a: np.trace(a, offset=1), (((3, 4),),), "offset=1", dtypes=ALL),
    _r("numpy.trace", lambda a: np.trace(a, offset=-2, axis1=1, axis2=2), (((2, 4, 3),),), "axes", dtypes=ALL),
    _r("numpy.trace", lambda a: np.trace(a, dtype=np.float32), (((3, 3),),), "dtype=", dtypes=ALL),
    *[_r("numpy." + n, (lambda a, f=f, k=k: f(a, k)), (((3, 4),), ((2, 3, 3),), ((0, 2),), ((4,),)),
         f"k={k}", dtypes=ALL, full=1)
      for n, f in (("tril", np.tril), ("triu", np.triu)) for k in (0, 1, -2)],
    _r("numpy.outer", np.outer, (((3,), (4,)), ((2, 2), (3,)), ((), (3,)), ((0,), (2,))), full=1),
    _r("numpy.inner", np.inner, (((4,), (4,)), ((3, 4), (4,)), ((2, 4), (3, 4)), ((), (3,)), ((2, 3, 4), (5, 4))),
       full=2),
    _r("numpy.cross", np.cross, (((3,), (3,)), ((4, 3), (3,)), ((2, 4, 3), (4, 3))), dtypes=(F32, F64, I32, I64) + MIXED,
       full=1),
    _r("numpy.linalg.cross", np.linalg.cross, (((3,), (3,)), ((4, 3), (3,)), ((2, 4, 3), (4, 3))),
       dtypes=(F32, F64, I32, I64) + MIXED),
    _r("numpy.cross", lambda a, b: np.cross(a, b, axis=0), (((3, 4), (3, 4)),), "axis=0",
       dtypes=(F32, F64, I64)),
    _r("numpy.cross", lambda a, b: np.cross(a, b, axisa=0, axisb=-1, axisc=0), (((3, 4), (4, 3)),), "axisa/b/c",
       dtypes=(F32, I64)),
]

_NORMS = (
    ("default", {}), ("axis=0", {"axis": 0}), ("axis=-1 keepdims", {"axis": -1, "keepdims": True}),
    ("ord=1 axis=1", {"ord": 1, "axis": 1}), ("ord=inf axis=1", {"ord": np.inf, "axis": 1}),
    ("ord=-inf axis=0", {"ord": -np.inf, "axis": 0}), ("ord=0 axis=1", {"ord": 0, "axis": 1}),
    ("ord=3 axis=0", {"ord": 3, "axis": 0}), ("fro", {"ord": "fro"}), ("nuc", {"ord": "nuc"}),
    ("matrix ord=1", {"ord": 1}), ("matrix ord=inf", {"ord": np.inf}), ("matrix ord=2", {"ord": 2}),
    ("matrix ord=-1", {"ord": -1}), ("matrix axes keepdims", {"axis": (0, 1), "keepdims": True}),
    ("keepdims", {"keepdims": True}),
)

NORM_RECORDS = [
    *[Rec("numpy.linalg.norm", (lambda a, kw=kw: np.linalg.norm(a, **kw)), (((3, 4),),), ALL, "normal",
          label=label, full=1) for label, kw in _NORMS],
    Rec("numpy.linalg.norm", np.linalg.norm, (((),), ((0,),), ((5,),), ((2, 3, 4),)), FLOATS + (I32, B),
        label="shapes", full=1),
    *[Rec("numpy.linalg.norm", (lambda a, o=o: np.linalg.norm(a, ord=o)), (((5,),),), FLOATS + (I64,),
          label=f"vector ord={o}", full=1) for o in (1, 2, np.inf, -np.inf, 0, 0.5)],
    Rec("numpy.linalg.norm", lambda a: np.linalg.norm(a, axis=(1, 2)), (((2, 3, 4),),), FLOATS, label="batched"),
]

RECORDS = LINALG_RECORDS + NORM_RECORDS
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_linalg_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)
