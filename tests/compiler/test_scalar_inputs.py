"""Scalars stay inputs (issue 17): every scalar argument (a Python float, int, bool or complex, a NumPy
number) is a 0-d graph input, in the call and in the exported file, so a new value runs the same graph.
A Python number is weakly typed, as in NumPy (NEP 50): ``x32 * t`` stays float32, ``t * 2`` is a Python
float. An argument whose value the trace reads into Python (a slice bound, ``int(n)``, an ``if`` leapp
does not convert) is traced again as a constant of its graph, one graph per value, and
``cf.report()`` names it and the line (docs/compile.md, docs/limitations.md)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import InputError

X = np.linspace(-1, 1, 4).astype(np.float32)
T = (0.5, 1 / 3, -2.7, 1e-8)


def _same(got, want):
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@leapp.compile
def decay(x, t, n=2):
    return x * np.exp(-t) + np.zeros(n, x.dtype).sum() + t ** 2


def test_a_numpy_float_scalar_argument_is_one_input_not_one_graph_per_value():
    for t in (0.5, 1.25, -3.0):
        got, want = decay(X, np.float64(t)), decay.fn(X, np.float64(t))
        assert got.dtype == want.dtype == np.float64  # float32 x * a float64 scalar: float64
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(decay.graphs) == 1
    decay(X, np.float32(0.5))  # another dtype: another graph
    assert len(decay.graphs) == 2
    got = decay(X, np.float32(2.0))
    assert got.dtype == np.float32 and len(decay.graphs) == 2
    np.testing.assert_allclose(got, decay.fn(X, np.float32(2.0)), rtol=1e-6)


@leapp.compile
def step(obs, t):
    return obs * t + t * 2 - obs / (t + 4)


@pytest.mark.parametrize("obs", [X, X.astype(np.float16), np.arange(4), np.arange(4, dtype=np.int8) - 2],
                         ids=["float32", "float16", "int64", "int8"])
def test_a_python_float_is_one_weak_input_exact_and_never_a_retrace(obs):
    cf = leapp.compile(step.fn)
    for t in T:
        _same(cf(obs, t), step.fn(obs, t))  # x16 * t stays float16, int * t is float64: NumPy's own
    assert len(cf.graphs) == 1


def test_the_weak_marking_keeps_float32_where_a_float64_input_would_not():
    # without the weak marking t is a float64 0-d input and x32 * t is float64
    cf = leapp.compile(lambda_free_mul)
    got = cf(X, 0.1)
    assert got.dtype == np.float32 == lambda_free_mul(X, 0.1).dtype
    _same(got, X * 0.1)
    assert cf(X, np.float64(0.1)).dtype == np.float64  # a NumPy scalar is strongly typed


def lambda_free_mul(x, t):
    return x * t


@leapp.compile
def mixed(x, n, flag, c):
    return x * n + (n // 3) * flag, x * c, n * 2, flag & (n > 1)


def test_python_ints_bools_and_complexes_are_inputs_with_python_arithmetic():
    for n, flag, c in ((3, True, 1 + 2j), (7, False, -0.5j), (-4, True, 2.0 + 0j)):
        got, want = mixed(X, n, flag, c), mixed.fn(X, n, flag, c)
        for g, w in zip(got, want, strict=True):
            _same(g, w)  # n * 2 comes back a Python int, flag & ... a Python bool
    assert len(mixed.graphs) == 1


@leapp.compile
def python_semantics(x, flag):
    return x * (flag + flag)  # Python: True + True is 2; NumPy's bool add would give True


def test_where_python_arithmetic_is_not_numpys_the_argument_is_specialised():
    for flag in (True, False, True):
        _same(python_semantics(X, flag), python_semantics.fn(X, flag))
    assert len(python_semantics.graphs) == 2
    assert "'flag': its value is read into Python by the operator + on Python numbers" in \
        python_semantics.format_report()


@leapp.compile
def divide(x, t):
    return x * (1 / t)


def test_python_raises_where_the_real_call_does():
    with pytest.raises(ZeroDivisionError):
        divide(X, 0.0)
    _same(divide(X, 4.0), divide.fn(X, 4.0))


@leapp.compile
def head(x, n: int, scale):
    return x[:n] * scale


def test_an_int_used_as_a_slice_bound_falls_back_and_retraces_per_value():
    for n, scale in ((2, 0.5), (3, 0.5), (2, 1.5), (3, -1.0)):
        _same(head(X, n, scale), head.fn(X, n, scale))
    assert len(head.graphs) == 2  # one per n; scale stays an input
    assert all(g.traced.input_paths[-1][1] == "scale" for g in head._graphs.values())
    report = head.format_report()
    assert "'n': its value is read into Python by a traced value used as a Python integer" in report
    assert "test_scalar_inputs.py:" in report and "with n=2" in report and "with n=3" in report


@leapp.compile
def branch(x, flag):
    if flag:
        return x * 2
    return x - 1


@leapp.compile
def branch_typed(x, flag: bool):
    if flag:
        return x * 2
    return x - 1


def test_a_bool_flag_in_an_if_is_a_select_where_converted_else_specialised():
    # unannotated, the static pass takes flag as data and converts the branch: one graph, both ways
    # exact; annotated `bool`, the branch stays Python's, reads the flag, and specialises: two graphs
    for cf, graphs in ((branch, 1), (branch_typed, 2)):
        for flag in (True, False, True):
            _same(cf(X, flag), cf.fn(X, flag))
        assert len(cf.graphs) == graphs


@leapp.compile
def lone(t):
    return np.sin(t) * 2 + t


@pytest.mark.parametrize("t", [0.5, 3, np.int64(3), True, np.float64(-1.5)])
def test_a_lone_scalar_traces_with_a_real_input(t):
    cf = leapp.compile(lone.fn)
    for v in (t, not t) if isinstance(t, bool) else (t, t * 2):
        _same(cf(v), lone.fn(v))
    assert len(cf.graphs) == 1


@leapp.compile
def lone_python(t):
    return t * 2 - 1  # a Python number in, a Python number out


def test_a_lone_python_result_is_a_python_number():
    for t in (0.5, 3, True):
        _same(lone_python(t), lone_python.fn(t))
    assert len(lone_python.graphs) == 3  # float, int, bool: one graph per type


@leapp.compile
def lone_size(n: int):
    return np.arange(n) * 2


def test_every_argument_specialised_is_an_input_error_naming_the_port():
    with pytest.raises(InputError, match=r"the graph has no input: 'n' \(its value is read into Python by "):
        lone_size(3)


def test_a_hundred_calls_with_a_new_float_each_trace_once():
    cf = leapp.compile(step.fn)
    rng = np.random.default_rng(0)
    for t in rng.uniform(-3, 3, 100):
        cf(X, float(t))
    assert len(cf.graphs) == 1


def test_the_exported_file_takes_each_scalar_as_an_input(tmp_path):
    import onnxruntime as ort

    compiled = leapp.compile(mixed.fn)
    compiled(X, 3, True, 1 + 2j)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit's own notice
        compiled.export(tmp_path / "mixed.pt", format="torchscript")  # ONNX has no complex inputs
    sidecar = {i["name"]: np.dtype(i["dtype"]).name
               for i in json.loads((tmp_path / "mixed.pt.json").read_text())["inputs"]}
    assert sidecar == {"x": "float32", "n": "int64", "flag": "bool", "c": "complex128"}

    compiled = leapp.compile(step.fn)
    compiled(X, 0.5)
    compiled.export(tmp_path / "step.onnx")
    session = ort.InferenceSession(str(tmp_path / "step.onnx"), providers=["CPUExecutionProvider"])
    assert [(i.name, i.shape) for i in session.get_inputs()] == [("obs", [4]), ("t", [])]
    for t in (0.25, -2.0):
        got = session.run(None, {"obs": X, "t": np.array(t)})[0]
        want = step.fn(X, t)
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("t", [0.5, np.int64(3)])
def test_the_seed_api_takes_a_lone_scalar_as_an_input(t):
    from leapp import annotate

    leapp.start("lone")
    try:
        for v in (t, t * 2):
            annotate.output_tensors("fn", {"y": np.sin(annotate.input_tensors("fn", {"t": v})) * 2})
        leapp.stop()
        node = leapp.compile_graph(validate=True)["fn"]
        np.testing.assert_allclose(node(t=np.asarray(t * 3))["y"], np.sin(t * 3) * 2, rtol=1e-12)
    finally:
        leapp.api.reset()


def test_load_pipeline_takes_a_python_number_for_a_scalar_input(tmp_path):
    from leapp import annotate

    leapp.start("gain")
    try:
        for t in (0.5, 1.5):
            x, g = annotate.input_tensors("scale", {"x": X, "t": t})
            annotate.output_tensors("scale", {"y": x * g})
        leapp.stop()
        leapp.compile_graph().export(tmp_path, "onnx")
    finally:
        leapp.api.reset()
    rt = leapp.load_pipeline(tmp_path)
    for t in (0.25, 3.0):
        np.testing.assert_allclose(rt.step({"scale/x": X, "scale/t": t})["scale/y"], X * np.float64(t))


def test_the_default_check_compares_on_other_values_of_each_scalar_input(monkeypatch):
    from leapp.compiler import check

    seen = []
    real = check.loops.reference

    def spying(cf):
        fn = real(cf)

        def run(*args, **kwargs):
            seen.append(args[1])
            return fn(*args, **kwargs)

        return run

    monkeypatch.setattr(check.loops, "reference", spying)
    cf = leapp.compile(step.fn)
    cf(X, 0.75)
    # redrawn, negated and zero, as the arrays are: a value the graph froze would show there
    assert len(seen) >= 3 and seen[1] == -0.75 and seen[2] == 0.0 and seen[0] != 0.75
    assert all(type(t) is float for t in seen)


def test_a_python_float_meeting_float16_is_rounded_once_as_numpy_does(tmp_path):
    import onnxruntime as ort

    # torch rounds float64 to float16 through float32: 1 + 2**-11 + 2**-40 would become 1.0, not 1.001
    x16 = np.linspace(-2, 2, 5).astype(np.float16)
    cf = leapp.compile(lambda_free_mul)
    ties = (1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 1 + 2**-11 - 2**-40, 0.1)
    for t in ties:
        _same(cf(x16, t), x16 * t)
    cf.export(tmp_path / "half.onnx")
    session = ort.InferenceSession(str(tmp_path / "half.onnx"), providers=["CPUExecutionProvider"])
    for t in ties:
        np.testing.assert_array_equal(session.run(None, {"x": x16, "t": np.array(t)})[0], x16 * t)


@leapp.compile
def rotate(x, angle: float):
    return x * math.cos(angle) - x[::-1] * math.sin(angle)


def test_math_of_a_python_float_argument_is_a_weak_python_float_input():
    for angle in (0.3, -1.2, 2.5):
        _same(rotate(X, angle), rotate.fn(X, angle))  # float32 stays float32, as math's float does
    assert len(rotate.graphs) == 1


def _times_asarray(x, t):
    return x * np.asarray(t), np.asarray(t), np.asarray(t, dtype=np.float32)


def test_asarray_of_a_python_number_is_strongly_typed_and_stays_an_input():
    # np.asarray(0.5) is a 0-d float64 array: strong, so float32 x times it is float64 (NEP 50);
    # the graph kept the number weak (float32, silently, with check=0), returned it as a float and
    # refused the dtype= form as a constant
    for check in (0, 3):
        cf = leapp.compile(_times_asarray, check=check)
        for t in T:
            got, want = cf(X, t), _times_asarray(X, t)
            for g, w in zip(got, want, strict=True):
                _same(g, w)
        assert len(cf.graphs) == 1


def _filled(x, t):
    return np.full_like(x, t), np.full(3, t), np.full((2, 3), t, dtype=np.float32)


def test_a_python_number_fill_value_is_an_input_and_keeps_the_sign_of_zero(tmp_path):
    # np.full(3, t) specialised t (one graph per value, baked into the export), and a traced fill
    # was added to zeros: 0.0 + -0.0 is +0.0
    cf = leapp.compile(_filled)
    for t in (2.5, -0.0, 0.0, float("nan"), -3.0):
        got, want = cf(X, t), _filled(X, t)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    assert len(cf.graphs) == 1
    import onnxruntime as ort

    cf.export(str(tmp_path / "f.onnx"))
    session = ort.InferenceSession(str(tmp_path / "f.onnx"), providers=["CPUExecutionProvider"])
    assert "t" in [i.name for i in session.get_inputs()]
    feed = {i.name: (np.array(-0.0) if i.name == "t" else X) for i in session.get_inputs()}
    for g, w in zip(session.run(None, feed), _filled(X, -0.0), strict=True):
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def _compared(x, t):
    return x > t, x == t, np.clip(x, -t, t)


def _clipped(x, t):
    return np.clip(x, -t, t)


def _filled_where(x, t):
    return np.where(x > 0, x, t)  # NumPy stores 300 in int8 as 44 here


@pytest.mark.parametrize("fn,values", [(_compared, (300, 2**40, 3, -100, 5)), (_clipped, (300, 3, 100)),
                                       (_filled_where, (300, 3, -5))])
def test_a_python_int_meeting_narrower_int_data_is_read_by_value(fn, values):
    # as a graph input it was cast to int8: 300 wrapped to 44 (`x > 300` True where NumPy 2 compares
    # exactly: all False; np.clip(x, -300, 300) clipped 100 to 44), 2**40 to 0; one graph per value
    # is exact
    cf = leapp.compile(fn)
    x = np.array([1, -2, 100, 0], np.int8)
    cf(x, 3)
    for t in values:
        got, want = cf(x, t), fn(x, t)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                        strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
