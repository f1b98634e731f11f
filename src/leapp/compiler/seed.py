"""The cross-check for the seed-style API (``annotate.input_tensors`` ... ``output_tensors``).

Nobody rewrote that code, so recorded nodes carry no column and nothing
counted which calls ran: sites are matched to nodes by line and name, and a
supported call with no node may have been folded or skipped. The other half
holds fully: every untraced call or escape the runtime met in the region must
be on a line the static pass flagged.
"""

from __future__ import annotations

import threading
import warnings

from .. import ast_pass, table
from ..errors import LeappInternalWarning
from . import crosscheck

# (path, file bytes, the table's entries) -> the file's Analysis: every compile_graph cross-checks
# its regions, and a session compiled again (a robot script's loop, a test) reads the same file; the
# analysis of a 100-line file is most of compile_graph's own time. The bytes are the key, so a file
# changed on disk is analysed again; so is one seen under an edited table (a test's monkeypatch).
_ANALYSES: dict = {}
_MAX_ANALYSES = 16
_lock = threading.Lock()


def _analysis(data: bytes, path: str):
    key = (path, data, hash(tuple(map(id, table.TABLE.values()))))
    hit = _ANALYSES.get(key)
    if hit is None:
        hit = ast_pass.check_bytes(data, path, scope="auto")
        with _lock:
            if len(_ANALYSES) >= _MAX_ANALYSES:
                _ANALYSES.clear()
            _ANALYSES[key] = hit
    return hit


def check_region(region, trace):
    """Cross-check one annotated node's first pass; ``region`` is (path, first line, last line)."""
    path, first, last = region
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None  # code typed into a REPL or exec'd: nothing to lint
    analysis = _analysis(data, path)
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
