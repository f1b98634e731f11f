"""Seed API after a refused trace (issue 17): a traced value left on an object by a refused strict
compile of a method, used in a later seed-API session (or a later compile), is refused by name at its
use (EscapeError), never a raw KeyError from lowering, nor lowered as an unrelated node that happens to
share its index."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import EscapeError, ProblemsError


class Filter:
    def __init__(self):
        self.x = (np.zeros(3),)

    @leapp.compile
    def step(self, z):
        # held in a tuple: the one holder leapp's escape search can name but not swap back
        # (a plain attribute gets NumPy's value back: tests/compiler/test_trust.py)
        self.x = (self.x[0] * 0.5 + z,)
        return self.x[0]


@leapp.compile
def uses_state(z, f):
    return z + f.x[0]


def _left_over():
    f = Filter()
    with pytest.raises(ProblemsError, match="LP304"):
        f.step(np.ones(3))
    return f


def test_a_value_left_by_a_refused_trace_is_refused_by_name_in_a_later_session():
    f = _left_over()
    leapp.start("later")
    try:
        for k in range(2):
            x = annotate.input_tensors("n", {"x": np.full(3, float(k))})
            annotate.output_tensors("n", {"y": x * 2 + f.x[0]})
    finally:
        leapp.stop()
    with pytest.raises(EscapeError, match=r"(?s)numpy.add at .*test_refused_leaves_no_crash.py:\d+ uses a traced "
                                          r"value left over from another trace"):
        leapp.compile_graph()


def test_a_value_left_by_a_refused_trace_is_refused_in_a_later_compile():
    f = _left_over()
    with pytest.raises(EscapeError, match="left over from another trace"):
        uses_state(np.ones(3), f)
