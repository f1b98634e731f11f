"""``leapp.compile(state={...})``: one function that carries state from call to call.

::

    @leapp.compile(state={"hist": np.zeros((4, 3), np.float32)})
    def preprocess(obs, hist):
        hist = np.concatenate([hist[1:], obs[None]])
        return hist.reshape(-1), {"hist": hist}

    preprocess(obs)          # -> the first value; the new hist is kept for the next call
    preprocess.state         # {"hist": array}
    preprocess.reset()       # back to the initial value

The function takes each state as a parameter of the same name and returns
``(result, {name: new value})``. The caller never passes the state: the
compiled object feeds it and keeps the new value, which must keep the
initial's shape and dtype. Exported, a state ``hist`` is the artifact's input
``hist`` and output ``hist.next`` (the result's outputs are named as for a
stateless function), in every format, as in a pipeline's ``pipeline.json``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np
import torch

from ..errors import LeappError
from ..runtime import record
from .function import CompiledFunction


class StatefulFunction(CompiledFunction[..., Any]):
    """``@leapp.compile(state=...)``: called without the state parameters; returns the result alone."""

    def __init__(self, fn: Callable[..., Any], *, state: Mapping[str, Any], **options: Any) -> None:
        super().__init__(fn, **options)
        if not isinstance(state, dict) or not state:
            raise LeappError(f"leapp.compile({self.name}, state=...): state is a dict {{name: initial array}}")
        params = self._signature.parameters if self._signature is not None else {}
        missing = [k for k in state if k not in params]
        if missing:
            raise LeappError(f"leapp.compile({self.name}, state=...): the function has no parameter for "
                             f"state {missing}; it takes each state as a parameter of the same name")
        self.initial = {k: v if _python_number(v) else np.array(record.plain(v), copy=True)
                        for k, v in state.items()}
        self._state = {k: _copied(v) for k, v in self.initial.items()}

    @property
    def state(self) -> dict[str, Any]:
        """The values the next call starts from (copies; a Python number stays one)."""
        return {k: _copied(v) for k, v in self._state.items()}

    def reset(self) -> None:
        """State back to its initial values."""
        self._state = {k: _copied(v) for k, v in self.initial.items()}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = super().__call__(*args, **self._with_state(args, kwargs))
        out, new = self._split(result)
        self._state = new
        return out

    def trace(self, *args: Any, validate: int = 0, **kwargs: Any) -> torch.fx.GraphModule:
        return super().trace(*args, validate=validate, **self._with_state(args, kwargs))

    def validate(self, *args: Any, **kwargs: Any) -> Any:
        return super().validate(*args, **self._with_state(args, kwargs))

    def export(self, path: str, format: str = "onnx", *, graph: int = -1, **options: Any) -> Any:
        """Export like ``CompiledFunction.export``; state ``s`` is input ``s`` and output ``s.next``."""
        from ..export import export_node

        if not self._graphs:
            raise LeappError(f"{self.name}: nothing to export yet; call it or cf.trace(...) on example inputs")
        chosen = list(self._graphs.values())[graph]
        names = _output_names(chosen.traced.output_spec)
        node = _renamed(chosen.node, names)
        options.setdefault("example_inputs", dict(chosen.traced.trace.input_values))
        reference = options.pop("reference", None) or self._reference(chosen)
        if reference is not None:
            def renamed_reference(inputs, base=reference):
                return {names.get(k, k): v for k, v in base(inputs).items()}
            options["reference"] = renamed_reference
        return export_node(node, path, format=format, **options)

    # --- the state's way in and out ---------------------------------------------------

    def _with_state(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        # __init__ refused a function without a signature (its state has no parameter)
        bound = cast("inspect.Signature", self._signature).bind_partial(*args, **kwargs)
        given = [k for k in self._state if k in bound.arguments]
        if given:
            raise TypeError(f"{self.name}: state {given} is carried by the compiled function; do not pass "
                            f"it (read cf.state, restart with cf.reset())")
        return {**kwargs, **self._state}

    def _split(self, result: Any) -> tuple[Any, dict[str, np.ndarray]]:
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
            raise LeappError(f"{self.name}: a function with state returns (result, {{state name: new value}}); "
                             f"it returned {type(result).__name__}")
        out, new = result
        if set(new) != set(self._state):
            raise LeappError(f"{self.name}: returned new values for state {sorted(new)}; declared "
                             f"{sorted(self._state)}")
        carried = {}
        for name, value in new.items():
            # a Python number (NumPy's weak typing: `x32 * t` stays float32) is carried as one, so
            # the next call sees what NumPy's would; anything else as an array
            kept = value if _python_number(value) else np.array(record.plain(value), copy=True)
            got, want = np.asarray(kept), np.asarray(self.initial[name])
            if got.shape != want.shape or got.dtype != want.dtype or _python_number(kept) != _python_number(
                    self.initial[name]):
                raise LeappError(f"{self.name}: state {name!r} is {_describe(self.initial[name])} but the "
                                 f"function returned {_describe(kept)} for it; a state keeps its type, shape "
                                 f"and dtype from call to call")
            carried[name] = kept
        return out, carried


def _python_number(v) -> bool:
    return type(v) in (bool, int, float, complex)


def _copied(v):
    return v if _python_number(v) else v.copy()


def _describe(v) -> str:
    if _python_number(v):
        return f"a Python {type(v).__name__}"
    return f"{v.dtype}{list(v.shape)}"


def _output_names(spec):
    """Graph output name -> exported name: result leaves as for a stateless function, state as ``s.next``."""
    from ..export.spec import state_output

    result, state = spec[2]
    names = {leaf: state_output(key) for key, (_, leaf) in state[1].items()}
    for leaf in _leaves(result):
        names[leaf] = "output" + leaf[len("output_0"):]
    return names


def _leaves(spec):
    kind = spec[0]
    if kind == "leaf":
        return [spec[1]]
    if kind == "const":
        return []
    if kind == "dict":
        return [x for s in spec[1].values() for x in _leaves(s)]
    return [x for s in spec[2] for x in _leaves(s)]


def _renamed(node, names):
    """A copy of ``node`` whose graph returns its outputs under ``names``."""
    import copy

    from ..runtime.session_graph import CompiledNode

    gm = copy.deepcopy(node.graph_module)
    out = next(n for n in gm.graph.nodes if n.op == "output")
    out.args = ({names.get(k, k): v for k, v in out.args[0].items()},)
    gm.recompile()
    dtypes = {names.get(k, k): node.output_dtypes[k] for k in node.output_names}
    return CompiledNode(node.name, gm, node.input_names, dtypes, node.problems, node.notes)
