"""``leapp.compile(state={...})``: a stateful function carried between calls, reset, exported with
paired state ports of the same names in every format."""

from __future__ import annotations

import numpy as np
import pytest

import leapp
from leapp.errors import LeappError
from leapp.export import formats as export_formats

HIST0 = np.zeros((4, 3), np.float32)


def _stack_numpy(obs, hist):
    hist = np.concatenate([hist[1:], obs[None]], axis=0)
    return hist.reshape(12) * 2.0, {"hist": hist}


@leapp.compile(state={"hist": HIST0})
def stack(obs, hist):
    hist = np.concatenate([hist[1:], obs[None]], axis=0)
    return hist.reshape(12) * 2.0, {"hist": hist}


def _observations(n):
    rng = np.random.default_rng(1)
    return [rng.normal(size=3).astype(np.float32) for _ in range(n)]


def _numpy_run(obs_list):
    hist, out = HIST0, []
    for o in obs_list:
        y, new = _stack_numpy(o, hist)
        hist = new["hist"]
        out.append(y)
    return out


def test_state_is_carried_between_calls_and_reset_restarts():
    stack.reset()
    obs = _observations(8)
    got = [stack(o) for o in obs]
    for g, w in zip(got, _numpy_run(obs), strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(stack.state["hist"], np.stack(obs[-4:]))
    assert len(stack.graphs) == 1  # one trace; every later call ran the graph
    stack.reset()
    np.testing.assert_array_equal(stack.state["hist"], HIST0)
    np.testing.assert_array_equal(stack(obs[0]), got[0])


@pytest.mark.parametrize("format", ["onnx", "torchscript", "pt2"])
def test_export_has_paired_state_ports_with_the_same_names_in_every_format(tmp_path, format):
    stack.reset()
    stack(_observations(1)[0])
    path = str(tmp_path / f"stack.{format}")
    description = stack.export(path, format)
    assert [p["name"] for p in description["inputs"]] == ["obs", "hist"]
    assert [p["name"] for p in description["outputs"]] == ["output", "hist.next"]
    run = export_formats.LOADERS[format](path, ["obs", "hist"])
    obs, hist, got = _observations(6), HIST0, []
    for o in obs:
        y, hist = run({"obs": o, "hist": hist})
        got.append(y)
    for g, w in zip(got, _numpy_run(obs), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_the_caller_never_passes_the_state():
    with pytest.raises(TypeError, match=r"state \['hist'\] is carried by the compiled function"):
        stack(np.zeros(3, np.float32), hist=HIST0)


def _grows(x, acc):
    return x, {"acc": np.concatenate([acc, x])}


def _no_pair(x, acc):
    return x + acc


def test_a_state_keeps_its_shape_and_the_return_is_a_pair():
    grows = leapp.compile(_grows, state={"acc": np.zeros(2)})
    with pytest.raises(LeappError, match=r"state 'acc' is float64\[2\] but the function returned float64\[4\]"):
        grows(np.ones(2))
    no_pair = leapp.compile(_no_pair, state={"acc": np.zeros(2)})
    with pytest.raises(LeappError, match=r"returns \(result, \{state name: new value\}\)"):
        no_pair(np.ones(2))
    with pytest.raises(LeappError, match=r"no parameter for state \['other'\]"):
        leapp.compile(_no_pair, state={"other": np.zeros(2)})


def _counted(x, t):
    return x * t, {"t": t + 1.0}


def test_a_python_number_state_keeps_numpys_weak_typing():
    # carried as a 0-d float64 array it was strongly typed: x32 * t came back float64 from the
    # first call, where NumPy's loop (a Python float carried) gives float32
    cf = leapp.compile(_counted, state={"t": 0.5})
    x = np.linspace(-1, 1, 3).astype(np.float32)
    t = 0.5
    for _ in range(4):
        got = cf(x)
        want, new = _counted(x, t)
        t = new["t"]
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)
        assert type(cf.state["t"]) is float and cf.state["t"] == t
    assert len(cf.graphs) == 1  # the number is an input, not one graph per value
    cf.reset()
    assert cf.state == {"t": 0.5}
