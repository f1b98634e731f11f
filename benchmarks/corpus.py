"""The library corpus through leapp: ``python benchmarks/corpus.py [--json out.json] [-k SUBSTRING] [--reason R]``.

Runs every case of ``tests/corpus/cases.py`` (functions from real pure-NumPy
libraries, called unchanged) through strict ``@leapp.compile``, the seed API and
ONNX, against NumPy on fresh and edge inputs (``tests/corpus/runner.py``).
Prints the counts per stage, the cases whose label does not hold grouped by
outcome, the functions labelled refused only for control flow on data, and
each library branch leapp converted with the arm every input took (issue 19).
Exits 1 when any label does not hold.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "src"))

from corpus import runner  # noqa: E402
from corpus.cases import CASES  # noqa: E402


def first_problem(detail):
    """The first problem a refusal lists, its paths cut to the library's: where, and what failed."""
    problems = re.findall(r"\n  - (.*)", detail)
    text = problems[0] if problems else detail.split("\n")[0]
    text = re.sub(r"\S*site-packages/", "", text)
    text = re.sub(r" \(in [^()]*, called at [^()]*\)", "", text)
    # a branch test: the conversion's own words say which property failed
    text = re.sub(r"^(\S+\.py:\d+): bool\(\) of a traced array .*?the value leaves the graph; "
                  r"(?:leapp did not convert this branch in library code \([^()]*\): )?", r"\1: ", text)
    return text[:200]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write every case's outcomes here")
    parser.add_argument("-k", default="", help="only cases whose id contains this")
    parser.add_argument("--reason", default="", help="only cases labelled with this reason (control-flow, ...)")
    parser.add_argument("--quiet", action="store_true", help="counts only")
    options = parser.parse_args(argv)

    cases = [c for c in CASES if options.k in c.id and (not options.reason or c.reason == options.reason)]
    results, start = {}, time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        module = runner.write_module(directory, cases)
        for case in cases:
            results[case.id] = runner.run_case(case, module, directory)
    elapsed = time.perf_counter() - start

    libraries = collections.Counter(c.library for c in cases)
    labels = collections.Counter(c.label for c in cases)
    print(f"{len(cases)} cases from {len(libraries)} libraries "
          f"({', '.join(f'{k} {v}' for k, v in sorted(libraries.items()))}); "
          f"labels: {labels['trace']} trace, {labels['refuse']} refuse, {labels['convert']} convert; "
          f"{elapsed:.1f} s")
    width = max(len(s) for s in runner.STATUSES)
    print(f"{'':<{width}}  " + "  ".join(f"{s:>8}" for s in runner.STAGES))
    for status in runner.STATUSES:
        counts = [sum(r[s].status == status for r in results.values()) for s in runner.STAGES]
        print(f"{status:<{width}}  " + "  ".join(f"{n:>8}" for n in counts))

    broken = {c.id: runner.label_holds(c, results[c.id]) for c in cases}
    broken = {k: v for k, v in broken.items() if v}
    print(f"\nlabel holds: {len(cases) - len(broken)} / {len(cases)}")
    named = [c for c in cases if c.label == "refuse" and c.decides
             and c.decides in results[c.id]["compile"].library_lines]
    print(f"refusals whose strict error names the deciding library line: {len(named)} / {labels['refuse']}")
    if not options.quiet:
        by_status = collections.defaultdict(list)
        for case_id, problems in broken.items():
            by_status[problems[0].split(":")[0] + ": " + problems[0].split(": ")[1].split(" ")[0]].append(
                (case_id, problems))
        for head, items in sorted(by_status.items()):
            print(f"\n## {head} ({len(items)})")
            for case_id, problems in items:
                case = next(c for c in cases if c.id == case_id)
                print(f"- {case_id} [{case.label}] {case.call}")
                for p in problems:
                    print(f"    {p[:400]}")
        flow = [c for c in cases if c.control_flow_only]
        print(f"\n## labelled refused only for control flow on data (issue 19): {len(flow)}")
        for c in flow:
            outcome = results[c.id]["compile"]
            print(f"- {c.id}: {c.decides} (compile: {outcome.status})")
            if outcome.status != runner.EXACT:
                print(f"    first problem: {first_problem(outcome.detail)}")
        converted = [c for c in cases if results[c.id]["compile"].branches]
        print(f"\n## library branches converted (issue 19), the arm each input took: {len(converted)}")
        for c in converted:
            outcome = results[c.id]["compile"]
            print(f"- {c.id} [{c.label}] compile: {outcome.status}")
            for line in outcome.branches:
                print(f"    {line}")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({k: {s: dataclasses.asdict(o) for s, o in v.items()} for k, v in results.items()},
                      f, indent=1)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
