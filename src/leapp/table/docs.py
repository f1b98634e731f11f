"""The supported-functions page, generated from the table: ``python -m leapp.table.docs``.

``docs/supported.md`` is this module's output, checked in; a test fails when
the two differ, so the page never drifts from the table.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import CATEGORIES, TABLE, Entry, Unsupported

# Written by benchmarks/export_parity.py --write: per format and table name, how its parity
# cases fared when exported and compared with NumPy (edge inputs included).
EXPORT_DATA = Path(__file__).with_name("export_coverage.json")
EXPORT_FORMATS = ("onnx", "torchscript", "pt2")
_WORDS = {"exact": "exact", "decomposed": "exact with decomposition", "refused": "refused",
          "silent": "MISMATCH"}


def export_coverage() -> dict:
    """The export column's data: ``{format: {name: {"status", "why", "case", "counts"}}}``."""
    return json.loads(EXPORT_DATA.read_text(encoding="utf-8")) if EXPORT_DATA.exists() else {}


def _export_cell(name, data):
    parts = []
    for fmt in EXPORT_FORMATS:
        row = data.get(fmt, {}).get(name)
        if row is None:
            parts.append(f"{fmt}: not measured")
            continue
        word = _WORDS[row["status"]]
        counts = row.get("counts", {})
        if row["status"] == "refused" and len(counts) > 1:
            word = f"refused for {counts['refused']} of {sum(counts.values())} cases (see below)"
        elif row["status"] == "refused":
            word = "refused (see below)"
        parts.append(f"{fmt}: {word}")
    return "; ".join(parts)


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _names(entry):
    short = [entry.name.replace("numpy.", "np.", 1)]
    short += [a.replace("numpy.", "np.", 1) for a in entry.aliases]
    return ", ".join(f"`{n}`" for n in short)


def render() -> str:
    entries = [e for e in TABLE.values() if isinstance(e, Entry)]
    data = export_coverage()
    refused = [e for e in TABLE.values() if isinstance(e, Unsupported)]
    lines = [
        "# Supported NumPy functions",
        "",
        "Generated from leapp's translation table by `python -m leapp.table.docs > docs/supported.md`;",
        "do not edit by hand. Every entry is traced into the torch op shown, with values and dtypes",
        "equal to NumPy's unless the notes say otherwise. Keywords in *Refused keywords* are",
        "rejected at the call when their value would change the result.",
        "",
        f"{len(entries)} traced entries, {len(refused)} knowingly unsupported.",
        "",
    ]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    by_cat: dict = {}
    for e in entries:
        by_cat.setdefault(e.category, []).append(e)
    for cat in sorted(by_cat, key=lambda c: (order.get(c, len(order)), c)):
        lines += [f"## {cat}", "", "| NumPy | torch | kind | refused keywords | notes | export |",
                  "|---|---|---|---|---|---|"]
        for e in sorted(by_cat[cat], key=lambda e: e.name):
            refused_kw = ", ".join(f"`{k}`" for k in sorted(e.refuse))
            lines.append(f"| {_names(e)} | `{e.torch}` | {e.kind} | {refused_kw} | {_cell(e.note)} | "
                         f"{_export_cell(e.name, data) if e.kind != 'static' else 'runs NumPy at trace time'} |")
        lines.append("")
    lines += _export_section(entries, data)
    lines += ["## Not supported", "", "Calls on traced data are refused with the reason and the suggestion below.",
              "", "| NumPy | why | instead |", "|---|---|---|"]
    for u in sorted(refused, key=lambda u: u.name):
        lines.append(f"| {_names(u)} | {_cell(u.reason)} | {_cell(u.instead)} |")
    return "\n".join(lines) + "\n"


def _export_section(entries, data):
    """Per-format totals and every refusal with its reason, from ``export_coverage.json``."""
    names = {e.name for e in entries if e.kind != "static"}
    lines = ["## Export", "",
             "Generated from `src/leapp/table/export_coverage.json`, which `benchmarks/export_parity.py --write`",
             "writes: every parity record is traced, exported in each format, and the artifact's output is",
             "compared with NumPy, on the record's inputs and on edge inputs (NaN, ±inf, ±0.0, negative",
             "integers, empty and 0-d arrays). *exact*: exported as traced; *exact with decomposition*: an",
             "ONNX decomposition (`leapp.export.lowering`) replaced an op ONNX lacks or runs otherwise;",
             "*refused*: `export` raises `ExportError` naming the call and the line (nothing is written).",
             "", "| format | entries measured | exact | exact with decomposition | refused for some inputs | mismatches |",
             "|---|---|---|---|---|---|"]
    for fmt in EXPORT_FORMATS:
        rows = [r for n, r in data.get(fmt, {}).items() if n in names]
        count = {k: sum(r["status"] == k for r in rows) for k in _WORDS}
        lines.append(f"| {fmt} | {len(rows)} of {len(names)} | {count['exact']} | {count['decomposed']} | "
                     f"{count['refused']} | {count['silent']} |")
    lines += ["", "### Refusals", "", "| NumPy | format | cases refused | why (first refused case) |", "|---|---|---|---|"]
    for fmt in EXPORT_FORMATS:
        for name, row in sorted(data.get(fmt, {}).items()):
            if name in names and row["status"] in ("refused", "silent"):
                counts = row.get("counts", {})
                lines.append(f"| `{name.replace('numpy.', 'np.', 1)}` | {fmt} | "
                             f"{counts.get(row['status'], 1)} of {sum(counts.values()) or 1} | "
                             f"{_cell(row['why'])} (`{_cell(row['case'])}`) |")
    return lines + [""]


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
