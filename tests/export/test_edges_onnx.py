"""Issue 17: ONNX files that departed from NumPy where the export check did not look. Each case goes
through ``@leapp.compile`` and ``export``; the written file is run in onnxruntime against NumPy on
inputs at the edge, or the export is refused naming the call."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError


def _ort(path, *inputs):
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: np.asarray(v) for i, v in zip(session.get_inputs(), inputs, strict=True)})[0]


def _bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), (got, want)


@leapp.compile
def half_chain(a):
    return (a * np.float16(3.3) + np.float16(1.1)) * a - a / np.float16(7.0)


H = np.array([0.1, 1.7, 3.3, 65.5, 0.3337, -2.9], np.float16)


def test_float16_is_rounded_after_every_op_in_the_onnx_file(tmp_path):
    # onnxruntime ran the float16 chain in float32 and rounded once: 39.594 where NumPy gives 39.62
    _bits(half_chain(H), half_chain.fn(H))
    half_chain.export(tmp_path / "half.onnx")
    other = np.random.default_rng(3).uniform(-60, 60, H.size).astype(np.float16)
    for x in (H, other):
        _bits(_ort(tmp_path / "half.onnx", x), half_chain.fn(x))


def test_the_export_check_holds_float16_to_one_ulp(tmp_path, monkeypatch):
    from leapp.export import lowering

    monkeypatch.setattr(lowering.HalfPerOp, "run", lambda self, gm: 0)  # a file rounded once per chain
    with pytest.raises(ExportError, match="disagrees with NumPy"):
        half_chain.export(tmp_path / "once.onnx")
    assert not (tmp_path / "once.onnx").exists()


@leapp.compile
def hyperbolic(x):
    return np.stack([np.sinh(x), np.cosh(x)])


def test_sinh_and_cosh_near_their_overflow_in_the_onnx_file(tmp_path):
    # e^|x| / 2 was exp(|x| - ln 2): |x| - ln 2 rounds to an ulp of |x|, 250 ulps of the result
    x = np.linspace(-710.4, 710.4, 24)
    x[:4] = [709.9, -710.3, 25.5, np.nan]
    hyperbolic(np.linspace(-3.0, 3.0, 24))
    hyperbolic.export(tmp_path / "hyp.onnx")
    got, want = _ort(tmp_path / "hyp.onnx", x), hyperbolic.fn(x)
    ok = np.isfinite(want)
    np.testing.assert_array_equal(got[~ok], want[~ok])
    assert np.all(np.abs(got[ok] - want[ok]) <= 4 * np.spacing(np.abs(want[ok]))), (got - want) / np.spacing(want)


@leapp.compile
def half_sinc(x):
    return np.sinc(x) * x


def test_float16_sinc_in_the_onnx_file(tmp_path):
    x = np.linspace(-3, 3, 37).astype(np.float16)
    _bits(half_sinc(x), half_sinc.fn(x))
    half_sinc.export(tmp_path / "sinc.onnx")
    other = np.random.default_rng(5).uniform(-40, 40, x.size).astype(np.float16)
    for v in (x, other):
        _bits(_ort(tmp_path / "sinc.onnx", v), half_sinc.fn(v))
