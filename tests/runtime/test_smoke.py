import numpy as np
from parity import check


def test_idiom_normalise():
    x = np.linspace(-3, 5, 12, dtype=np.float32).reshape(3, 4)
    check(lambda a: (a - a.mean()) / (a.std() + 1e-6), x)


def test_int_sum_is_int64():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    check(lambda a: a.sum(axis=0), x)
