"""Every parity record with ``dtype=`` added to its NumPy calls: ``python benchmarks/dtype_keyword.py``.

For each record's first case, each NumPy call in its source and each dtype of
``tests/dtype_keyword.DTYPES``, keeps the variants NumPy accepts and compiles
them with ``@leapp.compile``; prints the counts and every finding (a dtype the
self-check had to repair, a value that differs, a crash, a refusal) and exits 1
on any repair, mismatch or crash.
"""

from __future__ import annotations

import collections
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main():
    import dtype_keyword as dk
    import records

    import leapp.api

    start, counts, findings = time.time(), collections.Counter(), []
    folder = tempfile.mkdtemp(prefix="leapp_dtype_")
    for rec in records.all_records():
        for v in dk.variants(rec):
            module = dk.numpy_accepts(v, folder)
            if module is None:
                counts["numpy rejects"] += 1
                continue
            found = dk.check(v, module)
            counts["ok" if found is None else found.split(":")[0]] += 1
            if found:
                findings.append(f"{rec.name}[{rec.label}] call {v.call} dtype={v.dtype}: {found[:300]}")
        leapp.api.reset()
    print("\n".join(findings))
    print(dict(counts), f"{time.time() - start:.0f} s")
    return 1 if any(counts[k] for k in ("repaired", "mismatch", "crash")) else 0


if __name__ == "__main__":
    sys.exit(main())
