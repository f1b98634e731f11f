"""numpy.linalg beyond norm: inv, det, solve, pinv, cholesky, qr, eigh, svd and friends.

NumPy computes in float64 for integer and bool inputs and keeps float32 as
float32; ``_float`` reproduces that. Tuple-valued results (qr, eigh, svd,
slogdet) are returned as tuples; their items get NumPy's dtypes from the
trace.

A matrix holding inf or NaN gives NaN throughout (``_nonfinite_is_nan``) in inv, solve, det,
slogdet, pinv, cholesky, qr and matrix_power's inverse: which outputs NumPy makes finite there
follows its LAPACK build's pivot search and kernels (OpenBLAS skips a NaN pivot that MKL, torch's
CPU LAPACK, takes), which no graph reproduces in every format.
"""

from __future__ import annotations

import numpy as np
import torch

from ...errors import UnsupportedArgumentError
from . import impl
from .linalg import cross, norm


def _la_dtype(m, a):
    d = m.np_dtype(a)
    return d if d.kind in "fc" else np.dtype(np.float64)


def _float(m, a):
    return m.tensor(m.cast(a, _la_dtype(m, a)))


def _nonfinite_is_nan(m, a, x, fn, ranks):
    """``fn(x)`` with each matrix of ``x`` that holds inf or NaN giving NaN in every output.

    NumPy's answer there is its LAPACK's: OpenBLAS's pivot search skips a NaN that MKL's takes,
    so inv of a matrix with NaN at [0, 0] is NaN in one row in NumPy and in all rows in torch, and
    the ONNX file's elimination (export/lowering.py) differs from both; an inf gives a third
    pattern. One rule holds in the call and in every exported file, whichever LAPACK runs it: a
    matrix that is not finite gives NaN. ``fn`` sees the identity in its place (torch's svd and
    cholesky raise on NaN on CPU). ``x`` is operand ``a`` as ``fn`` takes it; ``ranks``: each output's rank per
    matrix of ``x`` (2 a matrix, 1 a vector, 0 a number); ``fn`` returns one tensor or a tuple.
    """
    finite = torch.isfinite(x).all(-1, keepdim=True).all(-2, keepdim=True)  # (..., 1, 1)
    rows, cols = m.shape_of(a)[-2:]
    eye = torch.eye(rows, cols, dtype=x.dtype)
    out = fn(torch.where(finite, x, eye))
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    poisoned = []
    for value, rank in zip(outs, ranks, strict=True):
        mask = finite if rank == 2 else finite.squeeze(-1) if rank == 1 else finite.squeeze(-1).squeeze(-1)
        poisoned.append(torch.where(mask, value, value * float("nan")))
    return poisoned[0] if single else tuple(poisoned)


def _pair(result):
    return result[0], result[1]  # a traced tuple result cannot be iterated, only indexed


@impl("numpy.linalg.inv")
def inv(m, a):
    return _nonfinite_is_nan(m, a, _float(m, a), torch.linalg.inv, (2,))


@impl("numpy.linalg.det")
def det(m, a):
    return _nonfinite_is_nan(m, a, _float(m, a), torch.linalg.det, (0,))


@impl("numpy.linalg.slogdet")
def slogdet(m, a):
    sign, logabs = _nonfinite_is_nan(m, a, _float(m, a), lambda x: _pair(torch.linalg.slogdet(x)), (0, 0))
    return sign, logabs


@impl("numpy.linalg.solve")
def solve(m, a, b):
    # the rule is a's: inf or NaN in b propagates through the same substitutions in NumPy and torch
    dtype = np.result_type(_la_dtype(m, a), _la_dtype(m, b))
    x, y = m.tensor(m.cast(a, dtype)), m.tensor(m.cast(b, dtype))
    if m.ndim(b) == 1:
        return _nonfinite_is_nan(m, a, x, lambda s: torch.linalg.solve(s, y.unsqueeze(-1)).squeeze(-1), (1,))
    sa, sb = m.shape_of(a), m.shape_of(b)
    if len(sb) == len(sa) - 1:  # torch would read b as a batch of vectors; NumPy 2 reads matrices
        y = torch.broadcast_to(y, (*np.broadcast_shapes(sa[:-2], sb[:-2]), *sb[-2:]))
    return _nonfinite_is_nan(m, a, x, lambda s: torch.linalg.solve(s, y), (2,))


@impl("numpy.linalg.pinv")
def pinv(m, a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    x = _float(m, a)
    shape = m.shape_of(a)
    if rcond is None and rtol is np._NoValue:
        rcond = 1e-15
    elif rcond is None:
        rcond = float(max(shape[-2:]) * np.finfo(_la_dtype(m, a)).eps) if rtol is None else rtol
    if isinstance(rcond, torch.fx.Proxy) or np.ndim(rcond):
        rcond = m.tensor(rcond, _la_dtype(m, a))
    return _nonfinite_is_nan(m, a, x, lambda s: torch.linalg.pinv(s, rtol=rcond, hermitian=bool(hermitian)), (2,))


@impl("numpy.linalg.cholesky")
def cholesky(m, a, /, *, upper=False):
    return _nonfinite_is_nan(m, a, _float(m, a), lambda s: torch.linalg.cholesky(s, upper=bool(upper)), (2,))


@impl("numpy.linalg.qr")
def qr(m, a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedArgumentError(f"mode={mode!r} is not supported; use 'reduced', 'complete' or 'r'")
    if mode == "r":
        return _nonfinite_is_nan(m, a, _float(m, a), lambda s: torch.linalg.qr(s, mode="r")[1], (2,))
    q, r = _nonfinite_is_nan(m, a, _float(m, a), lambda s: _pair(torch.linalg.qr(s, mode=mode)), (2, 2))
    return q, r


@impl("numpy.linalg.eigh")
def eigh(m, a, UPLO="L"):
    w, v = torch.linalg.eigh(_float(m, a), UPLO=UPLO)
    return w, v


@impl("numpy.linalg.eigvalsh")
def eigvalsh(m, a, UPLO="L"):
    return torch.linalg.eigvalsh(_float(m, a), UPLO=UPLO)


@impl("numpy.linalg.svd")
def svd(m, a, full_matrices=True, compute_uv=True, hermitian=False):
    x = _float(m, a)
    if not compute_uv:
        return torch.linalg.svdvals(x)
    u, s, vh = torch.linalg.svd(x, full_matrices=bool(full_matrices))
    return u, s, vh


@impl("numpy.linalg.svdvals")
def svdvals(m, x):
    return torch.linalg.svdvals(_float(m, x))


@impl("numpy.linalg.matrix_rank")
def matrix_rank(m, A, tol=None, hermitian=False, *, rtol=None):
    x = _float(m, A)
    if m.ndim(A) < 2:
        return torch.any(x != 0).to(torch.int64)
    s = torch.linalg.svdvals(x)
    shape = m.shape_of(A)
    smax = torch.amax(s, dim=-1, keepdim=True)
    if tol is None:
        r = float(max(shape[-2:]) * np.finfo(_la_dtype(m, A)).eps if rtol is None else rtol)
        tol_t = smax * r
    else:
        tol_t = m.tensor(tol, _la_dtype(m, A))
        tol_t = tol_t.unsqueeze(-1) if m.ndim(tol_t) else tol_t
    return torch.sum(s > tol_t, dim=-1)


@impl("numpy.linalg.matrix_power")
def matrix_power(m, a, n):
    x = m.tensor(a)
    if n < 0:
        x, n = _nonfinite_is_nan(m, a, _float(m, a), torch.linalg.inv, (2,)), -n
    if n == 0:
        eye = torch.eye(m.shape_of(a)[-1], dtype=m.tdtype)
        return torch.broadcast_to(eye, m.shape).clone()
    # NumPy's binary decomposition, so integer products overflow the same way
    result, z, first = None, x, True
    while n > 0:
        if not first:
            z = torch.matmul(z, z)
        first = False
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else torch.matmul(result, z)
    return result


@impl("numpy.linalg.multi_dot")
def multi_dot(m, arrays, *, out=None):
    parts = [m.tensor(a, m.dtype) for a in arrays]
    first_1d, last_1d = m.ndim(arrays[0]) == 1, m.ndim(arrays[-1]) == 1
    if first_1d:
        parts[0] = parts[0].unsqueeze(0)
    if last_1d:
        parts[-1] = parts[-1].unsqueeze(-1)
    out = torch.linalg.multi_dot(parts)
    return out.reshape(m.shape)


@impl("numpy.linalg.vector_norm")
def vector_norm(m, x, /, *, axis=None, keepdims=False, ord=2):
    t = m.tensor(x, m.dtype)
    if axis is None:
        out = torch.linalg.vector_norm(t.reshape(-1), ord)
        return out.reshape(m.shape) if keepdims else out
    return torch.linalg.vector_norm(t, ord, dim=axis, keepdim=bool(keepdims))


@impl("numpy.linalg.matrix_norm")
def matrix_norm(m, x, /, *, keepdims=False, ord="fro"):
    return norm(m, x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@impl("numpy.linalg.matrix_transpose")
def matrix_transpose(m, x, /):
    return torch.transpose(m.tensor(x), -1, -2)


@impl("numpy.linalg.diagonal")
def la_diagonal(m, x, /, *, offset=0):
    return torch.diagonal(m.tensor(x), offset, -2, -1)


@impl("numpy.linalg.trace")
def la_trace(m, x, /, *, offset=0, dtype=None):
    return torch.sum(torch.diagonal(m.cast(x, m.dtype), offset, -2, -1), -1)


@impl("numpy.linalg.outer")
def la_outer(m, x1, x2, /):
    return torch.outer(m.tensor(x1, m.dtype), m.tensor(x2, m.dtype))


@impl("numpy.linalg.cross")
def la_cross(m, x1, x2, /, *, axis=-1):
    return cross(m, x1, x2, axis=axis)  # NumPy's is np.cross(x1, x2, axis=axis) on 3-vectors


@impl("numpy.linalg.matmul")
def la_matmul(m, x1, x2, /):
    return torch.matmul(m.tensor(x1, m.dtype), m.tensor(x2, m.dtype))


@impl("numpy.linalg.tensordot")
def la_tensordot(m, x1, x2, /, *, axes=2):
    from .linalg import tensordot

    return tensordot(m, x1, x2, axes)


@impl("numpy.linalg.vecdot")
def vecdot(m, x1, x2, /, *, axis=-1, **kw):
    x, y = m.tensor(x1, m.dtype), m.tensor(x2, m.dtype)
    return torch.sum(x * y, dim=axis)
