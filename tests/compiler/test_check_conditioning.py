"""A solver given a matrix singular (or ill-conditioned) to its dtype's precision: there NumPy's LAPACK
and torch's part by rounding alone (one returns a value, the other finds an exact zero pivot; or both
return values an ill-conditioned matrix makes far apart), so no graph reproduces NumPy's answer.

- on an input the default check generated, the input is set aside and ``cf.report()`` says so, with
  the call, its line and the condition number, once the matrix is shown to be NumPy's own;
- on the traced input itself, the compile is refused with that reason, never blamed on the user's
  code ("raised only while tracing") nor on leapp ("a leapp bug").
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import leapp
from leapp.errors import ProblemsError

# float32 entries whose outer product is singular to float32 precision (1 + 7.6e7 is 7.6e7 there):
# NumPy's sgesv returns a value on it, torch's finds an exact zero pivot (checked below)
V = np.array([8701.448, 6317.0713, -9945.23], np.float32)


def regular_unless_negative(x):
    # where x sums above zero the diagonal dominates; elsewhere (the check's negated and zeros
    # inputs) the matrix is V's outer product alone
    a = np.eye(3, dtype=np.float32) * np.square(np.maximum(x.sum(), 0)) * 1e8 + np.outer(V, V)
    return np.linalg.solve(a, x)


def rank_one(y):
    return np.linalg.solve(np.eye(3, dtype=y.dtype) + np.outer(y, y), y)


X = np.array([0.5, 1.0, 2.0], np.float32)


def test_the_matrix_really_is_one_numpy_solves_and_torch_does_not():
    m = np.outer(V, V)
    assert np.isfinite(np.linalg.solve(m, X)).all()
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.solve(torch.from_numpy(m), torch.from_numpy(X))


def test_a_generated_input_singular_to_its_precision_is_set_aside_and_said_so():
    # deleting the set-aside in check.run refuses this function for the check's own inputs
    cf = leapp.compile(regular_unless_negative)
    np.testing.assert_allclose(cf(X), regular_unless_negative(X), rtol=1e-5)
    report = cf.format_report()
    assert report.count("differential check: set aside a generated input") == 2  # negated, zeros
    assert "numpy.linalg.solve at" in report and "singular to float32 precision" in report
    assert "test_check_conditioning.py:" in report


def on_negatives(x):
    a = np.eye(3, dtype=np.float32) * np.square(x.sum()) * 1e8 + np.outer(V, V)
    return np.linalg.solve(a, x)


def test_a_graph_whose_own_matrix_is_wrong_is_not_excused(monkeypatch):
    # a lowering that is wrong where the sum is negative (np.square as 0 there): the graph's matrix
    # is V's outer product alone, singular, where NumPy's is regular. The set-aside compares the
    # graph's matrix with NumPy's (a trace that keeps NumPy's values) and refuses
    from leapp.runtime import adapters

    real = torch.square
    monkeypatch.setattr(adapters, "_generic_cache", {})  # np.square's adapter, made afresh with it
    monkeypatch.setattr(torch, "square", lambda t: torch.where(t > 0, real(t), torch.zeros_like(t)))
    with pytest.raises(ProblemsError, match="graph raised LinAlgError.*First departure: numpy.square at"):
        leapp.compile(on_negatives)(X)
    monkeypatch.setattr(adapters, "_generic_cache", {})
    monkeypatch.setattr(torch, "square", real)
    cf = leapp.compile(on_negatives)  # the same function, lowered right: its singular inputs set aside
    np.testing.assert_allclose(cf(X), on_negatives(X), rtol=1e-5)
    assert "set aside" in cf.format_report()


def test_a_traced_input_singular_to_its_precision_is_refused_with_the_reason():
    y = np.array([8701.448, 6317.0713, -9945.23], np.float32)
    with pytest.raises(ProblemsError) as caught:
        leapp.compile(rank_one)(y)
    text = str(caught.value)
    assert "numpy.linalg.solve" in text and "test_check_conditioning.py:" in text
    assert "raised only while tracing" not in text and "leapp bug" not in text
    assert "singular to that precision" in text or "condition number" in text


def test_a_traced_input_ill_conditioned_for_its_precision_is_refused_with_the_reason():
    # NumPy and torch both return values on this example, far apart: the self-check's first
    # departure is the solve, whose matrix's condition number explains the difference
    rng = np.random.default_rng(1)
    for _ in range(40):
        y = (rng.uniform(-1, 1, 3) * 1e4).astype(np.float32)
        m = np.eye(3, dtype=np.float32) + np.outer(y, y)
        try:
            torch.linalg.solve(torch.from_numpy(m), torch.from_numpy(y))
        except torch.linalg.LinAlgError:
            continue
        if not np.allclose(np.linalg.solve(m, y), torch.linalg.solve(torch.from_numpy(m), torch.from_numpy(y)).numpy(),
                           rtol=1e-5, atol=1e-6):
            break
    else:
        pytest.fail("no example found")
    with pytest.raises(ProblemsError) as caught:
        leapp.compile(rank_one)(y)
    text = str(caught.value)
    assert "The first value that departs is numpy.linalg.solve at" in text
    assert "condition number" in text and "well-conditioned" in text and "leapp bug" not in text


def test_a_matrix_holding_nan_is_no_matter_of_precision():
    # the adapters make a solver's output NaN for such a matrix (docs/limitations.md), so no door
    # reaches this today: were torch to raise on one, its error stands, not "singular to precision"
    from leapp.runtime import build

    graph = torch.fx.Graph()
    m = graph.placeholder("m")
    node = graph.call_function(torch.linalg.inv, (m,))
    node.meta.update(leapp_call="numpy.linalg.inv", leapp_source="f.py:1:1")
    error = torch.linalg.LinAlgError("singular")
    assert build._refuse_singular(node, {m: torch.tensor([[np.nan, 1.0], [1.0, 2.0]])}, error) is None
    with pytest.raises(ProblemsError, match="f.py:1:1: numpy.linalg.inv.*singular to that precision"):
        build._refuse_singular(node, {m: torch.from_numpy(np.outer(V, V))}, error)
