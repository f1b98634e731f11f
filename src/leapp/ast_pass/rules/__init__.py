"""Every lint rule, by code. LP1xx names, LP2xx escapes, LP3xx graph faithfulness,
LP9xx unreadable input."""

from __future__ import annotations

from . import escapes, graph, inputs, names
from .base import Invalid, Rule, Valid

# Order of execution: rules that claim a node (so that one construct gets one
# diagnostic) run before rules that would report the same node more generally.
CHECKS = [*graph.RULES, *escapes.RULES, *names.RULES]
ALL_RULES = sorted([*CHECKS, *inputs.RULES], key=lambda r: r.CODE)
RULES_BY_CODE = {r.CODE: r for r in ALL_RULES}

__all__ = ["ALL_RULES", "CHECKS", "RULES_BY_CODE", "Invalid", "Rule", "Valid"]
