"""Issue 17: ONNX files that departed from NumPy where the export check did not look. Each case goes
through ``@leapp.compile`` and ``export``; the written file is run in onnxruntime against NumPy on
inputs at the edge, or the export is refused naming the call."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import ExportError


def _ort(path, *inputs):
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: np.asarray(v) for i, v in zip(session.get_inputs(), inputs, strict=True)})[0]


def _bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), (got, want)


@leapp.compile
def half_chain(a):
    return (a * np.float16(3.3) + np.float16(1.1)) * a - a / np.float16(7.0)


H = np.array([0.1, 1.7, 3.3, 65.5, 0.3337, -2.9], np.float16)


def test_float16_is_rounded_after_every_op_in_the_onnx_file(tmp_path):
    # onnxruntime ran the float16 chain in float32 and rounded once: 39.594 where NumPy gives 39.62
    _bits(half_chain(H), half_chain.fn(H))
    half_chain.export(tmp_path / "half.onnx")
    other = np.random.default_rng(3).uniform(-60, 60, H.size).astype(np.float16)
    for x in (H, other):
        _bits(_ort(tmp_path / "half.onnx", x), half_chain.fn(x))


def test_the_export_check_holds_float16_bit_for_bit(tmp_path, monkeypatch):
    from leapp.export import lowering

    monkeypatch.setattr(lowering.HalfPerOp, "run", lambda self, gm: 0)  # a file rounded once per chain
    with pytest.raises(ExportError, match="disagrees with NumPy"):
        half_chain.export(tmp_path / "once.onnx")
    assert not (tmp_path / "once.onnx").exists()


@leapp.compile
def hyperbolic(x):
    return np.stack([np.sinh(x), np.cosh(x)])


def test_sinh_and_cosh_near_their_overflow_in_the_onnx_file(tmp_path):
    # e^|x| / 2 was exp(|x| - ln 2): |x| - ln 2 rounds to an ulp of |x|, 250 ulps of the result
    x = np.linspace(-710.4, 710.4, 24)
    x[:4] = [709.9, -710.3, 25.5, np.nan]
    hyperbolic(np.linspace(-3.0, 3.0, 24))
    hyperbolic.export(tmp_path / "hyp.onnx")
    got, want = _ort(tmp_path / "hyp.onnx", x), hyperbolic.fn(x)
    ok = np.isfinite(want)
    np.testing.assert_array_equal(got[~ok], want[~ok])
    assert np.all(np.abs(got[ok] - want[ok]) <= 4 * np.spacing(np.abs(want[ok]))), (got - want) / np.spacing(want)


@leapp.compile
def half_sinc(x):
    return np.sinc(x) * x


def test_float16_sinc_in_the_onnx_file(tmp_path):
    x = np.linspace(-3, 3, 37).astype(np.float16)
    _bits(half_sinc(x), half_sinc.fn(x))
    half_sinc.export(tmp_path / "sinc.onnx")
    other = np.random.default_rng(5).uniform(-40, 40, x.size).astype(np.float16)
    for v in (x, other):
        _bits(_ort(tmp_path / "sinc.onnx", v), half_sinc.fn(v))


@leapp.compile
def u64_to_floats(u):
    return u.astype(np.float64), u.astype(np.float32) * np.float32(2.0)


def _u64_hard(n):
    """uint64 values past 2**63 and 2**53, at and beside float32's and float64's half-way points."""
    rng = np.random.default_rng(11)
    ties = []
    for top, grid in ((63, 40), (60, 37), (54, 31), (63, 11), (55, 3)):
        k = rng.integers(0, 2**20, n // 10, dtype=np.uint64)
        base = (np.uint64(1) << np.uint64(top)) + (k << np.uint64(grid)) + (np.uint64(1) << np.uint64(grid - 1))
        ties += [base, base + np.uint64(1), base - np.uint64(1)]
    hard = np.concatenate([*ties, np.array([0, 1, 2**53 + 1, 2**63, 2**64 - 1, 2**64 - 2**10], np.uint64)])
    return np.resize(hard, n)


def test_uint64_past_2_63_converts_to_float_as_numpy_in_the_onnx_file(tmp_path):
    # a plain Cast of the int64 the file carries uint64 in read 2**63 as -2**63 (silently: the
    # export check drew fresh integers within the example's range only)
    u = np.arange(1, 151, dtype=np.uint64)
    for got, want in zip(u64_to_floats(u), u64_to_floats.fn(u), strict=True):
        _bits(got, want)
    u64_to_floats.export(tmp_path / "u64.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "u64.onnx"), providers=["CPUExecutionProvider"])
    hard = _u64_hard(u.size)
    for got, want in zip(session.run(None, {"u": hard}), u64_to_floats.fn(hard), strict=True):
        _bits(got, want)


@leapp.compile
def shifts(u, s, i):
    return u >> 7, u >> s, i >> 7, (u >> np.uint8(6)) + (u << 1)


def test_unsigned_right_shift_by_width_less_one_keeps_the_top_bit_in_the_onnx_file(tmp_path):
    # uint8 >> 7 was taken for a sign shift (0 or -1): 200 >> 7 gave 0, NumPy 1
    u = np.array([0, 1, 5, 7], np.uint8)
    s = np.array([1, 2, 7, 3], np.uint8)
    i = np.array([-3, 4, -128, 127], np.int8)
    for got, want in zip(shifts(u, s, i), shifts.fn(u, s, i), strict=True):
        _bits(got, want)
    shifts.export(tmp_path / "shifts.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "shifts.onnx"), providers=["CPUExecutionProvider"])
    edge = (np.array([128, 255, 200, 127], np.uint8), np.array([7, 8, 7, 6], np.uint8), i)
    for got, want in zip(session.run(None, dict(zip("usi", edge, strict=True))), shifts.fn(*edge), strict=True):
        _bits(got, want)


@leapp.compile
def int_reductions(i, j):
    return i.sum(axis=-1), np.prod(j, axis=1), np.prod(j, axis=1, dtype=np.int32), j.sum(), np.prod(i)


def _int_cases():
    i = np.arange(12, dtype=np.int64).reshape(3, 4)
    j = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    top = np.iinfo(np.int64)
    edge_i = np.array([[top.max, top.min, top.min + 1, 3], [top.max, top.max, 5, 1], [top.min, top.min, 0, 7]])
    edge_j = np.array([[2**31 - 1] * 4, [100000, 300000, 7, 11], [-(2**31), -1, 3, 3]], np.int32)
    return (i, j), (edge_i, edge_j)


def test_integer_sums_and_products_wrap_in_the_onnx_file(tmp_path):
    # onnxruntime's ReduceSum and ReduceProd saturate at the int64 limits where NumPy wraps
    example, edge = _int_cases()
    int_reductions(*example)
    int_reductions.export(tmp_path / "ints.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "ints.onnx"), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, dict(zip("ij", edge, strict=True))), int_reductions.fn(*edge), strict=True):
        _bits(got, want)


def test_the_export_check_tries_integers_at_their_extremes(tmp_path, monkeypatch):
    from leapp.export import lowering

    example, _ = _int_cases()
    monkeypatch.delitem(lowering.FUNCTIONS, torch_sum())  # a file that sums with ReduceSum
    int_reductions(*example)
    with pytest.raises(ExportError, match=r"\(extreme integers\).*numpy.sum"):
        int_reductions.export(tmp_path / "saturating.onnx")


def torch_sum():
    import torch

    return torch.sum


@leapp.compile
def signs(x):
    return np.copysign(2.0, x - 1.0) * 3.0


def test_a_file_that_cannot_read_a_nans_sign_is_refused_naming_the_call(tmp_path):
    # no ONNX op reads the sign bit of a NaN: copysign(2.0, -nan) is -2.0 in NumPy, 2.0 in the file
    signs(np.array([0.5, 2.0, 3.0]))
    with pytest.raises(ExportError) as info:
        signs.export(tmp_path / "signs.onnx")
    text = str(info.value)
    line = signs.fn.__code__.co_firstlineno + 2
    assert "(inputs with -NaN)" in text and f"numpy.copysign at {__file__}:{line}" in text, text
    assert "sign bit of a NaN" in text and not (tmp_path / "signs.onnx").exists()
    signs.export(tmp_path / "signs.pt2", format="pt2")  # torch's copysign reads it


@leapp.compile
def signed_shifts(a, b):
    return a >> b, a << b


def test_shifts_by_a_negative_count_in_the_onnx_file(tmp_path):
    # NumPy takes a negative count as one past the width (0, or -1 for a negative >>); the file
    # computed 2**b, an integer 0 for b < 0, and onnxruntime failed on the division by it
    a, b = np.array([-3, 5, 300, -300], np.int16), np.array([1, 2, 3, 4], np.int16)
    for got, want in zip(signed_shifts(a, b), signed_shifts.fn(a, b), strict=True):
        _bits(got, want)
    signed_shifts.export(tmp_path / "shifts.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "shifts.onnx"), providers=["CPUExecutionProvider"])
    edge = (np.array([-3, 5, 300, -32768], np.int16), np.array([-1, -16, 15, -3], np.int16))
    for got, want in zip(session.run(None, {"a": edge[0], "b": edge[1]}), signed_shifts.fn(*edge), strict=True):
        _bits(got, want)


@leapp.compile
def weighted(a, w):
    return np.average(a, weights=w, returned=True)


def test_a_graph_holding_a_shape_value_exports_and_integer_extremes_in_float_sums_are_not_refused(tmp_path):
    # the float16 pass rebuilt every node's value as its type: torch.Size(None, ...) failed (a
    # "leapp bug" refusal); int64 weights at +-9.2e18 in one float sum cancel in an order-dependent
    # way, so the extreme-integer check inputs hold one sign each
    a, w = np.arange(6.0).reshape(2, 3), np.arange(1, 7).reshape(2, 3)
    for got, want in zip(weighted(a, w), weighted.fn(a, w), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    description = weighted.export(tmp_path / "weighted.onnx")
    assert {"extreme integers", "most negative integers"} <= set(description["checked"]["inputs"])


@leapp.compile
def to_half(x):
    return x.astype(np.float16), np.float16(2.0) * x.astype(np.float16)


def test_float64_to_float16_rounds_once_in_the_onnx_file(tmp_path):
    # onnxruntime's Cast from double to float16 goes through float32: 1 + 2**-11 + 2**-40 is
    # half-way in float32 and rounds to 1.0, where NumPy rounds once to 1.001
    t = 1 + 2.0**-11
    x = np.array([t + 2.0**-40, t - 2.0**-40, -(t + 2.0**-40), t, 1024 * (t + 2.0**-40), 3.3, 65519.0, 65520.0])
    x0 = np.linspace(0.0, 1.0, x.size)
    for got, want in zip(to_half(x0), to_half.fn(x0), strict=True):
        _bits(got, want)
    to_half.export(tmp_path / "half.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "half.onnx"), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, {"x": x}), to_half.fn(x), strict=True):
        _bits(got, want)


@leapp.compile
def int_powers(i, e):
    return i**2, i**e, np.power(i.astype(np.int64), 3), np.uint8(3) ** e.astype(np.uint8)


def test_integer_powers_wrap_in_the_onnx_file(tmp_path):
    # onnxruntime's Pow computes integers through double: (2**31 - 1) ** 2 gave -2**31, NumPy 1
    i, e = np.array([1, 2, -3, 4], np.int32), np.array([1, 2, 3, 0], np.int32)
    for got, want in zip(int_powers(i, e), int_powers.fn(i, e), strict=True):
        _bits(got, want)
    int_powers.export(tmp_path / "pow.onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "pow.onnx"), providers=["CPUExecutionProvider"])
    edge = (np.array([2**31 - 1, -(2**31), 46341, 3], np.int32), np.array([2, 31, 40, 1000], np.int32))
    for got, want in zip(session.run(None, {"i": edge[0], "e": edge[1]}), int_powers.fn(*edge), strict=True):
        _bits(got, want)
