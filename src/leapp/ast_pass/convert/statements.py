"""``if``/``elif``/``else`` and early ``return`` on data, as local functions and a dispatcher call.

::

    if m > 0:                   def __leapp_if6_0(x):
        y = x * 2                   y = x * 2
                                    return (y,)  # leapp: converted, line 6
    else:                       def __leapp_if6_1(x):
        y = -x                      y = -x
                                    return (y,)  # leapp: converted, line 6
                                (y,) = _leapp.if_('f.py:6:5', m > 0, __leapp_if6_0, __leapp_if6_1, (x,))  # ...

Each branch body keeps its lines and columns: the ``if``/``elif``/``else`` line
becomes the ``def`` line, and the body is already indented one level deeper.
The lines a conversion adds end with ``MARKER`` and the user's line, so the
compiler gives their code that line and every other line keeps its number.
An ``elif`` is the false branch of the ``if`` before it, as a lambda that runs
the next ``_leapp.if_``. An early return, ``if t: ...; return a`` at the top of a
function body, becomes ``_leapp.early(...)`` and every later ``return v`` in the
function ``return _leapp.merge((<pending>,), v)``.
"""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from ..parsing import parse
from .expressions import convert_test
from .plan import MARKER


def _lambda(params) -> str:
    return f"lambda {', '.join(params)}: " if params else "lambda: "


def _tuple(names) -> str:
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _one_line(expr: cst.BaseExpression) -> str:
    text = cst.Module([]).code_for_node(expr)
    if "\n" in text or "\r" in text:  # a test over several lines: the added call must take one
        text = ast.unparse(parse(text.strip(), mode="eval"))
    return text


def _stmt(text: str, line: int) -> cst.BaseStatement:
    return cst.parse_statement(f"{text}  {MARKER}{line}\n")


def _with_return(body, names, line):
    """The branch body with ``return (names,)`` after its last statement."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.with_changes(body=[*body.body, cst.Return(cst.parse_expression(_tuple(names)))])
    return body.with_changes(body=[*body.body, _stmt(f"return {_tuple(names)}", line)])


def _with_copies(body, names, site, line):
    """The branch body with ``q = _leapp.private(site, q)`` first for each name it writes into in
    place: it writes on its own copy, which flows out through the select (``convert.owned``)."""
    if not names:
        return body
    texts = [f"{n} = _leapp.private({site!r}, {n})" for n in names]
    if isinstance(body, cst.SimpleStatementSuite):
        return body.with_changes(body=[*(cast(cst.SimpleStatementLine, cst.parse_statement(t)).body[0] for t in texts), *body.body])
    return body.with_changes(body=[*(_stmt(t, line) for t in texts), *body.body])


def _def(name, params, body, leading_lines) -> cst.FunctionDef:
    return cst.FunctionDef(name=cst.Name(name), params=cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
                           body=body, leading_lines=leading_lines)


def convert_if(node: cst.If, branch, sites: list[str]) -> cst.FlattenSentinel:
    """``branch`` (construct "if" or "return") applied to ``node``; ``sites[i]`` is arm i's site."""
    arms, cur = [], node
    while True:
        arms.append(cur)
        if isinstance(cur.orelse, cst.If):
            cur = cur.orelse
            continue
        orelse = cur.orelse  # an Else, or None
        break
    values = branch.construct == "if"
    if values and branch.nested:
        return _convert_returning_if(node, branch, sites, arms, orelse)
    params, outputs = branch.params, branch.outputs
    stem = f"__leapp_if{branch.line}_"
    defs, names = [], []
    copies = branch.copies or ((),) * (len(arms) + (orelse is not None))
    for i, arm in enumerate(arms):
        body = _with_return(arm.body, outputs, branch.line) if values else arm.body
        body = _with_copies(body, copies[i], sites[i], branch.line)
        defs.append(_def(f"{stem}{i}", params, body, arm.leading_lines))
        names.append(f"{stem}{i}")
    if orelse is not None:
        body = _with_return(orelse.body, outputs, branch.line) if values else orelse.body
        body = _with_copies(body, copies[len(arms)], sites[0], branch.line)
        defs.append(_def(f"{stem}{len(arms)}", params, body, orelse.leading_lines))
        false = f"{stem}{len(arms)}"
    else:
        false = f"{_lambda(params)}{_tuple(outputs)}"
    for i in range(len(arms) - 1, 0, -1):
        test = _one_line(convert_test(arms[i].test, sites[i]))
        false = (f"{_lambda(params)}_leapp.if_({sites[i]!r}, {test}, {names[i]}, {false}, "
                 f"{_tuple(params)})")
    test = _one_line(convert_test(arms[0].test, sites[0]))
    call = f"_leapp.if_({sites[0]!r}, {test}, {names[0]}, {false}, {_tuple(params)})"
    if values:
        call = f"{_tuple(outputs)} = {call}" if outputs else call
    else:
        call = f"return {call}"
    return cst.FlattenSentinel([*defs, _stmt(call, branch.line)])


def pending_name(branch) -> str:
    return f"__leapp_ret{branch.line}"


def _exits(body, pending: dict, outputs, line):
    """An arm body holding early returns (already converted to ``_leapp.early`` calls, found in
    ``pending`` by identity): every ``return v`` after one becomes ``return _leapp.exit(held, v)``
    (the arm's function hands the function's return value on), and the arm ends in
    ``return _leapp.arm(held, (outputs,))``: the names it hands on and the early returns it holds."""
    held: list[str] = []
    out = []
    for stmt in body.body:
        name = pending.get(id(stmt))
        # every return, also one before any held early return (under an `if` Python decides, which the
        # plan did not see: runtime.branches.if_returns refuses it on a traced test), is the function's
        stmt = cast(cst.BaseStatement, stmt.visit(_MergeReturns(list(held), "exit")))
        if name is not None:
            held.append(name)
        out.append(stmt)
    out.append(_stmt(f"return _leapp.arm({_tuple(held)}, {_tuple(outputs)})", line))
    return body.with_changes(body=out)


def _convert_returning_if(node, branch, sites, arms, orelse) -> cst.FlattenSentinel:
    """An `if`/`elif`/`else` whose arms hold early returns: ``_leapp.if_returns`` selects the names
    the arms hand on and holds their early returns (each under its arm's path) for the function's
    later ``return``s, as an early return at the top of the function is held."""
    params, outputs, pending = branch.params, branch.outputs, branch.pending
    stem = f"__leapp_if{branch.line}_"
    copies = branch.copies or ((),) * (len(arms) + 1)
    defs, names = [], []
    blocks = [*(a.body for a in arms), *([orelse.body] if orelse is not None else [])]
    leading = [*(a.leading_lines for a in arms), *([orelse.leading_lines] if orelse is not None else [])]
    for i, block in enumerate(blocks):
        if isinstance(block, cst.SimpleStatementSuite):
            block = _with_return(block, outputs, branch.line)
        else:
            block = _exits(block, pending, outputs, branch.line)
        block = _with_copies(block, copies[i], sites[i] if i < len(arms) else sites[0],
                             branch.line)
        defs.append(_def(f"{stem}{i}", params, block, leading[i]))
        names.append(f"{stem}{i}")
    false = names[len(arms)] if orelse is not None else f"{_lambda(params)}{_tuple(outputs)}"
    for i in range(len(arms) - 1, 0, -1):
        test = _one_line(convert_test(arms[i].test, sites[i]))
        false = (f"{_lambda(params)}_leapp.if_returns({sites[i]!r}, {test}, {names[i]}, {false}, "
                 f"{_tuple(params)})")
    test = _one_line(convert_test(arms[0].test, sites[0]))
    held = pending_name(branch)
    calls = [_stmt(f"{held} = _leapp.if_returns({sites[0]!r}, {test}, {names[0]}, {false}, {_tuple(params)})",
                   branch.line),
             _stmt(f"if {held}.taken: return {held}.value", branch.line)]
    if outputs:
        calls.append(_stmt(f"{_tuple(outputs)} = {held}.outputs", branch.line))
    calls += [_stmt(f"{n} = _leapp.private({sites[0]!r}, {n})", branch.line) for n in branch.after]
    return cst.FlattenSentinel([*defs, *calls])


def held_name(local) -> str:
    """The list of early returns held in the loop or `with` block at ``local`` (``plan._plan_held``)."""
    return f"__leapp_held{local[0]}_{local[1]}"


def convert_holder(node, local, line, copies=(), site="") -> cst.FlattenSentinel:
    """The loop or `with` block ``node`` (at ``local``) holding early returns: its list made before
    it, every ``return`` inside it merging that list (as far as it has grown when it runs), and after
    it the private copies of the arrays the code after it writes into (``copies``; a held value
    may be one of them)."""
    name = held_name(local)
    return cst.FlattenSentinel([_stmt(f"{name} = []", line), node.visit(_MergeReturns([name])),
                                *(_stmt(f"{n} = _leapp.private({site!r}, {n})", line) for n in copies)])


def pending_names(branch) -> list[str]:
    """The names the early returns of ``branch`` are held in, in order (one per returning arm)."""
    first = pending_name(branch)
    return [first, *(f"{first}_{i}" for i in range(1, branch.early))]


def convert_early(node: cst.If, branch, sites: list[str]) -> cst.FlattenSentinel:
    """``branch`` (construct "early") applied to ``node``: each returning arm a local function on
    its own lines and an ``_leapp.early`` call; the arm that does not return (``branch.tail``) a local
    function called after them, handing on ``branch.outputs``. ``sites[i]`` is arm i's site."""
    arms: list[cst.If] = []
    cur: cst.If | cst.Else | None = node
    while isinstance(cur, cst.If):
        arms.append(cur)
        cur = cur.orelse
    orelse = cur  # an Else, or None
    if branch.tail == "chain":
        return _convert_chain(branch, sites, arms, orelse)
    stem = f"__leapp_if{branch.line}_"
    lines = [int(site.rsplit(":", 2)[1]) for site in sites]
    copies = branch.copies or ((),) * (branch.early + 1)
    held = pending_names(branch)
    defs, calls = [], []
    if branch.tail == "if":  # `if c: B` / `else: return z`: `if not c: return z`, then B
        assert orelse is not None and len(arms) == 1
        tail = _def(f"{stem}0", branch.tail_params, _with_return(node.body, branch.outputs, lines[0]),
                    node.leading_lines)
        early = _def(f"{stem}1", branch.params, _with_copies(orelse.body, copies[0], sites[0], lines[0]),
                     orelse.leading_lines)
        defs = [tail, early]
        negated = convert_test(cst.UnaryOperation(cst.Not(), node.test.with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])), sites[0])
        tests, names, tail_name = [_one_line(negated)], [f"{stem}1"], f"{stem}0"
    else:
        for i, arm in enumerate(arms):
            defs.append(_def(f"{stem}{i}", branch.params, _with_copies(arm.body, copies[i], sites[i], lines[0]),
                             arm.leading_lines))
        tests = [_one_line(convert_test(arm.test, site)) for arm, site in zip(arms, sites, strict=True)]
        names = [f"{stem}{i}" for i in range(len(arms))]
        tail_name = f"{stem}{len(arms)}"
        if orelse is not None:
            defs.append(_def(tail_name, branch.tail_params, _with_return(orelse.body, branch.outputs, lines[0]),
                             orelse.leading_lines))
    for name, test, site, line, pending in zip(names, tests, sites, lines, held, strict=True):
        how = "arm_early" if branch.inner else "early"  # inside an arm: held under the arm's path
        calls.append(_stmt(f"{pending} = _leapp.{how}({site!r}, {test}, {name}, {_tuple(branch.params)})", line))
        if branch.held:  # in a loop or a `with`: held in its list (every return there merges it)
            calls.append(_stmt(f"{held_name(branch.held)}.append({pending})", line))
        calls.append(_stmt(f"if {pending}.taken: return {pending}.value", line))
    if not branch.held:  # in a loop or a `with`: made once it has run (convert_holder)
        calls += [_stmt(f"{n} = _leapp.private({sites[0]!r}, {n})", lines[0]) for n in copies[-1]]
    if branch.tail:
        call = f"{tail_name}({', '.join(branch.tail_params)})"
        calls.append(_stmt(f"{_tuple(branch.outputs)} = {call}" if branch.outputs else call, lines[0]))
    return cst.FlattenSentinel([*defs, *calls])


def _convert_chain(branch, sites, arms, orelse) -> cst.FlattenSentinel:
    """``branch`` (construct "early", tail "chain"): an `if`/`elif` chain whose returning arms do
    not all come first (``plan._plan_mixed``). The tests of the arms that do not return, which the
    early returns after them negate, are computed once first (``__leapp_t<line>_<i>``); then each
    returning arm is an ``_leapp.early`` under ``not`` those tests and its own; then the other arms
    run as a select (``_leapp.if_``), or as the one arm left. ``sites``: each `if`/`elif`, then the
    `else`'s."""
    n = len(arms)
    blocks = [*(a.body for a in arms), *([orelse.body] if orelse is not None else [])]
    leading = [*(a.leading_lines for a in arms), *([orelse.leading_lines] if orelse is not None else [])]
    lines = [int(site.rsplit(":", 2)[1]) for site in sites]
    returning = [i for i, r in enumerate(branch.returning) if r]
    others = [i for i, r in enumerate(branch.returning) if not r]
    copies = list(branch.copies) if branch.copies else [()] * (len(blocks) + 1)
    stem = f"__leapp_if{branch.line}_"
    defs, calls = [], []
    tests = {i: _one_line(convert_test(arms[i].test, sites[i])) for i in range(n)}
    negated = {i for i in others if i < n and any(r > i for r in returning)}
    for i in sorted(negated):  # read again after the early returns: computed once, here
        temp = f"__leapp_t{branch.line}_{i}"
        calls.append(_stmt(f"{temp} = {tests[i]}", lines[i]))
        tests[i] = temp
    for i, block in enumerate(blocks):  # in the source's order: each keeps its lines
        if i in returning:
            body = _with_copies(block, copies[returning.index(i)], sites[i], lines[i])
            defs.append(_def(f"{stem}{i}", branch.params, body, leading[i]))
        else:
            body = _with_copies(_with_return(block, branch.outputs, lines[i]),
                                copies[len(returning) + others.index(i)], sites[i], lines[i])
            defs.append(_def(f"{stem}{i}", branch.tail_params, body, leading[i]))
    for i, pending in zip(returning, pending_names(branch), strict=True):
        parts = [f"_leapp.not_({sites[j]!r}, {tests[j]})" for j in others if j < i and j < n]
        if i < n:
            parts.append(tests[i])
        test = parts[0] if len(parts) == 1 else f"_leapp.and_({sites[i]!r}, {', '.join('lambda: ' + p for p in parts)})"
        args = _tuple(branch.params)
        calls.append(_stmt(f"{pending} = _leapp.early({sites[i]!r}, {test}, {stem}{i}, {args})", lines[i]))
        calls.append(_stmt(f"if {pending}.taken: return {pending}.value", lines[i]))
    # the arms that do not return, as a select; with an `else` (returning or not), the last is its `else`
    chain = [(None if orelse is not None and k == len(others) - 1 else i) for k, i in enumerate(others)]
    params = branch.tail_params
    if chain[-1] is None:
        false = f"{stem}{others[-1]}"
    else:
        false = f"{_lambda(params)}{_tuple(branch.outputs)}"
    for k in range(len(chain) - 1, -1, -1):
        arm = chain[k]
        if arm is None:
            continue
        call = f"_leapp.if_({sites[arm]!r}, {tests[arm]}, {stem}{arm}, {false}, {_tuple(params)})"
        false = f"{_lambda(params)}{call}" if k else call
    if chain[0] is None:  # one arm left, the `else`: it runs after the early returns as it is
        false = f"{false}({', '.join(params)})"
    call = f"{_tuple(branch.outputs)} = {false}" if branch.outputs else false
    calls.append(_stmt(call, lines[others[0]] if others[0] < n else lines[0]))
    calls += [_stmt(f"{name} = _leapp.private({sites[0]!r}, {name})", lines[0]) for name in copies[-1]]
    return cst.FlattenSentinel([*defs, *calls])


class _MergeReturns(cst.CSTTransformer):
    """Every ``return v`` of one function body (not of defs inside it) as ``_leapp.merge(...)``."""

    def __init__(self, held: list[str], how: str = "merge"):
        super().__init__()
        self.held, self.how = held, how

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_Return(self, original, updated):
        value = updated.value if updated.value is not None else cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:  # `return a, b`: one argument, not two
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        merged = cast(cst.Call, cst.parse_expression(f"_leapp.{self.how}({_tuple(self.held)}, None)"))
        return updated.with_changes(value=merged.with_changes(
            args=[merged.args[0], cst.Arg(value)]),
            whitespace_after_return=cst.SimpleWhitespace(" "))


def merge_returns(block: cst.IndentedBlock, pending: dict) -> cst.IndentedBlock:
    """``block`` (a function's body, or an arm of an `if` Python decides whose rest ends in a
    `return`) with the returns after each early-return site merged; ``pending`` maps the inserted
    ``_leapp.early`` statements (by identity) to their pending names. A return in a block inside
    it that holds early returns of its own was merged there first: this merge wraps it, so the
    first early return in the source wins."""
    held: list[str] = []
    out = []
    for stmt in block.body:
        name = pending.get(id(stmt))
        if held:
            stmt = cast(cst.BaseStatement, stmt.visit(_MergeReturns(list(held))))
        if name is not None:
            held.append(name)
        out.append(stmt)
    return block.with_changes(body=out)
