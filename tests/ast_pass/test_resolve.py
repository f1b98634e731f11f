"""Name resolution: only import-sourced names are NumPy (the alias traps)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from leapp.ast_pass import analyze_source


def sites(body: str, header: str = "import numpy as np\n"):
    src = header + "# leapp: trace\n" + dedent(body).lstrip("\n")
    return [(s.name, s.kind) for s in analyze_source(src, "m.py").sites]


@pytest.mark.parametrize("header,call,expected", [
    ("import numpy as np\n", "np.linalg.norm(x)", "numpy.linalg.norm"),
    ("import numpy.linalg as la\n", "la.norm(x)", "numpy.linalg.norm"),
    ("import numpy.linalg\n", "numpy.linalg.norm(x)", "numpy.linalg.norm"),
    ("from numpy import clip, linalg\n", "clip(linalg.norm(x), 0, 1)", "numpy.clip"),
    ("from numpy import mean as avg\n", "avg(x)", "numpy.mean"),
    ("from numpy import abs\n", "abs(x)", "numpy.absolute"),  # the table's canonical name
    ("import numpy as np\n", "np.add.reduce(x)", "numpy.add.reduce"),
])
def test_import_spellings_resolve(header, call, expected):
    found = sites(f"def f(x):\n    return {call}\n", header)
    assert (expected, "function") in found


@pytest.mark.parametrize("body", [
    "def f(x, np):\n    return np.clip(x, 0, 1)\n",  # a parameter called np
    "def f(x):\n    np = make()\n    return np.clip(x, 0, 1)\n",  # a local called np
    "class P:\n    def f(self, x):\n        return self.np.clip(x, 0, 1)\n",  # an attribute
    "def f(x):\n    return [np.clip for np in range(3)]\n",  # a comprehension variable
    "def f(x):\n    return (lambda np: np.clip(x))(x)\n",  # a lambda parameter
])
def test_names_that_only_look_like_numpy(body):
    assert [s for s in sites(body) if s[0].startswith("numpy.clip")] == []


def test_module_rebinding_is_not_trusted():
    # not a NumPy site; a call of unknown code given an array, whose result the runtime checks
    assert sites("def f(x):\n    return np.clip(x, 0, 1)\n",
                 "import numpy as np\nnp = None\n") == [("np.clip", "foreign")]


def test_local_import_resolves():
    assert ("numpy.clip", "function") in sites(
        "def f(x):\n    import numpy as q\n    return q.clip(x, 0, 1)\n", "")


def test_methods_only_on_proven_arrays():
    found = sites("""
        def f(x):
            items = [3, 1]
            items.sort()
            y = np.abs(x)
            return y.sum() + x.mean()
        """)
    assert ("ndarray.sum", "method") in found and ("ndarray.mean", "method") in found
    assert ("ndarray.sort", "method") not in found  # items is a list


def test_imports_given_by_the_compiler():
    src = "def f(x):\n    return la.norm(x) + np.lib.stride_tricks.as_strided(x, (2, 2))\n"
    result = analyze_source(src, "m.py", scope="all", imports={"np": "numpy", "la": "numpy.linalg"})
    assert [s.name for s in result.sites] == ["numpy.linalg.norm", "numpy.lib.stride_tricks.as_strided"]
    assert [d.code for d in result.diagnostics] == ["LP101"]
