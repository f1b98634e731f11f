"""Library corpus cases refused only for control flow on data, with branch conversion off and on.

``python benchmarks/corpus_control_flow_only.py [-k SUBSTRING]``

Every case of ``tests/corpus/cases.py`` goes through strict ``@leapp.compile`` on its
example input twice: with ``convert_control_flow=False`` (every branch on data refused,
as before issue 19) and with the default (user and library branches converted). A
refusal counts as *only for control flow* when every problem it lists is a branch test
on data (``bool() of a traced array``) or it is the conversion's own refusal
(``ConversionError``: the branches cannot be selected); anything else it lists (an
escape, an untraced call, an ndarray subclass, a write into an input...) makes it a
refusal for something else. This measures what ``benchmarks/corpus.py`` reads from the
labels (``reason == "control-flow"``), case by case, from leapp's own messages. It
counts a little wide: a function that returns ``bool(...)`` of a traced test (a Python
bool, an escape) is worded as a branch test too.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "src"))

from corpus import runner  # noqa: E402
from corpus.cases import CASES  # noqa: E402

_BRANCH = "bool() of a traced array"


def outcome(fn, example, convert):
    """"graph returned", "control flow only", "something else" or "crash: ..." for one compile."""
    import leapp
    from leapp.errors import LeappError

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            leapp.compile(fn, convert_control_flow=convert)(*runner._copy(example))
        except LeappError as error:
            if type(error).__name__ == "ConversionError":
                return "control flow only"
            problems = re.findall(r"\n  - (.*)", str(error))
            if problems and all(_BRANCH in p or p.startswith("leapp lint did not flag") for p in problems):
                return "control flow only"
            return "something else"
        except Exception as error:  # noqa: BLE001 - counted, never hidden
            return f"crash: {type(error).__name__}"
    return "graph returned"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only cases whose id contains this")
    options = parser.parse_args(argv)
    cases = [c for c in CASES if options.k in c.id]
    start, rows = time.perf_counter(), {}
    with tempfile.TemporaryDirectory() as directory:
        module = runner.write_module(directory, cases)
        for case in cases:
            example = runner.inputs_for(case)[0]
            fn = getattr(module, case.id)
            rows[case.id] = (outcome(fn, example, False), outcome(fn, example, True))
    print(f"{len(cases)} cases, {time.perf_counter() - start:.0f} s")
    for i, when in enumerate(("conversion off", "conversion on")):
        counts = collections.Counter(r[i] for r in rows.values())
        print(f"{when}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    pairs = collections.Counter((c.label, c.reason or "-", *rows[c.id]) for c in cases)
    print("\nlabel, reason, conversion off -> on: cases")
    for (label, reason, off, on), n in sorted(pairs.items()):
        print(f"  {label:8} {reason:13} {off:18} -> {on:18} {n}")
    only = [c for c in cases if rows[c.id][0] == "control flow only"]
    by_library = collections.defaultdict(lambda: [0, 0])
    for c in only:
        by_library[c.library][0] += 1
        by_library[c.library][1] += rows[c.id][1] == "control flow only"
    print("\nrefused only for control flow with conversion off, per library: off -> still on")
    for library, (off, on) in sorted(by_library.items()):
        print(f"  {library}: {off} -> {on}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
