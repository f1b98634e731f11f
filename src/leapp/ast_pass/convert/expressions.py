"""Conditional expressions, and `and`/`or`/`not` and comparison chains inside converted tests.

``a if t else b`` becomes ``_leapp.ifexp("site", t, lambda: a, lambda: b)``: the
sides stay lazy, so an untraced test evaluates one side only, as Python does.
In a test, ``p and q`` becomes ``_leapp.and_("site", lambda: p, lambda: q)``,
``not p`` becomes ``_leapp.not_("site", p)`` and ``lo < x < hi`` becomes
``_leapp.chain("site", lambda: lo, "<", lambda: x, "<", lambda: hi)`` (each
operand computed once, as Python does). Line breaks inside the expression are kept, so no
line moves.
"""

from __future__ import annotations

import libcst as cst


def _leapp(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("_leapp"), cst.Name(name))


def _string(site: str) -> cst.SimpleString:
    return cst.SimpleString(repr(site))


def _thunk(expr: cst.BaseExpression) -> cst.Lambda:
    return cst.Lambda(params=cst.Parameters(), body=expr)


def _call(name, args, lpar=(), rpar=()) -> cst.Call:
    return cst.Call(_leapp(name), [cst.Arg(a) for a in args], lpar=list(lpar), rpar=list(rpar))


_OPERATORS = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
              cst.Equal: "==", cst.NotEqual: "!="}


def convert_test(expr: cst.BaseExpression, site: str) -> cst.BaseExpression:
    """The test with every `and`/`or`/`not` and comparison chain routed through the dispatcher."""
    if isinstance(expr, cst.BooleanOperation):
        op = "and_" if isinstance(expr.operator, cst.And) else "or_"
        operands = _flatten(expr, type(expr.operator))
        return _call(op, [_string(site), *(_thunk(convert_test(v, site)) for v in operands)],
                     expr.lpar, expr.rpar)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return _call("not_", [_string(site), convert_test(expr.expression, site)], expr.lpar, expr.rpar)
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) > 1:
        parts: list[cst.BaseExpression] = [_thunk(expr.left)]
        for target in expr.comparisons:
            parts += [cst.SimpleString(repr(_OPERATORS[type(target.operator)])), _thunk(target.comparator)]
        return _call("chain", [_string(site), *parts], expr.lpar, expr.rpar)
    return expr


def _flatten(expr, op_type) -> list:
    """``a and b and c`` (LibCST nests it) as [a, b, c]; parenthesized groups stay whole."""
    out = []
    for side in (expr.left, expr.right):
        if isinstance(side, cst.BooleanOperation) and isinstance(side.operator, op_type) and not side.lpar:
            out += _flatten(side, op_type)
        else:
            out.append(side)
    return out


def convert_ifexp(node: cst.IfExp, site: str) -> cst.Call:
    """``_leapp.ifexp(site, test, lambda: body, lambda: orelse)``, keeping the expression's line breaks."""
    breaks = [w for w in (node.whitespace_before_if, node.whitespace_after_if, node.whitespace_before_else,
                          node.whitespace_after_else) if isinstance(w, cst.ParenthesizedWhitespace)]
    spaces = [*breaks, *[cst.SimpleWhitespace(" ")] * (4 - len(breaks))]
    test = convert_test(node.test, site)
    args = [cst.Arg(_string(site), comma=cst.Comma(whitespace_after=spaces[0])),
            cst.Arg(test, comma=cst.Comma(whitespace_after=spaces[1])),
            cst.Arg(_thunk(node.body), comma=cst.Comma(whitespace_after=spaces[2])),
            cst.Arg(cst.Lambda(params=cst.Parameters(), body=node.orelse,
                               colon=cst.Colon(whitespace_after=spaces[3])))]
    return cst.Call(_leapp("ifexp"), args, lpar=node.lpar, rpar=node.rpar)
