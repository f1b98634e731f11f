"""Inputs a graph cannot hold: a clear InputError naming the parameter, never torch's or an InternalError."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import InputError


def affine(x, y):
    return x * 2.0 + y


@pytest.mark.parametrize("bad", [
    np.array([1.0, 2.0], dtype=object),
    np.array(["a", "b"]),
    np.array(["2020-01-01"], dtype="datetime64[D]"),
])
def test_an_array_of_a_dtype_no_tensor_has_is_an_input_error_naming_the_parameter(bad):
    cf = leapp.compile(affine)
    with pytest.raises(InputError, match=r"argument 'y' is an array of") as info:
        cf(np.ones(2), bad)
    assert str(bad.dtype) in str(info.value)


def test_complex_inputs_trace_exactly():
    z = np.array([1 + 2j, -3j], np.complex128)
    np.testing.assert_array_equal(leapp.compile(affine)(z, z), affine(z, z))


def test_a_masked_array_is_an_input_error():
    with pytest.raises(InputError, match="masked array"):
        leapp.compile(affine)(np.ones(3), np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]))
