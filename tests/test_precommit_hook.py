"""leapp as a pre-commit hook: a failing file blocks the commit, a clean one passes.

pre-commit would pip-install this repository into a fresh environment for a
``language: python`` hook, which needs the network (torch). The shipped
``.pre-commit-hooks.yaml`` is validated as a manifest; the commit itself runs
the same entry through a ``repo: local`` / ``language: system`` hook that uses
the interpreter running these tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))

pytestmark = pytest.mark.skipif(not (shutil.which("git") and Path(PRE_COMMIT).exists()),
                                reason="needs git and pre-commit")


def _run(args, cwd, env, check=True):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=check)


def test_manifest_is_valid():
    proc = subprocess.run([PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hook_blocks_a_failing_commit_and_passes_a_clean_one(tmp_path):
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(sys.path),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    repo = tmp_path / "repo"
    repo.mkdir()
    _run(["git", "init", "-q"], repo, env)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: leapp-lint\n    name: leapp lint\n"
        f"    entry: {sys.executable} -m leapp lint --no-cache\n"
        "    language: system\n    types: [python]\n")
    _run([PRE_COMMIT, "install"], repo, env)
    (repo / "prep.py").write_text(
        "import numpy as np\n\n# leapp: trace\ndef f(x):\n    return float(x.mean())\n")
    _run(["git", "add", "."], repo, env)
    blocked = _run(["git", "commit", "-qm", "bad"], repo, env, check=False)
    assert blocked.returncode != 0
    assert "prep.py:5:12: LP201" in blocked.stdout + blocked.stderr
    (repo / "prep.py").write_text(
        "import numpy as np\n\n# leapp: trace\ndef f(x):\n    return x.mean()\n")
    _run(["git", "add", "."], repo, env)
    ok = _run(["git", "commit", "-qm", "good"], repo, env, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout + ok.stderr
