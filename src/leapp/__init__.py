"""leapp: capture NumPy preprocessing code as PyTorch graphs.

The public API is loaded lazily so that ``leapp lint`` (which needs only the
translation table and the static pass) never pays for importing torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # what a type checker sees: the real objects, not Any (never imported at run time)
    from .api import annotate as annotate
    from .api import compile_graph as compile_graph
    from .api import reset as reset
    from .api import session as session
    from .api import start as start
    from .api import stop as stop
    from .compiler import compile as compile
    from .export.loader import load_pipeline as load_pipeline
    from .runtime.traced import TracedNpArray as TracedNpArray

__version__ = "0.1.0"

_LAZY = {
    # seed-style API
    "start": "leapp.api",
    "session": "leapp.api",
    "stop": "leapp.api",
    "compile_graph": "leapp.api",
    "reset": "leapp.api",
    "annotate": "leapp.api",
    # deployed pipelines
    "load_pipeline": "leapp.export.loader",
    # decorator
    "compile": "leapp.compiler",
    # types
    "TracedNpArray": "leapp.runtime.traced",
}

# the deployed-pipeline loader runs without torch; everything else traces with it
_NEEDS = {"leapp.export.loader": ("numpy",)}

__all__ = [*_LAZY, "__version__", "bounded"]

_T = TypeVar("_T")


def bounded(test: _T, max_iterations: int, /) -> _T:
    """``while leapp.bounded(test, N):``: a ``while`` on traced data that ``leapp.compile`` converts to at
    most N masked iterations (as ``# leapp: max-iterations=N`` on the ``while`` line does; see
    docs/control-flow.md). Outside a converted function it is ``test``, unchanged."""
    return test


if not TYPE_CHECKING:  # hidden from type checkers, so that `leapp.compilee` is an error there

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'leapp' has no attribute {name!r}")
        import importlib

        from .extras import require

        # torch and numpy are the 'compile' extra: say so before the import fails inside leapp
        require("compile", f"leapp.{name}", _NEEDS.get(module))
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
