"""``leapp.compile``: the decorator that joins leapp's static stage and its runtime.

::

    @leapp.compile
    def preprocess(state, velocity):
        return np.concatenate([np.clip((state - MEAN) / STD, -5.0, 5.0), velocity])

    obs = preprocess(state, velocity)    # traces once, then runs the graph
    preprocess.report()                  # per line: static verdict, runtime outcome
    preprocess.graphs                    # one torch.fx.GraphModule per signature

At decoration the source is linted (``cf.diagnostics``) and rewritten so
NumPy calls go through the traced dispatcher; at the first call (or a call
with new shapes, dtypes or constant arguments) it is traced, cross-checked
against the lint and, with ``validate=N``, validated. See docs/compile.md.
This is the one layer that imports both ``leapp.ast_pass`` and ``leapp.runtime``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar, overload

from .bound import BoundCompiled, unbind
from .check import DEFAULT_SAMPLES
from .function import CompiledFunction
from .stateful import StatefulFunction

P = ParamSpec("P")
R = TypeVar("R")

# What a type checker sees: ``compile(fn)`` is a CompiledFunction with fn's parameters and result,
# ``compile(**options)`` a decorator that makes one; with ``state=`` the caller passes fewer
# arguments than fn takes and gets the first of its results, so that is a StatefulFunction.


@overload
def compile(fn: Callable[P, R], *, strict: bool = ..., validate: int = ..., crosscheck: str = ...,
            name: str | None = ..., state: None = ..., backend: str | None = ..., tier: str | None = ...,
            check: int = ..., convert_control_flow: bool = ...,
            convert_libraries: bool | list[str] = ...,
            max_signatures: int = ...) -> CompiledFunction[P, R]: ...
@overload
def compile(fn: None = ..., *, strict: bool = ..., validate: int = ..., crosscheck: str = ...,
            name: str | None = ..., state: None = ..., backend: str | None = ..., tier: str | None = ...,
            check: int = ..., convert_control_flow: bool = ...,
            convert_libraries: bool | list[str] = ...,
            max_signatures: int = ...) -> Callable[[Callable[P, R]], CompiledFunction[P, R]]: ...
@overload
def compile(fn: Callable[..., Any], *, strict: bool = ..., validate: int = ..., crosscheck: str = ...,
            name: str | None = ..., state: Mapping[str, Any], backend: str | None = ...,
            tier: str | None = ..., check: int = ..., convert_control_flow: bool = ...,
            convert_libraries: bool | list[str] = ...,
            max_signatures: int = ...) -> StatefulFunction: ...
@overload
def compile(fn: None = ..., *, strict: bool = ..., validate: int = ..., crosscheck: str = ...,
            name: str | None = ..., state: Mapping[str, Any], backend: str | None = ...,
            tier: str | None = ..., check: int = ..., convert_control_flow: bool = ...,
            convert_libraries: bool | list[str] = ...,
            max_signatures: int = ...) -> Callable[[Callable[..., Any]], StatefulFunction]: ...


def compile(fn: Callable[..., Any] | None = None, *, strict: bool = True, validate: int = 0,
            crosscheck: str = "raise", name: str | None = None, state: Mapping[str, Any] | None = None,
            backend: str | None = None, tier: str | None = None, check: int = DEFAULT_SAMPLES,
            convert_control_flow: bool = True, max_signatures: int = 64,
            convert_libraries: bool | list[str] = True,
            ) -> CompiledFunction[..., Any] | Callable[[Callable[..., Any]], CompiledFunction[..., Any]]:
    """Compile ``fn`` (``@leapp.compile`` or ``@leapp.compile(strict=False, ...)``).

    ``strict``: every static diagnostic and every runtime untraced call or
    escaped value is an error, raised once as ``ProblemsError`` listing all of
    them; with ``strict=False`` they are warnings and the graph holds frozen
    constants where they occurred. ``validate``: on every new trace, compare
    the graph with the original function on this many perturbed inputs.
    ``crosscheck``: "raise" (``InternalError``) or "warn" when the static
    pass and the runtime disagree about a call site. ``state``: ``{name: initial}``
    carried from call to call (``leapp.compiler.stateful``): the function takes
    each as a parameter and returns ``(result, {name: new})``. ``tier``: what
    runs each traced graph (``leapp.compiler.tier``): ``"auto"`` (the default, or
    the environment variable ``LEAPP_TIER``) runs the GraphModule and, once a
    signature is hot (50 NumPy calls or 20 ms in them), compiles torch inductor's
    fused code in a background thread and swaps it in where it returns exactly
    what the GraphModule returns and is faster; ``"fx"`` never compiles;
    ``"inductor"`` compiles at the first call of each signature (a second or
    more). ``backend`` (``"fx"`` or ``"inductor"``) is the older spelling of
    ``tier``. See docs/compile.md.
    ``check``: after every trace, the graph is compared with the function itself
    on this many inputs generated from the example (redrawn in its range,
    negated, zeros); a mismatch refuses the graph naming the first node that
    departs from NumPy (``0`` turns it off; see docs/compile.md).
    ``convert_control_flow``: an ``if``, early ``return`` or conditional expression
    whose test is on traced data becomes a select of both branches (``np.where``)
    where leapp proves that exact; False leaves every such test refused (LP202).
    See docs/control-flow.md.
    ``convert_libraries``: the same conversion in library code the function calls
    (``leapp.compiler.library``): True (the default: every module with source but
    NumPy, torch and leapp, narrowed by ``[tool.leapp] library-allow`` /
    ``library-deny``), False, or a list of module patterns that replaces those
    lists (``"pkg"`` covers ``pkg.sub``; ``"!pkg"`` denies it).
    ``max_signatures``: how many traced signatures (graphs) are kept, the least
    recently used dropped past it, with one ``RetraceWarning`` naming the function.
    """
    def wrap(f: Callable[..., Any]) -> Any:
        f, obj = unbind(f)  # a bound method or a callable instance: its function, with obj first
        if obj is not None:
            return _compile(f, name).__get__(obj)
        return _compile(f, name)

    def _compile(f: Callable[..., Any], name: str | None) -> CompiledFunction[..., Any]:
        if state is not None:
            return StatefulFunction(f, state=state, strict=strict, validate=validate,
                                    crosscheck=crosscheck, name=name, backend=backend, tier=tier,
                                    check=check, convert_control_flow=convert_control_flow,
                                    max_signatures=max_signatures, convert_libraries=convert_libraries)
        return CompiledFunction(f, strict=strict, validate=validate, crosscheck=crosscheck, name=name,
                                backend=backend, tier=tier, check=check,
                                convert_control_flow=convert_control_flow, max_signatures=max_signatures,
                                convert_libraries=convert_libraries)

    return wrap if fn is None else wrap(fn)


__all__ = ["BoundCompiled", "CompiledFunction", "StatefulFunction", "compile"]
