"""The deterministic slice of ``benchmarks/fault_injection.py``: every file-system call of a
``lint --fix`` run and of an export, failed in turn, leaves no corrupted file, no sidecar of
another artifact and no leftover. (The SIGKILL mode runs by hand; figures in the issue notes.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "fault_injection.py"


@pytest.fixture(scope="module")
def faults():
    spec = importlib.util.spec_from_file_location("fault_injection", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clean(counts):
    return {k: v for k, v in counts.items() if k not in ("runs", "killed")}


def test_lint_fix_survives_a_failure_at_every_call(faults, tmp_path):
    counts = faults.lint_injected(str(tmp_path))
    assert counts["runs"] >= 10  # every write, fsync and rename of four files and the cache
    assert set(_clean(counts).values()) == {0}, counts


def test_export_survives_a_failure_at_every_call(faults, tmp_path):
    counts = faults.export_injected(str(tmp_path), formats=("torchscript",))
    assert counts["runs"] >= 5
    assert set(_clean(counts).values()) == {0}, counts
