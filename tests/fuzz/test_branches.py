"""Programs that branch on data through ``@leapp.compile``, in CI: a bounded slice with fixed seeds.

``benchmarks/branches.py`` runs the same generator and check at scale.
"""

from __future__ import annotations

import collections

import numpy as np

from . import branches

SLICE = range(0, 30)


def test_branch_programs_slice_matches_numpy_or_refuses_what_was_planted(tmp_path):
    outcomes, bad, both, seed_api = collections.Counter(), [], 0, collections.Counter()
    for seed in SLICE:
        out = branches.check(seed, n_inputs=6, onnx=seed % 15 == 0, seed_api=seed % 3 == 0, tmpdir=str(tmp_path))
        outcomes[out.kind] += 1
        seed_api[out.seed_api] += 1
        both += out.both_ways
        if out.kind not in ("exact", "refused"):
            bad.append(f"seed {seed} {out.kind}: {out.detail[:600]}\n{out.source}")
        if out.seed_api in ("silent", "internal"):  # the seed API reads no source: it must say so
            bad.append(f"seed {seed} seed API {out.seed_api}\n{out.source}")
    assert not bad, "\n".join(bad)
    # the slice must exercise both: most programs convert, a few refuse what was planted in them,
    # and the inputs put many tests on both sides
    assert outcomes["exact"] >= 15 and outcomes["refused"] >= 4, outcomes
    assert both >= 20, both
    # through the seed API, which converts nothing: refusals and warnings naming the program's lines
    assert seed_api["refused"] + seed_api["warned"] >= 4 and seed_api["exact"] >= 1, seed_api


def test_the_seed_api_stage_calls_a_wrong_graph_without_a_warning_silent(tmp_path):
    # the harness's own guard: a graph that differs from NumPy with no warning naming the program's
    # file is "silent" (here the answers NumPy gives changed after the trace, which nothing warns
    # of); with a warning naming it, "warned"
    path = str(tmp_path / "prog.py")

    def traced_as(x, y):
        return x * np.float32(2.0) + y

    inputs = branches._inputs(0, 3, "float32", 4)
    wants = [("ok", x * np.float32(3.0) + y) for x, y in inputs]
    assert branches._seed_api(traced_as, inputs, wants, path, "float32") == "silent"

    def warns(x, y):
        import warnings

        warnings.warn(f"{path}:3: a test on data", UserWarning, stacklevel=1)
        return traced_as(x, y)

    assert branches._seed_api(warns, inputs, wants, path, "float32") == "warned"
    right = [("ok", x * np.float32(2.0) + y) for x, y in inputs]
    assert branches._seed_api(traced_as, inputs, right, path, "float32") == "exact"


def test_a_planted_construct_that_went_through_is_a_mismatch(monkeypatch):
    # the generator's own guard: were leapp to accept a write into an array in a branch, the
    # program would be reported, not counted as exact
    seed = next(s for s in range(200) if branches.generate(s)[1] == "write")
    monkeypatch.setitem(branches.PLANTED, "write", ("pass", "writes into"))
    assert branches.check(seed).kind == "mismatch"


def test_a_difference_is_excused_only_where_numpy_took_a_test_on_its_boundary(monkeypatch):
    # seed 1008000 of the 10,000-program run: `y = tanh(x) / (|tanh(x)| + 1)` and then
    # `if y[-1] >= 0.5`; NumPy's float32 tanh(9.307) is 0.99999994, torch's is 1.0, so NumPy's
    # y[-1] is one ulp under 0.5 and the graph's is 0.5. The harness must see that, and only that.
    source = "\n".join(["import numpy as np", "", "", "def f(x, y):", "    t = np.tanh(x)",
                        "    y = t / (np.abs(t) + 1)", "    if y[-1] >= 0.5:", "        return x * 2",
                        "    return x if -1 < x.mean() < 3 else y", ""])
    on_edge = np.array([1.0, 9.307112], np.float32)
    away = np.array([1.0, 0.3], np.float32)
    assert branches._on_boundary(source, on_edge, on_edge, "float32")
    assert not branches._on_boundary(source, away, away, "float32")
    # a chain (in a conditional expression) is probed link by link: -1 < 2.0 < 3 is near neither
    # end, -1 < 3.0 < 3 is near its second
    chain = source.replace("if y[-1] >= 0.5:", "if False:")
    assert not branches._on_boundary(chain, np.array([2.0, 2.0], np.float32), away, "float32")
    assert branches._on_boundary(chain, np.array([3.0, 3.0], np.float32), away, "float32")

    # through check(), on the program that seed 1008000 wrote (reduced; the generator has changed
    # since) and that seed's inputs
    reduced = "\n".join(["import numpy as np", "import leapp", "", "", "@leapp.compile", "def f(x, y):",
                         "    if y.min() < 0:", "        x = np.tanh(y)", "        y = x / (np.abs(x) + 1)",
                         "    if y[-1] >= 0.5:", "        y = np.tanh(x)", "    return np.tanh(y)", ""])
    monkeypatch.setattr(branches, "generate", lambda seed: (reduced, "", 6, "float32"))
    assert branches.check(1008000).kind == "boundary"


def test_a_program_numpy_raises_on_everywhere_is_counted_apart_only_for_the_same_error(monkeypatch):
    # a planted `raise` on a path every input takes (seed 5009 wrote one): the compiled function
    # raises the user's ValueError on the example, as NumPy does. Another error there stays "internal".
    source = "\n".join(["import numpy as np", "import leapp", "", "", "@leapp.compile", "def f(x, y):",
                        "    if np.abs(x).mean() <= -0.5 or x[-1] >= -100:", "        y = x * 2",
                        "        raise ValueError('bad input')", "    else:", "        y = -x",
                        "    return y", ""])
    monkeypatch.setattr(branches, "generate", lambda seed: (source, "raise", 3, "float32"))
    assert branches.check(5009).kind == "numpy_raises"
    import leapp.compiler.function as function

    def trace(self, *args, **kwargs):  # leapp failing with its own, different error
        raise RuntimeError("not the user's error")

    monkeypatch.setattr(function.CompiledFunction, "trace", trace)
    assert branches.check(5009).kind == "internal"


def _in_loop_bodies(src):
    """The lines of the bodies of the top-level `while` loops of ``src``'s function."""
    out, inside = [], False
    for line in src.splitlines():
        if line.startswith("    while "):
            inside = True
        elif inside and line.startswith("        "):
            out.append(line)
        else:
            inside = False
    return out


def _helper_bodies(src):
    return [line for block in src.split("\ndef _h")[1:] for line in block.split("\n\n\n")[0].splitlines()[1:]]


def test_the_generator_writes_each_form_the_runs_found_holes_in():
    # the 10,000-program run found a name only an `if` in a loop's body assigns, and an arm's alias
    # updated after the `if`, by chance: the generator now writes each such form on purpose
    import re

    forms = {
        "alias planted": lambda src, planted: planted == "alias",
        "alias kept (no update)": lambda src, planted: planted != "alias" and bool(
            re.search(r"^ +w\d+ = t\d+$", src, re.M)),
        "a view alias": lambda src, planted: bool(re.search(r"^ +w\d+ = t\d+\[1:\]", src, re.M)),
        "an alias in a conditional expression": lambda src, planted: bool(re.search(r"w\d+ = t\d+\S* if ", src)),
        "update after an if": lambda src, planted: bool(re.search(r"^    t\d+(\[[^]]*\] =| [-+*/]=) ", src, re.M)),
        "a name only an if in a loop assigns": lambda src, planted: any(
            re.match(r" {12}u\d+ = ", line) for line in _in_loop_bodies(src)),
        "a helper with its own if": lambda src, planted: any(line.lstrip().startswith("if ") for line in _helper_bodies(src)),
        "an elif in a loop's body": lambda src, planted: any(line.startswith("        elif ") for line in _in_loop_bodies(src)),
        "a conditional expression in a loop's body": lambda src, planted: any(
            re.match(r" {8}\w+ = .* if .* else ", line) for line in _in_loop_bodies(src)),
    }
    seen = collections.Counter()
    for seed in range(1000):
        src, planted, _, _ = branches.generate(seed)
        for name, found in forms.items():
            seen[name] += found(src, planted)
    assert all(seen[name] >= 3 for name in forms), seen
