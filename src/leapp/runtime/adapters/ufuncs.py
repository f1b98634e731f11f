"""Ufuncs whose generic translation would differ from NumPy, and ufunc methods."""

from __future__ import annotations

import numpy as np
import torch

from . import ADAPTERS, _computable, generic_ufunc, impl, loop_dtypes, may_be_zero, norm_axes


def _zero_safe(op):
    """Integer division-like ops: NumPy gives 0 for a zero divisor where torch raises."""

    def adapter(m, a, b, dtype=None, **kw):
        ufunc = getattr(np, m.name.split(".", 1)[1])
        if loop_dtypes(m, ufunc, (a, b), dtype)[-1] == np.uint64:
            return _unsigned_divmod(m, a, b, quotient=op is torch.floor_divide)
        loops = [_computable(d, m.name) for d in loop_dtypes(m, ufunc, (a, b), dtype)]
        x, y = m.tensor(m.cast(a, loops[0]), loops[0]), m.cast(b, loops[1])
        if loops[-1].kind not in "iub":
            if loops[-1] == np.float16:
                # NumPy's float16 loops divide in float32 and round once; torch's float16 floor
                # division rounds otherwise (an ulp off in 3 of 10,000 elements)
                out = op(x.to(torch.float32), y.to(torch.float32) if isinstance(y, torch.fx.Proxy) else y)
            else:
                out = op(x, y)
            if op is torch.remainder:  # a zero remainder takes the divisor's sign in NumPy, the dividend's in torch
                out = torch.where(out == 0, torch.copysign(torch.zeros_like(out), m.tensor(y, loops[1])), out)
            if loops[-1] == np.float16:
                out = out.to(torch.float16)
            return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)
        if not isinstance(y, torch.fx.Proxy):
            if y == 0:
                return torch.zeros_like(m.tensor(x), dtype=m.tdtype)
            return m.cast(m.mark(op(x, y), loops[-1], m.shape), m.dtype)
        zero = y == 0
        # y is an FX Proxy here, which stands for a Tensor (torch's stubs know only Tensors)
        safe = torch.where(zero, torch.ones_like(y), y)  # type: ignore[call-overload, arg-type]
        out = torch.where(zero, torch.zeros_like(safe), op(x, safe))  # type: ignore[call-overload]
        return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)

    return adapter


def _u64_bits(m, v):
    """A uint64 operand as int64 holding the same bits (torch has no uint64 arithmetic)."""
    if isinstance(v, torch.fx.Proxy):
        return m.cast(v, np.int64)
    return m.tensor(np.asarray(v).astype(np.uint64).astype(np.int64))


def _unsigned_divmod(m, a, b, quotient):
    """uint64 // and % exactly, on int64 bits: halve the dividend (a logical shift) so the
    signed division is exact, double the quotient, and correct it by at most one. A divisor
    of 2**63 or more divides at most once. Division by zero gives 0, as in NumPy."""
    top = -(2**63)
    x = m.tensor(_u64_bits(m, a))
    y = m.tensor(_u64_bits(m, b))
    zero = y == 0
    y = torch.where(zero, torch.ones_like(y), y)
    big = y < 0
    q_big = (torch.bitwise_xor(x, top) >= torch.bitwise_xor(y, top)).to(torch.int64)
    small = torch.where(big, torch.ones_like(y), y)
    half = torch.bitwise_and(torch.bitwise_right_shift(x, 1), 2**63 - 1)
    q = torch.floor_divide(half, small) * 2
    r = x - q * small
    fix = (torch.bitwise_xor(r, top) >= torch.bitwise_xor(small, top)).to(torch.int64)
    q = torch.where(big, q_big, q + fix)
    r = torch.where(big, x - q_big * y, r - fix * small)
    out = q if quotient else r
    out = torch.where(zero, torch.zeros_like(out), out)
    return m.cast(m.mark(out, np.int64, m.shape), m.dtype)


impl("numpy.floor_divide")(_zero_safe(torch.floor_divide))
impl("numpy.remainder")(_zero_safe(torch.remainder))


def _extreme(name, greater):
    """np.maximum/minimum on float32/float64. Of two equal values NumPy's loops return the second
    operand, torch's kernels the first: the same number unless they are zeros of two signs
    (np.maximum(-0.0, 0.0) is 0.0, torch's -0.0; arctan2 and 1/x tell them apart). Where a tie of
    zeros can happen (both operands may hold a zero) the choice is written out; NaN propagates.
    (float16 loops return the first operand, as torch does; fmax/fmin's choice depends on the
    element's position in NumPy's vector loop, so no graph can follow it: docs/limitations.md.)"""
    ufunc = getattr(np, name.split(".", 1)[1])
    generic = generic_ufunc(name)

    def adapter(m, a, b, dtype=None, **kw):
        loops = loop_dtypes(m, ufunc, (a, b), dtype)
        if loops[-1] not in _SECOND_WINS or not (may_be_zero(m, a) and may_be_zero(m, b)):
            return generic(m, a, b, dtype=dtype, **kw)
        x, y = m.tensor(m.cast(a, loops[0]), loops[0]), m.tensor(m.cast(b, loops[1]), loops[1])
        wins = (x > y) if greater else (x < y)
        out = torch.where(wins | torch.isnan(x), x, y)
        return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)

    return adapter


_SECOND_WINS = (np.dtype(np.float32), np.dtype(np.float64))


impl("numpy.maximum")(_extreme("numpy.maximum", greater=True))
impl("numpy.minimum")(_extreme("numpy.minimum", greater=False))


def _output(m, name, dtype, shape):
    """The adapter context of one output of a two-output ufunc (its node records a tuple)."""
    sub = type(m)(m.builder, m.node)
    sub.name, sub.dtype, sub.shape = name, np.dtype(dtype), tuple(shape)
    return sub


@impl("numpy.divmod")
def divmod_(m, a, b, dtype=None, **kw):
    # NumPy's divmod loop computes what its floor_divide and remainder loops compute
    out = loop_dtypes(m, np.divmod, (a, b), dtype)[-1]
    shape = np.broadcast_shapes(m.shape_of(a), m.shape_of(b))
    quotient = ADAPTERS["numpy.floor_divide"](_output(m, "numpy.floor_divide", out, shape), a, b, dtype=dtype)
    rest = ADAPTERS["numpy.remainder"](_output(m, "numpy.remainder", out, shape), a, b, dtype=dtype)
    return quotient, rest


@impl("numpy.modf")
def modf(m, x, dtype=None, **kw):
    loop = loop_dtypes(m, np.modf, (x,), dtype)[-1]
    t = m.tensor(m.cast(x, loop), loop)
    whole = torch.trunc(t)  # exact; trunc(-0.5) is -0.0
    fraction = torch.where(torch.isinf(t), torch.zeros_like(t), t - whole)  # exact subtraction
    fraction = torch.copysign(fraction, t)  # modf(-3.0) is -0.0, modf(-inf) is -0.0
    shape = m.shape_of(x)
    return m.mark(fraction, loop, shape), m.mark(whole, loop, shape)


@impl("numpy.frexp")
def frexp(m, x, dtype=None, **kw):
    loops = loop_dtypes(m, np.frexp, (x,), dtype)
    mantissa, exponent = torch.frexp(m.tensor(m.cast(x, loops[0]), loops[0]))
    shape = m.shape_of(x)
    return m.mark(mantissa, loops[1], shape), m.mark(exponent, np.int32, shape)


impl("numpy.fmod")(_zero_safe(torch.fmod))


def _rounding(op):
    """floor/ceil/trunc/rint of integers and bools are the identity in NumPy 2."""

    def adapter(m, x, dtype=None, **kw):
        ufunc = getattr(np, m.name.split(".", 1)[1])
        loops = loop_dtypes(m, ufunc, (x,), dtype)
        x = m.cast(x, loops[0])
        if loops[0].kind in "iub":
            return m.cast(x, m.dtype)
        return m.cast(m.mark(op(x), loops[-1], m.shape), m.dtype)

    return adapter


impl("numpy.floor")(_rounding(torch.floor))
impl("numpy.ceil")(_rounding(torch.ceil))
impl("numpy.trunc")(_rounding(torch.trunc))
impl("numpy.rint")(_rounding(torch.round))


@impl("numpy.absolute")
def absolute(m, x, dtype=None, **kw):
    loops = loop_dtypes(m, np.absolute, (x,), dtype)
    x = m.cast(x, loops[0])
    if loops[0].kind in "bu":  # NumPy's bool and unsigned loops are the identity; torch.abs has neither
        return m.cast(x, m.dtype)
    return m.cast(m.mark(torch.abs(x), loops[-1], m.shape), m.dtype)


@impl("numpy.sign")
def sign(m, x, dtype=None, **kw):
    loops = loop_dtypes(m, np.sign, (x,), dtype)
    x = m.cast(x, loops[0])
    if loops[0].kind == "u":  # torch.sign has no uint16/32/64 kernel; an unsigned sign is x != 0
        return m.cast(m.mark((x != 0).to(m.torch_dtype(loops[-1])), loops[-1], m.shape), m.dtype)
    out = torch.sign(x)
    if loops[0].kind in "fc":  # torch.sign(nan) is 0, NumPy's is nan
        out = torch.where(torch.isnan(x), x, out)
    return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)


@impl("numpy.cbrt")
def cbrt(m, x, dtype=None, **kw):
    loop = loop_dtypes(m, np.cbrt, (x,), dtype)[0]
    # torch has no cbrt. float16: |x| ** (1/3) in float32, rounded once (NumPy's loop is float32
    # cbrtf: bit-identical here). float32/float64: in float64 with one Newton step, rounded once;
    # glibc's cbrt is then matched but for rare ulps, and perfect cubes are exact (cbrt(27) is 3,
    # not 3.0000002, which floor() would make 2). NumPy's float32 loop may be SIMD (SVML) code,
    # itself within an ulp of exact. copysign keeps -0.0 (sign(-0.0) * 0 would be 0.0).
    x = m.cast(x, loop)
    if loop == np.float16:
        y = torch.pow(torch.abs(x).to(torch.float32), 1.0 / 3.0)
    else:
        mag = torch.abs(x).to(torch.float64)
        y = torch.pow(mag, 1.0 / 3.0)
        fix = y - (y * y * y - mag) / (3.0 * y * y)
        y = torch.where(torch.isfinite(fix) & (y > 0), fix, y)
    out = torch.copysign(y.to(m.torch_dtype(loop)), x)
    return m.cast(m.mark(out, loop, m.shape), m.dtype)


# |x| from which sinh and cosh are computed as e * e / 2, e = exp(|x| / 2): torch's vectorised
# kernels (16 elements or more) compute exp(|x|), which overflows from 709.78 (float32: 88.72),
# where the result is finite up to 710.47 (89.41): inf where NumPy gives 1.5e308, silently
_HYPERBOLIC_BIG = {np.dtype(np.float64): 709.0, np.dtype(np.float32): 88.0}


def _hyperbolic(op, ufunc, odd):
    def adapter(m, x, dtype=None, **kw):
        loops = loop_dtypes(m, ufunc, (x,), dtype)
        x = m.tensor(m.cast(x, loops[0]), loops[0])
        out = op(x)
        big = _HYPERBOLIC_BIG.get(np.dtype(loops[0]))
        if big is not None:
            a = torch.abs(x)
            e = torch.exp(a * 0.5)  # |x| / 2 is exact; e * e / 2 is within 3 ulps of e^|x| / 2
            far = (e * 0.5) * e
            if odd:
                far = torch.copysign(far, x)
            out = torch.where(a >= big, far, out)
        return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)

    return adapter


impl("numpy.sinh")(_hyperbolic(torch.sinh, np.sinh, odd=True))
impl("numpy.cosh")(_hyperbolic(torch.cosh, np.cosh, odd=False))


@impl("numpy.sqrt")
def sqrt(m, x, dtype=None, **kw):
    # IEEE sqrt is correctly rounded, and NumPy's is; torch's CPU kernel (vectorised math
    # library code) is off by an ulp in about 0.7% of float32 and float64 elements. float32 and
    # float16 take the square root in float64, rounded once: an error of an ulp of float64 never
    # crosses a float32 rounding boundary (sqrt of a float32 is never that close to one), so
    # the result is NumPy's bit for bit. float64 (and complex) stay torch's: within an ulp.
    loops = loop_dtypes(m, np.sqrt, (x,), dtype)
    x = m.cast(x, loops[0])
    if loops[0] in (np.float32, np.float16):
        out = torch.sqrt(x.to(torch.float64)).to(m.torch_dtype(loops[-1]))
    else:
        out = torch.sqrt(m.tensor(x))
    return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)


@impl("numpy.rad2deg", "numpy.degrees")
def rad2deg(m, x, dtype=None, **kw):
    # NumPy's float32 loop multiplies by 180.0f / NPY_PIf, a float32 division (57.295776), not by
    # 180/pi rounded to float32 (57.29578) as torch.rad2deg does; float16 runs the float32 loop
    loops = loop_dtypes(m, np.rad2deg, (x,), dtype)
    x = m.cast(x, loops[0])
    if loops[0] in (np.float32, np.float16):
        factor = float(np.float32(180.0) / np.float32(np.pi))
        out = torch.mul(x.to(torch.float32), factor).to(m.torch_dtype(loops[-1]))
    else:
        out = torch.rad2deg(m.tensor(x))
    return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)


@impl("numpy.reciprocal")
def reciprocal(m, x, dtype=None, **kw):
    x = m.cast(x, loop_dtypes(m, np.reciprocal, (x,), dtype)[0])
    if m.dtype.kind in "iu":
        # integer 1/x truncates: 1 and -1 keep their value, everything else is 0,
        # except 1/0, whose value is whatever this platform's NumPy loop gives
        with np.errstate(all="ignore"):
            at_zero = np.reciprocal(np.zeros((), dtype=m.dtype)).item()
        out = torch.where(x == 1, x, torch.zeros_like(x))
        if m.dtype.kind == "i":
            out = torch.where(x == -1, x, out)
        return torch.where(x == 0, torch.full_like(x, at_zero), out)
    return torch.reciprocal(x)


# --- ufunc methods ------------------------------------------------------------


def _reduce_method(fn_name):
    def adapter(m, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, **kw):
        from .reductions import reduce_with

        return reduce_with(m, fn_name, a, axis, keepdims, initial)

    return adapter


impl("numpy.add.reduce")(_reduce_method("sum"))
impl("numpy.multiply.reduce")(_reduce_method("prod"))
impl("numpy.maximum.reduce")(_reduce_method("amax"))
impl("numpy.minimum.reduce")(_reduce_method("amin"))
impl("numpy.logical_and.reduce")(_reduce_method("all"))
impl("numpy.logical_or.reduce")(_reduce_method("any"))


def _fold(name):
    """``np.bitwise_or.reduce`` and the other reductions torch lacks, as a pairwise fold of the
    binary op: the reduced axes are moved first and flattened, then halved log2(n) times (an odd
    length padded with the ufunc's identity), so values are exact and the graph stays small."""

    def adapter(m, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, **kw):
        from .reductions import wrapping

        ufunc = getattr(np, name)
        op = getattr(torch, name)
        compute = wrapping(m.dtype) if m.dtype.kind in "iu" else m.dtype
        x = m.tensor(m.cast(a, m.dtype))
        x = x if compute == m.dtype else x.to(m.torch_dtype(compute))
        nd, shape = m.ndim(a), tuple(m.shape_of(a))
        dims = norm_axes(axis, nd) if nd else ()
        rest = [d for d in range(nd) if d not in dims]
        n = int(np.prod([shape[d] for d in dims])) if nd else 1
        y = x.permute(*dims, *rest).reshape((n,) + tuple(shape[d] for d in rest)) if nd else x.reshape(1)

        def identity(k):
            value = np.asarray(ufunc.identity if ufunc.identity is not None else 0).astype(m.dtype)
            return m.tensor(np.full((k,) + tuple(shape[d] for d in rest), value, dtype=compute))

        if n == 0:
            y, n = identity(1), 1
        while n > 1:  # the length is known while lowering: the graph has no loop
            if n % 2:  # fmax/fmin have no identity, but are idempotent: repeat the last row
                pad = identity(1) if ufunc.identity is not None else y[n - 1:n]
                y, n = torch.cat([y, pad]), n + 1
            y, n = op(y[0::2], y[1::2]), n // 2
        acc = y[0]
        if initial is not None:
            acc = op(acc, torch.full_like(acc, np.asarray(initial).astype(m.dtype).item()))
        if keepdims and nd:
            acc = acc.reshape(tuple(1 if d in dims else shape[d] for d in range(nd)))
        return m.cast(m.mark(acc, compute, m.shape), m.dtype)

    return adapter


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor", "fmax", "fmin"):
    impl(f"numpy.{_name}.reduce")(_fold(_name))


def _accumulate(kind):
    def adapter(m, a, axis=0, dtype=None, out=None, **kw):
        from .reductions import torch_result, wrapping

        compute = wrapping(m.dtype) if kind in ("cumsum", "cumprod") else m.dtype
        x = m.cast(a, compute)
        if m.ndim(a) == 0:
            return m.cast(x, m.dtype)
        dim = norm_axes(axis, m.ndim(a))[0]
        if kind == "cumsum":
            out = torch.cumsum(x, dim)
        elif kind == "cumprod":
            out = torch.cumprod(x, dim)
        elif kind == "cummax":
            out = torch.cummax(x, dim)[0]
        else:
            out = torch.cummin(x, dim)[0]
        result = torch_result(compute) if kind in ("cumsum", "cumprod") else compute
        return m.cast(m.mark(out, result, m.shape), m.dtype)

    return adapter


impl("numpy.add.accumulate")(_accumulate("cumsum"))
impl("numpy.multiply.accumulate")(_accumulate("cumprod"))
impl("numpy.maximum.accumulate")(_accumulate("cummax"))
impl("numpy.minimum.accumulate")(_accumulate("cummin"))


def _outer(op):
    def adapter(m, a, b, dtype=None, **kw):
        ufunc = getattr(np, m.name.split(".")[1])
        loops = loop_dtypes(m, ufunc, (a, b), dtype)
        x, y = m.tensor(m.cast(a, loops[0]), loops[0]), m.cast(b, loops[1])
        extra = m.ndim(b)
        x = x.reshape(tuple(m.shape_of(a)) + (1,) * extra)
        return m.cast(op(x, y), m.dtype)

    return adapter


impl("numpy.add.outer")(_outer(torch.add))
impl("numpy.subtract.outer")(_outer(torch.sub))
impl("numpy.multiply.outer")(_outer(torch.mul))
impl("numpy.divide.outer")(_outer(torch.div))


@impl("numpy.heaviside")
def heaviside(m, x, h, dtype=None, **kw):
    loops = loop_dtypes(m, np.heaviside, (x, h), dtype)
    x, h = m.tensor(m.cast(x, loops[0]), loops[0]), m.tensor(m.cast(h, loops[1]), loops[1])
    out = torch.heaviside(x, h)  # torch.heaviside(nan, h) is 0, NumPy's is nan
    out = torch.where(torch.isnan(x), x, out)
    return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)


@impl("numpy.power")
def power(m, x, e, dtype=None, **kw):
    from . import generic_ufunc

    scalar_math = kw.pop("scalar_math", False)
    out = generic_ufunc("numpy.power")(m, x, e, dtype=dtype, **kw)
    loops = loop_dtypes(m, np.power, (x, e), dtype)
    # NumPy's float32/float64 loop takes sqrt for an exponent of 0.5 it sees as a scalar (a 0-d
    # exponent, or a one-element one broadcast over more): sqrt(-inf) is nan and sqrt(-0.0) is -0.0
    # where pow gives inf and 0.0. torch.pow does that for a Python 0.5 only, not for a tensor.
    # The ufunc does so for any base, two NumPy scalars included (np.power(s, t)); ``s ** t``
    # between NumPy scalars is NumPy's scalar math, plain C pow (traced.py records it with
    # scalar_math=True).
    if (loops[-1] in (np.float32, np.float64) and isinstance(e, torch.fx.Proxy) and not scalar_math
            and int(np.prod(m.shape_of(e))) == 1 and (m.ndim(e) == 0 or int(np.prod(m.shape)) > 1)):
        base = m.tensor(m.cast(x, loops[0]), loops[0])
        root = m.cast(m.mark(torch.sqrt(base), loops[-1], m.shape_of(x)), m.dtype)
        out = torch.where(m.cast(e, loops[1]) == 0.5, root, out)
    return out
