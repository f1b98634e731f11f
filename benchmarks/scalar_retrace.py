"""Traces and graphs over 100 calls of ``step(obs, t)`` with a new Python float ``t`` each call.

    .venv/bin/python benchmarks/scalar_retrace.py

A robot calls its preprocessing with a new time step or gain every tick. With scalar arguments
as graph inputs (issue 17, ``compiler/scalar_inputs.py``) that is one trace; before, each new
value traced a new graph (100 traces, at most ``max_signatures`` graphs kept). Also prints the
repeat call's cost with a new ``t`` each call against the same ``t`` (both take the fast path).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import leapp
import leapp.compiler.function as function


def step(obs, t):
    return np.tanh(obs * 0.5) * t + t * 2


def main():
    traces = [0]
    real = function.trace_function

    def counting(*args, **kwargs):
        traces[0] += 1
        return real(*args, **kwargs)

    function.trace_function = counting
    warnings.simplefilter("ignore")
    cf = leapp.compile(step)
    obs = np.linspace(-1, 1, 8).astype(np.float32)
    ts = [float(t) for t in np.random.default_rng(0).uniform(0, 1, 100)]
    for t in ts:
        y = cf(obs, t)
        assert y.dtype == np.float32 and np.allclose(y, step(obs, t), rtol=1e-6)  # tanh: torch's, to an ulp
    print(f"100 calls, a new float t each: {traces[0]} trace(s), {len(cf.graphs)} graph(s)")
    for label, values in (("a new t each call", ts), ("the same t", [ts[0]] * len(ts))):
        best = min(_timed(cf, obs, values) for _ in range(5))
        print(f"repeat call, {label}: {best:.1f} us")


def _timed(cf, obs, values):
    t0 = time.perf_counter()
    for t in values:
        cf(obs, t)
    return 1e6 * (time.perf_counter() - t0) / len(values)


if __name__ == "__main__":
    main()
