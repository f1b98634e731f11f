"""Library-shaped code (another module: leapp.compile does not rewrite it) with the three patterns that
were false refusals in the library corpus: a Python list of traced 0-d values handed to NumPy
(modern_robotics' AxisAng6), NumPy's functions bound at import and applied to plain module constants
(filterpy's predict), and ``.flat`` unpacking with ``math`` on the NumPy scalars (transforms3d's
taitbryan)."""

import math

import numpy as np
from numpy import dot  # bound at import: NumPy's own function object

STATE = np.zeros(3)  # a buffer that outlives every call


def norm_of_items(v):
    return np.linalg.norm([v[0], v[1], v[2]]), np.mean((v[3], v[4], v[5]))


def stacked_mean(a, b):
    return np.mean([a, b], axis=0), np.sum((a, b * 2.0), axis=0)


def predict(x, P, F):
    x = dot(F, x) + dot(1, 0)
    P = dot(dot(F, P), F.T) * 1.5 + P
    return x, P


def write_state(x, state):
    state[:] = x  # changes an array the caller made before tracing
    return x * 2.0


def flat_angles(M):
    M = np.asarray(M)
    r11, r12, r13, r21, r22, r23, r31, r32, r33 = M.flat
    cy = math.sqrt(r23 * r23 + r33 * r33)
    return np.array([math.atan2(-r12, r11), math.atan2(r13, cy), math.atan2(-r23, r33)])


def flat_reads(M):
    return M.flat[4], M.flat[1:5], np.asarray(M.flat) * 2.0, len(M.flat), sum(v for v in M.T.flat)


def flat_writes(M, v):
    out = np.zeros((3, 3))
    out.flat[0] = v[0]
    out.flat[4:6] = v[1:3]
    t = np.zeros((3, 2)).T  # not contiguous: written through element coordinates
    t.flat[1:4] = v
    return out, t


def flat_repeats(M, v):
    out = M.copy()
    out.flat[0:4] = v[:2]  # NumPy repeats the two values over four elements
    return out


def every_function_on_a_list(v, names):
    """Each NumPy function named (looked up on its module at call time, as library code does) on a
    Python list of traced 0-d values."""
    items = [v[0], v[1], v[2], v[3]]
    out = []
    for name in names:
        module, _, attr = name.rpartition(".")
        fn = getattr(np.linalg if module == "numpy.linalg" else np.fft if module == "numpy.fft" else np, attr)
        out.append(fn(items))
    return tuple(out)


# scikit-kinematics' shapes (issue 17's lie corpus): each was a false refusal or a crash


def normalize_rows(v):
    # skinematics.vector.normalize: np.double() of an array (NumPy calls float() first and takes the
    # array on its TypeError), then a masked write whose value's size follows the data
    v = np.double(np.atleast_2d(v)).copy()
    length = np.linalg.norm(v, axis=1)
    v[length != 0] = (v[length != 0].T / length[length != 0]).T
    (m, n) = v.shape  # the array written into keeps its size
    return v.ravel() if m == 1 else v


def first_row_from_2d(q0):
    # skinematics.quat.calc_quat: a (1, 4) value written into a (4,) row
    q_pos = np.zeros((3, 4))
    q_pos[0, :] = np.atleast_2d(q0)
    q_pos[1:, :] = np.atleast_2d(q0)[None] * 2.0
    return q_pos


def twist_adjoint(twist):
    # lee-groups' se3.ad: np.block of 3x3 blocks, one of them a plain constant
    w, v = twist[3:], twist[:3]
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    V = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.block([[W, V], [np.zeros((3, 3)), W]])


class Pose2:
    """lee-groups' SE2 in small: poses compose with `@`, and a method branches on the angle."""

    def __init__(self, angle, t):
        c, s = np.cos(angle), np.sin(angle)
        self.R = np.array([[c, -s], [s, c]])
        self.angle, self.t = angle, t

    def __matmul__(self, other):
        return Pose2(self.angle + other.angle, self.R @ other.t + self.t)

    def scaled_t(self):
        if np.abs(self.angle) < 1e-3:
            k = 1.0 - self.angle ** 2 / 6
        else:
            k = np.sin(self.angle) / self.angle
        return k * self.t


class Vector(np.ndarray):
    """scikit-spatial's objects: ndarray subclasses made with np.asarray(v).view(cls)."""

    def __new__(cls, array):
        return np.asarray(array).view(cls)


def subclass_norm(v):
    return Vector(v * 2.0).sum()
