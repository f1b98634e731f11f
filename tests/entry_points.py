"""A parity record through the user's entry points, from rendered source, compared with NumPy.

``via_compile``: ``@leapp.compile`` on the rendered ``f``, called on the
record's traced sample and fresh samples. ``via_seed``: the same call between
``annotate.input_tensors``/``output_tensors``, then ``compile_graph``.
``via_cli``: ``leapp compile FILE:f --inputs NPZ`` (lint, trace, validate,
export). Each returns None when the graph equals NumPy (values and dtypes,
``parity.assert_same``), else raises; ``render.NotRenderable`` propagates for
a callable whose source cannot be recovered.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings

import numpy as np
import records
import render
from parity import _flat, assert_same


def _samples(rec, dtypes, shapes):
    """(operands of the traced sample, traced flags, the traced operands of every sample)."""
    first, *fresh = records._draws(rec, dtypes, shapes)
    traced = [records._traced(s) for s in shapes]
    picked = [[o for o, t in zip(ops, traced, strict=True) if t] for ops in (first, *fresh)]
    return first, traced, picked


def rendered(rec, dtypes, shapes, directory):
    first, traced, picked = _samples(rec, dtypes, shapes)
    r = render.render(rec.fn, first, traced)
    return r, render.load(r, directory), first, picked


def _copies(values):
    return [np.array(v, copy=True) for v in values]


def via_compile(rec, dtypes, shapes, directory):
    r, module, first, picked = rendered(rec, dtypes, shapes, directory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # the rendered source is the record's call: its NumPy result is the record's
        for want, got in zip(_flat(rec.fn(*_copies(first))), _flat(module.f.__wrapped__(*_copies(picked[0]))),
                             strict=True):
            assert_same(got, want, what="rendering: ")
        for k, sample in enumerate(picked):
            want = _flat(module.f.__wrapped__(*_copies(sample)))
            got = _flat(module.f(*_copies(sample)))
            assert len(got) == len(want), f"{len(got)} outputs, NumPy gave {len(want)}"
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                assert_same(g, w, what=f"compile, sample {k} output {i}: ")
    return r


def via_seed(rec, dtypes, shapes, directory):
    from leapp.errors import EscapeWarning

    r, module, _first, picked = rendered(rec, dtypes, shapes, directory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # creation records (np.zeros(3)) return values that do not depend on the inputs
        warnings.simplefilter("ignore", EscapeWarning)
        graphs = module.seed([_copies(s) for s in picked])
        node = graphs["f"]
        for k, sample in enumerate(picked):
            want = _flat(module.f.__wrapped__(*_copies(sample)))
            got = node(**dict(zip(r.params, _copies(sample), strict=True)))
            assert len(got) == len(want), f"{len(got)} outputs, NumPy gave {len(want)}"
            for i, w in enumerate(want):
                assert_same(got[f"out{i}"], w, what=f"seed API, sample {k} output {i}: ")
    return r


def via_cli(rec, dtypes, shapes, directory, *, subprocess=False):
    """``leapp compile FILE:f``: lint, compile and validation against NumPy must pass.

    Returns the CLI's output and whether the export step (ONNX, checked in
    onnxruntime against NumPy) passed too: an op ONNX lacks fails there, which
    is the export's limit, not a wrong graph."""
    r, module, _first, picked = rendered(rec, dtypes, shapes, directory)
    if not r.self_contained:
        raise render.NotRenderable("the module needs values a subprocess cannot see")
    npz = os.path.join(directory, f"{os.path.basename(module.__path_on_disk__)[:-3]}.npz")
    np.savez(npz, **dict(zip(r.params, picked[0], strict=True)))
    argv = ["compile", f"{module.__path_on_disk__}:f", "--inputs", npz, "--out", os.path.join(directory, "out"),
            "--validate", "2", "--no-graph"]
    if subprocess:
        import subprocess as sp
        import sys

        done = sp.run([sys.executable, "-m", "leapp", *argv], capture_output=True, text=True, timeout=300)
        status, text = done.returncode, done.stdout + done.stderr
    else:
        from leapp.cli import main

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            status = main(argv)
        text = buf.getvalue()
    assert "[2/5] compile:" in text and "[3/5] validate against NumPy on 2 fresh input(s)\n  passed" in text, text[-3000:]
    return text, status == 0
