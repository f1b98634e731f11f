"""Results whose NumPy value is a convention of the LAPACK build, not of the maths: refused when used.

``np.linalg.eigh``'s eigenvectors are unique only up to sign (and to rotation
within repeated eigenvalues); the sign is whatever the LAPACK routine returns.
NumPy's bundled LAPACK and torch's differ on most random 4x4 symmetric inputs
(measured: 120 of 200), so a graph using them would silently differ from
NumPy, and a library that then fixes the sign with a branch would take the
other branch. The eigenvalues are unique and match: only a *use* of the
eigenvectors (by any recorded op, or as an output) is refused, at the
``eigh`` call's line, once per call site.

``np.linalg.svd``'s U and Vh are bound the same way (paired signs of singular
vectors; any orthonormal completion for ``full_matrices=True`` of a
non-square matrix; any rotation within repeated singular values). They agree
with NumPy's on most float64 tall or square inputs, but not on all: torch's
differ on every wide float64 matrix measured (600 of 600 3x5 normals, rows of Vh
negated), on about 1 in 40 float32 normals (5x3: 7 of 300) and on degenerate
float64 data (a centred integer point cloud, ``vg.principal_components``), so a
use of U or Vh is refused as eigh's eigenvectors are; S is unique and traces.
"""

from __future__ import annotations

from typing import Any

from ..errors import UntracedCallError, UntracedCallWarning
from . import record
from .ir import operand_nodes

# op -> {index of a convention-bound item: what it is}, and what to use instead
SIGN_BOUND = {"numpy.linalg.eigh": {1: "eigenvectors"},
              "numpy.linalg.svd": {0: "left singular vectors (U)", 2: "right singular vectors (Vh)"}}
INSTEAD = {"numpy.linalg.eigh": ("on most inputs", "Use the eigenvalues only (np.linalg.eigvalsh)"),
           "numpy.linalg.svd": ("on wide, float32 and degenerate inputs",
                                "Use the singular values only (np.linalg.svd(a, compute_uv=False) or "
                                "np.linalg.svdvals)")}


def check(trace) -> None:
    bound = {}
    for node in trace.nodes:
        if node.op == "item" and node.args[1] in SIGN_BOUND.get(node.args[0].op, {}):
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
        what = SIGN_BOUND[parent.op][item.args[1]]
        if (parent.loc, what) in seen:
            continue
        seen.add((parent.loc, what))
        message = (f"the {what} of {parent.op} at {record.format_loc(parent.loc)} are used: their signs are "
                   f"whatever the LAPACK build returns, and torch's differ from NumPy's {INSTEAD[parent.op][0]}, "
                   f"so the graph would silently differ. {INSTEAD[parent.op][1]}, "
                   f"or compute the {what} outside the traced code and pass them in")
        record.report(trace, "refused", parent.op, parent.loc, message, UntracedCallError, UntracedCallWarning,
                      chain=False)
