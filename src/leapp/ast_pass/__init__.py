"""leapp's static stage: read NumPy preprocessing source before anything runs.

It flags what cannot be traced (``leapp lint``) and routes NumPy calls through
the traced dispatcher (``leapp rewrite``). It reads ``leapp.table`` and never
imports torch, numpy or ``leapp.runtime``; LibCST is imported only to rewrite.

API for the compiler (``leapp.compile``) and other callers
-----------------------------------------------------------
``analyze_source(source, path="<string>", *, scope="auto", first_line=1,
include_functions=(), imports=None, select=None, ignore=None, module_arrays=()) -> Analysis``
    ``scope="all"`` treats the whole source as traced, every top-level
    function (and method) being an entry point whose parameters are traced
    inputs: pass one function's source (``inspect.getsource``; indented
    method source is accepted) with ``first_line`` set to its line in the file,
    and every position comes back in file coordinates. A function's source
    has no import lines: pass ``imports``, its module-level names as qualified
    names (``{"np": "numpy", "la": "numpy.linalg", "lc": "leapp.compile"}``,
    built from ``fn.__globals__``). ``scope="auto"`` finds
    the traced scope itself (``@leapp.compile``, ``annotate`` regions,
    ``# leapp: trace``; ``include_functions`` adds qualified-name globs such as
    ``"normalize"`` or ``"Prep.*"``). ``select``/``ignore`` are code prefixes.
    ``# noqa`` comments apply. Never raises on bad source: LP901/LP903 say why.

``Analysis``: ``.diagnostics`` (list of ``Diagnostic``: ``code``, ``message``,
    ``path``, ``line``, ``col``, ``end_line``, ``end_col``, ``fix``), ``.sites``
    (list of ``Site``: ``name`` as the table spells it, e.g. ``numpy.clip`` or
    ``ndarray.sum``; ``line``; ``col``; ``kind`` "function"/"method"; ``verdict``
    "supported", "refused-keyword", "unsupported", "random" or "unknown") for the
    static/runtime cross-check, and ``.in_scope``.
    Lines and columns are 1-based, columns count characters (ruff's convention).

``rewrite_source(source, path="<string>", *, scope="auto", first_line=1,
include_functions=(), imports=None, module_arrays=()) -> str``
    Every NumPy function call in scope becomes
    ``_leapp.call("path:line:col", np.clip, x, 0.0, 1.0)`` and
    ``import leapp.dispatch as _leapp`` is added; formatting and comments are
    kept (LibCST), and rewriting twice changes nothing. The site string holds
    the call's position in the *original* file. Indented input comes back
    dedented. Raises ``SyntaxError`` on source that does not parse.

``check_bytes(data, path, *, max_file_size=5 MB, scope="auto", ...) -> Analysis``
    ``analyze_source`` for raw file contents, adding the LP902 (not UTF-8) and
    LP904 (too large) checks; an internal error becomes LP999 instead of raising.

``ALL_RULES``: the rule classes (code, name, docs, examples), by code.
"""

from __future__ import annotations

from .analyze import analyze_source, check_bytes
from .diagnostics import Analysis, Diagnostic, Edit, Fix, Site
from .rules import ALL_RULES, RULES_BY_CODE


def rewrite_source(source: str, path: str = "<string>", *, scope: str = "auto", first_line: int = 1,
                   include_functions=(), imports=None, module_arrays=(), convert=True, helpers=None,
                   data_lines=()) -> str:
    from .deep import run_deep
    from .rewrite import rewrite_source as _rewrite  # LibCST is imported only here

    return run_deep(_rewrite, source, path, scope=scope, first_line=first_line,
                    include_functions=include_functions, imports=imports, module_arrays=module_arrays,
                    convert=convert, helpers=helpers, data_lines=data_lines)


__all__ = ["ALL_RULES", "RULES_BY_CODE", "Analysis", "Diagnostic", "Edit", "Fix", "Site",
           "analyze_source", "check_bytes", "rewrite_source"]
