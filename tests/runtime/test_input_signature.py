"""A graph runs only on inputs like the ones it was traced for: other shapes, dtypes and array
subclasses are traced again (leapp.compile) or refused with the node, port, expected and got."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leapp
from leapp import annotate
from leapp.errors import InputError, ValidationError


def _matrix(rows, dtype=np.float64):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix is discouraged, still used
        return np.matrix(rows, dtype)


MATRIX = _matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])


def _seed_node(passes=((3,), (3,)), on_mismatch="raise"):
    with leapp.session("sig"):
        for i, shape in enumerate(passes):
            x = annotate.input_tensors("prep", {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + i})
            annotate.output_tensors("prep", {"y": x * 2 + x.sum()})
    return leapp.compile_graph(validate=True, on_mismatch=on_mismatch)["prep"]


@pytest.mark.parametrize("value, got", [
    (np.ones((2, 3), np.float32), r"float32\[2, 3\]"),
    (np.arange(3), r"int64\[3\]"),
    ([1.0, 2.0, 3.0], r"float64\[3\]"),
    (torch.ones(3, dtype=torch.float64), r"a torch.float64 tensor of shape \[3\]"),
])
def test_seed_node_refuses_another_shape_or_dtype(value, got):
    node = _seed_node()
    with pytest.raises(InputError, match=rf"node 'prep' input 'x': the graph was traced for float32\[3\], got {got}"):
        node(x=value)
    with pytest.raises(InputError):
        node.run_torch(x=torch.ones(2, 3))


def test_seed_node_runs_inputs_like_the_traced_one():
    node = _seed_node()
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(node(x=x)["y"], x * 2 + x.sum())
    np.testing.assert_array_equal(node(x=torch.from_numpy(x))["y"], x * 2 + x.sum())
    assert node.call_batched(x=x)["y"].shape == (3,)


@pytest.mark.parametrize("value, what", [(_matrix([[1.0, 2.0, 3.0]], np.float32), "np.matrix"),
                                         (np.ma.masked_array(np.ones(3, np.float32), mask=[0, 1, 0]), "masked")])
def test_seed_node_refuses_array_subclasses(value, what):
    node = _seed_node()
    with pytest.raises(InputError, match=f"node 'prep' input 'x' is an? {what}"):
        node(x=value)


def test_a_later_pass_of_another_shape_fails_validation_instead_of_passing_silently():
    with pytest.raises(ValidationError, match=r"(?s)FAILED.*traced for float32\[3\], got float32\[4\]"):
        _seed_node(passes=((3,), (3,), (4,)))
    with pytest.warns(Warning, match="FAILED"):
        node = _seed_node(passes=((3,), (3,), (4,)), on_mismatch="warn")
    assert not node.validation.ok
    assert "traced for float32[3], got float32[4]" in node.validation.describe()


def test_seed_input_of_a_subclass_is_refused_at_annotate():
    with pytest.raises(InputError, match="node 'n' input 'x' is an np.matrix"):
        with leapp.session("sub"):
            annotate.input_tensors("n", {"x": MATRIX})


def test_dynamic_batch_frees_only_the_leading_axis():
    node = _seed_node(passes=((2, 3), (2, 3)))
    assert node.call_batched(x=np.ones((5, 3), np.float32))["y"].shape == (5, 3)
    for bad in (np.ones((5, 4), np.float32), np.ones((5, 3))):
        with pytest.raises(InputError):
            node.call_batched(x=bad)


@leapp.compile
def _square_plus_one(x):
    return x * x + 1.0


def test_compile_traces_again_per_shape_and_dtype():
    a = np.arange(3, dtype=np.float32)
    b = np.arange(6.0).reshape(2, 3)
    c = np.arange(3)
    for x in (a, b, c, a):
        got = _square_plus_one(x)
        want = x * x + 1.0
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert len(_square_plus_one.graphs) == 3


@pytest.mark.parametrize("value, what", [(MATRIX, "np.matrix"), (MASKED, "masked array")])
def test_compile_refuses_matrix_and_masked_arrays_even_after_a_plain_graph(value, what):
    _square_plus_one(np.asarray(value))  # a plain graph of the same shape and dtype exists
    with pytest.raises(InputError, match=what):
        _square_plus_one(value)
    with pytest.raises(InputError, match=what):
        _square_plus_one.trace(value)  # nor traced as if it were a plain array


def test_compile_accepts_memmap_which_computes_as_an_ndarray(tmp_path):
    mm = np.memmap(tmp_path / "data.bin", dtype=np.float64, mode="w+", shape=(2, 2))
    mm[:] = [[1.0, -2.0], [0.5, 3.0]]
    np.testing.assert_array_equal(_square_plus_one(mm), np.asarray(mm) * np.asarray(mm) + 1.0)
