"""Float64 constants reach an ONNX file from the dynamo exporter unchanged (export/formats.py).

A graph holding an empty tensor on its example (a masked write whose mask is all False) is
exported by torch.export + onnxscript. That path (1) ran onnxscript's optimizer, which drops an
``Add`` of a constant below 1e-8 and a ``Mul`` by a constant within 1e-5 of 1 as if they were 0 and
1: ``v / (norm + 1e-9)`` of a zero vector came out NaN from the file, 0 from NumPy, with no error
(the export check draws no zero vector); and (2) wrote each Python float operand as a float32
constant: float64 ``np.cos`` came out 2e-9 off and vg.signed_angle 7e-6 (that one refused by the
export check), rowan's exp family 7e-8 (tests/corpus/runner.py ONNX_DISAGREES, now empty)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

import leapp


@leapp.compile
def unit_rows(v):
    flags = np.sign(v[:, 0])
    flags[flags == 0] = 1.0  # a masked write: an empty tensor on examples without zeros
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-9), flags, v * 1.000001


@leapp.compile
def trig(a):
    flags = np.sign(a)
    flags[flags == 0] = 1.0
    return flags * np.cos(a), np.arccos(np.clip(a / 3.0, -1.0, 1.0)), np.sin(a) * (4.0 / np.pi)


def _session(cf, path):
    described = cf.export(path)
    assert described["exporter"] == "dynamo"  # "auto" takes it for a graph holding an empty tensor
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _check(session, fn, x):
    for got, want in zip(session.run(None, {session.get_inputs()[0].name: x}), fn(x), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_a_tiny_epsilon_and_a_near_one_factor_survive_the_dynamo_export(tmp_path):
    rng = np.random.default_rng(0)
    unit_rows(rng.standard_normal((4, 3)))
    session = _session(unit_rows, tmp_path / "u.onnx")
    zeros = np.vstack([np.zeros((1, 3)), rng.standard_normal((3, 3))])
    with np.errstate(all="raise"):
        unit_rows.fn(zeros)  # NumPy: no 0/0
    _check(session, unit_rows.fn, zeros)
    _check(session, unit_rows.fn, rng.standard_normal((4, 3)) * 1e3)


def test_float64_trig_through_the_dynamo_export_is_numpys(tmp_path):
    rng = np.random.default_rng(1)
    trig(rng.standard_normal(64))
    session = _session(trig, tmp_path / "t.onnx")
    x = rng.standard_normal(64) * 3
    for got, want in zip(session.run(None, {"a": x}), trig.fn(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=4e-16)
