"""The static/runtime cross-check: two stages that must agree about every call site.

The static pass reads the source and says, per NumPy call, whether it is
traceable; the runtime records what actually happened. A call the static
pass called supported must have recorded nodes when it ran (or have had only
constant operands) and must not have been refused by the runtime; a call it
called unsupported must not have been traced. Anything else means one of the
two stages is wrong about NumPy, which is a leapp bug: ``CrossCheck`` lists
it as a disagreement naming the site, and the caller raises ``InternalError``.

Every escaped or frozen value the runtime met must sit on a line the static
pass flagged; a frozen value is excused only when the call it came from was
flagged (its ``Problem.origin``). A problem on a line nobody flagged is a real
problem in the user's code that lint missed: it is listed as ``missed`` and the
caller raises it to the user (``ProblemsError``), not as a leapp contradiction.

This module is the only place that joins the two stages' vocabularies; it
imports neither torch nor ``leapp.runtime`` (it reads plain attributes of the
recorded nodes and problems).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import table

NOT_EXECUTED = "not executed"


@dataclass
class Row:
    """One call site or runtime problem, as both stages saw it."""

    line: int
    col: int | None
    call: str
    static: str  # the static verdict or lint code(s); "not flagged"
    runtime: str  # recorded / folded / untraced / escape / not executed ...
    nodes: int = 0
    disagreement: str | None = None  # leapp contradicts itself (InternalError)
    missed: str | None = None  # a real problem in the code that leapp lint did not flag


@dataclass
class CrossCheck:
    path: str
    first_line: int
    last_line: int
    rows: list = field(default_factory=list)
    other_nodes: dict = field(default_factory=dict)  # line -> {op: count} for nodes at no site
    lines: dict = field(default_factory=dict)  # line -> source text
    # The static pass could not read the code (LP9xx): nothing to compare. That is
    # the static pass's own diagnostic (``leapp lint`` shows it), not a disagreement.
    static_failure: str | None = None

    @property
    def disagreements(self) -> list[str]:
        return [f"{self.path}:{r.line}{'' if r.col is None else f':{r.col}'}: {r.call}: {r.disagreement}"
                for r in self.rows if r.disagreement]

    @property
    def missed(self) -> list[str]:
        """Real problems in the user's code the static pass did not flag (lint misses), once per site."""
        return list(dict.fromkeys(f"{self.path}:{r.line}{'' if r.col is None else f':{r.col}'}: {r.missed}"
                                  for r in self.rows if r.missed))

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def format(self, title: str = "") -> str:
        out = [title or f"cross-check of {self.path}:{self.first_line}-{self.last_line}"]
        out.append("  line | source / call: static verdict -> runtime outcome")
        by_line: dict = {}
        for r in self.rows:
            by_line.setdefault(r.line, []).append(r)
        for line in sorted(set(by_line) | set(self.other_nodes)):
            text = self.lines.get(line, "")
            out.append(f"  {line:>4} | {text.strip()}")
            for r in sorted(by_line.get(line, []), key=lambda r: (r.col or 0, r.call)):
                where = f"col {r.col}" if r.col is not None else "line"
                out.append(f"       |   {where}: {r.call}: {r.static} -> {r.runtime}")
                if r.disagreement:
                    out.append(f"       |   !! DISAGREEMENT: {r.disagreement}")
                if r.missed:
                    out.append(f"       |   !! MISSED BY LINT: {r.missed}")
            others = self.other_nodes.get(line)
            if others:
                ops = ", ".join(f"{op}" + (f" x{n}" if n > 1 else "") for op, n in sorted(others.items()))
                out.append(f"       |   also recorded (operators, indexing, ...): {ops}")
        bad = self.disagreements
        if self.static_failure:
            out.append(f"  not cross-checked: the static pass failed: {self.static_failure}")
        out.append(f"  {len(bad)} disagreement(s)" + (" (a leapp bug: please report it)" if bad else ""))
        return "\n".join(out)


def _in_range(loc, path, first, last) -> bool:
    return (loc is not None and not isinstance(loc, str) and loc[0] == path
            and first <= loc[1] <= last)


def _site_names(name: str) -> set:
    """Runtime ops a site may record: its own name and the op its table entry records."""
    names = {table.canonical(name)}
    entry = table.lookup(name)
    if isinstance(entry, table.Entry) and entry.recorded_op:
        names.add(table.canonical(entry.recorded_op))
    return names


def _records_no_node(name: str) -> bool:
    """The table says a call of ``name`` returns its operand's own graph value (``x.view()``)."""
    entry = table.lookup(name)
    return isinstance(entry, table.Entry) and entry.recorded_op == ""


def check(*, path, first_line, last_line, sites, diagnostics, nodes, problems, runs=None,
          routed=(), lines=None) -> CrossCheck:
    """Compare static ``sites``/``diagnostics`` with recorded ``nodes``/``problems``.

    ``runs`` maps routed site strings (``path:line:col``) to the probe's
    ``SiteRun``; sites in ``routed`` that have no run did not execute. With
    ``runs=None`` (the seed API, which traces code nobody rewrote) nodes carry
    no column, so they are matched to sites by line and name, and a call with
    no node may have been folded or not executed.
    """
    cc = CrossCheck(path, first_line, last_line, lines=lines or {})
    failed = [d for d in diagnostics if d.code.startswith("LP9")]
    if failed:
        cc.static_failure = f"{failed[0].code} {failed[0].message}"
        return cc
    sites = [s for s in sites if first_line <= s.line <= last_line]
    diagnostics = [d for d in diagnostics if first_line <= d.line <= last_line]
    nodes = [n for n in nodes if n.op not in ("input", "item") and _in_range(n.loc, path, first_line, last_line)]
    claimed: set = set()
    col_nodes: dict = {}
    for n in nodes:
        if len(n.loc) > 3 and n.loc[3] is not None:
            col_nodes.setdefault((n.loc[1], n.loc[3]), []).append(n)
    site_problems: set[Any] = set()
    shared: dict[Any, Any] = {}
    for s in sites:
        shared[(s.line, s.col)] = shared.get((s.line, s.col), 0) + 1
    for s in sites:
        key = f"{path}:{s.line}:{s.col}"
        names = _site_names(s.name)
        if key in routed:
            found = col_nodes.get((s.line, s.col), [])
            if shared[(s.line, s.col)] > 1:  # `np.abs(y).max()`: two calls start at one column
                found = [n for n in found if n.op in names]
            own = [p for p in problems if _own(p, names) and _at(p.loc, path, s.line, s.col)]
            row = _routed_row(s, found, own, (runs or {}).get(key))
            if row.disagreement == SUPPORTED_BUT_NO_NODE:
                # the value left the graph at the site (``NAMES[i]`` on a Python list): the
                # user's problem, raised as the escape it is, not a contradiction of leapp's
                escaped = [p for p in problems if p.kind == "escape" and _at(p.loc, path, s.line, s.col)]
                if escaped:
                    row.runtime, row.disagreement = f"escape: {escaped[0].call}", None
        else:
            found = [n for n in nodes if n.loc[1] == s.line and n.op in names and id(n) not in claimed]
            own = [p for p in problems if _own(p, names) and _in_range(p.loc, path, s.line, s.line)]
            row = _unrouted_row(s, found, own)
        claimed.update(id(n) for n in found)
        site_problems.update(id(p) for p in own)
        cc.rows.append(row)
    flagged = _Flagged(path, sites, diagnostics)
    for p in problems:
        if id(p) not in site_problems:
            cc.rows.append(_problem_row(p, path, first_line, last_line, flagged))
    for d in diagnostics:
        if not any(_covers(d, r.line) and r.static != "not flagged" for r in cc.rows):
            cc.rows.append(Row(d.line, d.col, d.code, d.code, "no problem seen at runtime (not executed, "
                               "or the value was not traced)"))
    for n in nodes:
        if id(n) not in claimed and n.op not in ("const", "escaped"):
            cc.other_nodes.setdefault(n.loc[1], {}).setdefault(n.op, 0)
            cc.other_nodes[n.loc[1]][n.op] += 1
    return cc


def _own(p, names) -> bool:
    """A runtime problem that is the call itself failing to trace (not a value passing through it)."""
    return p.kind == "untraced" and table.canonical(p.call) in names


def _at(loc, path, line, col) -> bool:
    return (loc is not None and not isinstance(loc, str) and loc[0] == path and loc[1] == line
            and len(loc) > 3 and loc[3] == col)


def _covers(d, line) -> bool:
    return d.line <= line <= max(d.line, d.end_line or d.line)


# --- the rules -------------------------------------------------------------------
# Disagreements (leapp contradicts itself: InternalError):
SUPPORTED_BUT_UNTRACED = "the static pass calls it supported, but at runtime: {}"
UNSUPPORTED_BUT_TRACED = "the static pass calls it {}, but the runtime traced it"
SUPPORTED_BUT_NO_NODE = "the static pass calls it supported, but it ran on traced data and recorded no node"
# Lint misses (a real problem in the user's code that ``leapp lint`` did not flag: the
# user's ProblemsError, with a request to report the miss):
NOT_FLAGGED = "{} ({}) on a line lint did not flag"
FROZEN_FROM_UNFLAGGED = ("a value frozen at {} from a call lint did not flag (a frozen value is excused "
                         "only as the consequence of a flagged call)")


def _routed_row(s, found, own, run) -> Row:
    row = Row(s.line, s.col, s.name, s.verdict, "", len(found))
    traced_ok = s.verdict == "supported"
    if own:
        row.runtime = "untraced"
        if traced_ok:
            row.disagreement = SUPPORTED_BUT_UNTRACED.format(own[0].message)
    elif run is None and not found:
        row.runtime = NOT_EXECUTED
    elif found:
        row.runtime = f"recorded ({len(found)} node{'s' if len(found) > 1 else ''})"
        if s.verdict in ("unsupported", "random"):
            row.disagreement = UNSUPPORTED_BUT_TRACED.format(s.verdict)
    elif run is not None and run.passthrough:
        row.runtime = "pass-through (returned its traced operand)"
    elif run is not None and not run.traced:
        row.runtime = "folded (constant operands only)"
    elif run is not None and run.container is not None:
        row.runtime = f"an item of a Python {run.container} (Python indexing: no array op)"
    elif _records_no_node(s.name):
        row.runtime = "alias of its operand (records no node of its own)"
    elif isinstance(entry := table.lookup(s.name), table.Entry) and entry.kind == "static":
        row.runtime = "evaluated at trace time (shape/dtype query)"
    else:
        row.runtime = "nothing recorded"
        if traced_ok:
            row.disagreement = SUPPORTED_BUT_NO_NODE
    return row


def _unrouted_row(s, found, own) -> Row:
    row = Row(s.line, None, s.name, s.verdict, "", len(found))
    if own:
        row.runtime = "untraced"
        if s.verdict == "supported":
            row.disagreement = SUPPORTED_BUT_UNTRACED.format(own[0].message)
    elif found:
        row.runtime = f"recorded ({len(found)} node{'s' if len(found) > 1 else ''})"
        if s.verdict in ("unsupported", "random"):
            row.disagreement = UNSUPPORTED_BUT_TRACED.format(s.verdict)
    else:
        row.runtime = "no node (not executed, or constant operands only)"
    return row


class _Flagged:
    """What the static pass flagged: lines its diagnostics cover, and sites it did not call supported."""

    def __init__(self, path, sites, diagnostics):
        self.path, self.sites, self.diagnostics = path, sites, diagnostics

    def codes(self, line, col=None) -> list:
        codes = sorted({d.code for d in self.diagnostics if _covers(d, line)})
        codes += sorted({s.verdict for s in self.sites if s.line == line and s.verdict != "supported"
                         and (col is None or s.col == col)})
        return codes


def _problem_row(p, path, first, last, flagged) -> Row:
    loc = p.loc
    col = loc[3] if loc is not None and not isinstance(loc, str) and len(loc) > 3 else None
    if loc is None or isinstance(loc, str):  # e.g. a frozen value returned as an output
        return Row(last, None, p.call, "no source position", f"{p.kind}: {p.message}")
    if not _in_range(loc, path, first, last):
        return Row(loc[1], col, p.call, "not linted (outside the function)", f"{p.kind}: {p.message}")
    codes = flagged.codes(loc[1])
    row = Row(loc[1], col, p.call, ", ".join(codes) or "not flagged", p.kind)
    origin = p.origin
    if p.kind == "frozen" and origin is not None and not isinstance(origin, str) and origin[:2] != loc[:2]:
        # the use of an untraced call's result: the call's own problem, if the static pass flagged it
        where = f"line {origin[1]}" if origin[0] == path else f"{origin[0]}:{origin[1]}"
        origin_codes = flagged.codes(origin[1], origin[3] if len(origin) > 3 else None) \
            if origin[0] == path else []
        row.static = ", ".join(origin_codes) + f" (at {where}, where the value came from)" if origin_codes \
            else row.static
        if not origin_codes:
            row.missed = FROZEN_FROM_UNFLAGGED.format(where)
        return row
    if not codes:
        row.missed = NOT_FLAGGED.format(p.kind, p.call)
    return row
