"""The differential check takes each side of every converted test it can reach (compiler/sides.py)."""

from __future__ import annotations

import numpy as np

import leapp
from leapp.compiler.check import DEFAULT_SAMPLES

F32 = np.float32
EXAMPLE = np.array([0.5, 1.0, -0.3], F32)  # redrawn in its range, negated, zeros: never above 1.5


def clamp(x):
    if x.max() > 1.5:
        x = np.minimum(x, 1.5)
    return x


def nan_guard(x):
    if np.isnan(x).any():
        x = np.zeros_like(x)
    return x


def test_an_input_on_the_side_the_generated_ones_missed_joins_the_check():
    cf = leapp.compile(clamp)
    cf(EXAMPLE)
    (graph,) = cf._graphs.values()
    assert graph.checked == DEFAULT_SAMPLES + 1  # one more input, above 1.5
    (site,) = cf._sides
    assert cf._sides[site] == {True, False}
    assert "never exercised" not in cf.format_report()


def test_the_report_says_when_a_branch_was_never_exercised():
    cf = leapp.compile(nan_guard)
    cf(EXAMPLE)
    line = nan_guard.__code__.co_firstlineno + 1
    assert (f"line {line}: every check input took the false side (the other branch was never exercised "
            "against NumPy)") in cf.format_report()
