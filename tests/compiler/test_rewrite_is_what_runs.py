"""``leapp rewrite`` shows exactly what ``leapp.compile`` runs (the suite checks every compiled function)."""

from __future__ import annotations

import dataclasses

import numpy as np
from rewrite_check import mismatches, read_file

import leapp

TABLE = np.array([0.5, 1.5, 2.5], dtype=np.float32)


def lookup_and_chain(x, i):
    return (TABLE[i] + np.abs(x)
            .reshape(-1)
            .sum())


def test_compile_runs_the_rewrite_output_and_the_check_sees_a_difference():
    cf = leapp.compile(lookup_and_chain)
    out = cf(np.arange(4, dtype=np.float32), np.array([2, 0]))
    np.testing.assert_allclose(out, lookup_and_chain(np.arange(4, dtype=np.float32), np.array([2, 0])))
    assert '_leapp.getitem("' in cf.source.rewritten and '"reshape"' in cf.source.rewritten
    text = read_file(__file__)
    assert mismatches([(lookup_and_chain.__qualname__, cf.source, text)]) == []
    # a compile that ran something else than the rewrite shows is caught
    other = dataclasses.replace(cf.source, rewritten=cf.source.rewritten.replace('"reshape"', '"ravel"'))
    (found,) = mismatches([(lookup_and_chain.__qualname__, other, text)])
    assert "lookup_and_chain" in found
