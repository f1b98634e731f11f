"""``leapp lint`` and ``leapp rewrite`` go past any bad file with a diagnostic for it."""

from __future__ import annotations

import os
import subprocess
import sys
from textwrap import dedent

import pytest

from leapp.cli import main

SRC = dedent("""
    import numpy as np

    # leapp: trace
    def f(x):
        return np.clip(x, 0.0, 1.0) + float(x.sum())
    """).lstrip()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text(SRC)
    return tmp_path


def _run(cwd, *argv):
    """In a subprocess with a timeout: a hang must fail the test, not stall the suite."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "leapp", *argv], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=env)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_and_device_are_reported_never_opened(project):
    os.mkfifo(project / "pipe.py")
    proc = _run(project, "lint", "--no-cache", ".", "/dev/zero")
    assert proc.returncode == 1, proc.stderr
    assert "pipe.py:1:1: LP905 Cannot read file: a FIFO, not a regular file." in proc.stdout
    assert "/dev/zero:1:1: LP905 Cannot read file: a character device, not a regular file." in proc.stdout
    assert "good.py:5:35: LP201" in proc.stdout
    proc = _run(project, "rewrite", "/dev/zero", "pipe.py", "good.py")
    assert proc.returncode == 1
    assert "/dev/zero: cannot rewrite: Cannot read file: a character device" in proc.stderr
    assert "pipe.py: cannot rewrite" in proc.stderr and "_leapp.call(" in proc.stdout


def test_size_limit_is_checked_before_reading(project, monkeypatch, capsys):
    import leapp.fsutil as fsutil

    (project / "pyproject.toml").write_text("[tool.leapp]\nmax-file-size = 100\n")
    (project / "big.py").write_text("x = 1\n" * 100)
    real_read = os.read
    monkeypatch.setattr(fsutil.os, "read", lambda fd, n: pytest.fail("read a file over the limit")
                        if os.fstat(fd).st_size > 100 else real_read(fd, n))
    assert main(["lint", "--no-cache", "big.py"]) == 1
    assert "big.py:1:1: LP904 File is 600 bytes, over the 100-byte limit" in capsys.readouterr().out
    assert main(["rewrite", "big.py"]) == 1
    assert "big.py: cannot rewrite: File is 600 bytes" in capsys.readouterr().err


DEEP_SUM = ("import numpy as np\n# leapp: trace\ndef f(x):\n    return "
            + " + ".join(["np.abs(x)"] * 500) + " + float(x.sum())\n")
DEEP_CHAIN = ("import numpy as np\n# leapp: trace\ndef f(x):\n    y = np.abs(x)" + ".T" * 600
              + "\n    return float(y.sum())\n")


@pytest.mark.parametrize("source, line", [(DEEP_SUM, 4), (DEEP_CHAIN, 5)])
def test_deeply_nested_valid_python_is_checked(project, capsys, source, line):
    (project / "deep.py").write_text(source)
    code = main(["lint", "--no-cache", "deep.py", "good.py"])
    out = capsys.readouterr().out
    assert code == 1 and "LP999" not in out and "LP901" not in out
    assert f"deep.py:{line}:" in out and "LP201" in out
    assert main(["rewrite", "deep.py", "good.py"]) == 0
    out = capsys.readouterr().out
    assert out.count("_leapp.call(") == (501 if source is DEEP_SUM else 2)
    assert main(["lint", "--no-cache", "--fix", "deep.py"]) == 1  # fix path parses it too


def test_rewrite_goes_on_after_a_failure(project, monkeypatch, capsys):
    import leapp.ast_pass as ast_pass

    (project / "a.py").write_text(SRC)
    real = ast_pass.rewrite_source

    def broken(source, path, **kw):
        if path == "a.py":
            raise RecursionError("maximum recursion depth exceeded")
        return real(source, path, **kw)

    monkeypatch.setattr(ast_pass, "rewrite_source", broken)
    assert main(["rewrite", "--in-place", "a.py", "good.py"]) == 2
    assert "a.py: cannot rewrite: internal error: RecursionError" in capsys.readouterr().err
    assert "_leapp.call(" in (project / "good.py").read_text()


def test_unreadable_folder_is_reported(project, monkeypatch, capsys):
    (project / "locked").mkdir()
    (project / "locked" / "x.py").write_text(SRC)
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code = main(["lint", "--no-cache", "."])
    out = capsys.readouterr().out
    assert code == 1 and "locked:1:1: LP905 Cannot read file: Permission denied." in out
    assert "good.py:5:35: LP201" in out


def test_form_feed_keeps_columns_and_fixes_are_idempotent(project, capsys):
    src = "\fimport math\nimport numpy as np\n# leapp: trace\ndef f(x):\n\f    return math.sqrt(x.var()) + np.clip(x, 0, 1)\n"
    (project / "ff.py").write_text(src)
    assert main(["lint", "--no-cache", "ff.py"]) == 1
    assert "ff.py:5:13: LP204" in capsys.readouterr().out  # the \f counts as one character
    assert main(["lint", "--no-cache", "--fix", "ff.py"]) == 0
    fixed = (project / "ff.py").read_text()
    assert fixed == src.replace("math.sqrt", "np.sqrt")
    assert main(["lint", "--no-cache", "--fix", "ff.py"]) == 0
    assert (project / "ff.py").read_text() == fixed
    capsys.readouterr()
    assert main(["rewrite", "--in-place", "ff.py"]) == 0
    once = (project / "ff.py").read_text()
    assert '_leapp.call("ff.py:5:32", np.clip, x, 0, 1)' in once
    assert main(["rewrite", "--in-place", "ff.py"]) == 0
    assert (project / "ff.py").read_text() == once


def test_empty_path_is_a_usage_error(project, capsys):
    assert main(["lint", ""]) == 2
    assert main(["rewrite", ""]) == 2
    err = capsys.readouterr().err
    assert "empty path" in err and "internal error" not in err
