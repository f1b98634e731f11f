"""Every ```python and ```console example in README.md and docs/*.md runs, as a reader would.

- A ```python block is one self-contained program: it is written to a file in an
  empty folder and run there (in this process, so torch is imported once); it
  must finish without an exception.
- In docs/lint-codes.md (generated from the rules) each code's *Example* block is
  linted as a file of its own and must report that code, and each *Use instead*
  block must run and must not report it.
- A ```console block runs each ``$ leapp ...`` line in a folder holding a copy of
  the repository's examples/; every output line the block shows under a command
  must appear, in order, in what the command printed, and the exit status must be
  1 when the block shows findings, else 0.

A block that is not meant to run is fenced as ```text (or ```bash, ```yaml, ...).
"""

from __future__ import annotations

import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import leapp
from leapp.ast_pass import check_bytes

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
FINDING = re.compile(r"^\S+:\d+:\d+: LP\d{3} ")


def _blocks():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            if m.group(1) in ("python", "console"):
                line = text.count("\n", 0, m.start()) + 1
                heading = text.rfind("\n#### ", 0, m.start())
                section = text[heading + 6:text.index("\n", heading + 6)] if heading >= 0 else ""
                lint_code = text.rfind("\n### LP", 0, m.start())
                code = text[lint_code + 5:lint_code + 10] if lint_code >= 0 else ""
                yield (f"{page.relative_to(ROOT)}:{line}", m.group(1), m.group(2), section, code)


BLOCKS = list(_blocks())


def _run_python(source, folder, monkeypatch):
    path = folder / "example.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.chdir(folder)
    try:
        runpy.run_path(str(path), run_name="__docs_example__")
    finally:
        leapp.reset()


def _commands(block):
    """[(argv, shown output lines)] of a console block."""
    out = []
    for line in block.splitlines():
        if line.startswith("$ "):
            command = line[2:].split("  #")[0].strip()
            out.append((shlex.split(command), []))
        elif line.strip() and out:
            out[-1][1].append(line)
    return out


def _run_console(block, folder):
    shutil.copytree(ROOT / "examples", folder / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    commands = _commands(block)
    assert commands, "a console block with no `$ ` command"
    for argv, shown in commands:
        assert argv[0] == "leapp", f"only leapp commands run here: {argv}"
        done = subprocess.run([sys.executable, "-m", "leapp", *argv[1:]], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=300)
        printed = (done.stdout + done.stderr).splitlines()
        want = 1 if any(FINDING.match(s) for s in shown) else 0
        assert done.returncode == want, f"$ {' '.join(argv)} exited {done.returncode}:\n" + \
            "\n".join(printed[-30:])
        at = 0
        for expected in shown:
            while at < len(printed) and printed[at].rstrip() != expected.rstrip():
                at += 1
            assert at < len(printed), f"$ {' '.join(argv)} did not print {expected!r}:\n" + \
                "\n".join(printed[-30:])
            at += 1


@pytest.mark.parametrize("where, lang, block, section, code", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_example_runs(where, lang, block, section, code, tmp_path, monkeypatch):
    if lang == "console":
        _run_console(block, tmp_path)
    elif where.startswith("docs/lint-codes.md") and section == "Example":
        found = {d.code for d in check_bytes(block.encode(), "example.py").diagnostics}
        assert code in found, f"{code}'s example reports {sorted(found) or 'nothing'}"
    else:
        if where.startswith("docs/lint-codes.md"):  # Use instead: the fix, not the finding
            found = {d.code for d in check_bytes(block.encode(), "example.py").diagnostics}
            assert code not in found, f"{code}'s 'Use instead' still reports it"
        _run_python(block, tmp_path, monkeypatch)


def test_the_examples_are_collected():
    langs = [b[1] for b in BLOCKS]
    print(f"{len(BLOCKS)} examples: {langs.count('python')} python, {langs.count('console')} console")
    assert langs.count("console") >= 2 and langs.count("python") >= 30
    assert {b[0].split(":")[0] for b in BLOCKS} >= {"README.md", "docs/compile.md", "docs/lint-codes.md"}
