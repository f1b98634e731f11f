"""``leapp rewrite``: route every NumPy call in scope through the traced dispatcher.

``np.clip(x, 0.0, 1.0)`` becomes ``_leapp.call("prep.py:12:8", np.clip, x, 0.0,
1.0)``, the array method call ``x.sum(axis=0)`` becomes ``_leapp.method(
"prep.py:13:5", x, "sum", axis=0)`` and a lookup ``TABLE[idx]`` whose index
may be traced becomes ``_leapp.getitem("prep.py:14:5", TABLE, idx)`` (see
``leapp.dispatch``). Which sites to route comes from the analysis (``Site``
positions); LibCST does the edit, so everything else — formatting, comments,
blank lines — is kept byte for byte. ``leapp.compile`` runs exactly this
output. Rewritten calls are ``_leapp.*(...)``, which are not NumPy calls, so
a second rewrite finds nothing to do and adds no second import: rewriting is
idempotent.
"""

from __future__ import annotations

import json

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .analyze import _dedent, analyze_source
from .parsing import parse

IMPORT_LINE = "import leapp.dispatch as _leapp\n"


class _Router(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, targets: dict[tuple[int, int, int, int], tuple[str, str]]):
        super().__init__()
        self.targets = targets
        self.fstring_quotes: list[str] = []  # the quote of each f-string the edit is inside

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self.fstring_quotes.append(node.start[-1])

    def leave_FormattedString(self, original, updated):
        self.fstring_quotes.pop()
        return updated

    def _string(self, text):
        """A string literal that may stand where the edit is: inside an f-string, before Python
        3.12, not in the f-string's own quote (f"{x.max():.3f}" gets '...' strings)."""
        taken = set(self.fstring_quotes)
        for quote in ('"', "'"):
            if quote not in taken and quote not in text and "\\" not in text:
                return cst.SimpleString(f"{quote}{text}{quote}")
        if not taken:
            return cst.SimpleString(json.dumps(text))
        return None  # inside f-strings of both quotes: left as written (still traced, with no site)

    def _target(self, original):
        pos = self.get_metadata(PositionProvider, original)
        return self.targets.get((pos.start.line, pos.start.column, pos.end.line, pos.end.column))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        target = self._target(original)
        if target is None:
            return updated
        where, kind = target
        site = self._string(where)
        name = self._string(updated.func.attr.value) if isinstance(updated.func, cst.Attribute) else None
        method = kind in ("method", "array_method")
        if site is None or (method and name is None):
            return updated
        spaces = None
        if method and isinstance(updated.func, cst.Attribute):
            # x.sum(axis=0) -> _leapp.method("site", x, "sum", axis=0); a line break around the
            # dot (a chain written over several lines) moves to the commas, so lines stay put
            dot = updated.func.dot
            head = [updated.func.value, name]
            spaces = [None, dot.whitespace_before, dot.whitespace_after]
            dispatcher = kind  # array_method: the runtime checks the receiver is NumPy's
        elif kind in ("function", "foreign"):
            head, dispatcher = [updated.func], "call" if kind == "function" else "foreign"
        else:
            return updated
        return updated.with_changes(
            func=cst.Attribute(cst.Name("_leapp"), cst.Name(dispatcher)),
            args=_args([site, *head], updated.args, spaces),
            whitespace_after_func=cst.SimpleWhitespace(""),
        )

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        target = self._target(original)
        if target is None or target[1] != "subscript":
            return updated
        site = self._string(target[0])
        if site is None:
            return updated
        # TABLE[i, :] -> _leapp.getitem("site", TABLE, (i, slice(None, None, None)))
        items = [_index_value(e.slice) for e in updated.slice]
        if len(items) == 1 and updated.slice[0].comma is cst.MaybeSentinel.DEFAULT:
            index = items[0]
        else:  # the elements keep their commas, and with them any line breaks between them
            index = cst.Tuple([cst.Element(v, comma=e.comma) for v, e in zip(items, updated.slice, strict=True)])
        call = cst.Call(cst.Attribute(cst.Name("_leapp"), cst.Name("getitem")),
                        _args([site, updated.value, index], [],
                              [None, None, updated.lbracket.whitespace_after]),
                        lpar=updated.lpar, rpar=updated.rpar)
        return call.with_changes(whitespace_before_args=cst.SimpleWhitespace(""))


def _args(head, rest, spaces=None) -> list:
    """Arguments ``head`` then ``rest``; ``spaces[i]``, if it breaks the line, follows argument i-1."""
    out = []
    for i, value in enumerate(head):
        after = spaces[i + 1] if spaces and i + 1 < len(spaces) else None
        if not isinstance(after, cst.ParenthesizedWhitespace):
            after = cst.SimpleWhitespace(" ")
        out.append(cst.Arg(value, comma=cst.Comma(whitespace_after=after)))
    if not rest:
        last = out[-1]
        out[-1] = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return [*out, *rest]


def _index_value(item) -> cst.BaseExpression:
    if isinstance(item, cst.Index):
        return item.value
    none = cst.Name("None")
    return cst.Call(cst.Name("slice"), _args([item.lower or none, item.upper or none, item.step or none], []))


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
        is_future = isinstance(small, cst.ImportFrom) and small.module is not None and \
            cst.helpers.get_full_name_for_node(small.module) == "__future__"
        if not (is_doc or is_future):
            break
        at = i + 1
    body.insert(at, cst.parse_statement(IMPORT_LINE))
    return module.with_changes(body=body)


def _drop_form_feeds(text: str) -> tuple[str, dict[int, int]]:
    """``text`` without the form feeds that start lines outside strings, and how many each line lost.

    Python ignores a form feed at the start of a line; LibCST does not keep it and misplaces
    every position after it, so the rewrite would miss calls. The rewritten file goes without them.
    """
    if "\f" not in text:
        return text, {}
    import ast
    import io

    lines = io.StringIO(text, newline="").readlines()  # str.splitlines would split at \f too
    in_string: set[int] = set()
    for node in ast.walk(parse(text)):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno is not None \
                and node.end_lineno != node.lineno:
            in_string.update(range(node.lineno + 1, node.end_lineno + 1))
    dropped = {}
    for i, line in enumerate(lines, start=1):
        if line.startswith("\f") and i not in in_string:
            stripped = line.lstrip("\f")
            dropped[i] = len(line) - len(stripped)
            lines[i - 1] = stripped
    return "".join(lines), dropped


def rewrite_source(source: str, path: str = "<string>", *, scope: str = "auto", first_line: int = 1,
                   include_functions=(), imports=None, module_arrays=(), convert=True, helpers=None,
                   data_lines=()) -> str:
    text, indent = _dedent(source)
    analysis = analyze_source(text, path, scope=scope, include_functions=include_functions,
                              imports=imports, module_arrays=module_arrays, convert=convert, helpers=helpers,
                              data_lines={line - first_line + 1 for line in data_lines})  # (file lines)
    if any(d.code == "LP901" for d in analysis.diagnostics):
        d = next(d for d in analysis.diagnostics if d.code == "LP901")
        raise SyntaxError(f"{path}:{d.line}:{d.col}: {d.message}")
    text, dropped = _drop_form_feeds(text)
    targets = {}
    for site in analysis.sites:
        where = f"{path}:{site.line + first_line - 1}:{site.col + indent}"
        # LibCST columns are 0-based
        key = (site.line, site.col - 1 - dropped.get(site.line, 0), site.end_line,
               site.end_col - 1 - dropped.get(site.end_line, 0))
        targets[key] = (where, site.kind)
    converts = any(b.converted for b in analysis.branches)
    if not targets and not converts:
        return text
    module = cst.parse_module(text)
    if targets:
        module = MetadataWrapper(module).visit(_Router(targets))
    if module.code.count("\n") != text.count("\n"):
        # every recorded location and traceback names the user's lines: they must not move
        raise RuntimeError(f"{path}: leapp rewrite moved lines (a leapp bug, please report it)")
    if converts:
        from .convert.apply import apply, own_lines

        code, _ = apply(module.code, analysis.branches, path=path, first_line=first_line, indent=indent)
        if own_lines(code) != len(module.code.splitlines()):
            raise RuntimeError(f"{path}: converting branches moved lines (a leapp bug, please report it)")
        module = cst.parse_module(code)
    if not _has_dispatch_import(module):
        module = _insert_import(module)
    return module.code
