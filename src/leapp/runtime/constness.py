"""Whether a recorded value depends on the traced inputs, or only on constants.

A traced array can carry a graph value that no input reaches: ``np.ones(4)``
made while tracing is a traced constant (so that writes of traced values into
it are recorded), and ``np.ones(4).astype(np.float32)`` is a node computed
from that constant alone. Such a value is the same on every call, so reading
it into Python (``int(n)``) freezes nothing, and a call on it only folds
constants: neither is an escape nor a call "on traced data".

Leaves that depend on the data: ``input`` nodes, and ``escaped`` ones (the
result of a call leapp could not trace: its value may have come from the
inputs, and is reported where it was made). ``const`` nodes do not. Every
other node depends on the data when one of its operands does. The answer is
memoised per trace (nodes are append-only and never change their operands),
and the walk is iterative (a 100,000-op chain is fine).
"""

from __future__ import annotations

from .ir import fold_operands

_LEAVES = {"input": True, "escaped": True, "const": False}


def depends_on_inputs(trace, node) -> bool:
    """Whether ``node``'s value in ``trace`` is computed from an input (or an untraced value)."""
    if node is None:
        return True  # a value leapp did not see being made: assume the worst
    memo = trace.depends
    hit = memo.get(node.index)
    if hit is not None:
        return hit
    return fold_operands(memo, node, lambda n, deps: _LEAVES.get(n.op, any(deps)))


def value_depends_on_inputs(trace, arr) -> bool:
    """``depends_on_inputs`` for a traced array's current value (its view chain included)."""
    from . import record

    if arr._lp_parent is not None:
        return depends_on_inputs(trace, record.node_of(arr))
    return depends_on_inputs(trace, arr._lp_node)


def any_data(trace, values) -> bool:
    """Whether some traced value in ``values`` (nested lists and tuples too) depends on the inputs."""
    from . import record

    todo = list(values)
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, record._TracedNpArray):
            if trace is None or value_depends_on_inputs(trace, v):
                return True
        elif record._TracedTensor is not None and isinstance(v, record._TracedTensor):
            if trace is None or depends_on_inputs(trace, v._lp_node):
                return True
    return False
