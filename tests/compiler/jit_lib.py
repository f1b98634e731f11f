"""Library-shaped code with functions numba compiles (robosuite's transform_utils: ``quat2mat``,
``mat2quat`` under ``@numba.jit``, called by the plain ``pose2mat`` and ``mat2pose``). Each numba
function here is compiled for the first time inside a trace, as a preprocessing function calling a
library that JIT-compiles lazily meets it."""

import math

import numba
import numpy as np


@numba.njit(cache=False)
def warm_up(a):  # compiled before any trace: numba's registries are loaded
    return a + 1.0


@numba.njit(cache=False)
def normalised(q):
    n = np.dot(q, q)
    return q * math.sqrt(2.0 / n)


@numba.njit(cache=False)
def outer_of(q):
    return np.outer(q, q)


def pose(p, q):  # plain Python, as robosuite's pose2mat: the numba call is inside the library
    m = np.zeros((4, 4))
    m[:3, :3] = outer_of(q)[:3, :3]
    m[:3, 3] = p
    m[3, 3] = 1.0
    return m
