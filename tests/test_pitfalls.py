"""Every item of ../shared/PITFALLS.md, as a test leapp passes.

Each test names the pitfall it covers. Most are differential (``parity.check``:
trace once, compare values and dtypes with NumPy on fresh inputs); the rest
assert that leapp refuses or reports, naming the call and the line.
"""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest
from parity import check

import leapp
from leapp import annotate
from leapp.errors import EscapeError, LeappError, UnsupportedArgumentError
from leapp.runtime.tracing import trace_function

F = np.array([[1.5, -2.0, 3.25, 0.5], [4.0, -5.5, 0.0, 2.0], [-1.0, 7.0, -3.5, 1.0]], np.float32)
I32 = np.array([[3, -7, 0, 5], [-2, 8, -9, 1], [6, -1, 4, -3]], np.int32)
I64 = I32.astype(np.int64)
U8 = np.array([[250, 3, 7], [255, 0, 128]], np.uint8)
B = F > 0


def _trace(fn, *args, strict=True):
    return trace_function(fn, args, {}, names=[f"a{i}" for i in range(len(args))], strict=strict)


def _ops(traced):
    return [str(n.target) for n in traced.node.graph_module.graph.nodes if n.op in ("call_function", "call_method")]


# --- Results that NumPy returns as scalars ------------------------------------


@pytest.mark.parametrize("fn", [
    lambda x: x.std() + 1e-6,
    lambda x: np.max(x) - np.min(x),
    lambda x: x - x[0, 0],
    lambda x: np.clip(x, x.min(), x.max()),
    lambda x: (x - x.mean()) / (x.std() + 1e-6),
], ids=["std+eps", "max-min", "x-x00", "clip-minmax", "readme-idiom"])
def test_scalar_results_stay_traced(fn):
    check(fn, F)


def test_branch_on_a_scalar_result_is_seen():
    with pytest.raises(EscapeError, match="bool"):
        _trace(lambda x: x * 2 if x.mean() > 0 else x, F)


# --- Methods and functions that bypass the dispatch hooks -----------------------


@pytest.mark.parametrize("fn", [
    lambda x: x.reshape(2, 6),
    lambda x: x.dot(np.ones((4, 2), np.float32)),
    lambda x: x.repeat(2, axis=1),
    lambda x: x.take([1, 4, 6]),
    lambda x: x.prod(axis=0),
    lambda x: x.sum(),
], ids=["reshape", "dot", "repeat", "take", "prod", "sum"])
def test_methods_record_their_own_op(fn):
    traced = check(fn, F)
    assert _ops(traced), "the method must record an op, not return its input"


def test_dot_is_not_exported_as_its_input():
    traced = check(lambda x: x.dot(np.full((4, 4), 0.5, np.float32)), F)
    assert any("matmul" in op for op in _ops(traced))


def test_fill_and_in_place_sort():
    def f(x):
        y = x.copy()
        y.sort()
        z = x.copy()
        z.fill(1.5)
        return y - z

    check(f, F)


@pytest.mark.parametrize("name", ["asarray", "array", "ascontiguousarray"])
def test_conversions_keep_tracing(name):
    # looked up on the module at call time, as written in code: np.asarray(x)
    check(lambda x: getattr(np, name)(x) * 2, F)


def test_conversion_bound_before_tracing_is_reported_not_silent():
    from numpy import asarray  # bound before the trace: NumPy's own, unpatched

    with pytest.warns(leapp.errors.EscapeWarning, match="does not depend on the inputs"):
        _trace(lambda x: asarray(x) * 2, F, strict=False)


def test_copyto_destination_is_traced():
    def f(x):
        out = np.zeros_like(x)
        np.copyto(out, x * 3)
        return out

    check(f, F)


@pytest.mark.parametrize("fn", [
    lambda x: np.add.reduce(x, axis=1),
    lambda x: np.maximum.reduce(x),
    lambda x: np.add.accumulate(x, axis=1),
    lambda x: np.multiply.outer(x[0], x[1]),
], ids=["add.reduce", "maximum.reduce", "add.accumulate", "multiply.outer"])
def test_ufunc_methods(fn):
    check(fn, F)


def test_axis_none_reductions_flatten_in_the_graph():
    traced = check(lambda x: x.min() + x.cumsum()[-1], F)
    for n in traced.node.graph_module.graph.nodes:
        assert n.kwargs.get("dim", 0) is not None, f"{n.target} got dim=None"


# --- dtype rules where torch and NumPy differ -------------------------------------


@pytest.mark.parametrize("fn, args, dtype", [
    (lambda a: a / a, (I32,), np.float64),
    (lambda a, b: a * b, (I32, F), np.float64),
    (lambda a, b: a + b, (I64, F), np.float64),
    (lambda a: np.cumsum(a), (I32,), np.int64),
    (lambda a: np.cumprod(a, axis=0), (I32,), np.int64),
    (lambda a: np.sum(a), (I32,), np.int64),
    (lambda a: np.sum(a), (U8,), np.uint64),
    (lambda a: (a > 0).sum(), (F,), np.int64),
    (lambda a: np.mean(a), (I32,), np.float64),
    (lambda a: np.where(a > 0, a, 0.5), (I64,), np.float64),
    (lambda a: np.arctan2(a, a + 1), (I64,), np.float64),
    (lambda a: np.hypot(a, a), (I64,), np.float64),
    (lambda a: a * np.float64(2), (F,), np.float64),
    (lambda a: a * 2.0, (F,), np.float32),
], ids=["int/int", "int32*float32", "int64+float32", "cumsum-int32", "cumprod-int32", "sum-int32",
        "sum-uint8", "sum-mask", "mean-int", "where-int-0.5", "arctan2-int", "hypot-int",
        "nep50-strong", "nep50-weak"])
def test_numpy_dtype_rules(fn, args, dtype):
    traced = check(fn, *args)
    assert np.asarray(traced.eager_result).dtype == dtype


def test_in_place_subtract_of_float64_keeps_float32():
    mean64 = np.array([0.5, -1.0, 2.0, 0.25])

    def f(x):
        y = x.copy()
        y -= mean64
        return y

    assert check(f, F).eager_result.dtype == np.float32


@pytest.mark.parametrize("fn", [lambda x: np.median(x), lambda x: np.percentile(x, 30)],
                         ids=["median", "percentile"])
def test_scalar_quantiles_are_0d(fn):
    traced = check(fn, F)
    assert np.shape(traced.eager_result) == ()


# --- Operators and semantics ----------------------------------------------------------


def test_bitwise_stays_bitwise_on_ints_and_logical_on_bools():
    check(lambda a: (a & 6) | (a ^ -3), I32)
    check(lambda a: ~a, I32)
    check(lambda m: ~m | (m & m) ^ m, B)


def test_negative_steps():
    check(lambda x: x[::-1, ::-2], F)


def test_integer_division_by_zero_gives_zero():
    zeros = np.zeros_like(I32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check(lambda a, z: (a // z, a % z), I32, zeros, samples=[(I32 * 3, zeros)])


def test_round_half_to_even_and_decimals():
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 1.005], np.float64)
    check(lambda x: (np.round(x), np.round(x, 2), np.round(x * 100, -1)), halves)


def test_sort_matches_stable_order():
    ties = np.array([3, 1, 3, 1, 2, 2, 3], np.int64)
    check(lambda a: (np.sort(a), np.argsort(a, kind="stable")), ties)


def test_keywords_honoured_or_refused_at_the_call():
    check(lambda x: np.sum(x, axis=0, dtype=np.float64, initial=1.0), F)
    with pytest.raises(UnsupportedArgumentError, match="where="):
        _trace(lambda x: np.add(x, 1, where=x > 0), F)
    buf = np.empty_like(F)
    with pytest.raises(UnsupportedArgumentError, match="out="):
        _trace(lambda x: np.multiply(x, 2, out=buf), F)


# --- Indexing and mutation ----------------------------------------------------------------


def test_assignment_through_a_slice_view():
    def f(x):
        y = x.copy()
        v = y[0:2]
        v *= 2
        return y

    traced = check(f, F)
    assert len(_ops(traced)) > 1, "the update must not be dropped"


def test_broadcast_assignment():
    def f(x):
        y = x.copy()
        y[0:2, :] = x[2]
        return y

    check(f, F)


def test_assignment_with_a_numpy_index_array():
    idx = np.array([0, 2])

    def f(x):
        y = x.copy()
        y[idx] = x[1] * 10
        y[:, np.array([1, 3])] = -1
        return y

    check(f, F)


def test_write_into_a_module_level_buffer_is_flagged_by_the_static_pass():
    from leapp.ast_pass import analyze_source

    source = (
        "import numpy as np\nimport leapp\nBUF = np.zeros(3)\n\n"
        "@leapp.compile\ndef f(x):\n    BUF[0] = x[0]\n    return x\n"
    )
    codes = [d.code for d in analyze_source(source, "m.py").diagnostics]
    assert codes == ["LP302"]


# --- Escapes that were silent ----------------------------------------------------------------


@pytest.mark.parametrize("fn, construct", [
    (lambda x: x * float(x[0, 0]), "float()"),
    (lambda x: x * int(np.argmax(x)), "int()"),
    (lambda x: x * math.sqrt(float(x.max())), "float()"),
    (lambda x: max(x[0]) * x, "bool()"),
    (lambda x: min(x.sum(), 1.0) * x, "bool()"),
    (lambda x: x * x.tolist()[0][0], ".tolist()"),
], ids=["float", "int-argmax", "math.sqrt", "max-builtin", "min-builtin", "tolist"])
def test_escapes_are_reported(fn, construct):
    with pytest.raises(EscapeError) as info:
        _trace(fn, F)
    assert construct in str(info.value) and __file__ in str(info.value)


def test_numpy_scalar_constructor_of_a_traced_value_is_traced():
    @leapp.compile
    def scaled(x):
        return np.float32(np.max(x)) * x + np.float64(x[0, 0])

    for x in (F, F * -3.0 + 1.0):
        want = np.float32(np.max(x)) * x + np.float64(x[0, 0])
        got = scaled(x)
        assert got.dtype == want.dtype and np.allclose(got, want, rtol=1e-6)
    assert len(scaled.graphs) == 1  # one graph, exact on inputs other than the traced one


def test_numpy_scalar_constructor_in_seed_api_code_is_reported_with_its_line():
    def f(x):
        return np.float16(np.max(x)) * x

    with pytest.raises(EscapeError, match=r"np\.float16\(\.\.\.\) of a traced value at .*test_pitfalls\.py:\d+.*"
                                          r"x\.astype\(np\.float16\)"):
        _trace(f, F)


def test_sum_builtin_over_rows_traces_by_unrolling():
    check(lambda x: sum(x), F)


def test_random_numbers_in_traced_code_are_refused():
    @leapp.compile
    def noisy(x):
        return x + np.random.normal(size=x.shape)

    with pytest.raises(LeappError, match="LP301|random"):
        noisy(F)


def test_data_dependent_while_loop_is_reported():
    def f(x):
        while x.max() > 1:
            x = x / 2
        return x

    with pytest.raises(EscapeError, match="bool"):
        _trace(f, F)


# --- Capture quirks of torch.compile's NumPy path ----------------------------------------------


def test_numpy_globals_become_constants_not_inputs():
    traced = check(lambda x: x * F, F)
    placeholders = [n for n in traced.node.graph_module.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 1


@pytest.mark.parametrize("fn", [
    lambda x: np.interp(x, [-1.0, 0.0, 2.0], [0.0, 1.0, 0.5]),
    lambda x: np.unwrap(x, axis=1),
    lambda x: np.pad(x, 1, mode="edge"),
    lambda x: np.nanmean(x, axis=0),
    lambda x: np.digitize(x, [-1.0, 0.0, 1.0]),
    lambda x: np.isin(np.round(x), [0.0, 1.0, 2.0]),
], ids=["interp", "unwrap", "pad", "nanmean", "digitize", "isin"])
def test_functions_torch_compile_does_not_capture(fn):
    check(fn, F)


# --- Speed and robustness ------------------------------------------------------------------------


def test_a_thousand_dependent_ops_do_not_recurse():
    def f(x):
        for _ in range(1500):
            x = x * 1.0001 + 0.0
        return x

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        traced = _trace(f, F)
    finally:
        sys.setrecursionlimit(limit)
    assert len(traced.node.graph_module.graph.nodes) > 3000


def test_artifacts_do_not_depend_on_object_ids():
    def f(x):  # fresh constant objects (new ids) on every call
        return x * np.arange(4, dtype=np.float32) + np.ones(4, np.float32)

    a = _trace(f, F).node.graph_module
    b = _trace(f, F).node.graph_module
    assert a.code == b.code
    assert [k for k, _ in a.named_buffers()] == [k for k, _ in b.named_buffers()]


def test_seed_session_does_not_freeze_a_later_changed_constant_silently():
    stats = {"mean": np.zeros(4, np.float32)}
    leapp.start("running-stats")
    for k in range(3):
        x = annotate.input_tensors("n", {"x": F[k]})
        annotate.output_tensors("n", {"y": x - stats["mean"]})
        stats["mean"] = stats["mean"] + 1  # updated between passes: the graph froze the first value
    leapp.stop()
    with pytest.raises(leapp.errors.ValidationError, match="FAILED"):
        leapp.compile_graph(validate=True)
