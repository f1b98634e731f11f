"""Torch implementations of the translation table's entries.

An adapter is registered under the table name it implements and is called
once, at lowering time, as ``adapter(m, *args, **kwargs)`` with NumPy's own
signature: ``m`` (a ``build.Ctx``) knows NumPy's result dtype and shape and
the dtype of each operand; traced operands arrive as ``torch.fx.Proxy``.
Adapters are plain torch code, so what they call is what the graph records.

Ufuncs need no adapter of their own unless the generic rule (cast to NumPy's
resolved loop dtypes, call the table's torch function) is not exact.
"""

from __future__ import annotations

import numpy as np
import torch

from ... import table

ADAPTERS: dict = {}


def impl(*names):
    def register(fn):
        for name in names:
            if name in ADAPTERS:
                raise RuntimeError(f"two adapters for {name}")
            ADAPTERS[name] = fn
        return fn

    return register


def torch_callable(dotted: str):
    obj = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def loop_dtypes(m, ufunc, inputs, dtype=None):
    """NumPy's resolved loop dtypes for these operands (NEP 50 included).

    Lowering hands adapters NumPy scalars as Python numbers, which are weak;
    the recorded operand says whether it was a (strongly typed) NumPy scalar:
    float16 - np.float64(0.5) computes in float64.
    """
    raw = getattr(getattr(m, "node", None), "args", None) or ()
    sig = tuple(raw[i].dtype if i < len(raw) and isinstance(raw[i], np.generic) else m.np_dtype(x)
                for i, x in enumerate(inputs))
    return resolve_loop(ufunc, sig, dtype)


def resolve_loop(ufunc, operand_dtypes, dtype=None):
    """The loop ``ufunc(*operands, dtype=dtype)`` runs: ``dtype=`` fixes the output DType of the
    *signature* (np.add(f32, f32, dtype=np.float64) adds in float64), which ``resolve_dtypes`` with
    an output dtype alone does not do (it picks the float32 loop and casts its result)."""
    outs = (None,) * ufunc.nout
    if dtype is None:
        return ufunc.resolve_dtypes(tuple(operand_dtypes) + outs)
    signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    return ufunc.resolve_dtypes(tuple(operand_dtypes) + outs, signature=signature)


_generic_cache: dict = {}


def generic_ufunc(name):
    """The adapter for a plain ufunc entry: cast to loop dtypes, call the torch function."""
    hit = _generic_cache.get(name)
    if hit is not None:
        return hit
    entry = table.lookup(name)
    if not isinstance(entry, table.Entry) or entry.kind != "ufunc":
        return None
    ufunc = getattr(np, name.split(".", 1)[1])
    fn = torch_callable(entry.torch)

    loops_for: dict = {}  # (operand dtypes, dtype=) -> (NumPy's loop dtypes, torch's): a program has few

    def adapter(m, *inputs, dtype=None, casting=None, order=None, subok=None, **kw):
        raw = m.node.args if m.node is not None else ()
        sig = tuple([raw[i].dtype if i < len(raw) and isinstance(raw[i], np.generic) else m.np_dtype(x)
                     for i, x in enumerate(inputs)])  # as loop_dtypes
        key = (sig, dtype)
        hit = loops_for.get(key)
        if hit is None:
            numpy_loops = resolve_loop(ufunc, sig, dtype)
            hit = loops_for[key] = (numpy_loops, [_computable(d, name) for d in numpy_loops])
        numpy_loops, loops = hit
        args = [_scalar_or_tensor(m, fn, i, m.cast(x, loops[i]), loops[i]) for i, x in enumerate(inputs)]
        flip = name in _UINT64_ORDERED and numpy_loops[0] == np.uint64
        if flip:
            args = [_flip(a) for a in args]
        out = m.call(fn, *args)
        if flip and loops[-1] == np.int64:
            out = _flip(out)
        return m.cast(m.mark(out, loops[-1], m.shape), m.dtype)

    _generic_cache[name] = adapter
    return adapter


# Ufuncs whose int64 result has the same bits as the uint64 one (wrapping arithmetic,
# bitwise ops, equality, truth tests); order and division differ past 2**63.
_UINT64_EXACT = {
    "numpy." + n for n in ("add", "subtract", "multiply", "negative", "positive", "square", "bitwise_and",
                           "bitwise_or", "bitwise_xor", "invert", "left_shift", "equal", "not_equal",
                           "logical_and", "logical_or", "logical_xor", "logical_not")
}


# Order of uint64 values is the order of their int64 bits with the top bit flipped.
_UINT64_ORDERED = {"numpy." + n for n in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum",
                                          "fmax", "fmin")}
_TOP_BIT = -(2**63)


def _flip(x):
    if isinstance(x, int):
        return int(np.array(x, np.uint64).astype(np.int64)) ^ _TOP_BIT
    return torch.bitwise_xor(x, _TOP_BIT)


def _computable(dtype, name):
    """The dtype torch computes a NumPy loop dtype in.

    torch's uint16/32/64 are storage-only (no arithmetic kernels). Their values
    fit int64 exactly for uint16/32, so every loop runs there and the cast back
    wraps as NumPy does; uint64 only for the bit-exact ufuncs above and for
    order (compared with the top bit flipped); the others (division, shifts
    right, powers) fail loudly at lowering rather than silently.
    """
    if dtype.kind == "u" and dtype.itemsize > 1 and (dtype.itemsize < 8 or name in _UINT64_EXACT
                                                      or name in _UINT64_ORDERED):
        return np.dtype(np.int64)
    return dtype


# torch functions that accept a Python number as their second operand; every
# other position and function needs a tensor (a 0-d constant at the loop dtype).
_SCALAR_SECOND = {
    torch.add, torch.sub, torch.mul, torch.div, torch.pow, torch.float_power, torch.remainder,
    torch.fmod, torch.floor_divide, torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge,
    torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor, torch.bitwise_left_shift,
    torch.bitwise_right_shift, torch.copysign,
}


def _scalar_or_tensor(m, fn, i, value, dtype):
    if isinstance(value, torch.fx.Proxy) or (i == 1 and fn in _SCALAR_SECOND):
        return value
    return m.tensor(value, dtype)


def may_be_zero(m, x):
    """Whether operand ``x`` may hold a zero: a traced value may; a constant (a number, or a graph
    constant) only if it does. Ties between equal zeros of two signs are the only ones whose
    choice of operand shows (np.maximum, np.clip)."""
    if isinstance(x, torch.fx.Proxy):
        node = x.node
        if node.op != "get_attr":
            return True
        value = getattr(m.builder.root, str(node.target), None)  # a get_attr node's target is its name
        return value is None or bool((value == 0).any())
    if isinstance(x, (complex, np.complexfloating)):
        return False
    return bool(np.any(np.asarray(x) == 0))


def norm_axes(axis, ndim):
    """NumPy's axis argument as a tuple of non-negative ints (None: every axis)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) % max(ndim, 1) for a in axis)
    return (int(axis) % max(ndim, 1),)


from . import (  # noqa: E402,F401
    conversion,
    creation,
    extended,
    fft,
    indexing,
    linalg,
    linalg_ext,
    reductions,
    selection,
    shape,
    signal,
    stats,
    ufuncs,
    windows,
)
