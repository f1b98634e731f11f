"""``CompiledFunction``: what ``@leapp.compile`` returns.

It traces on the first call (and on every call with a new signature), keeps
one graph per signature, and afterwards runs the graph. Each trace is checked
three ways: the static diagnostics and the runtime problems (strict mode
raises them all at once), the static/runtime cross-check (a disagreement is
an ``InternalError``), and, when asked, validation against the original
function on perturbed inputs.
"""

from __future__ import annotations

import functools
import inspect
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import IO, TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

import numpy as np
import torch

from .. import dispatch
from ..errors import (
    EscapeWarning,
    ExportError,
    InternalError,
    LeappError,
    LeappInternalWarning,
    LeappWarning,
    NoSourceError,
    ProblemsError,
    RetraceWarning,
    TraceError,
    UntracedCallWarning,
    ValidationError,
    ValidationWarning,
)
from ..runtime import library_calls, record, state, unseen_calls
from ..runtime.backends import check_backend
from ..runtime.ir import _is_internal, user_location
from ..runtime.session_graph import (
    _close,
    as_numpy_linalg_error,
    torch_linalg_error,
    validate_samples,
)
from ..runtime.tracing import (
    align,
    as_scalars,
    flatten_inputs,
    output_structure,
    rebuild,
    replace_leaves,
    trace_function,
)
from . import check as check_mod
from . import crosscheck as cc_mod
from . import guards as guards_mod
from . import library, samples
from . import scalar_inputs as scalar_inputs_mod
from . import scalars as scalars_mod
from . import sides as sides_mod
from . import source as src_mod
from . import tier as tier_mod
from .graph_cache import DEFAULT_MAX_SIGNATURES, GraphCache
from .probe import Probe

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..runtime.session_graph import Validation

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class Graph:
    """One traced signature: its graph, how to call it, and what the checks said."""

    key: Any
    traced: Any  # runtime.tracing.Traced
    crosscheck: Any = None
    validation: Any = None
    call: tuple[Any, ...] = ()  # the traced call's (args, kwargs), NumPy: how to re-run the function on other inputs
    checked: int = 0  # generated inputs the default differential check compared it with NumPy on
    set_aside: list[str] = field(default_factory=list)  # generated inputs the check did not judge, and why
    stack: Any = None  # check.Stack the lowering ran the graph on (the check takes its outputs), until the check
    tier: Any = None  # compiler.tier.Tier with tier="auto"
    guards: Any = None  # compiler.guards.Guards: state read from outside, watched per call
    samples: list[Any] = field(default_factory=list)  # (inputs, NumPy outputs) validation compared, latest few
    specialised: dict[Any, Any] = field(default_factory=dict)  # scalar argument path -> (what read it, where)

    @property
    def node(self) -> Any:
        return self.traced.node

    @property
    def graph_module(self) -> torch.fx.GraphModule:
        return self.traced.node.graph_module

    def module_on(self, device: torch.device) -> torch.nn.Module:
        return self.traced.node.module_on(device)


class CompiledFunction(Generic[P, R]):
    """What ``@leapp.compile`` returns: called like ``fn`` (same parameters, same result type)."""

    __wrapped__: Callable[P, R]  # fn, set by functools.update_wrapper

    def __init__(self, fn: Callable[P, R], *, strict: bool = True, crosscheck: str = "raise",
                 validate: int = 0, name: str | None = None, backend: str | None = None,
                 tier: str | None = None, check: int = check_mod.DEFAULT_SAMPLES,
                 convert_control_flow: bool = True, max_signatures: int = DEFAULT_MAX_SIGNATURES,
                 convert_libraries: bool | list[str] = True) -> None:
        if crosscheck not in ("raise", "warn"):
            raise ValueError("crosscheck must be 'raise' or 'warn'")
        if isinstance(check, bool) or not isinstance(check, int) or check < 0:
            raise ValueError("check is the number of generated inputs the graph is compared with NumPy "
                             "on after each trace (0: off)")
        self.check_n = check
        self.tier, backend = tier_mod.resolve(tier, backend, getattr(fn, "__qualname__", repr(fn)))
        self.backend = check_backend(backend)
        self.fn = fn
        self.strict = strict
        self.crosscheck_mode = crosscheck
        self.validate_n = validate
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        self._probe = Probe()
        self._fast: dict[tuple[Any, ...] | None, _FastCall] = {}  # fast_key(args, kwargs) -> _FastCall, filled by the first call of each layout
        self._graphs = GraphCache(self.name, max_signatures, on_evict=self._fast.clear)
        self.source: Any = None
        try:
            self.source = src_mod.read(fn, convert=convert_control_flow)
            self._traceable = src_mod.build(fn, self.source, self._probe)
            policy = library.policy_for(self.source.path, convert_libraries, convert_control_flow)
            self._probe.library = library.Conversions(policy) if policy.enabled else None
        except src_mod.NoSourceError as exc:
            self.source = None
            message = (f"leapp.compile({self.name}): {exc}, so leapp cannot lint or rewrite it. "
                       f"Define it with `def` in a .py file and put @leapp.compile directly on it")
            if strict:
                raise NoSourceError(message + ", or pass strict=False to trace it at runtime only.") from None
            warnings.warn(message + "; tracing at runtime only (no static check, no cross-check).",
                          LeappWarning, stacklevel=3)
            self._traceable = fn
        self._signature = _signature_of(fn)
        functools.update_wrapper(self, fn, updated=())

    # --- what the user reads ---------------------------------------------------

    @property
    def diagnostics(self) -> list[Any]:
        """The static pass's diagnostics for the function's source (empty without source)."""
        return list(self.source.diagnostics) if self.source else []

    @property
    def graphs(self) -> list[torch.fx.GraphModule]:
        """One ``torch.fx.GraphModule`` per traced signature, oldest first."""
        return [g.graph_module for g in self._graphs.values()]

    @property
    def backends(self) -> list[str]:
        """What runs each traced graph, oldest first: ``"fx"``, or ``"inductor"`` where it compiled and agreed."""
        return [g.node.backend for g in self._graphs.values()]

    @property
    def tiers(self) -> list[str | None]:
        """Each traced graph's tier, oldest first: ``"cold"`` (counting calls), ``"compiling"``,
        ``"inductor"`` or ``"fx"`` (decided) with ``tier="auto"``; None with another tier."""
        return [g.tier.state if g.tier is not None else None for g in self._graphs.values()]

    @property
    def signatures(self) -> list[str]:
        return [samples.describe(g.key) for g in self._graphs.values()]

    @property
    def crosscheck(self) -> Any:
        """The cross-check of the latest trace (None before the first trace)."""
        return self._latest().crosscheck if self._graphs else None

    def report(self, file: IO[str] | None = None) -> None:
        """Print, per source line, each call's static verdict and runtime outcome."""
        print(self.format_report(), file=file)

    def format_report(self) -> str:
        head = f"leapp.compile report for {self.name}"
        if self.source is None:
            return head + ": no source (runtime-only tracing), nothing to cross-check"
        lines = [f"{head} ({self.source.path}:{self.source.first_line}-{self.source.last_line})",
                 f"  static pass: {len(self.diagnostics)} diagnostic(s)"]
        lines += [f"    {d.path}:{d.line}:{d.col}: {d.code} {d.message}" for d in self.diagnostics]
        if self.source.branches:  # branches on data: what leapp.ast_pass.convert chose per site
            lines.append(f"  branches on data: {len(self.source.branches)}")
            lines += [f"    {b.describe()}" for b in self.source.branches]
            lines += sides_mod.describe(self)  # sites the check inputs never took both ways
        lines += library.format_report(self._probe.library)
        if not self._graphs:
            lines.append("  not traced yet: call the function (or cf.trace(...)) to see runtime outcomes")
            lines.append(self._check(None).format("  static view").replace("\n", "\n  "))
        for i, g in enumerate(self._graphs.values(), 1):
            n_nodes = len(g.graph_module.graph.nodes)
            lines.append(f"  graph {i} of {len(self._graphs)} for {samples.describe(g.key)}: {n_nodes} FX nodes")
            lines += scalar_inputs_mod.describe(g.specialised, list(self._signature.parameters)
                                                if self._signature else [])
            lines.append("  " + g.crosscheck.format("cross-check").replace("\n", "\n  "))
            lines += [f"  differential check: set aside {why}" for why in g.set_aside]
            if g.validation is not None:
                lines.append("  " + g.validation.describe().replace("\n", "\n  "))
            lines.append("  " + (g.tier.describe() if g.tier is not None else f"tier: {self.tier}"
                                 + (f" (runs {g.node.backend})" if self.tier != "fx" else " (no fused backend)")))
        return "\n".join(lines)

    def wait_for_tier(self, timeout: float | None = None) -> bool:
        """Wait until every background compile that has started (``tier="auto"``) is decided;
        whether all were within ``timeout`` seconds. A signature still counting its calls has
        nothing to wait for (``cf.tiers`` says ``"cold"``); ``cf.backends`` says what serves each."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for g in list(self._graphs.values()):
            if g.tier is not None:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not g.tier.wait(left):
                    return False
        return True

    # --- calling -----------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            active = _thread.trace
            if active is not None:
                if active.quiet:
                    return self._call_between_nodes(active, args, kwargs)
                # Called from code that is itself being traced: record into that trace.
                return self._traceable(*args, **kwargs)
            key = fast_key(args, kwargs)
            fast = self._fast.get(key)
            if fast is not None and (fast.guards is None or fast.guards.changed() is None) and (
                    fast.fixed is None or scalar_inputs_mod.same_fixed(fast.fixed, args, kwargs)):
                return fast(args, kwargs)
            raw_args, raw_kwargs = args, kwargs
            args, kwargs = self._bind(args, kwargs)
            graph = self._graph_for(args, kwargs, validate=self.validate_n)
            # traced by this call: its run on the sample is the self-check's (or it is settled)
            first: Any = self._first_call(graph, args, kwargs) if graph.node.unverified else _UNSET
            if key is not None:
                fast = _FastCall.make(graph, self._signature, raw_args, raw_kwargs)
                if fast is not None:
                    if len(self._fast) >= _MAX_FAST:  # keys that never repeat (a NaN argument) stay bounded
                        self._fast.clear()
                    self._fast[key] = fast
                    if first is _UNSET:
                        return fast(raw_args, raw_kwargs)
            return _run(graph, args, kwargs) if first is _UNSET else first
        except torch_linalg_error as exc:  # inv/solve of a singular matrix: NumPy's exception type
            raise as_numpy_linalg_error(exc) from exc

    def _call_between_nodes(self, gap: Any, args: Any, kwargs: Any) -> Any:
        """A call in an open seed-API session outside any node, where the thread's trace is the
        session's quiet gap trace (``leapp.pipeline.links``), which follows node outputs and makes
        no graph. The function traces and runs its own graph as outside a session; a result
        computed from node outputs is one step of the gap trace (the call, at the caller's line),
        so a node it feeds reports it as code between nodes, like any other code there."""
        plain_args, plain_kwargs, sources = _untraced_leaves(gap, args, kwargs)
        with state.suspended():
            # CompiledFunction's own call: a subclass's __call__ (state) already wrapped this one.
            result = CompiledFunction.__call__(self, *plain_args, **plain_kwargs)
        if not sources:
            return result
        loc = user_location()
        spec, outs = output_structure(result)
        op = f"{self.name} (leapp.compile)"
        traced: dict[Any, Any] = {}
        for key, value in outs.items():
            if isinstance(value, torch.Tensor):
                from ..runtime.dtypes import to_numpy
                from ..runtime.torch_interop import TracedTensor

                node = gap.add(op, (sources,), None, to_numpy(value.dtype), tuple(value.shape), loc)
                traced[key] = TracedTensor(value.detach(), node)
            else:
                traced[key] = record.wrap(value, gap.add(op, (sources,), None, value.dtype, np.shape(value), loc))
        return rebuild(spec, traced)

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> Callable[..., R]: ...

    def __get__(self, obj: object, objtype: type | None = None) -> Self | Callable[..., R]:
        if obj is None:
            return self
        from .bound import BoundCompiled

        return BoundCompiled(self, obj)

    def trace(self, *args: Any, validate: int = 0, **kwargs: Any) -> torch.fx.GraphModule:
        """Trace on these example inputs (again, if already traced) and return the GraphModule.

        ``validate=N`` also compares the graph with the original function on N
        perturbed copies of the inputs and raises ``ValidationError`` on a mismatch.
        """
        with _outside_trace() as active:
            if active is not None:
                args, kwargs = _plain_leaves(active, args, kwargs)
            args, kwargs = self._bind(args, kwargs)
            self._graphs.pop(self._key(args, kwargs), None)
            self._fast.clear()
            graph = self._graph_for(args, kwargs, validate=validate)
            self._settle_self_check(graph)
            return graph.graph_module

    def validate(self, *args: Any, **kwargs: Any) -> Validation:
        """Compare the graph for these inputs with the original function on them; returns a Validation."""
        with _outside_trace() as active:
            if active is not None:
                args, kwargs = _plain_leaves(active, args, kwargs)
            args, kwargs = self._bind(args, kwargs)
            graph = self._graph_for(args, kwargs, validate=0)
            self._settle_self_check(graph)
            return self._validate(graph, [(samples.to_numpy(args), samples.to_numpy(kwargs))])

    def export(self, path: str, format: str = "onnx", *, graph: int = -1, **options: Any) -> Any:
        """Export one traced graph (the latest by default) with ``leapp.export.export_node``."""
        if not self._graphs:
            raise LeappError(f"{self.name}: nothing to export yet; call it or cf.trace(...) on example inputs")
        from ..export import export_node

        chosen = list(self._graphs.values())[graph]
        self._settle_self_check(chosen)
        if not chosen.node.output_names:
            code = getattr(self.fn, "__code__", None)
            where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
            raise ExportError(f"{self.name}{where} has no array outputs: every result is a Python value that "
                              f"does not depend on the inputs (spatialmath.base.isrot's True), which an "
                              f"exported file does not hold. Nothing was written; return an array "
                              f"(np.asarray(value)) to export it")
        dropped = _constant_leaves(chosen.traced.output_spec)
        if dropped:
            code = getattr(self.fn, "__code__", None)
            where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
            shown = ", ".join(f"{path} = {value!r}" for path, value in dropped[:4])
            warnings.warn(f"{self.name}{where}: the exported file holds the {len(chosen.node.output_names)} "
                          f"array output(s) ({', '.join(chosen.node.output_names)}) and not the Python "
                          f"value(s) the function also returns, which do not depend on the inputs: {shown}. "
                          f"A caller of the file gets the arrays only; return np.asarray(value) to export "
                          f"one", LeappWarning, stacklevel=2)
        # The traced example is a better source of check-input ranges than random draws, and
        # the function itself (NumPy) is what the artifact must agree with.
        options.setdefault("example_inputs", dict(chosen.traced.trace.input_values))
        options.setdefault("reference", self._reference(chosen))
        return export_node(chosen.node, path, format=format, **options)

    def _reference(self, graph: Graph) -> Callable[[dict[str, Any]], dict[str, np.ndarray]] | None:
        """The original function as inputs-by-name -> outputs-by-name (None without a recorded call)."""
        if not graph.call:
            return None
        args, kwargs = graph.call
        originals = dict(flatten_inputs(args, kwargs))  # a Python number stays one (NEP 50 weak typing)
        from ..runtime.loops import reference as plain  # a bounded `while` stops at its bound there
        fn = plain(self)

        def reference(inputs: dict[str, Any]) -> dict[str, np.ndarray]:
            mapping = {path: scalar_inputs_mod.as_argument(originals.get(path), inputs[name])
                       for path, name in graph.traced.input_paths}
            call_args, call_kwargs = replace_leaves(args, kwargs, mapping)
            result = align(fn(*call_args, **call_kwargs), graph.traced.output_spec)  # t * 2: a Python float
            spec, leaves = output_structure(result)
            if spec != graph.traced.output_spec:
                raise ValueError("the function returned another structure than when traced")
            return {k: np.asarray(v) for k, v in leaves.items()}

        return reference

    def draw(self, path: str | None = None, *, graph: int = -1) -> str | None:
        """Draw one traced graph (the latest by default), one band per source line: ``.svg``, ``.dot``
        or ``.png`` (needs Graphviz's ``dot``); without ``path`` returns the DOT text. See docs/debugging.md."""
        from . import show

        return show.draw(self._shown(graph, "draw"), path, self.name)

    def show(self, file: IO[str] | None = None, *, graph: int = -1) -> None:
        """Print one traced graph (the latest by default) as a table: a row per node with its op,
        dtype, shape, the NumPy call and its source line (a helper's line, and the user's line that
        called the helper). ``cf.format_show()`` returns the text."""
        print(self.format_show(graph=graph), file=file)

    def format_show(self, *, graph: int = -1) -> str:
        from . import show

        gm = self._shown(graph, "show")
        return show.table(gm, self.name, example=list(self._graphs.values())[graph].traced.trace.input_values)

    def _shown(self, graph: int, what: str) -> torch.fx.GraphModule:
        if not self._graphs:
            raise LeappError(f"{self.name}: nothing to {what} yet; call it or cf.trace(...) on example inputs")
        return list(self._graphs.values())[graph].graph_module

    # --- tracing -----------------------------------------------------------------

    def _bind(self, args: Any, kwargs: Any) -> tuple[Any, Any]:
        if self._signature is None:
            return args, kwargs
        bound = self._signature.bind(*args, **kwargs)
        return bound.args, bound.kwargs

    def _key(self, args: Any, kwargs: Any) -> Any:
        return scalar_inputs_mod.key(self, args, kwargs)

    def _latest(self) -> Graph:
        return list(self._graphs.values())[-1]

    def _graph_for(self, args: Any, kwargs: Any, *, validate: int) -> Graph:
        """The graph for this signature, traced (and checked) if there is none. Its self-check on
        the traced sample alone may still be due (``CompiledNode.unverified``): the caller's first
        run of it on the sample makes it (``_first_call``), or ``_settle_self_check``."""
        key = self._key(args, kwargs)
        graph = self._graphs.get(key)
        if graph is not None:
            if graph.guards is None:
                return graph
            changed = graph.guards.changed()
            if changed is None:
                return graph
            self._state_changed(key, changed)
        graph = self._trace(key, args, kwargs)
        self._differential_check(graph, args, kwargs)
        graph.guards = guards_mod.build(self.fn, graph.traced.trace, args, kwargs,
                                        list(self._signature.parameters) if self._signature else [])
        # with the values of scalars the trace found it must fix; where another thread traced the
        # same signature meanwhile, its graph serves both: one graph (and one tier) per signature
        # (a graph stored under the key whose frozen state changed since is replaced, as before)
        winner = self._graphs.setdefault(graph.key, graph)
        if winner is not graph:
            if winner.guards is None or winner.guards.changed() is None:
                return winner
            self._graphs[graph.key] = graph
        if validate:
            rng = np.random.default_rng(len(self._graphs))
            np_args, np_kwargs = samples.to_numpy(args), samples.to_numpy(kwargs)
            tries = [(samples.perturb(np_args, rng), samples.perturb(np_kwargs, rng)) for _ in range(validate)]
            result = self._validate(graph, tries)
            if not result.ok:
                raise ValidationError(result.describe())
        return graph

    def _settle_self_check(self, graph: Graph) -> None:
        """The self-check on the traced sample alone, where it ran only on the sample's block of the
        check's stack (``build.run_stacked``) and no first call has run the graph on the sample yet:
        the graph runs on it now, and strict mode refuses a failure as at the trace."""
        node = graph.node
        if not node.unverified:
            return
        node.unverified = False
        with warnings.catch_warnings():
            if self.strict:  # refused below, not warned (as in _trace)
                warnings.simplefilter("ignore", LeappInternalWarning)
            node._self_check(graph.traced.trace)
        if self.strict:
            failures = self._self_check_failures(graph, graph.traced, *graph.call)
            if failures:
                if self._graphs.get(graph.key) is graph:
                    del self._graphs[graph.key]
                self._fast.clear()
                raise ProblemsError(failures)

    def _first_call(self, graph: Graph, args: Any, kwargs: Any) -> Any:
        """A call of ``graph`` while its self-check on the traced sample alone is due (the lowering
        ran the graph on the check's stack only: ``build.run_stacked``): usually the call that
        traced it, on the sample itself, whose run of the graph is then the self-check's run.
        Agreeing with the traced outputs, it is the call's result; else (another call's arguments,
        or a failure) the self-check runs on the sample (``_settle_self_check``: refused in strict
        mode) before the call runs as any other."""
        leaves = flatten_inputs(args, kwargs)
        if not any(isinstance(v, torch.Tensor) for _, v in leaves):
            out = _run_numpy(graph, leaves)
            if all(_close(out[k], want, 1e-5, 1e-6) for k, want in graph.traced.trace.output_values.items()):
                graph.node.unverified = False
                return rebuild(graph.traced.output_spec, as_scalars(out, graph.traced.scalar_outputs))
        self._settle_self_check(graph)
        return _UNSET

    def _state_changed(self, key: Any, changed: str) -> None:
        """State the graph froze changed since its trace (``compiler/guards.py``): trace again, as
        NumPy reads the state afresh; warn once when it keeps happening."""
        self._graphs.pop(key, None)
        self._fast.clear()
        self._state_retraces = getattr(self, "_state_retraces", 0) + 1
        if self._state_retraces == guards_mod.WARN_AFTER:
            warnings.warn(f"leapp.compile({self.name}): traced again {self._state_retraces} times because "
                          f"state the graph froze changed between calls (last: {changed}). Each change "
                          f"costs a trace; pass the array as an argument, or carry it with "
                          f"leapp.compile(state=...)", RetraceWarning, stacklevel=4)

    def _trace(self, key: Any, args: Any, kwargs: Any) -> Graph:
        np_args, np_kwargs = samples.to_numpy(args), samples.to_numpy(kwargs)
        names = list(self._signature.parameters) if self._signature else []
        self._probe.reset()
        static_errors = self._static_problems()
        if self.source is not None and not src_mod.methods_hold(self.source, np_args):
            # a method a branch calls is not the def leapp read, on this object: read the source again
            # without methods, as code leapp cannot read (kept so for every later object)
            self.source = src_mod.read(self.fn, convert=self.source.convert, data_lines=self.source.data_lines,
                                       methods=False)
            self._traceable = src_mod.build(self.fn, self.source, self._probe)
            static_errors = self._static_problems()
        with warnings.catch_warnings():
            # Collected and then raised together (strict) or warned once each, below.
            warnings.simplefilter("ignore", UntracedCallWarning)
            warnings.simplefilter("ignore", EscapeWarning)
            if self.strict:  # the self-check's unexplained failures are refused below, not warned
                warnings.simplefilter("ignore", LeappInternalWarning)
            # the call watch's profile function (runtime/unseen_calls.py) only where the default
            # check is off: the check is the guard that holds whatever C code does
            def watch() -> AbstractContextManager[None]:
                return nullcontext() if not self.check_n else unseen_calls.profile_off()

            # the check's inputs, made first: the lowering's own run of the graph runs on them
            stack = check_mod.stack_for(self, np_args, np_kwargs, self.check_n, seed=len(self._graphs)) \
                if self.check_n and not static_errors else None
            src = self.source
            user = library_calls.UserTests(src.path, src.first_line, src.last_line) \
                if src is not None and src.convert else None
            previous = library_calls.watch_user(user)
            try:
                library.begin(self._probe.library)
                for _ in range(library.MAX_RETRACES + 1):  # library code reached converts, then again
                    failed: LeappError | None = None
                    try:
                        with watch():  # a fresh one each time: a library's branch traces again
                            traced, specialised = scalar_inputs_mod.trace(  # scalars read into Python: constants
                                self, np_args, np_kwargs, lambda constants, on_retrace: trace_function(
                                    self._traceable, np_args, np_kwargs, names=names, strict=False,
                                    name=self.name, constants=constants, on_retrace=on_retrace, stack=stack))
                    except ProblemsError:
                        raise
                    except LeappError as exc:  # refused at once: converting what it met first may help
                        failed = exc
                    if user is not None and user.fresh:  # its own tests on data the static pass missed
                        user.fresh = False
                        self.source = src_mod.read(self.fn, convert=True,
                                                   data_lines=frozenset(self.source.data_lines | user.lines),
                                                   methods=self.source.reads_methods)
                        if not src_mod.methods_hold(self.source, np_args):
                            self.source = src_mod.read(self.fn, convert=True, data_lines=self.source.data_lines,
                                                       methods=False)
                        self._traceable = src_mod.build(self.fn, self.source, self._probe)
                        static_errors = self._static_problems()
                        self._probe.reset()
                        continue
                    if self._probe.library is None or not self._probe.library.retrace():
                        if failed is not None:
                            raise failed
                        break
                    self._probe.reset()
                else:  # the last retrace converted more and still failed: that refusal is the answer
                    if failed is not None:
                        raise failed
            except LeappError as exc:
                earlier = getattr(exc, "leapp_earlier", [])  # the trace's problems before the refusal
                if static_errors or earlier:
                    raise ProblemsError([*static_errors, *earlier, f"while tracing: {exc}"]) from exc
                raise
            except Exception as exc:
                self._raised_only_when_traced(exc, np_args, np_kwargs)
                raise
            finally:
                library_calls.watch_user(previous)
        scalars_mod.check_inputs(self.name, traced, specialised, names)  # f(3): no input at all
        graph = Graph(self._key(args, kwargs), traced, call=samples.isolated((np_args, np_kwargs)),
                      specialised=specialised, stack=stack)
        if self.backend != "fx":
            traced.node.use_backend(self.backend, traced.trace.input_values, traced.trace.output_values)
        elif self.tier == "auto":
            graph.tier = tier_mod.Tier(graph)
        graph.crosscheck = self._check(traced)
        traced.node.crosscheck = graph.crosscheck
        self._report_disagreements(graph.crosscheck)
        runtime = self._uncovered(traced.problems)
        if self.strict:
            # a graph that does not reproduce even the traced sample is never handed out in strict
            # mode (strict=False returns it with the warning)
            runtime += self._self_check_failures(graph, traced, np_args, np_kwargs)
        missed = graph.crosscheck.missed if graph.crosscheck is not None else []
        if missed:
            runtime.append(_lint_missed(missed, self.diagnostics))
        if self.strict and (static_errors or runtime):
            raise ProblemsError([*static_errors, *runtime])
        if not self.strict:
            self._warn(traced.problems)
            if missed:
                warnings.warn(_lint_missed(missed, self.diagnostics), LeappWarning, stacklevel=4)
        return graph

    def _self_check_failures(self, graph: Graph, traced: Any, args: Any, kwargs: Any) -> list[str]:
        """The self-check's failures to refuse: none when the first value that departs does so by
        rounding that later calls magnify (warned, as the differential check does)."""
        failed = [f"the graph's self-check failed: {m}" for m in getattr(traced.node, "self_check", ())]
        if failed:
            explained = check_mod.explain_self_check(self, graph, args, kwargs)
            if explained is not None:
                category, why = explained
                if category is None:  # a departure leapp documents: refused with its reason
                    return [f"leapp.compile({self.name}): the graph does not reproduce the traced "
                            f"sample: {why}"]
                warnings.warn(f"leapp.compile({self.name}): the graph does not reproduce the traced "
                              f"sample exactly. {why}; see docs/limitations.md", category,
                              stacklevel=check_mod.user_stacklevel())
                return []
        return failed

    def _differential_check(self, graph: Graph, args: Any, kwargs: Any) -> None:
        """The graph against the function itself on generated inputs (``compiler/check.py``); a
        trace whose values escaped is not re-run (the function has side effects: refused or warned)."""
        stack, graph.stack = graph.stack, None
        if not self.check_n or any(p.kind == "escape" for p in graph.traced.problems):
            graph.node.stacked_outputs = None
            return
        np_args, np_kwargs = samples.to_numpy(args), samples.to_numpy(kwargs)
        graph.checked, problems, graph.set_aside = check_mod.run(self, graph, np_args, np_kwargs, self.check_n,
                                                                 stack=stack)
        graph.node.stacked_outputs = None
        if not problems:
            return
        if self.strict:
            raise ProblemsError(problems)
        for message in problems:
            warnings.warn(message, ValidationWarning, stacklevel=4)

    def _raised_only_when_traced(self, exc: Exception, args: Any, kwargs: Any) -> None:
        """The function raised while traced. If NumPy runs it on the same inputs, the traced array
        was the difference (a library that type-checks its argument: ``Decimal(x)``, C code that
        rejects a subclass): that is leapp's refusal, at the line that raised, not a crash."""
        from ..runtime.loops import reference  # a bounded `while` stops at its bound there

        try:
            call_args, call_kwargs = samples.isolated((args, kwargs))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reference(self)(*call_args, **call_kwargs)
        except Exception:
            return  # NumPy raises too (or its loop runs past the bound): the error as it is
        where, tb = "?", exc.__traceback__
        while tb is not None:  # the innermost frame outside leapp (and NumPy): the line that raised
            if not _is_internal(tb.tb_frame.f_code):
                where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
            tb = tb.tb_next
        raise TraceError(
            f"leapp.compile({self.name}): {type(exc).__name__}: {exc} at {where}, raised only while "
            f"tracing (under NumPy the function runs): code there treats leapp's traced array "
            f"differently from NumPy's own values (a type check, a conversion such as Decimal(x), "
            f"C code that refuses an ndarray subclass), so it cannot be traced. Compute that value "
            f"with NumPy functions, or outside the compiled function") from exc

    def _static_problems(self) -> list[str]:
        # Every LP code marks something the graph cannot reproduce exactly, so all are errors.
        return [f"{d.path}:{d.line}:{d.col}: {d.code} {d.message}" for d in self.diagnostics]

    def _uncovered(self, problems: list[Any]) -> list[str]:
        """Runtime problems on lines no static diagnostic covers (the rest are listed once, statically)."""
        covered = {(d.path, line) for d in self.diagnostics
                   for line in range(d.line, max(d.line, d.end_line or d.line) + 1)}
        listed = {(p.loc[0], p.loc[1]) for p in problems
                  if p.kind != "frozen" and p.loc is not None and not isinstance(p.loc, str)}
        out = []
        for p in problems:
            origin = p.origin
            if p.kind == "frozen" and origin is not None and not isinstance(origin, str) and \
                    ((origin[0], origin[1]) in covered or (origin[0], origin[1]) in listed):
                continue  # the use of an untraced call's result: that call is already listed
            loc = p.loc
            if loc is None or isinstance(loc, str) or (loc[0], loc[1]) not in covered:
                out.append(str(p))
        return list(dict.fromkeys(out))  # a site in a loop is listed once, not once per iteration

    def _warn(self, problems: list[Any]) -> None:
        """Non-strict: one warning per runtime problem, then the static findings it did not repeat."""
        seen: set[tuple[str, int]] = set()
        for p in problems:
            category = UntracedCallWarning if p.kind == "untraced" else EscapeWarning
            if p.loc is None or isinstance(p.loc, str):
                warnings.warn(str(p), category, stacklevel=4)
                continue
            seen.add((p.loc[0], p.loc[1]))
            warnings.warn_explicit(p.message, category, p.loc[0], p.loc[1])
        for d in self.diagnostics:
            if (d.path, d.line) not in seen:
                category = UntracedCallWarning if d.code.startswith("LP1") else EscapeWarning
                warnings.warn_explicit(f"{d.code} {d.message}", category, d.path, d.line)

    def _check(self, traced: Any) -> Any:
        if self.source is None:
            return None
        s = self.source
        lines = {s.first_line + i: text for i, text in enumerate(s.text.splitlines())}
        return cc_mod.check(
            path=s.path, first_line=s.first_line, last_line=s.last_line, sites=s.sites,
            diagnostics=s.diagnostics, nodes=traced.trace.nodes if traced else [],
            problems=traced.problems if traced else [], runs=self._probe.runs if traced else {},
            routed=s.routed, lines=lines,
        )

    def _report_disagreements(self, check: Any) -> None:
        if check is None or check.ok:
            return
        message = (f"leapp.compile({self.name}): the static pass and the runtime disagree about "
                   f"{len(check.disagreements)} call site(s); one of them is wrong about NumPy "
                   f"(a leapp bug, please report it with cf.report()):\n  - "
                   + "\n  - ".join(check.disagreements))
        if self.crosscheck_mode == "raise":
            raise InternalError(message)
        warnings.warn(message, LeappInternalWarning, stacklevel=4)

    def _validate(self, graph: Graph, tries: list[tuple[Any, Any]]) -> Validation:
        """Run the original function and the graph on each (args, kwargs); compare the outputs."""
        from ..runtime.loops import reference

        names = {path: name for path, name in graph.traced.input_paths}
        sample_list = []
        plain = reference(self)  # a bounded `while` stops at its bound there (NumPy's may never end)
        for args, kwargs in tries:
            inputs = {names[path]: value for path, value in flatten_inputs(args, kwargs) if path in names}
            try:
                result = plain(*args, **kwargs)
            except dispatch.LoopBoundExceeded:
                continue  # an input that needs more iterations than the bound: the graph marks it NaN
            expected = align(result, graph.traced.output_spec)
            spec, leaves = output_structure(expected)
            outputs = {k: np.asarray(v) for k, v in leaves.items()}
            if spec != graph.traced.output_spec:
                raise ValidationError(f"{self.name}: on a validation sample the function returned a "
                                      f"different structure than when traced: control flow depends on "
                                      f"the data")
            sample_list.append((inputs, outputs))
        graph.samples = (graph.samples + sample_list)[-_KEPT_SAMPLES:]  # the tier checks fused code on them
        graph.validation = validate_samples(graph.node, sample_list)
        return graph.validation


def _lint_missed(missed: list[str], diagnostics: list[Any]) -> str:
    found = ", ".join(f"{d.code} at line {d.line}" for d in diagnostics) or "none"
    return (f"leapp lint did not flag {len(missed)} of these (a gap in lint; please report it): "
            + "; ".join(missed) + f". lint's findings for this function: {found}")


def _signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


# --- the repeat call ------------------------------------------------------------

_ndarray = np.ndarray
_thread = state.local  # its .trace is state.current(), read without the call
_MAX_FAST = 256
_UNSET = object()  # CompiledFunction._first_call: no result yet (the call runs as any other)
_KEPT_SAMPLES = 8
_clock = time.perf_counter
_POSITIONAL = repeat(None)  # the name of every positional argument in fast_key's single loop
_SCALARS = frozenset({int, float, bool, complex, str, bytes, type(None)})
_VALUED = frozenset({str, bytes, type(None)})  # constants of the graph; a Python number is an input
_I64 = 2**63


def fast_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """A key that fixes everything the graph was traced for, or None (then the general path runs).

    Plain ndarrays give their shape, strides and dtype, Python scalars their
    type and value (a float or complex its repr: -0.0 is not 0.0); anything
    else (tensors, containers, subclasses, objects) has no fast key. Equal
    keys mean equal ``samples.signature`` keys and the same argument layout,
    so a hit may skip binding and the signature walk.
    """
    key: list[Any] = [len(args)]
    add = key.append
    for k, v in chain(zip(_POSITIONAL, args, strict=False), kwargs.items()) if args else kwargs.items():
        if k is not None:
            add(k)
        t = type(v)
        if t is _ndarray:
            add(v.shape)
            add(v.strides)
            add(v.dtype)
        elif t in _SCALARS:
            add(t)
            if t in _VALUED or t is int and not -_I64 <= v < _I64:  # a number out of int64: a constant
                add(samples.exact(v))  # -0.0 is not 0.0, every NaN is one key: as the signature
        else:
            return None
    return tuple(key)


class _Marker:
    __slots__ = ("where",)

    def __init__(self, where: int | str) -> None:
        self.where = where


def _constant_leaves(spec: Any, path: str = "result") -> list[tuple[str, Any]]:
    """(path, value) of every Python value in a traced result's structure (``("const", value)``)."""
    kind = spec[0]
    if kind == "const":
        return [(path, spec[1])]
    if kind == "dict":
        return [leaf for k, sub in spec[1].items() for leaf in _constant_leaves(sub, f"{path}[{k!r}]")]
    if kind == "leaf":
        return []
    return [leaf for i, sub in enumerate(spec[2]) for leaf in _constant_leaves(sub, f"{path}[{i}]")]


class _FastCall:
    """A traced graph bound to one argument layout: pick the arrays, run the plan, rebuild."""

    __slots__ = ("picks", "plan", "spec", "single", "pairs", "direct", "scalars", "node", "generation", "tier",
                 "guards", "numbers", "fixed")
    picks: list[Any]  # int (a position) or str (a keyword)
    plan: Any
    spec: Any
    single: Any
    pairs: list[tuple[Any, Any]] | None
    direct: Any  # None (not known yet), False (the general way) or the plan's short way
    scalars: Any
    numbers: bool  # a Python number among the inputs: made a 0-d array per call (no direct way)
    fixed: Any  # (position or keyword, value) of each scalar argument traced as a constant, or None
    node: Any
    generation: int
    tier: Any
    guards: Any

    @classmethod
    def make(cls, graph: Graph, signature: inspect.Signature | None, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> _FastCall | None:
        # Where each graph input comes from in the raw call: bind markers as the call was bound.
        m_args: tuple[Any, ...] = tuple(_Marker(i) for i in range(len(args)))
        m_kwargs: dict[str, Any]
        m_kwargs = {k: _Marker(k) for k in kwargs}
        if signature is not None:
            bound = signature.bind(*m_args, **m_kwargs)
            m_args, m_kwargs = bound.args, bound.kwargs
        picks: list[Any] = []
        for path, _name in graph.traced.input_paths:
            if len(path) != 2:
                return None  # an array inside a container: the general path
            marker = m_args[path[1]] if path[0] == "args" else m_kwargs[path[1]]
            picks.append(marker.where)
        arrays = scalar_inputs_mod.fast_arrays([args[w] if type(w) is int else kwargs[w] for w in picks])
        fixed = scalar_inputs_mod.fixed(graph.specialised, m_args, m_kwargs, args, kwargs)
        if fixed is False:
            return None  # a constant inside a container: the general path
        self = cls()
        self.fixed = fixed
        self.picks = picks
        self.node = graph.node
        self.generation = graph.node.generation
        self.plan = graph.node.plan(arrays)
        self.tier = graph.tier if graph.tier is not None and graph.tier.watching else None
        self.guards = graph.guards
        self.spec = graph.traced.output_spec
        self.single = self.spec[1] if self.spec[0] == "leaf" else None
        # the usual result, a flat dict of arrays, is rebuilt without walking the spec
        flat = self.spec[0] == "dict" and all(v[0] == "leaf" for v in self.spec[1].values())
        self.pairs = [(k, v[1]) for k, v in self.spec[1].items()] if flat else None
        if self.single is not None:
            self.pairs = [(None, self.single)]
        self.direct = None
        # outputs NumPy returns as NumPy scalars (x.sum()): handed out as such, not as 0-d arrays
        self.scalars = graph.traced.scalar_outputs
        self.numbers = any(type(a) is not _ndarray for a in (args[w] if type(w) is int else kwargs[w]
                                                            for w in picks))  # a Python-number input
        if self.scalars or self.numbers:
            self.direct = False
        return self

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.generation != self.node.generation:  # the runner changed (a tier swap): a new plan
            self.generation = self.node.generation
            self.plan = None
            self.direct = False if self.scalars or self.numbers else None
        tier = self.tier
        if tier is None:
            return self._run(args, kwargs)
        if not tier.watching:
            self.tier = None
            return self._run(args, kwargs)
        t = _clock()
        out = self._run(args, kwargs)
        tier.note(_clock() - t)
        return out

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        direct = self.direct
        if direct:
            out = direct(args, kwargs)
            if out is not None:
                return out if self.single is None else out[None]
        arrays = [args[w] if type(w) is int else kwargs[w] for w in self.picks]
        if self.numbers:
            arrays = scalar_inputs_mod.fast_arrays(arrays)
        plan = self.plan
        if plan is None:
            plan = self.plan = self.node.plan(arrays)
        out = plan.run(arrays)
        if self.scalars:
            out = as_scalars(out, self.scalars)
        if direct is None:
            # after its first run the plan knows its outputs: the next calls may take the short way
            self.direct = self.pairs is not None and plan.direct(tuple(self.picks), tuple(self.pairs)) or False
        if self.single is not None:
            return out[self.single]
        if self.pairs is not None:
            return {k: out[n] for k, n in self.pairs}
        return rebuild(self.spec, out)


@contextmanager
def _outside_trace() -> Iterator[Any]:
    """Suspends the calling thread's trace for the block: ``cf.trace``/``cf.validate`` make this
    function's own graph from example values, whether called between seed-API nodes (the quiet
    gap trace, yielded so its values can be made plain) or inside an open node (whose trace
    nothing of this goes into: traced leaves are read as their values)."""
    active = state.current()
    if active is None:
        yield None
        return
    with state.suspended():
        yield active


def _plain_leaves(active: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    """The arguments with traced leaves as their values (a gap trace also notes where they came from)."""
    if active.quiet:
        args, kwargs, _ = _untraced_leaves(active, args, kwargs)
        return args, kwargs
    from ..runtime.torch_interop import TracedTensor
    from ..runtime.traced import TracedNpArray

    mapping: dict[Any, Any] = {}
    for path, value in flatten_inputs(args, kwargs):
        if isinstance(value, TracedTensor):
            mapping[path] = value.as_subclass(torch.Tensor)
        elif isinstance(value, TracedNpArray):
            mapping[path] = record.plain(value)
    return replace_leaves(args, kwargs, mapping)


def _untraced_leaves(gap: Any, args: Any, kwargs: Any) -> tuple[Any, Any, tuple[Any, ...]]:
    """The call's arguments with every traced leaf made plain, and the gap nodes of those leaves."""
    from ..runtime.torch_interop import TracedTensor
    from ..runtime.traced import TracedNpArray

    mapping: dict[Any, Any] = {}
    sources: list[Any] = []
    loc = user_location()
    for path, value in flatten_inputs(args, kwargs):
        if isinstance(value, TracedTensor):
            sources.append(record.to_ir(gap, value, loc, "a leapp.compile function"))
            mapping[path] = value.as_subclass(torch.Tensor)
        elif isinstance(value, TracedNpArray):
            sources.append(record.to_ir(gap, value, loc, "a leapp.compile function"))
            mapping[path] = record.plain(value)
    plain_args, plain_kwargs = replace_leaves(args, kwargs, mapping)
    return plain_args, plain_kwargs, tuple(sources)


def _run(graph: Graph, args: Any, kwargs: Any) -> Any:
    leaves = flatten_inputs(args, kwargs)
    tensors = [v for _, v in leaves if isinstance(v, torch.Tensor)]
    if not tensors:
        return rebuild(graph.traced.output_spec, as_scalars(_run_numpy(graph, leaves), graph.traced.scalar_outputs))
    names = {path: name for path, name in graph.traced.input_paths}
    device = tensors[0].device
    values = [v.to(device) if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v), device=device)
              for path, v in leaves if path in names]
    with torch.no_grad():
        out = graph.module_on(device)(*values)
    return rebuild(graph.traced.output_spec, out)


def _run_numpy(graph: Graph, leaves: Any) -> dict[str, Any]:
    """The graph's outputs by name on NumPy arguments (``leaves``: flattened), counted by the tier."""
    names = {path: name for path, name in graph.traced.input_paths}
    tier = graph.tier if graph.tier is not None and graph.tier.watching else None
    t = _clock()
    out = graph.node(**{names[path]: value for path, value in leaves if path in names})
    if tier is not None:
        tier.note(_clock() - t)
    return out
