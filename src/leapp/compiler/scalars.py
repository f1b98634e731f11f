"""Scalar arguments that leave a graph with no input at all (``f(0.5)``, ``f(3)``).

A NumPy float or complex scalar is a 0-d graph input (``runtime/tracing.is_scalar_input``).
Python numbers and NumPy ints and bools are constants of their graph, one graph per value
(they may set sizes, indices and branches, and a Python float is weakly typed in NumPy). When
such scalars are the function's only arguments, the graph has no input and every output is a
constant of it: not a lost trace inside the function, and not something lint should have
flagged, but a call whose arguments leapp does not take as inputs. That is an ``InputError``
naming each such argument and how to make it an input.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..runtime import tracing


def _specialised(value) -> bool:
    return (isinstance(value, (bool, int, float, complex, np.integer, np.bool_))
            and not tracing.is_scalar_input(value))


def _advice(value) -> str:
    if isinstance(value, (float, np.floating)):
        return "np.float64(...)"
    if isinstance(value, complex):
        return "np.complex128(...)"
    return "np.asarray(...) (a 0-d array)"


def check_inputs(name, traced, args, kwargs, names):
    """Raise when no argument became a graph input and some were specialised scalars."""
    if traced.input_paths:
        return
    given = [(names[i] if i < len(names) else f"argument {i}", v) for i, v in enumerate(args)]
    given += list(kwargs.items())
    scalars = [(port, v) for port, v in given if _specialised(v)]
    if not scalars:
        return
    ports = ", ".join(f"{port!r} ({type(v).__name__} {v!r}: pass {_advice(v)})" for port, v in scalars)
    raise InputError(
        f"leapp.compile({name}): the graph has no input: {ports}. leapp makes NumPy float and complex "
        f"scalars and arrays graph inputs; Python numbers and NumPy ints and bools are constants of "
        f"their graph, one graph per value, so every output here would be a constant")
