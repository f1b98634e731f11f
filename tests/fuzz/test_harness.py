"""The fuzz harness excuses only inputs where NumPy's own answer is unstable."""

import numpy as np

from .harness import _ill_conditioned


def test_a_floor_at_a_rounding_edge_is_ill_conditioned():
    x = np.array([0.3], np.float32)  # 0.3 * 10 lands within an ulp of 3: floor can go either way

    def fn(a):
        return np.floor(a * np.float32(10.0))

    assert _ill_conditioned(fn, [x], [fn(x)], np.dtype(np.float32))


def test_a_smooth_program_is_not_excused():
    x = np.linspace(-2, 2, 5, dtype=np.float32)

    def fn(a):
        return a * 2 + 1

    assert not _ill_conditioned(fn, [x], [fn(x)], np.dtype(np.float32))


def test_integer_inputs_are_never_excused():
    x = np.arange(5)
    assert not _ill_conditioned(lambda a: np.floor(np.cbrt(a)), [x], [np.floor(np.cbrt(x))], None)
