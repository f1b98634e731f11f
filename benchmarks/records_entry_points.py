"""Every case of every parity record through the user's entry points, from rendered source.

``python benchmarks/records_entry_points.py [--cli] [--limit N]``: each record's
every dtype/shape case (``records.expand``) written as a module
(``tests/render.py``), run through ``@leapp.compile`` and the seed API (and,
with ``--cli``, ``leapp compile FILE:f`` in-process), compared with NumPy.
Prints the counts and every failure; exits 1 on any. CI runs one case per
record (``tests/compiler/test_records_entry_points.py``).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", action="store_true", help="also run every case through `leapp compile`")
    ap.add_argument("--limit", type=int, default=None, help="only the first N records")
    args = ap.parse_args(argv)

    import entry_points
    import records
    import render

    import leapp.api

    ways = ["compile", "seed"] + (["cli"] if args.cli else [])
    start, counts, failures = time.time(), collections.Counter(), []
    folder = tempfile.mkdtemp(prefix="leapp_records_")
    for rec in records.all_records()[: args.limit]:
        for dtypes, shapes in records.expand(rec):
            for way in ways:
                try:
                    getattr(entry_points, f"via_{way}")(rec, dtypes, shapes, folder)
                    counts[f"{way} ok"] += 1
                except render.NotRenderable as exc:
                    counts[f"{way} not renderable"] += 1
                    failures.append(f"{way} {rec.name}[{rec.label}] {dtypes} {shapes}: {exc}")
                except Exception as exc:  # every failure is a finding
                    counts[f"{way} failed"] += 1
                    failures.append(f"{way} {rec.name}[{rec.label}] {dtypes} {shapes}: "
                                    f"{type(exc).__name__}: {str(exc)[:400]}")
                leapp.api.reset()
    print("\n".join(failures))
    print(dict(counts), f"{time.time() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
