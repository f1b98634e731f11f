import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# leapp.compile's default tier compiles a hot signature with inductor in the background (seconds
# of CPU per signature, leapp.compiler.tier). The suite runs the FX tier unless a test asks for
# tier="auto" itself (tests/compiler/test_tier.py), so that only those tests pay for a compile.
os.environ.setdefault("LEAPP_TIER", "fx")


@pytest.fixture(autouse=True)
def _no_leftover_session():
    """A test that fails mid-trace must not leave NumPy patched for the next one."""
    yield
    import leapp.api

    leapp.api.reset()



_COMPILED: list = []  # (qualname, compiler.source.Source, file text) for every function leapp.compile rewrote


@pytest.fixture(autouse=True, scope="session")
def _rewrite_matches_what_compile_runs():
    """``leapp rewrite`` shows exactly the code ``leapp.compile`` runs, for every compiled function.

    Every function compiled anywhere in the suite is checked at the end of the
    session (see rewrite_check.py).
    """
    from rewrite_check import mismatches, read_file

    from leapp.compiler import source

    real = source.build

    def build(fn, src, probe):
        new = real(fn, src, probe)
        text = read_file(src.path)
        if text is not None:
            _COMPILED.append((fn.__qualname__, src, text))
        return new

    source.build = build
    try:
        yield
    finally:
        source.build = real
    found = mismatches(_COMPILED)
    assert not found, f"{len(found)} of {len(_COMPILED)} compiled functions:\n" + "\n".join(found[:5])


@pytest.fixture(autouse=True)
def _private_lint_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own lint cache folder: never the user's ~/.cache/leapp."""
    monkeypatch.setenv("LEAPP_CACHE_DIR", str(tmp_path_factory.mktemp("leapp-cache") / "leapp"))
