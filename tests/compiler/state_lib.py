"""A library module with state of its own, for tests/compiler/test_state_guards.py: a gain that a
setter rebinds and a table it reads, as calibration code keeps them."""

from __future__ import annotations

import numpy as np

GAIN = np.full(3, 2.0)


def set_gain(value):
    global GAIN
    GAIN = np.full(3, value)


def scale(x):
    return x * GAIN
