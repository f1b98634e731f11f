"""Library code of the kinds gymnasium, pykalman and simdkalman hold (issue 17: code leapp had not
seen), for tests/compiler/test_gym_kalman.py: each function is the mechanism of one case of the
corpus' gymnasium, pykalman and simdkalman sections, written as those libraries write it."""

from __future__ import annotations

import collections

import numpy as np


def split_by_sizes(x, sizes):
    """gymnasium.spaces.utils.unflatten of a Dict space: split at the cumulative sizes."""
    dims = np.asarray(sizes, dtype=np.int_)
    return tuple(np.split(x, np.cumsum(dims[:-1])))


def split_at_array(x):
    """np.split at indices given as a NumPy array."""
    return tuple(np.split(x, np.array([2, 5])))


def one_hot_multi(x, nvec):
    """gymnasium.spaces.utils.flatten of a MultiDiscrete space: the size is computed from constants."""
    offsets = np.zeros((len(nvec) + 1,), dtype=np.int32)
    offsets[1:] = np.cumsum(np.asarray(nvec))
    onehot = np.zeros((offsets[-1],), dtype=np.int64)
    onehot[offsets[:-1] + x] = 1
    return onehot


class Delay:
    """gymnasium.wrappers.DelayObservation: a queue of the observations it was given."""

    def __init__(self, delay):
        self.queue = collections.deque()
        self.delay = delay

    def observation(self, obs):
        self.queue.append(obs)
        if len(self.queue) > self.delay:
            return self.queue.popleft()
        return np.zeros(obs.shape)


class Factor:
    def __init__(self, scale):
        self.scale = scale


def weighted_by_factors(x, scales):
    """pykalman.sqrt.bierman: one decomposition object per step, kept in an object array."""
    factors = np.zeros(len(scales), dtype=object)
    for i, s in enumerate(scales):
        factors[i] = Factor(s)
    out = np.zeros_like(x)
    for i in range(len(scales)):
        out = out + factors[i].scale * x
    return out


def keep_prior_where_nan(m, prior, y):
    """simdkalman.primitives.priv_update_with_nan_check, then its autoshape reading the shape."""
    m1 = m + y
    is_nan = np.ravel(np.any(np.isnan(m1), axis=1))
    m1[is_nan, ...] = prior[is_nan, ...]
    if len(m1.shape) > 2:
        return m1[:, 0]
    return m1


class Keeper:
    """A filter object that keeps the last value it computed (pykalman users keep mean and covariance so)."""

    def __init__(self):
        self.last = None

    def keep(self, x):
        self.last = x * 2.0
        return self.last + 1.0
