"""A fix is offered only where it provably keeps the program's meaning (issue 12).

``max(a, b)`` -> ``np.maximum`` needs ``np`` to be NumPy *at the call* (not a
parameter or local of that name); ``math.f(...)`` -> ``np.f(...)`` needs the
same number of positional arguments as the ufunc has inputs, or NumPy reads
the extra one as ``out=``.
"""

from __future__ import annotations

import math
from textwrap import dedent

import numpy as np
import pytest

from leapp.ast_pass import analyze_source
from leapp.ast_pass.rules.escapes import MATH_FIXES, numpy_ufunc_for
from leapp.cli import main


def _finding(body: str, code: str, header: str = "import math\nimport numpy as np\n"):
    source = header + "# leapp: trace\ndef f(x, y, z):\n" + body
    found = [d for d in analyze_source(source, "t.py").diagnostics if d.code == code]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("body", [
    "    return max(x, y)\n",
    "    return min(x, y)\n",
])
def test_pairwise_builtin_fixed_when_np_is_numpy(body):
    fix = _finding(body, "LP205").fix
    assert fix is not None and fix.edits[0].text in ("np.maximum", "np.minimum")


@pytest.mark.parametrize("body", [
    "    np = y\n    return max(x, z)\n",                      # a local named np
    "    def g(np):\n        return max(x, np)\n    return g(y)\n",  # a parameter named np
    "    return [max(x, y) for np in (1, 2)]\n",               # a comprehension variable
])
def test_pairwise_builtin_not_fixed_when_np_is_not_numpy(body):
    assert _finding(body, "LP205").fix is None


def test_pairwise_builtin_fix_uses_the_name_numpy_is_imported_as():
    assert _finding("    return max(x, y)\n", "LP205", header="np = None\n").fix is None
    fix = _finding("    return max(x, y)\n", "LP205", header="import numpy\nnp = None\n").fix
    assert fix.edits[0].text == "numpy.maximum"


def test_math_fix_not_offered_when_np_is_shadowed():
    assert _finding("    np = 3\n    return math.sqrt(x.var())\n", "LP204").fix is None


@pytest.mark.parametrize("call, fixed", [
    ("math.log(x.var())", "np.log"),
    ("math.hypot(x.sum(), y)", "np.hypot"),
    ("math.pow(x.sum(), 2)", "np.float_power"),
    ("math.atan2(x.sum(), 1.0)", "np.arctan2"),
])
def test_math_fix_with_matching_argument_count(call, fixed):
    fix = _finding(f"    return {call}\n", "LP204").fix
    assert fix is not None and fix.edits[0].text == fixed


@pytest.mark.parametrize("call", [
    "math.log(x.var(), 2)",          # np.log(x, 2): 2 would be out=
    "math.hypot(x.sum(), y, z)",     # np.hypot(x, y, z): z would be overwritten
    "math.hypot(x.sum())",           # np.hypot needs two
    "math.pow(x.sum(), 2, 3)",       # not math's signature either
    "math.remainder(x.sum(), 2.0)",  # IEEE remainder is not np.remainder
    "math.floor(x.sum())",           # returns an int, np.floor a float
])
def test_math_fix_not_offered(call):
    assert _finding(f"    return {call}\n", "LP204").fix is None


def test_fix_leaves_unprovable_calls_untouched(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    source = dedent("""
        import math
        import numpy as np

        # leapp: trace
        def f(x, y, z):
            a = math.log(x.var(), 2) + math.hypot(x.sum(), y, z)

            def g(np):
                return max(x, np)
            return a + g(y) + math.sqrt(x.var())
        """)
    (tmp_path / "p.py").write_text(source)
    assert main(["lint", "--no-cache", "--fix", "p.py"]) == 1
    assert (tmp_path / "p.py").read_text() == source.replace("math.sqrt", "np.sqrt")


@pytest.mark.parametrize("name", sorted(MATH_FIXES))
def test_each_math_fix_matches_numpy_signature_and_values(name):
    target, nargs = MATH_FIXES[name]
    ufunc = getattr(np, target)
    assert isinstance(ufunc, np.ufunc) and ufunc.nin == nargs
    assert numpy_ufunc_for(name, nargs) == "numpy." + target
    assert numpy_ufunc_for(name, nargs + 1) is None
    samples = {"acosh": (1.5,), "ldexp": (0.75, 3)}.get(name, (0.5, 0.25)[:nargs])
    want = getattr(math, name)(*samples)
    got = ufunc(*samples)
    assert type(want) is bool and bool(got) is want or math.isclose(float(got), want, rel_tol=1e-12)
