"""NumPy callables leapp refuses to trace, each with why and what to do instead.

A call on traced data with no entry at all gets the seed's generic warning;
these entries say more because the reason is known.
"""

from __future__ import annotations

from ._schema import Unsupported

_RANDOM_WHY = ("random numbers drawn while tracing would be frozen into the graph as a "
               "constant: every later call would reuse the same noise")
_RANDOM_INSTEAD = "draw noise outside the traced function and pass it in as an input"

_SIZE_WHY = "the size of the result depends on the data, and that size escapes into Python"

UNSUPPORTED = [
    Unsupported("numpy.random", _RANDOM_WHY, _RANDOM_INSTEAD),
    Unsupported("numpy.unique", _SIZE_WHY,
                "keep shapes static: compare against a fixed set of values with np.isin-style "
                "broadcasting (x[..., None] == values)"),
    Unsupported("numpy.histogram", "binning produces data-dependent bin edges",
                "use fixed edges and np.digitize-style comparisons"),
    Unsupported("numpy.save", "file I/O has no place in a graph", "save outside the traced code"),
    Unsupported("numpy.load", "file I/O has no place in a graph", "load outside the traced code"),
    Unsupported("numpy.savez", "file I/O has no place in a graph", "save outside the traced code"),
    Unsupported("numpy.fromfunction", "calls a Python function on index grids",
                "build the grid with np.meshgrid/np.arange and use array expressions"),
    Unsupported("numpy.vectorize", "runs a Python function element by element",
                "write the function with array operations"),
    Unsupported("numpy.frompyfunc", "runs a Python function element by element",
                "write the function with array operations"),
    Unsupported("numpy.apply_along_axis", "runs a Python function slice by slice",
                "write the function with array operations along the axis"),
    Unsupported("ndarray.item", "returns a Python scalar: the value leaves the graph",
                "keep the 0-d array (x[()] or x.reshape(())) and stay in NumPy operations"),
    Unsupported("ndarray.tolist", "returns Python lists: the values leave the graph",
                "keep the array and use NumPy operations"),
    Unsupported("ndarray.tobytes", "returns raw bytes: the values leave the graph",
                "keep the array"),
    Unsupported("ndarray.resize", "resizes in place with data-dependent fill", "use np.pad or np.resize"),
]
