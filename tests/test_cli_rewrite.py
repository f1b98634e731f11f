"""``leapp rewrite``: stdout, --diff and --in-place."""

from __future__ import annotations

from textwrap import dedent

from leapp.cli import main

SRC = dedent('''
    import numpy as np

    # leapp: trace
    def f(x):
        return np.clip(x, 0.0, 1.0)  # keep me
    ''').lstrip()
ROUTED = '        return _leapp.call("prep.py:5:12", np.clip, x, 0.0, 1.0)  # keep me\n'


def test_rewrite_stdout_diff_in_place(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prep.py").write_text(SRC)
    assert main(["rewrite", "prep.py"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("import leapp.dispatch as _leapp\nimport numpy as np\n")
    assert ROUTED.strip() in out
    assert main(["rewrite", "--diff", "prep.py"]) == 0
    diff = capsys.readouterr().out
    assert diff.startswith("--- a/prep.py\n+++ b/prep.py\n") and "+import leapp.dispatch as _leapp" in diff
    assert (tmp_path / "prep.py").read_text() == SRC
    assert main(["rewrite", "--in-place", "prep.py"]) == 0
    once = (tmp_path / "prep.py").read_text()
    assert ROUTED.strip() in once
    assert main(["rewrite", "--in-place", "prep.py"]) == 0
    assert (tmp_path / "prep.py").read_text() == once  # idempotent


def test_rewrite_errors_do_not_stop_other_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "prep.py").write_text(SRC)
    assert main(["rewrite", "bad.py", "prep.py", "missing.py"]) == 1
    out, err = capsys.readouterr()
    assert "# leapp rewrite: prep.py" in out and "bad.py: cannot rewrite" in err
    assert "Traceback" not in err
    assert main(["rewrite", "--diff", "--in-place", "prep.py"]) == 2  # exclusive options
