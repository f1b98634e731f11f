"""Where compile time goes: the seed and robot examples, phase by phase, in one run.

    PYTHONPATH=src taskset -c 1 .venv/bin/python benchmarks/compile_split.py [--repeats 30]

For ``leapp.compile`` on each example (first call of a fresh decoration, the
FX tier, no fused compile): static pass (read, lint, rewrite at decoration),
trace (recording), lower (the FX graph), dtype check + self-check, cross-check
(static verdicts against what was recorded), the default differential check
(the graph against the function on ``check=3`` generated inputs), escape
detection, the call itself (binding, plan, the first run), and validation when
asked (``validate=N``). Each phase is exclusive (a phase inside another is
taken out of the outer one) and is the best of ``--repeats`` rounds of this
process's CPU time (a shared machine's other processes do not count; they still
slow the caches), so compare phases within one run.

Every phase is also given as a ratio to the trace, and the trace is the
recording alone: what the user waits for while the function records (the
hooks, the function's own NumPy run under them, collecting the outputs), not
lowering or the checks after it. This is issue 21's budget: the differential
check and escape detection at most 0.5 of the trace on the robot example. (A
second benchmark, ``check_cost.py``, divided by the whole first call with both
off, trace + lower + self-check + cross-check + first run, about four times
the recording: 0.28x there was about 1x here. It is gone; this one prints both
denominators.) The escape watch (a weak reference to every traced array the
recording makes) runs inside the recording, so its cost is the recording with
it on minus with it off (``tracing.WATCH_ESCAPES``, every other round); the
search after the call has its own row.

The check's floor is printed too: where the arguments share their rows (the
robot example's batch), the check stacks its ``check`` generated inputs and the
example into one batch, made before the trace (``check.stack_for``, counted in
the check's row), and runs the function once under plain NumPy on it; the graph
runs once on it too, as the lowering's own run (``build.run_stacked``, the run
that checks every node's dtype, on the stack in place of the example alone).
What that run costs over the example's alone (the lowering's row with
``check=0``, every other round) is added to the check's cost; the self-check
on the example alone is then the first call's own run (in the call's row). The
next line times the runs the check makes itself inside a fresh decoration's
first call, after the trace and the lowering have left the caches cold.

The seed example also goes through the seed API (``leapp.start`` ..
``compile_graph``): trace, lower + checks, the first call, validation on the
later frames. Goal (issue 21): the seed example traced, lowered and checked
(dtype check + self-check) in under 1 ms.
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings

import numpy as np
import torch

import leapp
import leapp.api
from leapp.compiler import check, crosscheck, function, source
from leapp.compiler import seed as seed_check
from leapp.compiler.check import DEFAULT_SAMPLES
from leapp.examples import robot_obs
from leapp.examples.seed import STATE_MEAN, STATE_STD
from leapp.runtime import build, loops, session_graph, tracing
from leapp.runtime.session_graph import CompiledNode

# CPU time of this process: on a shared machine the wall clock also counts the time other
# processes hold the core, which is most of it under load; leapp's compile runs in this thread.
_clock = time.process_time
LOWER = "lower_graph"  # what CompiledNode.from_trace calls to build the FX graph
TRACE = "trace (recording)"
CHECK = "differential check (leapp.compile's default check=3)"
SEARCH = "escape detection (arrays still held after the call)"


def seed_step(state, velocity):
    return np.concatenate([np.clip((state - STATE_MEAN) / STATE_STD, -5.0, 5.0), velocity])


SEED_INPUTS = {"state": np.linspace(-1.0, 1.0, 6, dtype=np.float32),
               "velocity": np.array([0.5, -0.25, 1.0], np.float32)}


class Phases:
    """Wraps functions so that each call adds its seconds to a phase, exclusive: a phase that runs
    inside another (the GraphModule made during validation) is taken out of the outer one."""

    def __init__(self):
        self.seconds = {}
        self._undo = []
        self._stack = []

    def wrap(self, owner, attr, phase, kind=None):
        real = inspect.getattr_static(owner, attr)
        fn = real.__func__ if isinstance(real, (classmethod, staticmethod)) else real

        def timed(*args, **kwargs):
            self._stack.append(phase)
            t = _clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = _clock() - t
                self._stack.pop()
                self.seconds[phase] = self.seconds.get(phase, 0.0) + spent
                if self._stack:
                    outer = self._stack[-1]
                    self.seconds[outer] = self.seconds.get(outer, 0.0) - spent

        wrapped = classmethod(timed) if isinstance(real, classmethod) else timed
        setattr(owner, attr, wrapped)
        self._undo.append((owner, attr, real))

    def restore(self):
        for owner, attr, real in reversed(self._undo):
            setattr(owner, attr, real)
        self._undo.clear()


def through_compile(fn, inputs, repeats, validate):
    """{phase: best seconds} of decorating ``fn`` and calling it once; with every other round
    also made with the escape watch off (and no check), for what the watch costs the recording."""
    rows = {}
    for i in range(2 * repeats):
        watch = i % 2 == 0
        tracing.WATCH_ESCAPES = watch
        p = Phases()
        p.wrap(source, "read", "static pass")
        p.wrap(source, "build", "static pass (rewrite)")
        p.wrap(function, "trace_function", "trace_function")
        p.wrap(CompiledNode, "from_trace", "from_trace")
        p.wrap(session_graph, LOWER, "lower")
        p.wrap(build.Lowered, "module", "GraphModule")
        p.wrap(crosscheck, "check", "cross-check")
        p.wrap(function.CompiledFunction, "_validate", "validation")
        p.wrap(function.CompiledFunction, "_differential_check", "differential")
        p.wrap(check, "stack_for", "differential")  # its inputs, made before the trace
        p.wrap(tracing, "_report_escapes", "escapes")  # traced arrays still held after the call
        try:
            t = _clock()
            cf = leapp.compile(fn, tier="fx", validate=validate, **({} if watch else {"check": 0}))
            t_dec = _clock()
            cf(**inputs)
            t_end = _clock()
        finally:
            p.restore()
            tracing.WATCH_ESCAPES = True
        s = p.seconds
        if not watch:
            rows.setdefault("recording, escape watch off", []).append(s["trace_function"])
            # no check, so no stack: the lowering's own run of the graph is on the example alone
            rows.setdefault("dtype check + self-check, no stack", []).append(s["from_trace"])
            continue
        static = s.get("static pass", 0.0) + s.get("static pass (rewrite)", 0.0)
        phases = {
            "static pass (decoration)": static,
            TRACE: s["trace_function"],
            "lower (FX graph)": s["lower"],
            "dtype check + self-check": s["from_trace"],
            "cross-check": s.get("cross-check", 0.0),
            "validation": s.get("validation", 0.0),
            "GraphModule made (torch.fx writes forward())": s.get("GraphModule", 0.0),
        }
        phases[CHECK] = s.get("differential", 0.0)
        phases[SEARCH] = s.get("escapes", 0.0)
        phases["call (bind, plan, first run)"] = t_end - t_dec - sum(phases.values()) + static
        phases["decoration, other"] = t_dec - t - static
        for k, v in phases.items():
            rows.setdefault(k, []).append(v)
    return {k: min(v) for k, v in rows.items()}


def floor(fn, inputs, repeats, samples):
    """(seconds of one plain NumPy run of ``fn``, seconds of one run of its graph), each on the
    example repeated ``samples + 1`` times along its rows, best of ``repeats``: what the
    differential check cannot do without where it stacks its inputs (check.py, _agrees_stacked:
    its ``samples`` generated inputs and the example, one run of each on the stack)."""
    cf = leapp.compile(fn, tier="fx", check=0)
    cf(**inputs)
    node = cf._latest().node
    run, _ = node.fx_forward()
    rows = {np.shape(v)[0] if np.ndim(v) else None for v in inputs.values()}
    stacks = len(rows) == 1 and None not in rows  # else the check runs each input alone
    calls = [{k: np.concatenate([v] * (samples + 1)) for k, v in inputs.items()}] if stacks else [inputs] * samples
    tensors = [torch.from_numpy(np.ascontiguousarray(calls[0][name])) for name in node.input_names]
    numpy_runs, graph_run = [], []
    for _ in range(repeats):
        t = _clock()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for call in calls:
                fn(**{k: v.copy() for k, v in call.items()})
        numpy_runs.append(_clock() - t)
        t = _clock()
        with torch.no_grad():
            run(*tensors)
        graph_run.append(_clock() - t)
    return min(numpy_runs), min(graph_run)


def floor_in_check(fn, inputs, repeats):
    """(seconds of the check's NumPy runs, seconds of its graph runs), each as the check itself ran
    them in a fresh decoration's first call (best of ``repeats``): the floor with the caches as the
    trace and lowering before it leave them, not as a loop of the same call warms them."""
    spent = {"numpy": 0.0, "graph": 0.0}
    inside = [False]

    def timed(what, run):
        def call(*args, **kwargs):
            if not inside[0]:
                return run(*args, **kwargs)
            t = _clock()
            try:
                return run(*args, **kwargs)
            finally:
                spent[what] += _clock() - t
        return call

    real_check = function.CompiledFunction._differential_check
    real_reference, real_forward, real_call = check.loops.reference, CompiledNode.fx_forward, CompiledNode.__call__

    def differential(self, *args, **kwargs):
        inside[0] = True
        try:
            return real_check(self, *args, **kwargs)
        finally:
            inside[0] = False

    def fx_forward(self):
        run, constants = real_forward(self)
        return timed("graph", run), constants

    function.CompiledFunction._differential_check = differential
    check.loops = type("Loops", (), {"reference": staticmethod(lambda cf: timed("numpy", real_reference(cf)))})
    CompiledNode.fx_forward = fx_forward
    CompiledNode.__call__ = timed("graph", real_call)
    rows = []
    try:
        for _ in range(repeats):
            spent.update(numpy=0.0, graph=0.0)
            leapp.compile(fn, tier="fx")(**inputs)
            rows.append((spent["numpy"], spent["graph"]))
    finally:
        function.CompiledFunction._differential_check = real_check
        check.loops = loops
        CompiledNode.fx_forward, CompiledNode.__call__ = real_forward, real_call
    return min(r[0] for r in rows), min(r[1] for r in rows)


def seed_api(repeats):
    """{phase: best seconds} of the seed example through leapp.start .. compile_graph (3 frames)."""
    from leapp.examples import seed

    rows = {}
    frames = list(seed.frames(3))
    for _ in range(repeats):
        leapp.start("split")
        t = _clock()
        seed.preprocess(frames[0])
        t_trace = _clock() - t
        for frame in frames[1:]:
            seed.preprocess(frame)
        leapp.stop()
        p = Phases()
        p.wrap(CompiledNode, "from_trace", "from_trace")
        p.wrap(session_graph, LOWER, "lower")
        p.wrap(build.Lowered, "module", "GraphModule")
        p.wrap(leapp.api, "validate_samples", "validation")
        p.wrap(leapp.ast_pass, "check_bytes", "analysis")  # the cross-check reads the region's file
        if not rows:  # the first round analyses the file; later rounds reuse it (same bytes)
            seed_check._ANALYSES.clear()
        try:
            t = _clock()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipeline = leapp.compile_graph(validate=True)
            t_compile = _clock() - t
        finally:
            p.restore()
        s = p.seconds
        phases = {
            "trace (input_tensors .. output_tensors, first frame)": t_trace,
            "lower (FX graph)": s["lower"],
            "dtype check + self-check": s["from_trace"],
            "GraphModule made (torch.fx writes forward())": s.get("GraphModule", 0.0),
            "validation on 2 later frames": s["validation"],
            "cross-check: the file's static analysis (once per file content)": s.get("analysis", 0.0),
        }
        phases["compile_graph, other (cross-check, pipeline)"] = t_compile - sum(phases.values()) + t_trace
        node = pipeline["preprocess"]
        t = _clock()
        node(**{k: v for k, v in zip(node.input_names, frames[0].values(), strict=True)})
        phases["a call after validation"] = _clock() - t
        for k, v in phases.items():
            rows.setdefault(k, []).append(v)
    first = rows.pop("cross-check: the file's static analysis (once per file content)")[0]
    best = {k: min(v) for k, v in rows.items()}
    best["cross-check: the file's static analysis, first compile_graph of the file"] = first
    return best


def show(title, phases, trace=None):
    print(title)
    width = max(len(k) for k in phases)
    for k, v in phases.items():
        ratio = f"  {v / trace:5.2f}x the trace" if trace else ""
        print(f"  {k:<{width}}  {v * 1e3:8.3f} ms{ratio}")


def main():
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 30
    validate = 0
    robot_inputs = robot_obs.example_inputs(batch=1)
    for name, fn, inputs in (("seed", seed_step, SEED_INPUTS), ("robot", robot_obs.step, robot_inputs)):
        for _ in range(3):  # warm: first-use imports and caches are not what a phase costs
            leapp.compile(fn, tier="fx", validate=validate)(**inputs)
        phases = through_compile(fn, inputs, repeats, validate)
        unwatched = phases.pop("recording, escape watch off")
        alone = phases.pop("dtype check + self-check, no stack")
        trace = phases[TRACE]
        watch = max(0.0, trace - unwatched)
        show(f"{name} example through leapp.compile, best of {repeats} (CPU ms; ratio to the trace, "
             f"the recording):", phases, trace)
        # the lowering runs the graph on the check's stacked inputs in place of the example alone
        # (build.run_stacked), and the check takes those outputs: what that costs over the
        # example's own run is the check's
        share = max(0.0, phases["dtype check + self-check"] - alone)
        check, escapes = phases[CHECK] + share, watch + phases[SEARCH]
        made = trace + phases["lower (FX graph)"] + phases["dtype check + self-check"]
        numpy_runs, graph_run = floor(fn, inputs, repeats, DEFAULT_SAMPLES)
        print(f"  trace + lower + dtype/self-check: {made * 1e3:.3f} ms"
              + (" (goal < 1 ms)" if name == "seed" else ""))
        print(f"  escape watch inside the recording: {watch * 1e3:.3f} ms (recording with it off: "
              f"{unwatched * 1e3:.3f} ms)")
        print(f"  differential check: its own phase {phases[CHECK] * 1e3:.3f} ms + the lowering's run on its "
              f"stack over the example's alone ({alone * 1e3:.3f} ms with check=0) {share * 1e3:.3f} ms "
              f"= {check * 1e3:.3f} ms")
        print(f"  differential check / trace: {check / trace:.2f}; escape detection (watch + search) / "
              f"trace: {escapes / trace:.2f}; together {(check + escapes) / trace:.2f} (budget <= 0.5)")
        print(f"  the same over trace + lower + dtype/self-check (a new signature's graph): "
              f"{(check + escapes) / made:.2f}")
        print(f"  the check's floor, warm: its NumPy runs ({DEFAULT_SAMPLES} inputs and the example stacked where "
              f"the arguments share their rows, else one run each) {numpy_runs * 1e3:.3f} ms; a graph run "
              f"on them {graph_run * 1e3:.3f} ms (where they stack, the lowering's run, counted above)")
        cold_numpy, cold_graph = floor_in_check(fn, inputs, repeats)
        print(f"  the runs the check makes itself (after the trace and lowering, caches cold): NumPy "
              f"{cold_numpy * 1e3:.3f} ms + graph {cold_graph * 1e3:.3f} ms = "
              f"{(cold_numpy + cold_graph) / trace:.2f}x the trace; the rest of the check "
              f"{(check - cold_numpy - cold_graph) / trace:.2f}x")
    for _ in range(3):
        seed_api(1)
    phases = seed_api(repeats)
    show(f"seed example through the seed API (3 frames), best of {repeats}:", phases)
    own = sum(v for k, v in phases.items() if k.startswith(("trace", "lower", "dtype")))
    print(f"  trace + lower + dtype/self-check: {own * 1e3:.3f} ms (goal < 1 ms)")


if __name__ == "__main__":
    main()
