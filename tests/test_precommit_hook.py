"""leapp as a pre-commit hook: a failing file blocks the commit, a clean one passes.

For a ``language: python`` hook pre-commit pip-installs this repository (its
base install, no extra) into a fresh environment. That environment is rebuilt
here cheaply: the wheel pip builds from the repository, plus the installed
distributions its base requirements need, and nothing else (no site-packages):
it must hold no torch and no numpy, and find LP202. The real first
``pre-commit run`` (a venv and downloads, about a minute) is measured by
``benchmarks/precommit_first_run.py``. The shipped ``.pre-commit-hooks.yaml``
is validated as a manifest; the commit itself runs the same entry through a
``repo: local`` / ``language: system`` hook that uses the interpreter running
these tests.
"""

from __future__ import annotations

import email
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
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


def _requirements(lines):
    """Names of the unconditional (no extra, marker true here) requirements among ``lines``."""
    from packaging.requirements import Requirement

    names = []
    for line in lines or ():
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.append(re.sub(r"[-_.]+", "-", req.name).lower())
    return names


def _hook_environment(tmp_path):
    """(folder, base requirement names): the wheel built from the repository, unpacked, and the
    files of every installed distribution its base requirements need, transitively."""
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info next to the sources
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(wheels), str(source)],
                   check=True, capture_output=True, text=True)
    (wheel,) = wheels.glob("*.whl")
    env = tmp_path / "env"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(env)
        metadata = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        base = _requirements(email.message_from_bytes(z.read(metadata)).get_all("Requires-Dist"))
    todo, done = list(base), set()
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done.add(name)
        dist = importlib.metadata.distribution(name)
        todo += _requirements(dist.requires)
        for f in dist.files:
            target = env / f
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(dist.locate_file(f), target)
    return env, base


def test_the_hook_s_environment_has_no_torch_and_finds_lp202(tmp_path):
    env, base = _hook_environment(tmp_path)
    assert "torch" not in base and "numpy" not in base, base
    assert not [p for p in env.iterdir() if p.name.split("-")[0].split(".")[0] in ("torch", "numpy")]
    (tmp_path / "prep.py").write_text(
        "import numpy as np\n\n# leapp: trace\ndef f(x):\n    while x.mean() > 0:\n        x = x - 1.0\n"
        "    return x\n")
    # -S: no site-packages, so the interpreter sees the standard library and env only
    bare = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    bare["PYTHONPATH"] = str(env)
    probe = subprocess.run([sys.executable, "-S", "-c", "import importlib.util as u; "
                            "print([m for m in ('torch', 'numpy', 'libcst') if u.find_spec(m)])"],
                           env=bare, capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "['libcst']"
    lint = subprocess.run([sys.executable, "-S", "-m", "leapp", "lint", "--no-cache", "prep.py"],
                          cwd=tmp_path, env=bare, capture_output=True, text=True)
    assert lint.returncode == 1, lint.stderr
    assert lint.stdout.startswith("prep.py:5:11: LP202 `while` test on an array expression"), lint.stdout
