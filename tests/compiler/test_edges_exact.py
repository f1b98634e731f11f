"""Exactness at the edges (issue 17): np.interp on a knot whose right neighbour is NaN returns the knot's
value as NumPy does; np.linalg.eigh's eigenvectors (signs set by the LAPACK build: torch's differ from
NumPy's on most inputs) are refused where used, never returned silently different; eigenvalues trace."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import ProblemsError, UnsupportedArgumentError, UntracedCallError
from leapp.runtime.tracing import trace_function

XP = np.array([0.0, 1.0, 2.0, 3.0])
FP = np.array([0.0, 5.0, np.nan, 7.0])


@leapp.compile
def lookup(x):
    return np.interp(x, XP, FP)


@leapp.compile
def eigen_values(a):
    return np.linalg.eigh(a)[0] * 2.0, np.linalg.eigvalsh(a)


@leapp.compile
def eigen_vectors(a):
    w, v = np.linalg.eigh(a)
    return v[:, -1] * w[-1]


def _sym(seed):
    a = np.random.default_rng(seed).standard_normal((4, 4))
    return a + a.T


def test_interp_on_a_knot_next_to_nan_returns_the_knot_value(tmp_path):
    x = np.array([1.0, 0.5, 3.0, 2.0, 2.5, 1.0 - 1e-12])
    got, want = lookup(x), np.interp(x, XP, FP)
    assert want[0] == 5.0
    np.testing.assert_array_equal(got, want)
    x2 = np.array([3.0, 1.0, 0.0, 1.5, 0.25, 1.0])
    np.testing.assert_array_equal(lookup(x2), np.interp(x2, XP, FP))
    import onnxruntime as ort

    lookup.export(tmp_path / "interp.onnx")
    session = ort.InferenceSession(str(tmp_path / "interp.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(session.run(None, {session.get_inputs()[0].name: x2})[0], np.interp(x2, XP, FP))


def test_eigenvalues_trace_and_match_numpy_on_random_symmetric_inputs():
    for seed in range(5):
        a = _sym(seed)
        got, want = eigen_values(a), (np.linalg.eigh(a)[0] * 2.0, np.linalg.eigvalsh(a))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_eigenvectors_are_refused_where_used_naming_the_call():
    with pytest.raises(ProblemsError) as info:
        eigen_vectors(_sym(0))
    text = str(info.value)
    line = eigen_vectors.fn.__code__.co_firstlineno + 2
    assert f"test_edges_exact.py:{line}" in text and "eigenvectors of numpy.linalg.eigh" in text
    with pytest.raises(UntracedCallError, match="eigenvectors of numpy.linalg.eigh"):
        trace_function(lambda a: np.linalg.eigh(a), (_sym(1),), {}, names=["a"], strict=True)


@leapp.compile
def inverse(a):
    return np.linalg.inv(a) * 2.0


def test_a_singular_matrix_raises_numpys_linalg_error_from_the_graph():
    # torch raises its own LinAlgError (a RuntimeError); code around the call catches NumPy's
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(inverse(a), np.linalg.inv(a) * 2.0)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(singular)
    with pytest.raises(np.linalg.LinAlgError, match="torch.linalg"):
        inverse(singular)
    node = inverse._latest().node  # the graph's own call, as a pipeline runs it
    with pytest.raises(np.linalg.LinAlgError):
        node(singular)


@leapp.compile
def principal_axis(points):
    centred = points - points.mean(axis=0)
    return np.linalg.svd(centred)[2][0]  # vg.principal_components' pattern


@leapp.compile
def singular_values(points):
    centred = points - points.mean(axis=0)
    u, s, vh = np.linalg.svd(centred)
    return s, np.linalg.svd(centred, compute_uv=False)


def test_singular_vectors_are_refused_where_used_singular_values_trace():
    # torch's U/Vh signs differ from NumPy's on some inputs (measured: 600 of 600 wide 3x5 float64 normals,
    # ~1 in 40 float32 normals, degenerate clouds such as this one, whose null space is any
    # vector of a plane). Without the guard the graph returns them silently.
    cloud = np.array([[0, 1, 1], [0, 0, 0], [0, 0, 0], [-1, 1, 0], [0, 0, 0]], dtype=np.int64)
    wide = np.random.default_rng(4).standard_normal((3, 5))
    for points in (cloud, np.random.default_rng(3).standard_normal((5, 3))):
        with pytest.raises(ProblemsError) as info:
            principal_axis(points)
        text = str(info.value)
        line = principal_axis.fn.__code__.co_firstlineno + 3
        assert f"test_edges_exact.py:{line}" in text and "right singular vectors (Vh) of numpy.linalg.svd" in text
    with pytest.raises(UntracedCallError, match=r"left singular vectors \(U\) of numpy.linalg.svd"):
        trace_function(lambda a: np.linalg.svd(a), (wide,), {}, names=["a"], strict=True)
    for points in (cloud, wide, wide.astype(np.float32)):
        got, want = singular_values(points), np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
        for g in got:
            assert g.dtype == want.dtype
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-5 if g.dtype == np.float32 else 1e-12)


@leapp.compile
def hyperbolic(x):
    return np.sinh(x), np.cosh(x)


def _within_ulps(got, want, ulps):
    assert got.dtype == want.dtype
    assert np.array_equal(np.isfinite(got), np.isfinite(want)), (got, want)
    finite = np.isfinite(want)
    err = np.abs(got[finite].astype(np.float64) - want[finite])
    assert np.all(err <= ulps * np.spacing(np.abs(want[finite])).astype(np.float64)), (got, want)


@pytest.mark.parametrize("dtype, edge", [(np.float64, 710.3), (np.float32, 89.2)])
def test_sinh_and_cosh_stay_finite_where_numpy_does_in_long_vectors(dtype, edge):
    # torch's vectorised kernels (16 elements or more) compute exp(|x|), which overflows from
    # 709.78 (float32: 88.72); sinh and cosh are finite up to 710.47 (89.41): inf, silently
    hyperbolic(np.linspace(-3, 3, 32).astype(dtype))
    x = np.linspace(-edge, edge, 32).astype(dtype)
    x[:6] = [edge, -edge, edge - 0.4, np.inf, np.nan, edge + 0.5]
    with np.errstate(over="ignore"):
        wants = hyperbolic.fn(x)
    for got, want in zip(hyperbolic(x), wants, strict=True):
        _within_ulps(got, want, 4)


@leapp.compile
def sinc(x):
    return np.sinc(x)


def test_float16_sinc_is_numpys_for_every_finite_float16():
    # torch.sinc of float16 computes pi * x in float32 and rounds once; NumPy rounds pi * x to
    # float16 first: up to 0.0005 apart next to sinc's zeros, refused as "a leapp bug"
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    x = x[np.isfinite(x)]
    sinc(np.linspace(-3, 3, 37).astype(np.float16))  # the probe that was refused
    with np.errstate(all="ignore"):
        want = sinc.fn(x)
        got = sinc(x)
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@leapp.compile
def half_products(a, b):
    return np.vdot(a, b), np.einsum("ij,jk->ik", a.astype(np.float32), b.T, dtype=np.float32).astype(np.float16)


@leapp.compile
def half_einsum(a, b):
    return np.einsum("ij,jk->ik", a, b.T)


def test_float16_vdot_is_numpys_and_a_summing_float16_einsum_is_refused_naming_the_line():
    # vdot rounded each float16 product before the sum (4 in 10 differed); NumPy's float16 einsum
    # rounds after each product it adds, in an order set by memory layout (6 ulps apart, silently)
    rng = np.random.default_rng(4)
    a, b = (rng.uniform(-60, 60, (3, 4)).astype(np.float16) for _ in range(2))
    half_products(a, b)
    for _ in range(10):
        a, b = (rng.uniform(-60, 60, (3, 4)).astype(np.float16) for _ in range(2))
        for got, want in zip(half_products(a, b), half_products.fn(a, b), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    with pytest.raises(UnsupportedArgumentError) as info:
        half_einsum(a, b)
    line = half_einsum.fn.__code__.co_firstlineno + 2
    assert f"test_edges_exact.py:{line}" in str(info.value) and "float16 einsum" in str(info.value)


@leapp.compile
def half_sums(x):
    return (np.sum(x, axis=0), np.add.reduce(x, axis=0, keepdims=True), np.nansum(x, axis=0),
            np.nanmean(x, axis=0), np.nanmean(x, axis=1, keepdims=True), np.nanmean(x), x.sum(axis=1),
            x.reshape(3, 2, 4).sum(axis=(0, 1)))


def test_float16_sums_over_leading_axes_round_after_each_row_as_numpy_does():
    # NumPy adds float16 rows into the result one by one, rounding each addition; torch summed
    # in float32 and rounded once: up to 32 ulps apart over 6 rows, in every sample, silently
    rng = np.random.default_rng(6)
    half_sums(rng.uniform(-3, 3, (6, 4)).astype(np.float16))
    for _ in range(20):
        x = rng.uniform(-60, 60, (6, 4)).astype(np.float16)
        x[rng.random(x.shape) < 0.1] = np.nan
        x[0, 0] = -0.0
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            wants = half_sums.fn(x)
            gots = half_sums(x)
        for got, want in zip(gots, wants, strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@leapp.compile
def ufunc_power_of_scalars(x, e):
    return np.power(x[0], e[0]), x[0] ** e[0]  # the ufunc (sqrt for 0.5), then NumPy's scalar math (C pow)


def test_np_power_of_numpy_scalars_takes_the_ufuncs_sqrt_and_scalar_math_cs_pow():
    # NumPy's ufunc takes sqrt for an exponent of 0.5 even between two NumPy scalars: -inf ** 0.5 is
    # nan (C's pow: inf) and -0.0 ** 0.5 is -0.0; `**` between NumPy scalars is C's pow. The graph
    # gave inf for the ufunc, silently (fuzz seed 117223)
    e = np.array([0.5, 2.0])
    ufunc_power_of_scalars(np.array([4.0, 1.0]), e)  # traced on ordinary values
    for first in (-np.inf, -0.0, 9.0):
        x = np.array([first, 1.0])
        got, want = ufunc_power_of_scalars(x, e), ufunc_power_of_scalars.fn(x, e)
        for g, w in zip(got, want, strict=True):
            assert type(g) is type(w) and (np.isnan(g) == np.isnan(w)) and (np.isnan(w) or g == w)
            assert np.isnan(w) or np.signbit(g) == np.signbit(w)
    assert len(ufunc_power_of_scalars.graphs) == 1


@leapp.compile
def half_norms(x):
    return (np.linalg.norm(x, axis=-1, keepdims=True), np.linalg.norm(x), np.linalg.norm(x, axis=0),
            np.linalg.norm(x, axis=(0, 1)), x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-6))


def test_float16_norms_overflow_where_numpys_do():
    # NumPy rounds the float16 sum of squares to float16 before its square root, and along an axis
    # squares in float16: a norm past 256 is inf (so x / norm is 0); torch's vector_norm worked in
    # float32 and gave 300 (the everyday generator's seed 96002392: off by 0.99 at float16)
    rng = np.random.default_rng(7)
    half_norms(rng.normal(size=(5, 4)).astype(np.float16))
    for scale in (1.0, 300.0, 1e-3, 100.0, 20.0):
        x = (rng.normal(size=(5, 4)) * scale).astype(np.float16)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            wants = half_norms.fn(x)
            gots = half_norms(x)
        for got, want in zip(gots, wants, strict=True):
            assert got.dtype == want.dtype == np.float16
            np.testing.assert_array_equal(got, want)
