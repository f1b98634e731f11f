"""The lint cache validates what it reads, lives in a private folder, and never hides a finding."""

from __future__ import annotations

import json
import os
import stat
from textwrap import dedent

import pytest

from leapp.ast_pass.cache import Cache
from leapp.cli import main

SRC = dedent("""
    import numpy as np

    # leapp: trace
    def f(x):
        return float(x.sum())
    """).lstrip()
FINDING = "p.py:5:12: LP201"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.py").write_text(SRC)
    return tmp_path


def _cache_file():
    folder = os.environ["LEAPP_CACHE_DIR"]
    names = os.listdir(folder)
    assert len(names) == 1, names
    return os.path.join(folder, names[0])


def _lint(capsys, *args):
    code = main(["lint", *args, "p.py"])
    return code, capsys.readouterr()


@pytest.mark.parametrize("content", [
    "null", "[]", "{}", '"x"', "{not json", "",
    '{"format": 2, "salt": null, "entries": []}',
])
def test_cache_file_of_the_wrong_shape_is_rebuilt(project, capsys, content):
    assert _lint(capsys)[0] == 1
    with open(_cache_file(), "w") as f:
        f.write(content)
    code, out = _lint(capsys)
    assert code == 1 and FINDING in out.out
    assert json.load(open(_cache_file()))["format"] == 2  # rewritten valid


def _tamper(edit):
    path = _cache_file()
    data = json.load(open(path))
    for entry in data["entries"].values():
        edit(entry)
    with open(path, "w") as f:
        json.dump(data, f)


@pytest.mark.parametrize("edit", [
    lambda e: e.update(diagnostics=[]),               # an emptied entry
    lambda e: e.clear(),                              # no fields at all
    lambda e: e.pop("checksum"),                      # a field missing
    lambda e: e["diagnostics"][0].pop("line"),        # a diagnostic missing a field
    lambda e: e["diagnostics"][0].update(line="5"),   # wrong type
    lambda e: e["diagnostics"][0].update(code="XX1"), # not a code
    lambda e: e["diagnostics"].append(None),
])
def test_tampered_entry_never_hides_a_finding(project, capsys, edit):
    assert _lint(capsys)[0] == 1
    _tamper(edit)
    code, out = _lint(capsys)
    assert code == 1 and FINDING in out.out and "All checks passed!" not in out.out


def test_entries_are_keyed_by_leapp_version_and_rules(project, capsys, monkeypatch):
    import leapp.ast_pass.runner as runner

    assert _lint(capsys)[0] == 1
    calls = []
    real = runner._check
    monkeypatch.setattr(runner, "_check", lambda items: calls.append(1) or real(items))
    assert _lint(capsys)[0] == 1 and not calls  # a hit
    monkeypatch.setattr(runner, "fingerprint", lambda: "another rule set")
    assert _lint(capsys)[0] == 1 and calls  # another salt: checked again


def test_cache_is_never_in_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("LEAPP_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    elsewhere, here = tmp_path / "project", tmp_path / "cwd"
    elsewhere.mkdir()
    here.mkdir()
    (elsewhere / "p.py").write_text(SRC)
    monkeypatch.chdir(here)
    assert main(["lint", str(elsewhere / "p.py")]) == 1
    assert os.listdir(here) == [] and os.listdir(elsewhere) == ["p.py"]
    folder = tmp_path / "xdg" / "leapp"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    [name] = os.listdir(folder)
    assert stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600


def test_cache_dir_option_and_no_cache(project, capsys, tmp_path):
    chosen = tmp_path / "chosen"
    assert main(["lint", "--cache-dir", str(chosen), "p.py"]) == 1
    assert len(os.listdir(chosen)) == 1
    before = os.listdir(os.environ["LEAPP_CACHE_DIR"]) if os.path.exists(os.environ["LEAPP_CACHE_DIR"]) else []
    assert main(["lint", "--no-cache", "p.py"]) == 1
    assert (os.listdir(os.environ["LEAPP_CACHE_DIR"])
            if os.path.exists(os.environ["LEAPP_CACHE_DIR"]) else []) == before


def test_one_cache_file_per_project_root(tmp_path, monkeypatch, capsys):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("[tool.leapp]\n")
        (tmp_path / name / "p.py").write_text(SRC)
    monkeypatch.chdir(tmp_path)
    main(["lint", "a/p.py"])
    main(["lint", "b"])
    main(["lint", "a"])
    assert len(os.listdir(os.environ["LEAPP_CACHE_DIR"])) == 2


def test_planted_symlink_at_the_cache_file_is_not_followed(project, capsys, tmp_path):
    assert _lint(capsys)[0] == 1
    path = _cache_file()
    victim = tmp_path / "victim"
    victim.write_text("private")
    os.chmod(victim, 0o600)
    os.remove(path)
    os.symlink(victim, path)
    code, out = _lint(capsys)
    assert code == 1 and FINDING in out.out
    assert victim.read_text() == "private"
    assert not os.path.islink(path)  # replaced by a real cache file, the link itself gone


def test_unsafe_cache_folder_is_not_used(project, capsys, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    code, out = _lint(capsys, "--cache-dir", str(shared))
    assert code == 1 and FINDING in out.out
    assert "not using the lint cache" in out.err and "writable by other users" in out.err
    assert os.listdir(shared) == []
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    code, out = _lint(capsys, "--cache-dir", str(tmp_path / "link"))
    assert code == 1 and "not using the lint cache" in out.err and os.listdir(target) == []


def test_cache_growth_is_bounded(tmp_path, monkeypatch):
    import leapp.ast_pass.cache as cache_mod

    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 3)
    c = Cache(str(tmp_path), "salt", folder=str(tmp_path / "c"))
    for i in range(5):
        c.put(f"k{i}", [])
    c.save()
    again = Cache(str(tmp_path), "salt", folder=str(tmp_path / "c"))
    assert list(again.entries) == ["k2", "k3", "k4"]
