"""``leapp rewrite``: route every NumPy call in scope through the traced dispatcher.

``np.clip(x, 0.0, 1.0)`` becomes ``_leapp.call("prep.py:12:8", np.clip, x, 0.0,
1.0)`` (see ``leapp.dispatch``). Which calls to route comes from the analysis
(``Site`` positions); LibCST does the edit, so everything else — formatting,
comments, blank lines — is kept byte for byte. Rewritten calls are
``_leapp.call(...)``, which is not a NumPy call, so a second rewrite finds
nothing to do and adds no second import: rewriting is idempotent.
"""

from __future__ import annotations

import json

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .analyze import _dedent, analyze_source

IMPORT_LINE = "import leapp.dispatch as _leapp\n"


class _Router(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: dict[tuple[int, int, int, int], str]):
        super().__init__()
        self.targets = targets

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        pos = self.get_metadata(PositionProvider, original)
        site = self.targets.get((pos.start.line, pos.start.column, pos.end.line, pos.end.column))
        if site is None:
            return updated
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        head = [cst.Arg(cst.SimpleString(json.dumps(site)), comma=comma),
                cst.Arg(updated.func, comma=comma if updated.args else cst.MaybeSentinel.DEFAULT)]
        return updated.with_changes(
            func=cst.Attribute(cst.Name("_leapp"), cst.Name("call")),
            args=[*head, *updated.args],
            whitespace_after_func=cst.SimpleWhitespace(""),
        )


def _has_dispatch_import(module: cst.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if (cst.helpers.get_full_name_for_node(alias.name) == "leapp.dispatch"
                                and alias.asname is not None
                                and cst.helpers.get_full_name_for_node(alias.asname.name) == "_leapp"):
                            return True
    return False


def _insert_import(module: cst.Module) -> cst.Module:
    """After the docstring and ``from __future__`` imports, which must come first."""
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            break
        small = stmt.body[0]
        is_doc = i == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
        is_future = isinstance(small, cst.ImportFrom) and cst.helpers.get_full_name_for_node(
            small.module) == "__future__"
        if not (is_doc or is_future):
            break
        at = i + 1
    body.insert(at, cst.parse_statement(IMPORT_LINE))
    return module.with_changes(body=body)


def rewrite_source(source: str, path: str = "<string>", *, scope: str = "auto", first_line: int = 1,
                   include_functions=(), imports=None) -> str:
    text, indent = _dedent(source)
    analysis = analyze_source(text, path, scope=scope, include_functions=include_functions,
                              imports=imports)
    if any(d.code == "LP901" for d in analysis.diagnostics):
        d = next(d for d in analysis.diagnostics if d.code == "LP901")
        raise SyntaxError(f"{path}:{d.line}:{d.col}: {d.message}")
    targets = {}
    for site in analysis.sites:
        if site.kind == "function":
            where = f"{path}:{site.line + first_line - 1}:{site.col + indent}"
            # LibCST columns are 0-based
            targets[(site.line, site.col - 1, site.end_line, site.end_col - 1)] = where
    if not targets:
        return text
    module = MetadataWrapper(cst.parse_module(text)).visit(_Router(targets))
    if not _has_dispatch_import(module):
        module = _insert_import(module)
    return module.code
