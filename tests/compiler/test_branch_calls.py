"""What a converted branch may call, through @leapp.compile: the everyday generator's false refusals.

Each function below was refused ("leapp cannot show is free of side effects", "may keep it and
see the write") although NumPy runs it the same on every input: a method named like NumPy's on a
value the static pass cannot type (a dict input's), a function defined inside the compiled one, a
method of the compiled method's own class, a new array from ``np.roll``; or the graph raised where
NumPy does not (``np.take`` with an index out of range on inputs an early return keeps from it).
Each converts to one graph equal to NumPy on inputs taking every branch, and the guards that make
that safe refuse what would not be.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from agree import same

import leapp
from leapp.errors import ConversionError, ProblemsError

from .branchy_lib import helpers

F32 = np.float32


# --- a method named like NumPy's, on a value the static pass cannot type ------------------------


def dict_method_in_arm(obs):
    x = obs["state"]
    if x.mean() > 0:
        y = obs["vel"].min() * x  # obs["vel"]: a dict's value, untyped; .min(): checked at runtime
    else:
        y = x * 2
    return y


def dict_copy_after_early_return(obs):
    q = obs["quat"]
    c = q[None].repeat(2, axis=0).reshape(-1)
    if not np.isfinite(c).all():
        return np.zeros(8, dtype=np.float32)
    y = c.copy()  # a new array once the runtime has checked c is NumPy's: y may be written
    y[..., 0] *= 0.5
    y *= 0.25
    return y


class Counter:
    """Not an array, with a method named like ndarray's that has a side effect."""

    def __init__(self):
        self.calls = 0

    def min(self):
        self.calls += 1
        return 0.5


@pytest.mark.parametrize("fn, inputs", [
    (dict_method_in_arm, [{"state": np.array(s, F32), "vel": np.array([3, 1, 2], F32)}
                          for s in ([1, 1, 1], [-1, -2, 0.5], [0, 0, 0])]),
    (dict_copy_after_early_return, [{"quat": np.array(q, F32)} for q in ([1, 0, 0, 0], [np.nan, 0, 0, 1],
                                                                          [0.5, -0.5, 0.5, 0.5])]),
])
def test_a_numpy_method_on_a_value_the_static_pass_cannot_type_converts(fn, inputs):
    cf = leapp.compile(fn)
    for obs in inputs:
        same(cf(obs), fn(obs), rtol=0)
    assert len(cf.graphs) == 1
    assert "converted to a select" in cf.format_report()


def test_a_method_named_like_numpys_on_another_object_is_refused_at_the_call():
    # with the runtime's check deleted (branches.array_method), the graph is built with the
    # object's 0.5 frozen in, and its method runs on both arms while tracing
    cf = leapp.compile(dict_method_in_arm)
    counter = Counter()
    with pytest.raises(ConversionError, match=r"test_branch_calls\.py:\d+:\d+: the converted branch calls "
                                              r"`\.min\(\)` on a Counter, not a NumPy array"):
        cf({"state": np.ones(3, F32), "vel": counter})
    # the guard refuses before calling it: once only, by the first trace's unconverted run, as NumPy would
    assert counter.calls == 1


def test_the_runtime_check_accepts_numpy_arrays_and_scalars_only():
    from leapp.runtime import branches

    class Sub(np.ndarray):
        def min(self, *a, **k):  # an override: not NumPy's method
            return 0

    for ok in (np.ones(2), np.float32(1.0), np.ma.masked_array([1.0])):
        branches.array_method("s:1:1", ok, "min")
    for bad in (Counter(), [1.0], np.ones(2).view(Sub)):
        with pytest.raises(ConversionError, match="not a NumPy array"):
            branches.array_method("s:1:1", bad, "min")


# --- functions the compiled function defines, methods of its class -----------------------------


def closure_after_write(hist):
    b = hist.copy()
    if not np.abs(hist).max() >= 3.0:
        b[b < 0] = 0.0
    gain = -1.0

    def apply(v):
        return v * gain + 1.0

    return apply(b) - apply(np.ones_like(b))  # b passed to a closure leapp now reads: it keeps nothing


def closure_with_side_effect(hist):
    b = hist.copy()
    if hist.max() > 1.0:
        b[0] = 0.0
    seen = []

    def keep(v):
        seen.append(v)  # keeps the array: a later write would reach it
        return v * 1.0

    return keep(b)


class Preprocessor:
    def __init__(self):
        self.offset = np.array([0.5, -0.5, 0.25])

    def _gate(self, v, threshold=0.0):
        return v if v.mean() > threshold else v * 0.5

    def _keep(self, v):
        self.kept = v  # a side effect: leapp must not prove it free of them
        return v

    @leapp.compile
    def step(self, x):
        e = np.sin(x - self.offset)
        if np.linalg.norm(e) >= 1.1:
            return np.zeros(3)
        return self._gate(e)

    @leapp.compile
    def step_keeping(self, x):
        e = np.sin(x - self.offset)
        if np.linalg.norm(e) >= 1.1:
            return np.zeros(3)
        return self._keep(e)


XS = [np.array(v) for v in ([0.1, 0.2, 0.3], [2.0, -2.0, 1.5], [-0.3, 0.1, -0.2], [0.9, 0.2, 0.4])]


def test_a_function_defined_in_the_compiled_one_is_read_and_proven():
    cf = leapp.compile(closure_after_write)
    for h in ([1.0, -2.0, 0.5], [4.0, -1.0, 0.0], [-0.5, -0.25, 2.9]):
        h = np.array(h)
        same(cf(h), closure_after_write(h), rtol=0)
    assert len(cf.graphs) == 1


def test_a_nested_function_with_a_side_effect_is_still_refused():
    with pytest.raises(ProblemsError, match=r"`keep`"):
        leapp.compile(closure_with_side_effect)(np.array([2.0, -1.0]))


def test_a_method_of_the_compiled_methods_class_is_read_and_proven():
    p = Preprocessor()
    for x in XS:
        same(p.step(x), Preprocessor.step.__wrapped__(p, x) if hasattr(Preprocessor.step, "__wrapped__")
             else _plain_step(p, x), rtol=0)
    assert "converted to a select" in p.step.format_report()


def _plain_step(p, x):
    e = np.sin(x - p.offset)
    if np.linalg.norm(e) >= 1.1:
        return np.zeros(3)
    return p._gate(e)


def test_a_method_with_a_side_effect_is_still_refused():
    with pytest.raises(ProblemsError, match=r"Preprocessor\._keep"):
        Preprocessor().step_keeping(XS[0])


def test_another_method_on_the_traced_object_is_read_as_code_leapp_cannot_read():
    # the proof read Preprocessor._gate: an object whose own attribute, or whose subclass, holds
    # another `_gate` would run code leapp never read. The source is then read again without
    # methods, and the branch is refused as before (deleting the methods_hold check converts it and
    # builds a graph from the other function's trace, which nothing checked for side effects)
    class Other(Preprocessor):
        def _gate(self, v, threshold=0.0):
            return v * 3.0

    p = Preprocessor()
    p._gate = lambda v, threshold=0.0: v
    for obj in (Other(), p):
        with pytest.raises(ProblemsError, match=r"the code after the early return calls `self\._gate\(\)`, "
                                                r"which leapp cannot show is free of side effects"):
            obj.step(XS[0])
    fresh = Preprocessor()  # the method's compiled function stays so: nothing it reads is trusted twice
    with pytest.raises(ProblemsError, match=r"self\._gate"):
        fresh.step(XS[1])


class Chained:
    def __init__(self):
        self.offset = np.array([0.5, -0.5, 0.25])

    def _inner(self, v):
        return v * 0.5

    def _outer(self, v):
        return self._inner(v) + 1.0

    @leapp.compile
    def first(self, x):
        e = np.sin(x - self.offset)
        if np.linalg.norm(e) >= 1.1:
            return np.zeros(3)
        return self._outer(e)

    @leapp.compile
    def second(self, x):
        e = np.cos(x - self.offset)
        if np.linalg.norm(e) >= 1.1:
            return np.zeros(3)
        return self._outer(e)


LOGGED: list = []


class Logged(Chained):
    def _inner(self, v):
        LOGGED.append(v)  # a side effect the proof of Chained._inner never saw
        return v * 0.5


def test_a_method_a_proven_method_calls_is_checked_on_the_object_when_the_proof_is_cached():
    # the proof of _outer (which calls self._inner) is made once, for `first`, and cached; `second`
    # reuses it, and must still check _inner on its object. Without the methods kept with the
    # cached proof (helpers._resolved_methods), Logged's _inner ran inside a converted branch
    for x in XS:
        same(Chained().first(x), Chained.first.fn(Chained(), x), rtol=0)
    with pytest.raises(ProblemsError, match=r"self\._outer"):
        Logged().second(XS[0])


# --- new arrays and guarded indices after an early return -----------------------------------


def roll_then_write(x, hist):
    if hist.max() > 4.4:
        return np.zeros_like(hist)
    h = np.roll(hist, -1, axis=0)  # a new array: writing into it touches nothing else
    h[-1] = x
    return h


TABLE = np.array([[0.869, 1.361, -1.0], [0.014, 1.014, 0.499], [0.074, -1.332, -0.378]], dtype=F32)


def take_after_early_return(idx):
    if idx[..., -1].mean() >= -2.5:
        return np.zeros((2, 3), dtype=F32)
    return np.take(TABLE, idx, axis=0)  # idx may be out of range where the early return is taken


def test_np_roll_makes_a_new_array_a_branch_may_write():
    cf = leapp.compile(roll_then_write)
    for hist in ([[1.0, 2.0], [3.0, 4.0]], [[5.0, 0.0], [1.0, 1.0]]):
        hist, x = np.array(hist), np.array([9.0, 8.0])
        same(cf(x, hist), roll_then_write(x, hist), rtol=0)
    assert len(cf.graphs) == 1


def test_np_take_runs_guarded_where_an_early_return_keeps_numpy_from_it():
    # traced on an input that takes the later return, then called with an index NumPy never uses
    # (its early return is taken): without branches.guarded_index on np.take's index the graph
    # raised IndexError there (everyday generator, seed 97015421)
    cf = leapp.compile(take_after_early_return)
    for idx in ([-1, -3], [0, -3], [-2, 3], [7, 2], [2, -3]):
        idx = np.array(idx)
        same(cf(idx), take_after_early_return(idx), rtol=0)
    assert len(cf.graphs) == 1


# --- library code: a converted copy routes no call, so the runtime's check is not there -----------

SETTINGS = types.SimpleNamespace(scale=np.array([2.0, 3.0]))


def calls_library_with_untyped_method(x):
    return helpers.scaled_by_setting(x, SETTINGS)


def test_library_code_with_such_a_method_is_not_converted_and_says_why():
    # deleting the refusal in compiler/library.py converts the copy with `.max()` unchecked: an
    # object's own max() would run on both arms while tracing
    with pytest.raises(ProblemsError, match=r"could not convert scaled_by_setting \(library code\): a branch on "
                                            r"data calls `\.max\(\)` \(line \d+\) on a value leapp cannot show"):
        leapp.compile(calls_library_with_untyped_method)(np.array([1.0, 2.0]))


# --- a value written into an array links nothing ------------------------------------------------


def item_write_after(x, y):
    t = x + x
    if t.min() > 1:
        t = np.tanh(t)
    t *= 2  # in place after the `if`: the select's array must be the only one holding these values
    s = x + y
    t = s * 2  # an array: s is one on every path, though bound after the `if`
    t[1:] = y[-1]  # copies y's value into t: t is no view of the parameter y
    return t


def test_a_value_written_into_an_array_makes_it_no_view_of_the_value():
    # `t[1:] = y[-1]` was taken for a link between t and the parameter y (a list would keep the
    # item), because `t = s * 2` did not count as an array where s is bound after the `if`: refused,
    # "`t` may be a view of `y`" (branch generator, seed 5005621)
    cf = leapp.compile(item_write_after)
    for x, y in (([1.0, 2.0, 3.0], [0.5, 0.25, -1.0]), ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0])):
        x, y = np.array(x), np.array(y)
        same(cf(x, y), item_write_after(x, y), rtol=0)
    assert len(cf.graphs) == 1


def doubled_checked(v):
    return helpers.Checked(v) * 2.0


def test_a_refusal_at_once_keeps_what_the_trace_met_before_it():
    # `ndarray.view(Checked)` is refused at once (UnsupportedArgumentError); the raise guard on data
    # before it, in the same library function, was dropped from the answer (scikit-spatial's
    # objects named only their `.view` line). Deleting tracing's `leapp_earlier` loses the first line
    lines = [i for i, text in enumerate(open(helpers.__file__).read().splitlines(), 1)
             if text.strip() in ("if not np.isfinite(a).all():", "return np.asarray(a).view(cls)")]
    with pytest.raises(ProblemsError) as info:
        leapp.compile(doubled_checked)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert len(lines) == 2
    for line in lines:
        assert f"helpers.py:{line}" in message
    assert "ndarray.view(Checked) cannot be traced" in message


# --- the exported artifact ----------------------------------------------------------------------


@pytest.mark.parametrize("fn, calls", [
    (closure_after_write, [(np.array([1.0, -2.0, 0.5]),), (np.array([4.0, -1.0, 0.0]),)]),
    (roll_then_write, [(np.array([9.0, 8.0]), np.array([[1.0, 2.0], [3.0, 4.0]])),
                       (np.array([9.0, 8.0]), np.array([[5.0, 0.0], [1.0, 1.0]]))]),
    (take_after_early_return, [(np.array([-1, -3]),), (np.array([7, 2]),), (np.array([2, -3]),)]),
    (item_write_after, [(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, -1.0])),
                        (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]))]),
])
def test_the_onnx_export_of_each_conversion_agrees_with_numpy(tmp_path, fn, calls):
    # traced on the first call, exported, and run in onnxruntime on every call's inputs, the
    # other side of each test included (the out-of-range index NumPy's early return avoids too)
    import onnxruntime as ort

    cf = leapp.compile(fn)
    cf(*calls[0])
    path = tmp_path / f"{fn.__name__}.onnx"
    cf.export(path, "onnx")
    session = ort.InferenceSession(str(path))
    names = [i.name for i in session.get_inputs()]
    for args in calls:
        got = session.run(None, dict(zip(names, args, strict=True)))[0]
        same(got, fn(*args), rtol=1e-12)
