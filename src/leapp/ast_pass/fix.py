"""Apply the safe fixes (``leapp lint --fix``) and show them (``--diff``).

A fix replaces one callee (``math.sqrt`` -> ``np.sqrt``, ``max`` ->
``np.maximum``) at the exact position the analysis reported, so nothing else
in the file moves. Fixing repeats until no fix applies (a fix can expose
another), and a result that no longer parses is thrown away.
"""

from __future__ import annotations

import ast
import difflib

from .analyze import analyze_source, split_lines
from .deep import run_deep
from .diagnostics import Edit

MAX_PASSES = 10


def apply_edits(source: str, edits: list[Edit]) -> str:
    lines = split_lines(source)
    starts, offset = [], 0
    for line in lines:  # offsets of each line start; separators may be \r\n
        starts.append(offset)
        offset += len(line)
        rest = source[offset:offset + 2]
        offset += 2 if rest == "\r\n" else (1 if rest[:1] in ("\n", "\r") else 0)

    def at(line: int, col: int) -> int:
        return starts[line - 1] + col - 1

    out, last = [], len(source)
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        start, end = at(e.line, e.col), at(e.end_line, e.end_col)
        if end > last:  # overlaps an edit already applied: leave it for the next pass
            continue
        out.append(source[end:last])
        out.append(e.text)
        last = start
    out.append(source[:last])
    return "".join(reversed(out))


def fix_source(source: str, path: str, *, scope="auto", include_functions=(), select=None,
               ignore=None) -> tuple[str, int]:
    """(fixed source, number of fixes applied)."""
    fixed = 0
    for _ in range(MAX_PASSES):
        analysis = analyze_source(source, path, scope=scope, include_functions=include_functions,
                                  select=select, ignore=ignore)
        fixes = [d.fix for d in analysis.diagnostics if d.fix is not None]
        if not fixes:
            break
        candidate = apply_edits(source, [e for f in fixes for e in f.edits])
        try:
            run_deep(ast.parse, candidate)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            break
        if candidate == source:
            break
        fixed += len(fixes)
        source = candidate
    return source, fixed


def unified_diff(before: str, after: str, path: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        f"a/{path}", f"b/{path}"))
