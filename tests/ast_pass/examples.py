"""Every example program the static-pass tests use, in one place."""

from __future__ import annotations

from leapp.ast_pass import ALL_RULES


def rule_examples():
    """(id, rule, kind, example) for every VALID/INVALID example of every rule."""
    out = []
    for rule in ALL_RULES:
        for kind in ("VALID", "INVALID"):
            for i, ex in enumerate(getattr(rule, kind)):
                out.append((f"{rule.CODE}-{kind.lower()}-{i}", rule, kind, ex))
    return out


def program_sources():
    """Example sources that are Python programs (text that parses)."""
    import ast

    out = []
    for ident, _, _, ex in rule_examples():
        if isinstance(ex.code, str) and ex.code.strip():
            try:
                ast.parse(ex.code)
            except SyntaxError:
                continue
            out.append((ident, ex.code))
    return out
