"""Every public NumPy callable is in the table: traced, static, or refused with a reason and a suggestion.

Also keeps ``docs/supported.md`` equal to what ``python -m leapp.table.docs``
generates, and checks that every traced entry has an adapter.
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from leapp import table
from leapp.table.docs import render

ROOT = Path(__file__).resolve().parents[2]


def _public_callables():
    for n in dir(np):
        obj = getattr(np, n)
        if not n.startswith("_") and callable(obj):
            yield "numpy." + n
    for n in dir(np.linalg):
        obj = getattr(np.linalg, n)
        if not n.startswith("_") and callable(obj) and not isinstance(obj, type):
            yield "numpy.linalg." + n


def test_every_public_callable_is_in_the_table():
    missing = [n for n in _public_callables() if table.lookup(n) is None]
    assert not missing, f"add these to leapp/table (traced, static or Unsupported): {missing}"


def test_every_public_submodule_is_traced_or_refused():
    subs = [n for n in dir(np) if isinstance(getattr(np, n), types.ModuleType) and not n.startswith("_")]
    # numpy.lib holds helpers (stride_tricks...) reported one by one as untraced calls
    skip = {"core", "dtypes", "exceptions", "f2py", "typing", "linalg", "random", "lib"}
    missing = [s for s in subs if s not in skip and not isinstance(table.lookup("numpy." + s), table.Unsupported)]
    assert not missing
    assert isinstance(table.lookup("numpy.random.normal"), table.Unsupported)
    # numpy.fft: fft/ifft/rfft/irfft are traced, the rest of the submodule refused
    assert isinstance(table.lookup("numpy.fft.rfft2"), table.Unsupported)
    assert isinstance(table.lookup("numpy.fft.rfft"), table.Entry)


def test_unsupported_entries_say_why_and_what_instead():
    for entry in table.TABLE.values():
        if isinstance(entry, table.Unsupported):
            assert len(entry.reason) > 10 and len(entry.instead) > 10, entry.name


def test_every_traced_entry_has_an_adapter():
    from leapp.runtime.adapters import ADAPTERS, generic_ufunc

    lacking = []
    for name, e in table.TABLE.items():
        if not isinstance(e, table.Entry) or e.kind in ("static", "method", "bypass") or name.startswith("torch."):
            continue
        if name not in ADAPTERS and generic_ufunc(name) is None:
            lacking.append(name)
    assert not lacking


def test_supported_page_is_current():
    page = (ROOT / "docs" / "supported.md").read_text()
    assert page == render(), "docs/supported.md is stale: run `python -m leapp.table.docs > docs/supported.md`"
