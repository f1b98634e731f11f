"""How far torch's float reductions are from NumPy's, by size: the bound docs/limitations.md quotes.

NumPy sums float arrays pairwise (blocks of 8, then a tree); torch's CPU kernels
accumulate in vectorised lanes with a cascade. Both are accurate, but not alike, so a
float32 sum or mean in a graph differs from NumPy's by a few roundings of the *summed
magnitudes*. This script measures, for each reduction and size, the largest

    |torch - NumPy| / (eps * sum(|x|))        (for a mean, sum(|x|) / n)

over a few random draws (normal: cancelling values; uniform in [0, 1): no cancellation),
whole-array and along each axis of a 2-D array, and prints the largest ratio seen.

    .venv/bin/python benchmarks/reduction_order.py [--max-exp 7] [--trials 5]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch


def _ratio(got, want, x, axis, op):
    """Largest |got - want| / (eps * sum|x|) over the reduced slices."""
    eps = float(np.finfo(x.dtype).eps)
    mag = np.abs(x.astype(np.float64)).sum(axis=axis)
    if op == "mean":
        mag = mag / (x.size if axis is None else x.shape[axis])
    diff = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))
    return float(np.max(diff / (eps * np.maximum(mag, np.finfo(np.float64).tiny))))


def measure(max_exp=7, trials=5, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for e in range(3, max_exp + 1):
        n = 10**e
        for dist in ("normal", "uniform"):
            for op in ("sum", "mean"):
                for axis in (None, 0, 1):
                    worst = 0.0
                    for _ in range(trials):
                        draw = rng.standard_normal(n) if dist == "normal" else rng.uniform(0.0, 1.0, n)
                        x = draw.astype(dtype)
                        if axis is not None:
                            x = x.reshape(1000, n // 1000) if n >= 10**4 else x.reshape(10, n // 10)
                        want = getattr(np, op)(x, axis=axis)
                        t = torch.from_numpy(x)
                        got = (getattr(torch, op)(t) if axis is None else getattr(torch, op)(t, dim=axis)).numpy()
                        worst = max(worst, _ratio(got, want, x, axis, op))
                    rows.append((n, dist, op, axis, worst))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-exp", type=int, default=7)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args(argv)
    rows = measure(args.max_exp, args.trials)
    print(f"{'n':>10} {'values':8} {'op':5} {'axis':5} |torch-NumPy| / (eps*sum|x|)")
    for n, dist, op, axis, worst in rows:
        print(f"{n:>10} {dist:8} {op:5} {axis!s:5} {worst:.3f}")
    print(f"largest: {max(r[-1] for r in rows):.3f} (float32 eps = {np.finfo(np.float32).eps:.3g})")


if __name__ == "__main__":
    main()
