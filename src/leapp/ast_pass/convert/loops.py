"""A ``while`` on data with a static bound, as a bounded masked loop (the static half).

A ``while`` whose test is traced has no single graph: the number of iterations
depends on the data. Given a bound, ``# leapp: max-iterations=N`` on the
``while`` line (or ``while leapp.bounded(test, N):``), it becomes N unrolled
iterations with the exit condition as a mask::

    while np.abs(x).max() > 1.0:  # leapp: max-iterations=8      def __leapp_while4(x):
        x = x / 2.0                                                  x = x / 2.0
                                                                     return (x,)  # leapp: converted, line 4
                                     (x,) = _leapp.while_('f.py:4:5', 8, lambda x: np.abs(x).max() > 1.0,
                                                          __leapp_while4, (x,))  # leapp: converted, line 4

Each iteration runs the body on the values carried so far and keeps its
results only where the loop was still running (``leapp.runtime.loops``), so
the body must have the properties of a select's branch: free of side effects
and unable to raise on the values of an iteration that already stopped. The
values carried are the names the body assigns that exist before the loop; a
name the body assigns first and that the test or the code after the loop reads
is refused (it has no value when the loop runs zero times).
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from . import paths
from .plan import (
    MARKER,
    Branch,
    _BoolTest,
    _Checker,
    _facts,
    _Refused,
    _stored,
    holds_marker,
)

BOUND = re.compile(r"#\s*leapp:\s*max-iterations\s*=\s*([^\s;,]*)")  # `=4; why` and `=4, why` end at the 4
MAX_BOUND = 1024  # each iteration is unrolled into the graph: a larger bound is refused
BOUNDED = "leapp.bounded"  # `while leapp.bounded(test, N):`, the keyword form


class _LoopChecker(_Checker):
    """A loop body: an in-place update would write into the values kept for a stopped iteration."""

    def stmt(self, s, *, returns, loops):
        if isinstance(s, ast.AugAssign):
            t = ast.unparse(s.target)
            self.refuse(s, f"updates `{t}` in place, which would also change the value kept where the "
                           f"loop has already stopped (write `{t} = {t} {_op(s.op)} ...`)")
        super().stmt(s, returns=returns, loops=loops)


def _op(op) -> str:
    from .plan import _OPS

    return _OPS.get(type(op), "?")


def bounded_call(test, ctx):
    """The ``leapp.bounded(test, N)`` call that is a ``while`` test, or None."""
    if isinstance(test, ast.Call) and ctx.call_name(test) == BOUNDED:
        return test
    return None


def loop_test(node: ast.While, ctx):
    """The test leapp converts: the first argument of ``leapp.bounded``, or the test itself."""
    call = bounded_call(node.test, ctx)
    if call is not None and call.args:
        return call.args[0]
    return node.test


def _bound(node: ast.While, ctx) -> int:
    """The static bound, from ``leapp.bounded(test, N)`` or the comment on the header lines."""
    call = bounded_call(node.test, ctx)
    if call is not None:
        if len(call.args) != 2 or call.keywords or not isinstance(call.args[1], ast.Constant):
            raise _Refused("`leapp.bounded` takes the test and a whole number: `leapp.bounded(test, 8)`")
        return _check_bound(call.args[1].value, repr(call.args[1].value))
    last = node.body[0].lineno - 1 if node.body else node.lineno
    for lineno in range(node.lineno, max(node.lineno, last) + 1):
        text = ctx.lines[lineno - 1] if 0 < lineno <= len(ctx.lines) else ""
        m = BOUND.search(text)
        if m is not None:
            return _check_bound(m.group(1), m.group(1))
    raise _Refused("it has no static bound on its number of iterations; add `# leapp: max-iterations=N` "
                   "on the `while` line (or write `while leapp.bounded(test, N):`) and leapp converts it to "
                   "N masked iterations")


def _check_bound(value, text) -> int:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())):
        raise _Refused(f"its bound `{text}` is not a whole number")
    n = int(value)
    if not 1 <= n <= MAX_BOUND:
        raise _Refused(f"its bound {n} is outside 1..{MAX_BOUND} (each iteration is unrolled into the graph)")
    return n


def plan_while(node: ast.While, ctx) -> Branch:
    line, col = ctx.positions.start(node)
    local = (node.lineno, node.col_offset)
    try:
        bound, params = _plan_while(node, ctx)
    except _Refused as exc:
        return Branch("while", line, col, local, "refused", str(exc))
    return Branch("while", line, col, local, "loop", "", params, params, bound)


def _plan_while(node, ctx):
    if not ctx.convert:
        raise _Refused("conversion is off (convert_control_flow=False)")
    if not ctx.functions:
        raise _Refused("it is outside a function")
    if holds_marker(ctx.source):
        raise _Refused(f"a line of the source already ends with leapp's marker `{MARKER.strip()} N`")
    bound = _bound(node, ctx)
    if node.orelse:
        raise _Refused("it has an `else:` block")
    test = loop_test(node, ctx)
    _BoolTest(ctx).check(test)
    _Checker(ctx, "the `while` test").expr(test)  # it also runs after the loop has stopped
    # an iteration that stopped runs on the values it kept: its solvers and indices run guarded
    _LoopChecker(ctx, "the loop body", guarded=True).block(node.body, returns="none")
    fn = ctx.functions[-1]
    facts = _facts(fn)
    assigned = _stored(node.body)
    for name in sorted(assigned & facts.declared):
        raise _Refused(f"the loop body assigns `{name}`, declared global or nonlocal")
    in_test = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    in_body = set().union(*(paths.loads(s) for s in node.body))
    # an iteration that may leave a name as it was and reads it (an inner converted `if` selects
    # between its new value and the old one, as paths.live_after judges inside a loop) carries it
    inner_ifs = [s for s in ast.walk(ast.Module(body=list(node.body), type_ignores=[])) if isinstance(s, ast.If)]
    carried = {n for n in assigned
               if n in in_test or paths.live_after(facts, n, node)
               or (got := paths.reads_first(node.body, n)) == "read"
               or (got == "open" and n in in_body and any(n in _stored([s]) and paths.live_after(facts, n, s)
                                                          for s in inner_ifs))}
    defined = paths.definitely_before(facts, node)
    for name in sorted(carried - defined):
        at = min(p for p in facts.stores[name] if _inside_node(p, node))[0] + ctx.positions.line_offset
        raise _Refused(f"`{name}` is assigned in the loop body and not before the `while` on every path, so "
                       f"it has no value when the loop stops at once (assign it before the `while`) (line {at})")
    return bound, tuple(sorted(carried))


def _inside_node(pos, node) -> bool:
    return (node.lineno, node.col_offset) <= pos <= (node.end_lineno, node.end_col_offset)


# --- the conversion (LibCST) ------------------------------------------------------


def convert_while(node: cst.While, branch, site: str) -> cst.FlattenSentinel:
    from .expressions import convert_test
    from .statements import _def, _lambda, _one_line, _stmt, _tuple, _with_return

    test = node.test
    if isinstance(test, cst.Call) and _is_bounded(test):
        test = test.args[0].value
    names = branch.params
    name = f"__leapp_while{branch.line}"
    body = _with_return(node.body, names, branch.line)
    cond = _one_line(convert_test(test, site))
    call = (f"_leapp.while_({site!r}, {branch.bound}, {_lambda(names)}{cond}, {name}, {_tuple(names)})")
    if names:
        call = f"{_tuple(names)} = {call}"
    return cst.FlattenSentinel([_def(name, names, body, node.leading_lines), _stmt(call, branch.line)])


def _is_bounded(call: cst.Call) -> bool:
    f = call.func
    return isinstance(f, cst.Attribute) and f.attr.value == "bounded" and len(call.args) == 2
