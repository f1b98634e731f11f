"""Validation on perturbed inputs catches what tracing froze, and names the call that froze it."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.compiler import samples
from leapp.errors import EscapeWarning, ValidationError

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)


def normalize_frozen(x):
    scale = float(x.max())  # frozen: the graph divides by this sample's max forever
    return x / scale


def normalize(x):
    return x / x.max()


def test_validation_catches_a_frozen_constant_and_names_the_float_call():
    cf = leapp.compile(normalize_frozen, strict=False)
    line = normalize_frozen.__code__.co_firstlineno + 1
    with pytest.warns(EscapeWarning), pytest.raises(ValidationError) as info:
        cf.trace(X, validate=4)
    message = str(info.value)
    assert "FAILED on 4 sample(s)" in message
    assert f"suspect: {__file__}:{line}: float() of a traced array" in message


def test_validation_passes_for_a_traced_computation():
    cf = leapp.compile(normalize)
    gm = cf.trace(X, validate=8)
    assert cf.graphs == [gm]
    assert "passed on 8 sample(s)" in cf.format_report()


def test_validate_on_user_inputs_returns_the_result():
    cf = leapp.compile(normalize_frozen, strict=False)
    with pytest.warns(EscapeWarning):
        cf(X)
    assert cf.validate(X).ok  # the traced sample itself agrees
    result = cf.validate(X * 3.0)
    assert not result.ok
    assert "float() of a traced array" in result.describe()


def test_validate_on_every_new_trace_when_asked_at_decoration():
    cf = leapp.compile(normalize_frozen, strict=False, validate=2)
    with pytest.warns(EscapeWarning), pytest.raises(ValidationError):
        cf(X)


def test_perturbed_samples_keep_shape_dtype_and_cover_the_range():
    rng = np.random.default_rng(0)
    floats = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    ints = np.array([[-3, 7]], dtype=np.int16)
    bools = np.array([True, False, True, True])
    drawn = [samples.perturb({"f": floats, "i": ints, "b": bools, "k": 5}, rng) for _ in range(200)]
    f = np.stack([d["f"] for d in drawn])
    i = np.stack([d["i"] for d in drawn])
    assert f.dtype == np.float32 and f.shape == (200, 3)
    assert 0.0 <= f.min() < 1.0 and 3.0 < f.max() <= 4.0  # [min - span/2, max + span/2]
    assert i.dtype == np.int16 and i.min() == -3 and i.max() == 7
    assert {d["b"].dtype for d in drawn} == {np.dtype(bool)}
    assert all(d["k"] == 5 for d in drawn)  # non-array arguments are baked in, so kept
    constant = samples.perturb(np.zeros(4), rng)
    assert constant.min() < 0.0 < constant.max()  # a zero span still gets both signs
