"""The closed loop (preprocess with a history state -> policy -> action fed back), traced, exported,
loaded with ``leapp.load_pipeline`` and stepped against the same loop in NumPy, in every format."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import leapp
from leapp import annotate
from leapp.errors import PipelineWarning, TraceError

from . import loop

FORMATS = ["onnx", "torchscript", "pt2"]


@pytest.fixture(scope="module")
def traced():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        return loop.trace(loop.observations(4))


def test_the_loop_is_found(traced):
    assert traced.edges == [("preprocess", "features", "policy", "features")]
    [fb] = traced.feedback
    assert (fb.from_node, fb.from_port, fb.to_node, fb.to_port, fb.cast) == \
        ("policy", "action", "preprocess", "last_action", False)
    np.testing.assert_array_equal(fb.initial, loop.ACTION0)  # the first pass's value
    assert list(traced.state) == ["preprocess"]
    np.testing.assert_array_equal(traced.state["preprocess"]["hist"], loop.HIST0)
    assert traced.inputs == ["preprocess/obs"]
    assert traced.outputs == ["policy/action"]  # fed back, and still an output
    assert traced["preprocess"].input_names == ["obs", "last_action", "hist"]
    assert traced["preprocess"].output_names == ["features", "hist.next"]


@pytest.mark.parametrize("format", FORMATS)
def test_loaded_pipeline_steps_like_numpy_and_reset_repeats_step_0(traced, tmp_path, format):
    traced.export(tmp_path, format)
    rt = leapp.load_pipeline(tmp_path, trust_code=format != "onnx")
    obs = loop.observations(20, seed=3)
    want = loop.reference(obs)
    got = [rt.step({"preprocess/obs": o})["policy/action"] for o in obs]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"step {i}")
    assert not np.allclose(got[0], got[5])  # the history and the feedback matter
    rt.reset()
    np.testing.assert_array_equal(rt.step({"preprocess/obs": obs[0]})["policy/action"], got[0])
    np.testing.assert_array_equal(rt.step({"preprocess/obs": obs[1]})["policy/action"], got[1])


def test_per_node_formats(traced, tmp_path):
    spec = traced.export(tmp_path, {"preprocess": "onnx", "policy": "torchscript"})
    assert [(n["name"], n["format"], n["artifact"]) for n in spec["nodes"]] == \
        [("preprocess", "onnx", "preprocess.onnx"), ("policy", "torchscript", "policy.pt")]
    rt = leapp.load_pipeline(tmp_path, trust_code=True)
    obs = loop.observations(6, seed=4)
    for o, w in zip(obs, loop.reference(obs), strict=True):
        np.testing.assert_allclose(rt.step({"preprocess/obs": o})["policy/action"], w, rtol=1e-5, atol=1e-6)
    with pytest.raises(leapp.errors.LeappError, match="'postprocess'"):
        traced.export(tmp_path / "x", {"postprocess": "onnx"})


@pytest.mark.parametrize("feed", [
    # np.asarray looked up at the call, as user code does (a name bound before leapp.start() is
    # NumPy's own and drops the tracing; that case warns, see the test of lost links)
    lambda a: a[:], lambda a: np.asarray(a), lambda a: np.array(a), lambda a: a.copy(), np.copy,
    lambda a: a.astype(np.float32),
    lambda a: a[...],
], ids=["slice", "asarray", "array", "copy-method", "np.copy", "astype", "ellipsis"])
def test_feedback_is_followed_through_copies_and_views(feed):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        p = loop.trace(loop.observations(3), feed=feed)
    assert [(f.from_node, f.to_node, f.to_port) for f in p.feedback] == [("policy", "preprocess", "last_action")]
    assert p.inputs == ["preprocess/obs"]


def _cast_loop(xs, step):
    fb = np.zeros(2)  # float64, while the node's output is float32
    out = []
    for x in xs:
        x, f = step(x, fb)
        y = (x * 0.5 + f).astype(np.float32)
        out.append(step.close(y))
        fb = out[-1].astype(np.float64)
    return out


def test_feedback_through_a_cast_is_marked_and_carried(tmp_path):
    xs = [np.arange(2, dtype=np.float32) + k for k in range(8)]

    def numpy_step(x, fb):
        return x, fb
    numpy_step.close = lambda y: y

    def traced_step(x, fb):
        return annotate.input_tensors("a", {"x": x, "fb": fb})
    traced_step.close = lambda y: annotate.output_tensors("a", {"y": y})

    leapp.start("cast")
    _cast_loop(xs[:3], traced_step)
    leapp.stop()
    p = leapp.compile_graph()
    [fb] = p.feedback
    assert fb.cast and fb.initial.dtype == np.float64 and p.outputs == ["a/y"]
    p.export(tmp_path, "onnx")
    rt = leapp.load_pipeline(tmp_path)
    for x, want in zip(xs, _cast_loop(xs, numpy_step), strict=True):
        got = rt.step({"a/x": x})["a/y"]
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_code_between_nodes_is_reported_with_its_line():
    def feed(a):
        return a + 1.0  # the line the report names

    line = feed.__code__.co_firstlineno + 1
    with pytest.warns(PipelineWarning, match=rf"code between nodes: numpy.add at .*test_loop.py:{line}") as got:
        p = loop.trace(loop.observations(3), feed=feed)
    assert "last_action" in str(got[0].message)
    assert p.feedback == [] and p.inputs == ["preprocess/obs", "preprocess/last_action"]
    with pytest.raises(TraceError, match=rf"code between nodes: numpy.add at .*test_loop.py:{line}"):
        loop.trace(loop.observations(3), feed=feed, strict=True)


def test_code_between_two_nodes_of_one_pass_is_reported():
    leapp.start("between")
    with pytest.warns(PipelineWarning, match=r"code between nodes: numpy.add at .*test_loop.py:\d+ computes .* from a/y"):
        for k in range(2):
            x = annotate.input_tensors("a", {"x": np.arange(3.0) + k})
            y = annotate.output_tensors("a", {"y": x * 2})
            y2 = y + 1.0
            z = annotate.input_tensors("b", {"y": y2})
            annotate.output_tensors("b", {"z": z - 1})
    leapp.stop()
    p = leapp.compile_graph()
    assert p.edges == [] and p.inputs == ["a/x", "b/y"]


def test_a_link_leapp_cannot_follow_warns_and_never_becomes_a_silent_input():
    def feed(a):
        return np.array(np.asarray(a).tolist(), dtype=np.float32)  # through Python lists

    with pytest.warns(PipelineWarning, match="equals output policy/action"):
        loop.trace(loop.observations(3), feed=feed)
    with pytest.raises(TraceError, match="equals output policy/action"):
        loop.trace(loop.observations(3), feed=feed, strict=True)


def test_state_first_pass_value_is_the_initial_and_later_the_update():
    seen = []
    leapp.start("carry")
    for k in range(3):
        x = annotate.input_tensors("n", {"x": np.full(2, float(k))})
        s = annotate.state_tensors("n", {"acc": np.full(2, 10.0)})
        seen.append(np.asarray(s).copy())
        annotate.update_state("n", {"acc": s + x})
        annotate.output_tensors("n", {"y": s * 1.0})
    leapp.stop()
    np.testing.assert_array_equal(np.stack(seen), [[10, 10], [10, 10], [11, 11]])
    p = leapp.compile_graph()
    assert p["n"].validation.ok and p["n"].validation.n_samples == 2


def test_state_never_updated_warns_and_is_carried_unchanged():
    leapp.start("never")
    with pytest.warns(PipelineWarning, match="state 'acc' is never updated"):
        x = annotate.input_tensors("n", {"x": np.ones(2)})
        s = annotate.state_tensors("n", {"acc": np.zeros(2)})
        annotate.output_tensors("n", {"y": x + s})
    leapp.stop()
    p = leapp.compile_graph(validate=False)
    out = p["n"](x=np.ones(2), acc=np.full(2, 3.0))
    np.testing.assert_array_equal(out["acc.next"], [3.0, 3.0])


@pytest.mark.parametrize("bad, message", [
    (np.zeros(3), r"state 'acc' is float64\[2\] but annotate.update_state gives float64\[3\]"),
    (np.zeros(2, np.float32), r"state 'acc' is float64\[2\] but annotate.update_state gives float32\[2\]"),
])
def test_state_update_of_another_shape_or_dtype_raises_naming_the_state(bad, message):
    leapp.start("bad")
    annotate.input_tensors("n", {"x": np.ones(2)})
    annotate.state_tensors("n", {"acc": np.zeros(2)})
    with pytest.raises(TraceError, match=message):
        annotate.update_state("n", {"acc": bad})
    with pytest.raises(TraceError, match="did not declare"):
        annotate.update_state("n", {"other": np.zeros(2)})


def test_several_input_tensors_calls_on_one_open_node():
    leapp.start("several")
    for k in range(2):
        a = annotate.input_tensors("n", {"a": np.arange(3.0) + k})
        b = annotate.input_tensors("n", {"b": np.ones(3) * k})
        annotate.output_tensors("n", {"y": a * b})
    leapp.stop()
    p = leapp.compile_graph()
    assert p["n"].input_names == ["a", "b"]
    assert p["n"].validation.ok
    np.testing.assert_array_equal(p["n"](a=np.ones(3), b=np.full(3, 2.0))["y"], [2.0, 2.0, 2.0])
    leapp.start("twice")
    annotate.input_tensors("n", {"a": np.ones(2)})
    with pytest.raises(TraceError, match="declared twice"):
        annotate.input_tensors("n", {"a": np.ones(2)})


@pytest.fixture(scope="module")
def traced_batch():
    # a batch of 2 while tracing: torch.export specialises a dimension of size 1
    return loop.trace(loop.observations(3, batch=2), batch=2)


@pytest.mark.parametrize("format", FORMATS)
def test_batch_of_environments_each_with_its_own_state(traced_batch, tmp_path, format):
    traced_batch.export(tmp_path, format, dynamic_batch=True)
    rt = leapp.load_pipeline(tmp_path, trust_code=format != "onnx")
    assert rt.inputs["preprocess/obs"].shape == ("batch", 3)
    obs = loop.observations(10, seed=9, batch=5)
    want = loop.reference(obs, batch=5)
    for i, o in enumerate(obs):
        np.testing.assert_allclose(rt.step({"preprocess/obs": o})["policy/action"], want[i], rtol=1e-5,
                                   atol=1e-6, err_msg=f"step {i}")
    # each environment on its own gives the same actions as inside the batch
    alone = loop.reference([o[2:3] for o in obs], batch=1)
    np.testing.assert_allclose(want[-1][2:3], alone[-1], rtol=1e-6)
    # resetting one environment restarts it alone
    rt.reset(envs=[2])
    out = rt.step({"preprocess/obs": obs[0]})["policy/action"]
    np.testing.assert_allclose(out[2], want[0][2], rtol=1e-5, atol=1e-6)
    assert not np.allclose(out[0], want[0][0])
    with pytest.raises(leapp.pipeline.PipelineInputError, match="reset"):
        rt.step({"preprocess/obs": obs[0][:3]})


def test_session_warns_nothing_for_plain_inputs_between_nodes():
    """An environment computing the next observation from plain arrays is not code between nodes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        leapp.start("plain")
        obs = np.zeros(3)
        for _ in range(3):
            x = annotate.input_tensors("n", {"x": obs})
            annotate.output_tensors("n", {"y": x * 2})
            obs = np.sin(np.arange(3.0)) + 1.0  # the world, from plain data
        leapp.stop()
        assert leapp.compile_graph().inputs == ["n/x"]


def _torch_loop(obs_list, net, node):
    """A torch policy in the loop: the action crosses .numpy() / torch.from_numpy on its way back."""
    import torch

    action, out = np.zeros(2, np.float32), []
    for obs in obs_list:
        o, last = node.open("pre", {"obs": obs, "last": action})
        feats = node.close("pre", {"f": np.concatenate([o * 2.0, last])})
        f = node.open("policy", {"f": torch.from_numpy(np.asarray(feats))})
        with torch.no_grad():
            a = node.close("policy", {"a": torch.tanh(net(f))})
        action = a.numpy()
        out.append(action)
    return out


class _Plain:
    @staticmethod
    def open(name, values):
        values = list(values.values())
        return values[0] if len(values) == 1 else tuple(values)

    close = open


class _Traced:
    open = staticmethod(annotate.input_tensors)
    close = staticmethod(annotate.output_tensors)


@pytest.mark.parametrize("format", ["onnx", "torchscript"])
def test_a_torch_policy_in_the_loop_is_followed_through_numpy_and_back(tmp_path, format):
    import torch

    torch.manual_seed(0)
    net = torch.nn.Linear(5, 2)
    obs = [np.full(3, k * 0.3 - 1.0, np.float32) for k in range(12)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        leapp.start("torch-loop")
        _torch_loop(obs[:3], net, _Traced)
        leapp.stop()
        p = leapp.compile_graph()
    assert p.edges == [("pre", "f", "policy", "f")]
    assert [(f.from_node, f.from_port, f.to_node, f.to_port) for f in p.feedback] == [("policy", "a", "pre", "last")]
    p.export(tmp_path, format)
    rt = leapp.load_pipeline(tmp_path, trust_code=format != "onnx")
    for i, want in enumerate(_torch_loop(obs, net, _Plain)):
        np.testing.assert_allclose(rt.step({"pre/obs": obs[i]})["policy/a"], want, rtol=1e-5, atol=1e-6)


def test_per_environment_initial_values_fix_the_batch_size(tmp_path):
    leapp.start("per-env")
    for k in range(2):
        x = annotate.input_tensors("n", {"x": np.full((2, 1), float(k))})
        s = annotate.state_tensors("n", {"s": np.array([[0.0], [5.0]])})  # differs per environment
        annotate.update_state("n", {"s": s + x})
        annotate.output_tensors("n", {"y": s * 1.0})
    leapp.stop()
    leapp.compile_graph().export(tmp_path, "onnx", dynamic_batch=True)
    rt = leapp.load_pipeline(tmp_path)
    with pytest.raises(leapp.pipeline.PipelineInputError, match="differs between the 2 traced environments"):
        rt.step({"n/x": np.ones((3, 1))})
    np.testing.assert_array_equal(rt.step({"n/x": np.ones((2, 1))})["n/y"], [[0.0], [5.0]])
    np.testing.assert_array_equal(rt.step({"n/x": np.ones((2, 1))})["n/y"], [[1.0], [6.0]])


def test_an_edge_that_is_not_there_in_every_pass_is_reported_and_left_an_input():
    def run(strict):
        leapp.start("sometimes", strict=strict)
        for k in range(3):
            x = annotate.input_tensors("a", {"x": np.arange(3.0) + k})
            y = annotate.output_tensors("a", {"y": x * 2})
            annotate.input_tensors("b", {"y": y if k != 1 else np.arange(3.0) * 7 + 1})
            annotate.output_tensors("b", {"z": np.ones(1)})
        leapp.stop()
        return leapp.compile_graph(validate=False)

    with pytest.warns(PipelineWarning, match=r"input 'y' is fed by a/y in some passes but not in pass\(es\) \[2\]"):
        p = run(strict=False)
    assert p.edges == [] and "b/y" in p.inputs
    with pytest.raises(TraceError, match="in some passes but not"):
        run(strict=True)


def test_an_environment_outside_the_pipeline_says_so_with_external():
    def run(external):
        leapp.start("env")
        obs, action = np.zeros(3), np.zeros(3)
        for _ in range(3):
            o, last = annotate.input_tensors("policy", {"obs": obs, "last": action})
            action = annotate.output_tensors("policy", {"action": np.tanh(o + last)})
            obs = obs + 0.1 * (annotate.external(action) if external else action)  # the simulator
        leapp.stop()
        return leapp.compile_graph()

    with pytest.warns(PipelineWarning, match="code between nodes: numpy.multiply .*annotate.external"):
        run(external=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PipelineWarning)
        p = run(external=True)
    assert p.inputs == ["policy/obs"] and len(p.feedback) == 1
