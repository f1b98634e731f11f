"""Inputs and outputs as users have them: dotted keys, nesting, and non-array leaves."""

from __future__ import annotations

import numpy as np

import leapp

X = np.array([0.5, -1.0, 2.0], dtype=np.float32)


def lerobot_style(obs, mode="fast"):
    state = obs["observation.state"]
    velocity = obs["nested"]["observation.velocity"][0]
    return {"action.out": state * 2.0 + velocity,
            "meta": {"mode": mode, "task": obs["task"], "n": 3, "none": None, "pair": [state - 1.0, "tag"]}}


def _obs(x):
    return {"observation.state": x, "nested": {"observation.velocity": [x * 3.0, "label"]}, "task": "pick"}


def test_dotted_keys_nesting_and_non_array_leaves_pass_through():
    cf = leapp.compile(lerobot_style)
    out = cf(_obs(X))
    expected = lerobot_style(_obs(X))
    np.testing.assert_allclose(out["action.out"], expected["action.out"])
    np.testing.assert_allclose(out["meta"]["pair"][0], expected["meta"]["pair"][0])
    assert out["meta"]["mode"] == "fast" and out["meta"]["task"] == "pick"
    assert out["meta"]["n"] == 3 and out["meta"]["none"] is None and out["meta"]["pair"][1] == "tag"
    # the graph runs on new values: later calls do not replay the traced sample
    np.testing.assert_allclose(cf(_obs(X + 1.0))["action.out"], lerobot_style(_obs(X + 1.0))["action.out"])
    graph = cf.graphs[0]
    # FX needs identifiers in forward()'s signature; the user's names stay everywhere else
    assert "obs_observation_state" in graph.code
    inputs = [n.meta["leapp_input"] for n in graph.graph.nodes if n.op == "placeholder"]
    assert inputs == ["obs_observation.state", "obs_nested_observation.velocity_0"]
    assert "'action.out'" in graph.code


def test_two_names_that_sanitize_alike_stay_distinct():
    def two(d):
        return d["a.b"] + 2.0 * d["a_b"]

    cf = leapp.compile(two)
    d = {"a.b": X, "a_b": X + 1.0}
    np.testing.assert_allclose(cf(d), two(d))
    np.testing.assert_allclose(cf({"a.b": X * 2, "a_b": X}), two({"a.b": X * 2, "a_b": X}))


def test_a_dataclass_result_is_refused_saying_what_a_graph_returns():
    import dataclasses

    import pytest

    from leapp.errors import OutputTypeError

    @dataclasses.dataclass
    class Obs:
        pos: np.ndarray

    @leapp.compile
    def fn(x):
        return Obs(x * 2)

    with pytest.raises(OutputTypeError, match=r"the result is a .*Obs.*dataclasses\.asdict"):
        fn(np.ones(3))
