"""Which trace is recording right now.

A module attribute rather than a context variable: it is read on every
intercepted NumPy call, and tracing is single-threaded by nature (one Python
function, run eagerly, in order).
"""

from __future__ import annotations

active = None  # the leapp.runtime.ir.Trace being recorded, or None
