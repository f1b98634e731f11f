"""State the graph froze is watched from call to call (``leapp.compiler.guards``): an array read
from outside the call (a module's global, a normaliser's ``self.mean``, a closure's table, a
library's global) that changes in place or is rebound makes the next call trace again, as NumPy
reads it afresh. Without the guards each of these returns the values of the first trace.

Also here: methods, bound methods and callable instances compile (``leapp.compiler.bound``)."""

from __future__ import annotations

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
