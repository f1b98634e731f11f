"""Issue 9, item by item: each op the ONNX exporter lacked or got wrong now exports exactly, or is refused
at export naming the user's line; the check compares with NumPy on edge inputs."""

from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError, LeappInternalWarning

from . import exactness_cases as cases

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 5)) * 3
X32 = X.astype(np.float32)
INTS = rng.integers(-20, 20, (3, 5))
J = np.where(INTS == 0, 3, rng.integers(-7, 7, (3, 5)))


def _edge(x):
    """NaN, ±inf and ±0.0 sprinkled into a float array (one of each where there is room)."""
    x = x.copy()
    flat = x.reshape(-1)
    flat[: 5] = [np.nan, np.inf, -np.inf, -0.0, 0.0][: flat.size]
    return x


def _ort(path, inputs):
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: np.asarray(inputs[i.name]) for i in session.get_inputs()})


def _flat(result):
    return list(result) if isinstance(result, tuple) else [result]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # NaN positions must match too
        assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])), "signed zero"
    else:
        np.testing.assert_array_equal(got, want)


EXACT = [
    ("expm1", cases.expm1, {"x": X32}, {"x": _edge(X32 / 10)}),
    ("sinh/cosh", cases.sinh_cosh, {"x": X}, {"x": _edge(X)}),
    ("trunc", cases.trunc, {"x": X32}, {"x": _edge(X32)}),
    ("bitwise_xor, integer bitwise_or", cases.bitwise, {"i": INTS, "j": J}, {"i": -INTS, "j": J}),
    ("cumprod", cases.cumprod, {"i": INTS, "x": X32}, {"i": -INTS, "x": _edge(X32)}),
    ("deg2rad", cases.deg2rad, {"x": X32}, {"x": _edge(X32)}),
    ("hypot", cases.hypot, {"x": X, "y": X[::-1].copy()}, {"x": _edge(X), "y": X}),
    ("diff", cases.diff, {"x": X}, {"x": _edge(X)}),
    ("take_along_dim", cases.take_along, {"x": X32}, {"x": X32[:, ::-1].copy()}),
    ("searchsorted (interp, digitize)", cases.interp_digitize, {"x": X}, {"x": _edge(X)}),
    ("copysign (float %, fmod)", cases.angle_wrap, {"x": X, "y": X[::-1] + 0.5}, {"x": _edge(X), "y": X + 0.5}),
    ("linalg_inv (and solve, det)", cases.inverse, {"m": np.eye(4) + X[:, :4].T @ X[:, :4] / 10},
     {"m": np.array([[0.0, 2.0, 1.0, 0.5], [1.0, 0.0, 0.0, 3.0], [0.5, 1.0, 4.0, 0.0], [2.0, 0.0, 1.0, 1.0]])}),
    ("sort, argsort, argpartition", cases.sorting, {"x": X32}, {"x": X32 * -1}),
    ("unfold (sliding windows)", cases.windows, {"x": X32}, {"x": _edge(X32)}),
    ("uint16/32/64", cases.unsigned,
     {"u16": np.arange(6, dtype=np.uint16) * 9000, "u32": np.arange(6, dtype=np.uint32) * 10**9,
      "u64": np.arange(6, dtype=np.uint64) << np.uint64(60)},
     {"u16": np.full(6, 65535, np.uint16), "u32": np.full(6, 2**32 - 1, np.uint32),
      "u64": np.full(6, 2**64 - 1, np.uint64)}),
    ("negative integer //", cases.floor_div, {"i": INTS, "j": J}, {"i": -INTS, "j": -J}),
    ("dtype=np.int32 sum", cases.int32_sum, {"i": INTS.astype(np.int32)}, {"i": -INTS.astype(np.int32)}),
    ("0-d int output", cases.scalar_int, {"i": INTS}, {"i": -INTS}),
    ("ArgMax/ReduceMax/ReduceMin NaN", cases.nan_reductions, {"x": X32}, {"x": _edge(X32)}),
    ("fmax/fmin ignore NaN, maximum/minimum propagate it", cases.nan_ignoring_extremes,
     {"x": X32, "y": X32[::-1].copy()}, {"x": _edge(X32), "y": _edge(X32[::-1].copy())}),
    ("inf in the example input", cases.with_inf, {"x": _edge(X32)}, {"x": X32}),
    # a vector on a diagonal: zeros next to inf and NaN stay zeros (no product with an identity mask)
    ("diag of a vector, diagflat", cases.diag_vectors, {"x": X, "i": INTS}, {"x": _edge(X), "i": -INTS}),
]


@pytest.mark.parametrize("what, fn, example, other", EXACT, ids=[c[0] for c in EXACT])
def test_exports_to_onnx_exactly(tmp_path, what, fn, example, other):
    cf = leapp.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeappInternalWarning)  # int32 sum: "a cast was inserted"
        cf.trace(**example)
    path = tmp_path / "f.onnx"
    description = cf.export(path)
    assert description["checked"]["against"] == "numpy"  # the function itself, not the graph
    assert "the example" in description["checked"]["inputs"]
    for inputs in (example, other):  # the artifact, run by onnxruntime, equals NumPy
        for got, want in zip(_ort(path, inputs), _flat(fn(**inputs)), strict=True):
            _same(got, want)


def _refused_at_onnx(fn, call, path):
    """``fn`` traced on a 3x3 matrix, refused at ONNX export naming ``call`` and its line, with
    the formats that work and no file written; the compiled function and the message."""
    cf = leapp.compile(fn)
    cf.trace(np.eye(3) + 0.1)
    with pytest.raises(ExportError) as info:
        cf.export(path)
    message = str(info.value)
    line = inspect.getsourcelines(fn)[1] + 1
    assert f"{call} at {cases.__file__}:{line}" in message, message
    assert "format='torchscript' or 'pt2'" in message
    assert os.listdir(path.parent) == []
    return cf, message


def test_an_op_without_onnx_form_is_refused_at_export_naming_the_line(tmp_path):
    cf, message = _refused_at_onnx(cases.spectral_norm, "numpy.linalg.norm", tmp_path / "n.onnx")
    assert "Torch IR" not in message and "pull request" not in message and len(message.splitlines()) == 1
    assert os.listdir(tmp_path) == []
    assert cf.export(tmp_path / "n.pt2", "pt2")["checked"]["against"] == "numpy"


@pytest.mark.parametrize("fmt", ["torchscript", "pt2"])
def test_the_torch_formats_take_the_same_functions(tmp_path, fmt):
    for fn, example in ((cases.sorting, {"x": X32}), (cases.angle_wrap, {"x": X, "y": X + 0.5}),
                        (cases.nan_reductions, {"x": X32})):
        cf = leapp.compile(fn)
        cf.trace(**example)
        assert cf.export(tmp_path / f"{fn.__name__}.{fmt}", fmt)["checked"]["against"] == "numpy"


@pytest.mark.parametrize("lowering, output, call", [("argmax", "output_0", "numpy.argmax"),
                                                     ("amin", "output_3", "numpy.min")])
def test_a_nan_skipping_artifact_is_caught_by_the_edge_inputs(tmp_path, monkeypatch, lowering, output, call):
    """Without the NaN-propagating decomposition, ORT's ArgMax/ReduceMin skip NaN; the check must refuse it."""
    from leapp.export import lowering as export_lowering

    dropped = getattr(export_lowering, lowering)
    monkeypatch.setattr(export_lowering, "FUNCTIONS", {k: v for k, v in export_lowering.FUNCTIONS.items()
                                                        if v is not dropped})
    cf = leapp.compile(cases.nan_reductions)
    cf.trace(X32)
    with pytest.raises(ExportError, match=rf"disagrees with NumPy on output '{output}' \(inputs with NaN\)"
                                          rf".*{call} at .*exactness_cases.py"):
        cf.export(tmp_path / "f.onnx")
    assert os.listdir(tmp_path) == []


def test_dynamic_batch_history_shift_with_roll_and_concatenate(tmp_path):
    hist, obs = np.arange(24, dtype=np.float32).reshape(2, 4, 3), np.ones((2, 3), np.float32)
    cf = leapp.compile(cases.history)
    cf.trace(hist, obs)
    path = tmp_path / "h.onnx"
    assert "batch 5" in cf.export(path, dynamic_batch=True)["checked"]["inputs"]
    big = {"hist": np.arange(7 * 12, dtype=np.float32).reshape(7, 4, 3), "obs": np.ones((7, 3), np.float32)}
    for got, want in zip(_ort(path, big), cases.history(**big), strict=True):
        _same(got, want)


def test_dynamic_batch_slice_assignment_into_every_row(tmp_path):
    cf = leapp.compile(cases.history_assign)
    cf.trace(np.zeros((2, 4, 3), np.float32), np.ones((2, 3), np.float32))
    path = tmp_path / "h.onnx"
    assert "batch 5" in cf.export(path, dynamic_batch=True)["checked"]["inputs"]
    for batch in (1, 7):
        inputs = {"hist": rng.normal(size=(batch, 4, 3)).astype(np.float32),
                  "obs": rng.normal(size=(batch, 3)).astype(np.float32)}
        _same(_ort(path, inputs)[0], cases.history_assign(**inputs))


def test_dynamic_batch_assignment_into_some_rows_names_the_line_and_the_limitation(tmp_path):
    cf = leapp.compile(cases.first_row_assign)
    cf.trace(np.zeros((2, 4), np.float32), np.ones((2, 4), np.float32))
    with pytest.raises(ExportError) as info:
        cf.export(tmp_path / "h.onnx", dynamic_batch=True)
    line = inspect.getsourcelines(cases.first_row_assign)[1] + 2
    assert f"exactness_cases.py:{line}" in str(info.value) and "leapp limitation" in str(info.value)


def test_svd_is_refused_at_onnx_export_naming_the_call_and_line(tmp_path):
    # ONNX has no singular value decomposition: refused, not approximated
    _refused_at_onnx(cases.singular_values, "numpy.linalg.svd", tmp_path / "s.onnx")


@leapp.compile
def _det_guarded_inverse(m):
    d = np.linalg.det(m)
    s, logabs = np.linalg.slogdet(m)
    return d * 2.0, s, logabs


def test_det_and_slogdet_of_a_singular_matrix_export_as_numpy_gives_them(tmp_path):
    # LAPACK skips a zero pivot (its column below is zero too): det 0, slogdet (0, -inf); the
    # unrolled elimination divided by it, and the file gave NaN (an `abs(det) < eps` guard then
    # took the other branch). The export check's all-zero input is what finds it.
    _det_guarded_inverse(np.array([[2.0, 1, 0], [1, 2, 0], [0, 0, 1]]))
    info = _det_guarded_inverse.export(str(tmp_path / "det.onnx"))
    assert "all-zero float inputs" in info["checked"]["inputs"]
    for m in (np.zeros((3, 3)), np.diag([1.0, 0.0, 1.0]), np.ones((3, 3)), np.array([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])):
        got = _ort(tmp_path / "det.onnx", {"m": m})
        want = _det_guarded_inverse.fn(m)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.abs(g), np.abs(w), atol=1e-12)  # the sign of a zero det aside
            assert np.sign(g) == np.sign(w) or w == 0


def test_the_export_check_runs_the_file_on_all_zero_inputs(tmp_path, monkeypatch):
    # a file wrong only where every input is zero (a robot at rest) is refused, not written
    from leapp.export import lowering

    real = lowering._eliminate
    monkeypatch.setattr(lowering, "_eliminate", lambda a, b, factor_only=False: real(a, b))
    _det_guarded_inverse(np.array([[2.0, 1, 0], [1, 2, 0], [0, 0, 1]]))
    with pytest.raises(ExportError, match="all-zero float inputs"):
        _det_guarded_inverse.export(str(tmp_path / "det.onnx"))
    assert not (tmp_path / "det.onnx").exists()
