"""One planted case per cross-check rule (crosscheck.py, "the rules").

Each test plants the situation its rule exists for and fails when that rule
is deleted. Disagreements (the two stages contradict each other) are
``InternalError``; a real problem lint missed is the user's ``ProblemsError``
with the miss named; a consequence of a flagged call is that call's problem.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import leapp
import leapp.table
from leapp.errors import InternalError, ProblemsError

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)


def _plant_verdict(cf, name, verdict):
    sites = cf.source.analysis.sites
    for i, site in enumerate(sites):
        if site.name == name:
            sites[i] = dataclasses.replace(site, verdict=verdict)


def clipped(x):
    return np.clip(x, -1.0, 1.0) + 1.0


def test_rule_supported_but_untraced(monkeypatch):
    cf = leapp.compile(clipped, strict=False)
    monkeypatch.delitem(leapp.table.TABLE, "numpy.clip")  # the runtime no longer knows the call
    with pytest.raises(InternalError, match=r"numpy\.clip: the static pass calls it supported, but at runtime"):
        cf(X)


def test_rule_unsupported_but_traced():
    cf = leapp.compile(clipped, strict=False)
    _plant_verdict(cf, "numpy.clip", "unsupported")  # a static pass that wrongly refuses np.clip
    with pytest.raises(InternalError, match=r"numpy\.clip: the static pass calls it unsupported, but the "
                                            r"runtime traced it"):
        cf(X)


def viewed(x):
    return x.view() * 2.0


def test_rule_supported_but_no_node(monkeypatch):
    entry = leapp.table.TABLE["ndarray.view"]
    assert entry.recorded_op == ""  # x.view() is an alias: it records no node, by the table
    cf = leapp.compile(viewed)
    np.testing.assert_allclose(cf(X), X * 2.0)
    assert cf.crosscheck.ok
    # a table that says x.view() records a node of its own: the runtime records none
    monkeypatch.setitem(leapp.table.TABLE, "ndarray.view", dataclasses.replace(entry, records=None))
    cf = leapp.compile(viewed)
    with pytest.raises(InternalError, match=r"ndarray\.view: .*ran on traced data and recorded no node"):
        cf(X)


def branch_on_data(x):
    if x[0, 0] < 0:
        x = -x
    return x * 2.0


def test_rule_not_flagged_is_the_users_problem_with_the_miss_named():
    cf = leapp.compile(branch_on_data, convert_control_flow=False)  # converted, it would not escape
    assert [d.code for d in cf.diagnostics] == ["LP202"]
    cf.source.analysis.diagnostics.clear()  # plant a lint that missed the branch
    with pytest.raises(ProblemsError) as info:
        cf(X)
    message = str(info.value)
    line = branch_on_data.__code__.co_firstlineno + 1
    assert f"{__file__}:{line}: bool() of a traced array" in message
    assert "leapp lint did not flag 1 of these" in message
    assert f"{__file__}:{line}: escape (bool() of a traced array" in message
    assert "lint's findings for this function: none" in message

    lenient = leapp.compile(branch_on_data, strict=False, convert_control_flow=False)
    lenient.source.analysis.diagnostics.clear()
    with pytest.warns(leapp.errors.LeappWarning, match="leapp lint did not flag"):
        lenient(X)
    (row,) = [r for r in lenient.crosscheck.rows if r.missed]
    assert row.line == line and row.disagreement is None and lenient.crosscheck.ok


def frozen_from_an_unflagged_call(x):
    u = np.unique(x)
    return np.clip(u, 0.0, 1.0) + x.sum()


def frozen_from_a_flagged_call(x):
    u = np.unique(x)
    return np.clip(u, 0.0, 1.0) + x.sum()


def test_rule_frozen_value_is_excused_only_when_its_origin_was_flagged():
    flagged = leapp.compile(frozen_from_a_flagged_call)
    assert [d.code for d in flagged.diagnostics] == ["LP102"]
    with pytest.raises(ProblemsError) as info:
        flagged(X)
    # the frozen use on the next line is np.unique's consequence: one problem, no miss, no InternalError
    assert len(info.value.problems) == 1 and "LP102" in info.value.problems[0]
    assert "did not flag" not in str(info.value)

    unflagged = leapp.compile(frozen_from_an_unflagged_call)
    # plant a lint that did not see np.unique at all (no diagnostic, no site)
    unflagged.source.analysis.diagnostics.clear()
    sites = unflagged.source.analysis.sites
    sites[:] = [s for s in sites if s.name != "numpy.unique"]
    with pytest.raises(ProblemsError) as info:
        unflagged(X)
    line = frozen_from_an_unflagged_call.__code__.co_firstlineno
    message = str(info.value)
    assert f"{__file__}:{line + 1}:9: untraced (numpy.unique) on a line lint did not flag" in message
    assert (f"{__file__}:{line + 2}:12: a value frozen at line {line + 1} from a call lint did not flag"
            in message)


def test_a_consequence_of_a_flagged_call_is_not_a_disagreement_in_non_strict_mode():
    cf = leapp.compile(frozen_from_a_flagged_call, strict=False)
    with pytest.warns(leapp.errors.LeappWarning):
        cf(X)
    assert cf.crosscheck.ok and cf.crosscheck.missed == []
    rows = [r for r in cf.crosscheck.rows if r.runtime == "frozen"]
    assert rows and all("LP102" in r.static for r in rows)
