"""What the static pass reports: diagnostics, their fixes, and NumPy call sites.

Positions follow ruff: ``line`` and ``col`` are both 1-based and count
characters (not bytes), so ``path:line:col`` can be pasted into an editor.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (end exclusive) with ``text``."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(frozen=True)
class Fix:
    """A safe fix: applying ``edits`` keeps the program's meaning on plain NumPy."""

    title: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    path: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    fix: Fix | None = None

    @property
    def name(self) -> str:
        from .rules import RULES_BY_CODE

        rule = RULES_BY_CODE.get(self.code)
        return rule.NAME if rule else ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Diagnostic:
        fix = d.get("fix")
        if fix is not None:
            fix = Fix(fix["title"], tuple(Edit(**e) for e in fix["edits"]))
        return cls(**{**d, "fix": fix})


@dataclass(frozen=True)
class Site:
    """A NumPy call in traced code, as the static pass sees it.

    ``name`` is the table's qualified name (``numpy.clip``, ``ndarray.sum``);
    ``kind`` is "function" (resolved through imports), "method" (called on a
    value the pass proved to be an array), "subscript" (``TABLE[idx]``: an
    index that may be traced into a value that may be a plain array) or
    "foreign" (a call into other code given array data; ``name`` is the callee
    as written). ``leapp rewrite`` routes every site through the dispatcher.
    ``verdict`` is one of "supported", "refused-keyword", "unsupported",
    "random", "unknown" (no table entry) or "foreign" (the runtime checks the
    result comes back traced).
    """

    name: str
    line: int
    col: int
    kind: str
    verdict: str
    end_line: int = 0  # end of the call (exclusive), to tell ``f(x).sum()`` from ``f(x)``
    end_col: int = 0


@dataclass
class Analysis:
    """The result of ``analyze_source``."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    in_scope: bool = False  # False: nothing in the source is traced
    branches: list = field(default_factory=list)  # convert.Branch: each branch on data, converted or not
