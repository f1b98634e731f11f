"""Programs that branch on data through ``@leapp.compile``, in CI: a bounded slice with fixed seeds.

``benchmarks/branches.py`` runs the same generator and check at scale.
"""

from __future__ import annotations

import collections

from . import branches

SLICE = range(0, 30)


def test_branch_programs_slice_matches_numpy_or_refuses_what_was_planted(tmp_path):
    outcomes, bad, both = collections.Counter(), [], 0
    for seed in SLICE:
        out = branches.check(seed, n_inputs=6, onnx=seed % 15 == 0, tmpdir=str(tmp_path))
        outcomes[out.kind] += 1
        both += out.both_ways
        if out.kind not in ("exact", "refused"):
            bad.append(f"seed {seed} {out.kind}: {out.detail[:600]}\n{out.source}")
    assert not bad, "\n".join(bad)
    # the slice must exercise both: most programs convert, a few refuse what was planted in them,
    # and the inputs put many tests on both sides
    assert outcomes["exact"] >= 15 and outcomes["refused"] >= 4, outcomes
    assert both >= 20, both


def test_a_planted_construct_that_went_through_is_a_mismatch(monkeypatch):
    # the generator's own guard: were leapp to accept a write into an array in a branch, the
    # program would be reported, not counted as exact
    seed = next(s for s in range(200) if branches.generate(s)[1] == "write")
    monkeypatch.setitem(branches.PLANTED, "write", ("pass", "writes into"))
    assert branches.check(seed).kind == "mismatch"
