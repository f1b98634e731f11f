"""The repeat call: a cached layout key instead of binding and signature walks, zero-copy in and out.

Every test makes a first call (which fills the fast table) and then checks
that a later call with something different is never served by a graph traced
for something else, and that zero-copy never lets a caller write into the
graph or read stale memory.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import leapp
from leapp.compiler import function
from leapp.compiler.function import fast_key

X = np.linspace(-2.0, 3.0, 12, dtype=np.float32).reshape(4, 3)
Y = np.linspace(1.0, 2.0, 12, dtype=np.float32).reshape(4, 3)
TABLE = np.arange(5, dtype=np.float32)


def affine(x, y, scale=2.0):
    return x * scale - y


def test_repeat_calls_use_the_fast_table_and_match_numpy():
    cf = leapp.compile(affine)
    cf(X, Y)
    assert len(cf._fast) == 1
    for _ in range(3):
        np.testing.assert_array_equal(cf(X + 1, Y), affine(X + 1, Y))
    assert len(cf.graphs) == 1 and len(cf._fast) == 1


def test_argument_positions_are_followed_not_guessed():
    cf = leapp.compile(affine)
    cf(X, X)  # the same object twice
    np.testing.assert_array_equal(cf(X, Y), affine(X, Y))
    np.testing.assert_array_equal(cf(y=X, x=Y), affine(Y, X))  # keywords, other order
    np.testing.assert_array_equal(cf(Y, y=X), affine(Y, X))
    assert len(cf.graphs) == 1  # one signature, several argument layouts


def test_a_new_dtype_shape_or_scalar_never_reuses_a_graph():
    cf = leapp.compile(affine)
    cf(X, Y)
    out = cf(X.astype(np.float64), Y.astype(np.float64))
    assert out.dtype == np.float64
    ints = (X * 10).astype(np.int64)
    assert cf(ints, ints).dtype == np.float64  # the float32 graph would give float32
    np.testing.assert_array_equal(cf(X[:2], Y[:2]), affine(X[:2], Y[:2]))
    np.testing.assert_array_equal(cf(X, Y, 3.0), affine(X, Y, 3.0))
    np.testing.assert_array_equal(cf(X, Y, scale=3.0), affine(X, Y, 3.0))
    assert cf(X, Y, 3).dtype == affine(X, Y, 3).dtype
    assert cf(X, Y, True).dtype == affine(X, Y, True).dtype
    assert len(cf.graphs) == 7  # X, float64, int64, X[:2], scale 3.0, 3, True


def test_layouts_torch_cannot_view_are_copied():
    cf = leapp.compile(affine)
    cf(X, Y)
    flipped = X[::-1]  # negative strides: torch.from_numpy refuses them
    np.testing.assert_array_equal(cf(flipped, Y), affine(flipped, Y))
    frozen = X.copy()
    frozen.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns on a read-only array it would view
        np.testing.assert_array_equal(cf(frozen, Y), affine(frozen, Y))
    wide = np.zeros((4, 6), np.float32)
    wide[:, ::2] = X
    np.testing.assert_array_equal(cf(wide[:, ::2], Y), affine(X, Y))


def test_inputs_are_read_in_place_at_call_time():
    cf = leapp.compile(affine)
    x = X.copy()
    cf(x, Y)
    x += 1.0  # the same object, new values: no stale tensor may survive between calls
    np.testing.assert_array_equal(cf(x, Y), affine(x, Y))


def test_writing_into_a_result_never_changes_the_graph():
    def with_table(x):
        return x * 2.0, TABLE[1:]

    cf = leapp.compile(with_table, strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the frozen-output warning is not this test's subject
        cf(X)
    _, table = cf(X)
    table[:] = -1.0  # the graph's constant must not see this
    np.testing.assert_array_equal(cf(X)[1], TABLE[1:])


def test_subclasses_and_containers_take_the_general_path():
    class Sub(np.ndarray):
        pass

    assert fast_key((X.view(Sub),), {}) is None
    assert fast_key(([X],), {}) is None
    assert fast_key((X,), {"y": Y}) is not None

    def pair_sum(pair):
        return pair[0] + pair[1]

    cf = leapp.compile(pair_sum)
    cf([X, Y])
    np.testing.assert_array_equal(cf([Y, X]), X + Y)
    assert not cf._fast


def test_the_fast_table_stays_bounded(monkeypatch):
    monkeypatch.setattr(function, "_MAX_FAST", 2)
    cf = leapp.compile(affine)
    for scale in (1.0, 2.0, 3.0):
        cf(X, Y, scale)  # a new key each call
    assert len(cf._fast) <= 2
    np.testing.assert_array_equal(cf(X, Y, 4.0), affine(X, Y, 4.0))


def signed(x, s):
    return x * np.copysign(1.0, s)


@pytest.mark.parametrize("first, second", [(0.0, -0.0), (-0.0, 0.0)])
def test_signed_zero_scalars_are_different_calls(first, second):
    # 0.0 == -0.0, but np.copysign tells them apart: one graph must not serve the other
    cf = leapp.compile(signed)
    np.testing.assert_array_equal(cf(X, first), signed(X, first))
    np.testing.assert_array_equal(cf(X, second), signed(X, second))  # the fast table
    np.testing.assert_array_equal(cf(X, s=second), signed(X, second))
    np.testing.assert_array_equal(cf([X][0], np.float64(second)), signed(X, np.float64(second)))
    assert len(cf.graphs) >= 2


def test_signed_zero_inside_a_container_is_a_different_call():
    def scaled(x, opts):
        return x * np.copysign(1.0, opts["s"])

    cf = leapp.compile(scaled)
    cf(X, {"s": 0.0})
    np.testing.assert_array_equal(cf(X, {"s": -0.0}), -X)


def test_a_nan_scalar_is_one_signature():
    cf = leapp.compile(affine)
    for _ in range(3):
        out = cf(X, Y, float("nan"))
    assert np.isnan(out).all()
    assert len(cf.graphs) == 1 and len(cf._fast) == 1


def test_a_repeat_call_takes_the_direct_way_and_stays_exact():
    cf = leapp.compile(affine)
    for i in range(3):
        np.testing.assert_array_equal(cf(X + i, y=Y), affine(X + i, Y))
    (fast,) = cf._fast.values()
    assert callable(fast.direct)  # decided after the first run
    out = cf(X, y=Y)
    out[:] = 7.0  # a fresh result each call: writing into one changes no later one
    np.testing.assert_array_equal(cf(X, y=Y), affine(X, Y))


def test_a_global_module_hook_still_sees_the_graph_run():
    import torch

    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: seen.append(type(m)))
    try:
        cf = leapp.compile(affine)
        cf(X, Y)
        cf(X, Y)
    finally:
        handle.remove()
    assert seen  # leapp skips nn.Module.__call__ only where no hook could notice


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        leapp.compile(affine, backend="tvm")


def test_a_hook_registered_after_the_first_calls_still_runs():
    cf = leapp.compile(affine)
    cf(X, Y)
    cf(X, Y)
    seen = []
    handle = cf.graphs[0].register_forward_hook(lambda m, i, o: seen.append(1))
    try:
        np.testing.assert_array_equal(cf(X, Y), affine(X, Y))
    finally:
        handle.remove()
    assert seen == [1]
    cf(X, Y)
    assert seen == [1]


def test_a_recompiled_graph_runs_its_new_code():
    # passes (node.optimize(), leapp compile's step 4) rewrite the graph and recompile it after
    # calls have been made: the repeat call must run the new forward, not the one it first saw
    cf = leapp.compile(affine)
    cf(X, Y)
    cf(X, Y)
    gm = cf.graphs[0]
    out = next(n for n in gm.graph.nodes if n.op == "output")
    (value,) = out.all_input_nodes
    with gm.graph.inserting_before(out):
        doubled = gm.graph.call_function(torch.mul, (value, 2.0))
    out.replace_input_with(value, doubled)
    gm.recompile()
    np.testing.assert_array_equal(cf(X, Y), 2 * affine(X, Y))
