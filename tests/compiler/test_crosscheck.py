"""The static verdicts and the runtime outcomes must agree; cf.report() shows both per line."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
import leapp.table
from leapp.errors import InternalError

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)


def clipped(x, wide=False):
    y = np.clip(x, -1.0, 1.0)
    if wide:
        y = np.clip(x, -2.0, 2.0)
    return y + x.sum(axis=0) + np.sqrt(2.0)


LINE = clipped.__code__.co_firstlineno


def test_agreeing_stages_give_a_clean_cross_check_with_columns():
    cf = leapp.compile(clipped)
    cf(X)
    check = cf.crosscheck
    assert check.ok and check.disagreements == []
    rows = {(r.line, r.col): r for r in check.rows}
    assert rows[(LINE + 1, 9)].runtime == "recorded (1 node)"
    assert rows[(LINE + 3, 13)].runtime == "not executed"  # the branch not taken
    assert rows[(LINE + 4, 16)].call == "ndarray.sum" and rows[(LINE + 4, 16)].nodes == 1
    assert rows[(LINE + 4, 32)].runtime == "folded (constant operands only)"
    sources = {n.meta.get("leapp_source") for n in cf.graphs[0].graph.nodes}
    assert f"{__file__}:{LINE + 1}:9" in sources
    assert f"{__file__}:{LINE + 4}:16" in sources  # a method call carries its column too


def test_a_call_the_static_pass_calls_supported_but_the_runtime_cannot_trace_is_an_internal_error(monkeypatch):
    cf = leapp.compile(clipped, strict=False)
    assert cf.diagnostics == []  # the static pass read the table while it still had numpy.clip
    monkeypatch.delitem(leapp.table.TABLE, "numpy.clip")  # now the runtime finds no entry
    with pytest.raises(InternalError) as info:
        cf(X)
    message = str(info.value)
    assert f"{__file__}:{LINE + 1}:9: numpy.clip" in message
    assert "static pass calls it supported" in message


def test_a_runtime_problem_the_static_pass_missed_is_an_internal_error():
    def uniq(x):
        return np.unique(x)

    cf = leapp.compile(uniq, strict=False)
    cf.source.analysis.diagnostics.clear()  # plant a static pass that missed the call
    for i, site in enumerate(cf.source.analysis.sites):
        cf.source.analysis.sites[i] = type(site)(**{**site.__dict__, "verdict": "supported"})
    with pytest.raises(InternalError, match=r"numpy\.unique: the static pass calls it supported"):
        cf(X)


def test_crosscheck_warn_mode_keeps_going(monkeypatch):
    cf = leapp.compile(clipped, strict=False, crosscheck="warn")
    monkeypatch.delitem(leapp.table.TABLE, "numpy.clip")
    with pytest.warns(leapp.errors.LeappWarning) as caught:
        cf(X)  # also warns the untraced call itself and the constant it froze
    internal = [w for w in caught if w.category is leapp.errors.LeappInternalWarning]
    assert len(internal) == 1 and "disagree" in str(internal[0].message)
    assert len(cf.graphs) == 1


def escapes(x):
    peak = float(x.max())
    return x / peak


def test_report_shows_each_line_its_calls_verdicts_and_outcomes(capsys):
    cf = leapp.compile(clipped)
    cf.report()
    before = capsys.readouterr().out
    assert "not traced yet" in before
    cf(X)
    cf.report()
    text = capsys.readouterr().out
    assert f"leapp.compile report for clipped ({__file__}:{LINE}-{LINE + 4})" in text
    assert "graph 1 of 1 for ((ndarray[2, 3] float32), {})" in text
    assert f"{LINE + 1:>6} | y = np.clip(x, -1.0, 1.0)" in text
    assert "col 9: numpy.clip: supported -> recorded (1 node)" in text
    assert "col 13: numpy.clip: supported -> not executed" in text
    assert "col 16: ndarray.sum: supported -> recorded (1 node)" in text
    assert "numpy.sqrt: supported -> folded (constant operands only)" in text
    assert "also recorded (operators, indexing, ...): numpy.add x2" in text
    assert "0 disagreement(s)" in text


def test_report_shows_escapes_with_their_lint_code(capsys):
    cf = leapp.compile(escapes, strict=False)
    with pytest.warns(leapp.errors.EscapeWarning):
        cf(X)
    cf.report()
    text = capsys.readouterr().out
    line = escapes.__code__.co_firstlineno + 1
    assert f"{line:>6} | peak = float(x.max())" in text
    assert "float() of a traced array (also math.* functions): LP201 -> escape" in text
    assert "LP201" in text.split("static pass:")[1].splitlines()[1]


def chained(x):
    return np.abs(x).max(axis=0) + x.sum()


def test_calls_that_start_at_the_same_column_are_told_apart():
    cf = leapp.compile(chained)
    np.testing.assert_allclose(cf(X), np.abs(X).max(axis=0) + X.sum(), rtol=1e-6)
    # np.abs(x) and its .max() both start at column 12; the static pass names both
    line = chained.__code__.co_firstlineno + 1
    rows = sorted((r.col, r.call, r.nodes) for r in cf.crosscheck.rows)
    assert rows == [(12, "ndarray.max", 1), (12, "numpy.absolute", 1), (36, "ndarray.sum", 1)]
    assert cf.crosscheck.other_nodes == {line: {"numpy.add": 1}}
