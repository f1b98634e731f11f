"""How far from NumPy's bits each parity record is: ``python benchmarks/ulps.py [--all]``.

Parity tests compare floats within a tolerance; this runs every record case
(``tests/records.py``) through the runtime, on its traced sample and its fresh
samples, and prints the largest difference in units in the last place (of
NumPy's result) per record and dtype, largest first. ``--all`` also lists
what is expected to differ: the FFT, transcendental functions and
accumulations in another order (``docs/limitations.md``). An entry outside
those is an adapter to look at: arithmetic, ``linspace``, ``cross``, float32
``sqrt`` are exact (``tests/runtime/test_exact_arithmetic.py``).
"""

from __future__ import annotations

import collections
import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

EXPECTED = ("fft", "exp", "log", "sin", "cos", "tan", "arc", "power", "cbrt", "hypot", "sum", "prod", "mean",
            "var", "std", "cumsum", "cumprod", "accumulate", ".reduce[", "norm", "inner", "einsum", "dot", "matmul",
            "__setitem__[element=traced 0-d]", "sqrt[] int", "sqrt[wide]", "sqrt[dtype= loop]", "back to numpy")


def ulps(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind not in "fc" or got.shape != want.shape or got.dtype != want.dtype or not want.size:
        return 0.0
    if want.dtype.kind == "c":
        return max(ulps(got.real, want.real), ulps(got.imag, want.imag))
    got, want = np.atleast_1d(got), np.atleast_1d(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if same.all():
        return 0.0
    spacing = np.abs(np.spacing(np.abs(want))).astype(np.float64)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    diff[same] = 0.0
    return float(np.nanmax(np.where(np.isfinite(diff), diff, np.inf)))


def main():
    from parity import _flat
    from records import _bind, _draws, _traced, all_records, expand

    from leapp.runtime.tracing import trace_function

    warnings.simplefilter("ignore")
    worst = collections.defaultdict(float)
    for rec in all_records():
        for dtypes, shapes in expand(rec):
            first, *fresh = _draws(rec, dtypes, shapes)
            fn = _bind(rec.fn, shapes, first)
            picked = [tuple(o for o, s in zip(ops, shapes, strict=False) if _traced(s)) for ops in (first, *fresh)]
            key = f"{rec.name}[{rec.label}] {'/'.join(str(d) for d in dtypes)}"
            try:
                traced = trace_function(fn, picked[0], {}, names=[f"a{i}" for i in range(len(picked[0]))],
                                        strict=False)
                for case in picked:
                    want = _flat(fn(*[np.array(c, copy=True) for c in case]))
                    got = traced.node(**{k: np.asarray(case[p[1]]) for p, k in traced.input_paths})
                    for g, w in zip([got[n] for n in traced.node.output_names], want, strict=False):
                        worst[key] = max(worst[key], ulps(g, w))
            except Exception as exc:  # a refusal or a failure is the parity tests' subject, not this one's
                print(f"  skipped {key}: {type(exc).__name__}: {exc}")
    show_all = "--all" in sys.argv
    shown = [(key, u) for key, u in sorted(worst.items(), key=lambda kv: -kv[1])
             if u > 0 and (show_all or not any(e in key for e in EXPECTED))]
    for key, u in shown:
        print(f"{u:12.3g} ulps  {key}")
    exact = sum(1 for u in worst.values() if u == 0)
    print(f"{len(worst)} record cases: {exact} bit for bit with NumPy, {len(worst) - exact} not"
          + ("" if show_all else f", {len(shown)} of those outside the expected kinds (--all lists every one)"))


if __name__ == "__main__":
    main()
