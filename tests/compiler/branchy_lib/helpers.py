"""Branches that call the library's own helpers, as modern_robotics and transforms3d write them."""

import math

import numpy as np

from .geometry import near_zero


def identity_quaternion():
    return np.array([1.0, 0.0, 0.0, 0.0])


def axis_angle(w):
    return w / np.linalg.norm(w), np.linalg.norm(w)


def quaternion_from_rotation_vector(w):
    """`if NearZero(theta): return qeye()` / `axis, theta = AxisAng(w)`: helpers on both sides."""
    if near_zero(np.linalg.norm(w)):
        return identity_quaternion()
    axis, theta = axis_angle(w)
    q = np.zeros(4)  # an array this code made: written into on both sides of the select
    q[0] = np.cos(theta / 2)
    q[1:] = np.sin(theta / 2) * axis
    return q


def yaw(M):
    """`math` on the 0-d values of one side, a Python float on the other (transforms3d's euler)."""
    cy = math.sqrt(M[0, 0] * M[0, 0] + M[1, 0] * M[1, 0])
    if cy > 1e-6:
        z = math.atan2(M[1, 0], M[0, 0])
    else:
        z = 0.0
    return z


def zero_first(v):
    v[0] = 0.0  # writes into its caller's array
    return v


def writes_through_helper(v):
    if v.sum() > 0:
        v = zero_first(v)
    return v * 2.0


def countdown(x, n):
    if n <= 0:
        return x
    return countdown(x, n - 1)


def recursive_helper(x):
    if x.sum() > 0:
        x = countdown(x, 2)
    return x + 1.0


def nested_untyped_test(x):
    """A test the static pass cannot type (a helper's result) inside a converted branch: it runs in
    the branch's local function, and the runtime sends its line back to the plan."""
    if x.sum() > 0:
        if near_zero(x[0]):
            y = x * 0.0
        else:
            y = x * 2.0
    else:
        y = -x
    return y


def stacked(v, t):
    """`np.r_[...]` joins its items: not an index that can be out of range (modern_robotics)."""
    if t > 1e-6:
        return np.r_[v * t, [1.0]]
    return np.r_[v, [0.0]]


def scaled_by_setting(x, settings):
    """An arm calling a method named like NumPy's on a value leapp cannot type (an attribute of an
    object): a converted copy routes no call, so nothing would check it is NumPy's at runtime."""
    if x.sum() > 0:
        return x * settings.scale.max()
    return -x


class Checked(np.ndarray):
    """An ndarray subclass whose constructor guards its values, as scikit-spatial's objects do:
    the guard is a branch on data, and `.view(cls)` is refused at once."""

    def __new__(cls, a):
        if not np.isfinite(a).all():
            raise ValueError("finite values only")
        return np.asarray(a).view(cls)
