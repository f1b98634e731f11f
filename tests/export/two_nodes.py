"""A two-node seed-API session (scale -> shift) for the pipeline export test."""

from __future__ import annotations

import numpy as np

import leapp
from leapp import annotate


def build():
    leapp.start("two")
    for k in range(2):
        x = annotate.input_tensors("scale", {"x": np.arange(4, dtype=np.float32) + k})
        y = annotate.output_tensors("scale", {"y": x * 2.0})
        z = annotate.input_tensors("shift", {"y": y})
        annotate.output_tensors("shift", {"z": z - 1.0})
    leapp.stop()
    return leapp.compile_graph(validate=True)
