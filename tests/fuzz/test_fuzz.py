"""Differential fuzzing in CI: a bounded number of generated programs, fixed seed.

``benchmarks/fuzz.py`` runs as many as asked (same generator, same check) and
writes a report; every mismatch it finds becomes a case in
``test_regressions.py``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import check_program


@settings(max_examples=80, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(min_value=0, max_value=2**31))
def test_generated_programs_match_numpy(seed):
    check_program(seed)
