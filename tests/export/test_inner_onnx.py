"""``np.inner`` exports to ONNX as a contraction of the last axes (export/lowering.py ``inner``): ONNX
has no inner, so vg.rotate (``np.inner`` of the vectors and the axis) and every graph with it were
refused at export though the graph is exact."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import vg

import leapp


@leapp.compile
def inner_products(a, b, k):
    return np.inner(a, b), np.inner(a[0], b), np.inner(a, b[1]), np.inner(k, b), np.inner(a[0, 0], k)


@leapp.compile
def rotated(v):
    return vg.rotate(v, np.array([0.0, 0.0, 1.0]), 30.0)


def _run(cf, path, **feeds):
    cf.export(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


def test_inner_of_matrices_vectors_and_scalars_exports_as_numpy(tmp_path):
    rng = np.random.default_rng(0)
    a, b, k = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.integers(-3, 4, size=4)
    inner_products(a, b, k)
    a2, b2, k2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.integers(-3, 4, size=4)
    a2[0, 1, 2], b2[3, 0] = np.nan, np.inf
    for got, want in zip(_run(inner_products, tmp_path / "i.onnx", a=a2, b=b2, k=k2),
                         inner_products.fn(a2, b2, k2), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_vg_rotate_exports(tmp_path):
    rng = np.random.default_rng(1)
    rotated(rng.standard_normal(3))
    v = rng.standard_normal(3)
    (got,) = _run(rotated, tmp_path / "r.onnx", v=v)
    np.testing.assert_allclose(got, rotated.fn(v), rtol=1e-12, atol=1e-12)
