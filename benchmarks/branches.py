"""Programs that branch on data, at scale: ``python benchmarks/branches.py --programs 10000 --report out.json``.

Each program (``tests/fuzz/branches.py``) is written as a module, compiled with
``@leapp.compile``, traced once and run through that one graph on inputs that
put its tests on both sides, against the undecorated function in NumPy, in
worker processes (``--onnx-every K`` also exports every K-th program to ONNX and
runs it in onnxruntime; ``--seed-api-every K`` also runs every K-th program's plain function
through the seed API, ``annotate.input_tensors`` .. ``compile_graph(validate=True)``, which reads
no source and so converts no branch: it must refuse or warn naming the program's line, or give a
graph equal to NumPy; "silent" or "internal" there is a failure). Prints the counts (exact, refused as planted,
mismatches, internal errors, false refusals, "numpy_raises": NumPy raises on every input
and so did the compiled function, and "boundary": values that differ on an input where
NumPy took a test within the value tolerance of its boundary, listed apart), the refusals by the property that
failed, how many tests were exercised both ways, and writes a JSON report with
every failure (seed, detail, source). Exits 1 if there was any failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

BAD = ("mismatch", "internal", "false_refusal")


def _work(job):
    import warnings

    from fuzz import branches

    seed, onnx, seed_api = job
    warnings.simplefilter("ignore")
    try:
        out = branches.check(seed, onnx=onnx, seed_api=seed_api)
    except Exception as exc:  # the harness itself failed: report it, never hide it
        return {"seed": seed, "kind": "internal", "detail": f"harness {type(exc).__name__}: {exc}",
                "property": "", "tests": 0, "both_ways": 0, "source": "", "seed_api": ""}
    return {"seed": seed, "kind": out.kind, "detail": out.detail, "property": out.property,
            "tests": out.tests, "both_ways": out.both_ways, "source": out.source, "seed_api": out.seed_api}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--programs", type=int, default=200)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--onnx-every", type=int, default=0)
    p.add_argument("--seed-api-every", type=int, default=0)
    p.add_argument("--report", default=None)
    p.add_argument("--progress", type=int, default=0, help="print the counts so far every N programs")
    args = p.parse_args(argv)
    jobs = [(s, bool(args.onnx_every) and s % args.onnx_every == 0,
             bool(args.seed_api_every) and s % args.seed_api_every == 0)
            for s in range(args.start, args.start + args.programs)]
    t0 = time.perf_counter()
    counts, refusals, failures = collections.Counter(), collections.Counter(), []
    seed_api = collections.Counter()
    tests = both = 0
    edges = []  # a test NumPy took on its boundary (an ulp of tanh decides the side): listed, not failures
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for r in pool.imap_unordered(_work, jobs, chunksize=4):
            counts[r["kind"]] += 1
            if r["seed_api"]:
                seed_api[r["seed_api"]] += 1
                if r["seed_api"] in ("silent", "internal"):
                    failures.append({**r, "kind": f"seed API {r['seed_api']}"})
            tests += r["tests"]
            both += r["both_ways"]
            if r["kind"] == "refused":
                refusals[r["property"]] += 1
            if r["kind"] == "boundary":
                edges.append(r)
            if r["kind"] in BAD:
                failures.append(r)
                if args.progress:
                    print(f"  seed {r['seed']} {r['kind']}: {r['detail'][:400]}", flush=True)
            done = sum(counts.values())
            if args.progress and done % args.progress == 0:
                print(f"{done} programs, {time.perf_counter() - t0:.0f} s: "
                      + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)
    elapsed = time.perf_counter() - t0
    print(f"{args.programs} programs in {elapsed:.0f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("refused, by planted construct: " + ", ".join(f"{k} {v}" for k, v in sorted(refusals.items())))
    print(f"tests in exact programs taken both ways on the inputs: {both} of {tests}")
    if seed_api:
        print("through the seed API: " + ", ".join(f"{k} {v}" for k, v in sorted(seed_api.items())))
    for f in edges[:10]:
        print(f"  seed {f['seed']} boundary: {f['detail'][:200]}")
    for f in failures[:10]:
        print(f"  seed {f['seed']} {f['kind']}: {f['detail'][:300]}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as fh:
            json.dump({"counts": counts, "refusals": refusals, "seed_api": seed_api, "tests": tests, "both_ways": both,
                       "failures": failures, "boundary": edges}, fh, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
