"""Linear algebra: dot, einsum, tensordot, trace, tril/triu, outer, inner, cross, norm."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...errors import UnsupportedArgumentError
from . import impl, norm_axes


def products(fn):
    """Sum-of-products adapters in NumPy's result dtype.

    torch has no bool matmul/einsum kernels: NumPy's bool product is an OR of
    ANDs, which is an int64 sum of products tested against zero. torch.einsum
    promotes integer sums to int64; NumPy keeps the operand dtype (wrapping the
    same way), so integer results are cast back.
    """

    def adapter(m, *args, **kwargs):
        compute = np.dtype(np.int64) if m.dtype == np.bool_ else m.dtype
        out = fn(m, compute, *args, **kwargs)
        if m.dtype == np.bool_:
            return out != 0
        return out.to(m.tdtype) if m.dtype.kind in "iu" else out

    return adapter


@impl("numpy.matmul")
@products
def matmul(m, compute, a, b, dtype=None, **kw):
    return torch.matmul(m.tensor(a, compute), m.tensor(b, compute))


@impl("numpy.dot")
@products
def dot(m, compute, a, b, out=None):
    x, y = m.tensor(a, compute), m.tensor(b, compute)
    na, nb = m.ndim(a), m.ndim(b)
    if na == 0 or nb == 0:
        return torch.mul(x, y)
    if nb <= 2 and na <= 2 or nb == 1:
        return torch.matmul(x, y)
    return torch.tensordot(x, y, dims=([na - 1], [nb - 2]))


@impl("numpy.einsum")
@products
def einsum(m, compute, subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        raise UnsupportedArgumentError("the interleaved (operand, sublist) form is not supported; use a subscripts string")
    return torch.einsum(subscripts, *[m.tensor(o, compute) for o in operands])


@impl("numpy.tensordot")
@products
def tensordot(m, compute, a, b, axes=2):
    x, y = m.tensor(a, compute), m.tensor(b, compute)
    if isinstance(axes, int):
        return torch.tensordot(x, y, dims=axes)
    left, right = axes
    left = [int(left)] if np.ndim(left) == 0 else [int(i) for i in left]
    right = [int(right)] if np.ndim(right) == 0 else [int(i) for i in right]
    return torch.tensordot(x, y, dims=(left, right))


@impl("numpy.trace")
def trace(m, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from .reductions import torch_result

    x = m.cast(a, m.dtype)
    out = torch.sum(torch.diagonal(x, offset, axis1, axis2), -1)
    return m.cast(m.mark(out, torch_result(m.dtype), m.shape), m.dtype)


def _square(m, x):
    # NumPy masks a 1-D input as the rows of an (n, n) matrix
    t = m.tensor(x)
    return t.expand(tuple(m.shape)) if m.ndim(x) == 1 else t


@impl("numpy.tril")
def tril(m, x, k=0):
    return torch.tril(_square(m, x), k)


@impl("numpy.triu")
def triu(m, x, k=0):
    return torch.triu(_square(m, x), k)


@impl("numpy.outer")
@products
def outer(m, compute, a, b, out=None):
    return torch.outer(m.tensor(a, compute).reshape(-1), m.tensor(b, compute).reshape(-1))


@impl("numpy.inner")
@products
def inner(m, compute, a, b):
    x, y = m.tensor(a, compute), m.tensor(b, compute)
    if m.ndim(a) == 0 or m.ndim(b) == 0:
        return torch.mul(x, y)
    return torch.inner(x, y)


@impl("numpy.cross")
def cross(m, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # NumPy's own sequence (numpy/_core/numeric.py): every product rounded, then every
    # difference. torch.linalg.cross computes a1*b2 - a2*b1 in one kernel that may fuse a
    # multiply into the subtraction (2 to 7 ulps off in float32); separate ops cannot.
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = m.tensor(a, m.dtype), m.tensor(b, m.dtype)
    axisa, axisb = axisa % m.ndim(a), axisb % m.ndim(b)
    # non-negative axes throughout: the ONNX exporter writes movedim(t, -1, 0) as an invalid Transpose
    if axisa != m.ndim(a) - 1:
        x = torch.movedim(x, axisa, m.ndim(a) - 1)
    if axisb != m.ndim(b) - 1:
        y = torch.movedim(y, axisb, m.ndim(b) - 1)
    na, nb = m.shape_of(a)[axisa], m.shape_of(b)[axisb]
    ua, ub = torch.unbind(x, -1), torch.unbind(y, -1)  # one op each, not three indexings (2 us each)
    a2: Any  # None where that operand has two components (then never read)
    b2: Any
    a0, a1, a2 = ua[0], ua[1], ua[2] if na == 3 else None
    b0, b1, b2 = ub[0], ub[1], ub[2] if nb == 3 else None
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    if na == 2:  # a2 = 0
        c0, c1 = a1 * b2, torch.neg(a0 * b2)
    elif nb == 3:
        c0, c1 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    else:  # b2 = 0
        c0, c1 = torch.neg(a2 * b1), a2 * b0
    last = len(m.shape) - 1
    out = torch.stack([c0, c1, a0 * b1 - a1 * b0], dim=last)
    axisc = axisc % len(m.shape)
    return torch.movedim(out, last, axisc) if axisc != last else out


@impl("numpy.linalg.norm")
def norm(m, x, ord=None, axis=None, keepdims=False):
    t = m.tensor(x, m.dtype)
    nd = m.ndim(x)
    if np.dtype(m.dtype) == np.float16:
        half = _half_norm(m, x, t, nd, ord, axis, keepdims)
        if half is not None:
            return half
    if axis is None and (ord is None or nd == 1):
        flat = t.reshape(-1)
        out = torch.linalg.vector_norm(flat, 2 if ord is None else ord)
        return out.reshape((1,) * nd) if keepdims else out
    if axis is None:
        axis = tuple(range(nd))
    dims = norm_axes(axis, nd)
    if len(dims) == 1:
        return torch.linalg.vector_norm(t, 2 if ord is None else ord, dim=dims[0], keepdim=bool(keepdims))
    if ord is None or ord == "fro":
        return torch.sqrt(torch.sum(t * t, dim=dims, keepdim=bool(keepdims)))
    return torch.linalg.matrix_norm(t, ord, dim=dims, keepdim=bool(keepdims))


def _half_norm(m, x, t, nd, ord, axis, keepdims):
    """NumPy's float16 2-norms, step by step (numpy/linalg/_linalg.py): the sum of squares is
    rounded to float16 before its square root, and along an axis the squares are float16 products,
    so both overflow to inf past 65504 (a norm above 256). torch.linalg.vector_norm works in float32
    and rounds once: 300 where NumPy has inf (and 0 after dividing by it). None: not one of these."""
    if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1)):
        flat = t.reshape(-1).to(torch.float32)
        sq = torch.sum(flat * flat).to(torch.float16)  # x.dot(x): float32 products and sum, rounded once
        out = torch.sqrt(sq)
        return out.reshape((1,) * nd) if keepdims else out
    if axis is None or nd == 0:
        return None
    dims = norm_axes(axis, nd)
    if not ((len(dims) == 1 and ord in (None, 2)) or (len(dims) == 2 and ord in (None, "fro", "f"))):
        return None
    from .reductions import reduce_with

    squares = m.mark(t * t, np.float16, m.shape_of(x))  # float16 products, as x.conj() * x
    return torch.sqrt(reduce_with(m, "sum", squares, tuple(dims), keepdims))
