"""The tiered default of ``leapp.compile``: the FX graph first, fused code once a signature is hot.

``tier="auto"`` (the default): every traced signature starts on its FX graph,
so the first call pays no compile. Once the signature is hot (``HOT_CALLS``
NumPy calls, or ``HOT_SECONDS`` of time spent in the calls after the first,
which makes the GraphModule and the call plan: whichever comes first), one
background thread has the graph compiled ahead of time by AOTInductor in a
separate process at a lower priority (``runtime/fused_process.py``: the
compile shares no interpreter lock with the calls, and this process never
imports inductor), or, where that process cannot, compiles it itself with
torch inductor (``runtime.backends``, the ``backend="inductor"`` path), and
swaps the compiled code in only if

- on every check input it gives the FX graph's outputs exactly (dtype,
  shape, every value and the sign of every zero; NaN where NaN): the swap
  never changes what a call returns. The check inputs are the traced sample
  and the latest validation samples (``validate=N``, ``cf.validate``), where
  the FX graph itself was held to NumPy, so the fused code is held to NumPy
  there too; and two inputs redrawn from the traced one;
- it is faster than the FX graph, measured on the traced sample.

Otherwise the signature stays on FX and ``cf.report()`` says why. Calls keep
running FX while the compile runs; none waits for it. ``cf.wait_for_tier()``
waits (for tests and benchmarks). Only NumPy calls count and use the fused
code: it is compiled for the traced shapes on the CPU; torch tensors (CUDA
included) run the FX graph as before.

``tier="fx"``: never compile. ``tier="inductor"``: compile at the first call
of each signature (the same as ``backend="inductor"``). The environment
variable ``LEAPP_TIER`` sets the default for the process (the test suite sets
``fx``, so that only the tests of this module compile).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any

import numpy as np

TIERS = ("auto", "fx", "inductor")
HOT_CALLS = 50  # NumPy calls of one signature before it compiles
HOT_SECONDS = 0.020  # or this much time spent in them, whichever comes first
FASTER = 0.95  # swapped in only below this fraction of the FX graph's time (noise is not a gain)
ENV = "LEAPP_TIER"
# Fused compiles at once in this process. Each is a process of its own that uses several cores and
# ~400 MB for tens of seconds: a program with many hot functions (or a loop compiling one function
# after another) queues them, one at a time, instead of starting one per function.
SLOTS = 1
_slots = threading.BoundedSemaphore(SLOTS)
_POLL_S = 0.25  # how often a queued compile looks whether its function is still alive


def resolve(tier, backend, name) -> tuple[str, str]:
    """(tier, backend) from ``leapp.compile``'s options; ``backend=`` is the older spelling."""
    if backend is not None and backend not in ("fx", "inductor"):
        from ..runtime.backends import check_backend

        check_backend(backend)  # raises, naming the choices
    if tier is None:
        if backend is not None:
            return backend, backend
        tier = os.environ.get(ENV) or "auto"
        where = f"the environment variable {ENV}"
    else:
        where = "tier="
    if tier not in TIERS:
        raise ValueError(f"leapp.compile({name}): {where} must be one of "
                         f"{', '.join(map(repr, TIERS))}, not {tier!r}")
    if backend is not None and backend != ("fx" if tier == "auto" else tier):
        raise ValueError(f"leapp.compile({name}): tier={tier!r} and backend={backend!r} disagree; "
                         f"pass tier= alone (backend= is its older spelling)")
    return tier, ("inductor" if tier == "inductor" else "fx")


class Tier:
    """One traced signature's tier: counts its calls, then promotes it off the call path.

    ``state`` is ``"cold"`` (counting), ``"compiling"``, ``"inductor"`` (the
    fused code serves) or ``"fx"`` (decided: it stays on the FX graph, ``reason`` says why).
    """

    def __init__(self, graph):
        self.graph = graph  # compiler.function.Graph
        self.calls = 0
        self.seconds = 0.0
        self.watching = True  # calls count while True; one reads it per call
        self.state = "cold"
        self.reason = None
        self.hot_at = None  # the call count at which the compile started
        self.compile_s = None
        self.where = None  # which process compiled the fused code, and why not the separate one
        self.timing: Any = None  # (FX seconds, fused seconds) per call on the traced sample
        self.n_checked = 0
        self.queued = False  # hot, waiting for another signature's compile to end
        self._lock = threading.Lock()
        self._done = threading.Event()

    def note(self, seconds):
        """One NumPy call of this signature took ``seconds``. Unlocked: two threads may lose a
        count between them, which only moves the compile by a call."""
        self.calls += 1
        if self.calls > 1:  # the first run makes the GraphModule and the plan: not a measure of hot
            self.seconds += seconds
        if self.calls >= HOT_CALLS or self.seconds >= HOT_SECONDS:
            self._start()

    def _start(self):
        with self._lock:
            if not self.watching:
                return
            self.watching = False
            self.state = "compiling"
            self.hot_at = self.calls
            # a free slot is taken here, so that the report says at once whether it waits; the
            # thread holds the tier weakly while it waits for one: a function dropped meanwhile
            # (its graphs collected) is never compiled, and its queue entry ends
            self.queued = not _slots.acquire(blocking=False)
        thread = threading.Thread(target=_when_free, args=(weakref.ref(self), not self.queued),
                                  name=f"leapp-tier {self.graph.node.name}", daemon=True)
        thread.start()

    def wait(self, timeout=None) -> bool:
        """Whether a started compile is decided within ``timeout`` (True at once while cold)."""
        if self.watching:
            return True
        return self._done.wait(timeout)

    def _promote(self):
        try:
            self._decide()
        except BaseException as exc:  # noqa: BLE001 - nothing may escape into the caller's process
            self._stay(f"the inductor compile failed ({type(exc).__name__}: {_first_line(exc)})")
        finally:
            self._done.set()

    def _stay(self, reason):
        self.state, self.reason = "fx", reason

    def _decide(self):
        from ..runtime.dtypes import tensor_from_numpy
        from ..runtime.session_graph import _forward_of

        node = self.graph.node
        trace = self.graph.traced.trace
        arrays = [np.asarray(trace.input_values[n]) for n in node.input_names]
        t = time.perf_counter()
        fused, self.where = compile_fused(node.graph_module, [tensor_from_numpy(a) for a in arrays])
        self.compile_s = time.perf_counter() - t
        fx = _forward_of(node.graph_module)
        checks = check_inputs(self.graph)
        self.n_checked = len(checks)
        for inputs in checks:
            problem = compare(node, fx, fused, inputs)
            if problem:
                self._stay(problem)
                return
        tensors = [tensor_from_numpy(a) for a in arrays]
        self.timing = fx_s, fused_s = measure(fx, fused, tensors)
        if fused_s >= FASTER * fx_s:
            self._stay(f"the fused code is not faster than the FX graph on the traced sample "
                       f"({fused_s * 1e6:.1f} us against {fx_s * 1e6:.1f} us a call)")
            return
        node.adopt_runner("inductor", fused, [(a.shape, a.dtype) for a in arrays])
        self.state = "inductor"

    def describe(self) -> str:
        limits = f"{HOT_CALLS} calls or {HOT_SECONDS * 1e3:.0f} ms"
        if self.state == "cold":
            return (f"tier: fx (auto; {self.calls} NumPy call(s), {self.seconds * 1e3:.1f} ms so far; "
                    f"compiles fused code in a separate process after {limits})")
        if self.state == "compiling" and self.queued:
            return (f"tier: fx, hot at call {self.hot_at}; its fused compile waits for another "
                    f"signature's to end ({SLOTS} at a time)")
        if self.state == "compiling":
            return f"tier: fx, compiling fused code in the background since call {self.hot_at}"
        if self.state == "inductor":
            fx_s, fused_s = self.timing
            return (f"tier: inductor (hot at call {self.hot_at}; compiled in {self.compile_s:.1f} s off the "
                    f"call path, {self.where}; equal to the FX graph on {self.n_checked} input(s); {fused_s / fx_s:.2f}x "
                    f"its time a call on the traced sample)")
        return f"tier: fx (auto, hot at call {self.hot_at}; inductor not used: {self.reason})"


def _when_free(ref, holding):
    """A hot tier's compile, once a slot is free (``holding``: taken already), if its tier still
    exists then."""
    while not holding and not _slots.acquire(timeout=_POLL_S):
        if ref() is None:
            return
    try:
        tier = ref()
        if tier is None:
            return
        tier.queued = False
        tier._promote()
    finally:
        _slots.release()


def compile_fused(graph_module, example_inputs):
    """(runner, where it was compiled): in a separate process (``runtime/fused_process.py``), so that
    the compile shares no interpreter lock with the calls; where that process cannot give one, in
    this process's background thread with inductor, as ``tier="inductor"`` compiles."""
    from ..runtime import backends, fused_process

    try:
        return fused_process.compile_runner(graph_module, example_inputs), "in a separate process (AOTInductor)"
    except Exception as exc:  # noqa: BLE001 - whatever stopped it, this process can still compile
        why = str(exc) if isinstance(exc, fused_process.Unavailable) else f"{type(exc).__name__}: {_first_line(exc)}"
        runner = backends.compile_runner(graph_module, example_inputs, "inductor")
        return runner, f"in this process (the separate process could not: {why})"


def check_inputs(graph):
    """[inputs by name]: the traced sample, the validation samples, two redraws of the traced one."""
    from . import samples

    trace = graph.traced.trace
    out = [dict(trace.input_values)]
    out += [inputs for inputs, _numpy_outputs in graph.samples]
    rng = np.random.default_rng(0)
    out += [samples.perturb(dict(trace.input_values), rng) for _ in range(2)]
    return out


def compare(node, fx, fused, inputs):
    """What is wrong with ``fused``'s outputs on ``inputs`` against the FX graph's (a sentence), or None."""
    from ..runtime.dtypes import tensor_from_numpy, tensor_to_numpy

    want = fx(*[tensor_from_numpy(np.asarray(inputs[n])) for n in node.input_names])
    got = fused(*[tensor_from_numpy(np.asarray(inputs[n])) for n in node.input_names])
    for k in node.output_names:
        a, b = got[k], want[k]
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            return (f"output {k!r} of the fused code is {a.dtype}{list(a.shape)} where the FX graph "
                    f"gives {b.dtype}{list(b.shape)}")
        a, b = tensor_to_numpy(a), tensor_to_numpy(b)
        if not same_bits(a, b):
            return (f"output {k!r} of the fused code differs from the FX graph's (largest difference "
                    f"{_largest(a, b)}); a swap would change results")
    return None


def same_bits(a, b) -> bool:
    """Equal values, NaN where NaN, and the same sign of every zero."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    if not np.array_equal(a, b, equal_nan=True):
        return False
    parts = (a.real, b.real, a.imag, b.imag) if a.dtype.kind == "c" else (a, b)
    return all(np.array_equal(np.signbit(x), np.signbit(y)) for x, y in zip(parts[::2], parts[1::2], strict=True))


def _largest(a, b):
    with np.errstate(all="ignore"):
        d = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
    d = d[np.isfinite(d)]
    return float(d.max()) if d.size else "not finite"


def measure(fx, fused, tensors, rounds=7, round_s=0.002):
    """(FX, fused) best seconds per call on ``tensors``, interleaved round by round."""
    for run in (fx, fused):
        run(*tensors)  # first-run costs (allocator, lazy code) are not what the swap buys
    t = time.perf_counter()
    fx(*tensors)
    per = max(time.perf_counter() - t, 1e-7)
    n = max(1, min(1000, int(round_s / per)))
    best = [float("inf"), float("inf")]
    for r in range(rounds):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            run = (fx, fused)[i]
            t = time.perf_counter()
            for _ in range(n):
                run(*tensors)
            best[i] = min(best[i], (time.perf_counter() - t) / n)
    return best[0], best[1]


def _first_line(exc):
    text = str(exc).strip().split("\n", 1)[0]
    return text[:200] or "no message"
