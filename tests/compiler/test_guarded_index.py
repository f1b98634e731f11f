"""An index on data inside a converted branch runs guarded: ``x[j]`` becomes ``x[np.where(path, j, 0)]``.

A select runs both branches, so ``x[j]`` in a branch would read out of range on the inputs that take
the other one (``if j < len(x): y = x[j]``). Inside converted arms (and after an early return) every
traced integer index part is ``j`` itself on the inputs that take the arm and 0 on the others, whose
values the select drops; shapes are static, so 0 is in range wherever the axis is not empty
(``runtime.branches.guarded_index``). The graph is one ``where`` more, which every format leapp
writes exports: checked here in FX, TorchScript, pt2 and ONNX against NumPy on inputs taking each side.
"""

from __future__ import annotations

import numpy as np
import pytest
from agree import same

import leapp
from leapp.errors import ProblemsError

F32 = np.float32


def pick(x, j):
    if j < x.shape[0]:
        y = x[j] * 2
    else:
        y = x[0] * 0
    return y


def early_pick(x):
    j = np.argmax(x) + 2  # out of range where the maximum is in the last two places
    if j >= x.shape[0]:
        return x.sum()
    return x[j]


def write_pick(x):
    k = np.argmin(x) - 1  # -1 where the minimum is first: NumPy would write the last element
    q = x * 1.0
    if k >= 0:
        q[k] = 0.0
    return q


def ternary_pick(x, j):
    return x[j, 1] if 0 <= j < x.shape[0] else x[0, 0]


def walk(x, t):
    s = np.zeros((), x.dtype)
    while t < 4.0:  # leapp: max-iterations=5
        s = s + x[t.astype(np.int64)]  # t reaches 4 (out of range) in the iterations after it stops
        t = t + 1.0
    return s


def _f(dtype):
    return lambda a: a.astype(dtype) if a.dtype.kind == "f" else a


CASES = [
    (pick, [(np.array([1.0, 2.0, 3.0]), np.int64(1)), (np.array([1.0, 2.0, 3.0]), np.int64(5)),
            (np.array([np.nan, 2.0, 3.0]), np.int64(0)), (np.array([1.0, 2.0, 3.0]), np.int64(-1))]),
    (early_pick, [(np.array([5.0, 1.0, 2.0, 0.0]),), (np.array([1.0, 2.0, 3.0, 0.0]),),
                  (np.array([1.0, 2.0, 3.0, 9.0]),), (np.array([np.nan, 2.0, 3.0, 0.0]),)]),
    (write_pick, [(np.array([5.0, 1.0, 2.0]),), (np.array([0.0, 2.0, 3.0]),), (np.array([3.0, 2.0, 1.0]),),
                  (np.array([3.0, np.nan, 1.0]),)]),
    (ternary_pick, [(np.arange(6.0).reshape(3, 2), np.int64(2)), (np.arange(6.0).reshape(3, 2), np.int64(7)),
                    (np.arange(6.0).reshape(3, 2), np.int64(-4))]),
    # a bounded loop's body, guarded by its running mask
    (walk, [(np.array([1.0, 2.0, 4.0, 8.0]), np.array(0.0)), (np.array([1.0, 2.0, 4.0, 8.0]), np.array(2.0)),
            (np.array([1.0, 2.0, 4.0, 8.0]), np.array(-1.0)), (np.array([1.0, 2.0, 4.0, 8.0]), np.array(6.0)),
            (np.array([np.nan, 2.0, 4.0, 8.0]), np.array(3.5))]),
]


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("fn,inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_one_graph_and_every_export_take_each_side_as_numpy_does(fn, inputs, dtype, tmp_path):
    import onnxruntime as ort
    import torch

    cast = _f(dtype)
    cf = leapp.compile(fn)
    assert cf.diagnostics == [] and all(b.converted for b in cf.source.branches)
    # traced on an input whose index is out of range on the side it does not take
    cf.trace(*map(cast, inputs[1]))
    wants = [fn(*map(cast, a)) for a in inputs]
    for a, want in zip(inputs, wants, strict=True):
        same(cf(*map(cast, a)), want, rtol=0)
    assert len(cf.graphs) == 1
    graph = cf.graphs[0]
    assert any(n.target is torch.where for n in graph.graph.nodes)

    def first(out):
        out = next(iter(out.values())) if isinstance(out, dict) else out
        out = out[0] if isinstance(out, (tuple, list)) else out
        return np.asarray(out.numpy() if hasattr(out, "numpy") else out)

    for fmt in ("onnx", "torchscript", "pt2"):
        path = str(tmp_path / f"f.{fmt}")
        cf.export(path, fmt)
        run = _runner(fmt, path, ort, torch)
        for a, want in zip(inputs, wants, strict=True):
            got = first(run(*map(cast, a)))
            assert got.dtype == np.asarray(want).dtype, (fmt, a)
            np.testing.assert_array_equal(got, want, err_msg=f"{fmt} {a}")


def _runner(fmt, path, ort, torch):
    """The exported file at ``path`` as a function of NumPy inputs."""
    if fmt == "onnx":
        session = ort.InferenceSession(path)
        names = [i.name for i in session.get_inputs()]
        return lambda *a: session.run(None, dict(zip(names, map(np.asarray, a), strict=True)))
    loaded = torch.jit.load(path) if fmt == "torchscript" else torch.export.load(path).module()
    return lambda *a: loaded(*(torch.from_numpy(np.asarray(v)) for v in a))


def a_loop_test_indexes(x, j):
    k = np.zeros((), x.dtype)
    while x[j] > 0 and k < 3:  # leapp: max-iterations=3
        x = x - 1.0  # the test runs on every input, whichever stopped: no running mask guards it
        k = k + 1
    return x


def test_an_index_on_data_where_no_path_guards_it_is_still_refused():
    with pytest.raises(ProblemsError, match="indexes `x\\[j\\]` with an array"):
        leapp.compile(a_loop_test_indexes)(np.array([1.0, 2.0], F32), np.int64(1))


def test_an_index_out_of_range_on_the_side_taken_raises_as_numpy_does():
    cf = leapp.compile(pick)
    cf.trace(np.array([1.0, 2.0, 3.0], F32), np.int64(1))
    with pytest.raises(IndexError):
        pick(np.array([1.0, 2.0, 3.0], F32), np.int64(-5))  # -5 < 3: NumPy takes the arm and raises
    with pytest.raises(Exception):  # noqa: B017 (torch's own error for the gather; never a value)
        cf(np.array([1.0, 2.0, 3.0], F32), np.int64(-5))


@pytest.mark.parametrize("fn", [c[0] for c in CASES] + [a_loop_test_indexes], ids=lambda f: f.__name__)
def test_lint_says_what_compile_does(fn):
    import inspect
    from textwrap import dedent

    from leapp.ast_pass import analyze_source

    source = "import numpy as np\n# leapp: trace\n" + dedent(inspect.getsource(fn))
    lint = [d.message for d in analyze_source(source, "t.py").diagnostics if d.code == "LP202"]
    compiled = [d.message for d in leapp.compile(fn, strict=False).diagnostics if d.code == "LP202"]
    assert bool(lint) == bool(compiled) == (fn is a_loop_test_indexes)
