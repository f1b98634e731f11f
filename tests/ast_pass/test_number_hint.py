"""Lint takes an unannotated parameter for an array; where it flags a read of one into Python
(a slice bound, ``float()``, ``max()``, an ``if``), the message says how to declare a Python number
(``n: int``), with which leapp traces one graph per value instead."""

from __future__ import annotations

from textwrap import dedent

import pytest

from leapp.ast_pass import analyze_source

HINT = "annotate it (`{0}: int` or `{0}: float`): leapp then traces one graph per value of `{0}`"


def _messages(body: str) -> list[str]:
    source = "import numpy as np\n# leapp: trace\n" + dedent(body)
    return [d.message for d in analyze_source(source, "t.py").diagnostics]


@pytest.mark.parametrize("body,name", [
    ("def f(x, n):\n    return x[:n]\n", "n"),
    ("def f(x, n):\n    return np.zeros((n, 3), x.dtype)\n", "n"),
    ("def f(x, t):\n    return x * float(t)\n", "t"),
    ("def f(x, n):\n    if n < 0:\n        raise ValueError(n)\n    return x\n", "n"),
])
def test_a_bare_parameter_read_into_python_gets_the_annotation_hint(body, name):
    messages = _messages(body)
    assert messages and any(HINT.format(name) in m for m in messages), messages


@pytest.mark.parametrize("body", [
    "def f(x, n: int):\n    return x[:n]\n",  # annotated: nothing to say (and nothing flagged)
    "def f(x):\n    while np.abs(x).max() > 1.0:\n        x = x / 2\n    return x\n",  # an array's use
])
def test_no_hint_where_the_parameter_is_used_as_an_array_or_is_annotated(body):
    assert not any("annotate it" in m for m in _messages(body))
