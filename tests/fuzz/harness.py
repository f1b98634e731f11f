"""One fuzz case: trace a generated program on one input, compare with NumPy on fresh ones."""

from __future__ import annotations

import random
import warnings

import numpy as np

from . import programs


def check_program(seed, n_fresh=3, max_steps=6):
    """Run program ``seed``: None when the graph matches NumPy, a string when leapp refused it
    clearly at the call; a mismatch raises."""
    from parity import _flat

    from leapp.errors import LeappInternalWarning, UnsupportedArgumentError
    from leapp.runtime.tracing import trace_function

    rnd = random.Random(seed)
    specs, steps = programs.generate(rnd, max_steps=max_steps)
    sample = [programs.fresh(rnd, s, d) for s, d in specs]

    def fn(*xs):
        return programs.run(specs, steps, *xs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("error", LeappInternalWarning)
        try:
            want0 = fn(*[np.array(x, copy=True) for x in sample])
        except Exception:
            return None  # the sample makes NumPy itself raise (e.g. an empty argmax): not a program
        try:
            traced = trace_function(fn, tuple(sample), {}, names=[f"a{i}" for i in range(len(sample))], strict=True)
        except UnsupportedArgumentError as exc:
            return f"refused: {exc}"  # a clear refusal at the call is the promised behaviour, not a mismatch
        cases = [sample] + [[programs.fresh(rnd, s, d) for s, d in specs] for _ in range(n_fresh)]
        del want0
        for k, case in enumerate(cases):
            try:
                want = _flat(fn(*[np.array(c, copy=True) for c in case]))
            except Exception:
                continue  # NumPy raises on this input (data-dependent error): nothing to compare
            got = traced.node(**{f"a{i}": np.asarray(c) for i, c in enumerate(case)})
            outs = [got[n] for n in traced.node.output_names]
            work = _narrowest_float(steps, case)
            for g, w in zip(outs, want, strict=True):
                _compare(g, w, work, what=f"seed {seed} case {k}: ")
    return None


def _narrowest_float(steps, inputs):
    """The narrowest float dtype among the program's values: its results carry no more precision.

    torch's and NumPy's float32 exp/sin/arctan... each round within an ulp but not always alike,
    so a float32 value cast to float64 is only float32-exact."""
    values = list(inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for step in steps:
            values.append(programs.apply(step, values))
    floats = [np.asarray(v).dtype for v in values if np.asarray(v).dtype.kind == "f"]
    return min(floats, key=lambda d: d.itemsize) if floats else None


def _compare(got, want, work, what):
    from parity import assert_same

    got, want = np.asarray(got), np.asarray(want)
    if work is not None and want.dtype.kind == "f" and work.itemsize < want.dtype.itemsize:
        assert got.dtype == want.dtype, f"{what}dtype: graph {got.dtype}, NumPy {want.dtype}"
        with np.errstate(over="ignore"):
            got, want = got.astype(work), want.astype(work)
    assert_same(got, want, what=what)


def describe(seed, max_steps=6):
    rnd = random.Random(seed)
    specs, steps = programs.generate(rnd, max_steps=max_steps)
    return {"seed": seed, "inputs": [(list(s), d) for s, d in specs],
            "steps": [(k, n, [(t, repr(v)) for t, v in a], {x: repr(y) for x, y in kw.items()})
                      for k, n, a, kw in steps]}
