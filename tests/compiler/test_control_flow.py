"""Branches on data through @leapp.compile: one graph that takes each branch as NumPy does.

Every function here is traced once (one signature) and then run, through its
graph, on inputs chosen to take each branch; the graph must agree with NumPy
on values and dtypes. The refusals name the site and the property that failed.
"""

from __future__ import annotations

import numpy as np
import pytest
from agree import same

import leapp
from leapp import dispatch
from leapp.errors import ConversionError, ProblemsError

F32 = np.float32


def clamp(x, hi):
    if x.max() > hi:
        x = np.minimum(x, hi)
    return x


def gait(phase, x):
    if phase.mean() < 0.5:
        y = x * 2
        z = x.sum()
    else:
        y = -x
        z = x.min()
    return y + z


def quaternion_like(R):
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0:
        q = np.array([trace, R[2, 1], R[0, 2]]) / 2
    elif R[0, 0] > R[1, 1]:
        q = np.array([R[0, 0], trace, R[1, 0]]) / 3
    else:
        q = np.array([R[1, 1], R[0, 1], trace]) / 4
    return q


def guard(v):
    n = np.linalg.norm(v)
    if n < 1e-6:
        return np.zeros_like(v)
    return v / n


def nested_and_ternary(x):
    m = x.mean()
    if m > 0 and x.max() < 10:
        if m > 1:
            x = x * 3
        else:
            x = x + 1
    s = x if not m > 2 else -x
    return s if 0 < m < 5 else s * 0


def both_return(x):
    if x.sum() > 0:
        return x * 2, x.max()
    else:
        return -x, x.min()


def two_guards(x):
    if x[0] > 1:
        return x * 0
    if x[1] > 1:
        return x * 2
    return x


def early_pair(x):
    if x.sum() < 0:
        return x * 0, x.min()  # a tuple without parentheses: one value for the select
    return x, x.max()


def either(x):
    if x[0] > 1 or x[1] < -1:
        x = -x
    return x


CASES = [
    (clamp, lambda v: (v.astype(F32), 1.5), [np.array([0.5, 1.0]), np.array([0.5, 3.0])]),
    (gait, lambda v: (v.astype(F32), np.arange(2, dtype=F32)), [np.array([0.1, 0.2]), np.array([0.9, 0.7])]),
    (quaternion_like, lambda v: (v.astype(np.float64),),
     [np.diag([1.0, 2.0, 3.0]), np.diag([-1.0, -2.0, -3.0]), np.diag([-2.0, -3.0, 1.0])]),
    (guard, lambda v: (v.astype(F32),), [np.array([3.0, 4.0]), np.array([0.0, 0.0])]),
    (nested_and_ternary, lambda v: (v.astype(F32),),
     [np.array([0.5, 0.5]), np.array([3.0, 3.0]), np.array([-1.0, -2.0]), np.array([20.0, 1.0]),
      np.array([6.0, 6.0]), np.array([1.5, 1.5])]),
    (both_return, lambda v: (v.astype(F32),), [np.array([1.0, 2.0]), np.array([-1.0, -2.0])]),
    (two_guards, lambda v: (v.astype(F32),),
     [np.array([0.0, 0.0]), np.array([2.0, 0.0]), np.array([0.0, 2.0]), np.array([2.0, 2.0])]),
    (early_pair, lambda v: (v.astype(F32),), [np.array([1.0, 2.0]), np.array([-1.0, -2.0])]),
    (either, lambda v: (v.astype(F32),),
     [np.array([0.0, 0.0]), np.array([2.0, 0.0]), np.array([0.0, -2.0]), np.array([2.0, -2.0])]),
]


def _same(got, want):
    same(got, want, rtol=1e-6, dtype=False)


@pytest.mark.parametrize("fn,make,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_one_graph_takes_every_branch_as_numpy_does(fn, make, inputs):
    cf = leapp.compile(fn)
    assert cf.diagnostics == []  # a converted branch is not a finding
    assert cf.source.branches and all(b.converted for b in cf.source.branches)
    cf.trace(*make(inputs[0]))
    for v in inputs:
        _same(cf(*make(v)), fn(*make(v)))
    assert len(cf.graphs) == 1  # the same graph served every branch
    assert any(n.target is __import__("torch").where for n in cf.graphs[0].graph.nodes)


def test_the_rewrite_shows_what_runs_and_lines_stay_the_users():
    cf = leapp.compile(gait)
    text = cf.source.rewritten
    assert "_leapp.if_(" in text and "# leapp: converted, line" in text
    cf(np.array([0.1, 0.2], F32), np.arange(2, dtype=F32))
    first = gait.__code__.co_firstlineno
    lines = {n.meta.get("leapp_source") for n in cf.graphs[0].graph.nodes}
    assert any(str(s).startswith(f"{__file__}:{first + 2}") for s in lines), lines  # y = x * 2
    assert any(str(s).startswith(f"{__file__}:{first + 5}") for s in lines), lines  # y = -x
    report = cf.format_report()
    assert f"line {first + 1}: `if` statement converted to a select (y, z selected)" in report


def test_opt_out_keeps_the_refusal():
    cf = leapp.compile(clamp, convert_control_flow=False)
    assert [d.code for d in cf.diagnostics] == ["LP202"]
    assert "convert_control_flow=False" in cf.diagnostics[0].message
    assert "_leapp.if_(" not in cf.source.rewritten
    with pytest.raises(ProblemsError, match="LP202"):
        cf(np.array([0.5, 3.0], F32), 1.5)


def dtype_differs(x):
    if x.sum() > 0:
        y = x.astype(np.float64)
    else:
        y = x
    return y


def shape_differs(x):
    if x.sum() > 0:
        y = x[:1]
    else:
        y = x
    return y


def python_floats(x):
    if x.sum() > 0:
        s = 1.0
    else:
        s = -1.0
    return x * s


def array_test(x):
    if x > 0:
        x = -x
    return x


def int_or_array(x):
    if x.sum() > 0:
        k = 3
    else:
        k = np.ones(2, np.int16)
    return x * k


def label_or_array(x):
    if x.sum() > 0:
        k = "gain"
    else:
        k = np.ones(2, np.float32)
    return k


@pytest.mark.parametrize("fn,words", [
    (dtype_differs, "dtypes float64 and float32"),
    (shape_differs, "shapes (1,) and (2,)"),
    (array_test, "the test is an array of shape (2,)"),
    # the advice fits the value: an int of the other arm's dtype, and no NumPy scalar for a string
    (int_or_array, "write np.int16(3) rather than 3"),
    (label_or_array, "a str cannot be selected: compute it outside the traced code"),
])
def test_what_a_select_would_change_is_refused_with_the_site(fn, words):
    cf = leapp.compile(fn)
    assert cf.diagnostics == []
    with pytest.raises(ConversionError) as info:
        cf(np.array([1.0, 2.0], F32))
    message = str(info.value)
    assert words in message
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}:5" in message


def test_python_floats_selected_stay_python_floats_for_numpys_dtypes():
    # `s` is a Python float in NumPy (weak): float64 data keeps float64, as the select does
    cf = leapp.compile(python_floats)
    for v in ([1.0, 2.0], [-1.0, -2.0]):
        x = np.array(v)
        np.testing.assert_array_equal(cf(x), python_floats(x))
        assert cf(x).dtype == np.float64
    # float32 data stays float32 in NumPy; the selected float64 value would widen it: refused
    with pytest.raises(ProblemsError, match="the Python float selected at"):
        leapp.compile(python_floats)(np.array([1.0, 2.0], F32))


def refused_write(x):
    if x.sum() > 0:
        x[0] = 0.0
    return x


def refused_raise(m):
    if not np.allclose(m @ m.T, np.eye(2)):
        raise ValueError("not orthogonal")
    return m


def refused_solve(m, b):  # in arms, around early returns and in a loop's body it runs guarded
    while np.linalg.solve(m, b).sum() < 3:  # leapp: max-iterations=4
        # (a `while` test runs on every input, whichever stopped: no path guards it)
        b = b + 1
    return b


def refused_one_branch(x):
    if x.sum() > 0:
        y = x * 2
    return y


def refused_inplace(x):
    y = x[1:]  # a view of the caller's array: the caller would see the update
    if y[0] < 0:
        y *= -1
    return y


def refused_call(x):
    if x.sum() > 0:
        print("positive")
    return x


@pytest.mark.parametrize("fn,words", [
    (refused_write, "writes into `x[0]`"),
    (refused_raise, "raises: a check on data cannot run in a graph"),
    (refused_solve, "calls `np.linalg.solve`, which raises on some inputs"),
    (refused_one_branch, "`y` is assigned in one branch only"),
    (refused_inplace, "updates `y` in place, and `x` is a parameter (`y` may be a view of `x` (line "),
    (refused_call, "kept for its side effect"),
])
def test_lint_names_the_property_that_failed(fn, words):
    cf = leapp.compile(fn, strict=False)
    lp202 = [d for d in cf.diagnostics if d.code == "LP202"]
    assert len(lp202) == 1 and "leapp cannot convert it" in lp202[0].message
    assert words in lp202[0].message
    offset = 3 if fn is refused_inplace else 1 if fn is refused_solve else 2  # the call's own line
    assert f"(line {fn.__code__.co_firstlineno + offset})" in lp202[0].message


LIMITS = np.array([1.0, 2.0], F32)


def untraced_test(x):
    if LIMITS.max() > 1.5:  # a plain array: Python branches, only this side runs
        y = x * 2
    else:
        y = x[:1]  # would be refused (shape) if both sides ran
    return y


def test_an_untraced_test_runs_one_branch_as_python_does():
    cf = leapp.compile(untraced_test)
    x = np.array([1.0, 2.0], F32)
    _same(cf(x), untraced_test(x))


def test_without_a_trace_the_dispatcher_is_plain_python():
    calls = []

    def side(name, value):
        calls.append(name)
        return value

    assert dispatch.if_("s", False, lambda: side("t", 1), lambda: side("f", 2), ()) == 2
    assert dispatch.ifexp("s", True, lambda: side("a", 3), lambda: side("b", 4)) == 3
    assert dispatch.and_("s", lambda: 0, lambda: side("never", 1)) == 0
    assert dispatch.or_("s", lambda: 5, lambda: side("never", 1)) == 5
    assert dispatch.not_("s", []) is True
    held = dispatch.early("s", True, lambda: side("early", 7), ())
    assert held.taken and held.value == 7
    assert dispatch.merge((dispatch.early("s", False, lambda: side("never", 0), ()),), 9) == 9
    assert calls == ["f", "a", "early"]


def test_onnx_export_of_a_converted_function_agrees_with_numpy(tmp_path):
    cf = leapp.compile(gait)
    phase, x = np.array([0.1, 0.2], F32), np.arange(2, dtype=F32)
    cf(phase, x)
    cf.export(tmp_path / "gait.onnx", "onnx")
    import onnxruntime as ort

    session = ort.InferenceSession(str(tmp_path / "gait.onnx"))
    names = [i.name for i in session.get_inputs()]
    for p in (phase, np.array([0.9, 0.7], F32)):
        (out,) = session.run(None, dict(zip(names, (p, x), strict=True)))
        np.testing.assert_allclose(out, gait(p, x), rtol=1e-6)


def refused_tuple_index(x, y):
    j = (y.sum() * 2).astype(np.int64)
    if j < 3:
        z = x[j, 0] * 1.0  # j is 3 or more on the other branch's inputs: NumPy raises there
    else:
        z = x[0, 0] * 2.0
    return z


def test_an_index_on_data_inside_a_tuple_runs_guarded():
    # each element of a tuple index counts: `j` in `x[j, 0]` runs as np.where(path, j, 0) in the arm
    # (runtime.branches.guarded_index), so the input whose j is 3 or more takes the `else` in the graph
    cf = leapp.compile(refused_tuple_index)
    x = np.arange(12.0).reshape(3, 4)
    for y in (np.array([0.5, 0.2]), np.array([2.0, 3.0]), np.array([0.0, 0.0])):
        same(cf(x, y), refused_tuple_index(x, y), rtol=0)
    assert len(cf.graphs) == 1


def normalised_where_nonzero(q):
    norms = np.sqrt((q[:, 1:] ** 2).sum(axis=-1))
    nonzero = norms > 1e-6
    out = np.zeros(q.shape)
    if np.any(nonzero):
        out[nonzero, 1:] = q[nonzero, 1:] / norms[nonzero, np.newaxis]
    return out


def test_a_boolean_mask_in_a_branch_converts():
    # a mask's shape is static: it raises on every input alike or on none, so it may index in an
    # arm (rowan's exp/log pattern); the values are NumPy's on inputs that take either side
    cf = leapp.compile(normalised_where_nonzero)
    rng = np.random.default_rng(3)
    inputs = [rng.normal(size=(5, 4)), np.zeros((5, 4)), np.r_[rng.normal(size=(2, 4)), np.zeros((3, 4))]]
    for q in inputs:
        _same(cf(q), normalised_where_nonzero(q))
    assert len(cf.graphs) == 1
    assert "`if` statement converted to a select" in cf.format_report()


def _scalar_alias(x):
    s = x.sum()
    if s < 0:
        s = -s
    total = s  # a NumPy scalar: `s += ...` below rebinds s, total keeps the value
    s += np.maximum(x[0] - 100.0, 0.0)
    return total, s


def _scalar_early(x):
    s = x.sum()
    if s < 0:
        return -s
    return s


@pytest.mark.parametrize("fn", [_scalar_alias, _scalar_early])
def test_a_select_between_numpy_scalars_is_a_numpy_scalar(fn):
    # a 0-d array would be mutable (`s += d` would change `total` too) and of another type
    cf = leapp.compile(fn)
    assert all(b.converted for b in cf.source.branches)
    cf(np.array([0.1, 0.2, 0.3]))
    for x in (np.array([200.0, 1.0, 1.0]), np.array([-5.0, 1.0, 1.0]), np.array([0.1, 0.2, 0.3])):
        got, want = cf(x), fn(x)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                        strict=True):
            assert type(g) is type(w) is np.float64
            assert g == w


S_LOW = np.array(1.5, dtype=np.float32)  # a module-level limit


def clamp_then_return(v):
    s = np.linalg.norm(v)
    if s < S_LOW:
        s = S_LOW
    g = v / (s + 1.0)
    if s < 2.2:
        return np.zeros(3, dtype=np.float32)
    return g


def test_a_name_an_arm_binds_to_a_module_constant_is_still_data_after_the_if():
    # after `if s < S_LOW: s = S_LOW` the static pass lost `s` as an array (the arms meet by
    # intersection, and S_LOW is a plain module array), so the later early return on `s` was not
    # converted but refused as "bool() of a traced array" (everyday generator, seed 98001015)
    cf = leapp.compile(clamp_then_return)
    for x in ([0.1, 0.2, 0.3], [1.0, 1.0, 1.0], [3.0, 1.0, 2.0]):
        x = np.array(x, np.float32)
        same(cf(x), clamp_then_return(x), rtol=1e-6)
    assert len(cf.graphs) == 1


def dict_branch(obs):
    state = obs["observation.state"]  # a dict's value: the static pass cannot type it
    if state.mean() > 0.5:
        y = state * 2.0
    else:
        y = -state
    if obs["observation.state"][0] < 0:
        return {"action": np.zeros(2, dtype=np.float32)}
    return {"action": y}


def closure_branch(x):
    gain = 2.0

    def apply(v):
        return v * gain + 1.0

    z = apply(x) - apply(np.ones_like(x))  # a nested function's result: not typed either
    if z.max() < 4.0:
        b = z
    else:
        b = z / 2.0
    return b


@pytest.mark.parametrize("fn, wrap", [(dict_branch, lambda x: ({"observation.state": x},)),
                                      (closure_branch, lambda x: (x,))])
def test_a_test_the_static_pass_cannot_type_converts_once_the_trace_sees_it_on_data(fn, wrap):
    # `if obs["observation.state"].mean() > 0.5:` (LeRobot-style dict inputs) and a test on a
    # nested function's result were refused as "bool() of a traced array", with no reason: the
    # trace now notes the line and the source is converted again with it planned as a branch on
    # data, as for library code (everyday generator with branches: 39 of 54 false refusals in 3000)
    cf = leapp.compile(fn)
    for x in ([1.0, 2.0], [-1.0, 0.5], [0.25, 0.5], [3.0, 2.5]):
        args = wrap(np.array(x, np.float32))
        got, want = cf(*args), fn(*args)
        same(got["action"] if isinstance(want, dict) else got,
             want["action"] if isinstance(want, dict) else want, rtol=0)
    assert len(cf.graphs) == 1
    assert "converted to a select" in cf.format_report()
