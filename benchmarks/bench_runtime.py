"""Tracing cost, as ratios measured in one run.

    .venv/bin/python benchmarks/bench_runtime.py

1. Per-op overhead on 64-element float32 arrays: a traced op against the same
   plain NumPy op, interleaved round by round, best round of each (goal, issue
   11: at most 6x). Under basic slicing it also prints the floor any
   ndarray-subclass tracer pays before recording anything: a Python
   ``__getitem__`` that returns a view of its subclass, then that plus reading
   the caller's frame (the source line every node carries).
2. The seed example traced end to end (input_tensors .. output_tensors), and
   lowered to FX with the dtype check and self-check (goal: under 1 ms for both);
   then its first call, which makes the GraphModule (torch.fx writes and
   compiles forward(), which lowering no longer does) and runs it.
3. A chain of 100,000 ops traced and lowered (goal: lowering under 5 s); pass
   ``--chain N`` for another length, ``--chain 0`` to skip.
4. ``import leapp`` (with its runtime) over ``import torch`` (goal: under 0.2 s).

Run it on one core (``taskset -c 0``) on a quiet machine; the ratios are
measured in one run, so a busy machine slows both sides of each.
"""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import leapp
from leapp import annotate
from leapp.runtime.session_graph import CompiledNode

OPS = {
    "x + y": lambda x, y: x + y,
    "x * 2.0": lambda x, y: x * 2.0,
    "np.sqrt(x)": lambda x, y: np.sqrt(x),
    "np.maximum(x, y)": lambda x, y: np.maximum(x, y),
    "np.clip(x, -1, 1)": lambda x, y: np.clip(x, -1.0, 1.0),
    "x.sum()": lambda x, y: x.sum(),
    "x[2:10]": lambda x, y: x[2:10],
}


def _per_call(fn, n):
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def per_op(n=200, rounds=40):
    """Rounds of ``n`` calls, NumPy and traced in turn; the best round of each.

    Short rounds keep a collection of the (growing) trace from landing in every
    round, as it would in one long loop of identical ops.
    """
    x0 = np.linspace(-2, 2, 64, dtype=np.float32)
    y0 = np.linspace(2, -2, 64, dtype=np.float32)
    rows = []
    for name, op in OPS.items():
        leapp.start("bench")
        x, y = annotate.input_tensors("op", {"x": x0, "y": y0})
        plain = traced = float("inf")
        for _ in range(rounds):
            plain = min(plain, _round(op, x0, y0, n))
            traced = min(traced, _round(op, x, y, n))
        annotate.output_tensors("op", {"z": op(x, y)})
        leapp.stop()
        rows.append((name, plain * 1e6, traced * 1e6, traced / plain))
    return rows


def _round(op, a, b, n):
    t = time.perf_counter()
    for _ in range(n):
        op(a, b)
    return (time.perf_counter() - t) / n


class _Floor(np.ndarray):
    """The least an ndarray subclass that hooks indexing pays: TracedNpArray's slots and defaults,
    a Python ``__getitem__`` returning a view of its own class, and nothing recorded."""

    __slots__ = ("_a", "_b", "_c", "_d", "_e", "_f")
    _where = False  # also read the caller's frame, as a tracer must to know the source line

    def __array_finalize__(self, obj):
        self._a = self._b = self._c = self._d = None
        self._e = self._f = 0

    def __getitem__(self, index):
        if _Floor._where:
            frame = sys._getframe(1)
            _SEEN.get((id(frame.f_code), frame.f_lasti))
        return np.ndarray.view(np.ndarray.view(self, np.ndarray)[index], _Floor)


_SEEN: dict = {}


def slicing_floor(n=200, rounds=40):
    """``x[2:10]`` on ``_Floor`` without and with the frame read: ratios to NumPy, measured as per_op."""
    x0 = np.linspace(-2, 2, 64, dtype=np.float32)
    x = x0.view(_Floor)
    rows = []
    for where in (False, True):
        _Floor._where = where
        plain = hooked = float("inf")
        for _ in range(rounds):
            plain = min(plain, _round(OPS["x[2:10]"], x0, None, n))
            hooked = min(hooked, _round(OPS["x[2:10]"], x, None, n))
        rows.append((plain * 1e6, hooked * 1e6, hooked / plain))
    _Floor._where = False
    return rows


MEAN = np.array([0.1, -0.2, 0.05, 0.0, 0.3, -0.1], np.float32)
STD = np.array([0.5, 0.7, 0.2, 1.0, 0.9, 0.4], np.float32)


def seed_pass(state0, velocity0):
    state, velocity = annotate.input_tensors("preprocess", {"state": state0, "velocity": velocity0})
    state_norm = np.clip((state - MEAN) / STD, -5.0, 5.0)
    obs = np.concatenate([state_norm, velocity])
    annotate.output_tensors("preprocess", {"obs": obs})


def seed_end_to_end(repeats=50):
    s = np.ones(6, np.float32)
    v = np.ones(3, np.float32)
    eager = _per_call(lambda: np.concatenate([np.clip((s - MEAN) / STD, -5.0, 5.0), v]), 2000)
    trace_times, lower_times, call_times = [], [], []
    gc.collect()
    for _ in range(repeats):
        leapp.start("seed")
        t0 = time.perf_counter()
        seed_pass(s, v)
        t1 = time.perf_counter()
        leapp.stop()
        trace = leapp.api._session.nodes["preprocess"].trace
        t2 = time.perf_counter()
        node = CompiledNode.from_trace(trace)
        t3 = time.perf_counter()
        node(state=s, velocity=v)
        t4 = time.perf_counter()
        trace_times.append(t1 - t0)
        lower_times.append(t3 - t2)
        call_times.append(t4 - t3)
    return eager, statistics.median(trace_times), statistics.median(lower_times), statistics.median(call_times)


def chain_lowering(n):
    """Trace ``x = x + 1.0`` n times, then lower (FX graph, dtype check, self-check)."""
    from leapp.runtime.tracing import trace_function

    def chain(x):
        for _ in range(n):
            x = x + 1.0
        return x

    timed = {}
    real = CompiledNode.from_trace.__func__

    def from_trace(cls, trace, notes=()):
        t = time.perf_counter()
        node = real(cls, trace, notes)
        timed["lower"] = time.perf_counter() - t
        return node

    CompiledNode.from_trace = classmethod(from_trace)
    try:
        t = time.perf_counter()
        trace_function(chain, (np.ones(4, np.float32),), {}, names=["x"])
        total = time.perf_counter() - t
    finally:
        CompiledNode.from_trace = classmethod(real)
    return total - timed["lower"], timed["lower"]


def import_times(repeats=5):
    # Bytecode caches are allowed here (and warmed once): a deployed package has
    # them, and PYTHONDONTWRITEBYTECODE would charge leapp for compiling itself.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def run(code):
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            best = min(best, time.perf_counter() - t)
        return best

    def leapp_share(code):
        # -X importtime: the cumulative time of the top-level leapp imports alone
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env,
                             capture_output=True, text=True, check=True).stderr
        total = 0
        for line in out.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].startswith(" leapp"):
                total += int(parts[1])
        return total / 1e6

    torch_only = run("import torch")
    full = "import torch, leapp; leapp.start; leapp.compile"
    with_leapp = run(full)
    share = min(leapp_share(full) for _ in range(repeats))
    lint_only = run("import leapp.ast_pass")
    return torch_only, with_leapp, share, lint_only


def main():
    chain = int(sys.argv[sys.argv.index("--chain") + 1]) if "--chain" in sys.argv else 100_000
    gc.collect()
    print("1. per-op overhead, 64-element float32 arrays (interleaved, best of 40 rounds of 200)")
    print(f"   {'op':<20} {'numpy us':>9} {'traced us':>10} {'ratio':>7}  (goal <= 6x)")
    for name, plain, traced, ratio in per_op():
        print(f"   {name:<20} {plain:9.2f} {traced:10.2f} {ratio:6.1f}x")
    (p0, h0, r0), (p1, h1, r1) = slicing_floor()
    print(f"   floor under x[2:10], nothing recorded: a Python __getitem__ on a slotted subclass "
          f"{h0:.2f} us ({r0:.1f}x NumPy {p0:.2f} us); with the caller's frame read {h1:.2f} us ({r1:.1f}x)")
    eager, trace_t, lower_t, call_t = seed_end_to_end()
    print("2. seed example, one traced pass (median of 50)")
    print(f"   eager NumPy pass {eager * 1e6:.1f} us; traced pass {trace_t * 1e3:.3f} ms "
          f"({trace_t / eager:.0f}x); lowering to FX + dtype check + self-check {lower_t * 1e3:.2f} ms; "
          f"total {(trace_t + lower_t) * 1e3:.2f} ms (goal < 1 ms); then the first call (makes the "
          f"GraphModule, writes forward(), runs it) {call_t * 1e3:.2f} ms")
    if chain:
        trace_t, lower_t = chain_lowering(chain)
        print(f"3. a {chain:,}-op chain: traced in {trace_t:.2f} s, lowered in {lower_t:.2f} s (goal < 5 s)")
    torch_only, with_leapp, share, lint_only = import_times()
    print("4. import time (best of 5, fresh interpreters, bytecode cached)")
    print(f"   import torch {torch_only:.2f} s; torch + leapp runtime and compiler {with_leapp:.2f} s "
          f"(+{with_leapp - torch_only:.2f} s wall; leapp's own imports {share:.3f} s by -X importtime, "
          f"goal < 0.2 s); leapp.ast_pass alone (lint) {lint_only:.2f} s")


if __name__ == "__main__":
    main()
