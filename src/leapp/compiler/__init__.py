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

from .function import CompiledFunction
from .stateful import StatefulFunction


def compile(fn=None, *, strict: bool = True, validate: int = 0, crosscheck: str = "raise", name=None,
            state=None, backend: str = "fx", max_signatures: int = 64):
    """Compile ``fn`` (``@leapp.compile`` or ``@leapp.compile(strict=False, ...)``).

    ``strict``: every static diagnostic and every runtime untraced call or
    escaped value is an error, raised once as ``ProblemsError`` listing all of
    them; with ``strict=False`` they are warnings and the graph holds frozen
    constants where they occurred. ``validate``: on every new trace, compare
    the graph with the original function on this many perturbed inputs.
    ``crosscheck``: "raise" (``InternalError``) or "warn" when the static
    pass and the runtime disagree about a call site. ``state``: ``{name: initial}``
    carried from call to call (``leapp.compiler.stateful``): the function takes
    each as a parameter and returns ``(result, {name: new})``. ``backend``: what
    runs each traced graph, ``"fx"`` (the GraphModule, nothing to compile) or
    ``"inductor"`` (torch inductor's fused kernels for the traced shapes; a
    second or more per traced signature, faster calls; see docs/compile.md).
    ``max_signatures``: how many traced signatures (graphs) are kept, the least
    recently used dropped past it, with one ``RetraceWarning`` naming the function.
    """
    def wrap(f):
        if state is not None:
            return StatefulFunction(f, state=state, strict=strict, validate=validate,
                                    crosscheck=crosscheck, name=name, backend=backend,
                                    max_signatures=max_signatures)
        return CompiledFunction(f, strict=strict, validate=validate, crosscheck=crosscheck, name=name,
                                backend=backend, max_signatures=max_signatures)

    return wrap if fn is None else wrap(fn)


__all__ = ["CompiledFunction", "StatefulFunction", "compile"]
