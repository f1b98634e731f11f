"""NumPy dtype <-> torch dtype."""

from __future__ import annotations

import numpy as np
import torch

_array = np.array  # the original, even while leapp.runtime.patches is installed

_NP_TO_TORCH = {
    np.dtype(np.bool_): torch.bool,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.uint16): torch.uint16,
    np.dtype(np.uint32): torch.uint32,
    np.dtype(np.uint64): torch.uint64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.complex64): torch.complex64,
    np.dtype(np.complex128): torch.complex128,
}
_TORCH_TO_NP = {v: k for k, v in _NP_TO_TORCH.items()}


def to_torch(dtype) -> torch.dtype:
    """The torch dtype of NumPy's ``dtype``, whatever its byte order: torch holds values in the
    machine's order (``tensor_from_numpy`` swaps), and ``tensor_to_numpy`` gives NumPy's back."""
    if isinstance(dtype, torch.dtype):
        return dtype
    dtype = np.dtype(dtype)
    try:
        return _NP_TO_TORCH[dtype]
    except KeyError:
        if not dtype.isnative:
            native = dtype.newbyteorder("=")
            if native in _NP_TO_TORCH:
                return _NP_TO_TORCH[native]
        raise TypeError(f"NumPy dtype {dtype} has no torch equivalent") from None


def to_numpy(dtype) -> np.dtype:
    return _TORCH_TO_NP[dtype]


def tensor_from_numpy(array) -> torch.Tensor:
    """A torch tensor holding a copy of ``array`` (any dtype torch supports, 0-d included)."""
    array = _array(array, copy=True, order="C")
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("="))
    return torch.from_numpy(array)


def tensor_to_numpy(tensor, dtype=None) -> np.ndarray:
    out = tensor.detach().cpu().resolve_conj().numpy()
    if dtype is not None and out.dtype != dtype:
        out = out.astype(dtype)
    return out
