"""Print diagnostics as ruff does: text, JSON, or GitHub Actions annotations."""

from __future__ import annotations

import json

from .diagnostics import Diagnostic


def _fixable(diagnostics) -> int:
    return sum(d.fix is not None for d in diagnostics)


def text(diagnostics: list[Diagnostic]) -> str:
    lines = [f"{d.path}:{d.line}:{d.col}: {d.code} {d.message}" for d in diagnostics]
    n = len(diagnostics)
    if n:
        summary = f"Found {n} error{'s' if n != 1 else ''}."
        fixable = _fixable(diagnostics)
        if fixable:
            summary += f"\n[*] {fixable} fixable with `leapp lint --fix`."
        lines.append(summary)
    else:
        lines.append("All checks passed!")
    return "\n".join(lines) + "\n"


def as_json(diagnostics: list[Diagnostic]) -> str:
    records = []
    for d in diagnostics:
        fix = None
        if d.fix is not None:
            fix = {"applicability": "safe", "message": d.fix.title, "edits": [
                {"content": e.text, "location": {"row": e.line, "column": e.col},
                 "end_location": {"row": e.end_line, "column": e.end_col}} for e in d.fix.edits]}
        records.append({"code": d.code, "name": d.name, "message": d.message, "filename": d.path,
                        "location": {"row": d.line, "column": d.col},
                        "end_location": {"row": d.end_line or d.line, "column": d.end_col or d.col},
                        "fix": fix, "url": f"docs/lint-codes.md#{d.code.lower()}"})
    return json.dumps(records, indent=2) + "\n"


def _escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C") if prop else s


def github(diagnostics: list[Diagnostic]) -> str:
    out = []
    for d in diagnostics:
        props = (f"title={_escape(f'leapp ({d.code})', True)},file={_escape(d.path, True)},"
                 f"line={d.line},col={d.col},endLine={d.end_line or d.line},"
                 f"endColumn={d.end_col or d.col}")
        out.append(f"::error {props}::{_escape(f'{d.path}:{d.line}:{d.col}: {d.code} {d.message}')}")
    return "\n".join(out) + ("\n" if out else "")


FORMATS = {"text": text, "json": as_json, "github": github}
