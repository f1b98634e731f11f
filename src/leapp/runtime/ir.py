"""The recording: a flat list of cheap nodes, turned into a torch.fx graph once.

Creating an FX node costs tens of microseconds; appending one of these costs
well under one. ``build.py`` lowers a trace to FX in a single iterative pass,
so neither recording nor lowering recurses (a 100,000-op chain is fine).
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import Any

import numpy as np

_copy_array = np.array  # the original, even while leapp.runtime.patches is installed


class Node:
    """One recorded operation (or input, or constant).

    ``op`` is a translation-table name (``"numpy.clip"``), or one of the
    internal ops ``"input"``, ``"const"``, ``"item"`` (element ``args[1]`` of
    a multi-output node) and ``"leapp.*"`` (view write-backs). ``args`` and
    ``kwargs`` mirror the NumPy call, with traced arrays replaced by Nodes.
    """

    __slots__ = ("op", "args", "kwargs", "dtype", "shape", "loc", "index", "value")
    op: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] | None
    dtype: Any  # np.dtype
    shape: tuple[int, ...] | None
    loc: Any  # (file, line, ...) or None
    index: int
    value: Any  # constants and inputs only
    # No __init__: made by ``new_node``, which costs a third of a C-to-Python __init__ call
    # (one node per traced op, on the hottest path of tracing).

    def __repr__(self):
        return f"<Node {self.index} {self.op} {self.dtype}{list(self.shape or ())} at {format_loc(self.loc)}>"


def new_node(op, args, kwargs, dtype, shape, loc, index, value=None) -> Node:
    # traced.TracedNpArray.__array_ufunc__ inlines this (the hottest path): keep them alike
    node = Node()
    node.op = op
    node.args = args
    node.kwargs = kwargs
    node.dtype = dtype
    node.shape = shape
    node.loc = loc
    node.index = index
    node.value = value  # constants and inputs only
    return node


class Problem:
    """Something that keeps the graph from being exact, found while tracing."""

    __slots__ = ("kind", "call", "loc", "message", "origin")

    def __init__(self, kind, call, loc, message, origin=None):
        self.kind = kind  # "untraced", "escape", "frozen", "refused"
        self.call = call
        self.loc = loc
        self.message = message
        # "frozen": where the frozen value came from (the untraced call's location),
        # None when leapp did not see the operation that made it
        self.origin = origin

    def __str__(self):
        return f"{format_loc(self.loc)}: {self.message}"


class Trace:
    """Everything recorded for one traced region (one node of a session, one compile)."""

    quiet = False  # record problems without warning (the gap between a session's nodes)

    def __init__(self, name, strict=False):
        self.name = name
        self.strict = strict
        self.nodes: list[Node] = []
        self.inputs: dict[str, Node] = {}
        self.input_values: dict[str, Any] = {}  # name -> array
        self.outputs: dict[str, object] = {}  # name -> Node or python value
        self.output_values: dict[str, Any] = {}  # name -> array
        self.problems: list[Problem] = []
        self._const_ids: dict[int, tuple] = {}  # id(array) -> (array, node)
        # weak references to every TracedNpArray made while this trace is open, when watched
        # (runtime/escapes.py: what is still alive after the call escaped)
        self.made: list | None = None
        self.depends: dict[int, bool] = {}  # node index -> computed from an input (constness.py)
        self.math_results: dict[int, str] = {}  # node index -> "math.cos at ..." (math_calls.py)
        self.scalar_ports: dict[int, tuple] = {}  # input node index -> path of a scalar argument (scalar_args.py)
        self.untaken = 0  # > 0: running a side of a converted test the input does not take (branches.py)
        self.after_taken: list = []  # early returns the input takes: the code after them is untaken

    def add(self, op, args, kwargs, dtype, shape, loc, value=None):
        # The per-op fast paths in traced.py do this inline: keep it a plain append.
        node = new_node(op, args, kwargs, dtype, shape, loc, len(self.nodes), value)
        self.nodes.append(node)
        return node

    def const(self, array, loc, origin=None):
        """A frozen NumPy operand; the same array object used twice is one constant."""
        hit = self._const_ids.get(id(array))
        if hit is not None and hit[0] is array and _unchanged(hit[1].value, array):
            return hit[1]
        snapshot = _copy_array(array, copy=True)
        node = self.add("const", (origin,), None, snapshot.dtype, snapshot.shape, loc, snapshot)
        self._const_ids[id(array)] = (array, node)
        return node


def nodes_in(values) -> list:
    """The Nodes in (nested) call arguments: lists, tuples and dicts of operands."""
    out = []
    todo = list(values)
    while todo:
        v = todo.pop()
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.values())
    return out


def operand_nodes(node) -> list:
    """The Nodes a node's arguments and keywords refer to."""
    return nodes_in((node.args, node.kwargs))


def fold_operands(memo, node, combine):
    """``memo[node.index] = combine(n, [memo of n's operands])`` for ``node`` and every node it depends
    on, operands first, iteratively (a chain of 100,000 nodes must not recurse); returns node's."""
    stack = [node]
    while stack:
        top = stack[-1]
        if top.index in memo:
            stack.pop()
            continue
        operands = operand_nodes(top)
        pending = [n for n in operands if n.index not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[top.index] = combine(top, [memo[n.index] for n in operands])
        stack.pop()
    return memo[node.index]


def _unchanged(snapshot, array) -> bool:
    """The array still holds what was frozen from it: memory written since (by the user's code or
    by C code that writes into it unseen, as scipy.ndimage does into its output buffer) is a new
    constant, never the stale snapshot."""
    if snapshot.shape != array.shape or snapshot.dtype != array.dtype:
        return False
    return snapshot.tobytes() == array.tobytes()


# --- where a call came from ---------------------------------------------------

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(np.__file__)
_TORCH_DIR = None
# id(code) -> (code, verdict). Keyed by id because hashing a code object hashes its
# constants on every call; the stored code keeps its id from being reused.
_internal_code: dict = {}


def _is_internal(code) -> bool:
    hit = _internal_code.get(id(code))
    if hit is not None:
        return hit[1]
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import torch

        _TORCH_DIR = os.path.dirname(torch.__file__)
    fn = code.co_filename
    verdict = (
        fn.startswith(_PKG_DIR)
        and not fn.startswith(os.path.join(_PKG_DIR, "examples"))
        or fn.startswith(_NUMPY_DIR)
        or fn.startswith(_TORCH_DIR)
        or fn.startswith("<__array_function__")
    )
    _internal_code[id(code)] = (code, verdict)
    return verdict


# (id(code), instruction offset) -> (code, location or None when internal). A frame's
# f_lineno decodes the line table from the start of its function on every read.
_frame_locs: dict = {}
_MAX_FRAME_LOCS = 100_000


def frame_location(frame):
    """``frame``'s (file, line, function, None) if it is user code, None if it is leapp/NumPy/torch."""
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    hit = _frame_locs.get(key)
    if hit is None:
        if len(_frame_locs) >= _MAX_FRAME_LOCS:
            _frame_locs.clear()
        loc = None if _is_internal(code) else (code.co_filename, frame.f_lineno, code.co_name, None)
        hit = _frame_locs[key] = (code, loc)
    return hit[1]


def user_location(site=None):
    """(file, line, function) of the innermost frame outside leapp, NumPy and torch.

    A rewritten call (``leapp.dispatch.call``) names its own site, column included.
    """
    if site is not None:
        return site
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        loc = frame_location(frame)
        if loc is not None:
            return loc
        frame = frame.f_back
    return None


def format_loc(loc) -> str:
    """``file:line[:col]``; a line inside a helper (``loc[4]``, see ``patches.via``) first, then the
    user's line that called the helper: ``helper.py:12 (in norm, called at prep.py:30:8)``."""
    if loc is None:
        return "<unknown>"
    if isinstance(loc, str):
        return loc
    if len(loc) > 4 and loc[4] is not None:
        helper = loc[4]
        return f"{format_loc(helper)} (in {helper[2]}, called at {format_loc(loc[:4])})"
    if len(loc) > 3 and loc[3] is not None:
        return f"{loc[0]}:{loc[1]}:{loc[3]}"
    return f"{loc[0]}:{loc[1]}"
