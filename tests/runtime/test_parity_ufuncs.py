"""Parity of every ufunc entry, its operator spelling and NEP 50 promotion, against NumPy.

One record per table ufunc (values and dtypes over float32/float64/int32/
int64/bool and 0-d, empty and broadcasting shapes, Python/NumPy scalars and
constants), then the operators (reflected and in-place) and the exact
promotion cases from the issue list.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from records import (
    ALL,
    BINARY,
    F16,
    F32,
    F64,
    FLOATS,
    I8,
    I32,
    I64,
    INTS,
    NP,
    PY,
    U8,
    UNARY,
    WIDE,
    B,
    Const,
    Rec,
    cases,
    covered,
    run,
)

U16, U32, U64 = np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)


def _u(name, domain="normal", dtypes=ALL, shapes=UNARY):
    return Rec("numpy." + name, getattr(np, name), shapes, dtypes, domain)


def _b(name, domain="normal", dtypes=ALL, shapes=BINARY):
    # every dtype with broadcasting, both Python-scalar sides and 0-d x 0-d
    return Rec("numpy." + name, getattr(np, name), shapes, dtypes, domain, full=4)


UNARY_RECORDS = [
    *[_u(n) for n in ("negative", "positive", "absolute", "fabs", "sign", "square", "cbrt", "exp", "exp2",
                      "expm1", "sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "deg2rad",
                      "rad2deg", "radians", "degrees", "floor", "ceil", "trunc", "rint", "conjugate",
                      "logical_not", "invert", "signbit")],
    *[_u(n, "positive") for n in ("sqrt", "log", "log2", "log10", "log1p")],
    *[_u(n, "unit") for n in ("arcsin", "arccos", "arctanh")],
    _u("arccosh", "ge1"),
    _u("reciprocal", "nonzero"),
    *[_u(n, "edges", FLOATS + INTS + (B, F16)) for n in ("isnan", "isinf", "isfinite", "signbit")],
    # two outputs each
    *[_u(n) for n in ("modf", "frexp")],
    *[Rec("numpy." + n, getattr(np, n), UNARY, FLOATS + (F16,), "edges", label="edges") for n in ("modf", "frexp")],
    # odd dtypes (bool arithmetic, float16, int8, uint8) through a few representative ufuncs
    *[Rec("numpy." + n, getattr(np, n), UNARY, WIDE, d, label="wide")
      for n, d in (("negative", "normal"), ("absolute", "normal"), ("sqrt", "positive"), ("exp", "small"),
                   ("floor", "normal"), ("sign", "normal"), ("invert", "normal"), ("square", "small"))
      ],
    # NaN, inf and -0.0 through the float math
    *[Rec("numpy." + n, getattr(np, n), UNARY, FLOATS, "edges", label="edges")
      for n in ("absolute", "sign", "sqrt", "log", "exp", "floor", "ceil", "trunc", "rint", "tanh",
                "reciprocal", "square", "negative", "signbit", "cbrt")],
]

BINARY_RECORDS = [
    *[_b(n) for n in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
                      "logaddexp", "logaddexp2", "arctan2", "hypot", "copysign", "heaviside", "nextafter",
                      "maximum", "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal",
                      "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
                      "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "divmod")],
    Rec("numpy.divmod", np.divmod, BINARY, FLOATS + (F16,), ("edges", "edges"), label="edges"),
    Rec("numpy.divmod", lambda a, b: divmod(a, b), (((6,), (6,)),), (I32, I64, F32), ("normal", "small"),
        label="builtin divmod, zero divisors"),
    Rec("numpy.power", np.power, BINARY, ALL, ("normal", "small"), full=4),
    Rec("numpy.float_power", np.float_power, BINARY, ALL, ("positive", "small"), full=4),
    Rec("numpy.ldexp", np.ldexp, BINARY, ((F32, I32), (F64, I64), (F64, I32), (F32, I64)), ("normal", "small"),
        full=4),
    Rec("numpy.left_shift", np.left_shift, BINARY, INTS + (U8, I8), ("normal", "small"), full=4),
    Rec("numpy.right_shift", np.right_shift, BINARY, INTS + (U8, I8), ("normal", "small"), full=4),
    # mixed operand dtypes: int32 * float32 is float64, int64 + float32 float64, bool + int
    *[Rec("numpy." + n, getattr(np, n), BINARY[:4], (mixed,), label="mixed", full=4)
      for n in ("add", "multiply", "divide", "subtract", "maximum", "floor_divide", "remainder", "arctan2",
                "hypot", "equal", "less")
      for mixed in ((I32, F32), (I64, F32), (F32, F64), (I32, I64), (B, I32), (B, F32), (U8, I8), (F16, I32))],
    # odd dtypes (float16, int8, uint8, bool) through the arithmetic
    *[Rec("numpy." + n, getattr(np, n), BINARY[:4], WIDE, "normal", label="wide", full=1)
      for n in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum",
                "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and")],
    # wide unsigned ints: torch stores them but has no arithmetic kernels for them
    *[Rec("numpy." + n, getattr(np, n), BINARY[:4], (U16, U32, U64), "normal", label="wide unsigned", full=1)
      for n in ("add", "subtract", "multiply", "bitwise_and", "bitwise_or", "bitwise_xor", "equal",
                "not_equal", "logical_and", "logical_or", "logical_xor", "left_shift")],
    *[Rec("numpy." + n, getattr(np, n), BINARY[:4], (U16, U32), "nonzero", label="wide unsigned", full=1)
      for n in ("less", "greater_equal", "maximum", "minimum", "floor_divide", "remainder", "right_shift",
                "power", "gcd")],
    Rec("numpy.less", lambda a, b: (a < b, np.maximum(a, b), np.minimum(a, 3), a >= 2**63, np.fmax(a, b)),
        (((6,), (6,)),), (U64,), label="uint64 order past 2**63",
        rng=lambda rng, shape, dt: rng.choice(np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1], np.uint64), shape)),
    *[Rec("numpy." + n, getattr(np, n), UNARY, (U16, U32, U64), label="wide unsigned", full=1)
      for n in ("negative", "square", "invert", "logical_not")],
    # NaN and inf through the comparisons and float binaries
    *[Rec("numpy." + n, getattr(np, n), BINARY[:3], FLOATS, "edges", label="edges")
      for n in ("maximum", "minimum", "fmax", "fmin", "equal", "less", "greater_equal", "add", "divide",
                "floor_divide", "remainder", "fmod", "arctan2", "hypot", "copysign", "logaddexp")],
]

# Operators: forward, reflected (a Python scalar on the left) and in-place.
_OPS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
    "floor_divide": operator.floordiv, "remainder": operator.mod, "power": operator.pow,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "left_shift": operator.lshift, "right_shift": operator.rshift, "equal": operator.eq,
    "not_equal": operator.ne, "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge, "matmul": None,
}
_IOPS = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul, "divide": operator.itruediv,
    "floor_divide": operator.ifloordiv, "remainder": operator.imod, "power": operator.ipow,
    "bitwise_and": operator.iand, "bitwise_or": operator.ior, "bitwise_xor": operator.ixor,
    "left_shift": operator.ilshift, "right_shift": operator.irshift,
}
_SMALL_RIGHT = {"power", "left_shift", "right_shift"}


def _inplace(op):
    def fn(a, b):
        y = a.copy() if isinstance(a, np.ndarray) else a
        y = op(y, b)
        return y

    return fn


OPERATOR_RECORDS = [
    *[Rec("numpy." + n, op, BINARY, ALL, ("normal", "small") if n in _SMALL_RIGHT else "normal", label="op",
          full=3)
      for n, op in _OPS.items() if op is not None],
    *[Rec("numpy." + n, _inplace(op), (((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), PY), ((3, 4), NP),
                                       ((0,), (0,)), ((), ()), ((4,), Const((4,)))),
          ALL + ((F32, F64), (F32, I64), (I32, I64)),
          ("normal", "small") if n in _SMALL_RIGHT else "normal", label="inplace")
      for n, op in _IOPS.items()],
    Rec("numpy.negative", operator.neg, UNARY, ALL, label="op"),
    Rec("numpy.positive", operator.pos, UNARY, ALL, label="op"),
    Rec("numpy.absolute", abs, UNARY, ALL, label="op"),
    Rec("numpy.invert", operator.invert, UNARY, ALL, label="op"),
]


# The exact-semantics list of issue 2, each spelled as a user would write it.
MEAN64 = np.array([0.5, -1.25, 2.0, 3.5], dtype=np.float64)


def _isub_mean(y):
    y = y.copy()
    y -= MEAN64
    return y


SEMANTICS_RECORDS = [
    Rec("numpy.multiply", lambda a: a * np.float64(2), (((4,),), ((),)), (F32,), label="f32*np.float64"),
    Rec("numpy.multiply", lambda a: a * 2.0, (((4,),), ((),)), (F32, F16), label="f32*2.0"),
    Rec("numpy.multiply", lambda a: a * np.float32(2), (((4,),),), (I32, I64, F16), label="int*np.float32"),
    Rec("numpy.add", lambda a: a + 1, (((4,),),), (I8, U8, I32), label="int8+1"),
    Rec("numpy.add", lambda a: a + 1.5, (((4,),),), (I32, I64, B), label="int+1.5"),
    Rec("numpy.subtract", _isub_mean, (((3, 4),), ((4,),)), (F32,), label="isub MEAN64"),
    Rec("numpy.divide", lambda a, b: a / b, (((6,), (6,)),), (I32, I64, B), label="int/int"),
    Rec("numpy.floor_divide", lambda a, b: a // b, (((6,), (6,)),), (I32, I64),
        rng=("normal", "small"), label="int//zero"),
    Rec("numpy.remainder", lambda a, b: a % b, (((6,), (6,)),), (I32, I64),
        rng=("normal", "small"), label="int%zero"),
    Rec("numpy.fmod", np.fmod, (((6,), (6,)),), (I32, I64), rng=("normal", "small"), label="int fmod zero"),
    Rec("numpy.floor_divide", lambda a: a // 0, (((6,),),), (I32, I64, F32), label="//0"),
    Rec("numpy.remainder", lambda a: a % 0, (((6,),),), (I32, I64, F32), label="%0"),
    Rec("numpy.arctan2", np.arctan2, (((5,), (5,)),), (I64, I32, B), label="int"),
    Rec("numpy.hypot", np.hypot, (((5,), (5,)),), (I64, I32, B), label="int"),
    Rec("numpy.bitwise_and", lambda a, b: (a & b, a | b, a ^ b, ~a), (((5,), (5,)),), INTS + (B, U8),
        label="bitwise vs logical"),
    # dtype= fixes the loop, not only the output: float32 operands add in float64 (NumPy's signature)
    Rec("numpy.add", lambda a, b: (np.add(a, b, dtype=np.float64), np.multiply(a, b, dtype=np.float64)),
        (((6,), (6,)),), (F32, F16, I32), label="dtype=float64 loop"),
    Rec("numpy.sqrt", lambda a: (np.sqrt(a, dtype=np.float64), np.exp(a, dtype=np.float32)), (((6,),),),
        (F32, F16), "positive", label="dtype= loop"),
    Rec("numpy.remainder", lambda a, b: (np.remainder(a, b, dtype=np.float64), np.fmod(a, b, dtype=np.float32)),
        (((6,), (6,)),), (I32, I64), ("normal", "small"), label="int dtype=float"),
]

RECORDS = UNARY_RECORDS + BINARY_RECORDS + OPERATOR_RECORDS + SEMANTICS_RECORDS
COVERED = covered(RECORDS)


@pytest.mark.parametrize("rec, dtypes, shapes", cases(RECORDS))
def test_ufunc_parity(rec, dtypes, shapes):
    run(rec, dtypes, shapes)
