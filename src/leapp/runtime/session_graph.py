"""A lowered node: its GraphModule, how to call it with NumPy, and how it is validated."""

from __future__ import annotations

import copy
import threading
import warnings
from typing import Any

import numpy as np
import torch

from ..errors import InputError, LeappInternalWarning, LeappWarning, ReductionOrderWarning
from . import state
from .backends import check_backend, compile_runner
from .build import check_dtypes, lower_graph, run_stacked
from .dtypes import tensor_from_numpy, tensor_to_numpy, to_torch
from .inputs import check_array_type
from .ir import _copy_array, format_loc

_from_numpy = torch.from_numpy
_ndarray = np.ndarray
_making = threading.Lock()  # one thread makes a node's GraphModule


# torch raises its own LinAlgError (a RuntimeError) where NumPy raises numpy.linalg.LinAlgError: a
# caller's `except np.linalg.LinAlgError` around a compiled call must still catch it
torch_linalg_error = torch.linalg.LinAlgError


def as_numpy_linalg_error(exc: BaseException) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{exc} (raised by the graph's torch.linalg kernel, where NumPy's "
                                 f"raises numpy.linalg.LinAlgError)")


class CompiledNode:
    """One traced node, compiled. Call it with NumPy keyword inputs; get a dict of NumPy outputs."""

    def __init__(self, name, graph_module, input_names, output_dtypes, problems=(), notes=(), input_specs=None):
        self.name = name
        # A GraphModule, or a build.Lowered graph whose GraphModule is made on first use
        self._gm = graph_module if isinstance(graph_module, torch.fx.GraphModule) else None
        self._lowered: Any = None if self._gm is not None else graph_module
        self.input_names = list(input_names)
        # name -> (dtype, shape) the graph was traced for; every call is checked against it
        self.input_specs = dict(input_specs or {})
        self._checks = [(n, *self.input_specs[n], to_torch(self.input_specs[n][0]))
                        for n in self.input_names if n in self.input_specs]
        self.output_names = list(output_dtypes)
        self.output_dtypes = dict(output_dtypes)
        self.problems = list(problems)
        self.notes = list(notes)
        self.validation = None
        self.scalar_operands = []  # (value, op, loc) of NumPy scalars the trace met as operands
        self.recorded_calls: frozenset = frozenset()  # the trace's ops, dropped ones too (from_trace)
        self.backend = "fx"
        self._runner = None  # code compiled from the graph (a backend), or None: the GraphModule runs
        self._compiled_for = None  # [(shape, dtype)] of each input, for a compiled runner
        self._plans = {}  # input layout -> CallPlan
        # Bumped whenever the runner changes (a tier swap from another thread): callers that keep
        # a plan (compiler.function._FastCall) compare it and fetch a new one.
        self.generation = 0
        self._runner_lock = threading.Lock()  # a plan is made and the runner swapped one at a time
        self._aliased = None  # outputs sharing memory with an input or a constant (see CallPlan)
        self._on_device = {}  # torch.device -> (the code it was copied at, the graph on that device)
        self._own_forward = None  # (the Lowered, runner, constants) of runtime.forward's code
        self.self_check = []
        # (stack, outputs): the graph's outputs on the differential check's stacked inputs, made
        # by from_trace's own run of the graph (build.run_stacked) for the check to take once
        self.stacked_outputs = None
        # the self-check ran on the stack's block of the traced sample: the graph on the sample
        # alone is still to be seen (the first call's run, or settle_self_check)
        self.unverified = False

    def take_stacked(self, stack):
        """The outputs ``from_trace`` computed on ``stack`` (once), or None."""
        held, self.stacked_outputs = self.stacked_outputs, None
        return held[1] if held is not None and held[0] is stack else None

    @classmethod
    def from_trace(cls, trace, notes=(), stacked=None):
        """``stacked``: (tensors in input order, stack), the differential check's inputs stacked
        (``compiler.check.Stack``): the graph's run that checks its dtypes runs on them in place of
        the traced sample (``build.run_stacked``), and the check takes its outputs
        (``take_stacked``); the self-check on the sample alone is then the first call's run."""
        with state.collector_relaxed():  # lowering allocates as much as recording
            gm = lower_graph(trace, trace.outputs)
            on_stack = None if stacked is None else run_stacked(gm, stacked[0], stacked[1].n + 1)
            checked = None
            if on_stack is None:
                inputs = [tensor_from_numpy(v) for v in trace.input_values.values()]
                checked = check_dtypes(gm, inputs)
        dtypes = {k: np.asarray(v).dtype for k, v in trace.output_values.items()}
        specs = {k: (np.dtype(n.dtype), tuple(n.shape)) for k, n in trace.inputs.items()}
        node = cls(trace.name, gm, trace.inputs, dtypes, trace.problems, notes, input_specs=specs)
        node.scalar_operands = _numpy_scalar_operands(trace)
        # every NumPy call the function made, also those whose result the graph drops (an unused
        # svd): what running the function again on an input does (export/write.py's NUMPY_HANGS_ON_INF)
        node.recorded_calls = frozenset(n.op for n in trace.nodes)
        if on_stack is None:
            node._self_check(trace, checked)
        else:  # the self-check is the first call's own run on the sample (or _settle_self_check)
            node.stacked_outputs = (stacked[1], on_stack)
            node.unverified = True
        node.fx_forward()  # the code every call and the differential check run: part of lowering
        return node

    @property
    def graph_module(self) -> torch.fx.GraphModule:
        """The graph as a ``torch.fx.GraphModule`` (made, and its forward() written, on first use)."""
        gm = self._gm
        if gm is None:
            with _making:
                gm = self._gm
                if gm is None:
                    gm = self._gm = self._lowered.module()
                    self._lowered = None
                    made = True
                else:
                    made = False
            if made:  # plans running leapp's own forward move to the GraphModule's (hooks, rewrites)
                with self._runner_lock:
                    self._plans = {}
                    self.generation += 1
        return gm

    @graph_module.setter
    def graph_module(self, gm: torch.fx.GraphModule) -> None:
        self._gm, self._lowered = gm, None

    def fx_forward(self):
        """``(run, constants)``: what runs the FX graph on tensors, and the constant tensors it holds.

        The GraphModule's forward once it is made (as ``_forward_of``); before that, the same
        graph's forward written by ``runtime.forward`` (a fraction of the GraphModule's fixed
        cost), which makes the GraphModule only when an ``nn.Module`` hook is registered."""
        lowered = self._lowered
        if lowered is None or self._gm is not None:
            gm = self.graph_module
            return _forward_of(gm), list(gm.buffers())
        mine = self._own_forward
        if mine is None or mine[0] is not lowered:
            from .forward import make_forward

            fn, constants = make_forward(lowered.graph, lowered.root)
            mine = self._own_forward = (lowered, _hooked(self, fn), constants)
        return mine[1], mine[2]

    @property
    def runner(self):
        """What runs NumPy calls of the compiled layout: the GraphModule, or a backend's code."""
        return self.graph_module if self._runner is None else self._runner

    def _self_check(self, trace, checked=None):
        """The graph must reproduce the traced sample itself; if not, an adapter is wrong, or float
        accumulations ordered unlike NumPy's were magnified (then said so, at every trace).

        ``checked``: the graph's output on the sample from the dtype check, when
        that ran the final graph (nothing repaired); else the graph runs again.
        """
        if checked is None:
            got = self(**trace.input_values)
        else:
            got = {k: tensor_to_numpy(checked[k], self.output_dtypes[k]) for k in self.output_names}
        self.self_check = []  # the unexplained failures below: leapp.compile's strict mode refuses them
        for key, want in trace.output_values.items():
            if _close(got[key], want, 1e-5, 1e-6):
                continue
            error = _max_err(got[key], want)
            if any(p.kind == "refused" for p in trace.problems):
                continue  # already refused for a known difference (conventions.py): not a leapp bug
            sums = float_accumulations(self.graph_module, key)
            if sums:
                what = (f"node {self.name!r} output {key!r}: the graph differs from NumPy on the traced "
                        f"sample itself (max error {error})")
                warn_reduction_order(what, sums)  # as exact as float sums allow: warned, not refused
                continue
            message = (
                f"node {self.name!r} output {key!r}: the graph does not reproduce the traced "
                f"sample itself (max error {error}). This is a leapp bug, "
                f"unless the computation is ill-conditioned at this input: torch and NumPy round "
                f"exp/sin/pow... within an ulp but not alike, and a floor, a remainder or a large "
                f"sin argument downstream can magnify that; validate on other inputs to tell")
            self.self_check.append(message)
            warnings.warn(message, LeappInternalWarning, stacklevel=3)

    def optimize(self):
        """Run the graph passes (``leapp.runtime.passes``) in place; returns their report.

        Not part of ``from_trace``: the lowered graph stays exactly what was recorded.
        """
        from .passes import optimize

        self.optimize_report = optimize(self.graph_module)
        return self.optimize_report

    def use_backend(self, backend, inputs, outputs):
        """Run this node with ``backend`` (``leapp.runtime.backends``) from now on.

        The runner is compiled for the shapes and dtypes of ``inputs`` (name ->
        array) and must reproduce NumPy's ``outputs`` on them; if it does not,
        the FX graph keeps running and a ``LeappWarning`` says why.
        """
        check_backend(backend)
        arrays = [np.asarray(inputs[n]) for n in self.input_names]
        runner = compile_runner(self.graph_module, [tensor_from_numpy(a) for a in arrays], backend)
        before = (self.backend, self._runner, self._compiled_for)
        self.adopt_runner(backend, runner, [(a.shape, a.dtype) for a in arrays])
        got = self(**inputs)
        bad = [k for k, want in outputs.items() if not _close(got[k], want, 1e-5, 1e-6)]
        if bad:
            self.adopt_runner(*before)
            warnings.warn(f"node {self.name!r}: the {backend} backend's code does not reproduce NumPy on the "
                          f"traced sample (output {bad[0]!r}, max error {_max_err(got[bad[0]], outputs[bad[0]])}); "
                          f"running the FX graph instead", LeappWarning, stacklevel=2)
        return self.backend

    def adopt_runner(self, backend, runner, compiled_for):
        """Run NumPy calls of the layouts ``compiled_for`` ([(shape, dtype)] per input) with
        ``runner`` from now on; safe while other threads call the node (a call under way finishes
        on the runner it started with)."""
        with self._runner_lock:
            self._compiled_for = compiled_for
            self.backend, self._runner = backend, runner
            self._plans = {}
            self.generation += 1

    def plan(self, arrays):
        """The ``CallPlan`` for these NumPy input arrays (one per layout, made on first use)."""
        key = tuple((type(a), a.shape, a.strides, a.dtype) for a in arrays)
        plan = self._plans.get(key)
        if plan is None:
            with self._runner_lock:  # not half-way through a swap: the plan sees one runner
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._plans[key] = CallPlan(self, arrays)
        return plan

    def run_torch(self, *args, **inputs):
        """Run the graph on torch tensors (any device; the graph's constants go to the inputs'
        device, once per device); returns a dict of tensors."""
        values = self._checked(_bind(self.input_names, args, inputs))
        device = next((v.device for v in values if isinstance(v, torch.Tensor)), None)
        with torch.no_grad():
            return self.module_on(device)(*values)

    def module_on(self, device):
        """The graph with its constants on ``device`` (the GraphModule itself for the CPU or None);
        a copy per device, made again when the graph has been rewritten since (``optimize``)."""
        gm = self.graph_module
        if device is None or device.type == "cpu":
            return gm
        code, moved = self._on_device.get(device, (None, None))
        if code is not gm.code:
            moved = copy.deepcopy(gm).to(device)
            self._on_device[device] = (gm.code, moved)
        return moved

    def __call__(self, *args, **inputs):
        """Run on NumPy inputs (positional, or by name); returns {output name: ndarray}.

        Torch tensors are accepted too (moved to the CPU).
        """
        try:
            return self._run(self._checked(_bind(self.input_names, args, inputs)))
        except torch_linalg_error as exc:
            raise as_numpy_linalg_error(exc) from exc

    def call_batched(self, *args, **inputs):
        """As calling the node, with the leading axis of every input free (dtypes and the other axes
        are still checked). For a dynamic-batch export, which probes that the graph follows the batch."""
        try:
            return self._run(self._checked(_bind(self.input_names, args, inputs), free_batch=True))
        except torch_linalg_error as exc:
            raise as_numpy_linalg_error(exc) from exc

    def _run(self, values):
        arrays = [v if type(v) is _ndarray else _as_array(v) for v in values]
        return self.plan(arrays).run(arrays)

    def _checked(self, values, free_batch=False):
        """The inputs as arrays or tensors, each of the dtype and shape the graph was traced for.

        A graph is exact only for those: a ``(2, 3)`` input into a ``(3,)`` graph, or int64 into a
        float32 one, would run and return something, silently wrong. A seed-API node cannot
        trace again (its code ran between annotate calls), so it refuses.
        """
        out = list(values)
        for i, (name, dtype, shape, torch_dtype) in enumerate(self._checks):
            v = out[i]
            if isinstance(v, torch.Tensor):
                if v.dtype != torch_dtype or not _same_shape(tuple(v.shape), shape, free_batch):
                    raise self._mismatch(name, dtype, shape, f"a {v.dtype} tensor of shape {list(v.shape)}")
                continue
            if type(v) is not np.ndarray:
                check_array_type(v, f"node {self.name!r} input {name!r}")
                v = out[i] = np.asarray(v)
            if not _same_shape(v.shape, shape, free_batch) or (
                    v.dtype != dtype and v.dtype.newbyteorder("=") != dtype.newbyteorder("=")):
                raise self._mismatch(name, dtype, shape, f"{v.dtype}{list(v.shape)}")
        return out

    def _mismatch(self, name, dtype, shape, got):
        return InputError(
            f"node {self.name!r} input {name!r}: the graph was traced for {dtype}{list(shape)}, got {got}. "
            f"A graph is exact only for the shapes and dtypes it was traced for; convert the input "
            f"(x.astype(np.{dtype.name})), trace the node again with inputs like this one, or use "
            f"leapp.compile, which traces once per signature")

    @property
    def code(self) -> str:
        return self.graph_module.code

    def report(self) -> str:
        lines = [f"node {self.name!r}: {len(self.graph_module.graph.nodes)} graph nodes, "
                 f"inputs {self.input_names}, outputs {self.output_names}"]
        for p in self.problems:
            lines.append(f"  problem: {p}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        if self.validation is not None:
            lines.append("  " + self.validation.describe().replace("\n", "\n  "))
        return "\n".join(lines)


def _same_shape(got, traced, free_batch):
    if got == traced:
        return True
    return free_batch and len(got) == len(traced) and len(got) > 0 and got[1:] == traced[1:]


def _as_array(v):
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().resolve_conj().numpy()
    return np.asarray(v)


class CallPlan:
    """How to run a node on NumPy arrays of one layout (type, shape, strides, dtype of each input).

    Decided on the first call with that layout, then reused, so a repeat call
    does no checks beyond the layout key: inputs are viewed as tensors without
    a copy (``torch.from_numpy``) where torch can (native byte order, no
    negative stride, writeable; a compiled runner also wants C order), outputs
    are viewed as arrays (``.numpy()``) except the ones that share memory with
    an input or a graph constant, which are copied so that writing into a
    result never changes the graph or the caller's inputs behind their back.
    """

    __slots__ = ("node", "runner", "views", "names", "plain", "quiet", "_direct")

    def __init__(self, node, arrays):
        compiled = node._runner is not None
        fits = compiled and [(a.shape, a.dtype) for a in arrays] == node._compiled_for
        self.node = node
        self.runner = node._runner if fits else node.fx_forward()[0]
        self.views = [a.dtype.isnative and min(a.strides, default=0) >= 0
                      and (not fits or a.flags.c_contiguous) for a in arrays]
        self.names = node.output_names
        self.plain = None  # output names that convert with a bare .numpy(), known after one run
        self.quiet = False  # torch warns about its own kernels here (ldexp's resize): silence it
        self._direct = {}  # (picks, pairs) -> the closure ``direct`` made

    def direct(self, picks, pairs):
        """A function ``(args, kwargs) -> {key: array}`` for the common repeat call, or None.

        ``picks`` says where each input lies in a call (an int: that positional
        argument; a str: that keyword), ``pairs`` which output goes under which
        key of the result. The function views every input (``torch.from_numpy``),
        runs the runner and views every output (``.numpy()``), with nothing
        else per call: it exists only once the plan has run (``plain`` known)
        and when that is all a call needs (every input viewable, every output
        plain, no warning to silence). A read-only input, which torch cannot
        view, makes it return None: then ``run`` handles that call.
        """
        key = (picks, pairs)
        if key in self._direct:
            return self._direct[key]
        fn = None
        if (self.plain is not None and all(self.views) and not self.quiet
                and self.plain == frozenset(self.names)):
            fn = _make_direct(self.runner, picks, pairs)
        self._direct[key] = fn
        return fn

    def run(self, arrays):
        tensors = [_from_numpy(a) if view and a.flags.writeable else tensor_from_numpy(a)
                   for a, view in zip(arrays, self.views, strict=True)]
        plain = self.plain
        if plain is None:
            out = self._first_run(tensors)
            plain = self.plain = self._plain_outputs(out, tensors)
        elif self.quiet:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                out = self.runner(*tensors)
        else:
            out = self.runner(*tensors)
        return {k: out[k].numpy() if k in plain else self._convert(k, out[k]) for k in self.names}

    def _first_run(self, tensors):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = self.runner(*tensors)
        for w in caught:
            if issubclass(w.category, UserWarning):
                self.quiet = True  # a torch implementation detail, not the user's concern
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return out

    def _convert(self, name, tensor):
        return _copy_array(tensor_to_numpy(tensor, self.node.output_dtypes[name]), copy=True)

    def _plain_outputs(self, out, tensors):
        node = self.node
        if node._aliased is None:
            fx, constants = node.fx_forward()
            fx_out = out if self.runner is not node._runner else fx(*tensors)  # the plan ran the FX graph
            owned = {t.untyped_storage().data_ptr() for t in tensors}
            owned.update(b.untyped_storage().data_ptr() for b in constants)
            node._aliased = {k for k in node.output_names
                             if fx_out[k].untyped_storage().data_ptr() in owned}
        return frozenset(k for k in self.names if k not in node._aliased
                         and node.output_dtypes[k].isnative  # a view of a big-endian input stays one
                         and out[k].dtype == to_torch(node.output_dtypes[k])
                         and not out[k].is_conj() and not out[k].requires_grad)


_module = torch.nn.modules.module
_GLOBAL_HOOKS = (_module._global_forward_hooks, _module._global_forward_pre_hooks,
                 _module._global_backward_hooks, _module._global_backward_pre_hooks)


def _forward_of(gm):
    """What runs ``gm``: its current ``forward`` (a recompile replaces it on the class), without
    ``nn.Module.__call__`` around it (about 4 us a call at batch 1) while no hook is registered,
    on the module or globally; through the module as usual otherwise."""
    cls = type(gm)
    own = (gm._forward_hooks, gm._forward_pre_hooks, gm._backward_hooks, gm._backward_pre_hooks)
    hooks = own + _GLOBAL_HOOKS

    def run(*tensors):
        for h in hooks:
            if h:
                return gm(*tensors)
        return cls.forward(gm, *tensors)

    return run


def _hooked(node, fn):
    """``fn`` (leapp's forward for ``node``), through the GraphModule while a global ``nn.Module``
    hook is registered: a hook sees every module call, and leapp's forward has no module."""
    hooks = _GLOBAL_HOOKS

    def run(*tensors):
        for h in hooks:
            if h:
                return node.graph_module(*tensors)
        return fn(*tensors)

    return run


def _make_direct(runner, picks, pairs):
    from_numpy = _from_numpy

    def direct(args, kwargs):
        tensors = []
        for w in picks:
            a = args[w] if type(w) is int else kwargs[w]
            if not a.flags.writeable:
                return None
            tensors.append(from_numpy(a))
        out = runner(*tensors)
        return {k: out[n].numpy() for k, n in pairs}

    return direct


def _bind(names, args, kwargs):
    if args and kwargs:
        raise TypeError("pass inputs either positionally or by name, not both")
    if args:
        if len(args) != len(names):
            raise TypeError(f"expected {len(names)} inputs {names}, got {len(args)}")
        return list(args)
    if len(kwargs) == len(names):
        try:
            return [kwargs[n] for n in names]
        except KeyError:
            pass
    missing = [n for n in names if n not in kwargs]
    extra = [k for k in kwargs if k not in names]
    if missing or extra:
        raise TypeError(f"inputs are {names}; missing {missing}, unexpected {extra}")
    return [kwargs[n] for n in names]


def _close(got, want, rtol, atol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if (got == want).all():  # the usual case, and a tenth of allclose's cost (NaN falls through)
        return True
    if want.dtype.kind in "fc":
        # a few units in the last place: float16 sums round differently in torch
        # (it accumulates in float32), and rtol=1e-5 is below float16's resolution
        rtol = max(rtol, 4 * float(np.finfo(want.dtype).resolution))
        return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(got, want))


def _max_err(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} vs {want.shape}"
    if got.size == 0:
        return 0.0
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    diff = np.where(np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)), 0.0, diff)
    return float(np.nanmax(diff)) if diff.size else 0.0


class Validation:
    """Per output: the largest error over every validation sample, and what to suspect on failure."""

    def __init__(self, node, n_samples, errors, failures, scales=None):
        self.node = node
        self.n_samples = n_samples
        self.errors = errors  # output -> largest abs error
        self.failures = failures  # list of (sample index, output, error)
        self.scales = scales or {}  # output -> largest |NumPy value| where it failed

    @property
    def ok(self) -> bool:
        return not self.failures

    def describe(self) -> str:
        if self.n_samples == 0:
            return f"validation of {self.node.name!r}: no sample after the first pass (nothing checked)"
        head = "passed" if self.ok else "FAILED"
        lines = [f"validation of {self.node.name!r} {head} on {self.n_samples} sample(s):"]
        for key, err in self.errors.items():
            lines.append(f"  {key}: largest error {err}")
        if not self.ok:
            lines.append(f"  {len(self.failures)} mismatch(es); first: sample {self.failures[0][0] + 1}, "
                         f"output {self.failures[0][1]!r}, error {self.failures[0][2]}")
            failed = sorted({f[1] for f in self.failures if f[1] != "*"}) or None
            # accumulation order moves a result by some eps of its magnitudes: an error of a
            # thousandth of the values is something else (unless nothing else is suspect)
            small = all(isinstance(e, float) and e <= 1e-3 * self.scales.get(k, 0.0)
                        for _, k, e in self.failures if k != "*")
            lines.extend("  " + s for s in suspects(self.node, failed, orders_plausible=small))
        return "\n".join(lines)


def suspects(node, outputs=None, orders_plausible=True):
    """Constants and calls that could freeze data into the graph, most suspicious first; then float
    accumulations (of the graph, or feeding ``outputs``) whose order differs from NumPy's, unless
    the errors are too large for that (``orders_plausible`` false) and something else is suspect."""
    out = []
    for p in node.problems:
        out.append(f"suspect: {p}")
    for n in node.graph_module.graph.nodes:
        if n.op != "get_attr":
            continue
        origin = n.meta.get("leapp_frozen_from")
        if origin is not None:
            out.append(f"suspect constant {n.target}: frozen from {origin[0]} at {format_loc(origin[1])}")
    for value, op, loc in node.scalar_operands:
        short = "np." + type(value).__name__
        out.append(f"suspect NumPy scalar {value!r} used by {op} at {format_loc(loc)}: if it was computed "
                   f"from traced data ({short}(x) of a 0-d {value.dtype} value), it is "
                   f"frozen; keep it a 0-d array: x.astype({short}) or x.reshape(())")
    sums = []
    for key in (outputs if outputs is not None else [None]) if orders_plausible or not out else ():
        sums += [s for s in float_accumulations(node.graph_module, key) if s not in sums]
    if sums:
        out.append("suspect float accumulations, which torch orders differently than NumPy: "
                   + ", ".join(f"{call} at {source}" for call, source in sums)
                   + f" ({REDUCTION_BOUND}); later subtraction or large factors magnify that")
    if not out:
        for n in node.graph_module.graph.nodes:
            if n.op == "get_attr":
                users = ", ".join(sorted({u.meta.get("leapp_source") or "?" for u in n.users}))
                out.append(f"constant {n.target} (used at {users}): was it computed from the input "
                           f"outside the traced region?")
    return out or ["no constant in the graph: the mismatch comes from the graph itself (a leapp bug)"]


# Ops whose float result depends on the order of accumulation. Measured by
# benchmarks/reduction_order.py (float32, 1e3..1e7 elements): |torch - NumPy| <= 1.01 eps*sum|x|
# over a whole array, 2.7 along the last axis, 17 along a first axis of 1,000 rows (NumPy adds
# strided rows one by one there, so it grows with the axis length).
_ACCUMULATING = frozenset(
    "sum mean nansum nanmean cumsum nancumsum var std nanvar nanstd average prod nanprod cumprod "
    "nancumprod add.reduce add.accumulate multiply.reduce multiply.accumulate dot matmul vdot inner "
    "tensordot einsum trace norm vector_norm matrix_norm multi_dot vecdot".split())
REDUCTION_BOUND = ("measured: up to 3 eps*sum(|x|) over a whole array or the last axis, about "
                   "20 eps*sum(|x|) along a first axis of 1,000 rows; see docs/limitations.md")


def float_accumulations(graph_module, output=None):
    """``(call, source line)`` of every float sum-like op in the graph (with ``output``: those the
    output depends on), in graph order."""
    nodes = list(graph_module.graph.nodes)
    if output is not None:
        result = next(n for n in nodes if n.op == "output").args[0]
        root = result.get(output) if isinstance(result, dict) else None
        if not isinstance(root, torch.fx.Node):
            return []
        keep, stack = set(), [root]
        while stack:
            n = stack.pop()
            if n not in keep:
                keep.add(n)
                stack.extend(n.all_input_nodes)
        nodes = [n for n in nodes if n in keep]
    found = []
    for n in nodes:
        call = n.meta.get("leapp_call")
        dtype = n.meta.get("leapp_dtype")
        if not call or dtype is None or np.dtype(dtype).kind not in "fc":
            continue
        short = call.removeprefix("ndarray.").removeprefix("numpy.").removeprefix("linalg.")
        if short in _ACCUMULATING and (call, n.meta.get("leapp_source")) not in found:
            found.append((call, n.meta.get("leapp_source") or "<unknown>"))
    return found


def warn_reduction_order(what, sums):
    """Warn, at the line of the first accumulation, each time (no once-per-line filter)."""
    where = ", ".join(f"{call} at {source}" for call, source in sums)
    message = (f"{what}, and it depends on float accumulations that torch orders differently than "
               f"NumPy: {where} ({REDUCTION_BOUND}); later subtraction or large factors magnify "
               f"that. If the result must match NumPy closely, accumulate in float64 "
               f"(x.astype(np.float64)) or avoid the cancellation")
    path, line = _path_line(sums[0][1])
    if path is None:
        warnings.warn(message, ReductionOrderWarning, stacklevel=4)
    else:
        warnings.warn_explicit(message, ReductionOrderWarning, path, line, registry={})


def _path_line(source):
    parts = source.rsplit(":", 2)
    for head, tail in ((parts[0], parts[1:]), (":".join(parts[:2]), parts[2:])):
        if tail and tail[0].isdigit():
            return head, int(tail[0])
    return None, None


def _numpy_scalar_operands(trace):
    """NumPy scalars used as operands: NumPy's scalar types and ``.item()`` hand out values that
    no hook sees, so one computed from the inputs reaches the graph as a literal."""
    found = []
    for n in trace.nodes:
        if n.op in ("input", "const"):
            continue
        for a in (*n.args, *(n.kwargs or {}).values()):
            if isinstance(a, np.generic) and not isinstance(a, np.bool_):
                found.append((a, n.op, n.loc))
    return found


def validate_samples(node, samples, rtol=1e-5, atol=1e-6):
    errors = {k: 0.0 for k in node.output_names}
    failures = []
    scales: dict[str, Any] = {}
    for i, (inputs, outputs) in enumerate(samples):
        try:
            got = node(**inputs)
        except Exception as exc:  # a data-dependent shape the graph cannot follow, etc.
            failures.append((i, "*", f"graph raised {type(exc).__name__}: {exc}"))
            continue
        for key in node.output_names:
            err = _max_err(got[key], outputs[key])
            if isinstance(err, float):
                errors[key] = max(errors[key], err)
            if not _close(got[key], outputs[key], rtol, atol):
                failures.append((i, key, err))
                want = np.asarray(outputs[key])
                if want.dtype.kind in "fc" and want.size:
                    finite = np.abs(want[np.isfinite(want)])
                    scales[key] = max(scales.get(key, 0.0), float(finite.max()) if finite.size else 0.0)
    return Validation(node, len(samples), errors, failures, scales)
