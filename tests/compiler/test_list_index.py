"""A list index whose elements are traced values (vg.apex_and_opposite: ``points[[apex, opposite]]`` with
``apex = np.argmax(...)``) is the integer (or boolean) index array NumPy makes of it. Lowering called
np.asarray on the graph's values and raised an InternalError ("invalid __array_struct__")."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

import leapp


@leapp.compile
def extremes(points, along):
    d = points[:, 0] * along[0] + points[:, 2]  # no reduction: bit for bit
    return points[[np.argmax(d), np.argmin(d)]], points[[np.argmax(d), -1, 0]], d[[[np.argmin(d)], [2]]]


@leapp.compile
def reset_extremes(points, along):
    d = points[:, 0] * along[0] + points[:, 2]  # no reduction: bit for bit
    out = points.copy()
    out[[np.argmax(d), np.argmin(d)]] = 0.0
    return out


@leapp.compile
def pick_by_flags(v):
    return v[[v[0] > 0, v[1] > 0, v[2] > v[0]]]


def _cases(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((6, 3)), rng.standard_normal(3)


def _same(got, want):
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_a_list_of_traced_indices_selects_and_writes_as_numpy(tmp_path):
    for seed in range(4):
        p, a = _cases(seed)
        _same(extremes(p, a), extremes.fn(p, a))
        _same(reset_extremes(p, a), reset_extremes.fn(p, a))
    extremes.export(tmp_path / "e.onnx")
    session = ort.InferenceSession(str(tmp_path / "e.onnx"), providers=["CPUExecutionProvider"])
    p, a = _cases(9)
    _same(tuple(session.run(None, {"points": p, "along": a})), extremes.fn(p, a))


def test_a_list_of_traced_bools_is_a_mask():
    for v in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, 2.0, -3.0]), np.array([0.5, 0.25, 0.75])):
        _same(pick_by_flags(v), pick_by_flags.fn(v))
