"""Guards and samples: when a call needs a new graph, and inputs to validate a graph on.

A graph is exact for one signature: the shapes and dtypes of its array
inputs, the types of its scalar inputs (Python and NumPy numbers, 0-d inputs;
``compiler/scalar_inputs.py`` adds the values of those the trace read into
Python), and the values of everything else (strings, objects), which tracing
bakes in as constants. ``signature`` is the cache key, like
``torch.compile``'s guards. ``perturb`` makes validation samples of the same
signature whose values cover the example's range and sign, so a value frozen
while tracing shows up as a mismatch.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from ..runtime import tracing
from ..runtime.inputs import check_array_type


def signature(value):
    """A hashable key for a call's arguments (shapes/dtypes for arrays, values for the rest)."""
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray:  # np.matrix, masked arrays: refused, never a plain graph
            check_array_type(value, f"an argument ({_shape_and_dtype(value)})")
        return ("ndarray", value.shape, value.dtype.str)
    if tracing.is_scalar_input(value):  # a graph input (compiler/scalar_inputs.py): keyed by its type
        return ("scalar", type(value).__qualname__, np.asarray(value).dtype.str)
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), str(value.device))
    if isinstance(value, (list, tuple)):
        return (type(value).__qualname__, tuple(signature(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, signature(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:  # an unhashable object: only the same object is the same constant
        return ("object", type(value).__qualname__, id(value))
    # 1 and 1.0 and True compare equal but trace to different dtypes
    return ("value", type(value).__qualname__, exact(value))


def exact(value):
    """``value``, or for a float or complex its repr: 0.0 == -0.0 but they trace to different
    constants (``np.copysign(1.0, s)``), and a NaN is the same constant as any other NaN."""
    if isinstance(value, (float, complex, np.inexact)):
        return _Repr(repr(value))
    return value


class _Repr(str):
    """A float's repr standing for it in a key; ``describe`` shows it as the number."""

    __slots__ = ()

    def __repr__(self):
        return str(self)


def _shape_and_dtype(value) -> str:
    return f"{type(value).__name__} of shape {list(value.shape)}, {value.dtype}"


def describe(key) -> str:
    """A short human form of a signature, for ``cf.report()``."""
    kind = key[0]
    if kind == "ndarray":
        return f"ndarray{list(key[1])} {np.dtype(key[2])}"
    if kind == "tensor":
        return f"Tensor{list(key[1])} {key[2]} on {key[3]}"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in key[1]) + "}"
    if kind == "value":
        return repr(key[2])
    if kind == "scalar":
        return key[1] if key[1] in ("float", "int", "bool", "complex") else f"{key[1]} scalar"
    if kind == "specialised":
        values = ", ".join(f"{name}={value!r}" for name, value in key[2])
        return f"{describe(key[1])} with {values}"
    if kind == "object":
        return f"<{key[1]} object>"
    return "(" + ", ".join(describe(v) for v in key[1]) + ")"


def to_numpy(value):
    """Tensors become NumPy arrays (tracing always runs NumPy); everything else is kept."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    if isinstance(value, (list, tuple)):
        items = [to_numpy(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    return value


def copy_arrays(value):
    """``value`` with every array copied and its containers rebuilt; other objects (``self``, a
    config, a lock it holds) are the same objects: ``copy.deepcopy`` of them may be impossible or
    huge, and the function must see them as the caller passed them."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        items = [copy_arrays(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: copy_arrays(v) for k, v in value.items()}
    return value


def isolated(value):
    """A copy to run the function on without touching the caller's objects: ``copy.deepcopy``
    (a method's ``self`` too, so a check run cannot change it), or where an object cannot be
    deep-copied (it holds a lock, a file, a module) ``copy_arrays``: then that object is shared.

    Plain arrays, numbers and the plain tuples, lists and dicts of them (the usual call) are
    copied directly, as ``deepcopy`` copies them (an object shared twice is copied once), at a
    fraction of its cost."""
    try:
        return _copy_plain(value, {})
    except _NotPlain:
        pass
    try:
        return copy.deepcopy(value)
    except Exception:  # any __deepcopy__/__reduce__ may raise anything: the fallback is still exact
        return copy_arrays(value)


class _NotPlain(Exception):
    pass


_IMMUTABLE = frozenset({int, float, bool, complex, str, bytes, type(None)})


def _copy_plain(value, memo):
    t = type(value)
    if t in _IMMUTABLE or (isinstance(value, np.generic) and not value.dtype.hasobject):
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if t is np.ndarray:
        if value.dtype.hasobject:  # deepcopy copies the objects inside too
            raise _NotPlain
        done = value.copy(order="K")
    elif t is tuple:
        done = tuple([_copy_plain(v, memo) for v in value])
    elif t is list:
        done = memo[id(value)] = []  # registered first, as deepcopy does, for a list inside itself
        done.extend(_copy_plain(v, memo) for v in value)
    elif t is dict:
        done = memo[id(value)] = {}
        for k, v in value.items():
            done[_copy_plain(k, memo)] = _copy_plain(v, memo)
    else:
        raise _NotPlain
    memo[id(value)] = done
    return done


def perturb(value, rng):
    """A copy of ``value`` with every array redrawn: same shape and dtype, similar range."""
    return map_arrays(value, lambda a: _redraw(a, rng))


def redrawn(a, rng):
    """The array ``a`` redrawn as ``perturb`` redraws it, in ``a``'s dtype or one that casts to it
    exactly (a float64 draw for a float32 array: the caller's assignment casts, as astype would)."""
    if a.dtype.kind == "f" and a.size:
        return _uniform(a, rng)
    return _redraw(a, rng)


def _redraw(a, rng):
    if a.size == 0:
        return a.copy()
    kind = a.dtype.kind
    if kind == "b":
        return np.asarray(rng.random(a.shape) < 0.5)  # a 0-d mask stays an array
    if kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        # drawn in the array's own dtype: a uint64 past 2**63 is out of int64's range
        native = a.dtype.newbyteorder("=")
        try:
            drawn = rng.integers(lo, hi, size=a.shape, endpoint=True, dtype=native)
        except (ValueError, OverflowError):  # a range wider than the dtype's (int64 min to max)
            drawn = rng.permutation(a.ravel()).reshape(a.shape)
        return np.asarray(drawn).astype(a.dtype)
    if kind == "f":
        return _uniform(a, rng).astype(a.dtype)
    if kind == "c":
        return (_uniform(a.real, rng) + 1j * _uniform(a.imag, rng)).astype(a.dtype)
    return a.copy()


def _uniform(a, rng):
    """Uniform in [min - span/2, max + span/2], so a wider range and both signs when near zero."""
    low, high = draw_range(a, float(a.min()), float(a.max()))
    # Generator.uniform's own formula, written out so that the check's stacked inputs, drawn for
    # many arrays at once (check._stacks), are these bit for bit on every platform
    return np.asarray(low + (high - low) * rng.random(a.shape))  # a 0-d draw stays an array


def draw_range(a, lo, hi):
    """``(low, high)`` that ``_uniform`` draws the non-empty real array ``a`` in, given its minimum
    ``lo`` and maximum ``hi`` (NaN where ``a`` holds one)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a NaN or an infinity: the range of the rest
        finite = a[np.isfinite(a)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-1.0, 1.0)
    span = hi - lo
    if span == 0.0:
        span = max(abs(lo), 1.0)
    low, high = lo - span / 2, hi + span / 2
    if not math.isfinite(high - low):  # values near float64's limits: redraw inside their own range
        low, high = lo / 2, hi / 2
    return low, high


def map_arrays(value, fn):
    """``value`` with every ndarray in it (in lists, tuples, named tuples, dicts) replaced by ``fn(array)``."""
    if isinstance(value, np.ndarray):
        return fn(value)
    if isinstance(value, (list, tuple)):
        items = [map_arrays(v, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: map_arrays(v, fn) for k, v in value.items()}
    return value
