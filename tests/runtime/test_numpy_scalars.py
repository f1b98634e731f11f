"""Values NumPy holds as NumPy scalars stay scalars in meaning, though leapp traces them as 0-d arrays.

A reduction, a ufunc of 0-d operands or an integer index gives a NumPy scalar:
immutable, so ``t += 1`` rebinds ``t`` and leaves every other name for the old
value alone, and its ``**`` is ``np.power`` (``np.True_ ** 2`` is int64), not
ndarray's shortcut through ``np.square`` (int8 for a bool array). A real 0-d
array (``x[...]``, ``np.zeros(())``) keeps array semantics. Checked through
``leapp.compile`` (whose calls hand such outputs out as NumPy scalars too),
the seed API and an ONNX artifact, each against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.export import formats as export_formats


def running_totals(x):
    total = x.sum()
    first = total  # NumPy: the value, not a name for the same memory
    total += 1.0
    mean = np.mean(x)
    kept = [mean]
    mean *= 2.0
    head = x[0]
    alias = head
    head -= 10.0
    peak = x.max()
    peak **= 2
    return total, first, mean, kept[0], head, alias, peak


def real_zero_d(x):
    box = np.zeros(())  # a 0-d array: += writes into it, and every name for it sees that
    view = box[...]
    view += x.sum()
    return box, view


def builtins_on_scalars(x):
    s = x.sum()
    return round(s, 2), round(x.mean(), -1), abs(-s), divmod(s, 2.0), pow(s, 2), s // 3, s % 3


def powers(x):
    flag = (x > 0).any()  # np.bool_
    count = x[0] > 1.0  # np.bool_ from a comparison of a NumPy scalar
    low = x.astype(np.float32).min()  # np.float32
    return (flag ** 2, count ** 2, (x > 0) ** 2, np.power(x.sum(), 2), low ** np.float64(2),
            np.maximum(low, -0.0) ** np.float64(0.5), 2.0 ** low)


compiled_totals = leapp.compile(running_totals)
compiled_zero_d = leapp.compile(real_zero_d)
compiled_powers = leapp.compile(powers)
compiled_builtins = leapp.compile(builtins_on_scalars)

X = np.array([1.5, -2.0, 4.0, 0.25])


def _same(got, want, kind=True):
    if kind:  # a NumPy scalar where NumPy returns one, an array where it returns an array
        assert type(got) is type(want), (type(got), type(want))
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn, cf", [(running_totals, compiled_totals), (real_zero_d, compiled_zero_d),
                                    (powers, compiled_powers), (builtins_on_scalars, compiled_builtins)],
                         ids=["scalars", "0-d array", "powers", "builtins"])
def test_compile_keeps_numpy_scalar_semantics(fn, cf):
    for x in (X, X[::-1].copy(), -X):
        want = fn(x.copy())
        got = cf(x.copy())
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            for gi, wi in zip(g, w, strict=True) if isinstance(w, tuple) else ((g, w),):
                _same(gi, wi)


def test_the_first_name_keeps_the_old_value():
    total, first, mean, kept, head, alias, peak = compiled_totals(X)
    assert total == first + 1.0 and mean == 2.0 * kept and head == alias - 10.0
    assert peak == X.max() ** 2


def test_bool_scalar_squared_is_int64_and_bool_array_squared_is_int8():
    flag, count, mask, total, strong, *_ = compiled_powers(X)
    assert (np.asarray(flag).dtype, np.asarray(count).dtype) == (np.int64, np.int64)
    assert mask.dtype == np.int8
    assert np.asarray(total).dtype == np.float64
    assert type(strong) is np.float64  # np.float32 ** np.float64: both strong (NEP 50)


def test_seed_api_keeps_numpy_scalar_semantics():
    leapp.start("scalars")
    x = annotate.input_tensors("totals", {"x": X})  # one input: the array itself
    outs = running_totals(x)
    annotate.output_tensors("totals", {f"o{i}": o for i, o in enumerate(outs)})
    leapp.stop()
    node = leapp.compile_graph(validate=False)["totals"]
    got = node(x=-X)  # a seed node hands out arrays by name
    for i, want in enumerate(running_totals(-X)):
        _same(got[f"o{i}"], want, kind=False)


def test_the_onnx_artifact_keeps_numpy_scalar_semantics(tmp_path):
    compiled_totals(X)
    path = str(tmp_path / "totals.onnx")
    compiled_totals.export(path, "onnx")
    run = export_formats.LOADERS["onnx"](path, ["x"])
    for g, w in zip(run({"x": -X}), running_totals(-X), strict=True):
        _same(g, w, kind=False)


def rounded_to_int(x):
    return x * round(x.mean())


def test_round_to_a_python_int_is_refused_at_its_line():
    # round(v) of a NumPy scalar is a Python int: the value would leave the graph
    from leapp.errors import ProblemsError

    with pytest.raises(ProblemsError, match=r"test_numpy_scalars.py:\d+:\d+: LP201 `round\(x.mean\(\)\)`"):
        leapp.compile(rounded_to_int)(X)
    with pytest.raises(TypeError, match="doesn't define __round__"):
        leapp.compile(round_an_array, strict=False)(X)  # an array: NumPy's TypeError


def round_an_array(x):
    return round(x[...])


@leapp.compile
def ratios_as_ints(x):
    return np.array([x[0] / x[1], x[2]], dtype=np.int64)  # pyrr.plane.create's pattern


def test_a_list_of_numpy_scalars_converts_to_int_as_numpy_does():
    # NumPy converts a NumPy scalar element by Python's int(): NaN raises (a 0-d array would be cast
    # to INT64_MIN). leapp ran NumPy on 0-d arrays, so compiling on such an example returned a graph
    # where NumPy raises (pyrr.plane.create_from_position with an all-zero int normal).
    nan_example = np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="cannot convert float NaN to integer") as numpy_error:
        ratios_as_ints.fn(nan_example)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer") as leapp_error:
        ratios_as_ints(nan_example)
    assert type(leapp_error.value) is type(numpy_error.value)
    for x in (np.array([7.0, 2.0, -3.5]), np.array([-7.0, 2.0, 1e9])):
        got, want = ratios_as_ints(x), ratios_as_ints.fn(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
