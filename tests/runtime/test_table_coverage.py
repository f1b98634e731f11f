"""Every supported table entry has an implementation and at least one differential test.

Parity modules are ``tests/runtime/test_parity_*.py``; each exposes
``COVERED``, the set of table names its cases exercise (modules built from
``records.Rec`` derive it from their records). Adding a table entry without
a parity case, or a parity module without ``COVERED``, fails here.
"""

from __future__ import annotations

import pytest
from records import expand, parity_modules

from leapp import table
from leapp.runtime.adapters import ADAPTERS, generic_ufunc
from leapp.runtime.traced import TracedNpArray

MODULES = parity_modules()


def _supported():
    return {name: e for name, e in table.TABLE.items() if isinstance(e, table.Entry)}


def test_every_parity_module_declares_what_it_covers():
    lacking = [m.__name__ for m in MODULES if not isinstance(getattr(m, "COVERED", None), (set, frozenset))]
    assert not lacking, f"define COVERED (the table names the cases exercise) in {lacking}"


def test_every_supported_entry_has_a_parity_case():
    covered = set()
    for mod in MODULES:
        covered |= {table.canonical(n) for n in getattr(mod, "COVERED", ())}
    # static entries run NumPy itself and record nothing: there is no translation to differ
    traced = {n for n, e in _supported().items() if e.kind != "static"}
    missing = sorted(traced - covered)
    assert not missing, f"table entries without a differential test (add a record to a test_parity_* module): {missing}"


def test_covered_names_are_table_entries():
    # a typo in COVERED would otherwise hide a missing test
    for mod in MODULES:
        unknown = sorted(n for n in getattr(mod, "COVERED", ()) if not isinstance(table.lookup(n), table.Entry))
        assert not unknown, f"{mod.__name__}.COVERED names what the table does not trace: {unknown}"


def test_every_supported_entry_has_an_implementation():
    lacking = []
    for name, e in _supported().items():
        if e.kind == "static" or e.kind == "bypass" and name.startswith("torch."):
            continue  # static: answered by NumPy itself; torch.*: TracedTensor conversions
        if e.kind == "method":
            method = name.split(".", 1)[1]
            # a method either shares a function's entry, has its own adapter, or is
            # overridden on TracedNpArray to route to another entry
            if e.same_as or name in ADAPTERS or method in TracedNpArray.__dict__:
                continue
        elif name in ADAPTERS or generic_ufunc(name) is not None:
            continue
        lacking.append(name)
    assert not lacking, f"supported entries with no adapter: {lacking}"


@pytest.mark.parametrize("mod", [m for m in MODULES if hasattr(m, "RECORDS")], ids=lambda m: m.__name__)
def test_every_record_keeps_a_case(mod):
    # a record whose every dtype/shape NumPy rejects would test nothing
    empty = [f"{r.name}[{r.label}]" for r in mod.RECORDS if not expand(r)]
    assert not empty, f"records with no case NumPy accepts: {empty}"
