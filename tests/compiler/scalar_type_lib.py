"""Library-shaped code that tells a NumPy scalar from an array by its type (spatialmath's ``getunit``
and ``rotz``): NumPy hands ``angles[2]`` out as a NumPy scalar, which is not ``Iterable``; leapp
holds it as a traced 0-d array, which is, so the array path flattens it to shape (1,) and
``math.cos`` is given that."""

import math
from collections.abc import Iterable

import numpy as np


def as_angle(theta):
    if not isinstance(theta, Iterable):
        return theta
    return np.asarray(theta).flatten()  # an array given: a vector of angles


def rotz(theta):
    theta = as_angle(theta)
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy(angles):
    return rotz(angles[2]) @ rotz(angles[1]) @ rotz(angles[0])


def to_float(theta):
    return float(as_angle(theta)) * 2.0
