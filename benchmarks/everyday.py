"""Everyday-style programs at scale: ``python benchmarks/everyday.py --programs 20000 --report out.json``.

Each program (``tests/fuzz/everyday.py``) is written as a module, imported,
compiled with ``@leapp.compile`` and compared with the undecorated function in
NumPy on the traced sample and on fresh inputs, in worker processes. Prints
the counts (exact, refused as it should be, false refusals, mismatches),
writes a JSON report with every failure (seed, constructs, detail, source) and
exits 1 if there was any. ``--skip-known`` leaves out the constructs
``everyday.KNOWN_ISSUES`` lists (as the CI slice does). ``--bits`` holds a
program that calls nothing inexact (``everyday.INEXACT``: no transcendental
function, no float accumulation) to NumPy's bits rather than a tolerance.
It also counts the branches on data the programs hold, and how many of their
sites the check's inputs took both ways (the graph's select compared with NumPy
on both arms).
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

BAD = ("false_refusal", "mismatch")


def _work(job):
    import warnings

    from fuzz import everyday

    seed, skip, bits = job
    warnings.simplefilter("ignore")
    try:
        out = everyday.check(seed, skip=everyday.KNOWN_ISSUES if skip else (), bits=bits)
    except Exception as exc:  # the harness itself failed: report it, never hide it
        return {"seed": seed, "kind": "false_refusal", "detail": f"harness {type(exc).__name__}: {exc}",
                "constructs": []}
    result = {"seed": seed, "kind": out.kind, "constructs": list(out.constructs),
              "branch_sites": [[kind, list(sides)] for kind, sides in out.branch_sites]}
    if out.kind in BAD or out.kind in ("refused", "ill_conditioned"):
        result["detail"] = out.detail[:1500]
    if out.kind in BAD:
        result["source"] = everyday.generate(seed).source
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0, help="first program seed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-known", action="store_true", help="leave out everyday.KNOWN_ISSUES constructs")
    ap.add_argument("--report", default="everyday-report.json")
    ap.add_argument("--bits", action="store_true",
                    help="a program whose calls are all exact must match NumPy bit for bit (everyday.INEXACT)")
    args = ap.parse_args(argv)
    start = time.time()
    jobs = [(s, args.skip_known, args.bits) for s in range(args.seed, args.seed + args.programs)]
    with mp.Pool(args.workers, maxtasksperchild=500) as pool:
        results = pool.map(_work, jobs, chunksize=25)
    counts = collections.Counter(r["kind"] for r in results)
    constructs = collections.Counter(c for r in results if r["kind"] != "invalid" for c in r["constructs"])
    bad_by_construct = collections.Counter(c for r in results if r["kind"] in BAD for c in r["constructs"])
    compiled = sum(counts[k] for k in ("exact", "refused", "ill_conditioned", *BAD))
    # branches on data: each site's test, on the check's inputs that reach it in NumPy, took both
    # values (the graph's select was compared with NumPy on both arms) or one; counted over the
    # programs compared with NumPy (not refused, not invalid)
    judged = [r for r in results if r["kind"] in ("exact", "ill_conditioned", *BAD)]
    sites = collections.Counter(kind for r in judged for kind, _ in r.get("branch_sites", ()))
    both = collections.Counter(kind for r in judged for kind, sides in r.get("branch_sites", ()) if len(sides) == 2)
    branchy = collections.Counter(r["kind"] for r in results if r.get("branch_sites"))
    report = {"programs": args.programs, "first_seed": args.seed, "through_leapp_compile": compiled,
              "counts": dict(counts), "seconds": round(time.time() - start, 1), "workers": args.workers,
              "skip_known": args.skip_known, "constructs": dict(constructs),
              "failing_constructs": dict(bad_by_construct),
              "branch_programs": dict(branchy), "branch_sites": dict(sites), "branch_sites_both_ways": dict(both),
              "refusal_examples": [r["detail"][:300] for r in results if r["kind"] == "refused"][:20],
              "ill_conditioned": [(r["seed"], r["detail"][:300]) for r in results if r["kind"] == "ill_conditioned"],
              "failures": [r for r in results if r["kind"] in BAD]}
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1)
    print(f"{args.programs} programs generated, {compiled} through leapp.compile: {counts['exact']} exact, "
          f"{counts['refused']} refused correctly (untraceable on purpose, line named), "
          f"{counts['ill_conditioned']} ill-conditioned (NumPy itself moves under 4-ulp input changes or "
          f"when its transcendental functions round an ulp otherwise, or leapp warned), {counts['false_refusal']} false refusals, {counts['mismatch']} mismatches, "
          f"{counts['skipped']} skipped (known issues), {counts['invalid']} not valid NumPy; "
          f"{report['seconds']} s on {args.workers} workers -> {args.report}")
    print(f"branches on data: {sum(branchy.values())} programs hold one ({dict(branchy)}); of their "
          f"{sum(sites.values())} sites in programs compared with NumPy, {sum(both.values())} took both arms "
          f"on the check's inputs (" + ", ".join(f"{k[7:]} {both[k]}/{sites[k]}" for k in sorted(sites)) + ")")
    return 1 if any(counts[k] for k in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
