"""The runtime stage: TracedNpArray, recording, lowering to torch.fx.

Layout: ``traced.py`` (the array subclass and its hooks), ``record.py``
(one intercepted call -> one node), ``ir.py`` (the cheap recording),
``adapters/`` (torch code per table entry), ``build.py`` (lowering to FX and
the dtype check), ``patches.py`` (calls that bypass NumPy's hooks),
``torch_interop.py`` (TracedTensor), ``session_graph.py`` (a compiled node
and its validation).
"""

from __future__ import annotations

from .traced import TracedNpArray

__all__ = ["TracedNpArray"]
