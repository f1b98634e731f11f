"""Results whose NumPy value is a convention of the LAPACK build, not of the maths: refused when used.

``np.linalg.eigh``'s eigenvectors are unique only up to sign (and to rotation
within repeated eigenvalues); the sign is whatever the LAPACK routine returns.
NumPy's bundled LAPACK and torch's differ on most random 4x4 symmetric inputs
(measured: 120 of 200), so a graph using them would silently differ from
NumPy, and a library that then fixes the sign with a branch would take the
other branch. The eigenvalues are unique and match: only a *use* of the
eigenvectors (by any recorded op, or as an output) is refused, at the
``eigh`` call's line, once per call site. (``svd``'s U and Vh came out with
NumPy's signs on every input measured, CPU to CPU; its note says so.)
"""

from __future__ import annotations

from typing import Any

from ..errors import UntracedCallError, UntracedCallWarning
from . import record
from .ir import operand_nodes

# op -> (index of the convention-bound item, what it is)
SIGN_BOUND = {"numpy.linalg.eigh": (1, "eigenvectors")}


def check(trace) -> None:
    bound = {}
    for node in trace.nodes:
        if node.op == "item" and node.args[0].op in SIGN_BOUND and node.args[1] == SIGN_BOUND[node.args[0].op][0]:
            bound[node.index] = node
    if not bound:
        return
    used: dict[Any, Any] = {}  # node index -> its first user
    for node in trace.nodes:
        for n in operand_nodes(node):
            if n.index in bound and node.op != "item":
                used.setdefault(n.index, node)
    for value in trace.outputs.values():
        at = getattr(value, "index", None)  # a Node (an output may be a plain value)
        if at in bound and value is bound.get(at):
            used.setdefault(at, value)
    seen = set()
    for index in used:
        item = bound[index]
        parent = item.args[0]
        if parent.loc in seen:
            continue
        seen.add(parent.loc)
        what = SIGN_BOUND[parent.op][1]
        message = (f"the {what} of {parent.op} at {record.format_loc(parent.loc)} are used: their signs are "
                   f"whatever the LAPACK build returns, and torch's differ from NumPy's on most inputs, "
                   f"so the graph would silently differ. Use the eigenvalues only (np.linalg.eigvalsh), "
                   f"or compute the {what} outside the traced code and pass them in")
        record.report(trace, "refused", parent.op, parent.loc, message, UntracedCallError, UntracedCallWarning,
                      chain=False)
