"""Tracing cost, as ratios measured in one run.

    .venv/bin/python benchmarks/bench_runtime.py

1. Per-op overhead on 64-element float32 arrays: a traced op against the same
   plain NumPy op (goal: at most 10x).
2. The seed example traced end to end (input_tensors .. output_tensors, and
   lowering to FX), after imports (goal: under 5 ms per traced pass).
3. ``import leapp`` (with its runtime) over ``import torch`` (goal: under 0.2 s).
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


def per_op(n=4000):
    x0 = np.linspace(-2, 2, 64, dtype=np.float32)
    y0 = np.linspace(2, -2, 64, dtype=np.float32)
    rows = []
    for name, op in OPS.items():
        plain = _per_call(lambda op=op: op(x0, y0), n)
        leapp.start("bench")
        x, y = annotate.input_tensors("op", {"x": x0, "y": y0})
        traced = _per_call(lambda op=op, x=x, y=y: op(x, y), n)
        annotate.output_tensors("op", {"z": op(x, y)})
        leapp.stop()
        rows.append((name, plain * 1e6, traced * 1e6, traced / plain))
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
    trace_times, lower_times = [], []
    for _ in range(repeats):
        leapp.start("seed")
        t0 = time.perf_counter()
        seed_pass(s, v)
        t1 = time.perf_counter()
        leapp.stop()
        trace = leapp.api._session.nodes["preprocess"].trace
        t2 = time.perf_counter()
        CompiledNode.from_trace(trace)
        t3 = time.perf_counter()
        trace_times.append(t1 - t0)
        lower_times.append(t3 - t2)
    return eager, statistics.median(trace_times), statistics.median(lower_times)


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
    gc.collect()
    print("1. per-op overhead, 64-element float32 arrays (best of 5)")
    print(f"   {'op':<20} {'numpy us':>9} {'traced us':>10} {'ratio':>7}")
    for name, plain, traced, ratio in per_op():
        print(f"   {name:<20} {plain:9.2f} {traced:10.2f} {ratio:6.1f}x")
    eager, trace_t, lower_t = seed_end_to_end()
    print("2. seed example, one traced pass (median of 50)")
    print(f"   eager NumPy pass {eager * 1e6:.1f} us; traced pass {trace_t * 1e3:.3f} ms "
          f"({trace_t / eager:.0f}x); lowering to FX + dtype check {lower_t * 1e3:.2f} ms; "
          f"total {(trace_t + lower_t) * 1e3:.2f} ms (goal < 5 ms)")
    torch_only, with_leapp, share, lint_only = import_times()
    print("3. import time (best of 5, fresh interpreters, bytecode cached)")
    print(f"   import torch {torch_only:.2f} s; torch + leapp runtime and compiler {with_leapp:.2f} s "
          f"(+{with_leapp - torch_only:.2f} s wall; leapp's own imports {share:.3f} s by -X importtime, "
          f"goal < 0.2 s); leapp.ast_pass alone (lint) {lint_only:.2f} s")


if __name__ == "__main__":
    main()
