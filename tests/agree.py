"""One comparison of a compiled function's result with NumPy's, for the tests that need it."""

from __future__ import annotations

import numpy as np


def same(got, want, *, rtol: float, atol: float = 0.0, dtype: bool = True) -> None:
    """``got`` equals ``want`` to ``rtol``/``atol``, tuple by tuple; with ``dtype``, shape and dtype too."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            same(g, w, rtol=rtol, atol=atol, dtype=dtype)
        return
    if dtype:
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype, (got, want)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
