"""A compiled function bound to an object: methods and callable instances.

::

    class Normalizer:
        @leapp.compile
        def step(self, obs):           # norm.step(obs): traced with self bound
            return (obs - self.mean) / self.std

    fast = leapp.compile(norm.step)    # a bound method
    fast = leapp.compile(norm)         # an instance whose class defines __call__

Each is one ``CompiledFunction`` of the plain function with the object passed
as its first argument: ``self`` is a constant of the trace (the object itself,
not a copy), so two instances get two graphs, and what the graph froze from
``self`` is guarded like any other state read from outside (see
``leapp.compiler.guards``). The bound object forwards the compiled function's
API (``report``, ``show``, ``export``, ``graphs`` ...) and puts the object
first in ``trace`` and ``validate``, so ``norm.step.export("step.onnx")`` works
as for a function.
"""

from __future__ import annotations

import inspect


class BoundCompiled:
    """``compiled`` with ``obj`` as its first argument."""

    __slots__ = ("__self__", "__func__", "__weakref__")

    def __init__(self, compiled, obj):
        object.__setattr__(self, "__func__", compiled)
        object.__setattr__(self, "__self__", obj)

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.__func__.trace(self.__self__, *args, **kwargs)

    def validate(self, *args, **kwargs):
        return self.__func__.validate(self.__self__, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.__func__, name)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only: set {name!r} on the compiled function")

    def __repr__(self):
        return f"<leapp compiled {self.__func__.name} bound to {self.__self__!r}>"

    def __eq__(self, other):
        return (isinstance(other, BoundCompiled) and other.__func__ is self.__func__
                and other.__self__ is self.__self__)

    def __hash__(self):
        return hash((id(self.__func__), id(self.__self__)))


def unbind(fn):
    """``(function, obj)`` for a bound method or an instance with a Python ``__call__``; else
    ``(fn, None)``. A class (whose call makes an instance) and a builtin stay as they are."""
    if inspect.ismethod(fn) and inspect.isfunction(fn.__func__):
        return fn.__func__, fn.__self__
    if not inspect.isroutine(fn) and not inspect.isclass(fn) and callable(fn):
        call = inspect.getattr_static(type(fn), "__call__", None)
        if inspect.isfunction(call):
            return call, fn
    return fn, None
