"""Parity through every export format: each parity record exported, its artifact compared with NumPy.

    PYTHONPATH=src python benchmarks/export_parity.py                 # all formats, writes the table data
    PYTHONPATH=src python benchmarks/export_parity.py --formats onnx --names numpy.expm1,numpy.sort

For every case of every record in ``tests/runtime/test_parity_*.py`` (the
``Rec`` records and the extended ``CASES``) it traces the case, exports it
with ``leapp.export.export_node`` (whose check runs the artifact against
NumPy, edge inputs included), and then, independently of that check, runs the
written artifact on fresh edge inputs (NaN, ±inf, ±0.0 in float operands, the
record's own domain elsewhere) and compares with NumPy. Each case ends as

- ``exact``: exported as recorded, the artifact equals NumPy;
- ``decomposed``: exported after an ONNX decomposition, equals NumPy;
- ``refused``: ``export_node`` raised ``ExportError`` (the user sees why);
- ``silent``: exported, but the artifact differs from NumPy on an edge input
  (the bug class this benchmark exists to keep at 0).

Per table entry and format the worst case wins (refused > decomposed >
exact). ``--write`` stores the result in ``src/leapp/table/export_coverage.json``,
from which ``python -m leapp.table.docs`` renders the export column of
``docs/supported.md``. Cases whose traced graph already differs from NumPy on
an edge input are a translation matter, counted apart (``graph_edge``) and
left out of the artifact comparison for that input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "runtime"), str(ROOT / "src")]

FORMATS = ("onnx", "torchscript", "pt2")
DATA = ROOT / "src" / "leapp" / "table" / "export_coverage.json"
RANK = {"exact": 0, "decomposed": 1, "refused": 2, "silent": 3}


def _modules():
    import glob

    out = []
    for path in sorted(glob.glob(str(ROOT / "tests" / "runtime" / "test_parity_*.py"))):
        out.append(importlib.import_module(Path(path).stem))
    return out


def _short(dt):
    return np.dtype(dt).name


def collect(names=None, per_record=None):
    """(table names, label, fn, traced operands, fresh operand draws) for every selected case."""
    import records

    jobs = []
    for mod in _modules():
        for rec in getattr(mod, "RECORDS", []):
            covered = [rec.name, *rec.also]
            if names and not set(covered) & names:
                continue
            chosen, seen = [], set()
            for dtypes, shapes in records.expand(rec):
                kind = tuple(_short(d) for d in dtypes), tuple("0d" if s == () else "empty" if
                                                                isinstance(s, tuple) and 0 in s else "n"
                                                                for s in shapes)
                if kind in seen:
                    continue
                seen.add(kind)
                chosen.append((dtypes, shapes))
            for dtypes, shapes in chosen[:per_record]:
                jobs.append(_rec_job(records, rec, covered, dtypes, shapes))
        cases = getattr(mod, "CASES", None)
        if isinstance(cases, dict):
            table_names = sorted(getattr(mod, "COVERED", ()), key=len, reverse=True)
            for key, spec in sorted(cases.items()):
                owner = next((n for n in table_names if key.startswith(n.split(".")[-1])), None)
                if owner is None or (names and owner not in names):
                    continue
                fn, *arrays = spec
                arrays = [a for a in arrays if isinstance(a, np.ndarray)]
                if not arrays:
                    continue
                jobs.append(([owner], key, lambda *a, fn=fn: fn(*a), arrays, None))
    return jobs


def _rec_job(records, rec, covered, dtypes, shapes):
    first, *fresh = records._draws(rec, dtypes, shapes)
    fn = records._bind(rec.fn, shapes, first)
    traced = [o for o, s in zip(first, shapes, strict=False) if records._traced(s)]
    label = "-".join([rec.name + (f"[{rec.label}]" if rec.label else ""),
                      "_".join(records._label(d) for d in dtypes), "_".join(records._label(s) for s in shapes)])

    def edge_draw(seed):
        rng = np.random.default_rng(seed)
        doms = records._per_operand(rec.rng, len(shapes))
        out = []
        for s, d, dom in zip(shapes, dtypes, doms, strict=False):
            if not records._traced(s):
                continue
            d = np.dtype(d)
            draw = records.DOMAINS["edges"] if d.kind == "f" and dom in ("normal", "edges") else \
                (records.DOMAINS[dom] if isinstance(dom, str) else dom)
            out.append(np.asarray(draw(rng, s, d)).astype(d))
        return out

    return covered, label, fn, traced, edge_draw


def _flat(result):
    if isinstance(result, dict):
        return [x for k in result for x in _flat(result[k])]
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flat(r)]
    return [result]


def _numpy(fn, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message="invalid value encountered in cast")
        return [np.asarray(v) for v in _flat(fn(*[np.array(a, copy=True) for a in arrays]))]


def run_case(job, fmt, folder, exporter="auto"):
    from leapp.errors import ExportError
    from leapp.export import casts_undefined_values, export_node, mismatch
    from leapp.export.formats import EXTENSIONS, LOADERS
    from leapp.runtime.tracing import trace_function

    covered, label, fn, arrays, edge_draw = job
    names = [f"a{i}" for i in range(len(arrays))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            traced = trace_function(fn, tuple(arrays), {}, names=names, strict=True)
        except Exception as exc:  # not traceable as written: the parity tests say more
            return {"status": "untraced", "why": f"{type(exc).__name__}: {exc}"[:200]}
    node = traced.node
    order = [name for _, name in traced.input_paths]
    slot = {name: path[1] for path, name in traced.input_paths}

    def reference(inputs):
        ops = list(arrays)
        for name in order:
            ops[slot[name]] = inputs[name]
        return dict(zip(node.output_names, _numpy(fn, ops), strict=True))

    example = {name: np.asarray(arrays[slot[name]]) for name in order}
    path = os.path.join(folder, "case" + EXTENSIONS[fmt])
    t0 = time.perf_counter()
    try:
        description = export_node(node, path, fmt, example_inputs=example, reference=reference,
                                  **({"exporter": exporter} if fmt == "onnx" else {}))
    except ExportError as exc:
        return {"status": "refused", "why": str(exc).split("\n")[0][:300], "s": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    status = "decomposed" if any("decomposed for ONNX" in n for n in description.get("notes", ())) else "exact"
    result = {"status": status, "s": seconds, "edge_checked": 0, "graph_edge": 0}
    if edge_draw is None:
        return result
    run = LOADERS[fmt](path, node.input_names)
    for seed in (101, 202, 303):
        ops = edge_draw(seed)
        try:
            want = _numpy(fn, ops)
        except Exception:
            continue
        inputs = {name: ops[slot[name]] for name in order}
        if casts_undefined_values(node, inputs):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = node(**inputs)
        if any(mismatch(np.asarray(graph[n]), w) for n, w in zip(node.output_names, want, strict=True)):
            result["graph_edge"] += 1
            continue
        try:
            got = run(inputs)
        except Exception as exc:
            return {**result, "status": "silent", "why": f"artifact fails on edge input: {exc}"[:300]}
        for n, g, w in zip(node.output_names, got, want, strict=True):
            problem = mismatch(np.asarray(g), w)
            if problem:
                return {**result, "status": "silent", "why": f"output {n}: {problem}"[:300]}
            if mismatch(np.asarray(g), w, signed_zeros=True):
                result["signed_zero"] = result.get("signed_zero", 0) + 1
        result["edge_checked"] += 1
    return result


def _why(text):
    """A refusal reason without paths and per-case numbers, short enough for a table cell."""
    import re

    text = re.sub(r" at /\S+:\d+", "", text)
    text = re.sub(r"node '[^']*'", "node", text)
    return text[:160]


def aggregate(results):
    """Per format and table name: the worst status, its reason and the case it came from."""
    table = {}
    for fmt, rows in results.items():
        per = table.setdefault(fmt, {})
        for covered, label, res in rows:
            if res["status"] == "untraced":
                continue
            for name in covered:
                cur = per.get(name)
                counts = dict((cur or {}).get("counts", {}))
                counts[res["status"]] = counts.get(res["status"], 0) + 1
                if cur is None or RANK[res["status"]] > RANK[cur["status"]]:
                    per[name] = {"status": res["status"], "why": _why(res.get("why", "")), "case": label}
                per[name]["counts"] = counts
    return table


def _first_per_entry(jobs):
    """The jobs that cover a table entry no earlier job covered, in order."""
    seen, out = set(), []
    for job in jobs:
        if not set(job[0]) <= seen:
            out.append(job)
            seen.update(job[0])
    return out


def _read_checkpoint(path, exporter):
    """{(format, case label): result} already measured with this exporter (see --checkpoint)."""
    done = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:  # a line cut short when a run was killed
                    continue
                if row.get("exporter") == exporter:
                    done[row["format"], row["case"]] = row["result"]
    return done


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--names", default="", help="comma-separated table names (default: all)")
    parser.add_argument("--per-record", type=int, default=None, help="at most this many cases per record")
    parser.add_argument("--write", action="store_true", help=f"store the per-entry result in {DATA}")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--exporter", default="auto", choices=["auto", "torchscript", "dynamo"],
                        help="the ONNX exporter (export_node's exporter option)")
    parser.add_argument("--sample", type=int, default=1, metavar="N",
                        help="every Nth case only (a fixed subset, the same for every exporter)")
    parser.add_argument("--limit-s", type=float, default=None,
                        help="stop each format after this many seconds (the counts say how many cases ran)")
    parser.add_argument("--per-entry", action="store_true",
                        help="only the first case of each table entry (the smallest selection that fills "
                             "every cell of the column; use it for the slow dynamo exporter)")
    parser.add_argument("--checkpoint", default=None, metavar="FILE",
                        help="append each case's result to FILE (JSON lines) and reuse the results already "
                             "there for the same format and exporter, so a long run (the dynamo column) "
                             "can be stopped and resumed")
    args = parser.parse_args(argv)
    names = set(filter(None, args.names.split(","))) or None
    jobs = collect(names, args.per_record)[::args.sample]
    if args.per_entry:
        jobs = _first_per_entry(jobs)
    results = {}
    done = _read_checkpoint(args.checkpoint, args.exporter)
    with tempfile.TemporaryDirectory() as folder:
        for fmt in args.formats.split(","):
            rows, t0 = [], time.perf_counter()
            for job in jobs:
                if (fmt, job[1]) in done:
                    rows.append((job[0], job[1], done[fmt, job[1]]))
                    continue
                if args.limit_s is not None and time.perf_counter() - t0 > args.limit_s:
                    print(f"{fmt}: stopped after {args.limit_s:.0f} s (--limit-s)", flush=True)
                    break
                res = run_case(job, fmt, folder, args.exporter)
                rows.append((job[0], job[1], res))
                if args.checkpoint:
                    with open(args.checkpoint, "a", encoding="utf-8") as out:
                        out.write(json.dumps({"format": fmt, "exporter": args.exporter, "case": job[1],
                                              "result": res}) + "\n")
                if args.verbose or res["status"] == "silent":
                    print(f"{fmt} {job[1]}: {res['status']} {res.get('why', '')}", flush=True)
            results[fmt] = rows
            counts = {}
            for _, _, res in rows:
                counts[res["status"]] = counts.get(res["status"], 0) + 1
            zeros = [label for _, label, res in rows if res.get("signed_zero")]
            times = sorted(res["s"] for _, _, res in rows if "s" in res)
            if times:
                print(f"{fmt} ({args.exporter} exporter): export_node took {sum(times):.0f} s in all, "
                      f"median {times[len(times) // 2]:.2f} s, slowest {times[-1]:.1f} s per case", flush=True)
            print(f"{fmt}: {len(rows)} cases in {time.perf_counter() - t0:.0f} s: {counts}; "
                  f"{len(zeros)} with a zero of the other sign than NumPy's (not counted as mismatch)"
                  + (f", e.g. {zeros[:5]}" if zeros else ""), flush=True)
    table = aggregate(results)
    for fmt, per in table.items():
        counts = {}
        for entry in per.values():
            counts[entry["status"]] = counts.get(entry["status"], 0) + 1
        print(f"{fmt}: {len(per)} table entries: {counts}")
    if args.write:
        old = json.loads(DATA.read_text()) if DATA.exists() else {}
        for fmt, per in table.items():
            merged = old.get(fmt, {}) if names else {}
            merged.update(per)
            old[fmt] = dict(sorted(merged.items()))
        DATA.write_text(json.dumps(old, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        print(f"wrote {DATA}")
    silent = sum(res["status"] == "silent" for rows in results.values() for _, _, res in rows)
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main())
