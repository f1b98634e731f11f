"""Integer powers in ONNX wrap as NumPy's do (export/lowering.py ``pow_``).

onnxruntime's integer ``Pow`` with a tensor exponent goes through double: it rounds past 2**53
and gives INT64_MIN on overflow, where NumPy's integer loop wraps. spatialmath's ``r2q`` on an int64
matrix holding -2**63 came out NaN from the file and 0.25 from NumPy, with no error, because its
``(R[0, 0] + R[1, 1] + R[2, 2] + 1) ** 2`` has a 0-d exponent. ONNX has no int8 ``Pow`` at all,
so ``np.power`` of int8 data was refused at export though a graph exists."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

import leapp


@leapp.compile
def corner_terms(m):
    d1 = (m[0, 0] + m[1, 1] + m[2, 2] + 1) ** 2  # r2q's pattern: 0-d base, 0-d exponent
    return d1, m[0, 1] ** 3


@leapp.compile
def powers(x, e):
    return np.power(x, e), x ** e


def _onnx(cf, path, *args):
    cf.export(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), args, strict=True)})


def _same(got, want):
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_a_0d_integer_power_wraps_in_onnx_as_numpy(tmp_path):
    m = np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1]], dtype=np.int64)
    corner_terms(m)
    edge = np.zeros((3, 3), dtype=np.int64)
    edge[0, 0], edge[0, 1] = np.iinfo(np.int64).min, 3037000500
    with np.errstate(all="ignore"):
        want = corner_terms.fn(edge)
    assert want[0] == 1  # (1 - 2**63) ** 2 wraps to 1
    _same(corner_terms(edge), want)
    _same(_onnx(corner_terms, tmp_path / "c.onnx", edge), want)


def test_integer_powers_with_tensor_exponents_are_exact_in_onnx(tmp_path):
    rng = np.random.default_rng(0)
    for dtype in (np.int64, np.int32, np.int8, np.uint8):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=400, dtype=dtype, endpoint=True)
        e = rng.integers(0, 70 if info.bits > 8 else info.max, size=400).astype(dtype)
        small_x, small_e = np.arange(1, 5, dtype=dtype), np.arange(4, dtype=dtype)
        powers(small_x, small_e)
        with np.errstate(all="ignore"):
            want = powers.fn(x, e)
        _same(powers(x, e), want)
        _same(_onnx(powers, tmp_path / f"p_{np.dtype(dtype).name}.onnx", x, e), want)
