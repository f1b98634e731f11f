"""A converted branch that calls a ``linalg`` function that raises on some inputs (a singular
matrix): the call runs on ``np.where(path, m, I)`` (``leapp.table.guards``,
``leapp.runtime.branches.guarded``), so the graph never inverts the matrix of an input that takes
the other branch, and on the inputs that take the branch the matrix is the user's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.ast_pass import analyze_source

F32 = np.float32


def inverse_or_zero(m, v):
    if abs(np.linalg.det(m)) > 1e-6:
        out = np.linalg.inv(m) @ v
    else:
        out = v * 0.0
    return out


def solve_or_keep(m, v):
    return np.linalg.solve(m, v) if np.linalg.det(m) != 0 else v


def whitened(c, x):
    if np.linalg.eigvalsh(c).min() > 0:  # a covariance that is positive definite
        L = np.linalg.cholesky(c)
        y = np.linalg.solve(L, x)
    else:
        y = x - x.mean()
    return y


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
REGULAR = np.array([[2.0, 1.0], [1.0, 3.0]])


def _agree(cf, fn, inputs):
    for args in inputs:
        got, want = cf(*args), fn(*args)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("first", [REGULAR, SINGULAR])
def test_inv_in_a_branch_converts_and_a_singular_matrix_takes_the_other_side(first):
    cf = leapp.compile(inverse_or_zero)
    v = np.array([1.0, 2.0])
    # traced on either side first: one graph serves both, and the singular matrix never reaches inv
    _agree(cf, inverse_or_zero, [(first, v), (REGULAR, v), (SINGULAR, v), (np.zeros((2, 2)), v),
                                 (np.eye(2) * 3, -v)])
    assert len(cf.graphs) == 1
    assert "line 18: `if` statement converted to a select" in cf.format_report()


def test_solve_in_a_conditional_expression_and_cholesky_in_arms():
    cf = leapp.compile(solve_or_keep)
    v = np.array([1.0, -2.0], F32)
    _agree(cf, solve_or_keep, [(REGULAR.astype(F32), v), (SINGULAR.astype(F32), v), (np.zeros((2, 2), F32), v)])
    cw = leapp.compile(whitened)
    x = np.array([0.5, -1.5])
    _agree(cw, whitened, [(REGULAR, x), (-REGULAR, x), (SINGULAR, x), (REGULAR * 4, x)])
    assert len(cw.graphs) == 1


@pytest.mark.parametrize("fmt", ["onnx", "torchscript", "pt2"])
def test_every_exported_file_of_a_guarded_inv_agrees_with_numpy_on_both_sides(fmt, tmp_path):
    import onnxruntime as ort
    import torch

    cf = leapp.compile(inverse_or_zero)
    v = np.array([1.0, 2.0], F32)
    cf(REGULAR.astype(F32), v)
    path = str(tmp_path / f"inv.{fmt}")
    cf.export(path, fmt)
    if fmt == "onnx":
        session = ort.InferenceSession(path)
        names = [i.name for i in session.get_inputs()]
        run = lambda *a: session.run(None, dict(zip(names, a, strict=True)))[0]  # noqa: E731
    else:
        loaded = torch.jit.load(path) if fmt == "torchscript" else torch.export.load(path).module()
        run = lambda *a: _first(loaded(*(torch.from_numpy(x) for x in a)))  # noqa: E731
    for m in (REGULAR, SINGULAR, np.zeros((2, 2)), np.eye(2) * 0.5):
        m = m.astype(F32)
        out = np.asarray(run(m, v))
        np.testing.assert_allclose(out, inverse_or_zero(m, v), rtol=1e-6)
        assert np.isfinite(out).all()


def _first(out):
    out = next(iter(out.values())) if isinstance(out, dict) else out
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out.numpy()


def test_the_guard_is_what_keeps_the_singular_side_out_of_inv(monkeypatch):
    # delete the guard: the graph inverts the singular matrix of an input that takes the other
    # branch, and torch raises on it where NumPy, which took `else`, did not; the default check's
    # zeros input finds it at the first call
    from leapp.errors import ProblemsError
    from leapp.runtime import branches

    monkeypatch.setattr(branches, "guarded", lambda name, args: args)
    cf = leapp.compile(inverse_or_zero)
    with pytest.raises(ProblemsError, match="singular"):
        cf(REGULAR, np.array([1.0, 2.0]))


def solve_unless_singular(m, v):
    if np.linalg.det(m) == 0:
        return v
    return np.linalg.inv(m) @ v


def test_the_code_after_an_early_return_runs_guarded_by_its_negated_test():
    # the code after an early return runs on every input, also on those that returned: inv sees
    # np.where(~test, m, I) there, so a singular matrix that returned early never reaches it
    # (deleting the path entry in runtime.branches.early fails here: the zeros input's inv raises)
    cf = leapp.compile(solve_unless_singular)
    v = np.array([1.0, 2.0])
    _agree(cf, solve_unless_singular, [(REGULAR, v), (SINGULAR, v), (np.zeros((2, 2)), -v), (np.eye(2) * 4, v)])
    assert len(cf.graphs) == 1
    assert "early `return` converted to a select" in cf.format_report()


def halve_by_solving(m, v):
    k = np.zeros((), m.dtype)
    while np.abs(v).max() > 1.0 and k < 4:  # leapp: max-iterations=4
        v = np.linalg.solve(m, v) * 0.5
        m = m * (np.abs(v).max() > 1.0)  # singular once the loop is about to stop
        k = k + 1
    return v


@pytest.mark.parametrize("dtype", [F32, np.float64])
def test_in_a_loop_body_the_solvers_run_guarded_by_the_running_mask(dtype, tmp_path):
    # an iteration after the loop stopped runs on the values kept, here a zero matrix: solve sees
    # np.where(running, m, I) there (deleting the path entry in runtime.loops.while_ fails here:
    # torch's solve raises on the kept singular matrix where NumPy's loop had stopped)
    import onnxruntime as ort

    v = np.array([4.0, 1.0, -3.0], dtype)
    inputs = [(np.eye(3, dtype=dtype) * 0.25, v), (np.eye(3, dtype=dtype) * 2.0, v),
              (np.eye(3, dtype=dtype), v * 0.1), (np.diag(np.array([4.0, 8.0, 2.0], dtype)), v * 9.0)]
    cf = leapp.compile(halve_by_solving)
    assert cf.diagnostics == [] and all(b.converted for b in cf.source.branches)
    _agree(cf, halve_by_solving, inputs)
    assert len(cf.graphs) == 1
    cf.export(tmp_path / "loop.onnx", "onnx")
    session = ort.InferenceSession(str(tmp_path / "loop.onnx"))
    names = [i.name for i in session.get_inputs()]
    for m, x in inputs:
        (out,) = session.run(None, dict(zip(names, (m, x), strict=True)))
        np.testing.assert_allclose(out, halve_by_solving(m, x), rtol=1e-6)


def test_in_a_loop_test_the_solvers_still_refuse():
    # a `while` test runs on every input, whichever has stopped: no running mask guards it
    source = "\n".join(["import numpy as np", "# leapp: trace", "def f(m, v):",
                        "    while np.linalg.solve(m, v).sum() < 3:  # leapp: max-iterations=4",
                        "        v = v + 1", "    return v", ""])
    found = [d for d in analyze_source(source, "t.py").diagnostics if d.code == "LP202"]
    assert found and "raises on some inputs" in found[0].message


def singular_values_if_finite(m):
    if not np.isfinite(m).all():
        return np.zeros(3)
    return np.linalg.svd(m, compute_uv=False)


def spectrum_if_clean(m):
    if np.isnan(m).any():
        return np.zeros(3)
    return np.linalg.eigvalsh(m)


def pseudo_inverse_if_finite(m):
    if np.isfinite(m).all():
        return np.linalg.pinv(m).sum(axis=0)  # a 3x2 matrix: guarded with a rectangular identity
    return np.zeros(3)


@pytest.mark.parametrize("fn,example", [(singular_values_if_finite, np.eye(3) * 2.0),
                                        (spectrum_if_clean, np.diag([1.0, 2.0, 3.0])),
                                        (pseudo_inverse_if_finite, np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 0.0]]))])
def test_a_decomposition_on_a_side_a_nan_input_does_not_take_is_guarded(fn, example):
    # NumPy and torch raise LinAlgError on a NaN in svd/eigvalsh/pinv; the select ran the
    # decomposition on the NaN input too, and the call raised where NumPy returns zeros
    cf = leapp.compile(fn)
    assert all(b.converted for b in cf.source.branches)
    nan = example.copy()
    nan[0, 0] = np.nan
    inf = example.copy()
    inf[-1, -1] = -np.inf
    cf(example)
    for m in (example * 3, nan, inf, example):
        got, want = cf(m), fn(m)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)  # LAPACK builds differ in ulps
