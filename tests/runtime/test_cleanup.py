"""Every way out of tracing gives NumPy back: its own functions, the GC threshold, no active trace."""

from __future__ import annotations

import gc
import threading
import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import EscapeError, TraceError
from leapp.runtime import patches, state

ORIGINALS = {"asarray": np.asarray, "array": np.array, "zeros": np.zeros, "ones": np.ones}


def _numpy_is_numpy():
    assert {k: getattr(np, k) for k in ORIGINALS} == ORIGINALS
    assert not patches.is_installed()
    assert state.current() is None
    assert gc.get_threshold() == _threshold
    assert type(np.zeros(3)) is np.ndarray and type(np.asarray([1.0]) + 1) is np.ndarray


_threshold = gc.get_threshold()


def _frame(seed):
    return np.random.default_rng(seed).normal(size=4).astype(np.float32)


def test_session_context_manager_restores_numpy_on_normal_exit():
    with leapp.session("ok"):
        assert patches.is_installed()
        for seed in range(2):
            x = annotate.input_tensors("n", {"x": _frame(seed)})
            assert gc.get_threshold() != _threshold  # raised while a trace records
            annotate.output_tensors("n", {"y": x * 2})
    _numpy_is_numpy()
    node = leapp.compile_graph()["n"]
    assert node.validation.ok


def test_exception_inside_a_region_of_a_session_block_restores_everything():
    with pytest.raises(ZeroDivisionError):
        with leapp.session("boom"):
            x = annotate.input_tensors("n", {"x": _frame(0)})
            annotate.output_tensors("n", {"y": x + 1})  # one complete pass
            x = annotate.input_tensors("n", {"x": _frame(1)})
            y = x * 2
            raise ZeroDivisionError("the region never reaches output_tensors")
    _numpy_is_numpy()
    # the dead pass records nothing more: its traced values compute as plain NumPy now
    assert type(y + 1) is np.ndarray and type(np.sum(x)) is np.float32
    # the complete pass still compiles; a new session opens without complaint
    assert leapp.compile_graph(validate=False)["n"](x=np.ones(4, np.float32))["y"].tolist() == [2.0] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with leapp.session("again"):
            pass
    _numpy_is_numpy()


def test_leapp_error_in_a_strict_session_restores_everything():
    with pytest.raises(EscapeError):
        with leapp.session("strict", strict=True):
            x = annotate.input_tensors("n", {"x": _frame(0)})
            if x.sum() > 0:  # a data-dependent branch: strict mode raises here
                pass
    _numpy_is_numpy()


def test_stop_after_an_exception_without_a_context_manager_restores_everything():
    leapp.start("bare")
    try:
        x = annotate.input_tensors("n", {"x": _frame(0)})
        raise KeyError("user bug")
    except KeyError:
        pass
    assert state.current() is not None  # without `with`, the pass stays open until stop()
    with pytest.raises(TraceError, match="node 'n' is still open"):
        leapp.stop()
    _numpy_is_numpy()
    assert type(x * 2) is np.ndarray


def test_start_after_an_abandoned_session_restores_first():
    leapp.start("first")
    annotate.input_tensors("n", {"x": _frame(0)})
    with pytest.warns(Warning, match="discarded"):
        leapp.start("second")
    x = annotate.input_tensors("n", {"x": _frame(1)})  # the first session's open pass is gone
    annotate.output_tensors("n", {"y": x + 1})
    leapp.stop()
    _numpy_is_numpy()


def _raises_inside(x):
    y = np.clip(x, 0.0, 1.0)
    if y.shape[0] == 4:
        raise ValueError("user code failed while tracing")
    return y


traced_raising = leapp.compile(_raises_inside)


def test_exception_inside_a_compile_trace_restores_everything():
    with pytest.raises(ValueError, match="while tracing"):
        traced_raising(_frame(0))
    _numpy_is_numpy()
    np.testing.assert_array_equal(traced_raising(np.ones(3, np.float32)), np.ones(3, np.float32))
    _numpy_is_numpy()


def test_a_compile_trace_during_an_open_session_keeps_the_session_patched():
    done = {}

    def trace_in_thread():  # this thread has no trace of its own: leapp.compile traces here
        cf = leapp.compile(_raises_inside)
        done["out"] = cf(np.ones(3, np.float32))
        done["graphs"] = len(cf.graphs)

    with leapp.session("outer"):
        t = threading.Thread(target=trace_in_thread)
        t.start()
        t.join(30)
        assert done["graphs"] == 1
        np.testing.assert_array_equal(done["out"], np.ones(3, np.float32))
        assert patches.is_installed()  # the compile released only its own hold
        assert np.asarray is not ORIGINALS["asarray"]
    _numpy_is_numpy()


def test_a_session_interrupted_in_the_first_pass_of_a_fed_node_still_compiles_the_others():
    # node b's only pass never closed: it is not compiled, so the edge a -> b is no edge
    # (compile_graph used to fail with KeyError 'b' while ordering the nodes)
    with pytest.raises(ZeroDivisionError):
        with leapp.session("cut"):
            x = annotate.input_tensors("a", {"x": _frame(0)})
            y = annotate.output_tensors("a", {"y": x * 2})
            annotate.input_tensors("b", {"y": y})  # fed by a in the same pass: an edge
            raise ZeroDivisionError("b never reaches output_tensors")
    _numpy_is_numpy()
    p = leapp.compile_graph(validate=False)
    assert list(p.nodes) == ["a"]
    assert p["a"](x=np.ones(4, np.float32))["y"].tolist() == [2.0] * 4


def test_a_numpy_function_replaced_between_traces_is_the_one_wrapped(monkeypatch):
    # the wrappers are made once per original and reused; a replaced original gets its own
    seen = []

    def traced(x):
        seen.append(getattr(np.zeros, "__wrapped__", None))  # None: the check's untraced runs
        return x + 1.0

    x = _frame(0)
    leapp.compile(traced)(x)
    own = np.zeros

    def zeros(*args, **kwargs):
        return own(*args, **kwargs)

    monkeypatch.setattr(np, "zeros", zeros)
    leapp.compile(traced)(x)
    wrapped = [f for f in seen if f is not None]
    assert len(wrapped) == 2 and wrapped[0] is own and wrapped[1] is zeros
    assert np.zeros is zeros  # given back as it was found
