"""Shape and layout: reshape, transpose, concatenate, split, roll, ..."""

from __future__ import annotations

import numpy as np
import torch

from . import impl, norm_axes
from .stats import constant_value


def _shape_arg(shape):
    if isinstance(shape, (list, tuple)):
        return tuple(int(s) if not isinstance(s, torch.fx.Proxy) else s for s in shape)
    return (int(shape),)


@impl("numpy.reshape")
def reshape(m, a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    return torch.reshape(m.tensor(a), _shape_arg(shape))


@impl("numpy.ravel")
def ravel(m, a, order="C"):
    return torch.reshape(m.tensor(a), (-1,))


@impl("ndarray.flatten")
def flatten(m, a, order="C"):
    return torch.reshape(m.tensor(a), (-1,)).clone()


@impl("numpy.transpose")
def transpose(m, a, axes=None):
    nd = m.ndim(a)
    perm = tuple(reversed(range(nd))) if axes is None else norm_axes(axes, nd)
    return torch.permute(m.tensor(a), perm)


@impl("numpy.squeeze")
def squeeze(m, a, axis=None):
    x = m.tensor(a)
    if axis is None:
        return torch.squeeze(x)
    return torch.squeeze(x, norm_axes(axis, m.ndim(a)))


@impl("numpy.expand_dims")
def expand_dims(m, a, axis):
    x = m.tensor(a)
    out_nd = len(m.shape)
    for d in sorted(norm_axes(axis, out_nd)):
        x = torch.unsqueeze(x, d)
    return x


def _joined(m, arrays):
    return [m.tensor(a, m.dtype) for a in arrays]


@impl("numpy.concatenate")
def concatenate(m, arrays, axis=0, out=None, dtype=None, casting=None):
    parts = _joined(m, arrays)
    if axis is None:
        return torch.cat([p.reshape(-1) for p in parts])
    return torch.cat(parts, axis) if axis != 0 else torch.cat(parts)


@impl("numpy.stack")
def stack(m, arrays, axis=0, out=None, *, dtype=None, casting=None):
    return torch.stack(_joined(m, arrays), axis)


def _atleast(m, x, nd):
    shape = m.shape_of(x)
    x = m.tensor(x)
    if nd == 1 and len(shape) == 0:
        return x.reshape(1)
    if nd == 2 and len(shape) < 2:
        return x.reshape((1, -1) if len(shape) == 1 else (1, 1))
    if nd == 3 and len(shape) < 3:
        if len(shape) == 0:
            return x.reshape(1, 1, 1)
        if len(shape) == 1:
            return x.reshape(1, -1, 1)
        return torch.unsqueeze(x, -1)
    return x


@impl("numpy.hstack")
def hstack(m, tup, *, dtype=None, casting=None):
    tensors = [m.tensor(a, m.dtype) for a in tup]  # a nested item ((angle,)) becomes one tensor here
    axis = 0 if len(m.shape_of(tensors[0])) <= 1 else 1
    return torch.cat([_atleast(m, t, 1) for t in tensors], axis)


@impl("numpy.vstack")
def vstack(m, tup, *, dtype=None, casting=None):
    return torch.cat([_atleast(m, m.tensor(a, m.dtype), 2) for a in tup], 0)


@impl("numpy.block")
def block(m, arrays):
    """NumPy's rule: a nesting depth ``d`` of lists concatenates its innermost lists along the last
    axis, the next along the second last, ...; every item first gets leading axes up to the result's
    number of axes (the larger of ``d`` and the items' own)."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0  # NumPy refuses unequal depths

    def items(x):
        return [leaf for v in x for leaf in items(v)] if isinstance(x, list) else [x]

    lists = depth(arrays)
    ndim = max([lists, *(len(m.shape_of(leaf)) for leaf in items(arrays))])

    def build(x, level):
        if isinstance(x, list):
            return torch.cat([build(v, level + 1) for v in x], level - lists)
        t = m.tensor(x, m.dtype)
        return t[(None,) * (ndim - len(m.shape_of(x)))]  # leading axes, whatever the sizes

    return build(arrays, 0)


@impl("numpy.column_stack")
def column_stack(m, tup):
    parts = []
    for a in tup:
        x = m.tensor(a, m.dtype)
        parts.append(x.reshape(-1, 1) if len(m.shape_of(x)) < 2 else x)
    return torch.cat(parts, 1)


def _atleast_adapter(nd):
    def adapter(m, *arys):
        outs = [_atleast(m, a, nd) for a in arys]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return adapter


impl("numpy.atleast_1d")(_atleast_adapter(1))
impl("numpy.atleast_2d")(_atleast_adapter(2))
impl("numpy.atleast_3d")(_atleast_adapter(3))


def _split(m, ary, indices_or_sections, axis):
    x = m.tensor(ary)
    dim = norm_axes(axis, m.ndim(ary))[0]
    # indices as an array (np.split(x, np.cumsum(dims[:-1])), gymnasium's unflatten) arrive as a
    # graph constant (argcheck refuses traced data): split at its NumPy values
    ios = constant_value(m, indices_or_sections)
    if isinstance(ios, (list, tuple, np.ndarray)):
        # NumPy's own pieces, ary[a:b] between the indices: sliced, so every piece has its static
        # shape (an ONNX file of tensor_split at indices declared each output the shape of the last)
        points = [0, *(int(i) for i in np.asarray(ios).reshape(-1))]
        lead = (slice(None),) * dim
        return tuple(x[lead + (slice(a, b),)] for a, b in zip(points, [*points[1:], None], strict=True))
    return torch.tensor_split(x, int(ios), dim)


@impl("numpy.split")
def split(m, ary, indices_or_sections, axis=0):
    return _split(m, ary, indices_or_sections, axis)


@impl("numpy.array_split")
def array_split(m, ary, indices_or_sections, axis=0):
    return _split(m, ary, indices_or_sections, axis)


@impl("numpy.swapaxes")
def swapaxes(m, a, axis1, axis2):
    return torch.transpose(m.tensor(a), axis1, axis2)


@impl("numpy.moveaxis")
def moveaxis(m, a, source, destination):
    nd = m.ndim(a)
    return torch.movedim(m.tensor(a), norm_axes(source, nd), norm_axes(destination, nd))


@impl("numpy.roll")
def roll(m, a, shift, axis=None):
    x = m.tensor(a)
    if axis is None:
        return torch.roll(x.reshape(-1), shift if isinstance(shift, int) else tuple(shift), 0).reshape(m.shape)
    return torch.roll(x, shift if isinstance(shift, int) else tuple(shift), axis if isinstance(axis, int) else tuple(axis))


@impl("numpy.flip")
def flip(m, a, axis=None):
    return torch.flip(m.tensor(a), norm_axes(axis, m.ndim(a)))


@impl("numpy.broadcast_to")
def broadcast_to(m, array, shape, subok=False):
    return torch.broadcast_to(m.tensor(array), _shape_arg(shape))


@impl("numpy.tile")
def tile(m, A, reps):
    return torch.tile(m.tensor(A), _shape_arg(reps))


@impl("numpy.repeat")
def repeat(m, a, repeats, axis=None):
    x = m.tensor(a)
    if not isinstance(repeats, (int, torch.fx.Proxy)):
        repeats = m.tensor(repeats, "int64")
    elif isinstance(repeats, torch.fx.Proxy):
        repeats = m.cast(repeats, "int64")
    if axis is None:
        return torch.repeat_interleave(x.reshape(-1), repeats, 0)
    return torch.repeat_interleave(x, repeats, norm_axes(axis, m.ndim(a))[0])


# --- views: re-reading a stale view, and writing a view back into its base -----


@impl("leapp.view_shape")
def view_shape(m, base, shape):
    return torch.reshape(base, tuple(shape))


@impl("leapp.view_permute")
def view_permute(m, base, perm):
    return torch.permute(base, tuple(perm))


@impl("leapp.write_shape")
def write_shape(m, base, shape, value):
    return torch.reshape(m.cast(value, m.dtype), tuple(m.shape))


@impl("leapp.write_permute")
def write_permute(m, base, perm, value):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return torch.permute(m.cast(value, m.dtype), tuple(inverse))
