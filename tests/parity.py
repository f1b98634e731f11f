"""Differential testing against NumPy: trace once, compare on the traced and on fresh inputs.

``check(fn, *arrays)`` traces ``fn`` strictly (any untraced call or escape
fails), then runs the graph on the traced sample and on fresh random inputs of
the same shapes and dtypes, comparing values *and* dtypes with what NumPy
itself returns: bit-exact for integers and bools, tight tolerance for floats,
NaN positions must match.
"""

from __future__ import annotations

import warnings

import numpy as np

from leapp.runtime.tracing import trace_function

TOL = {np.dtype(np.float16): (1e-2, 1e-2), np.dtype(np.float32): (1e-5, 1e-5),
       np.dtype(np.float64): (1e-10, 1e-12), np.dtype(np.complex64): (1e-5, 1e-5),
       np.dtype(np.complex128): (1e-10, 1e-12)}


def fresh_like(a, rng):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return rng.random(a.shape) < 0.5
    if a.dtype.kind == "u":
        return rng.integers(0, 20, a.shape).astype(a.dtype)
    if a.dtype.kind == "i":
        return rng.integers(-20, 20, a.shape).astype(a.dtype)
    return (rng.standard_normal(a.shape) * 3).astype(a.dtype)


def assert_same(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}dtype: graph {got.dtype}, NumPy {want.dtype}"
    assert got.shape == want.shape, f"{what}shape: graph {got.shape}, NumPy {want.shape}"
    if want.dtype.kind in "fc":
        rtol, atol = TOL[want.dtype]
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}NaN positions differ:\n{got}\n{want}"
        ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        assert ok, f"{what}values differ (max {np.nanmax(np.abs(got - want)) if got.size else 0}):\n{got}\n{want}"
    else:
        assert np.array_equal(got, want), f"{what}values differ:\n{got}\n{want}"


def _flat(result):
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(_flat(r))
        return out
    if isinstance(result, dict):
        out = []
        for k in result:
            out.extend(_flat(result[k]))
        return out
    return [result]


def check(fn, *arrays, samples=None, n_fresh=3, seed=0, strict=True):
    """Trace ``fn`` on ``arrays``; assert the graph equals NumPy on them and on fresh inputs.

    Returns the ``Traced`` record (its ``.node.graph_module`` can be inspected).
    """
    names = [f"a{i}" for i in range(len(arrays))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        traced = trace_function(fn, arrays, {}, names=names, strict=strict)
        rng = np.random.default_rng(seed)
        cases = [tuple(arrays)]
        if samples is not None:
            cases += [tuple(s) for s in samples]
        else:
            cases += [tuple(fresh_like(a, rng) for a in arrays) for _ in range(n_fresh)]
        for k, case in enumerate(cases):
            want = _flat(fn(*[np.array(c, copy=True) for c in case]))
            inputs = {key: np.asarray(case[path[1]]) for path, key in traced.input_paths}
            got = traced.node(**inputs)
            outs = [got[name] for name in traced.node.output_names]
            assert len(outs) == len(want), f"{len(outs)} outputs, NumPy gave {len(want)}"
            for i, (g, w) in enumerate(zip(outs, want, strict=True)):
                assert_same(g, w, what=f"case {k} output {i}: ")
    return traced
