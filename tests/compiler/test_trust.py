"""Guards that hold whatever the mechanism: each test fails when its guard is deleted.

- the default differential check (compiler/check.py): the graph against the function on generated
  inputs, whatever froze the value (the buffer protocol here, which no hook sees);
- memory written unseen (record._written_unseen): an array made as a constant whose memory C code
  filled afterwards (scipy.ndimage's output buffer) is refused even with the check off;
- escapes (runtime/escapes.py): a traced array still held by anything after the call (an object's
  attribute, a list, a global, a closure) is refused, and the holder gets NumPy's plain value back.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi

import leapp
from leapp.errors import ProblemsError
from leapp.runtime.traced import TracedNpArray

X = np.random.default_rng(0).normal(size=(4, 16))


def _buffer_first_column(x):
    out = np.empty(x.shape[:-1])
    with memoryview(np.ascontiguousarray(x[..., 0])) as view:  # released: nothing holds the array
        values = np.array(view)
    out[...] = values.reshape(out.shape)
    return out * 2.0


def _flat_first_column(x):
    out = np.empty(x.shape[:-1])
    out[...] = np.asarray(x[..., 0].flat).reshape(out.shape)
    return out * 2.0


def test_flat_is_traced():
    # ``.flat`` was this file's example of a read no hook sees; it is now traced (runtime/flat.py)
    cf = leapp.compile(_flat_first_column, check=0)
    cf(X)
    np.testing.assert_array_equal(cf(-X), _flat_first_column(-X))


def test_value_frozen_by_the_buffer_protocol_is_refused_by_the_default_check():
    cf = leapp.compile(_buffer_first_column)
    with pytest.raises(ProblemsError, match=r"disagrees with NumPy on a generated input.*First departure: "
                                            r"a constant used at .*test_trust\.py"):
        cf(X)
    assert not cf._graphs  # nothing refused is kept for the next call


def test_the_check_is_what_refuses_the_buffer_protocol():
    # the same function with the check off returns a graph: the check is the guard that refused it
    # (no other guard says a word: strict, no warning)
    cf = leapp.compile(_buffer_first_column, check=0)
    cf(X)
    assert not np.allclose(cf(-X), _buffer_first_column(-X))


def _smooth(x):
    return ndi.gaussian_filter1d(x, 2.0) * 2.0


def test_buffer_filled_by_c_code_is_refused_without_the_check():
    cf = leapp.compile(_smooth, check=0)
    # named by the probe of the call's result (foreign_probe.py) before the buffer guard meets the
    # buffer's next use; test_foreign_c.py's `smooth` (the result mixed with the input) is the buffer
    # guard's own case
    with pytest.raises(ProblemsError, match=r"written by code leapp does not see|returned an array no input "
                                            r"reaches in what leapp recorded"):
        cf(X)


def test_buffer_filled_by_c_code_is_refused_by_default():
    with pytest.raises(ProblemsError):
        leapp.compile(_smooth)(X)


def test_passing_function_is_checked_on_generated_inputs():
    cf = leapp.compile(lambda_free_normalise)
    np.testing.assert_array_equal(cf(X), lambda_free_normalise(X))
    assert [g.checked for g in cf._graphs.values()] == [3]


def lambda_free_normalise(x):
    return np.clip((x - x.mean()) / (x.std() + 1e-6), -3.0, 3.0)


class RunningMean:
    def __init__(self):
        self.mean = np.zeros(16)
        self.history = []

    def update(self, x):
        self.mean = 0.9 * self.mean + 0.1 * x
        self.history.append(self.mean)
        return self.mean


STATS = RunningMean()


def _uses_global_object(x):
    return STATS.update(x) * 2.0


def test_state_written_on_an_object_is_refused_and_left_plain():
    with pytest.raises(ProblemsError, match=r"attribute 'mean' of a .*RunningMean object"):
        leapp.compile(_uses_global_object)(X[0])
    assert type(STATS.mean) is np.ndarray and type(STATS.history[0]) is np.ndarray
    np.testing.assert_array_equal(STATS.mean, 0.1 * X[0])


CACHE: dict = {}


def _caches_in_a_global(x):
    y = x * 3.0
    CACHE["last"] = y
    return y + 1.0


def test_traced_value_kept_in_a_global_container_is_refused():
    with pytest.raises(ProblemsError, match=r"key 'last' of a dict|global"):
        leapp.compile(_caches_in_a_global)(X)
    assert type(CACHE["last"]) is np.ndarray


class Filter:
    def __init__(self):
        self.x = np.zeros(16)

    @leapp.compile
    def step(self, z):
        self.x = self.x + z
        return np.frexp(self.x)[0] if False else self.x[np.array([0.5])]  # refused: float index


def test_refused_method_leaves_no_traced_array_on_self():
    f = Filter()
    with pytest.raises(Exception):  # noqa: B017 - any refusal; what matters is what is left behind
        f.step(X[0])
    assert not isinstance(f.x, TracedNpArray)


def _nms_like(scores):
    order = np.argsort(-scores)
    keep = []
    while order.size > 0:  # the size came from np.where: data
        keep.append(order[0])
        order = order[np.where(scores[order[1:]] < scores[order[0]] - 0.2)[0] + 1]
    return np.stack(keep)


def test_size_that_came_from_data_read_into_python_is_refused():
    with pytest.raises(ProblemsError, match=r"\.size of an array whose size comes from the data"):
        leapp.compile(_nms_like, check=0)(np.random.default_rng(3).random(6))


def _mask_then_reduce(x):
    sel = x[x > 0]
    return sel.sum() / x.shape[0], sel * 2.0  # sizes of inputs and masked results in the graph


def test_sizes_that_stay_in_the_graph_trace():
    cf = leapp.compile(_mask_then_reduce)
    for v in (X[0], -X[0], np.abs(X[0])):
        got, want = cf(v), _mask_then_reduce(v)
        np.testing.assert_allclose(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_strict_mode_never_returns_a_graph_whose_self_check_failed(monkeypatch):
    from leapp.runtime import session_graph

    def failing(self, trace, checked=None):
        self.self_check = ["node 'f' output 'output': the graph does not reproduce the traced sample"]

    monkeypatch.setattr(session_graph.CompiledNode, "_self_check", failing)
    # the sample's own run at the lowering (no stack of the check's inputs); the first call's run
    # that stands for it after a stacked one is tests/compiler/test_check_stack.py's
    monkeypatch.setattr(session_graph, "run_stacked", lambda *a, **k: None)
    with pytest.raises(ProblemsError, match="self-check failed"):
        leapp.compile(lambda_free_normalise)(X)
    cf = leapp.compile(lambda_free_normalise, strict=False)
    cf(X)  # strict=False hands the graph out (it warned when the real self-check failed)


def _centre(x):
    return x - x.mean(axis=0)


def test_summation_order_is_warned_not_refused():
    # float32 sums ordered unlike NumPy's differ by what order explains: a graph, with the warning
    import warnings

    from leapp.errors import ReductionOrderWarning

    x = (np.random.default_rng(0).normal(size=(2000, 4)) * 1000 + 5000).astype(np.float32)
    cf = leapp.compile(_centre)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cf(x)
    assert any(issubclass(w.category, ReductionOrderWarning) and "order of summation" in str(w.message)
               for w in caught)
    assert cf.graphs


def _axis_angle(a):
    angle = np.linalg.norm(a)
    return np.hstack((a / angle, (angle,)))  # pytransform3d's shape: a tuple holding a traced 0-d value


def test_sequence_with_a_traced_item_traces():
    cf = leapp.compile(_axis_angle)
    for v in (np.array([0.1, 0.2, 0.3]), np.array([-1.0, 2.0, 0.5])):
        np.testing.assert_allclose(cf(v), _axis_angle(v), rtol=1e-12)


def _round_half_up(x):
    import decimal

    value = decimal.Decimal(x.sum()).quantize(decimal.Decimal("1"), rounding=decimal.ROUND_HALF_UP)
    return np.ones(3) * int(value)


def test_an_error_only_the_traced_array_causes_is_leapps_refusal_at_the_line():
    from leapp.errors import TraceError

    with pytest.raises(TraceError, match=r"Decimal.*test_trust\.py:\d+, raised only while tracing"):
        leapp.compile(_round_half_up)(np.array([0.5, 1.0]))


def _users_own_error(x):
    raise ValueError("bad input")


def test_the_users_own_error_is_left_as_it_is():
    with pytest.raises(ValueError, match="bad input") as info:
        leapp.compile(_users_own_error)(X)
    assert type(info.value) is ValueError


def _dot_with_a_list_of_traced_items(t):
    return np.dot(np.eye(3) * 2.0, [t[0][3], t[1][3], t[2][3]])  # modern_robotics' shape


def _hstack_of_a_nested_dot(a, b):
    return np.hstack(((np.dot(a, b),), np.cross(a, b)))  # pytransform3d's geometric_product


def test_lists_of_traced_items_as_operands_trace():
    t = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(leapp.compile(_dot_with_a_list_of_traced_items)(t),
                               _dot_with_a_list_of_traced_items(t))
    a, b = np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.0, 2.0])
    np.testing.assert_allclose(leapp.compile(_hstack_of_a_nested_dot)(a, b), _hstack_of_a_nested_dot(a, b))


# --- the check's stacked run (compiler/check.py, _agrees_stacked) ---------------------------------
# The check runs NumPy and the graph once on its inputs stacked along the rows every argument shares,
# where NumPy treats rows apart (its rows of the example, stacked last, must be the traced outputs).



@pytest.fixture
def seen(monkeypatch):
    """The first argument's shape in every NumPy run the check makes (loops.reference: what it runs)."""
    from leapp.runtime import loops

    shapes: list = []
    real = loops.reference

    def reference(cf):
        fn = real(cf)

        def run(*args, **kwargs):
            shapes.append(args[0].shape)
            return fn(*args, **kwargs)

        return run

    monkeypatch.setattr(loops, "reference", reference)
    return shapes


def _rowwise(x):
    return np.tanh(x) * 2.0


def _mixes_rows(x):
    return x - x.mean(axis=0)


def _converted_branch(x):
    if x.max() > 1.0:
        x = x / 2.0
    return x


def test_the_check_stacks_its_inputs_where_numpy_treats_rows_apart(seen):
    cf = leapp.compile(_rowwise)
    np.testing.assert_allclose(cf(X), _rowwise(X), rtol=1e-12)  # tanh: torch rounds within an ulp
    assert seen == [(16, 16)]  # the three generated inputs and the example, 4 rows each: one run


def test_a_function_that_mixes_rows_is_checked_one_input_at_a_time(seen):
    # on the stack, x.mean(axis=0) is the stack's mean: the example's rows differ from its trace, so
    # the stack does not stand for the inputs run alone (the zeros input's own mean is never taken)
    cf = leapp.compile(_mixes_rows)
    np.testing.assert_allclose(cf(X), _mixes_rows(X), rtol=1e-6, atol=1e-12)
    assert seen == [(16, 16), X.shape, X.shape, X.shape]


def test_a_converted_branch_is_checked_one_input_at_a_time(seen):
    # the sides a converted test took are counted per input (cf.report()); a stack decides them together
    cf = leapp.compile(_converted_branch)
    np.testing.assert_array_equal(cf(X), _converted_branch(X))
    assert seen and (16, 16) not in seen


def test_a_value_frozen_from_one_row_is_refused_on_the_stack_too():
    # one row: the frozen (1,) constant broadcasts over the stack, and still differs from NumPy's rows
    with pytest.raises(ProblemsError, match=r"disagrees with NumPy on a generated input"):
        leapp.compile(_buffer_first_column)(X[:1])


# --- C code given data the static pass could not type --------------------------------------------
# The rewriter routes a call into other code through leapp's foreign dispatcher when its operands may
# carry traced data; there the refusal names the user's call. Values it once missed: a closure's
# result used in arithmetic, an object parameter's method, a dict input's value, and a table indexed
# with one. Each was refused anyway (the buffer guard holds whatever the mechanism), but named at
# the function's `def` with "leapp lint did not flag ... (a gap in lint; please report it)".

TABLE = np.array([2.5, 1.5, -0.5, 0.25])


def _closure_result(x):
    gain = 2.0

    def scaled(v):
        return v * gain + 1.0
    z = scaled(x)
    return ndi.median_filter(z * 1.0, size=2)  # the call


def _object_method(x, obj):
    z = obj.scale(x)
    return ndi.median_filter(z, size=2)  # the call


def _dict_value(obs):
    velocity = obs["observation.velocity"]
    return {"action": ndi.gaussian_filter1d(velocity * 1.0, 1.5)}  # the call


def _table_lookup(obs):
    i = obs["task.index"].clip(0, 3)
    return ndi.gaussian_filter1d(TABLE[i] * 1.0, 1.5)  # the call


def _table_at_an_argmax(x):
    i = np.argmax(x, axis=-1)  # an index made by NumPy from the data, not a dict input's value
    return ndi.median_filter(TABLE[i] * 1.0, size=2)  # the call


class _Scaler:
    def scale(self, v):
        return v * 3.0


@pytest.mark.parametrize("fn, args", [
    (_closure_result, (X,)),
    (_object_method, (X, _Scaler())),
    (_dict_value, ({"observation.velocity": X},)),
    (_table_lookup, ({"task.index": np.array([0, 3, 1, 2, 2])},)),
    (_table_at_an_argmax, (np.array([[0.1, 0.9, 0.2, 0.3], [0.5, 0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.9]]),)),
])
def test_c_code_is_refused_at_the_users_call_whatever_the_static_pass_typed(fn, args):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    call = first + next(i for i, text in enumerate(lines) if "# the call" in text)
    with pytest.raises(ProblemsError) as caught:
        leapp.compile(fn)(*args)
    text = str(caught.value)
    assert f"test_trust.py:{call}:" in text.splitlines()[1], text
    assert "lint did not flag" not in text and "a gap in lint" not in text, text


def test_the_call_watch_leaves_no_profile_function_behind():
    # check=0 turns on the call watch (runtime/unseen_calls.py) for the trace; the profile function
    # it sets must go with the trace (left on, every later call in the thread ran 3x slower)
    import sys

    assert sys.getprofile() is None
    leapp.compile(lambda_free_normalise, check=0)(X)
    assert sys.getprofile() is None
    with pytest.raises(ProblemsError):
        leapp.compile(_smooth, check=0)(X)
    assert sys.getprofile() is None


# --- C code that wrote what its buffer already held -----------------------------------------------
# scipy.ndimage's filters allocate their output with np.zeros (traced: a constant) and fill it in C.
# The buffer guard sees the C write where it changed the bytes; a filter of an all-zero input into
# zeros changes none, and the graph held zeros for every input, silently with check=0 (the everyday
# generator's seed 97015254; the default check caught it only where a generated input moved the
# value off zero). runtime/foreign_probe.py runs such a call again on other values instead.


def _filter_of_a_clipped_minimum(x):
    m = np.clip(x.min(), 0, None).reshape(1)  # zero on the example below: the filter returns zeros
    return ndi.median_filter(m * 1.0, size=2)  # the call


@pytest.mark.parametrize("check", [0, 3])
def test_c_code_that_left_its_buffer_as_it_was_is_refused_at_the_call(check):
    import inspect

    lines, first = inspect.getsourcelines(_filter_of_a_clipped_minimum)
    call = first + next(i for i, text in enumerate(lines) if "# the call" in text)
    x = np.array([-1.0, -2.0, -3.0])
    assert ndi.median_filter(np.array([0.0]), size=2)[0] == 0.0  # the example's result is the buffer's
    with pytest.raises(ProblemsError, match=rf"median_filter at \S*test_trust\.py:{call}:\d+ was given traced "
                                           r"data and returned an array no input reaches"):
        leapp.compile(_filter_of_a_clipped_minimum, check=check)(x)


def test_a_library_call_whose_result_no_input_reaches_still_compiles():
    # the probe runs the call again and gets the same value: a constant that really is one
    from . import foreign_c_lib as lib

    def rows_of_zeros(x):
        return lib.zeros_rows(x) + 1.0

    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    cf = leapp.compile(rows_of_zeros, check=0)
    np.testing.assert_array_equal(cf(x), rows_of_zeros(x))
    np.testing.assert_array_equal(cf(x * 7), rows_of_zeros(x * 7))


def test_a_result_computed_from_plain_arrays_handed_in_is_not_redrawn():
    # filterpy.kalman.predict(x, P, F, Q): the new covariance comes from the plain P, F and Q only.
    # The probe redraws what depends on the inputs and keeps the rest, so it gets the same value
    # (redrawing P too made it move: a false refusal of the corpus's filterpy__predict)
    from . import foreign_c_lib as lib

    P, F = np.diag([1.0, 2.0]), np.array([[1.0, 0.1], [0.0, 1.0]])

    def predict(x):
        return lib.predict_like(x, P, F)

    x = np.array([0.5, -1.0])
    cf = leapp.compile(predict, check=0)
    for v in (x, -3 * x):
        for got, want in zip(cf(v), predict(v), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12)
