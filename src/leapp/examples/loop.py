"""The closed loop of docs/pipelines.md: a preprocess node with a history state, a policy
node, and the policy's action fed back as the next step's ``last_action``.

``pipeline()`` traces it with the seed API (as the page's first example does, line for
line) and returns the compiled pipeline, so the page's later examples start from it.
"""

from __future__ import annotations

import numpy as np

import leapp
from leapp import annotate

MEAN = np.array([0.1, -0.2, 0.05], dtype=np.float32)
STD = np.array([0.5, 0.7, 0.2], dtype=np.float32)
_rng = np.random.default_rng(0)
W = _rng.normal(0.0, 0.3, (14, 2)).astype(np.float32)
B = np.zeros(2, np.float32)


def observations(n=3, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.normal(0.0, 1.0, 3).astype(np.float32) for _ in range(n)]


def pipeline():
    leapp.start("robot")
    action = np.zeros(2, np.float32)
    for obs in observations():
        o, last = annotate.input_tensors("preprocess", {"obs": obs, "last_action": action})
        hist = annotate.state_tensors("preprocess", {"hist": np.zeros((4, 3), np.float32)})
        hist = np.concatenate([hist[1:], ((o - MEAN) / STD)[None]])
        annotate.update_state("preprocess", {"hist": hist})
        features = annotate.output_tensors("preprocess", {
            "features": np.concatenate([hist.reshape(12), last])})
        f = annotate.input_tensors("policy", {"features": features})
        action = annotate.output_tensors("policy", {"action": np.tanh(f @ W + B)})
    leapp.stop()
    return leapp.compile_graph()
