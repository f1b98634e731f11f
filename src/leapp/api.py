"""The seed-style API: ``start`` / ``annotate.input_tensors`` / ``annotate.output_tensors`` / ``stop`` / ``compile_graph``.

::

    leapp.start("robot", save_path="out")
    for frame in frames:
        state, velocity = annotate.input_tensors("preprocess", {
            "state": frame["observation.state"], "velocity": frame["observation.velocity"]})
        obs = np.concatenate([np.clip((state - MEAN) / STD, -5.0, 5.0), velocity])
        annotate.output_tensors("preprocess", {"obs": obs})
    leapp.stop()
    p = leapp.compile_graph(validate=True)
    p["preprocess"](state=..., velocity=...)   # -> {"obs": ndarray}

The first pass through a node is traced into its graph; every later pass is a
validation sample (its inputs and the outputs NumPy computed).
"""

from __future__ import annotations

import sys
import warnings
from types import SimpleNamespace

import numpy as np

from .errors import ProblemsError, TraceError, ValidationError, ValidationWarning
from .runtime import record, state
from .runtime.ir import Trace, _copy_array, user_location
from .runtime.session_graph import CompiledNode, validate_samples
from .runtime.traced import TracedNpArray

_session = None


class _NodeRecord:
    def __init__(self, name):
        self.name = name
        self.trace: Trace | None = None
        self.signature = None
        self.samples: list = []
        self.notes: list[str] = []
        self.edges: list = []  # (from_node, from_output, to_input)
        self.region = None  # (file, first line, last line) of the first pass, for the cross-check


class Session:
    def __init__(self, name, save_path, strict):
        self.name = name
        self.save_path = save_path
        self.strict = strict
        self.nodes: dict[str, _NodeRecord] = {}
        self.open = True
        self.opened_at = None  # (file, line) of the open node's annotate.input_tensors call


def start(name: str = "leapp", save_path: str = ".", strict: bool = False) -> Session:
    """Open a tracing session. ``strict=True`` turns every untraced call and escape into an error."""
    global _session
    from .runtime import patches

    if _session is not None and _session.open:
        warnings.warn(
            f"leapp.start() while session {_session.name!r} is open: that session is discarded",
            ValidationWarning,
            stacklevel=2,
        )
        reset()
    _session = Session(name, save_path, strict)
    patches.install()
    return _session


def reset() -> None:
    """Discard the current session, whatever its state (after an error in traced code)."""
    global _session
    from .runtime import patches

    state.deactivate()
    patches.uninstall()
    _session = None


def stop() -> None:
    """Close the session: tracing stops, NumPy is NumPy again. ``compile_graph`` comes next."""
    from .runtime import patches

    if _session is None:
        raise TraceError("leapp.stop() without leapp.start()")
    if state.active is not None:
        open_name = state.active.name
        state.deactivate()
        patches.uninstall()
        _session.open = False
        raise TraceError(
            f"node {open_name!r} is still open: annotate.input_tensors({open_name!r}, ...) was "
            f"called without a matching annotate.output_tensors({open_name!r}, ...)"
        )
    patches.uninstall()
    _session.open = False


def _require_session():
    if _session is None or not _session.open:
        raise TraceError("annotate.* needs an open session: call leapp.start() first")
    return _session


def input_tensors(node: str, tensors: dict):
    """Mark the inputs of ``node``; returns traced values (one, or a tuple in dict order)."""
    session = _require_session()
    if state.active is not None:
        raise TraceError(
            f"annotate.input_tensors({node!r}) while node {state.active.name!r} is still open; "
            f"close it with annotate.output_tensors({state.active.name!r}, ...) first"
        )
    if not isinstance(tensors, dict) or not tensors:
        raise TraceError("annotate.input_tensors(node, {name: array, ...}) needs a non-empty dict")
    rec = session.nodes.setdefault(node, _NodeRecord(node))
    trace = Trace(node, strict=session.strict)
    outs = []
    for key, value in tensors.items():
        origin = getattr(value, "_lp_output", None)
        if origin is not None and origin[0] != node and rec.trace is None:
            rec.edges.append((origin[0], origin[1], key))
        outs.append(_make_input(trace, key, value))
    state.activate(trace)
    session.opened_at = _caller()
    return outs[0] if len(outs) == 1 else tuple(outs)


def _caller():
    """(file, line) of the user's annotate.* call: the region between two is linted at compile_graph."""
    frame = sys._getframe(2)
    return (frame.f_code.co_filename, frame.f_lineno)


def _make_input(trace, key, value):
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        torch = None
    if torch is not None and isinstance(value, torch.Tensor):
        from .runtime.dtypes import to_numpy
        from .runtime.torch_interop import TracedTensor

        array = value.detach().cpu().numpy()
        node = trace.add("input", (key,), None, to_numpy(value.dtype), tuple(value.shape), None)
        trace.inputs[key] = node
        trace.input_values[key] = array.copy()
        return TracedTensor(value.detach(), node)
    array = np.asarray(np.ndarray.view(value, np.ndarray) if isinstance(value, np.ndarray) else value)
    node = trace.add("input", (key,), None, array.dtype, array.shape, None)
    trace.inputs[key] = node
    trace.input_values[key] = array.copy()
    traced = np.ndarray.view(array, TracedNpArray)
    traced._lp_node = node
    return traced


def output_tensors(node: str, tensors: dict):
    """Mark the outputs of ``node``; closes its pass. Returns the values (one, or a tuple)."""
    session = _require_session()
    trace = state.active
    if trace is None or trace.name != node:
        raise TraceError(
            f"annotate.output_tensors({node!r}) without a matching annotate.input_tensors({node!r}, ...)"
        )
    where = user_location()
    for key, value in tensors.items():
        trace.outputs[key] = _output_ref(trace, key, value, where)
        trace.output_values[key] = _copy_array(record.plain(value), copy=True)
    state.deactivate()
    rec = session.nodes[node]
    signature = tuple(n.op for n in trace.nodes)
    if rec.trace is None:
        rec.trace = trace
        rec.signature = signature
        start, end = session.opened_at, _caller()
        if start is not None and start[0] == end[0] and start[1] <= end[1]:
            rec.region = (start[0], start[1], end[1])
    else:
        rec.samples.append((trace.input_values, trace.output_values))
        if signature != rec.signature and not any("differ" in n for n in rec.notes):
            rec.notes.append(
                f"pass {len(rec.samples) + 1} of {node!r} recorded different operations than the first "
                f"pass: control flow depends on the data"
            )
    for key, value in tensors.items():
        if isinstance(value, TracedNpArray):
            value._lp_output = (node, key)
    values = list(tensors.values())
    return values[0] if len(values) == 1 else tuple(values)


def _output_ref(trace, key, value, loc=None):
    from .runtime.torch_interop import TracedTensor

    if isinstance(value, TracedTensor):
        return value._lp_node
    if isinstance(value, TracedNpArray):
        return record.node_of_operand(trace, value, loc, f"output {key!r}")
    record.constant_output(trace, key, loc)
    return _copy_array(value, copy=True)


annotate = SimpleNamespace(input_tensors=input_tensors, output_tensors=output_tensors)


class CompiledPipeline:
    """What ``compile_graph`` returns: ``p["node"]`` is a ``CompiledNode``."""

    def __init__(self, session, nodes, edges):
        self.session = session
        self.nodes = nodes
        self.edges = edges

    def __getitem__(self, name) -> CompiledNode:
        try:
            return self.nodes[name]
        except KeyError:
            raise KeyError(f"no traced node {name!r}; traced: {sorted(self.nodes)}") from None

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)

    def __contains__(self, name):
        return name in self.nodes

    def export(self, format: str = "onnx", folder: str | None = None, **options) -> dict:
        """Export every node (checked against NumPy) into ``folder``, by default
        ``<save_path>/<session name>`` from ``leapp.start``; returns the pipeline description."""
        import os

        from .export import export_pipeline

        if folder is None:
            folder = os.path.join(self.session.save_path, self.session.name)
        return export_pipeline(self, folder, format, **options)

    def report(self) -> str:
        parts = []
        for name, node in self.nodes.items():
            text = node.report()
            check = getattr(node, "crosscheck", None)
            if check is not None:
                text += "\n" + check.format(f"  cross-check of {name!r} ({check.path}:"
                                            f"{check.first_line}-{check.last_line})").replace("\n", "\n  ")
            parts.append(text)
        return "\n\n".join(parts)


def compile_graph(validate: bool = True, rtol: float = 1e-5, atol: float = 1e-6) -> CompiledPipeline:
    """Lower every traced node to a GraphModule; with ``validate``, check each on every later sample."""
    if _session is None:
        raise TraceError("compile_graph() needs a session: leapp.start(), trace, leapp.stop()")
    if _session.open:
        stop()
    compiled = {}
    edges = []
    for name, rec in _session.nodes.items():
        if rec.trace is None:
            continue
        node = CompiledNode.from_trace(rec.trace, notes=rec.notes)
        if _session.strict and rec.trace.problems:
            raise ProblemsError(rec.trace.problems)
        if validate:
            node.validation = validate_samples(node, rec.samples, rtol=rtol, atol=atol)
            if not rec.samples:
                warnings.warn(
                    f"node {name!r}: no validation sample. Run the annotated code at least twice "
                    f"between leapp.start() and leapp.stop(); every pass after the first is checked "
                    f"against the graph, which is how a frozen constant is caught",
                    ValidationWarning,
                    stacklevel=2,
                )
            elif not node.validation.ok:
                message = node.validation.describe()
                if _session.strict:
                    raise ValidationError(message)
                warnings.warn(message, ValidationWarning, stacklevel=2)
        node.crosscheck = _crosscheck(rec)
        compiled[name] = node
        edges += [(src, out, name, inp) for src, out, inp in rec.edges]
    return CompiledPipeline(_session, compiled, edges)


def _crosscheck(rec):
    """The static/runtime cross-check of a node's annotated region (None when it cannot be read)."""
    if rec.region is None:
        return None
    from .compiler.seed import check_region  # imports the static pass only when compiling

    return check_region(rec.region, rec.trace)

