"""The library corpus' three false refusals, as mechanisms (tests/corpus KNOWN_GAPS, issue 17): library
code that hands NumPy a Python list of traced values, computes with NumPy on plain arrays it was given,
or unpacks ``x.flat``, traces exactly; a library that writes into an array it was given, and a ``.flat``
write NumPy would fill by repeating, are refused at the line. Each graph is compared with NumPy on
fresh and edge inputs (zeros, negatives, large values)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from agree import same

import leapp
from leapp.errors import EscapeError, ProblemsError, UnsupportedArgumentError
from leapp.runtime import library_args, patches, state

from . import library_gaps_lib as lib

RNG = np.random.default_rng(2017)
P0 = np.diag([0.5, 0.4, 0.3])
F0 = np.eye(3) + 0.1


def _rotation(a, b, c):
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    return np.array([[cb * cc, -cb * sc, sb], [ca * sc + cc * sa * sb, ca * cc - sa * sb * sc, -cb * sa],
                     [sa * sc - ca * cc * sb, cc * sa + ca * sb * sc, ca * cb]])


def _inputs(shape):
    yield RNG.normal(size=shape)
    yield np.zeros(shape)
    yield -np.abs(RNG.normal(size=shape)) * 1e3
    yield np.full(shape, 1e-300)


def _same(got, want):
    same(got, want, rtol=1e-12, atol=1e-300)


def norm_of_items(v):
    return lib.norm_of_items(v)


def stacked_mean(a, b):
    return lib.stacked_mean(a, b)


def predict(x):
    return lib.predict(x, P0, F0)


def step(x):
    return lib.write_state(x, lib.STATE)


def flat_angles(M):
    return lib.flat_angles(M)


def flat_reads(M):
    return lib.flat_reads(M)


def flat_writes(M, v):
    return lib.flat_writes(M, v)


def flat_repeats(M, v):
    return lib.flat_repeats(M, v)


def normalize_rows(v):
    return lib.normalize_rows(v)


def first_row_from_2d(q0):
    return lib.first_row_from_2d(q0)


def twist_adjoint(v):
    return lib.twist_adjoint(v)


def composed_then_method(a, t, b, u):
    p = lib.Pose2(a, t) @ lib.Pose2(b, u)
    return p.scaled_t()


def subclass_norm(v):
    return lib.subclass_norm(v)


def _takes_a_list(module, attr):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = getattr(module, attr)([0.5, -1.25, 2.0, 0.75])
    except Exception:  # noqa: BLE001 - NumPy's own refusal of a lone 1-d list: not such a function
        return False
    return isinstance(result, (np.ndarray, np.generic)) and result.dtype != object


# generated: every NumPy function leapp wraps while tracing that NumPy itself calls on a lone list
# (np.empty_like's values are uninitialised memory in NumPy, zeros in leapp: docs/limitations.md)
LIST_TAKERS = tuple(name for name, module, attr in library_args.targets()
                    if name != "numpy.empty_like" and _takes_a_list(module, attr))


def every_on_a_list(v):
    return lib.every_function_on_a_list(v, LIST_TAKERS)


def _exact(fn, shapes, make=None):
    compiled = leapp.compile(fn, strict=True)
    for values in zip(*[_inputs(s) for s in shapes], strict=True):
        values = make(*values) if make else values
        _same(compiled(*values), fn(*values))
    assert len(compiled.graphs) == 1  # one graph followed every input: nothing was frozen


def test_a_list_of_traced_values_handed_to_numpy_in_library_code_traces():
    _exact(norm_of_items, [(6,)])
    _exact(stacked_mean, [(2, 3), (2, 3)])


def test_every_wrapped_function_given_a_list_of_traced_values_traces():
    assert len(LIST_TAKERS) > 40 and "numpy.linalg.norm" in LIST_TAKERS
    _exact(every_on_a_list, [(4,)])


def test_the_list_wrappers_are_numpys_own_outside_a_trace():
    assert state.current() is None and not patches.is_installed()
    assert not library_args.is_wrapper(np.linalg.norm) and not library_args.is_wrapper(np.mean)


def test_numpy_bound_at_import_on_plain_arrays_handed_in_folds_to_constants():
    _exact(predict, [(3,)])
    _, p = leapp.compile(predict, strict=True)(np.ones(3))
    _same(p, lib.predict(np.ones(3), P0, F0)[1])  # the covariance is a constant, folded


def test_a_library_writing_into_an_array_it_was_given_is_refused():
    with pytest.raises((EscapeError, ProblemsError), match=r"wrote into the array passed as its argument 1"):
        leapp.compile(step, strict=True)(np.ones(3))


def test_flat_unpacking_and_math_on_the_scalars_trace():
    _exact(flat_angles, [(3,)], make=lambda a: (_rotation(*(a * 0.3)),))


def test_flat_reads_trace():
    _exact(flat_reads, [(3, 3)])


def test_flat_writes_land_in_the_array():
    _exact(flat_writes, [(3, 3), (3,)])


def test_a_flat_write_numpy_fills_by_repeating_is_refused():
    with pytest.raises((UnsupportedArgumentError, ProblemsError), match="repeats the value"):
        leapp.compile(flat_repeats, strict=True)(np.ones((3, 3)), np.ones(3))


def test_a_scalar_type_of_an_array_and_a_masked_write_in_library_code_trace():
    # np.double(v) of a (1, 3) array recorded float() as an escape (NumPy's TypeError discards it), and
    # the array a masked write filled was taken for one whose size follows the data (its .shape refused)
    _exact(normalize_rows, [(3,)])
    _exact(normalize_rows, [(4, 3)])


def test_a_value_with_more_leading_axes_than_the_selection_is_written_as_numpy_does():
    # NumPy drops the value's leading length-1 axes; the graph's expand_as raised a RuntimeError
    _exact(first_row_from_2d, [(4,)])


def test_np_block_of_traced_and_constant_blocks_traces():
    # numpy.block had no table entry: lee-groups' se3.ad() was refused as untraced
    _exact(twist_adjoint, [(6,)])


def test_a_method_of_an_object_a_library_operator_made_converts_its_branch():
    # `p = pose_a @ pose_b` was taken for an array (a matmul), so `p.scaled_t()` ran without the
    # library conversion and its branch on the angle was refused (zeros take the `if` arm)
    _exact(composed_then_method, [(), (2,), (), (2,)], make=lambda *v: tuple(np.asarray(x) for x in v))


def test_a_view_as_an_ndarray_subclass_is_refused_naming_the_subclass():
    # the message said the view reinterpreted the array's bytes (scikit-spatial's Vector(v))
    with pytest.raises((UnsupportedArgumentError, ProblemsError),
                       match=r"library_gaps_lib\.py:\d+.*view\(Vector\).*an ndarray subclass \(Vector\)"):
        leapp.compile(subclass_norm, strict=True)(np.ones(3))
