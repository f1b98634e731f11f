"""Parity of every ndarray method entry, spelled as a method with NumPy's full signatures.

ndarray methods are C code that never reach NumPy's dispatch hooks; each
record here calls the method form (``x.sum(axis=0, keepdims=True)``,
``x.reshape(-1, 3)``, in-place ``x.sort()``) so a method that silently
inherited its source's graph node would fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from records import ALL, F32, F64, I32, I64, Rec, cases, covered, index, run

from leapp.errors import UnsupportedArgumentError
from leapp.runtime.tracing import trace_function

M = (((3, 4),), ((),), ((0, 4),))
M34 = (((3, 4),),)


def _m(name, fn, shapes=M, label="", dtypes=ALL, rng="normal", full=1):
    return Rec("ndarray." + name, fn, shapes, dtypes, rng, label=label, full=full)


def _in_place(fn):
    def run_on_copy(a, *rest):
        y = a.copy()
        out = fn(y, *rest)
        assert out is None  # in-place methods return None, as NumPy's
        return y

    return run_on_copy


REDUCING = [
    _m("sum", lambda a: (a.sum(), a.sum(axis=0, keepdims=True), a.sum(-1, dtype=np.float64)), M34, full=1),
    _m("sum", lambda a: a.sum(), M[1:], "0-d, empty"),
    _m("prod", lambda a: (a.prod(), a.prod(axis=1), a.prod(0, keepdims=True)), M34, rng="small"),
    _m("mean", lambda a: (a.mean(), a.mean(axis=(0, 1)), a.mean(1, keepdims=True)), M34),
    _m("std", lambda a: (a.std(), a.std(axis=0, ddof=1), a.std(keepdims=True)), M34),
    _m("var", lambda a: (a.var(), a.var(0), a.var(axis=-1, ddof=1, keepdims=True)), M34),
    _m("min", lambda a: (a.min(), a.min(axis=0), a.min(-1, keepdims=True)), M34 + (((),),)),
    _m("max", lambda a: (a.max(), a.max(axis=1), a.max(axis=None, keepdims=True)), M34 + (((),),)),
    _m("argmin", lambda a: (a.argmin(), a.argmin(axis=0), a.argmin(1, keepdims=True)), M34),
    _m("argmax", lambda a: (a.argmax(), a.argmax(axis=-1), a.argmax(axis=None)), M34),
    _m("cumsum", lambda a: (a.cumsum(), a.cumsum(axis=0), a.cumsum(1, dtype=np.float64)), M34),
    _m("cumprod", lambda a: (a.cumprod(), a.cumprod(axis=1)), M34, rng="small"),
    _m("all", lambda a: (a.all(), a.all(axis=0), a.all(1, keepdims=True)), M),
    _m("any", lambda a: (a.any(), a.any(axis=0), a.any(-1, keepdims=True)), M),
    # the methods (not np.all/np.any) take dtype=, with a loop for bool only
    _m("all", lambda a: (a.all(dtype=bool), a.all(axis=0, dtype=np.bool_), a.all(1, keepdims=True, dtype=None)), M,
       "dtype=bool"),
    _m("any", lambda a: (a.any(dtype=bool), a.any(axis=0, dtype=np.bool_), a.any(-1, dtype="?", keepdims=True)), M,
       "dtype=bool"),
    _m("trace", lambda a: (a.trace(), a.trace(1), a.trace(offset=-1, dtype=np.float32)), M34),
]

SELECTING = [
    _m("clip", lambda a: (a.clip(0, 1), a.clip(min=-1), a.clip(max=2), a.clip(-1.5, 2.5)), M),
    _m("argsort", lambda a: (a.argsort(kind="stable"), a.argsort(axis=0, kind="stable")), M34),
    _m("nonzero", lambda a: a.nonzero(), M),
    _m("take", lambda a: (a.take([0, -1]), a.take([2, 0], axis=1), a.take(5)), M34),
    _m("take", lambda a, i: a.take(i, axis=0), (((3, 4), (4,)),), "traced", dtypes=((F32, I64), (I32, I64)),
       rng=("normal", index(3))),
    _m("sort", _in_place(lambda y: y.sort()), (((3, 4),), ((5,),), ((0, 3),)), full=3),
    _m("sort", _in_place(lambda y: y.sort(axis=0)), M34, "axis=0"),
    _m("sort", _in_place(lambda y: y[1:].sort()), M34, "a view"),
    _m("__getitem__", lambda a: (a[1], a[::-1, 1:], a[..., None], a[a > 0], a[[0, -1]]), M34),
    _m("__setitem__", _in_place(lambda y: y.__setitem__((slice(None), 0), 5)), M34),
    _m("fill", _in_place(lambda y: y.fill(3)), M, full=3),
    _m("fill", _in_place(lambda y: y.fill(2.7)), M34, "float"),
    _m("fill", _in_place(lambda y: y.fill(y.max())), M34, "traced 0-d"),
    _m("fill", _in_place(lambda y: y[0].fill(-1)), M34, "a view"),
]

LAYOUT = [
    _m("reshape", lambda a: (a.reshape(-1, 3), a.reshape((2, 6)), a.reshape(12), a.reshape([4, -1])), M34),
    _m("reshape", lambda a: (a.reshape(()), a.reshape(1, 1)), (((),),), "0-d"),
    _m("transpose", lambda a: (a.transpose(), a.transpose(1, 0), a.transpose((1, 0)), a.transpose(None)),
       M34 + (((0, 2),),)),
    _m("transpose", lambda a: (a.transpose(2, 0, 1), a.transpose((-1, 1, 0))), (((2, 3, 4),),), "3-d"),
    _m("T", lambda a: a.T, M + (((2, 3, 4),),), full=4),
    _m("mT", lambda a: a.mT, (((3, 4),), ((2, 3, 4),))),
    _m("flatten", lambda a: a.flatten(), M + (((2, 3, 4),),)),
    _m("flatten", lambda a: _mutate_after(a, lambda x: x.flatten()), M34, "is a copy"),
    _m("ravel", lambda a: a.ravel(), M),
    _m("squeeze", lambda a: (a.squeeze(), a.squeeze(0), a.squeeze(axis=-1)), (((1, 3, 1),),)),
    _m("swapaxes", lambda a: (a.swapaxes(0, 1), a.swapaxes(-1, 0)), M34 + (((2, 3, 4),),)),
    _m("repeat", lambda a: (a.repeat(2), a.repeat(2, axis=0), a.repeat([1, 0, 2], axis=0)), M34),
    _m("dot", lambda a, b: a.dot(b), (((3, 4), (4, 2)), ((4,), (4,)), ((3, 4), (4,))), dtypes=ALL, full=2),
    _m("view", lambda a: a.view() * 2, M),
    _m("view", lambda a: _view_write(a), M34, "writes reach the base"),
]

CONVERTING = [
    _m("astype", lambda a: (a.astype(np.int32), a.astype(np.float32), a.astype(bool), a.astype("float64")), M),
    _m("copy", lambda a: a.copy(), M),
    _m("copy", lambda a: _mutate_after(a, lambda x: x.copy()), M34, "is a copy"),
    _m("round", lambda a: (a.round(), a.round(2), a.round(decimals=-1)), M34, dtypes=(F32, F64, I32, I64)),
    _m("conj", lambda a: a.conj(), M),
    _m("conjugate", lambda a: a.conjugate(), M),
]


def _mutate_after(a, make):
    y = a.copy()
    c = make(y)
    y[0] = 0
    return y, c


def _view_write(a):
    y = a.copy()
    v = y.view()
    v[1] = 7
    return y


RECORDS = REDUCING + SELECTING + LAYOUT + CONVERTING
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_method_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)


@pytest.mark.parametrize("method", ["all", "any"])
def test_all_any_with_a_dtype_numpy_has_no_loop_for_is_refused_at_the_line(method):
    def fn(a):
        return getattr(a, method)(dtype=np.int64)

    with pytest.raises(UnsupportedArgumentError, match=rf"test_parity_methods.py:\d+: ndarray.{method}\(dtype="):
        trace_function(fn, (np.ones(3),), {}, names=["a"], strict=True)
