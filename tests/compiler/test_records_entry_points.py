"""Every parity record through the user's entry points, from rendered source, against NumPy.

The parity tests call the runtime directly; here each record's call is written
as a module (``tests/render.py``) and run the ways users run it:

- ``@leapp.compile``: every record (its first dtype/shape case), so the static
  pass, the rewriter and the cross-check see every table entry's spelling;
- the seed API (``start`` / ``annotate`` / ``stop`` / ``compile_graph``): every
  third record of each parity module;
- the CLI (``leapp compile FILE:f``) in-process: every 25th record; one record
  in a real subprocess.

``benchmarks/records_entry_points.py`` runs every case of every record through
all three.
"""

from __future__ import annotations

import entry_points
import numpy as np
import pytest
import records
import render

ALL = records.all_records()


def _id(rec):
    return rec.name.replace("numpy.", "") + (f"[{rec.label}]" if rec.label else "")


def _first_case(rec):
    cases = records.expand(rec)
    assert cases, f"{_id(rec)}: NumPy accepts none of its cases"
    return cases[0]


def _stratified(step):
    """Every ``step``-th record of each parity module (a deterministic slice of each area)."""
    out = []
    for mod in records.parity_modules():
        out += list(getattr(mod, "RECORDS", ()))[::step]
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("rendered"))


@pytest.mark.parametrize("rec", ALL, ids=_id)
def test_record_through_leapp_compile(rec, folder):
    entry_points.via_compile(rec, *_first_case(rec), folder)


@pytest.mark.parametrize("rec", _stratified(3), ids=_id)
def test_record_through_the_seed_api(rec, folder):
    entry_points.via_seed(rec, *_first_case(rec), folder)


@pytest.mark.parametrize("rec", _stratified(25), ids=_id)
def test_record_through_the_cli(rec, folder):
    entry_points.via_cli(rec, *_first_case(rec), folder)


def test_record_through_the_cli_in_a_subprocess(folder):
    rec = next(r for r in ALL if r.name == "numpy.clip")
    text, exported = entry_points.via_cli(rec, *_first_case(rec), folder, subprocess=True)
    assert exported, text


def test_every_record_renders_as_source_a_user_could_write():
    """No record falls back to values handed over in memory for its call itself."""
    opaque = []
    for rec in ALL:
        dtypes, shapes = _first_case(rec)
        first, traced, _ = entry_points._samples(rec, dtypes, shapes)
        r = render.render(rec.fn, first, traced)
        if "_ENV[" in r.source.split("@leapp.compile")[1]:
            opaque.append(_id(rec))
    assert not opaque, opaque


def test_rendering_writes_calls_as_source():
    r = render.render(lambda a, kw={"axis": 0, "keepdims": True}: np.sum(a, **kw), [np.ones(3)], [True])
    assert "return np.sum(a, axis=0, keepdims=True)" in r.source
    r = render.render(np.add, [np.ones(3), 2.5], [True, False])
    assert "p1 = 2.5" in r.source and "return np.add(p0, p1)" in r.source
    r = render.render(np.maximum.accumulate, [np.ones(3)], [True])
    assert "return np.maximum.accumulate(p0)" in r.source
