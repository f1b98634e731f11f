"""``ast.parse`` with CPython 3.11's spurious ``SystemError`` retried.

CPython 3.11 counts the AST constructor's recursion depth from the thread's Python
recursion depth and can miscount it (python/cpython#106905): ``ast.parse`` of valid
source then raises ``SystemError: AST constructor recursion depth mismatch``. It is
state, not source: the same text parses on the next try. leapp parses the user's
files at decoration and the libraries it converts, so one such error would fail a
``@leapp.compile`` for nothing (once in 2,500 generated programs). Every other error,
and this one a second time, is raised as it is.
"""

from __future__ import annotations

import ast
from typing import Any

_MISMATCH = "recursion depth mismatch"


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec", **kwargs: Any) -> Any:
    try:
        return ast.parse(source, filename=filename, mode=mode, **kwargs)
    except SystemError as exc:
        if _MISMATCH not in str(exc):
            raise
    return ast.parse(source, filename=filename, mode=mode, **kwargs)
