"""A value NumPy hands out as a NumPy scalar is a traced 0-d array in leapp (so that it stays
traced); library code that tells the two apart by type (``isinstance(x, Iterable)``) then takes its
array path and gives ``math.cos`` or ``float()`` an array of shape (1,), which NumPy refuses with a
TypeError. spatialmath's ``rpy2r``/``eul2r``/``rotz`` family did so: a raw TypeError from leapp's
``math`` wrapper in the seed API. It is an ``EscapeError`` (a TypeError too) naming the call, its
line and the lines that called it, in the seed API and through ``leapp.compile``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import EscapeError, LeappError

from . import scalar_type_lib as lib

V = np.array([0.1, 0.2, 0.3])


def rpy(v):
    return lib.rpy(v)


def to_float(v):
    return lib.to_float(v[0])


def _seed(fn):
    leapp.start("scalar_types")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = annotate.input_tensors("n", {"v": V})
            annotate.output_tensors("n", {"y": fn(x)})
    finally:
        leapp.api.reset()


def test_numpy_runs_the_library():
    assert lib.rpy(V).shape == (3, 3) and lib.to_float(V[0]) == 0.2


@pytest.mark.parametrize("fn, call, via", [(rpy, "math.cos", r"scalar_type_lib\.py:25 in rpy, "),
                                          (to_float, r"float\(\)", "")])
def test_seed_api_names_the_call_and_its_lines(fn, call, via):
    with pytest.raises(EscapeError, match=call + r" at .*scalar_type_lib\.py:\d+ \(called from .*"
                                          + via + r".*test_scalar_type_checks\.py:\d+ in " + fn.__name__
                                          + r".*shape \(1,\).*isinstance\(x, Iterable\)"):
        _seed(fn)


@pytest.mark.parametrize("fn", [rpy, to_float])
def test_compile_refuses_it_too(fn):
    with pytest.raises(LeappError, match=r"scalar_type_lib\.py:\d+"):
        leapp.compile(fn)(V)


@pytest.mark.parametrize("name", ["rpy2r", "eul2r", "rpy2tr", "eul2tr"])
def test_spatialmath(name):
    smb = pytest.importorskip("spatialmath.base")
    fn = getattr(smb, name)
    with pytest.raises(EscapeError, match=r"math\.cos at .*spatialmath.*symbolic\.py:\d+ \(called from "
                                          r".*transforms3d\.py:\d+ in rot"):
        _seed(fn)
    assert isinstance(fn(V), np.ndarray)  # NumPy runs it


def test_escape_error_is_a_type_error():
    assert issubclass(EscapeError, TypeError)  # `except TypeError` around such code still catches it
