"""float64 trigonometry in ONNX: onnxruntime has no double Tan, Atan, Asin, Acos, Asinh, Acosh or
Atanh kernel, and its double Sin and Cos are accurate only absolutely (its sin(pi) is -0.0, so an
angle wrapped with arctan2(sin(a), cos(a)) at a = pi came out -pi), so ``export_lowering`` builds
them; the artifact must stay within a few ulps of NumPy with NaN, ±inf, ±0, multiples of pi and
out-of-domain inputs, through ``leapp.compile`` and its ``export``."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.export import formats as export_formats

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 0.66, 2.414213562373095,
                  np.pi, -np.pi, 3 * np.pi, 29 * np.pi, np.pi / 2, -np.pi / 2, 1e6 * np.pi,
                  2.0 ** 28, 1 + 2.0 ** -52, 1 - 2.0 ** -53, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 3.0, -7.5])


def _values(seed, n=400):
    rng = np.random.default_rng(seed)
    return np.concatenate([EDGES, rng.normal(size=n), rng.uniform(-1, 1, n), 1 - 10.0 ** rng.uniform(-15, 0, n),
                           np.pi / 2 * rng.integers(-200, 200, n), rng.uniform(-1e6, 1e6, n),
                           10.0 ** rng.uniform(-200, 200, n) * rng.choice([-1.0, 1.0], n)])


@leapp.compile
def trig(v, w):
    return {"sin": np.sin(v), "cos": np.cos(v), "wrapped": np.arctan2(np.sin(v), np.cos(v)),
            "tan": np.tan(v), "arctan": np.arctan(v), "arcsin": np.arcsin(v), "arccos": np.arccos(v),
            "arcsinh": np.arcsinh(v), "arccosh": np.arccosh(v), "arctanh": np.arctanh(v),
            "arctan2": np.arctan2(v, w)}


@leapp.compile
def yaw_pitch(q):
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    return yaw, pitch


def _ulps(got, want):
    """Largest distance in ulps where both are finite; NaN, inf and zero signs must agree exactly."""
    assert got.dtype == want.dtype == np.float64
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    zeros = want == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    finite = np.isfinite(want)
    got, want = got[finite], want[finite]
    err = np.abs(got - want)
    return float(np.max(err / np.spacing(np.abs(want)), initial=0.0))


@pytest.mark.parametrize("shape", [(None,), ()], ids=["1-d", "0-d"])
def test_float64_inverse_trig_exports_to_onnxruntime_within_ulps_of_numpy(tmp_path, shape):
    v0, w0 = _values(1), _values(2)[::-1].copy()
    if shape == ():
        v0, w0 = np.array(0.3), np.array(-2.0)
    with np.errstate(all="ignore"):
        trig(v0, w0)
        path = str(tmp_path / "trig.onnx")
        trig.export(path, "onnx")  # the export's own check runs the file against NumPy first
        run = export_formats.LOADERS["onnx"](path, ["v", "w"])
        samples = [(v0, w0)] if shape == () else [(_values(s), _values(s + 1)[::-1].copy()) for s in (3, 4)]
        if shape == ():
            samples += [(np.array(x), np.array(y)) for x, y in zip(EDGES, EDGES[::-1], strict=True)]
        for v, w in samples:
            got = run({"v": v, "w": w})
            want = trig.fn(v, w)
            for g, (name, ref) in zip(got, want.items(), strict=True):
                assert _ulps(np.asarray(g), np.asarray(ref)) <= 4, name


def test_yaw_and_pitch_from_float64_quaternions_deploy_to_onnx(tmp_path):
    rng = np.random.default_rng(7)
    q = rng.normal(size=(64, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    yaw_pitch(q)
    path = str(tmp_path / "yaw.onnx")
    yaw_pitch.export(path, "onnx")
    fresh = rng.normal(size=(64, 4))
    fresh /= np.linalg.norm(fresh, axis=-1, keepdims=True)
    fresh[0] = [1.0, 0.0, 0.0, 0.0]  # the identity: yaw +0.0, pitch +0.0
    fresh[1] = [0.5, 0.5, 0.5, -0.5]  # gimbal lock: arcsin(-1) after the clip
    got = export_formats.LOADERS["onnx"](path, ["q"])({"q": fresh})
    for g, w in zip(got, yaw_pitch.fn(fresh), strict=True):
        assert _ulps(np.asarray(g), w) <= 4
