"""Analyze one source text: parse, find traced scope, walk it with the rules.

The analysis runs on the standard library's ``ast`` (about 100k lines/s
here), not on a LibCST tree (about 15k lines/s to parse, 1.3k with
``QualifiedNameProvider``): it needs names, positions and structure, not
formatting. Everything that *changes* source goes through LibCST
(``rewrite.py``) or through position-exact edits of single names (fixes).
"""

from __future__ import annotations

import ast
import io
import os
import re
import textwrap
import tokenize

from .convert.helpers import ModuleResolver
from .convert.plan import guarded_calls
from .deep import in_deep, run_deep
from .diagnostics import Analysis, Diagnostic
from .parsing import parse
from .resolve import function_scope, make_scope, param_names
from .rules import CHECKS, RULES_BY_CODE
from .scope import (
    _has_trace_mark,
    annotate_regions,
    file_is_traced,
    function_matches,
    is_compile_decorator,
    trace_comment_lines,
)
from .walker import Positions, Walker

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_CODES = r"(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?"
_NOQA = re.compile(r"#\s*noqa" + _CODES, re.IGNORECASE)
_FILE_NOQA = re.compile(r"^#\s*leapp:\s*noqa" + _CODES, re.IGNORECASE)
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)


def split_lines(source: str) -> list[str]:
    return _LINE_SPLIT.split(source)


def _diag(code: str, path: str, line: int = 1, col: int = 1, **fmt) -> Diagnostic:
    return Diagnostic(code, RULES_BY_CODE[code].MESSAGE.format(**fmt), path, line, col, line, col)


def selected(code: str, select=None, ignore=None) -> bool:
    """ruff-style prefix selection: ``LP2`` selects every escape rule."""
    if select is not None and not any(code.startswith(s) for s in select):
        return False
    return not (ignore and any(code.startswith(i) for i in ignore))


def _noqa(source: str):
    """(line -> codes or None for all, file-wide codes (empty: none) or None for all)."""
    per_line: dict[int, list[str] | None] = {}
    file_wide: list[str] | None = []  # None: every code
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT or "noqa" not in tok.string.lower():
                continue
            m = _FILE_NOQA.match(tok.string)
            if m:
                codes = m.group("codes")
                if file_wide is not None:  # once every code is off, a later list turns none back on
                    file_wide = None if not codes else [*(file_wide or []), *re.split(r"[\s,]+", codes)]
                continue
            m = _NOQA.search(tok.string)
            if m:
                codes = m.group("codes")
                per_line[tok.start[0]] = None if not codes else re.split(r"[\s,]+", codes.upper())
    except (tokenize.TokenError, SyntaxError):
        pass
    return per_line, file_wide


def _suppressed(d: Diagnostic, local_line: int, per_line, file_wide) -> bool:
    if file_wide is None:
        return True
    if file_wide and any(d.code.startswith(c.upper()) for c in file_wide):
        return True
    if local_line in per_line:
        codes = per_line[local_line]
        return codes is None or any(d.code.startswith(c) for c in codes)
    return False


def _dedent(source: str) -> tuple[str, int]:
    """A method's source from ``inspect.getsource`` is indented; parse it dedented."""
    for line in split_lines(source):
        if line.strip() and not line.lstrip().startswith("#"):
            # only spaces and tabs indent; a form feed resets Python's column count instead
            indent = len(line) - len(line.lstrip(" \t"))
            if indent:
                dedented = textwrap.dedent(source)
                return dedented, indent
            break
    return source, 0


def analyze_source(source: str, path: str = "<string>", *, scope: str = "auto", first_line: int = 1,
                   include_functions=(), imports=None, select=None, ignore=None,
                   module_arrays=(), convert=True, module_state=(), data_lines=(), helpers=None) -> Analysis:
    """Check ``source``; see the package docstring for the contract. ``helpers`` resolves the
    functions a branch calls (``convert.helpers``; default: the module-level defs of ``source``)."""
    try:
        return run_deep(_analyze, source, path, scope=scope, first_line=first_line,
                        include_functions=include_functions, imports=imports, select=select,
                        ignore=ignore, module_arrays=module_arrays, convert=convert,
                        module_state=module_state, data_lines=data_lines, helpers=helpers)
    except (RecursionError, MemoryError) as e:
        # Nesting too deep even with run_deep's room (a 170,000-term sum): CPython's own compiler
        # gives up far earlier (about 5,000 terms at its default limits), so the file cannot run.
        result = Analysis()
        if selected("LP901", select, ignore):
            error = f"nested too deeply for Python to compile ({type(e).__name__})"
            result.diagnostics.append(_diag("LP901", path, first_line, 1, error=error))
        return result


def _analyze(source: str, path: str, *, scope, first_line, include_functions, imports, select,
             ignore, module_arrays=(), convert=True, module_state=(), data_lines=(), helpers=None) -> Analysis:
    if scope not in ("auto", "all"):
        raise ValueError(f"scope must be 'auto' or 'all', not {scope!r}")
    result = Analysis()
    if not source.strip():
        if os.path.basename(path) != "__init__.py" and selected("LP903", select, ignore):
            result.diagnostics.append(_diag("LP903", path, first_line))
        return result
    text, indent = _dedent(source)
    try:
        tree = parse(text, filename=path)
    except SyntaxError as e:
        line = (e.lineno or 1) + first_line - 1
        if selected("LP901", select, ignore):
            result.diagnostics.append(_diag("LP901", path, line, (e.offset or 1) + indent, error=e.msg))
        return result
    except (ValueError, RecursionError, MemoryError) as e:  # null bytes; absurd nesting
        if isinstance(e, RecursionError) and not in_deep():
            raise  # run_deep retries with room
        if selected("LP901", select, ignore):
            result.diagnostics.append(_diag("LP901", path, first_line, 1, error=str(e) or type(e).__name__))
        return result
    if scope == "auto" and not include_functions and "leapp" not in text:
        return result  # nothing can put this file in scope: skip the walk
    lines = split_lines(text)
    module = make_scope(tree.body, None)
    for name, qualname in (imports or {}).items():  # the function's globals, from the compiler
        if name not in module.bound:
            module.bound.add(name)
            module.imports[name] = qualname
    aliases = sorted(n for n, q in module.imports.items() if q == "numpy")
    walker = Walker([r() for r in CHECKS], tree, module, path, text, lines,
                    Positions(lines, first_line - 1, indent),
                    "np" if "np" in aliases else (aliases[0] if aliases else None))
    walker.convert = convert
    walker.data_lines = frozenset(data_lines)  # file lines whose test the runtime saw on traced data
    walker.helpers = helpers if helpers is not None else ModuleResolver(tree, text, path, module.imports, first_line)
    walker.collect_module_arrays()
    for name in module_arrays:  # the function's globals holding arrays, from the compiler
        module.bound.add(name)
        walker.module_arrays.add(name)
    module.bound.update(n for n in module_state if n not in module.imports)  # its containers (LP304)
    marks = trace_comment_lines(lines)
    if scope == "all" or file_is_traced(tree, lines, marks):
        result.in_scope = True
        walker.all_entries = True
        walker.run_region(tree.body, module, set(), in_function=False)
    else:
        result.in_scope = _walk_auto(walker, tree.body, module, "", False, None, lines, marks,
                                     include_functions)
    per_line, file_wide = _noqa(text) if "noqa" in text else ({}, [])
    diags = [d for d in walker.diagnostics if selected(d.code, select, ignore)
             and not _suppressed(d, d.line - first_line + 1, per_line, file_wide)]
    result.diagnostics = sorted(set(diags), key=lambda d: (d.line, d.col, d.code))
    for call in guarded_calls(walker):
        walker.record_guarded(call)
    result.branches = sorted(walker.branches, key=lambda b: (b.line, b.col))
    result.sites = sorted((s for s, _, _ in walker.sites.values()), key=lambda s: (s.line, s.col))
    return result


def _walk_auto(walker, body, scope, prefix, in_class, owner, lines, marks, include) -> bool:
    """Find traced functions and annotated regions; walk each. True if any was found."""
    found = False
    for region in annotate_regions(body, scope, owner):
        walker.run_region(region.stmts, scope, region.inputs, in_function=owner is not None)
        found = True
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + stmt.name
            if (any(is_compile_decorator(d, scope) for d in stmt.decorator_list)
                    or _has_trace_mark(stmt, lines, marks) or function_matches(qualname, include)):
                walker.run_function(stmt, entry=True, is_method=in_class, parent=scope)
                found = True
            else:
                found |= _walk_auto(walker, stmt.body, function_scope(stmt, scope),
                                    qualname + ".<locals>.", False, stmt, lines, marks, include)
        elif isinstance(stmt, ast.ClassDef):
            found |= _walk_auto(walker, stmt.body, scope, prefix + stmt.name + ".", True, owner,
                                lines, marks, include)
        elif isinstance(stmt, _COMPOUND):
            for part in (stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", []),
                         *(h.body for h in getattr(stmt, "handlers", []))):
                found |= _walk_auto(walker, part, scope, prefix, in_class, owner, lines, marks, include)
    return found


def check_bytes(data: bytes, path: str, *, max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                scope: str = "auto", include_functions=(), select=None, ignore=None) -> Analysis:
    """``analyze_source`` for file contents: adds the LP90x input checks, never raises."""
    try:
        if len(data) > max_file_size:
            result = Analysis()
            if selected("LP904", select, ignore):
                result.diagnostics.append(_diag("LP904", path, size=len(data), limit=max_file_size))
            return result
        try:
            source = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            result = Analysis()
            if selected("LP902", select, ignore):
                line = data.count(b"\n", 0, e.start) + 1
                col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
                error = f"invalid byte 0x{data[e.start]:02x} at line {line}"
                result.diagnostics.append(_diag("LP902", path, line, col, error=error))
            return result
        return analyze_source(source, path, scope=scope, include_functions=include_functions,
                              select=select, ignore=ignore)
    except Exception as e:  # a bug in leapp: report it for this file and keep going
        result = Analysis()
        result.diagnostics.append(_diag("LP999", path, error=f"{type(e).__name__}: {e}"))
        return result


def entry_context(source: str, path: str, *, first_line: int = 1, imports=None, helpers=None):
    """``(def, walker)`` for the one function ``source`` holds, the walker standing at the start of
    its body with every parameter taken to be a traced array (``convert.helpers`` proves such a
    function free of side effects with it). Raises SyntaxError or ValueError."""
    text, indent = _dedent(source)
    tree = ast.parse(text, filename=path)
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError("it does not hold one def")
    fn = tree.body[0]
    lines = split_lines(text)
    module = make_scope(tree.body, None)
    for name, qualname in (imports or {}).items():
        if name not in module.bound:
            module.bound.add(name)
            module.imports[name] = qualname
    aliases = sorted(n for n, q in module.imports.items() if q == "numpy")
    walker = Walker([], tree, module, path, text, lines, Positions(lines, first_line - 1, indent),
                    "np" if "np" in aliases else (aliases[0] if aliases else None))
    walker.helpers = helpers
    walker.scope = function_scope(fn, module)
    walker.state.arrays = set(param_names(fn.args))
    walker.functions.append(fn)
    return fn, walker
