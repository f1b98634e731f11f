"""Each rule's VALID and INVALID examples are its tests (Fixit style)."""

from __future__ import annotations

import pytest

from leapp.ast_pass import ALL_RULES, check_bytes
from leapp.ast_pass.fix import fix_source

from .examples import rule_examples

EXAMPLES = rule_examples()


def _check(ex):
    data = ex.code if isinstance(ex.code, bytes) else ex.code.encode()
    options = dict(ex.options)
    path = options.pop("path", "example.py")
    return check_bytes(data, path, max_file_size=options.pop("max_file_size", 5 << 20), **options)


@pytest.mark.parametrize("ident,rule,kind,ex", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example(ident, rule, kind, ex):
    found = _check(ex).diagnostics
    if kind == "VALID":
        assert found == [], f"valid example flagged: {found}"
        return
    mine = [d for d in found if d.code == rule.CODE]
    assert mine, f"{rule.CODE} not reported"
    assert all(d.code == rule.CODE for d in found), f"one construct, one code: {found}"
    if ex.line is not None:
        assert mine[0].line == ex.line
    assert mine[0].message and "{" not in mine[0].message
    if ex.fixed is not None:
        assert all(d.fix for d in mine)
        fixed, n = fix_source(ex.code, "example.py")
        assert n >= 1
        assert fixed == ex.fixed
        assert [d for d in _check(type(ex)(fixed)).diagnostics if d.code == rule.CODE] == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.CODE for r in ALL_RULES])
def test_every_rule_is_documented_and_exemplified(rule):
    assert rule.CODE.startswith("LP") and len(rule.CODE) == 5
    for field in ("NAME", "MESSAGE", "WHAT", "WHY", "INSTEAD"):
        assert getattr(rule, field), field
    if not getattr(rule, "NO_EXAMPLES", None):
        assert rule.VALID and rule.INVALID
    assert bool(rule.FIX) == any(ex.fixed is not None for ex in rule.INVALID)


def test_codes_and_names_are_unique():
    assert len({r.CODE for r in ALL_RULES}) == len(ALL_RULES)
    assert len({r.NAME for r in ALL_RULES}) == len(ALL_RULES)
