"""One LibCST pass that applies each construct's conversion where the plan said "select".

It runs on the output of the call router (``leapp.ast_pass.rewrite``), which
keeps every line and every statement's start, so the plan's positions (taken
from the original text) still find their ``if`` statements; conditional
expressions are found by their order on their line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from . import expressions, loops, statements
from .plan import MARKER, Branch


class _Converter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, branches, path, first_line, indent):
        super().__init__()
        self.path, self.first_line, self.indent = path, first_line, indent
        self.ifs = {b.local: b for b in branches if b.converted and b.construct not in ("ifexp", "while")}
        self.whiles = {b.local: b for b in branches if b.converted and b.construct == "while"}
        self.ifexps = {b.local: b for b in branches if b.converted and b.construct == "ifexp"}
        # early returns inside the arms of a converted `if`: converted whether their test is on data
        # (planned too, then in ``ifs``) or not (runtime.branches.early branches as Python does)
        self.nested = {r[0]: r for b in branches if b.converted and b.construct == "if" for r in b.nested
                       if len(r) == 3}  # not an `if` holding early returns: it has its own plan
        # the loops and `with` blocks that hold early returns (plan._plan_held), by position
        self.holders: dict = {}  # and the names the code after each writes on a private copy
        for b in branches:
            if b.converted and b.held:
                self.holders.setdefault(b.held, set()).update(b.copies[-1] if b.copies else ())
        self.seen_on_line: dict[int, int] = {}
        self.ifexp_of: dict[int, Any] = {}  # id(IfExp node) -> its plan.Branch
        self.pending: dict[int, str] = {}  # early returns merged at the later returns of their block
        self.arm_pending: dict[int, str] = {}  # those inside an arm of an if_returns (its _exits)
        # every statement keyed by id above, held for the pass: a freed one's id could be reused by
        # a statement of a later function, which would then merge that early return (seen: a
        # `leapp rewrite` of a whole file merged another function's pending name)
        self._held: list = []
        self.applied = 0

    def _site(self, node) -> str:
        pos = self.get_metadata(PositionProvider, node).start
        return f"{self.path}:{pos.line + self.first_line - 1}:{pos.column + self.indent + 1}"

    def visit_IfExp(self, node):
        line = self.get_metadata(PositionProvider, node).start.line
        k = self.seen_on_line.get(line, 0)
        self.seen_on_line[line] = k + 1
        branch = self.ifexps.get((line, k))
        if branch is not None:
            self.ifexp_of[id(node)] = branch

    def leave_IfExp(self, original, updated):
        branch = self.ifexp_of.get(id(original))
        if branch is None:
            return updated
        self.applied += 1
        return expressions.convert_ifexp(updated, f"{self.path}:{branch.line}:{branch.col}")

    def leave_If(self, original, updated):
        pos = self.get_metadata(PositionProvider, original).start
        branch = self.ifs.get((pos.line, pos.column))
        record = self.nested.get((pos.line, pos.column))
        if branch is None and record is not None:
            branch = Branch("early", pos.line + self.first_line - 1, pos.column + self.indent + 1, record[0],
                            "select", "", record[1], copies=record[2], inner=True)
        if branch is None:
            return updated
        self.applied += 1
        site = f"{self.path}:{branch.line}:{branch.col}"
        sites, cur = [], original
        while isinstance(cur, cst.If):
            sites.append(self._site(cur) if cur is not original else site)
            cur = cur.orelse
        if branch.construct == "early" and branch.tail == "chain":  # the `else` has a site of its own
            sites.append(self._site(cur) if isinstance(cur, cst.Else) else site)
        if branch.construct == "early" and branch.held:  # merged by its holder (leave_For, leave_With)
            return statements.convert_early(updated, branch, sites)
        if branch.construct == "early":
            out = statements.convert_early(updated, branch, sites)
            held = iter(statements.pending_names(branch))
            where = self.arm_pending if branch.inner else self.pending
            for node in out.nodes:  # each `_leapp.early` call, in order, holds one early return
                first = cst.Module([]).code_for_node(node).split("\n", 1)[0]
                if "_leapp.early(" in first or "_leapp.arm_early(" in first:
                    where[id(node)] = next(held)
                    self._held.append(node)
            return out
        if branch.nested and branch.construct == "if":
            # the arms' early returns, found by identity among their converted statements
            branch = _Pending(branch, self.arm_pending)
            out = statements.convert_if(updated, branch, sites)
            holder = out.nodes[-2 - bool(branch.outputs) - len(branch.after)]
            where = self.arm_pending if branch.inner else self.pending  # inside an arm: that arm holds it
            where[id(holder)] = statements.pending_name(branch)
            self._held.append(holder)
            return out
        return statements.convert_if(updated, branch, sites)

    def leave_While(self, original, updated):
        pos = self.get_metadata(PositionProvider, original).start
        branch = self.whiles.get((pos.line, pos.column))
        if branch is None:
            return updated
        self.applied += 1
        return loops.convert_while(updated, branch, f"{self.path}:{branch.line}:{branch.col}")

    def leave_For(self, original, updated):
        return self._holder(original, updated)

    def leave_With(self, original, updated):
        return self._holder(original, updated)

    def _holder(self, original, updated):
        pos = self.get_metadata(PositionProvider, original).start
        at = (pos.line + self.first_line - 1, pos.column + self.indent)  # in the file, as `held` is
        if at not in self.holders:
            return updated
        out = statements.convert_holder(updated, at, at[0], sorted(self.holders[at]),
                                        f"{self.path}:{at[0]}:{at[1] + 1}")
        holder = out.nodes[1]
        self.pending[id(holder)] = statements.held_name(at)  # the function's later returns merge it
        self._held.append(holder)
        return out

    def leave_IndentedBlock(self, original, updated):
        if not any(id(stmt) in self.pending for stmt in updated.body):
            return updated
        return statements.merge_returns(updated, self.pending)


class _Pending:
    """A plan.Branch with the converter's held early returns (``pending``, by statement identity)."""

    def __init__(self, branch, pending):
        self._branch, self.pending = branch, pending

    def __getattr__(self, name):
        return getattr(self._branch, name)


def apply(code: str, branches, *, path: str, first_line: int, indent: int) -> tuple[str, int]:
    """``code`` with the converted branches applied, and how many were."""
    if not any(b.converted for b in branches):
        return code, 0
    # the plan's positions are in the analysed (dedented) text; sites and markers name the file's
    branches = [dataclasses.replace(b, line=b.line + first_line - 1, col=b.col + indent,
                                    held=(b.held[0] + first_line - 1, b.held[1] + indent) if b.held else ())
                for b in branches]
    converter = _Converter(branches, path, first_line, indent)
    module = MetadataWrapper(cst.parse_module(code)).visit(converter)
    return module.code, converter.applied


def _marked(line: str):
    """The user's line a converted line stands for, or None for a line of the user's own."""
    at = line.rfind(MARKER)
    if at >= 0:
        tail = line[at + len(MARKER):].strip()
        if tail.isdigit():
            return int(tail)
    return None


def added(line: str) -> bool:
    """Whether this line of converted text was added by a conversion."""
    return _marked(line) is not None


def own_lines(text: str) -> int:
    """How many lines of ``text`` are the user's (not added by a conversion)."""
    return sum(1 for line in text.splitlines() if _marked(line) is None)


def file_lines(text: str, anchor: int, anchor_line: int) -> list[int] | None:
    """For each line of ``text`` (index = 1-based line; index 0 unused), its line in the user's
    file, given that line ``anchor`` of ``text`` is line ``anchor_line`` of the file. None when
    nothing was converted (then every line is the anchor's offset)."""
    if MARKER not in text:
        return None
    lines = text.splitlines()
    own, count = [0], 0
    for line in lines:
        count += _marked(line) is None
        own.append(count)
    base = own[anchor]
    out = [0]
    for i, line in enumerate(lines, 1):
        n = _marked(line)
        out.append(n if n is not None else own[i] - base + anchor_line)
    return out
