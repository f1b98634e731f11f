import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _no_leftover_session():
    """A test that fails mid-trace must not leave NumPy patched for the next one."""
    yield
    import leapp.api

    leapp.api.reset()
