"""The closed loop every pipeline test shares: preprocess (a history state) -> policy -> action fed back.

``trace(passes)`` runs it under a seed-API session; ``reference(observations)``
is the same loop in plain NumPy, the ground truth a loaded pipeline must
reproduce step by step.
"""

from __future__ import annotations

import numpy as np

import leapp
from leapp import annotate

MEAN = np.array([0.5, -1.0, 2.0], np.float32)
STD = np.array([2.0, 0.5, 4.0], np.float32)
_rng = np.random.default_rng(7)
W = (_rng.normal(size=(14, 2)) * 0.4).astype(np.float32)
B = np.array([0.1, -0.2], np.float32)
HIST0 = np.zeros((4, 3), np.float32)
ACTION0 = np.zeros(2, np.float32)


def observations(n, seed=0, batch=None):
    rng = np.random.default_rng(seed)
    shape = (n, 3) if batch is None else (n, batch, 3)
    return list((rng.normal(size=shape) * 3).astype(np.float32))


def preprocess(obs, last_action, hist):
    """NumPy: the history of normalised observations, flattened, with the last action."""
    hist = np.concatenate([hist[..., 1:, :], ((obs - MEAN) / STD)[..., None, :]], axis=-2)
    flat = hist.reshape(-1, 12) if hist.ndim == 3 else hist.reshape(12)  # -1: any batch size
    return np.concatenate([flat, last_action], axis=-1), hist


def policy(features):
    return np.tanh(features @ W + B)


def reference(obs_list, batch=None, feed=lambda a: a):
    """The loop in NumPy: the actions it produces, step by step."""
    hist = HIST0 if batch is None else np.repeat(HIST0[None], batch, axis=0)
    action = ACTION0 if batch is None else np.repeat(ACTION0[None], batch, axis=0)
    out = []
    for obs in obs_list:
        features, hist = preprocess(obs, feed(action), hist)
        action = policy(features)
        out.append(action)
    return out


def trace(obs_list, *, name="loop", save_path=".", feed=lambda a: a, strict=False, batch=None):
    """The loop under leapp: ``feed`` is what the user does to the action before feeding it back."""
    hist0 = HIST0 if batch is None else np.repeat(HIST0[None], batch, axis=0)
    action = ACTION0 if batch is None else np.repeat(ACTION0[None], batch, axis=0)
    leapp.start(name, save_path=save_path, strict=strict)
    for obs in obs_list:
        o, last = annotate.input_tensors("preprocess", {"obs": obs, "last_action": feed(action)})
        hist = annotate.state_tensors("preprocess", {"hist": hist0})
        features, new_hist = preprocess(o, last, hist)
        annotate.update_state("preprocess", {"hist": new_hist})
        features = annotate.output_tensors("preprocess", {"features": features})
        f = annotate.input_tensors("policy", {"features": features})
        action = annotate.output_tensors("policy", {"action": policy(f)})
    leapp.stop()
    return leapp.compile_graph(validate=True)
