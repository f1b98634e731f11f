"""State the graph froze is watched from call to call (``leapp.compiler.guards``): an array read
from outside the call (a module's global, a normaliser's ``self.mean``, a closure's table, a
library's global) that changes in place or is rebound makes the next call trace again, as NumPy
reads it afresh. Without the guards each of these returns the values of the first trace.

Also here: methods, bound methods and callable instances compile (``leapp.compiler.bound``)."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import leapp
from leapp.compiler.bound import BoundCompiled
from leapp.errors import RetraceWarning

from . import state_lib

MEAN = np.array([1.0, 2.0, 3.0])
VAR = np.array([1.0, 4.0, 9.0])
X = np.array([0.5, -1.0, 2.0])


def _spread():
    return np.sqrt(VAR + 1e-8)  # folded by NumPy on plain arrays: the trace never sees VAR


@leapp.compile
def normalise(x):
    return (x - MEAN) / _spread()


def test_a_global_changed_in_place_is_read_again():
    global MEAN
    keep = MEAN.copy()
    try:
        assert np.allclose(normalise(X), (X - MEAN) / np.sqrt(VAR + 1e-8))
        MEAN[:] = [10.0, 20.0, 30.0]
        assert np.allclose(normalise(X), (X - MEAN) / np.sqrt(VAR + 1e-8))
    finally:
        MEAN = keep


def test_a_global_a_helper_folds_is_watched_when_rebound():
    global VAR
    keep = VAR
    try:
        normalise(X)
        VAR = np.array([4.0, 4.0, 4.0])
        assert np.allclose(normalise(X), (X - MEAN) / 2.0)
    finally:
        VAR = keep


class Normaliser:
    def __init__(self, mean):
        self.mean = np.asarray(mean, dtype=float)
        self.stats = _Stats()

    @leapp.compile
    def step(self, x):
        return (x - self.mean) * self.stats.gain

    def __call__(self, x):
        return x - self.mean


class _Stats:
    def __init__(self):
        self.gain = np.ones(3)


def test_attributes_of_self_rebound_or_changed_in_place():
    a, b = Normaliser([1.0, 1.0, 1.0]), Normaliser([5.0, 5.0, 5.0])
    assert np.allclose(a.step(X), X - 1.0) and np.allclose(b.step(X), X - 5.0)  # a graph per instance
    a.mean += 2.0  # in place, as a running mean is updated
    assert np.allclose(a.step(X), X - 3.0)
    a.mean = np.zeros(3)  # rebound
    assert np.allclose(a.step(X), X)
    a.stats.gain = np.full(3, 2.0)  # one attribute deeper
    assert np.allclose(a.step(X), 2 * X)
    assert np.allclose(b.step(X), X - 5.0)


def test_a_closure_table_changed_in_place():
    table = np.array([0.5, 0.5, 0.5])

    @leapp.compile
    def weigh(x):
        return x * table

    assert np.allclose(weigh(X), X * 0.5)
    table += 1.0
    assert np.allclose(weigh(X), X * 1.5)


@leapp.compile
def through_library(x):
    return state_lib.scale(x)


def test_a_library_global_rebound_or_changed_in_place():
    keep = state_lib.GAIN
    try:
        assert np.allclose(through_library(X), 2 * X)
        state_lib.set_gain(5.0)
        assert np.allclose(through_library(X), 5 * X)
        state_lib.GAIN[:] = 7.0
        assert np.allclose(through_library(X), 7 * X)
    finally:
        state_lib.GAIN = keep


def test_state_that_keeps_changing_warns_once_naming_it():
    keep = MEAN.copy()

    @leapp.compile
    def centre(x):
        return x - MEAN

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(6):
                MEAN[0] = i
                assert np.allclose(centre(X), X - MEAN)
        retraces = [w for w in caught if issubclass(w.category, RetraceWarning)]
        assert len(retraces) == 1
        assert "'MEAN'" in str(retraces[0].message) and "changed in place" in str(retraces[0].message)
    finally:
        MEAN[:] = keep


def test_unchanged_state_does_not_retrace():
    @leapp.compile
    def shift(x):
        return x - MEAN

    shift(X)
    first = shift.graphs[0]
    for _ in range(3):
        shift(X)
    assert shift.graphs == [first]


def test_bound_methods_and_callable_instances_compile():
    norm = Normaliser([1.0, 2.0, 3.0])
    for compiled in (leapp.compile(norm.__call__), leapp.compile(norm)):
        assert isinstance(compiled, BoundCompiled)
        assert np.allclose(compiled(X), X - norm.mean)
        assert compiled.graphs and compiled.name.endswith("Normaliser.__call__")
    assert isinstance(norm.step, BoundCompiled) and norm.step.__self__ is norm


def test_a_method_exports_and_reports(tmp_path):
    pytest.importorskip("onnxruntime")
    norm = Normaliser([1.0, 2.0, 3.0])
    norm.step(X)
    path = norm.step.export(str(tmp_path / "step.onnx"))
    assert (tmp_path / "step.onnx").exists() and path is not None
    assert "Normaliser.step" in norm.step.format_report()


class _WithLock:
    def __init__(self):
        import threading

        self.lock = threading.Lock()  # copy.deepcopy of self raises TypeError
        self.offset = np.array([1.0, 2.0, 3.0])

    @leapp.compile
    def step(self, x):
        return x + self.offset


def test_a_method_on_an_object_that_cannot_be_deep_copied():
    obj = _WithLock()
    assert np.allclose(obj.step(X), X + obj.offset)
    obj.offset[0] = 9.0
    assert np.allclose(obj.step(X), X + obj.offset)


# --- numbers, flags, containers and deeper holders (read by value, folded into the graph) -------

GAIN = 1.0
LIMIT = 2
TABLE = {"scale": 2.0, "offset": np.array([0.0, 1.0, 2.0])}
WEIGHTS = [np.ones(3), np.full(3, 2.0)]


@leapp.compile
def gained(x):
    return x[:LIMIT] * GAIN + TABLE["offset"][:LIMIT] * TABLE["scale"] + WEIGHTS[1][:LIMIT]


def _gained(x):
    return x[:LIMIT] * GAIN + TABLE["offset"][:LIMIT] * TABLE["scale"] + WEIGHTS[1][:LIMIT]


def test_numbers_and_container_items_read_from_globals_are_watched():
    global GAIN, LIMIT
    keep = GAIN, LIMIT, dict(TABLE), list(WEIGHTS)
    try:
        np.testing.assert_array_equal(gained(X), _gained(X))
        for change in (lambda: globals().update(GAIN=3.0),  # a number: rebound
                       lambda: globals().update(LIMIT=3),  # a slice bound: the shape changes
                       lambda: TABLE.update(scale=-1.0),  # a dict's number item
                       lambda: TABLE.update(offset=np.array([5.0, 6.0, 7.0])),  # a dict's array item
                       lambda: WEIGHTS.__setitem__(1, np.full(3, 9.0)),  # a list's item rebound
                       lambda: WEIGHTS[1].__setitem__(0, -4.0)):  # ... changed in place
            change()
            np.testing.assert_array_equal(gained(X), _gained(X))
    finally:
        GAIN, LIMIT = keep[0], keep[1]
        TABLE.clear()
        TABLE.update(keep[2])
        WEIGHTS[:] = keep[3]


class _Deep:
    def __init__(self):
        self.cfg = types.SimpleNamespace(inner=types.SimpleNamespace(w=np.float32(2.0), flip=False))


class _Slotted:
    __slots__ = ("gain",)

    def __init__(self, gain):
        self.gain = gain


class Filtered:
    SCALE = 2.0  # a class attribute, read through self

    def __init__(self):
        self.deep = _Deep()
        self.slot = _Slotted(1.5)
        self.eps = 1e-3

    @leapp.compile
    def step(self, x):
        w = self.deep.cfg.inner.w
        y = x * w * self.slot.gain * self.SCALE + self.eps
        if self.deep.cfg.inner.flip:  # a Python flag: the branch is the trace's
            y = -y
        return y

    @classmethod
    def scaled(cls, x):
        return x * cls.SCALE


def _step(f, x):
    y = x * f.deep.cfg.inner.w * f.slot.gain * f.SCALE + f.eps
    return -y if f.deep.cfg.inner.flip else y


def test_numbers_held_deep_in_objects_slots_and_classes_are_watched():
    f = Filtered()
    x = X.astype(np.float32)
    np.testing.assert_array_equal(f.step(x), _step(f, x))
    try:
        for change in (lambda: setattr(f, "eps", 0.5),
                       lambda: setattr(f.deep.cfg.inner, "w", np.float32(-3.0)),  # three levels down
                       lambda: setattr(f.deep.cfg.inner, "flip", True),
                       lambda: setattr(f.slot, "gain", 4.0),  # a __slots__ attribute
                       lambda: setattr(Filtered, "SCALE", 5.0)):  # the class's, seen through self
            change()
            np.testing.assert_array_equal(f.step(x), _step(f, x))
        scaled = leapp.compile(Filtered.scaled)
        np.testing.assert_array_equal(scaled(x), x * Filtered.SCALE)
        Filtered.SCALE = 7.0
        np.testing.assert_array_equal(scaled(x), x * 7.0)
    finally:
        Filtered.SCALE = 2.0


def test_a_closure_number_changed_by_nonlocal_is_watched():
    gain = 2.0

    @leapp.compile
    def amplify(x):
        return x * gain

    def set_gain(v):
        nonlocal gain
        gain = v

    np.testing.assert_array_equal(amplify(X), X * 2.0)
    set_gain(-1.5)
    np.testing.assert_array_equal(amplify(X), X * -1.5)
    set_gain(float("nan"))  # NaN != NaN: watched by identity, not traced again at every call
    assert np.isnan(amplify(X)).all()
    retraces = amplify._state_retraces
    amplify(X)
    assert amplify._state_retraces == retraces
