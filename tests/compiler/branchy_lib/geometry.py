"""Guards, near-zero guards and elif chains on 0-d values, as rotation libraries write them."""

import numpy as np

EPS = 1e-8


def positive_part(x):
    s = x.sum()
    if s > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def safe_normalise(v):
    n = np.linalg.norm(v)
    if n < EPS:
        return np.zeros_like(v)
    return v / n


def quaternion_from_matrix(R):
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0:
        q = np.array([trace + 1.0, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    elif R[0, 0] > R[1, 1]:
        q = np.array([R[2, 1] - R[1, 2], 1.0 + R[0, 0] - R[1, 1] - R[2, 2], R[0, 1] + R[1, 0],
                      R[0, 2] + R[2, 0]])
    elif R[1, 1] > R[2, 2]:
        q = np.array([R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], 1.0 + R[1, 1] - R[0, 0] - R[2, 2],
                      R[1, 2] + R[2, 1]])
    else:
        q = np.array([R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1],
                      1.0 + R[2, 2] - R[0, 0] - R[1, 1]])
    return q / np.linalg.norm(q)


def checked_rotation(R):
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-6:
        raise ValueError("not a rotation matrix")
    return R.T


def unit_or_zero(v, scale=1.0):
    """Calls another function of the library: the branch is two calls deep."""
    return safe_normalise(v) * scale


class Filter:
    def __init__(self, gain):
        self.gain = gain

    def step(self, x):
        return _clip_norm(x, self.gain)


def _clip_norm(x, limit):
    n = np.linalg.norm(x)
    if n > limit:
        x = x * (limit / n)
    return x


class Limits:
    @staticmethod
    def floor_at_zero(x, *, scale=1.0):
        if x.min() < 0:
            x = x - x.min()
        return x * scale


def make_limiter(limit):
    """A closure: the converted copy must see the same cell."""
    def limiter(x):
        n = np.linalg.norm(x)
        if n > limit:
            return x * (limit / n)
        return x
    return limiter


def near_zero(z):
    return abs(z) < 1e-6


def direction(v):
    """The test is a helper's result, which the static pass cannot type: the runtime saw it test
    traced data, and leapp converts it for that reason."""
    if near_zero(np.linalg.norm(v)):
        return np.zeros_like(v)
    return v / np.linalg.norm(v)


def clamp_length(v, limit):
    """An `if`/`elif` chain of returns with a fall-through (issue 19)."""
    n = np.linalg.norm(v)
    if n < 1e-9:
        return np.zeros_like(v)
    elif n > limit:
        return v * (limit / n)
    return v


def signed_unit(v):
    """An early return inside an arm of an `if` on data, the `else` assigning."""
    s = v.sum()
    if s > 0:
        if s > 10:
            return v / s
        w = v * 2
    else:
        w = -v
    return w + 1
