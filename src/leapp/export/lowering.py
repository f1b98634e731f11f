"""Export-time decompositions: torch ops that ONNX lacks, rewritten into ops it has, with NumPy's semantics.

The TorchScript-based ONNX exporter (opset 18) has no symbolic for several
ops leapp records (``expm1``, ``sinh``, ``cosh``, ``trunc``, ``cumprod``,
``deg2rad``, ``hypot``, ``take_along_dim``, ``searchsorted``, ``copysign``,
integer ``bitwise_or``/``bitwise_xor``, ``unfold``, ``sort``), and onnxruntime
differs from NumPy on others: integer ``Div`` truncates where ``//`` floors,
``ArgMax``/``ReduceMax``/``ReduceMin``/``Max``/``Min`` skip NaN where NumPy
propagates it. ``LowerForOnnx`` replaces each such node's target by a
function below, which computes the same values with ops that ONNX has: the
functions run while the exporter traces the module, so they may branch on
dtypes and shapes. Each keeps NumPy's edge semantics (NaN, ±inf, signed
zero, integer rounding and dtypes); ``tests/export`` and
``benchmarks/export_parity.py`` compare every one with NumPy on edge inputs.

Only the ONNX export uses this pass: TorchScript and ``.pt2`` run torch's
own kernels, which leapp's parity tests already hold to NumPy.
"""

from __future__ import annotations

import math
import operator

import torch
import torch.fx

from ..runtime.passes import Pass

LN2 = math.log(2.0)
MAX_UNROLL = 4096  # cumprod along a longer axis would be a graph of that many nodes


def _float(x):
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _common(a, b):
    dt = torch.result_type(a, b)
    a = a.to(dt) if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=dt)
    b = b.to(dt) if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=dt)
    return a, b


def _negative(b):
    """NumPy's signbit for non-NaN values: -0.0 counts as negative (1/-0.0 is -inf)."""
    return (b < 0) | ((b == 0) & (torch.reciprocal(b) < 0))


# --- elementwise math ---------------------------------------------------------------------


def expm1(x):
    if not _float(x):
        return torch.expm1(x)
    u = torch.exp(x)
    um1 = u - 1
    # Kahan's formula: (u - 1) * x / log(u) cancels the rounding of exp where u is near 1
    k = um1 * x / torch.log(u)
    r = where(um1 == -1, um1, k)
    r = where(torch.isinf(u), u, r)
    r = where(u == 1, x, r)  # |x| below half an ulp: x itself
    return where(x == 0, x, r)  # -0.0 kept


def sinh(x):
    if not _float(x):
        return torch.sinh(x)
    a = x.abs()
    t = expm1(a)
    small = (t + t / (t + 1)) * 0.5
    r = where(a > 20, _half_exp(a), small)
    r = where(x < 0, -r, r)
    return where(x == 0, x, r)


def cosh(x):
    if not _float(x):
        return torch.cosh(x)
    a = x.abs()
    e = torch.exp(a)
    return where(a > 20, _half_exp(a), (e + 1 / e) * 0.5)


def _half_exp(a):
    """e^a / 2 where e^a alone overflows (a up to 710.47): e * e / 2 with e = e^(a/2), within 3
    ulps. exp(a - ln 2) was off by up to 250 ulps near 710: a - ln 2 rounds to an ulp of a."""
    e = torch.exp(a * 0.5)
    return (e * 0.5) * e


def trunc(x):
    if not _float(x):
        return x.clone()
    return where(x < 0, ceil(x), floor(x))


def floor(x):
    """onnxruntime's Floor may return +0.0 for -0.0: a zero keeps x itself."""
    if not _float(x):
        return torch.floor(x)
    return where(x == 0, x, torch.floor(x))


def ceil(x):
    """``-floor(-x)``: onnxruntime's Ceil gives +0.0 for -0.5, NumPy -0.0."""
    if not _float(x):
        return torch.ceil(x)
    return -floor(-x)


def round_(x, *, decimals=0):
    """Half to even as NumPy; a zero result keeps the sign of x (onnxruntime's Round drops it)."""
    if not _float(x) or decimals:
        return torch.round(x, decimals=decimals)
    r = torch.round(x)
    return where(r == 0, x * 0.0, r)


def deg2rad(x):
    return x * (math.pi / 180.0)


def rad2deg(x):
    return x * (180.0 / math.pi)


def hypot(a, b):
    a, b = _common(a, b)
    aa, bb = a.abs(), b.abs()
    big = where(aa > bb, aa, bb)
    small = where(aa > bb, bb, aa)
    q = small / where(big == 0, torch.ones_like(big), big)
    r = big * torch.sqrt(1 + q * q)
    r = where(torch.isnan(a) | torch.isnan(b), torch.full_like(r, math.nan), r)
    return where(torch.isinf(a) | torch.isinf(b), torch.full_like(r, math.inf), r)


def copysign(a, b):
    a, b = _common(a, b)
    mag = a.abs()
    return where(_negative(b), -mag, mag)


_NARROW_INTS = (torch.int8, torch.uint8, torch.int16)


def _int_extreme(fn, a, b):
    """Integer max/min (fmax and fmin are the same on integers); ORT has no 8/16-bit Max/Min kernels."""
    a, b = _common(a, b)
    if a.dtype in _NARROW_INTS:
        return fn(a.to(torch.int32), b.to(torch.int32)).to(a.dtype)
    if a.dtype == torch.bool:
        return (torch.logical_or if fn is torch.maximum else torch.logical_and)(a, b)
    return fn(a, b)


def _extreme(a, b, torch_fn, wins, nan_keeps_a):
    """NumPy's max/min of two operands: ``a`` where ``wins(a, b)``, or where ``a`` (maximum/minimum:
    NaN propagates, ORT's Max may drop it) or ``b`` (fmax/fmin: NaN is ignored) is NaN; of two
    equal zeros the second operand wins, as in NumPy's vector loops."""
    if not (_float(a) or _float(b)):
        return _int_extreme(torch_fn, a, b)
    a, b = _common(a, b)
    return where(wins(a, b) | torch.isnan(a if nan_keeps_a else b), a, b)


def maximum(a, b):
    return _extreme(a, b, torch.maximum, operator.gt, nan_keeps_a=True)


def minimum(a, b):
    return _extreme(a, b, torch.minimum, operator.lt, nan_keeps_a=True)


def fmax(a, b):
    return _extreme(a, b, torch.maximum, operator.gt, nan_keeps_a=False)


def fmin(a, b):
    return _extreme(a, b, torch.minimum, operator.lt, nan_keeps_a=False)


_WHERE_VIA = {torch.bool: torch.int32, torch.int8: torch.int32, torch.uint8: torch.int32,
              torch.int16: torch.int32, torch.float16: torch.float32}


def where(cond, a, b):
    """NumPy's where, on what onnxruntime's ``Where`` can do.

    ORT's Where has no bool, int8, uint8, int16 or float16 kernel (widen, choose,
    narrow), and it returns +0.0 where the chosen operand is -0.0: the sign of
    a chosen zero is put back with a multiplication.
    """
    tensors = [x for x in (a, b) if isinstance(x, torch.Tensor)]
    if not tensors:
        return torch.where(cond, a, b)
    dt = torch.result_type(a, b)
    via = _WHERE_VIA.get(dt)
    a = a.to(via or dt) if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=dt).to(via or dt)
    b = b.to(via or dt) if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=dt).to(via or dt)
    r = torch.where(cond, a, b)
    if r.is_floating_point():
        negative = torch.where(cond, _negative(a).to(torch.int32), _negative(b).to(torch.int32))
        lost = (r == 0) & (negative == 1) & ~_negative(r)
        r = r * (1 - 2 * lost.to(r.dtype))
    return r.to(dt) if via is not None else r


def clamp(x, min=None, max=None):
    """torch.clamp as NumPy's clip with two number bounds computes it: a value equal to a bound is
    kept (clip(-0.0, 0.0, 1.0) is -0.0); NaN in x or a bound propagates (ORT's Clip drops it)."""
    r = x
    for bound, below in ((min, operator.lt), (max, operator.gt)):
        if bound is None:
            continue
        if not (_float(r) or isinstance(bound, float)):
            r = torch.clamp(r, min=bound) if below is operator.lt else torch.clamp(r, max=bound)
            continue
        r, b = _common(r, bound)
        r = where(below(r, b) | torch.isnan(b), b, r)
    return r


def add(a, b, *, alpha=None):
    """onnxruntime has no boolean Add or Mul: on bools they are ``or`` and ``and``, as in NumPy."""
    if alpha is None and _bool(a) and _bool(b):
        return torch.logical_or(*_bool_tensors(a, b))
    return torch.add(a, b) if alpha is None else torch.add(a, b, alpha=alpha)


def mul(a, b):
    if _bool(a) and _bool(b):
        return torch.logical_and(*_bool_tensors(a, b))
    return torch.mul(a, b)


def _bool(x):
    return (isinstance(x, torch.Tensor) and x.dtype == torch.bool) or isinstance(x, bool)


def _bool_tensors(a, b):
    """A Python bool operand as a tensor (torch's logical ops take tensors only)."""
    return tuple(x if isinstance(x, torch.Tensor) else torch.tensor(bool(x)) for x in (a, b))


# --- integer and float division -----------------------------------------------------------


def floor_divide(a, b):
    a, b = _common(a, b)
    if not a.is_floating_point():
        # onnxruntime's integer Div truncates toward zero; step down where the signs differ. It
        # also traps on the least integer over -1 (SIGFPE: the process ends): a // -1 is -a, which
        # wraps for the least integer as NumPy's does.
        if a.dtype in (torch.int32, torch.int64):  # (narrower ints divide as 32-bit: no trap)
            minus_one = b == -1
            q = torch.div(a, where(minus_one, torch.ones_like(b), b), rounding_mode="trunc")
            q = where(minus_one, -a, q)
        else:
            q = torch.div(a, b, rounding_mode="trunc")
        r = a - q * b
        return q - ((r != 0) & ((r < 0) != (b < 0))).to(q.dtype)
    # NumPy's npy_divmod: from fmod, so that a // b and a % b agree with each other
    mod = torch.fmod(a, b)
    div = (a - mod) / b
    div = where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = torch.floor(div)
    floor = where(div - floor > 0.5, floor + 1, floor)
    floor = where(div == 0, copysign(torch.zeros_like(div), a / b), floor)
    return where(b == 0, a / b, floor)


def remainder(a, b):
    a, b = _common(a, b)
    if not a.is_floating_point():
        return torch.remainder(a, b)
    mod = torch.fmod(a, b)
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    mod = where(fix, mod + b, mod)
    return where(mod == 0, copysign(torch.zeros_like(mod), b), mod)


# --- bitwise ops: ONNX has them, the exporter only maps the boolean ones ---------------------


def _onnx_binary(onnx_op, torch_op):
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return torch_op(a, b)

        @staticmethod
        def symbolic(g, a, b):
            return g.op(onnx_op, a, b)

    Op.__name__ = onnx_op

    logical = {"BitwiseXor": torch.logical_xor, "BitwiseOr": torch.logical_or,
               "BitwiseAnd": torch.logical_and}[onnx_op]

    def run(a, b):
        a, b = _common(a, b)
        if a.dtype == torch.bool:
            return logical(a, b)
        return Op.apply(a, b)

    run.__name__ = torch_op.__name__
    return run


bitwise_xor = _onnx_binary("BitwiseXor", torch.bitwise_xor)
bitwise_or = _onnx_binary("BitwiseOr", torch.bitwise_or)
bitwise_and = _onnx_binary("BitwiseAnd", torch.bitwise_and)


def _onnx_unary(onnx_op, torch_op, logical=None):
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return torch_op(a)

        @staticmethod
        def symbolic(g, a):
            return g.op(onnx_op, a)

    Op.__name__ = onnx_op

    def run(a):
        if logical is not None and a.dtype == torch.bool:
            return logical(a)
        return Op.apply(a)

    run.__name__ = torch_op.__name__
    return run


bitwise_not = _onnx_unary("BitwiseNot", torch.bitwise_not, torch.logical_not)
_asinh = _onnx_unary("Asinh", torch.asinh)
_acosh = _onnx_unary("Acosh", torch.acosh)
_atanh = _onnx_unary("Atanh", torch.atanh)


# --- float64 trigonometry ------------------------------------------------------------------
# onnxruntime has no double kernel for Tan, Atan, Asin, Acos, Asinh, Acosh or Atanh (it refuses
# to load the file). In float64 they are built here from what it has (Sin, Cos, Exp, Log, Sqrt,
# arithmetic): an arctangent by argument reduction and a rational approximation (the classic
# Cephes scheme, within 1 ulp of NumPy's), and the textbook identities for the others, written
# so that nothing cancels (tests/export/test_float64_trig.py measures them in ulps). float32 and
# float16 keep ONNX's own ops.

_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
           -1.228866684490136173410e2, -6.485021904942025371773e1)
_ATAN_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2)
_TAN_3PI_8 = 2.41421356237309504880
_PI_2_LO = 6.123233995736765886130e-17  # pi/2 - float64(pi/2)
_BIG = 2.0 ** 28  # past this, x*x no longer matters next to x (asinh, acosh)


def _f64(x):
    return isinstance(x, torch.Tensor) and x.dtype == torch.float64


def _lift0d(fn):
    """Run ``fn`` on a 0-d input as shape (1,): the TorchScript-based exporter types arithmetic
    between 0-d tensors as the default float (it Casts float64 operands to float32)."""
    def run(*args):
        if all(not isinstance(a, torch.Tensor) or a.dim() == 0 for a in args):
            return fn(*(a.reshape(1) if isinstance(a, torch.Tensor) else a for a in args)).reshape(())
        return fn(*args)

    run.__name__ = fn.__name__
    return run


def _pick(x, cond, a, b):
    """``a`` where ``cond``, else ``b``; constants become tensors of x's dtype."""
    a = a if isinstance(a, torch.Tensor) else torch.full_like(x, a)
    b = b if isinstance(b, torch.Tensor) else torch.full_like(x, b)
    return where(cond, a, b)


@_lift0d
def _atan64(x):
    ax = x.abs()
    big = ax > _TAN_3PI_8
    mid = (ax > 0.66) & ~big
    r = _pick(x, big, -1.0 / ax, _pick(x, mid, (ax - 1.0) / (ax + 1.0), ax))  # reduced to |r| <= 0.66
    z = r * r
    p = (((_ATAN_P[0] * z + _ATAN_P[1]) * z + _ATAN_P[2]) * z + _ATAN_P[3]) * z + _ATAN_P[4]
    q = ((((z + _ATAN_Q[0]) * z + _ATAN_Q[1]) * z + _ATAN_Q[2]) * z + _ATAN_Q[3]) * z + _ATAN_Q[4]
    tail = r * (z * p / q) + r + _pick(x, big, _PI_2_LO, _pick(x, mid, 0.5 * _PI_2_LO, 0.0))
    return copysign(_pick(x, big, math.pi / 2, _pick(x, mid, math.pi / 4, 0.0)) + tail, x)


def _log1p64(t):
    """log(1 + t) without losing t where it is small (u - 1 is exact; Goldberg's correction)."""
    u = 1.0 + t
    r = torch.log(u) * (t / (u - 1.0))
    r = where(u == 1.0, t, r)
    return where(u == math.inf, u, r)  # log1p(inf) is inf (inf / inf is not); of -inf, NaN


def log1p(x):
    """The exporter writes log1p as Log(1 + x), which loses x where it is small (5% off at 1e-6
    in float32, 0 at 1e-8): Goldberg's correction instead, in every float dtype."""
    return _log1p64(x) if _float(x) else torch.log1p(x)


# sin and cos: onnxruntime's double Sin and Cos are accurate to about 3e-16 absolutely, not
# relatively (thousands of ulps near their zeros: its sin(pi) is -0.0 where NumPy's is 1.2e-16, and
# np.arctan2(np.sin(a), np.cos(a)) at a = pi came out -pi). Reduced by pi/4 in six pieces (24-bit
# pieces, so y * piece is exact for y < 2**29, then the rest), and the classic Cephes polynomials:
# within 2 ulp of NumPy's for |x| < 2**28 (beyond that, ORT's own).
_SIN = (1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
        -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1)
_COS = (-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
        2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2)
_PI_4 = (0.7853981256484985, 3.774894707930798e-08, 2.6951512649788824e-15, 1.6410017079039565e-22,
         6.35327876540338e-30, 6.146665585740604e-37)


def _poly(coefficients, z):
    r = coefficients[0]
    for c in coefficients[1:]:
        r = r * z + c
    return r


def _sincos64(x):
    a = x.abs()
    y = torch.floor(a * (4.0 / math.pi))  # the octant
    j = y - 8.0 * torch.floor(y / 8.0)
    odd = j - 2.0 * torch.floor(j / 2.0) == 1.0
    y = _pick(x, odd, y + 1.0, y)
    j = _pick(x, odd, j + 1.0, j)
    j = _pick(x, j == 8.0, 0.0, j)
    z = a
    for piece in _PI_4:
        z = z - y * piece
    zz = z * z
    s = z + z * zz * _poly(_SIN, zz)
    c = 1.0 - 0.5 * zz + zz * zz * _poly(_COS, zz)
    swap = (j == 2.0) | (j == 6.0)
    s, c = _pick(x, swap, c, s), _pick(x, swap, s, c)
    s = _pick(x, (j >= 4.0) != (x < 0), -s, s)
    c = _pick(x, (j == 2.0) | (j == 4.0), -c, c)
    s = _pick(x, x == 0, x, s)  # sin(-0.0) is -0.0
    near = a < 2.0 ** 28  # NaN and inf too take ORT's (NaN)
    return _pick(x, near, s, torch.sin(x)), _pick(x, near, c, torch.cos(x))


def _sin64(x):
    return _sincos64(x)[0]


def _cos64(x):
    return _sincos64(x)[1]


def _tan64(x):
    s, c = _sincos64(x)
    return s / c


def _asin64(x):
    return _atan64(x / torch.sqrt((1.0 - x) * (1.0 + x)))  # |x| > 1: sqrt of a negative, NaN


def _acos64(x):
    return 2.0 * _atan64(torch.sqrt((1.0 - x) / (1.0 + x)))  # x = -1: atan(inf), so pi


def _asinh64(x):
    a = x.abs()
    a2 = a * a
    small = _log1p64(a + a2 / (1.0 + torch.sqrt(1.0 + a2)))
    mid = torch.log(2.0 * a + 1.0 / (torch.sqrt(a2 + 1.0) + a))
    huge = torch.log(a) + LN2
    return copysign(_pick(x, a > _BIG, huge, _pick(x, a > 2.0, mid, small)), x)


def _acosh64(x):
    t = x - 1.0
    small = _log1p64(t + torch.sqrt(2.0 * t + t * t))
    mid = torch.log(2.0 * x - 1.0 / (x + torch.sqrt(x * x - 1.0)))
    huge = torch.log(x) + LN2
    r = _pick(x, x > _BIG, huge, _pick(x, x > 2.0, mid, small))
    return _pick(x, x < 1.0, math.nan, r)  # the branches above would not all give NaN there


def _atanh64(x):
    a = x.abs()
    small = 0.5 * _log1p64(2.0 * a + 2.0 * a * a / (1.0 - a))
    large = 0.5 * _log1p64(2.0 * a / (1.0 - a))  # a = 1: inf; a > 1: log of a negative, NaN
    return copysign(_pick(x, a < 0.5, small, large), x)


def _float64_form(f64, other):
    """``f64`` where the operand is float64 (on shape (1,) for a 0-d one, see ``_lift0d``), ONNX's
    own op ``other`` for every other dtype."""
    lifted = _lift0d(f64)

    def run(x):
        return lifted(x) if _f64(x) else other(x)

    run.__name__ = other.__name__
    return run


atan, tan = _float64_form(_atan64, torch.atan), _float64_form(_tan64, torch.tan)
sin, cos = _float64_form(_sin64, torch.sin), _float64_form(_cos64, torch.cos)
asin, acos = _float64_form(_asin64, torch.asin), _float64_form(_acos64, torch.acos)
asinh, acosh, atanh = (_float64_form(_asinh64, _asinh), _float64_form(_acosh64, _acosh),
                       _float64_form(_atanh64, _atanh))


def _shift_power(b):
    return torch.pow(torch.tensor(2, dtype=torch.int64), b)


def _shift_operands(a, b):
    dt = torch.result_type(a, b)
    bits = 8 if dt == torch.bool else torch.iinfo(dt).bits
    a = a.to(torch.int64) if isinstance(a, torch.Tensor) else torch.tensor(int(a))
    b = b.to(torch.int64) if isinstance(b, torch.Tensor) else torch.tensor(int(b))
    return a, b, bits, dt


def _unsigned(dt):
    return dt in (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def right_shift(a, b):
    """NumPy's ``>>`` floors (ONNX's division truncates); shifts past the width give 0 or -1.

    Computed on int64 (ONNX's Pow has no narrow integer kernels), cast back.
    """
    a, b, bits, dt = _shift_operands(a, b)
    # a signed value shifted by its width less one or more is its sign (0 or -1); an unsigned one
    # keeps its top bit until a shift by the full width (uint8 200 >> 7 is 1: it was 0)
    # a negative shift is one past the width too: NumPy compares it as an unsigned count
    big = (b >= (bits if _unsigned(dt) else bits - 1)) | (b < 0)
    shifted = floor_divide(a, _shift_power(torch.where(big, torch.zeros_like(b), b)))
    out = torch.where(big, torch.where(a < 0, torch.full_like(a, -1), torch.zeros_like(a)), shifted)
    return out.to(dt)


def left_shift(a, b):
    a, b, bits, dt = _shift_operands(a, b)
    big = (b >= bits) | (b < 0)  # 2**b of a negative b was an integer division by zero in ORT
    shifted = a * _shift_power(torch.where(big, torch.zeros_like(b), b))
    return torch.where(big, torch.zeros_like(shifted), shifted).to(dt)  # the cast wraps, as NumPy


def atan2(y, x):
    """C99's atan2, case by case: quadrants, signed zeros, infinities (the exporter's form gives NaN on inf/inf)."""
    y, x = _common(y, x)
    return _atan2(*torch.broadcast_tensors(y, x))


@_lift0d
def _atan2(y, x):
    pi = math.pi
    sign = torch.where(_negative(y), torch.full_like(y, -1.0), torch.full_like(y, 1.0))
    t = atan(y / x)
    r = where(x > 0, t, where(x < 0, t + sign * pi, sign * (pi / 2)))
    zero_y = y == 0
    r = where(zero_y & (x == 0), where(_negative(x), sign * pi, y), r)
    r = where(zero_y & (x > 0), y, r)
    y_inf, x_inf = torch.isinf(y), torch.isinf(x)
    r = where(y_inf & ~x_inf, sign * (pi / 2), r)
    r = where(y_inf & x_inf, where(x > 0, sign * (pi / 4), sign * (3 * pi / 4)), r)
    r = where(~y_inf & x_inf, where(x > 0, sign * 0.0, sign * pi), r)
    return where(torch.isnan(y) | torch.isnan(x), y + x, r)


def log10(x):
    return torch.log(x) / math.log(10.0) if _float(x) else torch.log10(x)


def log2(x):
    return torch.log(x) / math.log(2.0) if _float(x) else torch.log2(x)


def exp2(x):
    if not _float(x):
        return torch.exp2(x)
    return torch.pow(torch.tensor(2.0, dtype=x.dtype), x)  # exact at integers, as NumPy


def pow_(a, b):
    """Integer powers by repeated squaring on int64 (``Mul`` wraps as NumPy's loop does).

    onnxruntime's integer ``Pow`` with a tensor exponent goes through double: past 2**53 it
    rounds, and on overflow it gives INT64_MIN where NumPy wraps (``(1 - 2**63) ** 2`` is 1 in
    NumPy and -2**63 in the file; a 0-d ``x[0] ** 2`` has such an exponent), and it has no
    narrow integer kernels. One step per bit of the exponent's dtype, so every exponent the
    dtype holds is exact; a negative exponent (NumPy raises) gives torch's value (1 and -1 keep
    their powers, others 0).
    """
    dt = torch.result_type(a, b)
    if dt.is_floating_point or dt.is_complex or dt == torch.bool:
        return torch.pow(a, b)
    base = a.to(torch.int64) if isinstance(a, torch.Tensor) else torch.tensor(int(a))
    if not isinstance(b, torch.Tensor):
        n, out = int(b), torch.ones_like(base)
        if n < 0:
            return torch.pow(a, b)  # a Python exponent: NumPy raises on every input alike
        while n:
            out, base, n = (out * base if n & 1 else out), (base * base if n > 1 else base), n >> 1
        return out.to(dt)
    e = b.to(torch.int64)
    steps = 1 if b.dtype == torch.bool else torch.iinfo(b.dtype).bits - int(b.dtype.is_signed)
    out = torch.ones_like(base * e)
    rest = torch.where(e < 0, torch.zeros_like(e), e)
    for _ in range(steps):
        half = torch.div(rest, 2, rounding_mode="trunc")
        out = torch.where(rest - half * 2 == 1, out * base, out)
        base, rest = base * base, half
    a64 = a.to(torch.int64) if isinstance(a, torch.Tensor) else torch.tensor(int(a))
    odd = e - torch.div(e, 2, rounding_mode="trunc") * 2 != 0
    negative = torch.where(a64 == 1, torch.ones_like(out), torch.where(  # torch's integer a ** -n
        a64 == -1, torch.where(odd, -torch.ones_like(out), torch.ones_like(out)), torch.zeros_like(out)))
    return torch.where(e < 0, negative, out).to(dt)


def inner(a, b):
    """``np.inner`` (ONNX has no ``inner``): a product with a 0-d operand, else a contraction of the
    last axes (tensordot: reshapes and a MatMul)."""
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 1]))


def matmul(a, b):
    """``a @ v`` with a 1-D operand as a product of matrices (``v`` a column, or a row on the left),
    then squeezed: onnxruntime's graph optimiser (level EXTENDED and above, the default) fuses a
    Transpose into the MatMul that reads it and then computes ``R.T @ v`` with a 1-D ``v`` as
    ``R @ v`` (measured on onnxruntime 1.32: modern_robotics' ``TransInv`` came out wrong; right
    with the optimiser off). With both operands at least 2-D the fused product is right."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dim() == 0 or b.dim() == 0:
        return torch.matmul(a, b)
    if b.dim() == 1 and a.dim() >= 2:
        return torch.matmul(a, b.unsqueeze(-1)).squeeze(-1)
    if a.dim() == 1 and b.dim() >= 2:
        return torch.matmul(a.unsqueeze(-2), b).squeeze(-2)
    return torch.matmul(a, b)


def float_power(a, b):
    a = a.to(torch.float64) if isinstance(a, torch.Tensor) else float(a)
    b = b.to(torch.float64) if isinstance(b, torch.Tensor) else float(b)
    return torch.pow(a, b)


def sinc(x):
    y = math.pi * where(x == 0, torch.full_like(x, 1e-20), x)
    return torch.sin(y) / y


def heaviside(x, h):
    x, h = torch.broadcast_tensors(*_common(x, h))
    r = where(x < 0, torch.zeros_like(x), where(x > 0, torch.ones_like(x), h))
    return where(torch.isnan(x), x, r)


def ldexp(x, e):
    if not _float(x):
        return torch.ldexp(x, e)
    return x * torch.pow(torch.tensor(2.0, dtype=x.dtype), e.to(x.dtype) if isinstance(e, torch.Tensor) else float(e))


def signbit(x):
    if x.dtype == torch.bool:
        return torch.zeros_like(x)
    return _negative(x) if _float(x) else x < 0


def positive(x):
    return x.clone()


def logaddexp(a, b, *, base2=False):
    """NumPy's npy_logaddexp: equal operands (infinities too) give x + log 2; NaN propagates."""
    a, b = _common(a, b)
    log2e = 1.0 / math.log(2.0)
    d = a - b
    tail_a = log1p(torch.exp(-d * (math.log(2.0) if base2 else 1.0)))
    tail_b = log1p(torch.exp(d * (math.log(2.0) if base2 else 1.0)))
    if base2:
        tail_a, tail_b = tail_a * log2e, tail_b * log2e
    r = where(d > 0, a + tail_a, where(d <= 0, b + tail_b, d))
    return where(a == b, a + (1.0 if base2 else math.log(2.0)), r)


def logaddexp2(a, b):
    return logaddexp(a, b, base2=True)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _common(a, b)
    finite = torch.isfinite(a) & torch.isfinite(b)
    close = (a == b) | (finite & ((a - b).abs() <= atol + rtol * b.abs()))
    if equal_nan:
        close = close | (torch.isnan(a) & torch.isnan(b))
    return close


def _float_test(name):
    fn = getattr(torch, name)

    def run(x):
        if _float(x):
            return fn(x)
        # onnxruntime has no integer IsNaN/IsInf; integers are never NaN nor infinite
        return torch.ones_like(x, dtype=torch.bool) if name == "isfinite" else torch.zeros_like(x, dtype=torch.bool)

    run.__name__ = name
    return run


isnan_, isinf_, isfinite_ = _float_test("isnan"), _float_test("isinf"), _float_test("isfinite")


def nonzero(x, *, as_tuple=False):
    """onnxruntime's NonZero has no double kernel: test ``!= 0`` first."""
    mask = x if x.dtype == torch.bool else x != 0
    return torch.nonzero(mask, as_tuple=as_tuple)


def squeeze(x, dim=None):
    if isinstance(dim, (tuple, list)):
        return _squeeze(x, tuple(d % max(x.dim(), 1) for d in dim if x.shape[d % max(x.dim(), 1)] == 1))
    return torch.squeeze(x) if dim is None else torch.squeeze(x, dim)


def trace(x):
    n = min(x.shape[0], x.shape[1])
    idx = torch.arange(n)
    return x[idx, idx].sum()


def _cumulative(pick):
    def run(x, dim):
        dim = dim % max(x.dim(), 1)
        n = x.shape[dim] if x.dim() else 1
        if x.dim() == 0 or n == 0:
            return x.clone(), torch.zeros_like(x, dtype=torch.int64)
        if n > MAX_UNROLL:
            raise NotImplementedError(f"a running max/min along {n} elements (more than {MAX_UNROLL})")
        values = [x.narrow(dim, 0, 1)]
        index = [torch.zeros_like(values[0], dtype=torch.int64)]
        for k in range(1, n):
            new, prev = x.narrow(dim, k, 1), values[-1]
            take = pick(new, prev)
            if _float(x):  # NaN wins and stays, as in NumPy's maximum.accumulate
                take = (take | torch.isnan(new)) & ~torch.isnan(prev)
            values.append(where(take, new, prev))
            index.append(torch.where(take, torch.full_like(index[-1], k), index[-1]))
        return torch.cat(values, dim), torch.cat(index, dim)

    return run


cummax = _cumulative(lambda new, prev: new >= prev)
cummin = _cumulative(lambda new, prev: new <= prev)


# --- scans, searches, gathers -------------------------------------------------------------


def any_(x, dim=None, keepdim=False):
    """A count of the true elements: the dynamo exporter's ReduceMax gives True over no elements
    (the least int64 cast to bool), where NumPy's any is False."""
    nonzero = (x != 0).to(torch.int64)
    total = torch.sum(nonzero) if dim is None else torch.sum(nonzero, dim=dim, keepdim=keepdim)
    return total > 0


def cumsum(x, dim, *, dtype=None):
    """onnxruntime's CumSum has no bool, int8, uint8 or int16 kernel: sum those in int64, which is
    what torch.cumsum gives for them anyway (a narrower result dtype wraps, as NumPy's does)."""
    if x.dtype in _NARROW_INTS or x.dtype == torch.bool:
        out = torch.cumsum(x.to(torch.int64), dim)
        return out if dtype is None else out.to(dtype)
    return torch.cumsum(x, dim) if dtype is None else torch.cumsum(x, dim, dtype=dtype)


def _int_flat(x, dim, keepdim, dtype):
    """An integer reduction's operand in int64 (torch.sum/prod's result dtype for integers) or
    ``dtype``, the reduced axes flattened into one last axis, and the result's shape."""
    t = x.to(dtype if dtype is not None else torch.int64)
    nd = t.dim()
    dims = list(range(nd)) if dim is None else [d % max(nd, 1) for d in ((dim,) if isinstance(dim, int) else dim)]
    dims = sorted(set(dims)) if dims else list(range(nd))
    kept = [d for d in range(nd) if d not in dims]
    n = 1
    for d in dims:
        n *= t.shape[d]
    shape = [1 if d in dims else t.shape[d] for d in range(nd)] if keepdim else [t.shape[d] for d in kept]
    flat = t.permute(*kept, *dims).reshape(*[t.shape[d] for d in kept], n) if nd else t.reshape(1)
    return flat, n, shape


def _int_reduction(x, dtype):
    return not (x.is_floating_point() or x.is_complex()) and (dtype is None or not (dtype.is_floating_point or dtype.is_complex))


def sum_(x, dim=None, keepdim=False, *, dtype=None):
    """Integer sums wrap modulo 2**64 as NumPy's do; onnxruntime's ReduceSum saturates (int64
    max + 1 gave int64 max). A CumSum (which wraps) along the flattened axes, its last element."""
    if not _int_reduction(x, dtype):
        if dim is None:
            return torch.sum(x, dtype=dtype)
        return torch.sum(x, dim, keepdim, dtype=dtype)
    flat, n, shape = _int_flat(x, dim, keepdim, dtype)
    if n == 0:
        return torch.zeros(shape, dtype=flat.dtype)
    return torch.cumsum(flat, -1).select(-1, n - 1).reshape(shape)


def prod_(x, dim=None, keepdim=False, *, dtype=None):
    """Integer products wrap modulo 2**64 as NumPy's do; onnxruntime's ReduceProd saturates. A
    tree of Mul (which wraps; the product modulo 2**64 is the same in any order)."""
    if not _int_reduction(x, dtype):
        if dim is None:
            return torch.prod(x, dtype=dtype)
        return torch.prod(x, dim, keepdim, dtype=dtype)
    flat, n, shape = _int_flat(x, dim, keepdim, dtype)
    if n == 0:
        return torch.ones(shape, dtype=flat.dtype)
    while n > 1:
        if n % 2:
            flat = torch.cat([flat, torch.ones_like(flat.narrow(-1, 0, 1))], -1)
            n += 1
        flat = flat.narrow(-1, 0, n // 2) * flat.narrow(-1, n // 2, n // 2)
        n //= 2
    return flat.select(-1, 0).reshape(shape)


def cumprod(x, dim, *, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    dim = dim % max(x.dim(), 1)
    n = x.shape[dim] if x.dim() else 1
    if x.dim() == 0 or n <= 1:
        return x.clone()
    if n > MAX_UNROLL:
        raise NotImplementedError(f"cumprod along an axis of {n} elements (more than {MAX_UNROLL})")
    # sequential products, in NumPy's order (so float rounding and overflow match)
    parts = [x.narrow(dim, 0, 1)]
    for k in range(1, n):
        parts.append(parts[-1] * x.narrow(dim, k, 1))
    return torch.cat(parts, dim)


def take_along_dim(a, idx, dim=None):
    if dim is None:
        a, idx, dim = a.reshape(-1), idx.reshape(-1), 0
    dim = dim % a.dim()
    idx = where(idx < 0, idx + a.shape[dim], idx)  # gather wants them non-negative
    ones_a, ones_i = list(a.shape), list(idx.shape)
    ones_a[dim] = ones_i[dim] = 1
    shape = list(torch.broadcast_shapes(ones_a, ones_i))
    a_shape, i_shape = list(shape), list(shape)
    a_shape[dim], i_shape[dim] = a.shape[dim], idx.shape[dim]
    return torch.gather(a.expand(a_shape), dim, idx.expand(i_shape))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    if sorted_sequence.dim() != 1 or sorter is not None or not isinstance(values, torch.Tensor):
        return torch.searchsorted(sorted_sequence, values, out_int32=out_int32, right=right,
                                  side=side, sorter=sorter)
    right = right or side == "right"
    seq, v = _common(sorted_sequence, values)
    col = v.unsqueeze(-1)
    hits = (seq <= col) if right else (seq < col)
    idx = hits.to(torch.int64).sum(-1)
    if seq.is_floating_point():
        # NaN sorts last: left of a NaN value are the non-NaN elements, right of it all of them
        n = seq.shape[0] if right else (~torch.isnan(seq)).to(torch.int64).sum()
        idx = where(torch.isnan(v), torch.zeros_like(idx) + n, idx)
    return idx.to(torch.int32 if out_int32 else torch.int64)


def _stable_argsort(x, dim):
    """Ascending, stable, NaN last: ONNX TopK breaks ties by the lower index."""
    n = x.shape[dim]
    if x.dtype == torch.bool:
        x = x.to(torch.int32)
    if not x.is_floating_point():
        return torch.topk(x, n, dim, largest=False, sorted=True)[1]
    nan = torch.isnan(x)
    first = torch.topk(where(nan, torch.full_like(x, math.inf), x), n, dim, largest=False, sorted=True)[1]
    flags = torch.gather(nan.to(torch.int32), dim, first)
    second = torch.topk(flags, n, dim, largest=False, sorted=True)[1]
    return torch.gather(first, dim, second)


def argsort(x, dim=-1, descending=False, stable=False):
    if descending or x.dim() == 0:
        return torch.argsort(x, dim=dim, descending=descending, stable=stable)
    return _stable_argsort(x, dim)


def sort(x, dim=-1, descending=False, stable=False):
    if descending or x.dim() == 0:
        return torch.sort(x, dim=dim, descending=descending, stable=stable)
    idx = _stable_argsort(x, dim)
    return torch.gather(x, dim, idx), idx


def _dims(x, dim):
    if dim is None or dim == () or dim == []:
        return tuple(range(x.dim()))
    return tuple(d % x.dim() for d in ((dim,) if isinstance(dim, int) else dim))


def _nan_any(x, dims):
    """Whether each reduced slice holds a NaN, dimensions kept."""
    return torch.isnan(x).to(torch.int32).sum(dims, keepdim=True) > 0


def _squeeze(x, dims):
    for d in sorted(dims, reverse=True):
        x = x.squeeze(d)
    return x


def _arg(fn, x, dim=None, keepdim=False):
    if x.dim() == 0:  # the only index of a 0-d array (ONNX ArgMax refuses rank 0)
        return torch.zeros_like(x, dtype=torch.int64)
    r = fn(x, dim, keepdim)
    if not _float(x):
        return r
    if dim is None:  # over the flattened array
        x, dim, flat = x.reshape(-1), 0, True
    else:
        flat = False
    # (computed with the dimension kept: 0-d operands are retyped by the exporter)
    kept = fn(x, dim, True)
    first_nan = torch.argmax(torch.isnan(x).to(torch.int32), dim, True)
    out = where(_nan_any(x, (dim % x.dim(),)), first_nan, kept)
    if flat:
        return out.reshape([1] * r.dim()) if keepdim else out.squeeze(0)
    return out if keepdim else out.squeeze(dim)


def argmax(x, dim=None, keepdim=False):
    return _arg(torch.argmax, x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg(torch.argmin, x, dim, keepdim)


def _reduce(fn, x, dim=(), keepdim=False):
    if x.dtype == torch.bool or x.dtype in _NARROW_INTS:  # onnxruntime reduces no booleans, no int16
        return fn(x.to(torch.int32), dim, keepdim).to(x.dtype)
    if not _float(x) or x.dim() == 0:
        return fn(x, dim, keepdim)
    dims = _dims(x, dim)
    kept = fn(x, dims, True)
    out = where(_nan_any(x, dims), torch.full_like(kept, math.nan), kept)
    return out if keepdim else _squeeze(out, dims)


def amax(x, dim=(), keepdim=False):
    return _reduce(torch.amax, x, dim, keepdim)


def amin(x, dim=(), keepdim=False):
    return _reduce(torch.amin, x, dim, keepdim)


def mean(x, dim=None, keepdim=False, *, dtype=None):
    """Sum over count: onnxruntime's ReduceMean gives 0 for an empty slice, NumPy NaN."""
    if dtype is not None:
        x = x.to(dtype)
    if x.dim() == 0 or not _float(x):
        return torch.mean(x, dim, keepdim)
    dims = _dims(x, dim)
    count = torch.ones_like(x).sum(dims, keepdim=True)
    out = x.sum(dims, keepdim=True) / count
    return out if keepdim else _squeeze(out, dims)


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Norms 1, -1, inf, -inf as sums and NaN-propagating max/min (the exporter's ReduceMin skips NaN)."""
    if ord not in (1, -1, math.inf, -math.inf) or dtype is not None:
        return torch.linalg.matrix_norm(x, ord, dim, keepdim, dtype=dtype)
    rows, cols = (d % x.dim() for d in dim)
    summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = x.abs().sum(summed, keepdim=True)
    out = amax(sums, over, True) if ord > 0 else amin(sums, over, True)
    return out if keepdim else _squeeze(out, (rows, cols))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """inf/-inf through the NaN-propagating max/min; p-norms with the exponent in x's dtype.

    The exporter writes ``x ** (1/p)`` with a float32 exponent (1/3 as
    0.33333334), which is off by 1e-7 relative in float64.
    """
    if dtype is not None or x.dim() == 0 or not _float(x):
        return torch.linalg.vector_norm(x, ord, dim, keepdim, dtype=dtype)
    dims = _dims(x, dim)
    if ord in (math.inf, -math.inf):
        return (amax if ord > 0 else amin)(x.abs(), dims, keepdim)
    a = x.abs()
    if ord == 2:
        out = torch.sqrt((a * a).sum(dims, keepdim=True))
    elif ord == 1:
        out = a.sum(dims, keepdim=True)
    elif ord == 0:
        out = (x != 0).to(x.dtype).sum(dims, keepdim=True)
    else:
        p = torch.tensor(float(ord), dtype=x.dtype)
        out = torch.pow(torch.pow(a, p).sum(dims, keepdim=True), torch.tensor(1.0, dtype=x.dtype) / p)
    return out if keepdim else _squeeze(out, dims)


MAX_ELIMINATION = 32  # Gauss-Jordan is unrolled: n steps of O(n) graph nodes each


def _eliminate(a, b, factor_only=False):
    """Gauss-Jordan with partial pivoting on ``[a | b]``: returns (solution, pivots, row swaps).

    Unrolled over the (static) matrix size. Partial pivoting, as LAPACK's getrf:
    the values agree with NumPy within rounding for non-singular matrices; a
    singular one gives inf/NaN where NumPy raises LinAlgError. ``factor_only``
    (``det``, ``slogdet``: only the pivots are used): a zero pivot, whose column
    below is zero too, eliminates nothing, as getrf skips it, so the later pivots
    stay finite and the determinant of a singular matrix is 0, not 0/0.
    """
    n = a.shape[-1]
    if n > MAX_ELIMINATION:
        raise NotImplementedError(f"a {n}x{n} matrix (ONNX elimination is unrolled up to {MAX_ELIMINATION})")
    m = torch.cat([a, b], -1)
    rows = torch.arange(n)
    pivots, swaps = [], []
    for k in range(n):
        p = torch.argmax(m[..., k:, k].abs(), -1) + k  # (...)
        order = torch.where(rows == k, p.unsqueeze(-1), torch.where(rows == p.unsqueeze(-1), k, rows))
        m = torch.gather(m, -2, order.unsqueeze(-1).expand(m.shape))
        pivot = m[..., k, k]
        if factor_only:
            zero = (pivot == 0).unsqueeze(-1)
            top = torch.where(zero, m[..., k, :], m[..., k, :] / torch.where(zero, torch.ones_like(pivot.unsqueeze(-1)),
                                                                                pivot.unsqueeze(-1)))
            column = torch.where(zero, torch.zeros_like(m[..., :, k]), m[..., :, k])
        else:
            top = m[..., k, :] / pivot.unsqueeze(-1)
            column = m[..., :, k]
        factors = torch.where(rows == k, torch.zeros_like(m[..., :, k]), column)
        m = m - factors.unsqueeze(-1) * top.unsqueeze(-2)
        m = torch.where((rows == k).unsqueeze(-1), top.unsqueeze(-2), m)
        pivots.append(pivot)
        swaps.append(p != k)
    return m[..., :, n:], torch.stack(pivots, -1), torch.stack(swaps, -1)


def linalg_slogdet(a):
    """(sign, log|det|) from the pivots: a zero pivot gives (0, -inf), as NumPy."""
    _, pivots, swaps = _eliminate(a, a[..., :, :0], factor_only=True)
    flips = swaps.to(torch.int64).sum(-1, keepdim=True) % 2 + (pivots < 0).to(torch.int64).sum(-1, keepdim=True)
    sign = (1 - 2 * (flips % 2)).to(a.dtype) * (pivots != 0).all(-1, keepdim=True).to(a.dtype)
    logabs = torch.log(pivots.abs()).sum(-1, keepdim=True)
    return sign.squeeze(-1), logabs.squeeze(-1)


def diagonal(x, offset=0, dim1=0, dim2=1):
    """A gather of the diagonal (the exporter multiplies by an identity mask: NaN * 0 is NaN)."""
    x = x.movedim((dim1 % x.dim(), dim2 % x.dim()), (-2, -1))
    n1, n2 = x.shape[-2], x.shape[-1]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    steps = torch.arange(length)
    return x[..., steps + max(-offset, 0), steps + max(offset, 0)]


def diag(x, diagonal_=0):
    """The diagonal of a matrix (a gather), or a matrix with a vector on its ``diagonal_``-th diagonal.

    The exporter has no symbolic for the second; it is a gather of the vector and a select against
    zeros (not a product with an identity mask, which would turn the zeros next to an inf or NaN
    into NaN)."""
    if x.dim() == 2:
        return diagonal(x, diagonal_)
    k, length = diagonal_, x.shape[0]
    n = length + abs(k)
    if length == 0:
        return torch.zeros((n, n), dtype=x.dtype)
    rows, cols = torch.arange(n).unsqueeze(1), torch.arange(n).unsqueeze(0)
    on = (cols - rows) == k
    position = (rows if k >= 0 else cols).expand(n, n)  # which element of x lies at (row, col)
    picked = torch.index_select(x, 0, position.clamp(0, max(length - 1, 0)).reshape(-1)).reshape(n, n)
    return where(on, picked, torch.zeros_like(picked))


def linalg_inv(a):
    if a.shape[-1] == 0:
        return torch.linalg.inv(a)
    eye = torch.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)
    return _eliminate(a, eye)[0]


def linalg_solve(a, b, *, left=True):
    if not left or a.shape[-1] == 0:
        return torch.linalg.solve(a, b, left=left)
    vector = b.dim() == a.dim() - 1
    x = _eliminate(a, b.unsqueeze(-1) if vector else b)[0]
    return x.squeeze(-1) if vector else x


def linalg_det(a):
    if a.shape[-1] == 0:
        return torch.linalg.det(a)
    _, pivots, swaps = _eliminate(a, a[..., :, :0], factor_only=True)
    # (dimensions kept: the exporter would retype 0-d float64 products as float32)
    sign = 1 - 2 * (swaps.to(torch.int64).sum(-1, keepdim=True) % 2)
    return (pivots.prod(-1, keepdim=True) * sign.to(a.dtype)).squeeze(-1)


def unfold(x, dimension, size, step):
    """``Tensor.unfold`` as a gather: windows along ``dimension``, each window last."""
    dim = dimension % max(x.dim(), 1)
    n = x.shape[dim]
    count = (n - size) // step + 1
    idx = (torch.arange(count) * step).unsqueeze(1) + torch.arange(size)
    picked = torch.index_select(x, dim, idx.reshape(-1))
    shape = list(x.shape[:dim]) + [count, size] + list(x.shape[dim + 1:])
    return picked.reshape(shape).movedim(dim + 1, -1)


# --- unsigned integers: ONNX carries them, the TorchScript exporter does not ----------------

WIDE = {torch.uint16: torch.int32, torch.uint32: torch.int64, torch.uint64: torch.int64}
_MASK = {torch.uint16: 0xFFFF, torch.uint32: 0xFFFFFFFF}


def to_unsigned(x, dtype):
    """``x.to(uint16/uint32/uint64)`` on the wide signed type that holds its values exactly.

    NumPy wraps modulo 2**bits; so does the mask. uint64 keeps its int64 bits.
    """
    wide = x.to(torch.int64)
    if dtype in _MASK:
        wide = bitwise_and(wide, _MASK[dtype])
    return wide.to(WIDE[dtype])


def u64_to_float(x, dtype):
    """uint64 values, carried as their int64 bits, converted to float ``dtype`` as NumPy rounds
    them (a plain Cast read 2**63 as -2**63). The high and low 32-bit halves are exact in
    float64, so ``hi * 2**32 + lo`` rounds once: exact for float64. For a narrower float, values
    from 2**53 first keep 53 bits rounded to odd (the bits below bit 11 jammed into bit 11), so
    rounding that float64 to float32 is rounding the integer itself, not twice."""
    low = 0xFFFFFFFF
    if dtype != torch.float64:
        big = (x < 0) | (x >= 2**53)
        jam = bitwise_and(x, 0x7FF) != 0
        odd = bitwise_or(bitwise_and(x, -0x800), jam.to(torch.int64) * 0x800)
        x = torch.where(big, odd, x)
    hi = bitwise_and(floor_divide(x, torch.tensor(2**32, dtype=torch.int64)), low)
    lo = bitwise_and(x, low)
    return (hi.to(torch.float64) * 4294967296.0 + lo.to(torch.float64)).to(dtype)


def _cast_target(node):
    """The dtype a ``.to(...)``/``.type(...)`` node casts to, if it is one."""
    if node.op == "call_method" and node.target in ("to", "type"):
        for a in (*node.args[1:], node.kwargs.get("dtype")):
            if isinstance(a, torch.dtype):
                return a
    return None


def _tree_map(fn, value):
    """``fn`` on every leaf of nested tuples and lists, the structure kept (a tuple subclass
    that cannot be rebuilt from its items, such as torch.Size of tensors, becomes a tuple)."""
    if isinstance(value, list):
        return [_tree_map(fn, v) for v in value]
    if isinstance(value, tuple):
        items = [_tree_map(fn, v) for v in value]
        if type(value) is not tuple:
            try:
                return type(value)(items)
            except TypeError:
                pass
        return tuple(items)
    return fn(value)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _is_half(value):
    return isinstance(value, torch.Tensor) and value.dtype == torch.float16


_IN_FLOAT32: dict = {}


def in_float32(fn, halves):
    """``fn`` computed on float32 copies of its float16 operands, its results at the positions
    ``halves`` names (a flat tuple of booleans, one per tensor result) rounded to float16: one
    rounding per NumPy call, as NumPy's float16 loops do (float32 arithmetic, then to float16).

    onnxruntime has few float16 kernels: it runs a chain of float16 ops in float32 and rounds
    once at the end, so ``(x * a + b) * x`` differed from NumPy in the last bits. Explicit casts
    after each op keep each rounding (ORT keeps a Cast to float16 that loses precision).
    """
    key = (fn, halves)
    wrapper = _IN_FLOAT32.get(key)
    if wrapper is None:
        def wrapper(*args, **kwargs):
            def up(v):
                return v.to(torch.float32) if _is_half(v) else v

            out = fn(*_tree_map(up, args), **{k: _tree_map(up, v) for k, v in kwargs.items()})
            flags = iter(halves)

            def down(v):
                if isinstance(v, torch.Tensor) and next(flags, False) and v.dtype == torch.float32:
                    return v.to(torch.float16)
                return v

            return _tree_map(down, out)

        wrapper.__name__ = f"{getattr(fn, '__name__', 'op').strip('_')}_in_float32"
        _IN_FLOAT32[key] = wrapper
    return wrapper


def f64_to_f16(x, *_):
    """float64 rounded to float16 once, as NumPy casts: onnxruntime's Cast goes through float32,
    which rounds twice (1 + 2**-11 + 2**-40 gave 1.0, NumPy 1.001). Where the float32 value is
    half-way between two float16 values and float32 rounded toward one of them, the other is
    NumPy's (the same steps as the graph's leapp.half)."""
    f = x.to(torch.float32)
    h = f.to(torch.float16)
    hf = h.to(torch.float32)
    other = hf + 2 * (f - hf)
    halfway = (f != hf) & (other.to(torch.float16).to(torch.float32) == other)
    toward_other = (x - f.to(torch.float64)) * (other - hf).to(torch.float64) > 0
    return torch.where(halfway & toward_other, other.to(torch.float16), h)


class HalfPerOp(Pass):
    """Every call with a float16 operand and a float16 result computes in float32 and rounds its
    result to float16 (``in_float32``), so the ONNX file rounds after each op as NumPy does; a
    cast from float64 to float16 rounds once (``f64_to_f16``).

    requires: ``values`` (node name -> result, from a run on example inputs).
    ensures: the same values as the graph (torch's float16 kernels also compute in float32 and
    round once per op), with float16 tensors only between ops.
    """

    name = "float16 rounded per op"

    def __init__(self, values):
        self.values = values

    def run(self, gm) -> int:
        changed = 0
        for node in gm.graph.nodes:
            if node.op not in ("call_function", "call_method"):
                continue
            tensors = [v for v in _leaves(self.values.get(node.name)) if isinstance(v, torch.Tensor)]
            if not any(_is_half(v) for v in tensors):
                continue
            source = self.values.get(node.args[0].name) if node.args and isinstance(node.args[0], torch.fx.Node) else None
            if _cast_target(node) == torch.float16 and isinstance(source, torch.Tensor) \
                    and source.dtype == torch.float64:
                node.op, node.target, node.args, node.kwargs = "call_function", f64_to_f16, (node.args[0],), {}
                changed += 1
                continue
            operands = _leaves((node.args, tuple(node.kwargs.values())))
            if not any(isinstance(a, torch.fx.Node) and _is_half(self.values.get(a.name)) for a in operands):
                continue
            fn = node.target if node.op == "call_function" else getattr(torch.Tensor, node.target)
            node.op, node.target = "call_function", in_float32(fn, tuple(_is_half(v) for v in tensors))
            changed += 1
        return changed


class WidenUnsigned(Pass):
    """uint16/32/64 values become int32/int64 inside the graph; the ONNX file's boundary casts back.

    requires: ``leapp_dtype`` meta on placeholders. ensures: no uint16/32/64
    tensor in the graph; ``inputs``/``outputs`` name the boundary values and
    their NumPy dtypes, for ``formats.write_onnx`` to restore.
    """

    name = "widen unsigned integers"

    def __init__(self, output_names):
        self.output_names = list(output_names)
        self.inputs, self.outputs = {}, {}

    def run(self, gm) -> int:
        from ..runtime.dtypes import to_torch

        changed = 0
        for node in list(gm.graph.nodes):
            if node.op == "placeholder":
                dt = node.meta.get("leapp_dtype")
                if dt is not None and to_torch(dt) in WIDE:
                    self.inputs[node.target] = str(dt)
            elif node.op == "get_attr":
                value = getattr(gm, node.target, None)
                if isinstance(value, torch.Tensor) and value.dtype in WIDE:
                    setattr(gm, node.target, value.to(torch.int64).to(WIDE[value.dtype]))
                    changed += 1
            elif node.op == "output":
                values = node.args[0]
                for name, v in zip(self.output_names, values, strict=False):
                    dt = v.meta.get("leapp_dtype") if isinstance(v, torch.fx.Node) else None
                    if dt is not None and to_torch(dt) in WIDE:
                        self.outputs[name] = str(dt)
            else:
                target = _cast_target(node)
                source = node.args[0].meta.get("leapp_dtype") if node.args and isinstance(node.args[0], torch.fx.Node) else None
                if target is not None and target.is_floating_point and source is not None \
                        and to_torch(source) == torch.uint64:
                    node.op, node.target = "call_function", u64_to_float
                    node.args, node.kwargs = (node.args[0], target), {}
                    changed += 1
                    continue
                if target in WIDE:
                    node.op, node.target = "call_function", to_unsigned
                    node.args, node.kwargs = (node.args[0], target), {}
                    changed += 1
                    continue
                new_args = tuple(WIDE.get(a, a) if isinstance(a, torch.dtype) else a for a in node.args)
                new_kwargs = {k: WIDE.get(v, v) if isinstance(v, torch.dtype) else v for k, v in node.kwargs.items()}
                if new_args != node.args or new_kwargs != node.kwargs:
                    node.args, node.kwargs = new_args, new_kwargs
                    changed += 1
        return changed + len(self.inputs) + len(self.outputs)


# --- 0-d values: the exporter's scalar type analysis casts them to float32 / int64 ------------

ELEMENTWISE = {
    torch.add, torch.sub, torch.subtract, torch.mul, torch.multiply, torch.div, torch.true_divide,
    torch.pow, torch.float_power, torch.fmod, torch.eq, torch.ne, torch.lt, torch.le, torch.gt,
    torch.ge, torch.logical_and, torch.logical_or, torch.logical_xor, torch.atan2, torch.logaddexp,
    torch.square,  # a unary op, but the exporter writes it as Mul of the 0-d operand with itself
    torch.logaddexp2, torch.nextafter, torch.ldexp, torch.heaviside, torch.gcd, torch.lcm,
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.pow, operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.and_, operator.or_, operator.xor, operator.neg,
    expm1, sinh, cosh, trunc, ceil, floor, round_, deg2rad, rad2deg, hypot, copysign, maximum, minimum, fmax, fmin,
    floor_divide, remainder, bitwise_xor, bitwise_or, bitwise_and, where, clamp, add, mul,
    atan2, log10, log2, exp2, float_power, pow_, sinc, heaviside, ldexp, signbit, positive, logaddexp,
    logaddexp2, isclose, right_shift, left_shift, bitwise_not, asinh, acosh, atanh,
}
_METHOD_OPS = {"add", "sub", "mul", "div", "pow", "fmod", "eq", "ne", "lt", "le", "gt", "ge", "square",
               "__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rsub__", "__rmul__",
               "__rtruediv__", "__pow__", "__rpow__"}


def on_vectors(fn, *args, **kwargs):
    """``fn`` on 0-d tensors, run on shape (1,) and reshaped back, so ONNX keeps their dtype.

    The TorchScript-based exporter treats a 0-d operand of Add/Sub/Mul/Div/Pow/Mod
    and of comparisons as a Python scalar and casts it to the default dtype:
    ``x.sum() * 2`` of float64 came out float32. With a rank-1 operand it
    keeps the operand's type; the values are the same elementwise.
    """
    vectors = [a.reshape(1) if isinstance(a, torch.Tensor) and a.dim() == 0 else a for a in args]
    out = fn(*vectors, **kwargs)
    return out.reshape(()) if isinstance(out, torch.Tensor) else out


_VECTORIZED: dict = {}


def vectorized(fn):
    """``on_vectors`` bound to ``fn``, one function per op (an FX target; FX cannot print ``fn`` as an argument)."""
    wrapper = _VECTORIZED.get(fn)
    if wrapper is None:
        def wrapper(*args, **kwargs):
            return on_vectors(fn, *args, **kwargs)

        wrapper.__name__ = f"{getattr(fn, '__name__', 'op').strip('_')}_on_vectors"
        _VECTORIZED[fn] = wrapper
    return wrapper


class ScalarsAsVectors(Pass):
    """Elementwise nodes whose tensor operands are all 0-d run on shape (1,) (``on_vectors``).

    requires: ``shapes`` (node name -> result, from a run on example inputs).
    ensures: same values, dtypes and shapes; no 0-d-only arithmetic for the
    exporter to retype.
    """

    name = "0-d operands as vectors"

    def __init__(self, values):
        self.values = values

    def run(self, gm) -> int:
        changed = 0
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in ELEMENTWISE:
                fn = node.target
            elif node.op == "call_method" and node.target in _METHOD_OPS:
                fn = getattr(torch.Tensor, node.target)
            else:
                continue
            out = self.values.get(node.name)
            operands = [self.values.get(a.name) if isinstance(a, torch.fx.Node) else None
                        for a in node.args]
            tensors = [v for v in operands if isinstance(v, torch.Tensor)]
            if not isinstance(out, torch.Tensor) or out.dim() != 0 or not tensors \
                    or any(v.dim() != 0 for v in tensors):
                continue
            node.op, node.target = "call_function", vectorized(fn)
            changed += 1
        return changed


class ZeroDimMasks(Pass):
    """``x[m]`` with a 0-d ``x`` and a 0-d boolean ``m`` runs as ``x.reshape(1)[m.reshape(1)]``:
    the TorchScript-based exporter gives the 0-d form shape (1,) even where ``m`` is False
    (NumPy: shape (0,)), and a masked write into a 0-d array indexes that way too.

    requires: ``values`` (node name -> result, from a run on example inputs).
    ensures: same values and shapes.
    """

    name = "0-d boolean masks"

    def __init__(self, values):
        self.values = values

    def _zero_dim(self, arg, dtype=None):
        value = self.values.get(arg.name) if isinstance(arg, torch.fx.Node) else None
        return isinstance(value, torch.Tensor) and value.dim() == 0 and (dtype is None or value.dtype == dtype)

    def run(self, gm) -> int:
        changed = 0
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target is not operator.getitem or len(node.args) != 2:
                continue
            x, index = node.args
            index = index if isinstance(index, tuple) else (index,)
            if len(index) != 1 or not self._zero_dim(x) or not self._zero_dim(index[0], torch.bool):
                continue
            with gm.graph.inserting_before(node):
                flat = gm.graph.call_function(torch.reshape, (x, (1,)))
                mask = gm.graph.call_function(torch.reshape, (index[0], (1,)))
            flat.meta.update(node.meta)
            mask.meta.update(node.meta)
            node.args = (flat, (mask,))
            changed += 1
        return changed


def run_values(gm, args):
    """Every node's value on ``args`` (tensors and tuples as they are), by node name."""
    values = {}

    class Record(torch.fx.Interpreter):
        def run_node(self, n):
            try:
                v = super().run_node(n)
            except Exception as exc:
                exc.leapp_fx_node = n  # type: ignore[attr-defined]  # the node that failed, for the caller's message
                raise
            values[n.name] = v
            return v

    with torch.no_grad():
        Record(gm).run(*args)
    return values


# --- the pass -----------------------------------------------------------------------------

FUNCTIONS = {
    torch.expm1: expm1, torch.sinh: sinh, torch.cosh: cosh, torch.trunc: trunc, torch.fix: trunc,
    torch.deg2rad: deg2rad, torch.rad2deg: rad2deg, torch.hypot: hypot, torch.copysign: copysign,
    torch.maximum: maximum, torch.minimum: minimum, torch.fmax: fmax, torch.fmin: fmin,
    torch.floor_divide: floor_divide, torch.remainder: remainder,
    torch.bitwise_xor: bitwise_xor, torch.bitwise_or: bitwise_or, torch.bitwise_and: bitwise_and,
    torch.log1p: log1p, torch.any: any_, torch.cumsum: cumsum, torch.cumprod: cumprod, torch.take_along_dim: take_along_dim, torch.searchsorted: searchsorted,
    torch.argsort: argsort, torch.sort: sort, torch.argmax: argmax, torch.argmin: argmin,
    torch.amax: amax, torch.amin: amin, torch.where: where, torch.clamp: clamp, torch.clip: clamp,
    torch.add: add, torch.mul: mul, torch.mean: mean, torch.sum: sum_, torch.prod: prod_, torch.pow: pow_,
    torch.linalg.matrix_norm: matrix_norm, torch.linalg.vector_norm: vector_norm, torch.matmul: matmul,
    torch.bitwise_not: bitwise_not, torch.asinh: asinh, torch.arcsinh: asinh, torch.acosh: acosh,
    torch.arccosh: acosh, torch.atanh: atanh, torch.arctanh: atanh, torch.atan: atan,
    torch.arctan: atan, torch.tan: tan, torch.sin: sin, torch.cos: cos, torch.asin: asin, torch.arcsin: asin, torch.acos: acos,
    torch.arccos: acos,
    torch.bitwise_right_shift: right_shift, torch.bitwise_left_shift: left_shift, torch.atan2: atan2,
    torch.arctan2: atan2, torch.log10: log10, torch.log2: log2, torch.exp2: exp2,
    torch.float_power: float_power, torch.inner: inner, torch.matmul: matmul, torch.sinc: sinc, torch.heaviside: heaviside, torch.ldexp: ldexp,
    torch.signbit: signbit, torch.positive: positive, torch.logaddexp: logaddexp,
    torch.logaddexp2: logaddexp2, torch.isclose: isclose, torch.isnan: isnan_, torch.isinf: isinf_,
    torch.isfinite: isfinite_, torch.nonzero: nonzero, torch.squeeze: squeeze, torch.trace: trace,
    torch.cummax: cummax, torch.cummin: cummin,
    torch.linalg.inv: linalg_inv, torch.linalg.slogdet: linalg_slogdet, torch.diagonal: diagonal, torch.diag: diag, torch.linalg.solve: linalg_solve, torch.linalg.det: linalg_det, torch.ceil: ceil, torch.floor: floor, torch.round: round_,
}
METHODS = {"unfold": unfold, "expm1": expm1, "trunc": trunc, "argsort": argsort, "sort": sort,
           "log1p": log1p, "any": any_, "cumsum": cumsum, "cumprod": cumprod, "argmax": argmax, "argmin": argmin, "amax": amax, "amin": amin,
           "clamp": clamp, "clip": clamp, "mean": mean, "sum": sum_, "prod": prod_,
           "ceil": ceil, "floor": floor, "round": round_, "squeeze": squeeze, "nonzero": nonzero,
           "isnan": isnan_, "isinf": isinf_, "isfinite": isfinite_, "trace": trace,
           "bitwise_not": bitwise_not, "__invert__": bitwise_not, "atan2": atan2, "cummax": cummax,
           "cummin": cummin, "atan": atan, "arctan": atan, "tan": tan, "sin": sin, "cos": cos, "asin": asin,
           "arcsin": asin, "acos": acos, "arccos": acos, "asinh": asinh, "acosh": acosh, "atanh": atanh,
           "log10": log10, "log2": log2, "diagonal": diagonal, "pow": pow_, "__pow__": pow_, "inner": inner,
           "matmul": matmul, "__matmul__": matmul}


class LowerForOnnx(Pass):
    """Nodes whose op ONNX lacks, or runs with other NaN/rounding rules, call the functions above.

    requires: nothing. ensures: the values are those of the original graph
    (as NumPy defines them); each rewritten node is listed in ``notes`` with
    the user's line.
    """

    name = "ONNX decompositions"

    def __init__(self):
        self.notes = []

    def run(self, gm) -> int:
        changed = 0
        for node in gm.graph.nodes:
            new = None
            if node.op == "call_function":
                new = FUNCTIONS.get(node.target)
            elif node.op == "call_method":
                new = METHODS.get(node.target)
            if new is None:
                continue
            node.op, node.target = "call_function", new
            changed += 1
            call = node.meta.get("leapp_call")
            if call:
                self.notes.append(f"{call} at {node.meta.get('leapp_source') or '?'}: "
                                  f"{new.__name__} decomposed for ONNX")
        return changed
