"""Which names have a value where a converted branch starts, and which a branch's value reaches.

A converted branch becomes local functions called with the names it needs:
a name passed in must have a value on *every* path to the ``if`` (Python would
otherwise raise ``UnboundLocalError`` where the original ran fine: ``nom`` in
``if dw > eta: ... else: nom = ...; ...`` followed by another such ``if``), and
a name flows out only when some later path reads it before assigning it. Both
are path facts over one function's statements, computed here from the AST:

- ``definitely_before(facts, node)``: names assigned on every path from the
  function's entry to ``node`` (parameters included; a loop body may run zero
  times; an arm that returns or raises reaches nothing);
- ``reads_first(stmts, name)``: whether running ``stmts`` reads ``name`` before
  assigning it on some path ("read"), assigns it first on every path
  ("killed"), or neither ("open");
- ``live_after(facts, name, node)``: whether some path after ``node`` reads
  ``name`` before assigning it (inside a loop: whether any later or earlier
  statement reads it, since the next iteration runs the loop body again).
"""

from __future__ import annotations

import ast

_ALL = None  # "every name": what a path that ends (return, raise, break) has assigned
_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_PLAIN_WITH = frozenset({"errstate", "catch_warnings", "nullcontext"})  # run their body through


def _meet(a, b):
    if a is _ALL:
        return b
    if b is _ALL:
        return a
    return a & b


def _targets(s) -> set[str]:
    """Names a simple statement assigns."""
    if isinstance(s, ast.Assign):
        nodes = s.targets
    elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
        nodes = [s.target] if not isinstance(s, ast.AnnAssign) or s.value is not None else []
    elif isinstance(s, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".", 1)[0] for a in s.names}
    elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {s.name}
    else:
        return set()
    return {n.id for t in nodes for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def definite(stmts):
    """Names every path through ``stmts`` assigns (``_ALL`` when no path gets through)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, _ENDS):
            return _ALL
        if isinstance(s, ast.If):
            both = _meet(definite(s.body), definite(s.orelse))
            if both is _ALL:
                return _ALL
            out |= both
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out |= {n.id for item in s.items if item.optional_vars is not None
                    for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name)}
            inner = definite(s.body)
            if inner is _ALL:
                return _ALL
            out |= inner
        elif isinstance(s, ast.Try):
            inner = definite(s.finalbody)
            if inner is _ALL:
                return _ALL
            out |= inner
        elif isinstance(s, (*_LOOPS, ast.Match)):
            continue  # a loop may run zero times; a match may match no case
        else:
            out |= _targets(s)
    return out


def definitely_before(facts, node) -> set[str]:
    """Names assigned on every path from the function's entry to ``node``."""
    out: set[str] = set()
    cur = node
    while True:
        parent = facts.parents.get(cur)
        if parent is None:
            return out
        block = _block_of(parent, cur)
        if block is not None:
            before = definite(block[:block.index(cur)])
            if before is not _ALL:
                out |= before
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return out | facts.params
        if isinstance(parent, (ast.With, ast.AsyncWith)) and block is parent.body:
            out |= {n.id for item in parent.items if item.optional_vars is not None
                    for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name)}
        if isinstance(parent, (ast.For, ast.AsyncFor)) and block is parent.body:
            out |= {n.id for n in ast.walk(parent.target) if isinstance(n, ast.Name)}
        cur = parent


def _block_of(parent, cur) -> list | None:
    """The statement list of ``parent`` that holds ``cur`` (None: ``cur`` is not a statement there)."""
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and cur in block:
            return block
    return None


def loads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def reads_first(stmts, name: str) -> str:
    """"read", "killed" or "open": see the module docstring."""
    for s in stmts:
        got = _reads_first_one(s, name)
        if got != "open":
            return got
    return "open"


def _reads_first_one(s, name) -> str:
    if isinstance(s, ast.If):
        if name in loads(s.test):
            return "read"
        a, b = reads_first(s.body, name), reads_first(s.orelse, name)
        if "read" in (a, b):
            return "read"
        return "killed" if a == b == "killed" else "open"
    if isinstance(s, (ast.For, ast.AsyncFor)) and name in {
            n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}:
        # the loop assigns it before its body runs (`for i in range(3): ... x * i`); the loop may
        # run no iteration, so after it the name is as before
        return "read" if name in loads(s.iter) or reads_first(s.orelse, name) == "read" else "open"
    if isinstance(s, (ast.With, ast.AsyncWith)):
        if any(name in loads(item.context_expr) for item in s.items):
            return "read"
        got = reads_first(s.body, name)
        if got == "killed" and not all(isinstance(item.context_expr, ast.Call) and ast.unparse(
                item.context_expr.func).rsplit(".", 1)[-1] in _PLAIN_WITH for item in s.items):
            return "open"  # a manager that may swallow an exception may skip the assignment
        return got
    if isinstance(s, _LOOPS):
        head = s.iter if not isinstance(s, ast.While) else s.test
        if name in loads(head) or reads_first(s.body, name) == "read" or reads_first(s.orelse, name) == "read":
            return "read"
        if isinstance(s, ast.While) and name in loads(s.test):
            return "read"
        return "open"
    if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        if name in loads(s) or (isinstance(s, ast.AugAssign) and name in _targets(s)):
            return "read"
        return "killed" if name in _targets(s) else "open"
    if isinstance(s, (ast.Return, ast.Raise)):
        return "read" if name in loads(s) else "killed"  # the path ends: nothing after reads it
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if name in loads(s):  # a closure reads it whenever it is called
            return "read"
        return "killed" if s.name == name else "open"
    if name in loads(s):  # any other statement (with, try, match, expression): a read anywhere counts
        return "read"
    return "open"


def _next_iteration_reads(loop, name: str) -> bool:
    """Whether the loop's next test or iteration (or its `else`) may read ``name`` before assigning
    it; True where a `break`/`continue` in its body makes its paths other than its blocks."""
    if any(isinstance(n, (ast.Break, ast.Continue)) for n in _walk_own(loop.body)):
        return True
    if isinstance(loop, ast.While) and name in loads(loop.test):
        return True
    if reads_first(loop.orelse, name) == "read":
        return True
    if not isinstance(loop, ast.While) and name in {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}:
        return False  # the next item is assigned to it first
    return reads_first(loop.body, name) == "read"


def _walk_own(stmts):
    """The nodes of ``stmts``, not those of the loops and scopes inside them (their `break` is theirs)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (*_LOOPS, *_SCOPES)):
            stack.extend(ast.iter_child_nodes(n))


def live_after(facts, name: str, node) -> bool:
    """Whether some path after ``node`` reads ``name`` before assigning it."""
    cur = node
    while True:
        parent = facts.parents.get(cur)
        block = _block_of(parent, cur) if parent is not None else None
        if block is not None and cur in block:
            got = reads_first(block[block.index(cur) + 1:], name)
            if got != "open":
                return got == "read"
        if parent is None or isinstance(parent, _SCOPES):
            return False
        if isinstance(parent, _LOOPS) and name in loads(parent):
            if _next_iteration_reads(parent, name):
                return True  # the next iteration (or the loop's test) may read it
            # every later iteration assigns it before reading it (a temporary of the body: `if c: d
            # = ...; x = x - d`): only the code after the loop may read what this one left
        if isinstance(parent, (ast.Try, ast.With, ast.AsyncWith, ast.Match, ast.match_case)) \
                and name in loads(parent):
            return True
        cur = parent
