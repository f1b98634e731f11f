"""Big-endian inputs (an ``.npy`` written elsewhere, a network buffer) trace, run and deploy exactly.

NumPy computes in the machine's byte order but keeps an input's byte order in
its views, copies, sorts and fancy indexing; leapp's call returns exactly
NumPy's dtypes, and an artifact, whose buffers are in the machine's order
(ONNX Runtime reads every buffer so), is checked and described in that order.
"""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp import annotate

X = np.linspace(-1.5, 2.0, 6).reshape(2, 3).astype(">f4")
K = np.arange(-3, 3).astype(">i8")


def prep(x, k):
    return {"row": x[0], "scaled": x * 2.0, "sums": np.clip(x, -1, 1).sum(axis=0), "t": x.T.copy(),
            "sorted": np.sort(x, axis=1), "rev": k[::-1], "next": k + 1, "picked": x[[1, 0]]}


def _same(got, want):
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype, (key, g.dtype, w.dtype)  # byte order included
        np.testing.assert_array_equal(g, w)


def test_numpy_keeps_the_byte_order_in_views_and_copies():
    # the premise of this file: if NumPy stopped doing this, these tests would need another look
    want = prep(X, K)
    assert want["row"].dtype.str == ">f4" and want["scaled"].dtype.isnative


def test_leapp_compile_returns_numpys_dtypes_byte_order_included():
    cf = leapp.compile(prep)
    for sample in ((X, K), (X[::-1] * -2, K * 3)):
        for _ in range(2):  # the first call, then the repeat call
            _same(cf(*sample), prep(*sample))
    _same(cf(X.astype(np.float32), K.astype(np.int64)), prep(X.astype(np.float32), K.astype(np.int64)))


@pytest.mark.parametrize("fmt", ["onnx", "torchscript", "pt2"])
def test_seed_api_export_and_deployed_pipeline(tmp_path, fmt):
    leapp.start("byte_order")
    for sample in ((X, K), ((X * 3).astype(">f4"), (K - 2).astype(">i8"))):  # the second pass validates
        x, k = annotate.input_tensors("prep", {"x": sample[0], "k": sample[1]})
        annotate.output_tensors("prep", prep(x, k))
    leapp.stop()
    pipeline = leapp.compile_graph(validate=True)
    _same(pipeline["prep"](x=X, k=K), prep(X, K))
    description = pipeline.export(str(tmp_path), format=fmt)  # checked against NumPy before writing
    (entry,) = description["nodes"]
    assert {p["dtype"] for p in entry["inputs"]} == {"float32", "int64"}  # the artifact's own order
    rt = leapp.load_pipeline(str(tmp_path), trust_code=fmt != "onnx")
    for x, k in ((X, K), (X.astype(np.float32), K.astype(np.int64))):  # either byte order is fed
        got = rt.step({"prep/x": x, "prep/k": k})
        for key, want in prep(x, k).items():
            value = got[f"prep/{key}"]
            assert value.dtype == want.dtype.newbyteorder("=")
            np.testing.assert_array_equal(value, want)
