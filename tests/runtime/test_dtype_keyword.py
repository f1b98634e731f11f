"""Parity records with ``dtype=`` added to their calls (a slice; ``benchmarks/dtype_keyword.py`` runs all).

A wrong adapter shows as a dtype the self-check repairs (``LeappInternalWarning``,
an error in the test run) or as values that differ from NumPy's.
"""

from __future__ import annotations

import dtype_keyword as dk
import pytest
import records

NAMES = ("numpy.sum", "numpy.prod", "numpy.cumsum", "numpy.mean", "numpy.add", "numpy.sqrt", "numpy.trace",
         "numpy.add.reduce", "numpy.multiply.accumulate", "numpy.full_like", "numpy.remainder")
SLICE = list({r.name: r for r in reversed(records.all_records()) if r.name in NAMES}.values())  # first of each


@pytest.mark.parametrize("rec", SLICE, ids=lambda r: r.name)
def test_dtype_keyword_matches_numpy(rec, tmp_path):
    checked = 0
    for v in dk.variants(rec):
        module = dk.numpy_accepts(v, str(tmp_path))
        if module is None:
            continue
        found = dk.check(v, module)
        assert found is None or found.startswith("refused"), f"call {v.call} dtype={v.dtype}: {found}"
        checked += found is None
    assert checked, "no dtype= variant of this record ran"
