"""Python's ``math`` functions that leapp records as the matching NumPy op.

``math.sin(x[0])`` on a traced 0-d value would call ``float()`` on it and
leave the graph. The functions listed here compute the same thing as a NumPy
ufunc on float64 (``math`` computes in C doubles), so leapp records that
ufunc instead (``runtime/math_calls.py``), in user code (the rewriter routes
the call) and in library code (``math``'s attributes are wrapped while a trace
is open). Functions whose result is a Python ``int`` or ``bool``
(``floor``, ``ceil``, ``trunc``, ``isnan``...) are not listed: that value
sets sizes and branches, so it stays an escape.

Pure data: no torch, no numpy.
"""

from __future__ import annotations

# math name -> the NumPy ufunc (on float64 operands) that computes it
MATH_FUNCTIONS = {
    "math.sqrt": "numpy.sqrt",
    "math.exp": "numpy.exp",
    "math.expm1": "numpy.expm1",
    "math.log": "numpy.log",  # one argument; log(x, base) is log(x) / log(base)
    "math.log2": "numpy.log2",
    "math.log10": "numpy.log10",
    "math.log1p": "numpy.log1p",
    "math.sin": "numpy.sin",
    "math.cos": "numpy.cos",
    "math.tan": "numpy.tan",
    "math.asin": "numpy.arcsin",
    "math.acos": "numpy.arccos",
    "math.atan": "numpy.arctan",
    "math.sinh": "numpy.sinh",
    "math.cosh": "numpy.cosh",
    "math.tanh": "numpy.tanh",
    "math.asinh": "numpy.arcsinh",
    "math.acosh": "numpy.arccosh",
    "math.atanh": "numpy.arctanh",
    "math.fabs": "numpy.absolute",
    "math.degrees": "numpy.rad2deg",
    "math.radians": "numpy.deg2rad",
    "math.atan2": "numpy.arctan2",
    "math.hypot": "numpy.hypot",  # two arguments; more are a chain of hypot
    "math.pow": "numpy.power",
    "math.copysign": "numpy.copysign",
    "math.fmod": "numpy.fmod",
}
