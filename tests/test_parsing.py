"""CPython 3.11's spurious ``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905) is retried once wherever leapp parses source; any other error is not."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import leapp
from leapp.ast_pass import parsing


def _once(monkeypatch, message):
    real, calls = ast.parse, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError(message)
        return real(*args, **kwargs)

    monkeypatch.setattr(parsing.ast, "parse", flaky)
    return calls


def _scaled(x):
    return np.tanh(x) * 2.0


def test_a_spurious_recursion_mismatch_is_parsed_again(monkeypatch):
    calls = _once(monkeypatch, "AST constructor recursion depth mismatch (before=105, after=65)")
    cf = leapp.compile(_scaled)  # the decoration parses the source: the first parse fails
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_array_equal(cf(x), _scaled(x))
    assert len(calls) >= 2


def test_any_other_system_error_is_raised(monkeypatch):
    _once(monkeypatch, "something else")
    with pytest.raises(SystemError, match="something else"):
        parsing.parse("x = 1")
