"""The export check never runs NumPy where NumPy itself does not return: ``np.linalg.svd`` of a
matrix holding inf loops forever in OpenBLAS's gesdd here, so a graph calling it is checked
without ±inf inputs (``leapp.table.guards.NUMPY_HANGS_ON_INF``). Run in a subprocess, with a
timeout, so that a hang fails the test instead of the whole suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


PROJECT = """\
    @leapp.compile
    def project(m):
        U, s, Vh = np.linalg.svd(m)  # U and Vh unused: their signs are LAPACK's (conventions.py)
        return m / s[0]
"""
UNUSED = """\
    @leapp.compile
    def project(m):
        U, s, Vh = np.linalg.svd(m)  # unused: the graph drops it, the function still runs it
        return m * 2.0
"""


@pytest.mark.parametrize("body", [PROJECT, UNUSED], ids=["used", "unused"])
def test_exporting_a_graph_with_svd_does_not_hang_on_numpys_inf_inputs(tmp_path, body):
    (tmp_path / "svd_user.py").write_text("import numpy as np\nimport leapp\n\n\n" + textwrap.dedent(body))
    script = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import svd_user
        m = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 1.0]])
        svd_user.project(m)
        svd_user.project.export({str(tmp_path / "p.pt")!r}, "torchscript")
        print("exported")
        """)
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env=env)
    except subprocess.TimeoutExpired:
        raise AssertionError("export did not return: NumPy's svd was run on a matrix holding inf") from None
    assert done.returncode == 0 and "exported" in done.stdout, done.stderr[-2000:]
    assert (tmp_path / "p.pt").stat().st_size > 0
