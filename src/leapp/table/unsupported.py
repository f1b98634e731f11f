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
                "keep shapes static: mask with np.where(mask, x, fill), or compare against a fixed "
                "set of values (x[..., None] == values)"),
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


def _group(names, reason, instead):
    return [Unsupported("numpy." + n, reason, instead) for n in names.split()]


_NOT_YET = "no translation in leapp's table yet"

# Every other public callable of ``numpy`` and ``numpy.linalg``, grouped by why it
# is not traced; ``tests/runtime/test_table_completeness.py`` keeps this list complete.
UNSUPPORTED += [
    *_group("array2string array_repr array_str format_float_positional format_float_scientific base_repr "
            "binary_repr datetime_as_string", "formats values as text: the values leave the graph",
            "format the graph's outputs after it runs"),
    *_group("fromfile frombuffer fromiter fromregex fromstring genfromtxt loadtxt savetxt savez_compressed memmap "
            "from_dlpack", "reads or writes files, bytes or foreign buffers, which a graph cannot do",
            "do I/O outside the traced function and pass arrays in"),
    *_group("info show_config show_runtime test get_include linalg.test", "a NumPy utility, not a computation",
            "call it outside the traced function"),
    *_group("busday_count busday_offset busdaycalendar is_busday datetime64 timedelta64 datetime_data isnat",
            "dates and times have no torch dtype", "convert dates to integer offsets before tracing"),
    *_group("bytes_ str_ object_ void record recarray matrix asmatrix bmat",
            "strings, objects, records and np.matrix have no torch equivalent",
            "use plain numeric ndarrays (and @ for matrix products)"),
    *_group("float128 longdouble complex256 clongdouble", "extended precision has no torch dtype",
            "use np.float64 / np.complex128"),
    *_group("longlong ulonglong", "a separate C type NumPy keeps beside int64/uint64",
            "use np.int64 / np.uint64"),
    *_group("unique_all unique_counts unique_inverse unique_values intersect1d setdiff1d setxor1d union1d "
            "compress extract trim_zeros bincount histogram2d histogramdd histogram_bin_edges",
            _SIZE_WHY, "keep shapes static: use a mask with np.where(mask, x, fill), or fixed bins"),
    *_group("apply_over_axes piecewise", "calls a Python function on the data",
            "write the function with array operations (np.where for piecewise definitions)"),
    *_group("nditer ndenumerate ndindex nested_iters flatiter", "iterates element by element in Python",
            "use whole-array operations"),
    *_group("asarray_chkfinite real_if_close", "raises or changes dtype depending on the values",
            "check np.isfinite(x).all() outside the graph; use np.real explicitly"),
    *_group("nanargmax nanargmin", _NOT_YET, "np.argmax(np.where(np.isnan(x), -np.inf, x)) (argmin: +inf)"),
    *_group("nanmedian nanpercentile nanquantile", _NOT_YET,
            "sort with NaNs last and index with a count from np.sum(~np.isnan(x)), or clean NaNs first"),
    *_group("nanstd nanvar", _NOT_YET,
            "np.nanmean((x - np.nanmean(x, axis, keepdims=True)) ** 2, axis) (then np.sqrt for nanstd)"),
    *_group("poly poly1d polyadd polyder polydiv polyfit polyint polymul polysub polyval roots", _NOT_YET,
            "evaluate polynomials with Horner's rule in array operations; fit coefficients outside the graph"),
    *_group("cov corrcoef", _NOT_YET, "center with np.mean and use matmul: d = x - x.mean(1, keepdims=True); "
            "d @ d.T / (n - 1)"),
    *_group("trapezoid gradient", _NOT_YET, "use np.diff and slices: np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2"),
    *_group("lexsort sort_complex", _NOT_YET, "chain stable np.argsort calls, last key first"),
    *_group("select choose", _NOT_YET, "nest np.where(cond, a, b) calls"),
    *_group("array_equiv put", _NOT_YET,
            "np.all(a == b) for array_equiv; np.put_along_axis on x.ravel() for put"),
    *_group("delete insert place resize unstack require asfortranarray astype", _NOT_YET,
            "use slicing with np.concatenate, np.where for masked writes, x.astype(dtype) for casts"),
    *_group("ravel_multi_index unravel_index", _NOT_YET, "compute flat indices with arithmetic (i * ncols + j, "
            "i // ncols, i % ncols)"),
    *_group("bitwise_count spacing i0 packbits unpackbits", _NOT_YET, "no torch equivalent"),
    *_group("geomspace logspace vander", _NOT_YET,
            "build from np.linspace/np.arange: 10 ** np.linspace(a, b, n); x[:, None] ** np.arange(n)[::-1]"),
    *_group("matvec vecmat", _NOT_YET, "use np.matmul (or @) with an added axis"),
    *_group("linalg.eig linalg.eigvals", "general eigenvalues are complex with no defined order",
            "for symmetric matrices use np.linalg.eigh / eigvalsh"),
    *_group("linalg.lstsq linalg.tensorinv linalg.tensorsolve linalg.cond", _NOT_YET,
            "lstsq: np.linalg.pinv(a) @ b; reshape tensors and use inv/solve; cond: ratio of np.linalg.svd values"),
    *[Unsupported("numpy." + sub, "a NumPy submodule leapp does not trace", "compute with traced top-level functions")
      for sub in ("fft", "polynomial", "ma", "char", "strings", "rec", "testing", "emath", "ctypeslib")],
]
