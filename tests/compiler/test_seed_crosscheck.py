"""The seed-style API gets the same cross-check at compile_graph, on the annotated region."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import leapp
import leapp.ast_pass
import leapp.table
from leapp.compiler import seed
from leapp.errors import LeappInternalWarning

from . import seed_regions
from .seed_regions import region, region_untraced

FRAMES = [np.array([0.5, -1.0, 2.0], dtype=np.float32) * k for k in (1.0, 2.0, -1.5)]
PATH = seed_regions.__file__


def run(fn, *, validate=True):
    leapp.start("test")
    for frame in FRAMES:
        fn(frame)
    leapp.stop()
    return leapp.compile_graph(validate=validate)


def test_clean_region_is_cross_checked_and_reported():
    pipeline = run(region)
    check = pipeline["prep"].crosscheck
    first = region.__code__.co_firstlineno + 1
    assert (check.path, check.first_line, check.last_line) == (PATH, first, first + 2)
    assert check.ok
    text = pipeline.report()
    assert f"cross-check of 'prep' ({PATH}:{first}-{first + 2})" in text
    assert "line: numpy.clip: supported -> recorded (1 node)" in text
    assert "0 disagreement(s)" in text


def test_untraced_call_in_region_matches_its_static_verdict():
    with pytest.warns(leapp.errors.LeappWarning):  # the untraced call, and the output it freezes
        pipeline = run(region_untraced, validate=False)
    check = pipeline["uniq"].crosscheck
    assert check.ok
    line = region_untraced.__code__.co_firstlineno + 2
    rows = [r for r in check.rows if r.line == line]
    assert [(r.call, r.static, r.runtime) for r in rows] == [("numpy.unique", "unsupported", "untraced")]


def test_planted_disagreement_is_reported_at_compile_graph(monkeypatch):
    monkeypatch.delitem(leapp.table.TABLE, "numpy.clip")  # the runtime traces without the entry...
    leapp.start("test")
    with pytest.warns(leapp.errors.LeappWarning):  # the untraced clip freezes the output
        for frame in FRAMES:
            region(frame)
    leapp.stop()
    monkeypatch.undo()  # ...while the static pass, run at compile_graph, has it
    with pytest.warns(LeappInternalWarning) as caught:
        pipeline = leapp.compile_graph(validate=False)
    line = region.__code__.co_firstlineno + 2
    messages = [str(w.message) for w in caught if w.category is LeappInternalWarning]
    assert any(f"{PATH}:{line}: numpy.clip" in m for m in messages)
    assert not pipeline["prep"].crosscheck.ok
    assert "DISAGREEMENT" in pipeline.report()


def test_planted_unsupported_verdict_on_a_traced_call_is_reported_at_compile_graph(monkeypatch):
    leapp.start("test")
    for frame in FRAMES:
        region(frame)  # traced with the table's numpy.clip entry
    leapp.stop()
    # ...while the static pass, run at compile_graph, wrongly calls it unsupported
    real = leapp.ast_pass.check_bytes

    def planted(*args, **kwargs):
        analysis = real(*args, **kwargs)
        analysis.sites[:] = [dataclasses.replace(s, verdict="unsupported") if s.name == "numpy.clip" else s
                             for s in analysis.sites]
        return analysis

    monkeypatch.setattr(leapp.ast_pass, "check_bytes", planted)
    monkeypatch.setattr(seed, "_ANALYSES", {})  # analysed afresh (and the planted analysis not kept)
    with pytest.warns(LeappInternalWarning) as caught:
        leapp.compile_graph(validate=False)
    line = region.__code__.co_firstlineno + 2
    messages = [str(w.message) for w in caught if w.category is LeappInternalWarning]
    assert any(f"{PATH}:{line}: numpy.clip: the static pass calls it unsupported, but the runtime traced it"
               in m for m in messages), messages


def test_a_file_is_analysed_once_per_content(monkeypatch):
    """compile_graph cross-checks every session; the same file's bytes are analysed once (most of
    compile_graph's own time), and other bytes for the same path are analysed again."""
    calls = []
    real = leapp.ast_pass.check_bytes

    def counting(data, path, **kw):
        calls.append(path)
        return real(data, path, **kw)

    monkeypatch.setattr(leapp.ast_pass, "check_bytes", counting)
    monkeypatch.setattr(seed, "_ANALYSES", {})
    for _ in range(3):
        assert run(region)["prep"].crosscheck.ok
    assert calls == [PATH]
    with open(PATH, "rb") as f:
        data = f.read()
    assert seed._analysis(data, PATH) is seed._analysis(data, PATH)
    edited = seed._analysis(data + b"\n# edited\n", PATH)
    assert calls == [PATH, PATH] and edited is not seed._analysis(data, PATH)
