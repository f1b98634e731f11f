"""NumPy ufuncs and their torch counterparts.

Every ufunc is traced by one generic adapter: operands are cast to the loop
dtypes NumPy itself resolves (``ufunc.resolve_dtypes``, NEP 50 included), then
the torch function named here is called. Entries that need more than that
(integer division by zero, ``decimals``) name it in ``note`` and have a
dedicated adapter in ``leapp.runtime.adapters``.
"""

from __future__ import annotations

from ._schema import COMMON_REFUSALS, Entry

A, C = "Arithmetic and math", "Comparison and logic"

_UFUNC_REFUSE = {k: COMMON_REFUSALS[k] for k in ("where", "signature")}


def _u(name, torch, category=A, aliases=(), note=""):
    return Entry(
        name="numpy." + name,
        torch=torch,
        category=category,
        kind="ufunc",
        refuse=_UFUNC_REFUSE,
        aliases=tuple("numpy." + a for a in aliases),
        note=note,
    )


UFUNCS = [
    # arithmetic (operators + - * / // % ** route here)
    _u("add", "torch.add"),
    _u("subtract", "torch.sub"),
    _u("multiply", "torch.mul"),
    _u("divide", "torch.div", aliases=("true_divide",)),
    _u(
        "floor_divide",
        "torch.floor_divide",
        note="Integer division by zero gives 0, as in NumPy (torch would raise); uint64 is computed "
        "exactly on int64 bits.",
    ),
    _u(
        "remainder",
        "torch.remainder",
        aliases=("mod",),
        note="Integer modulo by zero gives 0, as in NumPy (torch would raise); uint64 is computed "
        "exactly on int64 bits.",
    ),
    _u("fmod", "torch.fmod", note="Integer fmod by zero gives 0, as in NumPy; uint64 exact on int64 bits."),
    _u("divmod", "torch.floor_divide", note="Two outputs, (x // y, x % y), each exactly as np.floor_divide "
       "and np.remainder (also Python's divmod(x, y) on arrays)."),
    _u("modf", "torch.trunc", note="Two outputs, (fraction, whole part), with NumPy's signs: modf(-3.0) is "
       "(-0.0, -3.0), modf(inf) is (0.0, inf)."),
    _u("frexp", "torch.frexp", note="Two outputs, (mantissa, int32 exponent)."),
    _u("power", "torch.pow", aliases=("pow",)),
    _u("float_power", "torch.float_power"),
    _u("negative", "torch.neg"),
    _u("positive", "torch.positive"),
    _u("absolute", "torch.abs", aliases=("abs",)),
    _u("fabs", "torch.abs"),
    _u("sign", "torch.sign"),
    _u("sqrt", "torch.sqrt", note="float32/float16 taken in float64 and rounded once: NumPy's bits (torch's CPU "
                                   "kernel is not correctly rounded); float64 within an ulp."),
    _u("square", "torch.square"),
    _u("cbrt", "torch.pow", note="Computed as sign(x) * |x| ** (1/3)."),
    _u("reciprocal", "torch.reciprocal", note="Integer reciprocal truncates toward zero, as NumPy."),
    _u("exp", "torch.exp"),
    _u("exp2", "torch.exp2"),
    _u("expm1", "torch.expm1"),
    _u("log", "torch.log"),
    _u("log2", "torch.log2"),
    _u("log10", "torch.log10"),
    _u("log1p", "torch.log1p"),
    _u("logaddexp", "torch.logaddexp"),
    _u("logaddexp2", "torch.logaddexp2"),
    _u("sin", "torch.sin"),
    _u("cos", "torch.cos"),
    _u("tan", "torch.tan"),
    _u("arcsin", "torch.asin", aliases=("asin",)),
    _u("arccos", "torch.acos", aliases=("acos",)),
    _u("arctan", "torch.atan", aliases=("atan",)),
    _u("arctan2", "torch.atan2", aliases=("atan2",)),
    _u("hypot", "torch.hypot"),
    _u("sinh", "torch.sinh"),
    _u("cosh", "torch.cosh"),
    _u("tanh", "torch.tanh"),
    _u("arcsinh", "torch.asinh", aliases=("asinh",)),
    _u("arccosh", "torch.acosh", aliases=("acosh",)),
    _u("arctanh", "torch.atanh", aliases=("atanh",)),
    _u("deg2rad", "torch.deg2rad"),
    _u("rad2deg", "torch.rad2deg", note="float32/float16 by NumPy's factor 180.0f / pi_f, bit for bit."),
    _u("radians", "torch.deg2rad"),
    _u("degrees", "torch.rad2deg", note="float32/float16 by NumPy's factor 180.0f / pi_f, bit for bit."),
    _u("floor", "torch.floor"),
    _u("ceil", "torch.ceil"),
    _u("trunc", "torch.trunc"),
    _u("rint", "torch.round", note="Rounds half to even, as NumPy."),
    _u("copysign", "torch.copysign"),
    _u("heaviside", "torch.heaviside"),
    _u("nextafter", "torch.nextafter"),
    _u("ldexp", "torch.ldexp"),
    _u("gcd", "torch.gcd"),
    _u("lcm", "torch.lcm"),
    _u("conjugate", "torch.conj", aliases=("conj",)),
    _u("matmul", "torch.matmul", category="Linear algebra"),
    # comparison and logic
    _u("maximum", "torch.maximum", C),
    _u("minimum", "torch.minimum", C),
    _u("fmax", "torch.fmax", C),
    _u("fmin", "torch.fmin", C),
    _u("equal", "torch.eq", C),
    _u("not_equal", "torch.ne", C),
    _u("less", "torch.lt", C),
    _u("less_equal", "torch.le", C),
    _u("greater", "torch.gt", C),
    _u("greater_equal", "torch.ge", C),
    _u("logical_and", "torch.logical_and", C),
    _u("logical_or", "torch.logical_or", C),
    _u("logical_xor", "torch.logical_xor", C),
    _u("logical_not", "torch.logical_not", C),
    _u("bitwise_and", "torch.bitwise_and", C, note="Bitwise on integers, logical on bools."),
    _u("bitwise_or", "torch.bitwise_or", C, note="Bitwise on integers, logical on bools."),
    _u("bitwise_xor", "torch.bitwise_xor", C, note="Bitwise on integers, logical on bools."),
    _u(
        "invert",
        "torch.bitwise_not",
        C,
        aliases=("bitwise_not", "bitwise_invert"),
        note="Bitwise on integers, logical on bools.",
    ),
    _u("left_shift", "torch.bitwise_left_shift", C, aliases=("bitwise_left_shift",)),
    _u("right_shift", "torch.bitwise_right_shift", C, aliases=("bitwise_right_shift",)),
    _u("isnan", "torch.isnan", C),
    _u("isinf", "torch.isinf", C),
    _u("isfinite", "torch.isfinite", C),
    _u("signbit", "torch.signbit", C),
]

# Ufunc methods (np.add.reduce, np.maximum.accumulate, ...). ``x.sum()`` and
# ``x.prod()`` use these inside NumPy; leapp records them by name instead.
_RED = "Reductions"


def _um(name, torch, note=""):
    return Entry(
        name="numpy." + name,
        torch=torch,
        category=_RED,
        kind="ufunc_method",
        refuse={"where": COMMON_REFUSALS["where"]},
        note=note,
    )


UFUNC_METHODS = [
    _um("add.reduce", "torch.sum"),
    _um("multiply.reduce", "torch.prod"),
    _um("maximum.reduce", "torch.amax"),
    _um("minimum.reduce", "torch.amin"),
    _um("logical_and.reduce", "torch.all"),
    _um("logical_or.reduce", "torch.any"),
    *[_um(f"{n}.reduce", f"torch.{n}", "folded pairwise along the axes (torch has no such reduction): "
          "exact, log2(n) ops") for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor", "fmax", "fmin")],
    _um("add.accumulate", "torch.cumsum"),
    _um("multiply.accumulate", "torch.cumprod"),
    _um("maximum.accumulate", "torch.cummax"),
    _um("minimum.accumulate", "torch.cummin"),
    _um("add.outer", "torch.add"),
    _um("subtract.outer", "torch.sub"),
    _um("multiply.outer", "torch.mul"),
    _um("divide.outer", "torch.div"),
]
