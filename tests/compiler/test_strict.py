"""Strict mode raises every problem at once; non-strict warns once per problem."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp
from leapp.errors import EscapeWarning, ProblemsError, UntracedCallWarning

X = np.array([[0.5, -1.0], [2.0, 3.0]], dtype=np.float32)


def three_problems(x):
    first = x[0, 0].item()
    peak = float(x.max())
    values = np.unique(x)
    return x * first * peak, values


LINE = three_problems.__code__.co_firstlineno


def test_strict_lists_all_problems_at_once_with_file_and_line():
    cf = leapp.compile(three_problems)  # strict by default
    assert [d.code for d in cf.diagnostics] == ["LP203", "LP201", "LP102"]
    with pytest.raises(ProblemsError) as info:
        cf(X)
    message = str(info.value)
    assert "3 problem(s)" in message
    for offset, code in [(1, "LP203"), (2, "LP201"), (3, "LP102")]:
        assert f"{__file__}:{LINE + offset}:" in message
        assert code in message
    assert len(info.value.problems) == 3
    assert cf.graphs == []  # nothing half-made is kept


def test_runtime_only_problems_are_listed_too():
    def hidden(x):
        return helper_with_escape(x)  # the escape is in a function the lint never read

    cf = leapp.compile(hidden)
    assert cf.diagnostics == []
    with pytest.raises(ProblemsError, match=r"int\(\) of a traced array"):
        cf(X)


def helper_with_escape(x):
    return x * int(x.sum())


def test_non_strict_warns_each_problem_at_its_line_and_still_builds_a_graph():
    cf = leapp.compile(three_problems, strict=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, values = cf(X)
    found = [(w.category, w.lineno) for w in caught if issubclass(w.category, (UntracedCallWarning, EscapeWarning))]
    assert (EscapeWarning, LINE + 1) in found
    assert (EscapeWarning, LINE + 2) in found
    assert (UntracedCallWarning, LINE + 3) in found
    assert all(w.filename == __file__ for w in caught if w.lineno in (LINE + 1, LINE + 2, LINE + 3))
    np.testing.assert_allclose(out, X * 0.5 * 3.0)
    assert len(cf.graphs) == 1


def test_non_strict_warns_static_findings_in_branches_not_taken():
    def branchy(x, flag=False):
        if flag:
            return np.unique(x)
        return np.abs(x)

    cf = leapp.compile(branchy, strict=False)
    with pytest.warns(UntracedCallWarning, match="LP102"):
        cf(X)


def test_a_clean_function_raises_nothing_in_strict_mode():
    def clean(x):
        return (x - x.mean()) / (x.std() + 1e-6)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = leapp.compile(clean)(X)
    np.testing.assert_allclose(out, (X - X.mean()) / (X.std() + 1e-6), rtol=1e-5)
