"""The cross-check for the seed-style API (``annotate.input_tensors`` ... ``output_tensors``).

Nobody rewrote that code, so recorded nodes carry no column and nothing
counted which calls ran: sites are matched to nodes by line and name, and a
supported call with no node may have been folded or skipped. The other half
holds fully: every untraced call or escape the runtime met in the region must
be on a line the static pass flagged.
"""

from __future__ import annotations

import warnings

from .. import ast_pass
from ..errors import LeappInternalWarning
from . import crosscheck


def check_region(region, trace):
    """Cross-check one annotated node's first pass; ``region`` is (path, first line, last line)."""
    path, first, last = region
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None  # code typed into a REPL or exec'd: nothing to lint
    analysis = ast_pass.check_bytes(data, path, scope="auto")
    text = data.decode("utf-8", errors="replace").splitlines()
    lines = {n: text[n - 1] for n in range(first, min(last, len(text)) + 1)}
    check = crosscheck.check(path=path, first_line=first, last_line=last, sites=analysis.sites,
                             diagnostics=analysis.diagnostics, nodes=trace.nodes,
                             problems=trace.problems, runs=None, lines=lines)
    if not check.ok:
        warnings.warn(
            f"node {trace.name!r}: the static pass and the runtime disagree about "
            f"{len(check.disagreements)} call site(s) (a leapp bug, please report it):\n  - "
            + "\n  - ".join(check.disagreements),
            LeappInternalWarning, stacklevel=3)
    return check
