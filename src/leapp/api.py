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

``with leapp.session("robot", save_path="out"):`` in place of ``start``/``stop`` also
closes the session (and gives NumPy back) when the code inside raises.

The first pass through a node is traced into its graph; every later pass is a
validation sample (its inputs and the outputs NumPy computed).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from . import interrupts
from .errors import (
    EscapeError,
    EscapeWarning,
    OutputTypeError,
    PipelineWarning,
    ProblemsError,
    TraceError,
    ValidationError,
    ValidationWarning,
)
from .runtime import conventions, escapes, math_calls, record, state
from .runtime.inputs import check_array_type
from .runtime.ir import Node, Problem, Trace, _copy_array, operand_nodes, user_location
from .runtime.session_graph import CompiledNode, validate_samples
from .runtime.traced import TracedNpArray

if TYPE_CHECKING:
    from .pipeline.compiled import CompiledPipeline
    from .pipeline.links import Link

_session: Session | None = None


class _NodeRecord:
    def __init__(self, name: str, order: int) -> None:
        self.name = name
        self.order = order  # position of its first pass in the session: feedback runs backwards
        self.passes = 0
        self.trace: Trace | None = None
        self.signature: tuple[str, ...] | None = None
        self.samples: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.notes: list[str] = []
        self.links: dict[str, dict[int, Link]] = {}  # input port -> {pass: Link}
        self.state: dict[str, np.ndarray] = {}  # state name -> initial value (plain array)
        self.carried: dict[str, np.ndarray] = {}  # state name -> value the next pass starts from
        self.region: tuple[str, int, int] | None = None  # (file, first line, last line) of the first pass, for the cross-check


class _OpenPass:
    """The pass of a node between its first annotate.* call and annotate.output_tensors."""

    def __init__(self, rec: _NodeRecord, trace: Trace) -> None:
        self.rec = rec
        self.trace = trace
        self.state: list[str] = []  # declared in this pass, in call order
        self.updates: dict[str, Any] = {}  # state name -> new value (plain copy)


class Session:
    """An open (or closed) tracing session: what ``leapp.start`` returns."""

    def __init__(self, name: str, save_path: str, strict: bool) -> None:
        from .pipeline.links import Gap

        self.name = name
        self.save_path = save_path
        self.strict = strict
        self.nodes: dict[str, _NodeRecord] = {}
        self.open = True
        self.opened_at: tuple[str, int] | None = None  # (file, line) of the open node's annotate.input_tensors call
        self.current: _OpenPass | None = None
        self.gap = Gap(name)
        # What the open session holds; an interrupted start() drops them with its frame (see patches, state).
        self.patch_hold: Any = None  # patches.Hold: NumPy's bypass calls stay traced
        self.claim: state.Claim | None = state.Claim()  # the gap trace between nodes is this thread's trace
        # weak references to every traced array the session makes: whatever still holds one when
        # it closes (a library object's running statistics, a queue) gets NumPy's plain array
        self.made: list[Any] = []
        self.gap.trace.made = self.made

    def close(self) -> None:
        """Stop tracing: drop the open pass (if any), give NumPy back. Idempotent; runs whole."""
        from .runtime import patches

        with interrupts.deferred():  # a Ctrl-C comes out after: never a session half closed
            state.deactivate()  # the open pass's trace, or the gap trace
            self.current = None
            hold, self.patch_hold = self.patch_hold, None
            claim, self.claim = self.claim, None
            patches.uninstall(hold)
            state.release(claim)
            self.open = False
            made, self.made = self.made, []
            self.gap.trace.made = None
            try:
                escapes.settle(made, set(), record.plain, record.format_loc)
            except Exception:  # noqa: S110 - closing must never fail on the clean-up
                pass


def start(name: str = "leapp", save_path: str = ".", strict: bool = False) -> Session:
    """Open a tracing session. ``strict=True`` turns every untraced call and escape into an error.

    Prefer ``with leapp.session(...):``, which also closes the session when the code inside raises.
    """
    global _session
    from .runtime import patches

    opened = None
    try:  # start() returns an open session, or raises (a Ctrl-C too) with none left open
        with interrupts.deferred():
            if _session is not None and _session.open:
                warnings.warn(
                    f"leapp.start() while session {_session.name!r} is open: that session is discarded",
                    ValidationWarning,
                    stacklevel=2,
                )
                reset()
            opened = Session(name, save_path, strict)
            opened.patch_hold = patches.install()
            state.activate(opened.gap.trace, opened.claim)
            _session = opened
        return opened
    except BaseException:
        _discard(opened)
        raise


def _discard(opened: Any) -> None:
    """Close ``opened`` (a session start() was opening when it raised) and forget it."""
    global _session
    with interrupts.deferred():
        if opened is not None:
            opened.close()
            if _session is opened:
                _session = None


@contextmanager
def session(name: str = "leapp", save_path: str = ".", strict: bool = False) -> Iterator[Session]:
    """``with leapp.session("robot"):`` is ``leapp.start("robot")`` ... ``leapp.stop()``, on every exit path.

    When the block raises, the pass that was open is dropped (it did not finish), NumPy is
    restored and the exception goes on; the passes completed before it can still be compiled.
    """
    opened = start(name, save_path, strict)  # raises with no session left open
    try:
        yield opened
    except BaseException:
        opened.close()
        raise
    if opened.open:
        stop()


def reset() -> None:
    """Discard the current session, whatever its state (after an error in traced code)."""
    global _session
    with interrupts.deferred():
        if _session is not None:
            _session.close()
        state.deactivate()
        _session = None


def stop() -> None:
    """Close the session: tracing stops, NumPy is NumPy again. ``compile_graph`` comes next."""
    try:  # a Ctrl-C in stop() comes out after the session is closed
        with interrupts.deferred():
            if _session is None:
                raise TraceError("leapp.stop() without leapp.start()")
            open_pass = _session.current
            _session.close()
    except KeyboardInterrupt:  # it came before the deferral began
        _discard(_session)
        raise
    if open_pass is not None:
        open_name = open_pass.rec.name
        raise TraceError(
            f"node {open_name!r} is still open: annotate.input_tensors({open_name!r}, ...) was "
            f"called without a matching annotate.output_tensors({open_name!r}, ...)"
        )


def _require_session() -> Session:
    if _session is None or not _session.open:
        raise TraceError("annotate.* needs an open session: call leapp.start() first")
    return _session


def _open(session: Session, node: str, call: str) -> _OpenPass:
    """The open pass of ``node``: the current one, or a new one when no node is open."""
    current = session.current
    if current is not None:
        if current.rec.name != node:
            raise TraceError(
                f"annotate.{call}({node!r}) while node {current.rec.name!r} is still open; "
                f"close it with annotate.output_tensors({current.rec.name!r}, ...) first"
            )
        return current
    rec = session.nodes.get(node)
    if rec is None:
        rec = session.nodes[node] = _NodeRecord(node, len(session.nodes))
    rec.passes += 1
    current = session.current = _OpenPass(rec, Trace(node, strict=session.strict))
    current.trace.made = session.made
    state.deactivate()  # the gap trace
    state.activate(current.trace)
    session.opened_at = _caller(2)
    return current


def input_tensors(node: str, tensors: Mapping[str, Any]) -> Any:
    """Mark inputs of ``node``; returns traced values (one, or a tuple in dict order).

    Several calls on one open node add inputs in call order. A value that is
    another node's output (directly or through a copy, ``np.asarray``, ``[:]``
    or ``astype``) makes an edge: forward when that node ran earlier in this
    pass, feedback when it is a later node of the previous pass.
    """
    session = _require_session()
    if not isinstance(tensors, dict) or not tensors:
        raise TraceError("annotate.input_tensors(node, {name: array, ...}) needs a non-empty dict")
    where = _caller()
    inside = session.current.trace if session.current is not None else None
    links = {key: session.gap.follow(value, where, inside) for key, value in tensors.items()}
    for key, link in links.items():  # before the node opens: a strict refusal leaves nothing open
        _check_link(session, node, key, link)
    current = _open(session, node, "input_tensors")
    for key, link in links.items():
        _note_link(current.rec, key, link)
    return _add_inputs(current, tensors)


def _add_inputs(current: _OpenPass, tensors: Mapping[str, Any]) -> Any:
    trace = current.trace
    outs = []
    for key, value in tensors.items():
        if key in trace.inputs:
            raise TraceError(f"node {current.rec.name!r}: input {key!r} is declared twice in one pass")
        outs.append(_make_input(trace, key, value))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _check_link(session: Session, node: str, key: str, link: object) -> None:
    """Report an input of ``node`` whose feed cannot be followed (raise in strict mode)."""
    from .pipeline.links import Unclear

    if isinstance(link, Unclear):
        if session.strict:
            raise TraceError(f"node {node!r} input {key!r}: {link.reason}")
        warnings.warn(f"node {node!r} input {key!r}: {link.reason}", PipelineWarning, stacklevel=3)


def _note_link(rec: _NodeRecord, key: str, link: object) -> None:
    """Record how input ``key`` of this pass of ``rec`` was fed."""
    from .pipeline.links import Link

    if isinstance(link, Link):
        rec.links.setdefault(key, {})[rec.passes] = link


def state_tensors(node: str, tensors: Mapping[str, Any]) -> Any:
    """Declare state of ``node``: ``{name: initial}``. Returns the traced state (one, or a tuple).

    The first pass starts from ``initial``; every later pass from the value
    ``annotate.update_state`` gave in the pass before, as the exported pipeline
    will. In the graph a state is an input ``name`` and an output ``name.next``.
    """
    from .export.spec import state_output

    session = _require_session()
    if not isinstance(tensors, dict) or not tensors:
        raise TraceError("annotate.state_tensors(node, {name: initial, ...}) needs a non-empty dict")
    current = _open(session, node, "state_tensors")
    rec = current.rec
    values: dict[str, Any] = {}
    for name, initial in tensors.items():
        if state_output(name) in current.trace.outputs or name in current.state:
            raise TraceError(f"node {node!r}: state {name!r} is declared twice in one pass")
        if name not in rec.state:
            rec.state[name] = _copy_array(record.plain(initial), copy=True)
        current.state.append(name)
        values[name] = rec.carried.get(name, rec.state[name])
    return _add_inputs(current, values)


def update_state(node: str, tensors: Mapping[str, Any]) -> None:
    """Give the state of ``node`` its value for the next pass: ``{name: new}``, same shape and dtype."""
    session = _require_session()
    current = session.current
    if current is None or current.rec.name != node:
        raise TraceError(f"annotate.update_state({node!r}) outside a pass of {node!r}: call it between "
                         f"annotate.input_tensors({node!r}, ...) and annotate.output_tensors({node!r}, ...)")
    for name, value in tensors.items():
        if name not in current.state:
            raise TraceError(f"node {node!r}: annotate.update_state names state {name!r}, which this pass "
                             f"did not declare with annotate.state_tensors (declared: {current.state})")
        want = current.rec.state[name]
        got = np.asarray(record.plain(value))
        if got.shape != want.shape or got.dtype != want.dtype:
            raise TraceError(f"node {node!r}: state {name!r} is {want.dtype}{list(want.shape)} but "
                             f"annotate.update_state gives {got.dtype}{list(got.shape)}; a state keeps "
                             f"its shape and dtype from pass to pass")
        current.updates[name] = value


def _caller(depth: int = 1) -> tuple[str, int]:
    """(file, line) of the user's annotate.* call: the region between two is linted at compile_graph."""
    frame = sys._getframe(depth + 1)
    return (frame.f_code.co_filename, frame.f_lineno)


def _make_input(trace: Trace, key: str, value: Any) -> Any:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        torch = None  # type: ignore[assignment]  # unreachable with the compile extra installed
    if torch is not None and isinstance(value, torch.Tensor):
        from .runtime.dtypes import to_numpy
        from .runtime.torch_interop import TracedTensor

        if isinstance(value, TracedTensor):  # another node's output: a plain tensor enters this one
            value = value.as_subclass(torch.Tensor)
        array = value.detach().cpu().numpy()
        node = trace.add("input", (key,), None, to_numpy(value.dtype), tuple(value.shape), None)
        trace.inputs[key] = node
        trace.input_values[key] = array.copy()
        return TracedTensor(value.detach(), node)
    value = record.plain(value)
    check_array_type(value, f"node {trace.name!r} input {key!r}")
    array = np.asarray(np.ndarray.view(value, np.ndarray) if isinstance(value, np.ndarray) else value)
    node = trace.add("input", (key,), None, array.dtype, array.shape, None)
    trace.inputs[key] = node
    trace.input_values[key] = array.copy()
    traced = np.ndarray.view(array, TracedNpArray)
    traced._lp_node = node
    traced._lp_plain = array  # the same memory, plain: what NumPy computes on
    traced._lp_scalar = not isinstance(value, np.ndarray)  # a NumPy scalar or Python number
    return traced


def output_tensors(node: str, tensors: Mapping[str, Any]) -> Any:
    """Mark the outputs of ``node``; closes its pass. Returns the values (one, or a tuple)."""
    from .export.spec import state_output

    session = _require_session()
    current = session.current
    if current is None or current.rec.name != node:
        raise TraceError(
            f"annotate.output_tensors({node!r}) without a matching annotate.input_tensors({node!r}, ...)"
        )
    trace = current.trace
    rec = current.rec
    where = user_location()
    for key, value in tensors.items():
        if key in current.state or key.endswith(".next") and key[:-5] in current.state:
            raise TraceError(f"node {node!r}: output {key!r} has the name of a state port")
        trace.outputs[key] = _output_ref(trace, key, value, where)
        trace.output_values[key] = _copy_array(record.plain(value), copy=True)
    for name in current.state:
        new = current.updates.get(name)
        if new is None:
            warnings.warn(f"node {node!r}: state {name!r} is never updated (no annotate.update_state"
                          f"({node!r}, {{{name!r}: ...}}) in this pass): it keeps its initial value",
                          PipelineWarning, stacklevel=2)
            new = rec.carried.get(name, rec.state[name])
            trace.outputs[state_output(name)] = trace.inputs[name]
        else:
            trace.outputs[state_output(name)] = _output_ref(trace, state_output(name), new, where)
        trace.output_values[state_output(name)] = _copy_array(record.plain(new), copy=True)
    state.deactivate()
    session.current = None
    math_calls.check_weak_uses(trace)  # after closing the pass: a strict refusal leaves no open trace
    conventions.check(trace)
    if rec.trace is not None:
        _check_kept_between_passes(trace, rec.trace, where)
    trace.made = None
    session.made[:] = [r for r in session.made if r() is not None]
    for name in current.state:
        rec.carried[name] = trace.output_values[state_output(name)]
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
        session.gap.bind_output(node, key, rec.passes, value)
    state.activate(session.gap.trace)
    values = list(tensors.values())
    return values[0] if len(values) == 1 else tuple(values)


def _check_kept_between_passes(trace: Trace, first: Trace, returned_at: Any = None) -> None:
    """A later pass that uses a traced value an earlier pass left outside the pipeline: on an
    object, a global or a cache (a library's running statistics, a delay line's queue). The graph
    holds what the first pass saw there and never updates it. Reported at the line that uses it
    (``returned_at``: the output_tensors call, for an output), and listed among the first pass's
    problems, so that a failed validation names it."""
    nodes = trace.nodes
    n = len(nodes)

    def foreign(v: Any) -> bool:
        return type(v) is Node and not (v.index < n and nodes[v.index] is v)

    uses = [(operand, f"{node.op} at {record.format_loc(node.loc)}", node.loc)
            for node in nodes for operand in operand_nodes(node) if foreign(operand)]
    uses += [(value, f"output {key!r}", returned_at) for key, value in trace.outputs.items() if foreign(value)]
    seen: set[int] = set()
    for value, use, loc in uses:
        if id(value) in seen:
            continue
        seen.add(id(value))
        made = (f"made at {record.format_loc(value.loc)}" if value.loc is not None else
                f"its input {value.args[0]!r}" if value.op == "input" else f"made by {value.op}")
        message = (f"{trace.name}: {use} uses a traced value of an earlier pass ({made}) that was kept "
                   f"outside the pipeline, on an object, a global or a cache (a library's running "
                   f"statistics or queue): the graph holds what the first pass saw there and never "
                   f"updates it. Declare it as state (annotate.state_tensors / annotate.update_state), "
                   f"or feed it in with annotate.input_tensors")
        first.problems.append(Problem("escape", "a traced value kept between passes", loc or value.loc, message))
        record.report(trace, "escape", "a traced value kept between passes", loc or value.loc, message,
                      EscapeError, EscapeWarning, chain=False)


def _output_ref(trace: Trace, key: str, value: Any, loc: Any = None) -> Any:
    from .runtime.torch_interop import TracedTensor

    if isinstance(value, TracedTensor):
        return value._lp_node
    if isinstance(value, TracedNpArray):
        return record.node_of_operand(trace, value, loc, f"output {key!r}")
    if np.asarray(value).dtype.kind not in "biufc":
        # None, a string, an object (trimesh's scale_from_matrix returns (factor, origin, None)):
        # torch has no tensor of it, so compile_graph raised a raw TypeError
        raise OutputTypeError(
            f"output {key!r} (at {record.format_loc(loc)}) is {type(value).__qualname__} {value!r:.60}, which a "
            f"graph cannot return: an output of output_tensors is an array or a number. Leave it out of "
            f"the outputs")
    record.constant_output(trace, key, loc)
    return _copy_array(value, copy=True)


def external(value: Any) -> np.ndarray:
    """A plain NumPy copy of ``value`` for code outside the pipeline (an environment, a logger).

    Between nodes leapp follows what is done to node outputs, so that code
    computing a node's input from another node's output is reported (the
    exported pipeline would not run it). A simulator stepping on the action is
    outside the pipeline on purpose: hand it ``annotate.external(action)``.
    """
    return _copy_array(record.plain(value), copy=True)


class _Annotate:
    """``leapp.annotate``: the calls that mark a node's inputs, state and outputs in a session."""

    __slots__ = ()
    input_tensors = staticmethod(input_tensors)
    output_tensors = staticmethod(output_tensors)
    state_tensors = staticmethod(state_tensors)
    update_state = staticmethod(update_state)
    external = staticmethod(external)


annotate = _Annotate()


def compile_graph(validate: bool = True, rtol: float = 1e-5, atol: float = 1e-6,
                  on_mismatch: str = "raise") -> CompiledPipeline:
    """Lower every traced node to a GraphModule; with ``validate``, check each on every later sample.

    Returns a ``leapp.pipeline.CompiledPipeline``: ``p["node"]`` is a ``CompiledNode``. A graph that
    disagrees with NumPy on a sample raises ``ValidationError`` (nothing is returned, so nothing can
    be exported); ``on_mismatch="warn"`` returns it anyway with a ``ValidationWarning`` (to inspect
    ``p["node"].validation``), as a deliberate choice.
    """
    from .pipeline.compiled import CompiledPipeline

    if on_mismatch not in ("raise", "warn"):
        raise ValueError(f"on_mismatch must be 'raise' or 'warn', not {on_mismatch!r}")
    if _session is None:
        raise TraceError("compile_graph() needs a session: leapp.start(), trace, leapp.stop()")
    if _session.open:
        stop()
    compiled: dict[str, CompiledNode] = {}
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
                if on_mismatch == "raise":
                    raise ValidationError(f"{message}\n(the graph is not returned, so it cannot be exported; "
                                          f"compile_graph(on_mismatch='warn') returns it with a warning)")
                warnings.warn(message, ValidationWarning, stacklevel=2)
        node.crosscheck = _crosscheck(rec)
        compiled[name] = node
    edges, feedback = _connections(_session)
    recs = {n: r for n, r in _session.nodes.items() if n in compiled}
    return CompiledPipeline(
        _session.name, compiled, edges, feedback,
        state={n: dict(r.state) for n, r in recs.items() if r.state},
        examples={n: dict(r.trace.input_values) for n, r in recs.items() if r.trace is not None},
        samples={n: list(r.samples) for n, r in recs.items()},
        save_path=_session.save_path,
    )


def _connections(session: Session) -> tuple[list[tuple[str, str, str, str]], list[Any]]:
    """Forward edges (``(from, output, to, input)``) and feedback entries, from what each pass fed."""
    from .pipeline.compiled import Feedback

    edges: list[tuple[str, str, str, str]] = []
    feedback: list[Any] = []
    for name, rec in session.nodes.items():
        if rec.trace is None:  # its first pass never closed (the session was interrupted): not compiled
            continue
        for port, by_pass in rec.links.items():
            sources = {(k.node, k.port) for k in by_pass.values()}
            delays = {p - k.pass_index for p, k in by_pass.items()}
            problem = None
            if len(sources) > 1:
                problem = f"is fed by different outputs in different passes ({sorted(sources)})"
            elif len(delays) > 1 or not delays <= {0, 1}:
                problem = (f"is fed by {sorted(sources)[0]} from {sorted(delays)} pass(es) before; the "
                           f"pipeline carries a value from this pass (an edge) or the one before (feedback)")
            src, out = next(iter(sources))
            delay = next(iter(delays))
            expected = set(range(1 + delay, rec.passes + 1))
            if problem is None and set(by_pass) != expected:
                missing = sorted(expected - set(by_pass))
                problem = f"is fed by {src}/{out} in some passes but not in pass(es) {missing}"
            if problem is not None:
                message = f"node {name!r} input {port!r} {problem}; it is left a pipeline input"
                if session.strict:
                    raise TraceError(message)
                warnings.warn(message, PipelineWarning, stacklevel=3)
                continue
            if delay == 0:
                edges.append((src, out, name, port))
            else:
                cast = any(k.cast for k in by_pass.values())
                feedback.append(Feedback(src, out, name, port, rec.trace.input_values[port], cast))
    return edges, feedback


def _crosscheck(rec: _NodeRecord) -> Any:
    """The static/runtime cross-check of a node's annotated region (None when it cannot be read)."""
    if rec.region is None:
        return None
    from .compiler.seed import check_region  # imports the static pass only when compiling

    return check_region(rec.region, rec.trace)

