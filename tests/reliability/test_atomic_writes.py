"""``lint --fix`` and ``rewrite --in-place`` replace files atomically and keep what they do not own."""

from __future__ import annotations

import os
import stat
from textwrap import dedent

import pytest

import leapp.fsutil as fsutil
from leapp.cli import main

SRC = dedent("""
    import math
    import numpy as np

    # leapp: trace
    def f(x):
        return x / math.sqrt(x.var())
    """).lstrip()
FIXED = SRC.replace("math.sqrt", "np.sqrt")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _leftovers(folder):
    return [n for n in os.listdir(folder) if n.endswith(fsutil.TMP_SUFFIX)]


def test_fix_keeps_bom_line_endings_and_mode(project):
    p = project / "p.py"
    p.write_bytes(fsutil.UTF8_BOM + SRC.replace("\n", "\r\n").encode())
    os.chmod(p, 0o640)
    assert main(["lint", "--no-cache", "--fix", "p.py"]) == 0
    assert p.read_bytes() == fsutil.UTF8_BOM + FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert _leftovers(project) == []


def test_rewrite_in_place_keeps_bom_line_endings_and_mode(project):
    p = project / "p.py"
    src = SRC.replace("x / math.sqrt(x.var())", "np.clip(x, 0.0, 1.0)")
    p.write_bytes(fsutil.UTF8_BOM + src.replace("\n", "\r\n").encode())
    os.chmod(p, 0o600)
    assert main(["rewrite", "--in-place", "p.py"]) == 0
    out = p.read_bytes()
    assert out.startswith(fsutil.UTF8_BOM + b"import leapp.dispatch as _leapp")
    assert b"_leapp.call(" in out and out.count(b"\r\n") == out.count(b"\n")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


def test_fix_writes_through_a_symlinked_source_file(project):
    (project / "real.py").write_text(SRC)
    (project / "link.py").symlink_to("real.py")
    assert main(["lint", "--no-cache", "--fix", "link.py"]) == 0
    assert (project / "link.py").is_symlink() and (project / "real.py").read_text() == FIXED


@pytest.mark.parametrize("fail_at", ["write", "fsync", "replace"])
def test_failing_write_leaves_the_original_intact(project, monkeypatch, capsys, fail_at):
    """A kill in the middle of --fix, simulated by the write failing part way."""
    p = project / "p.py"
    p.write_text(SRC)
    real = getattr(os, fail_at)
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if fail_at == "write":  # the first chunk lands, then the disk "fills"
            if len(calls) > 1:
                raise OSError(28, "No space left on device")
            return real(args[0], bytes(args[1][:10]))
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, fail_at, failing)
    code = main(["lint", "--no-cache", "--fix", "p.py"])
    monkeypatch.setattr(os, fail_at, real)
    assert calls, f"os.{fail_at} was never reached"
    assert code == 2 and "p.py: cannot fix" in capsys.readouterr().err
    assert p.read_text() == SRC
    assert _leftovers(project) == []


def test_read_only_file_does_not_stop_the_others(project, monkeypatch, capsys):
    """The OS refuses to replace one file (simulated: these tests may run as root)."""
    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(SRC)
    real = fsutil.atomic_write

    def refuse_b(path, data, **kw):
        if os.path.basename(path) == "b.py":
            raise PermissionError(13, "Permission denied", path)
        return real(path, data, **kw)

    monkeypatch.setattr(fsutil, "atomic_write", refuse_b)
    assert main(["lint", "--no-cache", "--fix", "."]) == 2
    err = capsys.readouterr().err
    assert "b.py: cannot fix: Permission denied" in err
    assert [(project / n).read_text() == FIXED for n in ("a.py", "b.py", "c.py")] == [True, False, True]


def test_temp_file_names_are_unpredictable_and_never_follow_links(project):
    victim = project / "victim"
    victim.write_text("secret")
    # plant links at every name this process could predictably use
    for n in range(50):
        os.symlink(victim, project / f".p.py.{os.getpid()}.{n}{fsutil.TMP_SUFFIX}")
    fsutil.atomic_write(str(project / "p.py"), b"x = 1\n")
    assert victim.read_text() == "secret" and (project / "p.py").read_text() == "x = 1\n"


def test_new_file_mode_follows_umask(project):
    old = os.umask(0o027)
    try:
        fsutil.atomic_write(str(project / "new.txt"), b"1")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(project / "new.txt").st_mode) == 0o640


def test_stale_temp_files_of_dead_processes_are_swept(project):
    dead = project / f".p.py.999999999.abc{fsutil.TMP_SUFFIX}"
    live = project / f".p.py.{os.getpid()}.abc{fsutil.TMP_SUFFIX}"
    dead.write_text("half")
    live.write_text("in progress")
    fsutil.atomic_write(str(project / "p.py"), b"x = 1\n")
    assert not dead.exists() and live.exists()
