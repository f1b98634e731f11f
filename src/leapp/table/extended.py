"""Entries beyond the seed's table: statistics, signal helpers, more linear algebra.

Each entry is implemented by an adapter in ``leapp.runtime.adapters``
(``stats.py``, ``linalg_ext.py``, ``signal.py``, ``extended.py``) and tested
against NumPy in ``tests/runtime/test_parity_extended*.py``. Where an entry's
graph can differ from NumPy (sign conventions, ties, unspecified orders) the
note says how.
"""

from __future__ import annotations

from dataclasses import replace

from ._schema import COMMON_REFUSALS, Entry
from .functions import CR, CV, LA, SEL, SG, ST, A, C, R, S  # the category names, spelled once
from .functions import _f as _function_entry

_NAN_REDUCE = {"where": COMMON_REFUSALS["where"]}
_LA32 = " float32 results agree with NumPy to about 1e-4 relative (different LAPACK paths)."
_LA_NONFINITE = (" A matrix holding inf or NaN gives NaN in every output for that matrix (each one of a batch "
                 "alone), in the call and in every exported file: NumPy's finite values next to NaN there "
                 "follow its LAPACK build's pivot search. An example holding one is refused at compile.")


def _f(name, torch, category, note="", refuse=None, kind="function", aliases=()):
    # the same entry builder as functions.py; here the note comes before refusals, as most entries have one
    return _function_entry(name, torch, category, refuse, aliases, note, kind)


_Q_NOTE = ("Only method='linear' (NumPy's default); q must be a constant. Same interpolation "
           "formula as NumPy (lerp from both ends), NaN in a slice gives NaN.")

_FFT_NOTE = ("n=, axis= and norm= ('backward', 'ortho', 'forward') as NumPy. "
             "Dtypes as NumPy 2's pocketfft: float32 (and float16) inputs transform in single precision "
             "(complex64/float32 results; irfft of float16 stays float16, as NumPy), ints and bools in double. Values agree with NumPy to rounding "
             "(about 1e-5 relative in single precision, 1e-12 in double). A transform whose input holds inf "
             "or NaN is NaN throughout: which of its outputs NumPy makes inf and which NaN follows "
             "pocketfft's algorithm, which torch's FFT does not reproduce. ONNX export is refused (no "
             "complex FFT translation), naming the line; torchscript and pt2 export it.")

EXTENDED = [
    # statistics
    _f("median", "torch.sort", ST, "Sorts and averages the middle pair as NumPy does; NaN in a slice gives NaN."),
    _f("percentile", "torch.sort", ST, _Q_NOTE),
    _f("quantile", "torch.sort", ST, _Q_NOTE),
    _f("average", "torch.sum", ST, "weights= and returned= supported; dtype follows NumPy (ints average in float64)."),
    _f("nansum", "torch.sum", R, "NaNs count as zero.", _NAN_REDUCE),
    _f("nanprod", "torch.prod", R, "NaNs count as one.", _NAN_REDUCE),
    _f("nanmean", "torch.sum", R, "All-NaN slices give NaN (NumPy also warns).", _NAN_REDUCE),
    _f("nanmax", "torch.amax", R, "All-NaN slices give NaN (NumPy also warns).", _NAN_REDUCE),
    _f("nanmin", "torch.amin", R, "All-NaN slices give NaN (NumPy also warns).", _NAN_REDUCE),
    _f("nancumsum", "torch.cumsum", R, "NaNs count as zero."),
    _f("nancumprod", "torch.cumprod", R, "NaNs count as one."),
    # signal and geometry
    _f("convolve", "torch.nn.functional.conv1d", SG,
       "1-D, modes full/same/valid as NumPy (the shorter operand is the kernel). Integer and bool "
       "inputs are convolved in float64 and cast back: exact while sums stay below 2**53."),
    _f("correlate", "torch.nn.functional.conv1d", SG,
       "np.convolve with the second operand reversed (real inputs), NumPy's default mode='valid'."),
    _f("lib.stride_tricks.sliding_window_view", "torch.Tensor.unfold", S,
       "Windows are copies in the graph (NumPy returns a read-only view: no writes either way).",
       {"subok": "subok= changes the array class, which the graph cannot carry", "writeable":
        "writeable=True views alias overlapping windows; leave it False"}),
    _f("interp", "torch.searchsorted", SG,
       "Same slope formula and NaN fallbacks as NumPy's C loop; period= is refused. "
       "Always float64, as NumPy."),
    _f("unwrap", "torch.remainder", SG, "Follows NumPy's algorithm step by step (float inputs)."),
    _f("diff", "torch.sub", SG, "n, axis, prepend, append; bool arrays use not_equal as NumPy."),
    _f("ediff1d", "torch.sub", SG, "to_begin/to_end supported."),
    _f("pad", "torch.index_select", S,
       "Modes constant, edge, reflect, symmetric and wrap (reflect_type='even'); other modes are refused."),
    _f("fliplr", "torch.flip", S, "Returns a copy in the graph: writes through the result do not reach the input."),
    _f("flipud", "torch.flip", S, "Returns a copy in the graph: writes through the result do not reach the input."),
    _f("rot90", "torch.rot90", S, "Returns a copy in the graph: writes through the result do not reach the input."),
    _f("kron", "torch.kron", LA),
    _f("diag", "torch.diag", LA),
    _f("diagflat", "torch.diag", LA, "np.diag of the flattened input; k= as NumPy."),
    _f("diagonal", "torch.diagonal", LA, "NumPy's result is a read-only view; the graph's is a copy."),
    _f("meshgrid", "torch.meshgrid", CR, "indexing='xy'/'ij' and sparse= supported."),
    _f("searchsorted", "torch.searchsorted", SEL, "side= and sorter= supported; NaN sorts last as in NumPy."),
    _f("digitize", "torch.searchsorted", SEL, "Increasing or decreasing bins, right= supported."),
    _f("isin", "torch.eq", C, "Compares against every test element (broadcast), so keep test_elements small."),
    _f("argpartition", "torch.argsort", SEL,
       "Recorded as a stable full argsort, and traced eagerly the same way: the kth element and the "
       "partition guarantee hold, but the order inside each side is the sorted one, not NumPy's "
       "(unspecified) introselect order."),
    _f("partition", "torch.sort", SEL,
       "Recorded as a full sort (traced eagerly the same way): NumPy's guarantees hold; the order "
       "inside each side is sorted."),
    _f("put_along_axis", "torch.scatter", SEL,
       "In place, recorded functionally. With repeated indices the last write wins as in NumPy on CPU.",
       kind="inplace"),
    _f("copyto", "torch.where", SEL, "In place (dst), recorded functionally; where= supported.", kind="inplace"),
    _f("putmask", "torch.where", SEL, "In place, recorded functionally; values repeat as in NumPy.",
       kind="inplace"),
    _f("fill_diagonal", "torch.where", SEL, "In place, recorded functionally; wrap= supported.", kind="inplace"),
    replace(_f("flatnonzero", "torch.nonzero", SEL, "Output size follows the data."), data_sized="always"),
    replace(_f("argwhere", "torch.nonzero", SEL, "Output size follows the data."), data_sized="always"),
    _f("tri", "torch.tril", CR),
    _f("fix", "torch.trunc", A, "Rounds toward zero; integers unchanged."),
    _f("angle", "torch.atan2", A, "Real inputs: 0 or pi (float64 for ints), as NumPy."),
    _f("isneginf", "torch.isneginf", C),
    _f("isposinf", "torch.isposinf", C),
    _f("isreal", "torch.ones_like", C),
    _f("iscomplex", "torch.zeros_like", C),
    _f("real", "torch.real", CV),
    _f("imag", "torch.imag", CV),
    _f("broadcast_arrays", "torch.broadcast_to", S),
    _f("dstack", "torch.cat", S),
    _f("hsplit", "torch.tensor_split", S),
    _f("vsplit", "torch.tensor_split", S),
    _f("dsplit", "torch.tensor_split", S),
    _f("rollaxis", "torch.movedim", S),
    _f("append", "torch.cat", S),
    _f("vdot", "torch.vdot", LA, "Flattens both arguments, as NumPy."),
    # discrete Fourier transforms (numpy.fft's other functions stay refused by the numpy.fft entry)
    _f("fft.fft", "torch.fft.fft", SG, _FFT_NOTE),
    _f("fft.ifft", "torch.fft.ifft", SG, _FFT_NOTE),
    _f("fft.rfft", "torch.fft.rfft", SG, _FFT_NOTE),
    _f("fft.irfft", "torch.fft.irfft", SG, _FFT_NOTE + " The default n is 2*(m-1), as NumPy."),
    # linear algebra
    _f("linalg.inv", "torch.linalg.inv", LA, "Integers are inverted in float64." + _LA32 + _LA_NONFINITE),
    _f("linalg.det", "torch.linalg.det", LA, _LA32.strip() + _LA_NONFINITE),
    _f("linalg.slogdet", "torch.linalg.slogdet", LA, _LA32.strip() + _LA_NONFINITE),
    _f("linalg.solve", "torch.linalg.solve", LA, "b is a vector only when b.ndim == 1, as NumPy 2." + _LA32
       + _LA_NONFINITE.replace("A matrix", "A matrix a") + " inf or NaN in b propagates as in NumPy."),
    _f("linalg.pinv", "torch.linalg.pinv", LA, "rcond/rtol as NumPy (cut-off relative to the largest "
       "singular value)." + _LA32 + _LA_NONFINITE),
    _f("linalg.cholesky", "torch.linalg.cholesky", LA, "Lower (or upper=True) factor; unique." + _LA32
       + _LA_NONFINITE),
    _f("linalg.qr", "torch.linalg.qr", LA,
       "Modes reduced, complete, r. Q and R are unique only up to the signs of Q's columns and R's "
       "rows; torch on CPU uses the same LAPACK Householder routine as NumPy and gives the same "
       "signs, other backends may flip them (Q @ R is the same)." + _LA32 + _LA_NONFINITE),
    _f("linalg.eigh", "torch.linalg.eigh", LA,
       "Eigenvalues (ascending) are unique and match NumPy. Eigenvectors are unique only up to sign "
       "(and to rotation within repeated eigenvalues), and their signs are the LAPACK build's: torch's "
       "differ from NumPy's on most inputs, so a use of the eigenvectors is refused at the eigh call "
       "(strict; a warning otherwise); use the eigenvalues, or eigvalsh." + _LA32),
    _f("linalg.eigvalsh", "torch.linalg.eigvalsh", LA, "Ascending, as NumPy." + _LA32),
    _f("linalg.svd", "torch.linalg.svd", LA,
       "Singular values are unique and match NumPy. U and Vh are unique only up to paired signs of "
       "singular vectors (and any completion for full_matrices of a non-square matrix), and their signs "
       "are the LAPACK build's: torch's differ from NumPy's on wide, float32 and degenerate inputs, so a "
       "use of U or Vh is refused at the svd call (strict; a warning otherwise), as eigh's eigenvectors. "
       "compute_uv=False gives svdvals."
       + _LA32),
    _f("linalg.svdvals", "torch.linalg.svdvals", LA, _LA32.strip()),
    _f("linalg.matrix_rank", "torch.linalg.matrix_rank", LA, "NumPy's default tolerance (S.max() * max(M, N) * eps)."),
    _f("linalg.matrix_power", "torch.linalg.matrix_power", LA, "Non-negative integer powers by repeated "
       "squaring (exact for integer matrices); negative powers invert first (inv's rule for inf and NaN)."),
    _f("linalg.multi_dot", "torch.linalg.multi_dot", LA),
    _f("linalg.vector_norm", "torch.linalg.vector_norm", LA),
    _f("linalg.matrix_norm", "torch.linalg.matrix_norm", LA),
    _f("linalg.matrix_transpose", "torch.transpose", LA, aliases=("matrix_transpose",)),
    _f("linalg.diagonal", "torch.diagonal", LA),
    _f("linalg.trace", "torch.diagonal", LA),
    _f("linalg.outer", "torch.outer", LA),
    _f("linalg.cross", "torch.mul", LA, "As np.cross: product by product, bit for bit."),
    _f("linalg.matmul", "torch.matmul", LA),
    _f("linalg.tensordot", "torch.tensordot", LA),
    _f("linalg.vecdot", "torch.linalg.vecdot", LA, aliases=("vecdot",)),
]

# Methods that are the function of the same name with ``self`` first.
EXTENDED_METHODS = [
    Entry("ndarray." + n, f"(as numpy.{n})", cat, kind="method", same_as="numpy." + n)
    for n, cat in (("argpartition", SEL), ("diagonal", LA), ("searchsorted", SEL))
]

# NumPy's scalar types called on an array: ``np.float32(x)`` is ``x.astype(np.float32)``
# (a 0-d result for 0-d input). The types convert in C without reaching NumPy's dispatch
# hooks, and leapp never replaces them (their identity is NumPy's, in every thread):
# leapp.compile's rewriter routes the call to the dispatcher; in seed-API code a
# dtype-changing conversion is seen through ``__array_finalize__`` (see runtime/traced.py).
_SCALAR_CAST_NOTE = ("Traced as a cast under leapp.compile (the call is routed). In seed-API code: "
                     "traced when the argument is an array of another dtype; a 0-d value becomes a NumPy "
                     "scalar, reported at its line (write x.astype(np.float32)).")
SCALAR_TYPES = {
    "bool": ("bool_",), "int8": ("byte",), "int16": ("short",), "int32": ("intc",),
    "int64": ("int_", "intp", "long"), "uint8": ("ubyte",), "uint16": ("ushort",),
    "uint32": ("uintc",), "uint64": ("uint", "uintp", "ulong"), "float16": ("half",),
    "float32": ("single",), "float64": ("double",), "complex64": ("csingle",),
    "complex128": ("cdouble",),
}
SCALAR_CASTS = [
    _f(n, "torch.Tensor.to", CV, _SCALAR_CAST_NOTE, kind="scalar_type", aliases=aliases)
    for n, aliases in SCALAR_TYPES.items()
]

# Callables whose answer depends only on dtypes, shapes or Python numbers, never
# on array values: they run as NumPy and record nothing.
_STATIC_NOTE = "Depends only on dtypes, shapes or Python numbers: runs as NumPy, records nothing."
STATIC_EXTRA = [
    _f(n, "(static)", CV, _STATIC_NOTE, kind="static")
    for n in ("dtype finfo iinfo issubdtype isdtype promote_types common_type mintypecode broadcast_shapes "
              "isscalar iterable typename isfortran generic number integer signedinteger unsignedinteger "
              "inexact floating complexfloating flexible character ndarray ufunc broadcast einsum_path "
              "errstate printoptions seterr geterr seterrcall geterrcall setbufsize getbufsize set_printoptions "
              "get_printoptions diag_indices diag_indices_from indices ix_ mask_indices tril_indices "
              "tril_indices_from triu_indices triu_indices_from bartlett blackman hamming hanning kaiser").split()
]
