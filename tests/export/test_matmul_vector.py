"""``R.T @ v`` with a 1-D ``v`` in ONNX (export/lowering.py ``matmul``).

onnxruntime's graph optimiser (EXTENDED and ALL, ALL being the default) fuses the Transpose into
the MatMul and then computes ``R.T @ v`` as ``R @ v`` when ``v`` is 1-D (onnxruntime 1.32; right with
the optimiser off or at BASIC): modern_robotics' ``TransInv`` (``-np.dot(Rt, p)``) was refused by the
export check. The file multiplies by ``v`` as a column (or a row on the left) and squeezes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import leapp


@leapp.compile
def inverse_transform(t):
    r, p = t[:3, :3], t[:3, 3]
    rt = np.array(r).T
    return np.r_[np.c_[rt, -np.dot(rt, p)], [[0, 0, 0, 1]]]  # modern_robotics.TransInv


@leapp.compile
def both_sides(m, v):
    return m.T @ v, v @ m.T, np.matmul(m.T, v), m.T @ m, v @ v


LEVELS = [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
          ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, ort.GraphOptimizationLevel.ORT_ENABLE_ALL]


def _run(path, level, *args):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), args, strict=True)})


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.name)
def test_transposed_matrix_times_vector_in_onnx(tmp_path, level):
    rng = np.random.default_rng(3)
    t = np.eye(4)
    t[:3, :] = rng.normal(size=(3, 4))
    inverse_transform(t)
    inverse_transform.export(tmp_path / "t.onnx")  # the export check ran the file at ORT's default
    for sample in (t, -t, t * 1e3):
        np.testing.assert_allclose(_run(tmp_path / "t.onnx", level, sample)[0], inverse_transform.fn(sample),
                                   rtol=1e-12, atol=1e-12)
    m, v = rng.normal(size=(3, 3)), rng.normal(size=3)
    both_sides(m, v)
    both_sides.export(tmp_path / "b.onnx")
    for got, want in zip(_run(tmp_path / "b.onnx", level, m, v), both_sides.fn(m, v), strict=True):
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
