"""Which code is traced, since a repository is full of NumPy code that never is.

In scope: functions decorated with ``@leapp.compile`` (any import spelling,
with or without arguments); statements from ``annotate.input_tensors(...)``
to ``annotate.output_tensors(...)`` in one body; functions with a
``# leapp: trace`` comment on or just above their ``def``; a whole file with
``# leapp: trace`` on a line of its own before the first statement; and what
``[tool.leapp] include`` names (passed in by the CLI).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

COMPILE_NAMES = frozenset({"leapp.compile", "leapp.compiler.compile"})
_ANNOTATE = ("leapp.annotate", "leapp.api.annotate")
INPUT_NAMES = frozenset(f"{a}.input_tensors" for a in _ANNOTATE)
OUTPUT_NAMES = frozenset(f"{a}.output_tensors" for a in _ANNOTATE)

TRACE_COMMENT = re.compile(r"#\s*leapp:\s*trace\b")


@dataclass
class Region:
    """Traced code: a function (``node``) whose parameters are inputs, or a run of
    statements (``stmts``) inside ``owner`` (a function or None for the module)."""

    node: ast.AST | None = None
    stmts: list[ast.stmt] = field(default_factory=list)
    owner: ast.AST | None = None
    inputs: set[str] = field(default_factory=set)


def trace_comment_lines(lines: list[str]) -> set[int]:
    """1-based numbers of lines that carry a ``# leapp: trace`` comment."""
    return {i for i, line in enumerate(lines, 1) if "leapp" in line and TRACE_COMMENT.search(line)}


def file_is_traced(tree: ast.Module, lines: list[str], marks: set[int]) -> bool:
    first = tree.body[0].lineno if tree.body else len(lines) + 1
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        first = tree.body[1].lineno if len(tree.body) > 1 else len(lines) + 1  # after a docstring
    return any(n < first and lines[n - 1].lstrip().startswith("#") for n in marks)


def _has_trace_mark(fn, lines: list[str], marks: set[int]) -> bool:
    top = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    if fn.lineno in marks:
        return True
    n = top - 1  # comment lines directly above the def (or its decorators)
    while n >= 1 and lines[n - 1].lstrip().startswith("#"):
        if n in marks:
            return True
        n -= 1
    return False


def is_compile_decorator(dec: ast.expr, scope) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return scope.qualname(target) in COMPILE_NAMES


def annotate_regions(body: list[ast.stmt], scope, owner) -> list[Region]:
    """Runs of statements from an ``input_tensors`` call to an ``output_tensors`` call."""
    regions: list[Region] = []
    start: int | None = None
    inputs: set[str] = set()
    for i, stmt in enumerate(body):
        calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)] if isinstance(
            stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) else []
        names = {scope.qualname(c.func) for c in calls}
        if start is None and names & INPUT_NAMES:
            start, inputs = i, set()
            for c in calls:
                if scope.qualname(c.func) in INPUT_NAMES:
                    inputs |= {a.id for a in c.args if isinstance(a, ast.Name)}
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    inputs |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        if start is not None and names & OUTPUT_NAMES:
            regions.append(Region(stmts=body[start:i + 1], owner=owner, inputs=inputs))
            start = None
    if start is not None:
        regions.append(Region(stmts=body[start:], owner=owner, inputs=inputs))
    return regions


def function_matches(qualname: str, patterns) -> bool:
    return any(fnmatchcase(qualname, p) for p in patterns)
