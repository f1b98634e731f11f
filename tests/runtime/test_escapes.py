"""Untraced calls and values leaving the graph: the exact warning, strict errors, escape tracking."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import (
    EscapeError,
    EscapeWarning,
    UnsupportedArgumentError,
    UntracedCallError,
    UntracedCallWarning,
)
from leapp.runtime.tracing import trace_function

X = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)


def _trace(fn, *args, strict=False):
    return trace_function(fn, args, {}, names=[f"a{i}" for i in range(len(args))], strict=strict)


def test_untraced_call_warns_with_the_seed_text_at_the_user_line():
    def f(x):
        return np.polyval(np.ones(2), x)  # line of interest

    with pytest.warns(UntracedCallWarning) as record:
        _trace(f, X)
    messages = [str(w.message) for w in record]
    assert "No torch equivalent for numpy function polyval. Operation will not be traced." in messages
    hit = [w for w in record if "polyval" in str(w.message)][0]
    assert hit.filename == __file__
    assert "np.polyval" in open(__file__).read().splitlines()[hit.lineno - 1]


def test_untraced_call_is_an_error_in_strict_mode():
    def f(x):
        return np.polyval(np.ones(2), x)

    with pytest.raises(UntracedCallError, match="numpy.polyval"):
        _trace(f, X, strict=True)


def test_escaped_value_flowing_into_the_graph_names_the_call():
    def f(x):
        y = np.polyval(np.ones(2), x)
        return x + y

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        traced = _trace(f, X)
    frozen = [str(w.message) for w in record if issubclass(w.category, EscapeWarning)]
    assert frozen and "untraced call numpy.polyval" in frozen[0] and "frozen" in frozen[0]
    kinds = {p.kind for p in traced.problems}
    assert kinds == {"untraced", "frozen"}


@pytest.mark.parametrize(
    "body, construct",
    [
        (lambda x: x * float(x.max()), "float()"),
        (lambda x: x * int(x.argmax()), "int()"),
        (lambda x: x * x.sum().item(), ".item()"),
        (lambda x: x * x.tolist()[0][0], ".tolist()"),
        # math.sqrt is traced (as np.sqrt on float64) and is a Python float, weak as in NumPy:
        # float32 * it stays float32 and is no escape (test_math_and_concatenators); float() of it is
        (lambda x: x * float(math.sqrt(x.sum())), "float()"),
        (lambda x: x if x.mean() > 0 else -x, "bool()"),
        (lambda x: x[: x.argmax()], "Python integer"),
        (lambda x: np.zeros(x.argmax()), "size of the result depends on the data"),
    ],
)
def test_values_leaving_the_graph_are_named(body, construct):
    with pytest.raises(EscapeError, match=__file__.replace("\\", "\\\\")) as info:
        _trace(body, X, strict=True)
    assert construct in str(info.value)


def test_escape_warns_in_non_strict_mode_and_freezes():
    def f(x):
        return x / float(x.max())

    with pytest.warns(EscapeWarning, match="float"):
        traced = _trace(f, X)
    assert [p.kind for p in traced.problems] == ["escape"]


def test_data_dependent_branch_is_reported():
    def f(x):
        if x.mean() > 0:
            return x * 2
        return x

    with pytest.raises(EscapeError, match="np.where"):
        _trace(f, X, strict=True)


def test_refused_keyword_is_refused_at_the_call():
    def f(x):
        return np.add(x, 1, where=x > 0)

    with pytest.raises(UnsupportedArgumentError, match="where="):
        _trace(f, X)


def test_out_into_a_plain_array_is_refused():
    buf = np.empty_like(X)

    def f(x):
        np.multiply(x, 2, out=buf)
        return buf

    with pytest.raises(UnsupportedArgumentError, match="plain NumPy array"):
        _trace(f, X)


def test_seed_session_warns_by_default():
    leapp.start("warn")
    x = annotate.input_tensors("n", {"x": X})
    with pytest.warns(EscapeWarning):
        bool(x.sum() > 0)
    annotate.output_tensors("n", {"y": x})
    leapp.stop()


def test_seed_session_strict_raises():
    leapp.start("strict", strict=True)
    x = annotate.input_tensors("n", {"x": X})
    with pytest.raises(EscapeError):
        float(x.sum())


def test_warning_names_functions_as_numpy_spells_them():
    from leapp.table import display_name

    assert display_name("numpy.polyval") == "polyval"
    assert display_name("numpy.linalg.lstsq") == "lstsq"
    assert display_name("numpy.add.at") == "add.at"
    assert display_name("ndarray.partition") == "ndarray.partition"


def test_argument_forms_an_adapter_refuses_name_the_call_and_line():
    # np.einsum's interleaved form is valid NumPy; leapp refuses it as the user's call, not as a leapp bug
    def f(x):
        return np.einsum(x, [0, 1], [1])

    with pytest.raises(UnsupportedArgumentError, match=r"test_escapes.py:\d+: numpy.einsum\(\.\.\.\).*subscripts"):
        _trace(f, X)
