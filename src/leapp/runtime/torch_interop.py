"""TracedTensor: the torch side of a trace.

``torch.from_numpy(x)`` / ``torch.as_tensor(x)`` on a traced array give a
TracedTensor; every torch op on it runs eagerly and is recorded into the same
trace as the op itself (the graph calls exactly what the user called).
``t.numpy()`` gives a TracedNpArray back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import EscapeError, EscapeWarning
from . import record, state
from .adapters import impl
from .dtypes import to_numpy, to_torch
from .ir import user_location

_ESCAPES = {
    torch.Tensor.item: ".item()",
    torch.Tensor.tolist: ".tolist()",
    torch.Tensor.__bool__: "bool() of a traced tensor (an if/while test)",
    torch.Tensor.__float__: "float() of a traced tensor",
    torch.Tensor.__int__: "int() of a traced tensor",
    torch.Tensor.__index__: "a traced tensor used as a Python integer",
}


class TracedTensor(torch.Tensor):
    """A torch.Tensor whose operations are recorded into the active leapp trace."""

    _lp_node: Any  # the ir.Node that made it (set in __new__)

    @staticmethod
    def __new__(cls, data, node):
        out = torch.Tensor._make_subclass(cls, data)
        out._lp_node = node
        return out

    def _lp_numpy(self):
        with torch._C.DisableTorchFunctionSubclass():
            return torch.Tensor.numpy(self.detach())

    def _lp_node_for(self, trace, loc, call):
        return self._lp_node

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        trace = state.current()
        if func is torch.Tensor.numpy and trace is not None:
            self = args[0]
            return record.wrap(self._lp_numpy(), self._lp_node)
        if func in _ESCAPES and trace is not None:
            loc = user_location()
            message = f"{_ESCAPES[func]} at {record.format_loc(loc)}: the value leaves the graph"
            record.report(trace, "escape", _ESCAPES[func], loc, message, EscapeError, EscapeWarning)
        plain_args = [_unwrap(a) for a in args]
        plain_kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*plain_args, **plain_kwargs)
        if trace is None or not _has_tensor(result):
            return result
        loc = user_location()
        ir_args = tuple(_ir(trace, a, loc) for a in args)
        ir_kwargs = {k: _ir(trace, v, loc) for k, v in kwargs.items()}
        if isinstance(result, torch.Tensor):
            node = trace.add("torch", (func, ir_args, ir_kwargs), None, _np_dtype(result), tuple(result.shape), loc)
            return TracedTensor(result, node)
        parent = trace.add("torch", (func, ir_args, ir_kwargs), None, None, None, loc)
        items = [
            TracedTensor(r, trace.add("item", (parent, i), None, _np_dtype(r), tuple(r.shape), loc))
            if isinstance(r, torch.Tensor) else r
            for i, r in enumerate(result)
        ]
        return type(result)(items) if not hasattr(result, "_fields") else type(result)(*items)


def _np_dtype(t):
    return to_numpy(t.dtype)


def _has_tensor(result):
    if isinstance(result, torch.Tensor):
        return True
    return isinstance(result, (tuple, list)) and any(isinstance(r, torch.Tensor) for r in result)


def _unwrap(x):
    if isinstance(x, TracedTensor):
        return x.as_subclass(torch.Tensor)
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _ir(trace, x, loc):
    if isinstance(x, TracedTensor):
        return x._lp_node
    if isinstance(x, torch.Tensor):
        return trace.const(x.detach().cpu().numpy(), loc)
    if isinstance(x, (list, tuple)):
        return type(x)(_ir(trace, v, loc) for v in x)
    return x


@impl("torch")
def torch_op(m, func, args, kwargs):
    # Tensor methods (t.mul, t.__add__) are descriptors of TensorBase that a Proxy
    # is not an instance of: call them as methods, which FX records as call_method.
    owner = getattr(func, "__objclass__", None)
    if owner is not None and issubclass(torch.Tensor, owner) and args:
        return getattr(args[0], func.__name__)(*args[1:], **kwargs)
    if getattr(func, "__qualname__", "").startswith(("Tensor.", "TensorBase.")) and args:
        return getattr(args[0], func.__name__)(*args[1:], **kwargs)
    return func(*args, **kwargs)


@impl("torch.from_numpy", "torch.as_tensor", "torch.tensor")
def from_numpy(m, x, dtype=None, device=None, **kw):
    return m.cast(m.tensor(x), m.dtype)


def traced_tensor(array, name, dtype=None, copy=False):
    """``torch.from_numpy`` / ``torch.as_tensor`` of a TracedNpArray."""
    trace = state.current()
    loc = user_location()
    node = record.node_of_operand(trace, array, loc, name)
    plain = np.ndarray.view(array, np.ndarray)
    data = torch.from_numpy(plain) if not copy else torch.tensor(plain)
    if dtype is not None and to_torch(to_numpy(dtype) if isinstance(dtype, torch.dtype) else dtype) != data.dtype:
        tdtype = dtype if isinstance(dtype, torch.dtype) else to_torch(dtype)
        data = data.to(tdtype)
        node = trace.add("leapp.cast", (node, to_numpy(tdtype)), None, to_numpy(tdtype), tuple(data.shape), loc)
    return TracedTensor(data, node)


record.set_tensor_class(TracedTensor)
