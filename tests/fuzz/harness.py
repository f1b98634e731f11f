"""One fuzz case: trace a generated program on one input, compare with NumPy on fresh ones."""

from __future__ import annotations

import random
import warnings

import numpy as np

from . import programs

# The share of programs the harness may excuse as ill-conditioned; more means the excuse hides bugs.
EXCUSE_BUDGET = 0.02


def check_program(seed, n_fresh=3, max_steps=6):
    """Run program ``seed``: None when the graph matches NumPy, a string when leapp refused it
    clearly at the call ("refused: ...") or when NumPy's own answer is ill-conditioned at the
    input ("ill-conditioned: ...", see ``_ill_conditioned``); a mismatch raises."""
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
            with warnings.catch_warnings(record=True) as internal:
                warnings.simplefilter("always", LeappInternalWarning)
                traced = trace_function(fn, tuple(sample), {}, names=[f"a{i}" for i in range(len(sample))],
                                        strict=True)
        except UnsupportedArgumentError as exc:
            return f"refused: {exc}"  # a clear refusal at the call is the promised behaviour, not a mismatch
        for w in internal:
            # A repaired dtype is always a bug. A self-check miss on the sample is judged below,
            # on case 0 (the sample), where an ill-conditioned input is told apart from a bug.
            if "does not reproduce the traced sample" not in str(w.message):
                raise AssertionError(f"seed {seed}: {w.message}")
        cases = [sample] + [[programs.fresh(rnd, s, d) for s, d in specs] for _ in range(n_fresh)]
        del want0
        outs_at = programs.outputs(len(specs), steps)
        for k, case in enumerate(cases):
            try:
                want = _flat(fn(*[np.array(c, copy=True) for c in case]))
            except Exception:
                continue  # NumPy raises on this input (data-dependent error): nothing to compare
            got = traced.node(**{f"a{i}": np.asarray(c) for i, c in enumerate(case)})
            outs = [got[n] for n in traced.node.output_names]
            assert len(outs) == len(want), f"seed {seed}: {len(outs)} outputs, NumPy gave {len(want)}"
            for j, (g, w) in enumerate(zip(outs, want, strict=True)):
                # each output is judged on its own: its precision and its conditioning come from
                # the values it is computed from, not from the rest of the program
                own = programs.ancestors(len(specs), steps, outs_at[j])
                work = _narrowest_float(steps, case, own)
                try:
                    _compare(g, w, work, what=f"seed {seed} case {k} output {j}: ")
                except AssertionError as exc:
                    if not _ill_conditioned(fn, case, want, work, output=j, inputs=own):
                        raise
                    return f"ill-conditioned: {str(exc).splitlines()[0]}"
    return None


def _ill_conditioned(fn, case, want, work, ulps=4, output=None, inputs=None):
    """NumPy's own result moves past the tolerance when the float inputs move by a few ulps.

    torch's and NumPy's transcendental functions each round within an ulp or two but not alike;
    a floor, a remainder or a large sin argument downstream can turn that into any difference.
    Such an input has no single right answer at float precision, so a disagreement there is not a
    leapp bug. Only the output that disagreed is judged (``output``, an index into ``want``), and
    only the inputs it is computed from are moved (``inputs``, indices; all when None). Programs
    with no float input there cannot be perturbed and are never excused."""
    from parity import _flat

    floats = [i for i, c in enumerate(case) if np.asarray(c).dtype.kind == "f" and (inputs is None or i in inputs)]
    if not floats:
        return False
    judged = range(len(want)) if output is None else [output]
    for direction in (np.inf, -np.inf):
        moved = [np.array(c, copy=True) for c in case]
        for i in floats:
            for _ in range(ulps):
                moved[i] = np.nextafter(moved[i], direction).astype(moved[i].dtype)
        try:
            again = _flat(fn(*moved))
        except Exception:
            return True
        for j in judged:
            try:
                _compare(again[j], want[j], work, what="")
            except AssertionError:
                return True
    return False


def _narrowest_float(steps, inputs, among=None):
    """The narrowest float dtype among the program's values (``among``: only these indices): a
    result carries no more precision than its narrowest float ancestor.

    torch's and NumPy's float32 exp/sin/arctan... each round within an ulp but not always alike,
    so a float32 value cast to float64 is only float32-exact."""
    values = list(inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for step in steps:
            values.append(programs.apply(step, values))
    floats = [np.asarray(v).dtype for i, v in enumerate(values)
              if np.asarray(v).dtype.kind == "f" and (among is None or i in among)]
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
