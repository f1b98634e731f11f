"""NumPy's scalar types keep their identity while leapp traces, and ``np.float32(x)`` of a traced
value is traced (``leapp.compile``) or reported at its line (seed API), never silently frozen."""

from __future__ import annotations

import pickle
import threading
import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import EscapeWarning, ValidationWarning

FLOAT32 = np.dtype("f4").type  # NumPy's own, looked up through a path leapp never touches
SCALAR_TYPES = (np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_, np.complex64)
REAL = {t: np.dtype(t).type for t in SCALAR_TYPES}
PLAIN = np.ones(3, np.float32)  # made before any session (inside a region, new arrays are traced)


def _identity_holds():
    """Every way code tells NumPy's scalar types apart, as plain NumPy answers them."""
    x = PLAIN
    lookup = {np.float32: "f4", np.int64: "i8"}
    checks = {
        "np.float32 is NumPy's": np.float32 is FLOAT32,
        "x.dtype.type is np.float32": x.dtype.type is np.float32,
        "np.dtype('f4').type is np.float32": np.dtype("f4").type is np.float32,
        "dict lookup": lookup[x.dtype.type] == "f4" and lookup.get(np.dtype("i8").type) == "i8",
        "type of a scalar": type(np.float32(1.5)) is np.float32 and type(x[0]) is np.float32,
        "pickled type": pickle.loads(pickle.dumps(np.float32)) is np.float32,
        "pickled scalar": pickle.loads(pickle.dumps(np.float32(1.5))) == np.float32(1.5),
        "every scalar type": all(t is REAL[t] for t in SCALAR_TYPES),
    }
    return [name for name, ok in checks.items() if not ok]


def test_scalar_types_keep_their_identity_during_a_session_in_every_thread():
    other = {}

    def in_other_thread():
        other["broken"] = _identity_holds()

    with leapp.session("identity"):
        assert _identity_holds() == []
        x = annotate.input_tensors("n", {"x": np.ones(3, np.float32)})
        assert _identity_holds() == []  # with a region open, too
        t = threading.Thread(target=in_other_thread)
        t.start()
        t.join(10)
        assert x.dtype.type is np.float32
        annotate.output_tensors("n", {"y": x * 2})
    assert other["broken"] == []


@leapp.compile
def _dtype_branch(x):
    # a static branch on the dtype's identity, evaluated while tracing
    if x.dtype.type is np.float32 and {np.float32: 2.0}[x.dtype.type] == 2.0:
        return x * 2.0
    return x * 3.0


def test_scalar_types_keep_their_identity_inside_a_compile_trace():
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(_dtype_branch(x), x * 2.0)


@leapp.compile
def _casts(x, i):
    peak = np.float32(x.max())  # 0-d float32 value of a float32 array: no hook NumPy offers
    wide = np.float64(x.sum())  # float64 calls float() first
    count = np.int32(i.sum())
    return x / peak + wide, np.int64(x) + count, np.bool_(i), np.float16(x[0])


def test_scalar_type_casts_are_traced_exactly_by_leapp_compile():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 4.0, (3, 4)).astype(np.float32)
    i = rng.integers(-5, 5, 6)
    _casts(x, i)
    for _ in range(3):  # other values through the same graph: nothing was frozen
        x = rng.uniform(-4.0, 4.0, (3, 4)).astype(np.float32)
        i = rng.integers(-5, 5, 6)
        got = _casts(x, i)
        want = _casts.fn(x, i)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-6)
    assert len(_casts.graphs) == 1


def _seed_passes(body, n=3):
    rng = np.random.default_rng(1)
    with leapp.session("casts"):
        for _ in range(n):
            x = annotate.input_tensors("n", {"x": rng.uniform(0.5, 4.0, 5)})
            annotate.output_tensors("n", {"y": body(x)})
    return leapp.compile_graph(validate=True, on_mismatch="warn")["n"]  # tests read .validation


def test_seed_api_scalar_type_of_an_array_is_traced():
    node = _seed_passes(lambda x: np.float32(x) * 2 + np.int64(x))
    assert node.validation.ok and node.validation.n_samples == 2
    assert not node.problems


def test_seed_api_scalar_type_of_a_0d_value_is_reported_at_its_line():
    with pytest.warns(EscapeWarning, match=r"np\.float32\(\.\.\.\) of a traced value at .*test_scalar_types\.py:"
                                           r"\d+.*x\.astype\(np\.float32\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ValidationWarning)
            node = _seed_passes(lambda x: x / np.float32(x.max()))  # float64 -> float32: a conversion
    assert node.problems and "np.float32" in str(node.problems[0])


def test_seed_api_same_dtype_scalar_is_named_by_validation():
    """np.float32(v) of a float32 0-d value calls nothing leapp could hook: validation names it."""
    def body(x):
        x = x.astype(np.float32)
        return x / np.float32(x.max())

    with pytest.warns(ValidationWarning, match=r"suspect NumPy scalar np\.float32\(.*\) used by numpy\.divide at "
                                               r".*test_scalar_types\.py:\d+.*x\.astype\(np\.float32\)"):
        node = _seed_passes(body)
    assert not node.validation.ok
