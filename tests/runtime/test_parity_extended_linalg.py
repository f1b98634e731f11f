"""numpy.linalg beyond the seed: values where NumPy's answer is unique, reconstructions where not.

float32 decompositions go through different LAPACK paths in NumPy and torch, so
float32 is compared at 1e-4 relative (the entries' notes say so); float64 uses
the parity helper's tight tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity import assert_same, check

from leapp.errors import UntracedCallError, UntracedCallWarning
from leapp.runtime.tracing import trace_function

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 4))
R = rng.standard_normal((5, 3))
B = rng.standard_normal((2, 4, 4))


def spd(a):
    return a @ np.swapaxes(a, -1, -2) + 4 * np.eye(a.shape[-1])


def samples(make, n=3, seed=3):
    g = np.random.default_rng(seed)
    return [(make(g),) for _ in range(n)]


SPD_SAMPLES = samples(lambda g: spd(g.standard_normal((4, 4))))

CASES = {
    "inv": (lambda a: np.linalg.inv(a), spd(A), SPD_SAMPLES),
    "inv_batched": (lambda a: np.linalg.inv(spd(a)), B, None),
    "inv_int": (lambda a: np.linalg.inv(a), np.array([[2, 1], [1, 3]]), [(np.array([[5, 2], [1, 1]]),)]),
    "det": (lambda a: (np.linalg.det(a), np.linalg.slogdet(a)), A, None),
    "solve_vector_and_matrix": (lambda a: (np.linalg.solve(a, a[0]), np.linalg.solve(a, a[:, :2])), spd(A), SPD_SAMPLES),
    "solve_batched": (lambda a: np.linalg.solve(spd(a), a[..., :1]), B, None),
    # b of shape a.shape[:-1]: NumPy 2 broadcasts it as one matrix, torch would read a batch of vectors
    "solve_batched_matrix_b": (lambda a: np.linalg.solve(spd(a), a[0]), rng.standard_normal((3, 3, 3)), None),
    "pinv": (lambda a: np.linalg.pinv(a), R, None),
    "pinv_rtol": (lambda a: np.linalg.pinv(a, rtol=1e-3), R, None),
    "cholesky": (lambda a: (np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True)), spd(A), SPD_SAMPLES),
    "qr": (lambda a: np.linalg.qr(a), R, None),
    "qr_complete_r": (lambda a: (np.linalg.qr(a, mode="complete"), np.linalg.qr(a, mode="r")), R, None),
    "eigvalsh": (lambda a: (np.linalg.eigvalsh(a), np.linalg.eigh(a)[0]), spd(A), SPD_SAMPLES),
    "svdvals": (lambda a: (np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a)), R, None),
    "matrix_rank": (lambda a: (np.linalg.matrix_rank(a), np.linalg.matrix_rank(a @ a.T)), R, None),
    "matrix_power": (lambda a: (np.linalg.matrix_power(a, 5), np.linalg.matrix_power(a, 0)), np.arange(9).reshape(3, 3) - 4, None),
    "matrix_power_neg": (lambda a: np.linalg.matrix_power(a, -2), spd(A), SPD_SAMPLES),
    "multi_dot": (lambda a: np.linalg.multi_dot([a[0], a.T, a]), R, None),
    "norm_ord_axis": (lambda a: (np.linalg.norm(a), np.linalg.norm(a, 1), np.linalg.norm(a, np.inf, axis=1),
                                 np.linalg.norm(a, -np.inf, axis=0), np.linalg.norm(a, 0, axis=1),
                                 np.linalg.norm(a, 3, axis=0, keepdims=True), np.linalg.norm(a, "fro"),
                                 np.linalg.norm(a, "nuc"), np.linalg.norm(a, 2), np.linalg.norm(a, -1)), R, None),
    "norm_int": (lambda a: (np.linalg.norm(a), np.linalg.norm(a, axis=0)), np.arange(12).reshape(3, 4), None),
    "array_api_names": (lambda a: (np.linalg.vector_norm(a, axis=1), np.linalg.matrix_norm(a), np.linalg.matrix_transpose(a),
                                   np.linalg.diagonal(a), np.linalg.trace(a), np.linalg.outer(a[0], a[1]),
                                   np.linalg.matmul(a, a.T), np.linalg.vecdot(a, a), np.linalg.tensordot(a, a, axes=2)), R, None),
    "float32_det_inv": (lambda a: (np.linalg.det(a), np.linalg.inv(a)), spd(A).astype(np.float32), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    fn, arr, extra = CASES[name]
    check(fn, arr, samples=extra)


def _trace(fn, a):
    return trace_function(fn, (a,), {}, names=["a"], strict=True)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_eigh_values_exact_vectors_by_reconstruction(dtype, tol):
    # strict: a use of the eigenvectors (signs of the LAPACK build) is refused (conventions.py)
    with pytest.raises(UntracedCallError, match="eigenvectors of numpy.linalg.eigh"):
        _trace(lambda x: np.linalg.eigh(x), spd(A).astype(dtype))
    for (a,) in [(spd(A),)] + SPD_SAMPLES:
        a = a.astype(dtype)
        with pytest.warns(UntracedCallWarning, match="eigenvectors"):  # non-strict: warned, computed
            t = trace_function(lambda x: np.linalg.eigh(x), (spd(A).astype(dtype),), {}, names=["a"])
        got = t.node(a=a)
        w, v = got[t.node.output_names[0]], got[t.node.output_names[1]]
        nw, nv = np.linalg.eigh(a)
        assert w.dtype == nw.dtype and v.dtype == nv.dtype
        np.testing.assert_allclose(w, nw, rtol=tol, atol=tol)
        np.testing.assert_allclose((v * w) @ v.T, a, rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(np.abs(v), np.abs(nv), rtol=tol * 100, atol=tol * 100)


@pytest.mark.parametrize("full", [True, False])
def test_svd_values_exact_vectors_by_reconstruction(full):
    # strict: a use of U or Vh (signs of the LAPACK build) is refused (conventions.py)
    with pytest.raises(UntracedCallError, match="singular vectors .* of numpy.linalg.svd"):
        _trace(lambda x: np.linalg.svd(x, full_matrices=full), R)
    with pytest.warns(UntracedCallWarning, match="singular vectors"):  # non-strict: warned, computed
        t = trace_function(lambda x: np.linalg.svd(x, full_matrices=full), (R,), {}, names=["a"])
    for a in (R, rng.standard_normal((5, 3))):
        got = t.node(a=a)
        u, s, vh = (got[k] for k in t.node.output_names)
        nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
        assert_same(s, ns)
        np.testing.assert_allclose((u[:, :3] * s) @ vh, a, atol=1e-10)


def test_qr_reconstructs_and_float32_tolerance():
    a32 = R.astype(np.float32)
    t = _trace(lambda x: np.linalg.qr(x), a32)
    got = t.node(a=a32)
    q, r = (got[k] for k in t.node.output_names)
    assert q.dtype == np.float32
    np.testing.assert_allclose(q @ r, a32, rtol=1e-4, atol=1e-5)
    nq, nr = np.linalg.qr(a32)
    np.testing.assert_allclose(np.abs(r), np.abs(nr), rtol=1e-4, atol=1e-5)


COVERED = {"numpy.linalg." + n for n in (
    "inv det slogdet solve pinv cholesky qr eigh eigvalsh svd svdvals matrix_rank matrix_power multi_dot "
    "norm vector_norm matrix_norm matrix_transpose diagonal trace outer matmul vecdot tensordot").split()}


def _inverses(a):
    return np.linalg.inv(a), np.linalg.solve(a, a[..., :1] + 1.0), np.linalg.det(a)


def test_a_matrix_holding_inf_or_nan_gives_nan_throughout_in_the_call_and_the_onnx_file(tmp_path):
    # NumPy's pattern there is its LAPACK build's: inv of a NaN at [0, 0] is NaN in one row with
    # OpenBLAS's pivot search and in every row with MKL's (torch's); inf gives other patterns again
    import onnxruntime as ort

    import leapp
    from leapp.errors import ProblemsError

    # well conditioned: the export's check also runs inputs with a third of the values zeroed
    finite = np.random.default_rng(1).standard_normal((3, 3, 3)) + 3 * np.eye(3)
    bad = finite.copy()
    bad[1, 0, 0], bad[2, 2, 1] = np.nan, np.inf
    with np.errstate(all="ignore"):
        numpy_inv = np.linalg.inv(bad[1])
    assert np.isfinite(numpy_inv).any() and np.isnan(numpy_inv).any()  # the partial pattern of the report
    cf = leapp.compile(_inverses)
    cf(finite.copy())  # traced on finite matrices
    got = cf(bad.copy())
    want = _inverses(finite)
    for g, w in zip(got, want, strict=True):
        assert np.isnan(g[1:]).all()  # each matrix that is not finite: NaN in every output
        np.testing.assert_allclose(g[0], w[0], rtol=1e-10)  # the finite one as NumPy
    one = leapp.compile(_inverses)
    one(finite[0].copy())
    assert all(np.isnan(v).all() for v in one(bad[1].copy()))  # alone as in a batch
    path = tmp_path / "inv.onnx"
    cf.export(str(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (name,) = [i.name for i in session.get_inputs()]
    for g, o in zip(got, session.run(None, {name: bad}), strict=True):
        np.testing.assert_array_equal(np.isnan(o), np.isnan(g))
        np.testing.assert_allclose(o[0], g[0], rtol=1e-10)
    # an example holding NaN is refused, naming the call and why (not "a leapp bug")
    with pytest.raises(ProblemsError, match=r"numpy\.linalg\.inv at .*holding inf or NaN") as info:
        leapp.compile(_inverses)(bad[1].copy())
    assert "leapp bug" not in str(info.value)


def _factorizations(a):
    q, r = np.linalg.qr(a)
    sign, logdet = np.linalg.slogdet(a)
    return (q @ r, np.linalg.qr(a, mode="r"), np.linalg.pinv(a), np.linalg.cholesky(spd(a)), sign, logdet,
            np.linalg.matrix_power(a, -2))


def test_the_other_factorizations_follow_the_same_rule_for_each_matrix_of_a_batch():
    import leapp

    finite = np.random.default_rng(2).standard_normal((3, 3, 3)) + 3 * np.eye(3)
    bad = finite.copy()
    bad[1, 2, 0] = np.nan
    cf = leapp.compile(_factorizations)
    cf(finite.copy())
    got = cf(bad.copy())
    with np.errstate(all="ignore"):
        want = _factorizations(np.delete(bad, 1, axis=0))
    for g, w in zip(got, want, strict=True):
        assert np.isnan(g[1]).all()  # NumPy's cholesky keeps zeros above the diagonal, its slogdet a sign
        np.testing.assert_allclose(np.delete(g, 1, axis=0), w, rtol=1e-9, atol=1e-12)
