"""Annotated regions for the seed-API cross-check tests (kept apart from the test code)."""

from __future__ import annotations

import numpy as np

from leapp import annotate

MEAN = np.array([0.1, -0.2, 0.3], dtype=np.float32)


def region(frame):
    x = annotate.input_tensors("prep", {"x": frame})
    y = np.clip(x - MEAN, -1.0, 1.0)
    return annotate.output_tensors("prep", {"y": y})


def region_untraced(frame):
    x = annotate.input_tensors("uniq", {"x": frame})
    values = np.unique(x)
    return annotate.output_tensors("uniq", {"y": values})
