"""The CLI on files it must not change or cannot compile, through ``python -m leapp`` as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from textwrap import dedent

FIXABLE = dedent('''
    import math
    import numpy as np
    import leapp

    @leapp.compile
    def prep(x):
        return x / math.sqrt(x.var())
''')


def _leapp(*args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "leapp", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_fix_and_rewrite_leave_a_read_only_file_alone_and_say_so(tmp_path):
    path = tmp_path / "prep.py"
    path.write_text(FIXABLE)
    path.chmod(0o444)  # root could still write it: the mode bits decide, as in ruff
    for args in (["lint", "--fix", "--no-cache", "prep.py"], ["rewrite", "--in-place", "prep.py"]):
        done = _leapp(*args, cwd=tmp_path)
        assert done.returncode != 0, (args, done.stdout, done.stderr)
        assert "prep.py" in done.stderr and "read-only" in done.stderr, (args, done.stderr)
        assert path.read_text() == FIXABLE
        assert oct(path.stat().st_mode & 0o777) == oct(0o444)
    path.chmod(0o644)  # writable again: the same fix is applied
    done = _leapp("lint", "--fix", "--no-cache", "prep.py", cwd=tmp_path)
    assert "np.sqrt(x.var())" in path.read_text(), done.stderr


def test_an_expression_too_deep_to_compile_is_lp901_not_an_internal_error(tmp_path):
    terms = " + ".join(["x"] * 170_000)
    (tmp_path / "deep.py").write_text(f"import leapp\n\n@leapp.compile\ndef f(x):\n    return {terms}\n")
    done = _leapp("lint", "--no-cache", "deep.py", cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "LP901" in done.stdout and "nested too deeply" in done.stdout, done.stdout
    assert "LP999" not in done.stdout
