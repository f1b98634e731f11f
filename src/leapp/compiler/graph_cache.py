"""The graphs of one ``leapp.compile`` function, one per signature, bounded.

Each graph keeps copies of the inputs it was traced and checked on, so a
function called with ever new shapes (or constant arguments) would grow
without end. The cache keeps the ``max_signatures`` most recently used
(default ``DEFAULT_MAX_SIGNATURES``) and drops the least recently used one
past that; a dropped signature traces again when it comes back. Reaching the
bound warns once per function, naming it: it usually means the calls vary
something that should be fixed (a growing batch, a Python number that changes
every call).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ..errors import RetraceWarning

DEFAULT_MAX_SIGNATURES = 64


class GraphCache(OrderedDict):
    """signature -> Graph, least recently used first; ``get`` counts as a use."""

    def __init__(self, name, limit=DEFAULT_MAX_SIGNATURES, on_evict=None):
        super().__init__()
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"max_signatures must be a positive int, not {limit!r}")
        self.name, self.limit, self.on_evict = name, limit, on_evict
        self.evicted = 0
        self.warned = False

    def get(self, key, default=None):
        graph = super().get(key, default)
        if graph is not default:
            self.move_to_end(key)
        return graph

    def __setitem__(self, key, graph):
        super().__setitem__(key, graph)
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)
            self.evicted += 1
            if self.on_evict is not None:
                self.on_evict()
            if not self.warned:
                self.warned = True
                warnings.warn(f"leapp.compile({self.name}): {self.limit} signatures traced, the "
                              f"max_signatures bound; the least recently used graph is dropped and "
                              f"traced again if its signature comes back. The calls keep changing "
                              f"shapes, dtypes or constant arguments: fix what varies (pad to one "
                              f"shape, pass changing numbers as arrays), or raise max_signatures",
                              RetraceWarning, stacklevel=5)
