"""Room for deeply nested, valid Python.

A 500-term sum is 500 nested ``BinOp`` nodes and a 600-deep attribute chain
600 nested ``Attribute`` nodes: ``ast.parse``, the rule walk and LibCST all
recurse on them and hit Python's default recursion limit (1000). ``run_deep``
runs a function normally and, only if it raises ``RecursionError``, once more
in a thread with a large stack and a raised limit, so such files are checked
instead of reported as a leapp failure.
"""

from __future__ import annotations

import sys
import threading

STACK_BYTES = 512 * 1024 * 1024  # reserved address space; pages are used only as needed
RECURSION_LIMIT = 100_000
_state = threading.local()


def in_deep() -> bool:
    """True inside ``run_deep``'s retry: a RecursionError now is final, not a reason to retry."""
    return getattr(_state, "deep", False)


def run_deep(fn, *args, **kwargs):
    if in_deep():
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        pass
    outcome = {}

    def target():
        _state.deep = True
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, RECURSION_LIMIT))
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the caller's thread below
            outcome["error"] = e
        finally:
            sys.setrecursionlimit(old)

    old_size = threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name="leapp-deep")
        worker.start()
    finally:
        threading.stack_size(old_size)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
