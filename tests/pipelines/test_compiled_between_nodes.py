"""A ``leapp.compile`` function called in an open seed-API session outside any node (where the
session's gap trace is active): it traces and runs its own graph as it does outside a session,
and a result computed from a node output is reported as code between nodes."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
import torch

import leapp
from leapp import annotate, api
from leapp.errors import PipelineWarning, TraceError


@leapp.compile
def scale(x):
    return np.clip(x * np.float32(3.0), np.float32(-1.0), np.float32(1.0))


X = np.linspace(-1.0, 1.0, 7, dtype=np.float32)


def _fresh():
    scale._graphs.clear()
    scale._fast.clear()


def test_call_and_trace_make_the_function_s_own_graph():
    _fresh()
    with leapp.session("gap_call"):
        graph = scale.trace(X)
        got = scale(X * np.float32(0.5))
    assert isinstance(graph, torch.fx.GraphModule)
    assert len(scale.graphs) == 1
    assert type(got) is np.ndarray  # a plain input gives a plain result, as outside a session
    np.testing.assert_array_equal(got, np.clip(X * np.float32(0.5) * np.float32(3.0), -1, 1))
    assert got.dtype == np.float32
    # the graph made in the session runs on other inputs after it
    np.testing.assert_array_equal(scale(-X), np.clip(-X * np.float32(3.0), -1, 1))


def test_a_result_from_a_node_output_is_code_between_nodes():
    _fresh()
    with leapp.session("gap_link"):
        a = annotate.input_tensors("pre", {"x": X})
        b = annotate.output_tensors("pre", {"y": a + np.float32(1.0)})
        c = scale(b)
        line = sys._getframe().f_lineno - 1
        np.testing.assert_array_equal(np.asarray(c), np.clip((X + 1) * np.float32(3.0), -1, 1))
        assert len(scale.graphs) == 1  # traced on the plain value, not recorded into the gap
        with pytest.warns(PipelineWarning, match=rf"code between nodes: scale \(leapp.compile\) at "
                                                 rf".*test_compiled_between_nodes.py:{line} .* from pre/y"):
            z = annotate.input_tensors("post", {"z": c})
        annotate.output_tensors("post", {"o": z * np.float32(2.0)})


def test_strict_session_refuses_it():
    _fresh()
    leapp.start("gap_strict", strict=True)
    try:
        a = annotate.input_tensors("pre", {"x": X})
        b = annotate.output_tensors("pre", {"y": a + np.float32(1.0)})
        c = scale(b)
        with pytest.raises(TraceError, match="code between nodes: scale"):
            annotate.input_tensors("post", {"z": c})
        # the refusal opened nothing: the session still stops cleanly and compiles 'pre'
        leapp.stop()
        assert set(leapp.compile_graph().nodes) == {"pre"}
    finally:
        api.reset()


def test_inside_a_node_it_is_still_recorded_into_the_node():
    _fresh()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        with leapp.session("in_node"):
            for x in (X, -X):
                a = annotate.input_tensors("pre", {"x": x})
                annotate.output_tensors("pre", {"y": scale(a)})
    assert scale.graphs == []  # inlined into the node's trace
    p = leapp.compile_graph(validate=True)
    np.testing.assert_array_equal(p["pre"](x=X * np.float32(0.25))["y"], np.clip(X * np.float32(0.75), -1, 1))


def test_trace_and_validate_inside_an_open_node_make_the_function_s_own_graph():
    # cf.trace/cf.validate make cf's graph from example values; inside a node they used to fail
    # ("cannot trace ... while 'n' is being traced"); the node's own graph is untouched
    _fresh()
    with leapp.session("inside_node"):
        x = annotate.input_tensors("n", {"x": X})
        graph = scale.trace(x)  # a traced leaf is read as its value
        report = scale.validate(X * np.float32(2.0))
        annotate.output_tensors("n", {"y": scale(x) + np.float32(1.0)})
    assert isinstance(graph, torch.fx.GraphModule) and report.ok
    node = leapp.compile_graph(validate=False)["n"]
    np.testing.assert_array_equal(node(x=X)["y"], scale.fn(X) + np.float32(1.0))
    np.testing.assert_array_equal(scale(X), scale.fn(X))
