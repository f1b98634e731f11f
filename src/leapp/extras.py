"""Which optional parts of the distribution are installed, checked before the work starts.

The distribution's base install is what ``leapp lint`` and ``leapp rewrite``
need (libcst), so a pre-commit hook or a CI lint job installs light. Tracing,
validation and export need the ``compile`` extra (numpy, torch); ONNX export
also needs the ``onnx`` extra. A missing extra is found up front, with the
``pip install`` line that adds it, instead of a ``ModuleNotFoundError`` (or
torch's "Module onnx is not installed!") after the work was done. This module
imports neither torch nor numpy: it only asks whether they could be imported.
"""

from __future__ import annotations

import importlib.util

from .errors import LeappError

DISTRIBUTION = "leapp-numpy"

# extra -> the top-level modules it installs (pyproject.toml's [project.optional-dependencies])
EXTRAS: dict[str, tuple[str, ...]] = {
    "compile": ("numpy", "torch"),
    "onnx": ("onnx", "onnxscript", "onnxruntime"),
}


class MissingExtraError(LeappError, ImportError):
    """A feature was asked for whose optional dependencies are not installed."""


def missing(extra: str, modules: tuple[str, ...] | None = None) -> list[str]:
    """The modules of ``extra`` (or just ``modules`` of it) that cannot be imported here."""
    wanted = EXTRAS[extra] if modules is None else modules
    return [m for m in wanted if importlib.util.find_spec(m) is None]


def install_hint(extra: str) -> str:
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise ``MissingExtraError`` naming ``what`` and the pip command when ``extra`` is missing."""
    absent = missing(extra, modules)
    if absent:
        raise MissingExtraError(
            f"{what} needs the '{extra}' extra ({', '.join(absent)} not installed): "
            f"{install_hint(extra)}")
