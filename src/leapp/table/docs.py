"""The supported-functions page, generated from the table: ``python -m leapp.table.docs``.

``docs/supported.md`` is this module's output, checked in; a test fails when
the two differ, so the page never drifts from the table.
"""

from __future__ import annotations

from . import CATEGORIES, TABLE, Entry, Unsupported


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _names(entry):
    short = [entry.name.replace("numpy.", "np.", 1)]
    short += [a.replace("numpy.", "np.", 1) for a in entry.aliases]
    return ", ".join(f"`{n}`" for n in short)


def render() -> str:
    entries = [e for e in TABLE.values() if isinstance(e, Entry)]
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
        lines += [f"## {cat}", "", "| NumPy | torch | kind | refused keywords | notes |", "|---|---|---|---|---|"]
        for e in sorted(by_cat[cat], key=lambda e: e.name):
            refused_kw = ", ".join(f"`{k}`" for k in sorted(e.refuse))
            lines.append(f"| {_names(e)} | `{e.torch}` | {e.kind} | {refused_kw} | {_cell(e.note)} |")
        lines.append("")
    lines += ["## Not supported", "", "Calls on traced data are refused with the reason and the suggestion below.",
              "", "| NumPy | why | instead |", "|---|---|---|"]
    for e in sorted(refused, key=lambda e: e.name):
        lines.append(f"| {_names(e)} | {_cell(e.reason)} | {_cell(e.instead)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
