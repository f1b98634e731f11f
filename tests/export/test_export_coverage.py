"""The export column of docs/supported.md: its data is current for a fixed sample, and names real entries.

The full run is ``benchmarks/export_parity.py --write`` (minutes); here a
bounded, deterministic sample of entries is exported again and must fare no
worse than the stored column says, and never disagree with NumPy silently.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leapp import table
from leapp.table.docs import EXPORT_FORMATS, export_coverage

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import export_parity  # noqa: E402

SAMPLE = ("numpy.expm1", "numpy.floor_divide", "numpy.sort", "numpy.interp", "numpy.cumprod",
          "numpy.max", "numpy.bitwise_xor", "numpy.mean", "numpy.cross", "numpy.cumsum")
DATA = export_coverage()


def test_the_column_names_only_table_entries_and_covers_every_format():
    assert set(DATA) == set(EXPORT_FORMATS)
    for fmt, rows in DATA.items():
        unknown = sorted(n for n in rows if table.canonical(n) not in table.TABLE)
        assert not unknown, f"{fmt}: not table entries: {unknown}"
        assert not [n for n, r in rows.items() if r["status"] == "silent"], f"{fmt}: silent mismatches stored"


@pytest.mark.parametrize("name", SAMPLE)
def test_a_sample_exports_as_the_column_says(name, tmp_path):
    stored = DATA["onnx"][name]
    jobs = export_parity.collect({name}, per_record=1)
    assert jobs
    worst = "exact"
    for job in jobs:
        if name not in job[0]:
            continue
        result = export_parity.run_case(job, "onnx", str(tmp_path))
        assert result["status"] != "silent", (job[1], result)
        if export_parity.RANK.get(result["status"], -1) > export_parity.RANK[worst]:
            worst = result["status"]
    assert export_parity.RANK[worst] <= export_parity.RANK[stored["status"]], (
        f"{name} now {worst}, the stored column says {stored['status']}: rerun benchmarks/export_parity.py --write")


@pytest.mark.parametrize("name", ("numpy.bitwise_xor", "numpy.cumprod"))
def test_the_dynamo_exporter_fares_as_the_column_says(name, tmp_path):
    """leapp.export.formats.AUTO_ONNX_EXPORTER can switch to "dynamo": on entries the TorchScript-based
    exporter has no symbol for, it fares no worse than the stored column and is never silently
    wrong (benchmarks/export_parity.py --exporter dynamo runs the whole sample; docs/export.md)."""
    stored = DATA["onnx"][name]
    jobs = [j for j in export_parity.collect({name}, per_record=1) if name in j[0]][:1]  # seconds each
    assert jobs
    for job in jobs:
        result = export_parity.run_case(job, "onnx", str(tmp_path), exporter="dynamo")
        assert result["status"] != "silent", (job[1], result)
        assert export_parity.RANK[result["status"]] <= export_parity.RANK[stored["status"]], (job[1], result)
