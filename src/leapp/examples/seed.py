"""The seed example: normalise a robot state, clip it, append the velocity.

Run with ``python -m leapp.examples.seed``: traces three frames through the
seed-style API, prints the recorded graph and the validation report.
"""

from __future__ import annotations

import numpy as np

import leapp
from leapp import annotate

STATE_MEAN = np.array([0.1, -0.2, 0.05, 0.0, 0.3, -0.1], dtype=np.float32)
STATE_STD = np.array([0.5, 0.7, 0.2, 1.0, 0.9, 0.4], dtype=np.float32)


def frames(n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield {
            "observation.state": rng.normal(0.0, 1.0, 6).astype(np.float32),
            "observation.velocity": rng.normal(0.0, 2.0, 3).astype(np.float32),
        }


def preprocess(frame):
    state, velocity = annotate.input_tensors("preprocess", {
        "state": frame["observation.state"],
        "velocity": frame["observation.velocity"],
    })

    state_norm = np.clip((state - STATE_MEAN) / STATE_STD, -5.0, 5.0)
    obs = np.concatenate([state_norm, velocity])
    return annotate.output_tensors("preprocess", {"obs": obs})


def main(n_frames=3):
    leapp.start("seed")
    for frame in frames(n_frames):
        preprocess(frame)
    leapp.stop()
    pipeline = leapp.compile_graph(validate=True)
    node = pipeline["preprocess"]
    print(node.graph_module.graph)
    print(pipeline.report())
    return pipeline


if __name__ == "__main__":
    main()
