"""What the corpus' gymnasium, pykalman and simdkalman sections found (issue 17: real code leapp had
not seen), through ``leapp.compile`` from source: each test failed before its fix.

State that library code keeps on objects outliving the call (gymnasium's RunningMeanStd updated
inside the traced function, a DelayObservation queue) is refused naming where the traced value was
found, the object is left holding NumPy's plain value, and a second call is refused again, never
answered from frozen state; declared as state (``leapp.compile(state=...)``) it is exact call after
call. The seed API reports such state at the line that uses it in a later pass and leaves no traced
array behind when the session closes."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
from agree import same

import leapp
from leapp import annotate
from leapp.errors import ProblemsError, UnsupportedArgumentError, ValidationError

from . import gym_kalman_lib as lib

RNG = np.random.default_rng(17)


def _same(got, want):
    same(got, want, rtol=1e-12, atol=1e-300)


def split_by_sizes(x):
    return lib.split_by_sizes(x, [3, 4, 2])


def split_at_array(x):
    return lib.split_at_array(x)


@pytest.mark.parametrize("fn", [split_by_sizes, split_at_array])
def test_np_split_at_an_array_of_indices_traces_exactly(fn, tmp_path):
    # lowering called int() on the indices (a graph constant): InternalError, "a leapp bug"
    cf = leapp.compile(fn, strict=True)
    for x in (RNG.normal(size=9), np.zeros(9), np.arange(9.0) * -1e3):
        _same(cf(x), fn(x))
    # each piece is sliced: an ONNX file declares every output's own shape (tensor_split at indices
    # declared each one the shape of the last)
    onnx = pytest.importorskip("onnx")
    path = tmp_path / "split.onnx"
    cf.export(str(path))
    declared = [[d.dim_value for d in o.type.tensor_type.shape.dim] for o in onnx.load(str(path)).graph.output]
    assert declared == [[p.size] for p in fn(np.zeros(9))]


def one_hot_multi(x):
    return lib.one_hot_multi(x, [2, 3, 2])


def test_a_size_computed_from_constants_inside_the_trace_is_no_escape():
    # offsets = np.zeros(...); offsets[1:] = np.cumsum(nvec); np.zeros(offsets[-1]): the size is a
    # traced constant, the same on every call, and was refused as "a size from the data"
    cf = leapp.compile(one_hot_multi, strict=True)
    for x in (np.array([0, 2, 1]), np.array([1, 0, 0]), np.array([1, 2, 1])):
        _same(cf(x), one_hot_multi(x))


def weighted(x):
    return lib.weighted_by_factors(x, [0.5, 2.0, -1.0])


def test_an_object_array_made_while_tracing_stays_a_numpy_object_array():
    # np.zeros(n, dtype=object) became a traced array, so factors[i] came back as a 0-d traced
    # array instead of the object stored there (AttributeError, a raw exception in the seed API)
    cf = leapp.compile(weighted, strict=True)
    for x in (RNG.normal(size=3), np.zeros(3)):
        _same(cf(x), weighted(x))
    leapp.start("objects")
    try:
        for _ in range(2):
            v = annotate.input_tensors("n", {"x": RNG.normal(size=3)})
            annotate.output_tensors("n", {"y": weighted(v)})
    finally:
        leapp.stop()
    leapp.compile_graph(validate=True)


PRIOR = np.arange(6.0).reshape(2, 3, 1)


def keep_prior(m, y):
    return lib.keep_prior_where_nan(m, PRIOR, y)


def test_a_masked_write_keeps_the_size_of_the_array_it_writes_into():
    # m1[is_nan] = prior[is_nan] marked m1's size as decided by the data, so reading m1.shape
    # afterwards (simdkalman's autoshape) was refused as an escape
    cf = leapp.compile(keep_prior, strict=True)
    m = RNG.normal(size=(2, 3, 1))
    for y in (RNG.normal(size=(2, 3, 1)), np.where(np.arange(6).reshape(2, 3, 1) == 4, np.nan, 1.0)):
        _same(cf(m, y), keep_prior(m, y))


DELAY = lib.Delay(1)


def delayed(obs):
    return DELAY.observation(obs)


def test_a_queue_that_keeps_the_input_is_refused_naming_it_and_left_plain():
    # the input itself was not watched: the queue kept a traced array, and the refusal blamed a
    # "path that depends on the data" elsewhere
    DELAY.queue.clear()
    cf = leapp.compile(delayed)
    for _ in range(2):  # a second call is refused again: never an answer from frozen state
        with pytest.raises(ProblemsError, match=r"the input 'obs' of delayed at .*test_gym_kalman\.py:\d+\) is "
                                                r"still held by item 0 of a collections\.deque \(attribute "
                                                r"'queue' of a .*Delay object\)"):
            cf(np.ones(3))
        assert all(type(v) is np.ndarray for v in DELAY.queue)


def test_the_seed_api_leaves_no_traced_array_in_a_queue_once_closed():
    held: collections.deque = collections.deque()
    leapp.start("deque")
    try:
        v = annotate.input_tensors("n", {"x": np.ones(2)})
        y = v * 2.0
        held.append(y)
        annotate.output_tensors("n", {"y": y})
    finally:
        leapp.stop()
    assert type(held[0]) is np.ndarray
    _same(held[0], np.full(2, 2.0))


KEEPER = lib.Keeper()


def kept(x):
    return KEEPER.keep(x)


def test_a_retrace_that_explains_a_refusal_leaves_no_traced_array_behind():
    # the differential check traces the function again on the input where the graph departs, to
    # name the line; that trace reports nothing but left what the code kept on the object traced
    from leapp.compiler import check

    cf = leapp.compile(kept)
    check._retrace(cf, (np.ones(3),), {})
    assert type(KEEPER.last) is np.ndarray
    _same(KEEPER.last, np.full(3, 2.0))


gym_utils = pytest.importorskip("gymnasium.wrappers.utils")
RMS = gym_utils.RunningMeanStd(shape=(3,))


def normalize_online(x):
    RMS.update(x)
    return (x[0] - RMS.mean) / np.sqrt(RMS.var + 1e-8)


def test_running_statistics_updated_inside_are_refused_and_left_numpys():
    RMS.mean, RMS.var, RMS.count = np.zeros(3), np.ones(3), 1e-4
    cf = leapp.compile(normalize_online)
    want = gym_utils.RunningMeanStd(shape=(3,))
    for i in range(2):
        x = np.random.default_rng(i).normal(size=(5, 3))
        with pytest.raises(ProblemsError, match=r"still held by attribute 'mean' of a "
                                                r"gymnasium\.wrappers\.utils\.RunningMeanStd object"):
            cf(x)
        want.update(x)
        # the call ran once, as in NumPy (the check's own runs left the object alone), and the
        # object holds NumPy's plain arrays
        assert type(RMS.mean) is np.ndarray and type(RMS.var) is np.ndarray
        assert RMS.count == want.count
        _same(RMS.mean, want.mean)


def normalize_declared(x, mean, var, count):
    mean, var, count = gym_utils.update_mean_var_count_from_moments(
        mean, var, count, np.mean(x, axis=0), np.var(x, axis=0), x.shape[0])
    return (x[0] - mean) / np.sqrt(var + 1e-8), {"mean": mean, "var": var, "count": count}


def test_running_statistics_declared_as_state_are_exact_call_after_call():
    cf = leapp.compile(normalize_declared, state={"mean": np.zeros(3), "var": np.ones(3), "count": np.array(1e-4)})
    want = gym_utils.RunningMeanStd(shape=(3,))
    for i in range(3):
        x = np.random.default_rng(i).normal(size=(5, 3))
        got = cf(x)
        want.update(x)
        np.testing.assert_allclose(got, (x[0] - want.mean) / np.sqrt(want.var + 1e-8), rtol=1e-12)
    np.testing.assert_allclose(cf.state["mean"], want.mean, rtol=1e-12)


def test_the_seed_api_names_state_kept_between_passes_and_leaves_it_plain():
    rms = gym_utils.RunningMeanStd(shape=(3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leapp.start("online")
        try:
            for i in range(3):
                x = annotate.input_tensors("n", {"x": np.random.default_rng(i).normal(size=(5, 3))})
                rms.update(x)
                annotate.output_tensors("n", {"y": (x[0] - rms.mean) / np.sqrt(rms.var + 1e-8)})
        finally:
            leapp.stop()
    # nothing traced is left on the object once the session is closed
    assert type(rms.mean) is np.ndarray and type(rms.var) is np.ndarray
    with pytest.raises(ValidationError, match=r"suspect: .*gymnasium/wrappers/utils\.py:\d+: n: .* uses a "
                                              r"traced value of an earlier pass .* kept outside the pipeline"):
        leapp.compile_graph(validate=True)


def filter_step(m, z):
    kf = pytest.importorskip("pykalman").KalmanFilter(transition_matrices=np.eye(2), observation_matrices=np.eye(2))
    return kf.filter_update(m, np.eye(2), z)[0]


def test_a_masked_array_made_from_traced_data_is_refused_as_one():
    # pykalman wraps every observation in np.ma.asarray: refused, but as "reinterpreting an
    # array's bytes (view with a dtype)", which it was not
    with pytest.raises(UnsupportedArgumentError, match=r"pykalman/standard\.py:\d+: a masked array \(numpy\.ma\) computed "
                                            r"on traced data cannot be traced"):
        leapp.compile(filter_step, strict=True)(np.zeros(2), np.ones(2))



def test_the_seed_api_names_an_output_an_earlier_pass_left_in_a_queue():
    delay = lib.Delay(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leapp.start("delay")
        try:
            for i in range(3):
                x = annotate.input_tensors("n", {"x": np.full(2, float(i))})
                annotate.output_tensors("n", {"y": delay.observation(x)})
        finally:
            leapp.stop()
    assert all(type(v) is np.ndarray for v in delay.queue)
    # the output of pass 3 is the input of pass 2, a value the queue kept: named at output_tensors
    with pytest.raises(ValidationError, match=r"suspect: .*test_gym_kalman\.py:\d+: n: output 'y' uses a traced "
                                              r"value of an earlier pass \(its input 'x'\)"):
        leapp.compile_graph(validate=True)
