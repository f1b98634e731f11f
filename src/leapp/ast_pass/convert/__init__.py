"""Branches on data become graph control flow: the static half.

``leapp.compile`` converts an ``if``/``elif``/``else``, an early ``return`` and a
conditional expression whose test the dataflow proves to be an array, when the
branches are free of side effects and cannot raise on the other branch's inputs.
Each construct has its own module:

- ``plan``: the analysis every transformer reads (which names flow in and out of
  a branch, whether its statements are free of side effects; a refusal names the
  property that failed and the line);
- ``statements``: ``if``/``elif``/``else`` and early ``return`` as local functions
  and a ``_leapp.if_`` / ``_leapp.early`` call (LibCST);
- ``expressions``: conditional expressions, ``and``/``or``/``not`` over tests and
  comparison chains.

The runtime half is ``leapp.runtime.branches``: with an untraced test the
original branch runs alone, exactly as Python would; with a traced one both run
and their values are selected with ``np.where``. This package imports neither
torch nor NumPy.
"""

from .plan import MARKER, Branch, plan_if, plan_ifexp

__all__ = ["MARKER", "Branch", "plan_if", "plan_ifexp"]
