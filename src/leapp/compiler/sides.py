"""Check inputs on both sides of every converted branch (``compiler/check.py`` calls this).

The differential check compares the graph with NumPy on inputs made from the
example; a converted ``if`` whose test all of them answer the same way leaves
the other branch's half of the select unchecked. So the converted source is
run plainly (as Python runs the original) on each check input, recording the
truth value of every converted test (``dispatch.local.sides``); where a test
saw only one side, inputs scaled and shifted from the example are searched
for one that takes the other (a test on a traced 0-d value against a constant,
a norm below an EPS, a sign: what moving the inputs' scale and offset solves),
and up to ``MAX_EXTRA`` of them join the check. ``cf.report()`` then says, per
site, when a side was never exercised by any check input.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .. import dispatch
from . import samples

MAX_EXTRA = 2  # inputs added to the check: each costs one NumPy run and one graph run
# at most 18 plain runs of the function when a side stays out of reach (an np.isnan guard)
_SCALES = (-1.0, 0.0, 10.0, 0.1, -10.0, 1000.0)
_SHIFTS = (0.0, 1.0, -1.0)


def _converted(cf) -> bool:
    source = getattr(cf, "source", None)
    return source is not None and any(b.converted for b in source.branches)


def record(cf, args, kwargs) -> dict | None:
    """{site: {True, False, ...}} seen running the converted source plainly on (args, kwargs), or None."""
    seen: dict = {}
    probe = cf._probe
    saved, probe.runs = probe.runs, {}  # the cross-check counts the calls made while tracing only
    dispatch.local.sides, dispatch.local.loop_cap = seen, True
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            cf._traceable(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    except Exception:
        return None  # not an input this function takes
    finally:
        dispatch.local.sides, dispatch.local.loop_cap = None, False
        probe.runs = saved
    return seen


def _moved(value, scale, shift):
    def move(a):
        if a.dtype.kind not in "fc":
            return a
        with np.errstate(all="ignore"):
            return (a * scale + shift).astype(a.dtype)

    return samples.map_arrays(value, move)


def both_sides(cf, args, kwargs, tries) -> list:
    """Extra (args, kwargs) that take the sides of converted tests that ``tries`` never took; the
    per-site sides every check input took are left in ``cf._sides`` for the report."""
    if not _converted(cf):
        return []
    sides: dict = {}
    for t_args, t_kwargs in tries:
        for site, values in (record(cf, t_args, t_kwargs) or {}).items():
            sides.setdefault(site, set()).update(values)
    extra: list = []
    for scale in _SCALES:
        for shift in _SHIFTS:
            if len(extra) >= MAX_EXTRA or all(len(v) == 2 for v in sides.values()):
                break
            cand = (_moved(args, scale, shift), _moved(kwargs, scale, shift))
            seen = record(cf, *cand)
            if seen and any(not v <= sides.get(site, set()) for site, v in seen.items()):
                extra.append(cand)
                for site, values in seen.items():
                    sides.setdefault(site, set()).update(values)
    cf._sides = sides
    return extra


def describe(cf) -> list[str]:
    """Report lines: each converted site a check input never took both ways."""
    sides = getattr(cf, "_sides", None)
    if not sides or cf.source is None:
        return []
    by_line: dict = {}
    for site, values in sides.items():
        line = site.rsplit(":", 2)[-2] if site.count(":") >= 2 else "?"
        by_line.setdefault(line, set()).update(values)
    out = []
    for b in cf.source.branches:
        if not b.converted:
            continue
        values = by_line.get(str(b.line))
        if values is None:
            out.append(f"    line {b.line}: no check input reached this test")
        elif len(values) < 2 and b.construct == "while":
            ran = "entered the loop" if True in values else "skipped the loop"
            out.append(f"    line {b.line}: every check input {ran} (the other case was never exercised "
                       "against NumPy)")
        elif len(values) < 2:
            side = "true" if True in values else "false"
            out.append(f"    line {b.line}: every check input took the {side} side (the other branch was "
                       "never exercised against NumPy)")
    return out
