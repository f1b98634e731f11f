"""The first ``pre-commit run`` of the leapp-lint hook, as a new user meets it.

    .venv/bin/python benchmarks/precommit_first_run.py [REV]     # default REV: HEAD

A throwaway git repository with one file that has an LP202 finding, a
``.pre-commit-config.yaml`` that uses this repository's hook at REV (committed:
pre-commit clones it), and an empty ``PRE_COMMIT_HOME``, so the run builds the
hook's environment exactly as it would for a user (a venv, then ``pip install``
of the repository: its base install, with downloads). Prints the time of the
first run (environment build included) and of the second, the environment's
size, whether torch or numpy is in it, and whether LP202 was found. Goal
(issue 20): under 120 s, no torch. Not a CI test: it needs the network and
takes about a minute; tests/test_precommit_hook.py checks the same environment
cheaply.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
PREP = "import numpy as np\n\n# leapp: trace\ndef f(x):\n    if x.mean() > 0:\n        x = -x\n    return x\n"


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def main(rev: str = "HEAD") -> int:
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp, "repo"), Path(tmp, "home")
        repo.mkdir()
        env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
        env.pop("PYTHONPATH", None)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / ".pre-commit-config.yaml").write_text(
            f"repos:\n- repo: {ROOT}\n  rev: {sha}\n  hooks:\n  - id: leapp-lint\n")
        (repo / "prep.py").write_text(PREP)
        subprocess.run(["git", "add", "."], cwd=repo, check=True)
        times = []
        for _ in range(2):
            start = time.perf_counter()
            run = subprocess.run([PRE_COMMIT, "run", "--all-files"], cwd=repo, env=env,
                                 capture_output=True, text=True)
            times.append(time.perf_counter() - start)
        (venv,) = home.glob("repo*/py_env-*")
        python = venv / "bin" / "python"
        listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"],
                                capture_output=True, text=True, check=True).stdout.split()
        heavy = [p for p in listed if p.split("==")[0].lower() in ("torch", "numpy")]
        found = "prep.py:5:8: LP202" in run.stdout
        print(f"hook rev {sha[:10]}: first run {times[0]:.1f} s (environment build included), "
              f"second run {times[1]:.1f} s")
        print(f"environment {venv.name}: {_size(venv) / 2**20:.0f} MiB, "
              f"{_size(home) / 2**20:.0f} MiB in PRE_COMMIT_HOME; packages: {', '.join(listed)}")
        print(f"torch or numpy installed: {heavy or 'none'}; LP202 found: {found}; "
              f"exit status {run.returncode} (1: findings)")
        return 0 if found and not heavy and run.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
