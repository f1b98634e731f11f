"""The rebuilt function behaves like the user's: globals, closures, defaults, methods, no source."""

from __future__ import annotations

import math

import numpy as np
import pytest

import leapp
from leapp.errors import LeappWarning, NoSourceError

OFFSET = np.array([1.0, 2.0, 3.0], dtype=np.float32)
X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)


@leapp.compile
def shifted(x, scale=2.0, *, clip=5.0):
    return np.clip((x - OFFSET) * scale, -clip, clip)


def test_globals_and_defaults_are_the_originals():
    np.testing.assert_allclose(shifted(X), np.clip((X - OFFSET) * 2.0, -5.0, 5.0))
    np.testing.assert_allclose(shifted(X, 3.0, clip=1.0), np.clip((X - OFFSET) * 3.0, -1.0, 1.0))
    assert shifted.__name__ == "shifted"
    assert shifted.__wrapped__.__defaults__ == (2.0,)


def make_closure(bias):
    weights = np.full(3, 0.5, dtype=np.float32)

    @leapp.compile
    def apply(x):
        return np.maximum(x * weights + bias, 0.0)

    return apply


def test_closure_values_are_used():
    apply = make_closure(np.float32(1.0))
    np.testing.assert_allclose(apply(X), np.maximum(X * 0.5 + 1.0, 0.0))


def test_closure_cells_are_shared_with_the_original():
    gain = 1.0

    @leapp.compile
    def amplify(x):
        return np.multiply(x, gain)

    gain = 4.0  # a later write to the cell: the rebuilt function must see it when it traces
    np.testing.assert_allclose(amplify(X), X * 4.0)


class Normalizer:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std
        self.__eps = 1e-6

    @leapp.compile
    def __call__(self, x):
        return (x - self.mean) / (self.std + self.__eps)


class Clipped(Normalizer):
    @leapp.compile
    def __call__(self, x):
        return np.clip(super().__call__(x), -1.0, 1.0)


def test_methods_bind_self_and_keep_private_names():
    norm = Normalizer(np.float32(1.0), np.float32(2.0))
    np.testing.assert_allclose(norm(X), (X - 1.0) / (2.0 + 1e-6), rtol=1e-6)


def test_zero_argument_super_works_in_a_compiled_method():
    clipped = Clipped(np.float32(0.0), np.float32(1.0))
    np.testing.assert_allclose(clipped(X), np.clip(X / (1.0 + 1e-6), -1.0, 1.0), rtol=1e-6)


class Scaled:
    GAIN = np.float32(2.0)

    @leapp.compile
    def by_name(self, x):
        return x * Scaled.GAIN  # the method's own class, by its module-level name

    @staticmethod
    def plain(x):
        return x - Scaled.GAIN


def test_a_method_may_name_its_own_class():
    # the method is recompiled inside a stand-in class of the same name: `Scaled` must still be
    # the module's class (it was a free variable with no cell: a raw KeyError)
    np.testing.assert_array_equal(Scaled().by_name(X), X * np.float32(2.0))
    np.testing.assert_array_equal(leapp.compile(Scaled.plain)(X), X - np.float32(2.0))


def test_decorator_with_options_and_direct_call():
    def plain(x):
        return np.abs(x)

    cf = leapp.compile(plain, strict=False)
    np.testing.assert_array_equal(cf(X), np.abs(X))
    assert cf.fn is plain


def test_lambda_is_refused_in_strict_mode_with_a_clear_error():
    with pytest.raises(NoSourceError, match="lambda.*strict=False"):
        leapp.compile(lambda x: np.abs(x))


def test_source_less_function_falls_back_to_runtime_tracing_with_a_warning():
    namespace = {"np": np}
    exec("def f(x):\n    return np.sqrt(np.abs(x))\n", namespace)  # no file to read the source from
    with pytest.warns(LeappWarning, match="runtime only"):
        cf = leapp.compile(namespace["f"], strict=False)
    np.testing.assert_allclose(cf(X), np.sqrt(np.abs(X)))
    assert cf.diagnostics == [] and cf.crosscheck is None
    assert "torch.sqrt" in cf.graphs[0].code


def test_builtin_is_refused_in_strict_mode():
    with pytest.raises(NoSourceError, match="not a Python function"):
        leapp.compile(math.sqrt)


def test_compiled_function_called_while_tracing_is_inlined():
    @leapp.compile
    def inner(x):
        return np.exp(x)

    @leapp.compile
    def outer(x):
        return inner(x) + 1.0

    np.testing.assert_allclose(outer(X), np.exp(X) + 1.0, rtol=1e-6)
    assert "torch.exp" in outer.graphs[0].code


@leapp.compile
def _halve_n_times(x, n=3):
    return x if n == 0 else _halve_n_times(x * 0.5, n - 1)


def _quarter_n_times(x, n=2):
    return x if n == 0 else _quarter_n_times(x * 0.25, n - 1)


def test_a_recursive_function_compiles():
    # the rewritten def is compiled inside a factory: its own name must stay the module's global
    x = np.ones(3)
    assert np.allclose(_halve_n_times(x), x / 8)
    assert np.allclose(leapp.compile(_quarter_n_times)(x), x / 16)

    def outer():
        def rec(v, n=2):  # its own name is a closure cell here
            return v if n == 0 else rec(v + 1.0, n - 1)
        return rec

    assert np.allclose(leapp.compile(outer())(x), x + 2)
