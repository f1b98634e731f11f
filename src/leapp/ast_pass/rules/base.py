"""The shape of a lint rule (after Fixit): one small class, its docs, its tests.

``VALID`` and ``INVALID`` hold example programs; the test suite runs every one
of them (``tests/ast_pass/test_rule_examples.py``) and ``docs/lint-codes.md``
is generated from the same classes, so the docs cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Valid:
    """A program the rule must not flag."""

    code: str | bytes
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """A program the rule must flag (on ``line``, when given); ``fixed`` is the
    source after ``leapp lint --fix``, when the rule has a fix."""

    code: str | bytes
    line: int | None = None
    fixed: str | None = None
    options: dict = field(default_factory=dict)


class Rule:
    CODE: ClassVar[str]
    NAME: ClassVar[str]
    MESSAGE: ClassVar[str]  # the message, as a template for the docs
    WHAT: ClassVar[str]  # What it does
    WHY: ClassVar[str]  # Why is this bad
    EXAMPLE: ClassVar[str]  # copied verbatim into a file (with its imports), it gives the finding
    EXAMPLE_FENCE: ClassVar[str] = "python"  # "text": not a program (docs/lint-codes.md's fence)
    INSTEAD: ClassVar[str]  # Use instead
    FIX: ClassVar[str | None] = None  # the fix's title, when the rule has a safe fix
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []
