"""The differential check's inputs: the same for the same seed, and copies that share what the call shared."""

from __future__ import annotations

import numpy as np

from leapp.compiler import check, samples

X = np.array([[0.5, -1.0, 2.0]], np.float32)


def _same(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a, b, strict=True))


def test_the_same_seed_gives_the_same_inputs_each_time():
    # the generator kept per seed is rewound to its first state, as a freshly seeded one starts
    first = [t[0][0] for t in check.generated((X,), {}, 4, seed=7)]
    again = [t[0][0] for t in check.generated((X,), {}, 4, seed=7)]
    assert _same(first, again)
    fresh = np.random.default_rng(7)
    assert np.array_equal(first[0], samples.perturb(X, fresh))
    assert not np.array_equal(first[0], [t[0][0] for t in check.generated((X,), {}, 1, seed=8)][0])


def test_isolated_copies_plain_calls_as_deepcopy_does():
    a = np.arange(3.0)
    shared = [a, a]
    args, kwargs = samples.isolated(((shared, shared), {"k": a}))
    assert args[0] is args[1] and args[0][0] is args[0][1] is kwargs["k"]  # shared stays shared
    assert kwargs["k"] is not a and np.array_equal(kwargs["k"], a)
    kwargs["k"][0] = 9.0
    assert a[0] == 0.0
    looped = [1]
    looped.append(looped)
    copy = samples.isolated(looped)
    assert copy is not looped and copy[1] is copy


def test_isolated_copies_the_objects_inside_an_object_array():
    inner = [1.0]
    boxed = np.empty(1, dtype=object)
    boxed[0] = inner
    copy = samples.isolated(boxed)
    copy[0].append(2.0)
    assert inner == [1.0]  # an ndarray.copy() would have shared the list


def test_the_negated_input_of_a_0d_mask_is_a_0d_mask_negated():
    # ~np.array(True) is np.False_, a NumPy scalar: the check took it for a scalar input and drew
    # it afresh, so the "negated" try was not the negation
    tries = check.generated((np.array(True), X), {}, 3, seed=0)
    negated = tries[1][0][0]
    assert type(negated) is np.ndarray and negated.shape == () and not negated
    assert np.array_equal(tries[1][0][1], -X)


def _stacked_blocks(arrays, n, seed):
    stacks, copies = check._stacks(arrays, n, check._seeded(seed))
    assert all(np.array_equal(s, c, equal_nan=True) and not np.shares_memory(s, c) for s, c in zip(stacks, copies, strict=True))
    return [[s[i * a.shape[0]:(i + 1) * a.shape[0]] for s, a in zip(stacks, arrays, strict=True)]
            for i in range(n + 1)]


def test_the_stacked_inputs_are_the_generated_ones_bit_for_bit():
    # the stacked run (check._agrees_stacked) and the runs one input at a time it falls back to
    # must see the same inputs: one draw of the generator for all float arrays of an input
    # (uniform given arrays of bounds) is the per-array draws, element by element, for every count
    rng = np.random.default_rng(3)
    singles = [rng.normal(size=(2, 4)).astype(np.float32), (rng.normal(size=(2, 3, 5)) * 1e6).astype(np.float32),
               np.array([[np.nan, 1.0], [np.inf, -2.0]], np.float32), np.full((2, 1), 7.0, np.float32)]
    doubles = [rng.normal(size=(3, 2)), np.array([[1e308, -1e308], [0.0, 1.0], [-0.0, 5e-324]])]
    mixed = [singles[0], np.array([[3, -4], [5, 6]], np.int16), np.array([[True], [False]]),
             np.array([[1], [250]], np.uint8), np.zeros((2, 0)), np.full((2, 1), 7.0, np.float16),
             doubles[0][:2]]
    for arrays in (singles, doubles, mixed, singles[:1], mixed[-2:]):
        for n in (2, 3, 5):
            tries = check.generated(tuple(arrays), {}, n, seed=11)
            blocks = _stacked_blocks(arrays, n, seed=11)
            for i, (t_args, _) in enumerate(tries):
                for got, want in zip(blocks[i], t_args, strict=True):
                    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (n, i)
            assert all(np.array_equal(got, a, equal_nan=True) for got, a in zip(blocks[n], arrays, strict=True))


def test_a_redrawn_0d_array_stays_an_array():
    # a NumPy scalar is a scalar input to the check (another path through NumPy's typing): the
    # redrawn 0-d float once came back as np.float32 and the function took another path on it
    tries = check.generated((np.array(0.5, np.float32), np.array(-7, np.int16)), {}, 3, seed=1)
    for t_args, _ in tries:
        assert all(type(a) is np.ndarray and a.shape == () for a in t_args)
