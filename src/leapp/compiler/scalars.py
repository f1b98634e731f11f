"""Calls whose every argument became a constant of the graph (``f(3)`` with ``n`` a size).

Scalar arguments are graph inputs (``compiler/scalar_inputs.py``) unless the trace reads their
value into Python; then that argument is a constant of its graph, one graph per value. When that
happened to every argument, the graph has no input and every output is a constant of it: not a
lost trace inside the function, but a call whose arguments leapp cannot take as inputs. That is an
``InputError`` naming each such argument and the line that read its value.
"""

from __future__ import annotations

from ..errors import InputError
from ..runtime.ir import format_loc
from ..runtime.tracing import input_name


def check_inputs(name, traced, specialised, names):
    """Raise when no argument became a graph input because scalar arguments were specialised."""
    if traced.input_paths or not specialised:
        return
    ports = "; ".join(f"{input_name(path, names)!r} (its value is read into Python by {construct} at "
                      f"{format_loc(loc)})" for path, (construct, loc) in specialised.items())
    raise InputError(
        f"leapp.compile({name}): the graph has no input: {ports}. A scalar argument whose value the "
        f"function reads into Python (a size, a slice bound, int(), a branch) is a constant of its "
        f"graph, one graph per value, so every output here would be a constant. Compute with the "
        f"value in NumPy (np.where instead of an if, a fixed size), or pass an array the graph reads")
