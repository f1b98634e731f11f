"""Where a problem happened, as a chain: the user's call, then the library's line.

A call the rewriter routed (``_leapp.foreign("prep.py:12:8", lib.fn, x)``) lends
its site to everything the library does inside it, so a problem deep in
``lib.fn`` would name only the user's line. The frame that made the call is
still on the stack when the problem is found: the innermost frame outside
leapp, NumPy and torch is the library's line, named after the user's.
"""

from __future__ import annotations

import sys
from types import FrameType

from .ir import format_loc, frame_location


def library_line(loc, depth=2):
    """(file, line, function) of the innermost non-internal frame, when it is not ``loc``'s line."""
    if loc is None or isinstance(loc, str):
        return None
    frame: FrameType | None = sys._getframe(depth)
    inner = None
    while frame is not None:
        hit = frame_location(frame)
        if hit is not None:
            if (hit[0], hit[1]) == (loc[0], loc[1]):
                return inner  # the user's call is further out: ``inner`` ran inside it
            if inner is None:
                inner = hit
        frame = frame.f_back
    return None  # no frame at the user's line: the problem was found after the call (an output)


def chain(loc, library) -> str:
    """``user.py:12:8 -> lib.py:40 in fn()``, or just the user's location."""
    if library is None or len(loc) > 4 and loc[4] is not None:
        return format_loc(loc)  # a helper's line recorded with the call (patches.via) already names both
    return f"{format_loc(loc)} -> {library[0]}:{library[1]} in {library[2]}()"


def chained_message(message, loc, library) -> str:
    """``message`` with its first mention of ``loc`` extended by the library's line."""
    if library is None:
        return message
    where = format_loc(loc)
    if where in message:
        return message.replace(where, chain(loc, library), 1)
    return f"{message} (at {chain(loc, library)})"


def callers(loc, depth=3, limit=4) -> str:
    """`` (called from lib.py:40 in fn, prep.py:12 in <module>)``: the frames outside leapp, NumPy
    and torch that called ``loc``'s line, innermost first (``limit`` of them); empty when none. A problem
    found deep in library code, in the seed API (no rewritten call lends it the user's line)."""
    if loc is None or isinstance(loc, str):
        return ""
    frame: FrameType | None = sys._getframe(depth)
    seen, found = False, []
    while frame is not None:
        hit = frame_location(frame)
        if hit is not None:
            if seen:
                found.append(f"{hit[0]}:{hit[1]} in {hit[2]}")
            elif (hit[0], hit[1]) == (loc[0], loc[1]):
                seen = True
        frame = frame.f_back
    if not found:
        return ""
    shown = found if len(found) <= limit else [*found[:limit], "..."]
    return f" (called from {', '.join(shown)})"
