"""Library-shaped code (not rewritten by leapp.compile: it lives in another module), written the way
pure-NumPy robotics and filtering libraries write it: ``math`` on 0-d values, ``np.r_``/``np.c_``."""

import math

import numpy as np


def euler_to_matrix(roll, pitch, yaw):
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def axis_angle_to_quaternion(axis, angle):
    half = angle / 2.0
    s = math.sin(half)
    n = math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
    return np.r_[math.cos(half), axis * (s / n)]


def matrix_to_euler(R):
    sy = math.hypot(R[0, 0], R[1, 0])
    return np.array([math.atan2(R[2, 1], R[2, 2]), math.atan2(-R[2, 0], sy), math.atan2(R[1, 0], R[0, 0])])


def twist_matrix(w, v):
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    return np.r_[np.c_[W, v], [[0.0, 0.0, 0.0, 0.0]]]


def white_noise_2(dt, var):
    return np.array([[0.25 * dt ** 4, 0.5 * dt ** 3], [0.5 * dt ** 3, dt ** 2]]) * var


def scaled(x32, angle):
    return x32 * math.cos(angle)  # NumPy keeps float32 here: math.cos returns a Python float


def unit_vector32(v):  # robosuite's transform_utils.unit_vector: a float32 copy divided in place
    data = np.array(v, dtype=np.float32, copy=True)
    data /= math.sqrt(np.dot(data, data))  # a float32 dot, then a Python float: NumPy divides in float32
    return data


def rotation32(angle, direction):  # robosuite's transform_utils.rotation_matrix, around the origin
    sina = math.sin(angle)
    cosa = math.cos(angle)
    direction = unit_vector32(direction[:3])
    r = np.array(((cosa, 0.0, 0.0), (0.0, cosa, 0.0), (0.0, 0.0, cosa)), dtype=np.float32)
    r += np.outer(direction, direction) * (1.0 - cosa)  # float32 * a Python float: float32
    direction *= sina
    r += np.array(((0.0, -direction[2], direction[1]), (direction[2], 0.0, -direction[0]),
                   (-direction[1], direction[0], 0.0)), dtype=np.float32)
    m = np.identity(4)
    m[:3, :3] = r
    return m


def normalise_by_first(x):
    return x / float(x[0])  # an escape inside a library: named after the user's call
