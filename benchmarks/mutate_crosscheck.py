"""Mutation check of the cross-check: delete one rule at a time, list the tests that fail.

Run by hand (about a minute per rule on 2 cores):

    PYTHONPATH=src .venv/bin/python benchmarks/mutate_crosscheck.py [pytest paths...]

Each mutation replaces one line of src/leapp/compiler/crosscheck.py (the rule's
verdict) with ``pass``, runs the tests, and restores the file. A rule that no
test notices is reported as SURVIVED (exit status 1).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "leapp" / "compiler" / "crosscheck.py"
DEFAULT_TESTS = ["tests/compiler", "tests/runtime/test_seed_api.py", "tests/test_main_job.py"]

# rule name -> (text of the line to neutralise, occurrence index, replacement)
MUTATIONS = {
    "supported-but-untraced (routed)": ("row.disagreement = SUPPORTED_BUT_UNTRACED", 0, "pass"),
    "supported-but-untraced (seed API, by line)": ("row.disagreement = SUPPORTED_BUT_UNTRACED", 1, "pass"),
    "unsupported-but-traced (routed)": ("row.disagreement = UNSUPPORTED_BUT_TRACED", 0, "pass"),
    "unsupported-but-traced (seed API, by line)": ("row.disagreement = UNSUPPORTED_BUT_TRACED", 1, "pass"),
    "supported-but-no-node": ("row.disagreement = SUPPORTED_BUT_NO_NODE", 0, "pass"),
    "not-flagged (lint miss)": ("row.missed = NOT_FLAGGED", 0, "pass"),
    "frozen-from-unflagged (lint miss)": ("row.missed = FROZEN_FROM_UNFLAGGED", 0, "pass"),
    "frozen excused by a flagged origin": ('if p.kind == "frozen" and origin is not None', 0, "if False"),
    "consequence is not the site's own problem": ('return p.kind == "untraced" and', 0, "return True or"),
}


def mutate(text, needle, index, replacement):
    hits = [m.start() for m in re.finditer(re.escape(needle), text)]
    if len(hits) <= index:
        raise SystemExit(f"mutation target not found: {needle!r} #{index}")
    start = hits[index]
    if replacement == "pass":
        line_end = text.index("\n", start)
        return text[:start] + "pass" + text[line_end:]
    return text[:start] + replacement + text[start + len(needle):]


def main(argv):
    tests = argv or DEFAULT_TESTS
    original = TARGET.read_text()
    survived = []
    try:
        for rule, (needle, index, replacement) in MUTATIONS.items():
            TARGET.write_text(mutate(original, needle, index, replacement))
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                                  cwd=ROOT, capture_output=True, text=True)
            failed = sorted({line.split(" ")[1].split(" - ")[0] for line in proc.stdout.splitlines()
                             if line.startswith("FAILED ")})
            print(f"{rule}: {len(failed)} failing")
            for name in failed:
                print(f"    {name}")
            if not failed:
                survived.append(rule)
    finally:
        TARGET.write_text(original)
    print("SURVIVED: " + ", ".join(survived) if survived else "every rule is caught by a test")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
