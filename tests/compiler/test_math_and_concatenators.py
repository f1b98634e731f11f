"""No refusal where a graph exists (issue 17): ``math.*`` on traced 0-d values and ``np.r_``/``np.c_``
with traced items are recorded (user code and library code), while ``float()`` of a traced value stays
an escape, and a math result meeting float32 data is computed as NumPy computes with the Python float
``math`` returns (converted to float32 first), not in float64."""

from __future__ import annotations

import math
from math import atan2  # bound at import, before any trace wraps math's attributes

import numpy as np
import pytest
from numpy import c_  # bound at import: the original object, not the one installed while tracing

import leapp
from leapp.errors import ProblemsError

from . import rotations_lib as lib

RNG = np.random.default_rng(1717)


@leapp.compile
def euler_user(rpy):
    cr, sr = math.cos(rpy[0]), math.sin(rpy[0])
    n = math.sqrt(rpy[1] ** 2 + math.exp(rpy[2]))
    return np.array([cr * n, sr, atan2(rpy[1], rpy[2]), math.hypot(rpy[0], rpy[1]), math.fabs(rpy[2])])


@leapp.compile
def euler_library(rpy):
    return lib.euler_to_matrix(rpy[0], rpy[1], rpy[2])


@leapp.compile
def axis_angle(axis, angle):
    return lib.axis_angle_to_quaternion(axis, angle.sum())


@leapp.compile
def round_trip(rpy):
    return lib.matrix_to_euler(lib.euler_to_matrix(rpy[0], rpy[1], rpy[2]))


@leapp.compile
def twist(w, v):
    return lib.twist_matrix(w, v)


@leapp.compile
def concat_user(a, b):
    return np.r_[a, b.sum(), 1.0, 0:2], c_[a, b * 2], np.r_["0,2", a, b]


@leapp.compile
def white_noise(dt):
    return lib.white_noise_2(dt[0], 0.1)


@leapp.compile
def frozen_float(x):
    return x * float(x[0])


@leapp.compile
def weak_float32(x32, a):
    return lib.scaled(x32, a[0])


def _check(cf, fn, make, tries=3, rtol=1e-12):
    for k in range(tries):
        args = make(k)
        got, want = cf(*args), fn(*args)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-15)
    assert len(cf.graphs) == 1  # one graph followed every input: nothing was frozen


def _rpy(k):
    return (RNG.uniform(-1, 1, 3),)


def test_math_functions_in_user_code_are_recorded():
    _check(euler_user, euler_user.fn, _rpy)


def test_math_functions_in_library_code_are_recorded():
    _check(euler_library, lambda r: lib.euler_to_matrix(r[0], r[1], r[2]), _rpy)
    _check(round_trip, lambda r: lib.matrix_to_euler(lib.euler_to_matrix(r[0], r[1], r[2])), _rpy)
    _check(axis_angle, lambda ax, an: lib.axis_angle_to_quaternion(ax, an.sum()),
           lambda k: (RNG.standard_normal(3), RNG.uniform(0, 3, 1)))
    _check(white_noise, lambda dt: lib.white_noise_2(dt[0], 0.1), lambda k: (RNG.uniform(0.01, 1, 1),))


def test_r_and_c_with_traced_items_are_recorded():
    _check(twist, lib.twist_matrix, lambda k: (RNG.standard_normal(3), RNG.standard_normal(3)))
    _check(concat_user, concat_user.fn, lambda k: (RNG.standard_normal(2), RNG.standard_normal(2)))


def test_traced_math_and_concatenators_export_to_onnx(tmp_path):
    import onnxruntime as ort

    def pose(rpy, v):
        return lib.twist_matrix(lib.euler_to_matrix(rpy[0], rpy[1], rpy[2])[0], v)

    compiled = leapp.compile(pose)
    compiled(RNG.uniform(-1, 1, 3), RNG.standard_normal(3))
    compiled.export(tmp_path / "pose.onnx")
    session = ort.InferenceSession(str(tmp_path / "pose.onnx"), providers=["CPUExecutionProvider"])
    for _ in range(2):
        args = (RNG.uniform(-1, 1, 3), RNG.standard_normal(3))
        feed = dict(zip((i.name for i in session.get_inputs()), args, strict=True))
        np.testing.assert_allclose(session.run(None, feed)[0], pose(*args), rtol=1e-6, atol=1e-12)


def test_float_of_a_traced_value_stays_an_escape():
    with pytest.raises(ProblemsError, match="float"):
        frozen_float(np.arange(3.0))


@leapp.compile
def unit32(v):
    return lib.unit_vector32(v)


@leapp.compile
def rotation32(a, d):
    return lib.rotation32(a[0], d)


def test_a_math_result_meeting_float32_data_is_computed_as_numpy_does():
    # math returns a Python float, which NumPy converts to float32 before a float32 op (NEP 50's weak
    # scalar); leapp's math result was a float64 0-d array, so the op ran in float64, and strict
    # leapp.compile refused it (robosuite's unit_vector and rotation_matrix) where a graph exists
    _check(weak_float32, lambda x, a: lib.scaled(x, a[0]),
           lambda k: (RNG.standard_normal(3).astype(np.float32), RNG.uniform(-3, 3, 1)), rtol=0)
    _check(unit32, lib.unit_vector32, lambda k: (RNG.standard_normal(3),), rtol=0)
    _check(rotation32, lambda a, d: lib.rotation32(a[0], d),
           lambda k: (RNG.uniform(-3, 3, 1), RNG.standard_normal(3)), rtol=0)


@leapp.compile
def as_matrix(a, b):
    return np.asarray(np.r_["r", a, b])


def test_a_matrix_directive_is_refused_naming_np_r():
    with pytest.raises(ProblemsError, match=r"np\.r_\['r', \.\.\.\]"):
        as_matrix(np.ones(2), np.zeros(2))


def _polar(v):
    r = math.sqrt(v[0] ** 2 + v[1] ** 2)
    return r, math.atan2(v[1], v[0]), math.hypot(v[0], v[1]) * 2.0, r * np.float64(1.0)


def test_a_math_result_returned_is_a_python_float_as_in_numpy():
    cf = leapp.compile(_polar)
    for v in (np.array([3.0, 4.0]), np.array([-1.0, 0.5])):
        got, want = cf(v), _polar(v)
        assert [type(g) for g in got] == [type(w) for w in want] == [float, float, float, np.float64]
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-15)
