"""The module of the README's ``leapp lint`` / ``leapp compile`` session.

``preprocess`` traces into a graph; ``halve`` loops while a test on its data
holds, which ``leapp lint`` flags (LP202): the count taken while tracing would
be frozen (an ``if`` on data that leapp can turn into a select is not flagged).
``leapp compile examples/prep.py:preprocess`` takes its inputs from
``example_inputs()`` (or from ``--inputs example.npz``).
"""

import numpy as np

STATE_MEAN = np.array([0.1, -0.2, 0.05], dtype=np.float32)
STATE_STD = np.array([0.5, 0.7, 0.2], dtype=np.float32)


def halve(x):  # leapp: trace
    while np.abs(x).max() > 1.0:
        x = x / 2.0
    return x


def preprocess(state, velocity):  # leapp: trace
    return np.concatenate([np.clip((state - STATE_MEAN) / STATE_STD, -5.0, 5.0), velocity])


def example_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"state": rng.normal(0.0, 1.0, 3).astype(np.float32),
            "velocity": rng.normal(0.0, 2.0, 2).astype(np.float32)}
