"""The static stage never pays for torch or numpy (checked in fresh processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
HEAVY = ("torch", "numpy", "leapp.runtime", "libcst")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, env=ENV, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_ast_pass_loads_no_heavy_module():
    loaded = _modules_after("import leapp.ast_pass, leapp.cli")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith("leapp.runtime")]


def test_lint_process_never_imports_torch_and_starts_faster_than_torch(tmp_path):
    f = tmp_path / "prep.py"
    f.write_text("import numpy as np\n# leapp: trace\ndef f(x):\n    return float(x.sum())\n")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "leapp", "lint", "--no-cache",
                           str(f)], capture_output=True, text=True, env=ENV)
    lint_s = time.perf_counter() - start
    assert proc.returncode == 1 and "LP201" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert not [m for m in imported if m.split(".")[0] in HEAVY or m.startswith("leapp.runtime")]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], env=ENV, check=True)
    torch_s = time.perf_counter() - start
    print(f"leapp lint process: {lint_s:.3f}s; python -c 'import torch': {torch_s:.3f}s")
    assert lint_s < torch_s  # relative, so a slow machine does not make it flaky
