"""``leapp rewrite``: same behaviour on plain NumPy, formatting kept, idempotent."""

from __future__ import annotations

import inspect
import types
from textwrap import dedent

import numpy as np
import pytest

import leapp.dispatch
from leapp.ast_pass import rewrite_source
from leapp.ast_pass.convert.apply import own_lines

from .examples import program_sources

PROGRAMS = program_sources() + [
    ("pipeline", dedent('''
        """A small preprocessing module."""
        from __future__ import annotations

        import numpy as np
        import numpy.linalg as la
        from numpy import mean as avg

        # leapp: trace
        def normalize(x):
            # centre and scale
            x = (x - avg(x, axis=0)) / (np.std(x, axis=0) + 1e-6)
            return np.clip(x, -3.0, 3.0) * la.norm(x)


        # leapp: trace
        def features(x, w=None):
            z = np.concatenate([x, np.square(x)], axis=-1)
            return np.where(z > 0, np.log1p(np.abs(z)), np.zeros_like(z)).sum(axis=0)
        ''').lstrip()),
]


def _identity_compile(fn=None, **options):
    """Stands in for ``leapp.compile``: these tests compare plain NumPy runs."""
    return fn if fn is not None else (lambda f: f)


@pytest.fixture(autouse=True)
def plain_numpy(monkeypatch):
    import leapp

    monkeypatch.setitem(vars(leapp), "compile", _identity_compile)


def _run_all(source: str):
    """Call every function the program defines on a few inputs; collect results."""
    np.random.seed(0)
    module = types.ModuleType("example")
    exec(compile(source, "example.py", "exec"), module.__dict__)
    results = []
    for name, fn in sorted(vars(module).items()):
        if not inspect.isfunction(fn) or fn.__module__ != "example":
            continue
        n = len([p for p in inspect.signature(fn).parameters.values() if p.default is p.empty])
        for x in (np.linspace(-1.0, 2.0, 12).reshape(3, 4), np.arange(1.0, 5.0)):
            np.random.seed(0)
            try:
                out = fn(*[x] * n)
                results.append((name, "ok", out))
            except Exception as e:  # the original raising is part of its behaviour too
                results.append((name, "raised", type(e).__name__))
    return results


def _same(a, b):
    assert len(a) == len(b)
    for (na, ka, va), (nb, kb, vb) in zip(a, b, strict=True):
        assert (na, ka) == (nb, kb)
        if ka == "ok":
            va = va if isinstance(va, tuple) else (va,)
            vb = vb if isinstance(vb, tuple) else (vb,)
            for p, q in zip(va, vb, strict=True):
                np.testing.assert_array_equal(p, q)
                assert np.asarray(p).dtype == np.asarray(q).dtype
        else:
            assert va == vb


@pytest.mark.parametrize("ident,source", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_round_trip_and_idempotence(ident, source):
    rewritten = rewrite_source(source, "example.py")
    assert rewrite_source(rewritten, "example.py") == rewritten  # idempotent
    # nothing but the routed calls, converted branches (their added lines are marked) and one import changes
    without = rewritten.replace("import leapp.dispatch as _leapp\n", "", 1)
    assert own_lines(without) == len(source.splitlines())
    _same(_run_all(source), _run_all(rewritten))


def test_every_traced_numpy_call_is_routed_with_its_site():
    source = PROGRAMS[-1][1]
    rewritten = rewrite_source(source, "prep.py")
    assert "# centre and scale" in rewritten and '"""A small preprocessing module."""' in rewritten
    lines = source.splitlines()
    seen = []

    def handler(fn, args, kwargs):
        seen.append((leapp.dispatch.current_site(), fn))
        return fn(*args, **kwargs)

    leapp.dispatch.set_handler(handler)
    try:
        _run_all(rewritten)
    finally:
        leapp.dispatch.set_handler(None)
    assert seen
    for site, name in seen:
        path, line, col = site.rsplit(":", 2)
        assert path == "prep.py"
        text = lines[int(line) - 1][int(col) - 1:]
        called = text.split("(", 1)[0].rsplit(".", 1)[-1]
        spelled = {"avg": np.mean, "norm": np.linalg.norm}.get(called, getattr(np, called, None))
        assert spelled is name, (site, name, text)


def test_rewrite_keeps_untraced_code_and_import_order():
    src = dedent('''
        """doc"""
        from __future__ import annotations
        import numpy as np

        def untraced(x):
            return np.clip(x, 0, 1)

        # leapp: trace
        def traced(x):
            return np.clip(
                x,  # lower bound next
                0,
                1,
            )
        ''').lstrip()
    out = rewrite_source(src, "p.py")
    assert out.splitlines()[:3] == ['"""doc"""', "from __future__ import annotations",
                                    "import leapp.dispatch as _leapp"]
    assert "    return np.clip(x, 0, 1)" in out
    assert '_leapp.call(\n        "p.py:10:12", np.clip, x,  # lower bound next' in out


def test_rewrite_one_function_for_the_compiler():
    src = "    def norm(self, x):\n        return np.clip(x, 0, 1)\n"
    out = rewrite_source(src, "prep.py", scope="all", first_line=20, imports={"np": "numpy"})
    assert '_leapp.call("prep.py:21:16", np.clip, x, 0, 1)' in out


def test_rewrite_refuses_unparsable_source():
    with pytest.raises(SyntaxError):
        rewrite_source("def f(:\n", "bad.py", scope="all")


def test_calls_inside_f_strings_get_literals_in_the_other_quote():
    # Before Python 3.12 an f-string's expressions may not use its own quote: the site and method
    # name literals take the other one, and a call inside f-strings of both quotes is left as it is
    import ast

    src = dedent('''
        import numpy as np

        # leapp: trace
        def f(x):
            note = f"max={x.max():.3f} norm={np.linalg.norm(x)}" + f'{np.sum(x)}' + f"{f'{x.min()}'}"
            return x * 2, note
        ''').lstrip()
    out = rewrite_source(src, "fs.py")
    ast.parse(out)  # valid on the running Python (3.10/3.11 included)
    assert "f\"max={_leapp.method('fs.py:5:" in out and "_leapp.call('fs.py:5:" in out
    assert "f'{_leapp.call(\"fs.py:5:" in out
    assert "{f'{x.min()}'}" in out  # both quotes taken: unchanged
    namespace = {}
    exec(compile(out, "fs.py", "exec"), namespace)
    x = np.array([1.0, -2.5, 4.0])
    assert namespace["f"](x)[1] == f"max={x.max():.3f} norm={np.linalg.norm(x)}{np.sum(x)}{x.min()}"
