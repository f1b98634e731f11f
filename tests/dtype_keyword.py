"""Every parity record again with ``dtype=`` added to its NumPy calls, wherever NumPy accepts it.

An adapter that ignores or mistranslates ``dtype=`` records a node whose dtype
differs from NumPy's; the graph's self-check then repairs it with a
``LeappInternalWarning`` (or the values differ). ``variants(rec)`` writes the
record's call as source (``render``) and, for each NumPy call in it (a function
or a method), adds ``dtype=D`` for each dtype in ``DTYPES``; ``check(variant)``
keeps the variants NumPy itself accepts, compiles them with ``@leapp.compile`` and
returns None when the graph equals NumPy with no repair, else the finding.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

import numpy as np
import records
import render
from parity import _flat, assert_same

DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool")


@dataclass
class Variant:
    rec: object
    dtypes: tuple
    shapes: tuple
    call: int  # which NumPy call of the body got the keyword
    dtype: str
    source: str
    params: list
    samples: list


class _AddDtype(ast.NodeTransformer):
    def __init__(self, target, dtype):
        self.target, self.dtype, self.seen = target, dtype, -1

    def visit_Call(self, node):
        self.generic_visit(node)
        if not isinstance(node.func, ast.Attribute):
            return node
        self.seen += 1
        if self.seen == self.target:
            node.keywords = [k for k in node.keywords if k.arg != "dtype"]
            node.keywords.append(ast.keyword("dtype", ast.parse(f"np.{self.dtype}", mode="eval").body))
        return node


def _calls(fn_node):
    return sum(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) for n in ast.walk(fn_node))


def variants(rec):
    """The record's first case with ``dtype=`` added to each of its calls, for each dtype."""
    cases = records.expand(rec)
    if not cases:
        return []
    dtypes, shapes = cases[0]
    first, *fresh = records._draws(rec, dtypes, shapes)
    traced = [records._traced(s) for s in shapes]
    try:
        r = render.render(rec.fn, first, traced)
    except render.NotRenderable:
        return []
    tree = ast.parse(r.source)
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    samples = [[o for o, t in zip(ops, traced, strict=True) if t] for ops in (first, *fresh)]
    out = []
    for call in range(_calls(f)):
        for dt in DTYPES:
            t2 = ast.parse(r.source)
            f2 = next(n for n in t2.body if isinstance(n, ast.FunctionDef) and n.name == "f")
            _AddDtype(call, dt).visit(f2)
            t2.body = [n for n in t2.body if not (isinstance(n, ast.FunctionDef) and n.name == "seed")]
            out.append(Variant(rec, dtypes, shapes, call, dt, ast.unparse(t2), r.params, samples))
    return out


def numpy_accepts(variant, directory):
    module = render.load(render.Rendered(variant.source, variant.params, False), directory)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for s in variant.samples:
                module.f.__wrapped__(*[np.array(v, copy=True) for v in s])
    except Exception:
        return None
    return module


def check(variant, module):
    """None when ``@leapp.compile`` matches NumPy with no repair warning; else the finding."""
    from leapp.errors import LeappError, LeappInternalWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("always", LeappInternalWarning)
        try:
            for k, s in enumerate(variant.samples):
                want = _flat(module.f.__wrapped__(*[np.array(v, copy=True) for v in s]))
                got = _flat(module.f(*[np.array(v, copy=True) for v in s]))
                for i, (g, w) in enumerate(zip(got, want, strict=True)):
                    assert_same(g, w, what=f"sample {k} output {i}: ")
        except LeappError as exc:
            return f"refused: {type(exc).__name__}: {str(exc)[:400]}"
        except AssertionError as exc:
            return f"mismatch: {str(exc)[:400]}"
        except Exception as exc:  # leapp crashed on a call NumPy accepts
            return f"crash: {type(exc).__name__}: {str(exc)[:400]}"
    repairs = [str(w.message) for w in caught if issubclass(w.category, LeappInternalWarning)]
    return f"repaired: {repairs[0][:400]}" if repairs else None
